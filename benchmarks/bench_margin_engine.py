"""Benchmark of the exhaustive margin engine at the paper's experiment sizes.

For each case it times ``exhaustive_margin`` on the Lemma C.18 construction and, in the same run, the bare float64
GEMM of the same shape ``(p^k x m) @ (m x p)`` (numpy's multi-threaded BLAS, streamed over row chunks: the
fastest of the engine's chunking and 4, 16, 64 MiB chunks), and prints the ratio engine / GEMM and the engine's
peak traced memory.
Targets: ratio <= 1.5 and peak memory within the budget.  Each row also shows the engine's up-front run-time
estimate (``estimate_cost(...).seconds``, what ``--max-seconds`` is compared with) against the measured pass.

``--calibration`` times the sizes the CPU run-time estimate was calibrated at (random networks, one and two
workers) and prints estimate / measured for each.

    python benchmarks/bench_margin_engine.py                 # the three paper sizes
    python benchmarks/bench_margin_engine.py --quick         # small sizes (seconds)
    python benchmarks/bench_margin_engine.py --calibration   # the time estimate's calibration sizes (about 2 min)
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from rich.console import Console
from rich.table import Table

from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.core.theory import gamma_star
from margintheory.engines.margins import DEFAULT_MAX_MEMORY, estimate_cost, exhaustive_margin

PAPER_CASES = [(3, 97), (4, 47), (5, 23)]
QUICK_CASES = [(3, 31), (4, 13), (5, 7)]
#: (p, k, m) of the calibration of the engine's CPU run-time estimate (margintheory.engines.margins)
CALIBRATION_CASES = [(11, 5, 2560), (17, 4, 1024), (47, 3, 736), (97, 3, 1536), (23, 4, 1408), (199, 2, 396),
                     (720, 2, 2000), (31, 4, 256), (7, 7, 64)]
QUICK_CALIBRATION = [(11, 3, 64), (7, 4, 32)]


def bare_gemm_seconds(n_rows: int, m: int, p: int, chunk_rows: int, seed: int = 0) -> float:
    """Time of ``ceil(n_rows / chunk_rows)`` GEMMs ``(chunk_rows x m) @ (m x p)`` (the last one shorter),
    with numpy's default (multi-threaded) BLAS."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((chunk_rows, m))
    W = rng.standard_normal((m, p))
    A @ W  # warm-up
    t0 = time.perf_counter()
    done = 0
    while done < n_rows:
        rows = min(chunk_rows, n_rows - done)
        A[:rows] @ W
        done += rows
    return time.perf_counter() - t0


def run_case(k: int, p: int, max_memory: int) -> dict:
    net = build_construction(p, k)
    m = net.m
    est = estimate_cost(p, k, m, max_memory)
    exhaustive_margin(build_construction(5, k))  # compile the kernel for this k outside the timing
    tracemalloc.start()
    t0 = time.perf_counter()
    res = exhaustive_margin(net, max_memory, max_seconds=None)
    engine = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # the baseline is the fastest bare GEMM over several chunkings (the engine's own, and larger ones up to
    # 64 MiB of activations), so the ratio cannot be flattered by a badly chunked baseline
    candidates = sorted({est.prefixes_per_chunk * p, *(max(p, (s * 2**20) // (8 * m)) for s in (4, 16, 64))})
    gemm = min(bare_gemm_seconds(p**k, m, p, rows) for rows in candidates)
    return {
        "k": k, "p": p, "m": m, "points": p**k, "engine_s": engine, "gemm_s": gemm, "ratio": engine / gemm,
        "peak_bytes": peak, "budget": max_memory, "estimate_s": est.seconds,
        "rel_err": abs(res.normalized_margin - gamma_star(p, k)) / gamma_star(p, k),
    }


def calibration(cases: list[tuple[int, int, int]], workers: list[int], repeats: int, console: Console) -> None:
    """Estimate / measured of the pass over random networks at ``cases`` with each worker count (fastest of
    ``repeats`` after a warm-up run)."""
    table = Table(title="run-time estimate of the exhaustive pass against the measured pass (fastest of "
                  f"{repeats}; random networks)")
    for col in ("p", "k", "m", "points", "workers", "measured s", "estimate s", "estimate / measured"):
        table.add_column(col, justify="right")
    rng = np.random.default_rng(0)
    for p, k, m in cases:
        net = PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))
        for w in workers:
            exhaustive_margin(net, 2**34, max_seconds=None, workers=w)
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                exhaustive_margin(net, 2**34, max_seconds=None, workers=w)
                times.append(time.perf_counter() - t0)
            est = estimate_cost(p, k, m, 2**34, workers=w).seconds
            table.add_row(str(p), str(k), str(m), str(p**k), str(w), f"{min(times):.3f}", f"{est:.3f}",
                          f"{est / min(times):.2f}")
    console.print(table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes instead of the paper's")
    ap.add_argument("--max-memory", type=int, default=DEFAULT_MAX_MEMORY)
    ap.add_argument("--calibration", action="store_true", help="the run-time estimate's calibration sizes")
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 2], help="worker counts for --calibration")
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per --calibration row (fastest shown)")
    args = ap.parse_args()
    console = Console(width=160)
    if args.calibration:
        calibration(QUICK_CALIBRATION if args.quick else CALIBRATION_CASES, args.workers, args.repeats, console)
        return
    table = Table(title="exhaustive margin engine vs bare GEMM of the same shape (same run)")
    for col in ("k", "p", "m", "points", "engine s", "GEMM s", "ratio", "estimate s", "peak MiB", "budget MiB",
                "rel. err vs gamma*"):
        table.add_column(col, justify="right")
    for k, p in QUICK_CASES if args.quick else PAPER_CASES:
        r = run_case(k, p, args.max_memory)
        table.add_row(str(k), str(p), str(r["m"]), str(r["points"]), f"{r['engine_s']:.2f}", f"{r['gemm_s']:.2f}",
                      f"{r['ratio']:.2f}", f"{r['estimate_s']:.2f}", f"{r['peak_bytes'] / 2**20:.0f}",
                      f"{r['budget'] / 2**20:.0f}", f"{r['rel_err']:.1e}")
    console.print(table)


if __name__ == "__main__":
    main()
