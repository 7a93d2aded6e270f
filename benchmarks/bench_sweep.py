"""Benchmark of sweeps on dask.distributed and of the exhaustive check split over a cluster.

In one run, on this machine (named in the output, with its load average):

1. a verify grid run in this process, one cell after another (the baseline), then on a LocalCluster of N worker
   processes (one thread each), each into a fresh store: wall seconds, cells per second, speed-up over the baseline
   (cluster start-up and shut-down timed separately);
2. the exhaustive pass over a construction: ``exhaustive_margin`` in this process (its own threads) against the
   pass split into prefix ranges on the same LocalCluster, with the two minima compared.

    python benchmarks/bench_sweep.py --quick                 # small grid, k = 4 split check (a minute)
    python benchmarks/bench_sweep.py --workers 8             # --p 3:31 --odd --k 2:4, split check p = 47, k = 4
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

from rich.console import Console
from rich.table import Table

from margintheory.core.construction import build_construction
from margintheory.engines.margins import exhaustive_margin
from margintheory.engines.split_margin import split_exhaustive_margin
from margintheory.execution.executors import InProcessExecutor, open_executor
from margintheory.sweep.grid import grid_cells, odd_values
from margintheory.sweep.runner import run_sweep
from margintheory.sweep.store import ResultStore


def machine() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} cores, load average {os.getloadavg()[0]:.1f}"


def timed_sweep(cells, executor) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as d:
        start = time.perf_counter()
        summary = run_sweep(cells, ResultStore(d), executor)
        return time.perf_counter() - start, summary.counts.failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="p = 3..13, k = 2..3; split check p = 13, k = 4")
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--certificate", action="store_true", help="include the solver leg in every verify cell")
    args = ap.parse_args()
    ps, ks, split = (odd_values(range(3, 14)), [2, 3], (13, 4)) if args.quick else (
        odd_values(range(3, 32)), [2, 3, 4], (47, 4))
    cells = grid_cells("verify", {"k": ks, "p": ps}, {"certificate": args.certificate})
    console = Console(width=140)
    console.print(f"machine: {machine()}")
    table = Table(title=f"sweep verify, {len(cells)} cells (p = {ps[0]}..{ps[-1]} odd, k = {ks})")
    for col in ("where", "wall s", "cells/s", "speed-up", "failed"):
        table.add_column(col, justify="right")
    base, failed = timed_sweep(cells, InProcessExecutor())
    table.add_row("this process (baseline)", f"{base:.1f}", f"{len(cells) / base:.2f}", "1.00", str(failed))
    t0 = time.perf_counter()
    with open_executor(workers=args.workers) as executor:
        started = time.perf_counter() - t0
        wall, failed = timed_sweep(cells, executor)
        table.add_row(executor.description, f"{wall:.1f}", f"{len(cells) / wall:.2f}", f"{base / wall:.2f}",
                      str(failed))
        net = build_construction(*split)
        exhaustive_margin(build_construction(5, split[1]))  # compile this k's kernel outside the timing
        t1 = time.perf_counter()
        single = exhaustive_margin(net, max_seconds=None)
        single_s = time.perf_counter() - t1
        t1 = time.perf_counter()
        parts = split_exhaustive_margin(net, executor)
        split_s = time.perf_counter() - t1
        where = executor.description
        t_close = time.perf_counter()
    closed = time.perf_counter() - t_close
    console.print(table)
    console.print(f"LocalCluster start {started:.1f} s, shut-down {closed:.1f} s (not in the sweep's wall time)")
    check = Table(title=f"exhaustive pass, construction p = {split[0]}, k = {split[1]}, m = {net.m} "
                        f"({split[0] ** split[1]} points)")
    for col in ("where", "seconds", "ratio to this process", "min margin"):
        check.add_column(col, justify="right")
    check.add_row("exhaustive_margin, this process", f"{single_s:.2f}", "1.00", repr(single.h))
    check.add_row(f"{parts.ranges} prefix ranges on {where}", f"{split_s:.2f}", f"{split_s / single_s:.2f}",
                  repr(parts.h))
    console.print(check)
    console.print(f"minima equal: {parts.h == single.h}")


if __name__ == "__main__":
    main()
