"""Benchmark of ``verify --k K --every-p`` (docs/theory.md#every-p) and of the parity design's exact count; not run by
CI.  Prints measured figures only.

    python benchmarks/bench_every_p.py [--k 1 2 3 4 5 6] [--full] [--count-k-max 12]

For each ``k``: the every-p proof (all odd ``p`` at once, identities in the symbol ``p``) and, as the baseline
measured in the same run, the per-``p`` verification at ``p = 11`` (``verify --p 11 --k K``), each in a fresh child
process (wall seconds and peak resident memory of that process; the SOS certificate is solved in both).  The ratio
says what proving every ``p`` costs against proving one.  ``--full`` adds ``k = 7, 8`` (``k = 8``: several minutes,
about 1.8 GB: the SOS certificate of ``g_8``).  Then the exact count of the parity design's expansion terms for
``k = 3..count-k-max`` (:func:`margintheory.symbolic.parity_design.count_expansion_terms`).

Measured 2026-11-28 on the 2-core shared machine (x86_64) under load average 10-13, this script:

     k  every-p s  peak GB   p=11 s  peak GB  ratio
     1       3.43     0.20     1.48     0.18   2.32
     2       3.38     0.20     1.98     0.18   1.71
     3       4.26     0.20     8.20     0.18   0.52   (p = 11 expands Lemma C.14 exactly at (11, 3))
     4       5.03     0.21     2.68     0.18   1.88
     5       7.06     0.24     2.95     0.18   2.39
     6      20.55     0.39     8.19     0.22   2.51
    rho_k - 1 = 1.40e-11, 1.89e-11, 1.62e-11, 1.31e-11, 1.40e-11, 1.40e-11 (k = 1..6); every verdict verified.
    ``margintheory verify --k K --every-p --json`` (wall, peak RSS): k = 7: 17.6 s, 0.29 GB; k = 8: 426 s, 1.77 GB
    (the SOS certificate of g_8: 376 s), rho_8 - 1 = 7.3e-11.
    Parity-design count, k = 3..12: 0 surviving terms, the wanted term once per eps; k = 12: 354,870,594 terms in
    0.9 s.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import time

#: the p of the per-p baseline
BASELINE_P = 11


def _child(kind: str, k: int, queue: mp.Queue) -> None:
    from margintheory import ModularAddition, ModularAdditionEveryP, verify

    t0 = time.perf_counter()
    res = verify(ModularAdditionEveryP(k)) if kind == "every-p" else verify(ModularAddition(BASELINE_P, k))
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    queue.put((res.verdict, seconds, peak, res.fields.get("relative_gap")))


def measured(kind: str, k: int) -> tuple[str, float, float, object]:
    """``(verdict, seconds, peak bytes, relative gap)`` of one verification in a fresh process."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(kind, k, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def device() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, load average " \
           f"{os.getloadavg()[0]:.1f} at start"


def every_p_table(ks: list[int]) -> None:
    print(f"every-p proof vs one p = {BASELINE_P} (fresh process each; {device()})")
    print(f"{'k':>2} {'every-p s':>10} {'peak GB':>8} {'p=11 s':>8} {'peak GB':>8} {'ratio':>6}  verdicts, gap")
    for k in ks:
        v1, s1, m1, gap = measured("every-p", k)
        v2, s2, m2, _ = measured("one-p", k)
        print(f"{k:>2} {s1:>10.2f} {m1 / 2**30:>8.2f} {s2:>8.2f} {m2 / 2**30:>8.2f} {s1 / s2:>6.2f}  {v1}, {v2}, "
              f"rho_k - 1 = {gap:.2e}")


def count_table(k_max: int) -> None:
    from margintheory.symbolic.parity_design import design_term_count, expansion_term_total

    print("parity design: every expansion term counted exactly on the built measure")
    print(f"{'k':>2} {'terms':>12} {'surviving':>9} {'wanted':>6} {'seconds':>8}")
    for k in range(3, k_max + 1):
        c = design_term_count(k)
        assert c is not None and c.terms == expansion_term_total(k)
        print(f"{k:>2} {c.terms:>12,} {c.surviving:>9} {c.wanted:>6} {c.seconds:>8.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    ap.add_argument("--full", action="store_true", help="add k = 7, 8 (minutes, about 1.8 GB at k = 8)")
    ap.add_argument("--count-k-max", type=int, default=12)
    args = ap.parse_args()
    ks = sorted(set(args.k) | ({7, 8} if args.full else set()))
    every_p_table(ks)
    count_table(args.count_k_max)


if __name__ == "__main__":
    main()
