"""Benchmark of the exhaustive margin engine at the paper's experiment sizes.

For each case it times ``exhaustive_margin`` on the Lemma C.18 construction and, in the same run, the bare float64
GEMM of the same shape ``(p^k x m) @ (m x p)`` (numpy's multi-threaded BLAS, streamed over row chunks: the
fastest of the engine's chunking and 4, 16, 64 MiB chunks), and prints the ratio engine / GEMM and the engine's
peak traced memory.
Targets: ratio <= 1.5 and peak memory within the budget.

    python benchmarks/bench_margin_engine.py            # the three paper sizes
    python benchmarks/bench_margin_engine.py --quick    # small sizes (seconds)
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from rich.console import Console
from rich.table import Table

from margintheory.core.construction import build_construction
from margintheory.core.theory import gamma_star
from margintheory.engines.margins import DEFAULT_MAX_MEMORY, estimate_cost, exhaustive_margin

PAPER_CASES = [(3, 97), (4, 47), (5, 23)]
QUICK_CASES = [(3, 31), (4, 13), (5, 7)]


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
        "peak_bytes": peak, "budget": max_memory,
        "rel_err": abs(res.normalized_margin - gamma_star(p, k)) / gamma_star(p, k),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes instead of the paper's")
    ap.add_argument("--max-memory", type=int, default=DEFAULT_MAX_MEMORY)
    args = ap.parse_args()
    table = Table(title="exhaustive margin engine vs bare GEMM of the same shape (same run)")
    for col in ("k", "p", "m", "points", "engine s", "GEMM s", "ratio", "peak MiB", "budget MiB", "rel. err vs gamma*"):
        table.add_column(col, justify="right")
    for k, p in QUICK_CASES if args.quick else PAPER_CASES:
        r = run_case(k, p, args.max_memory)
        table.add_row(str(k), str(p), str(r["m"]), str(r["points"]), f"{r['engine_s']:.2f}", f"{r['gemm_s']:.2f}",
                      f"{r['ratio']:.2f}", f"{r['peak_bytes'] / 2**20:.0f}", f"{r['budget'] / 2**20:.0f}",
                      f"{r['rel_err']:.1e}")
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
