"""Benchmark of :mod:`margintheory.solvers`: time and gap for every case; not run by CI.

    python benchmarks/bench_solvers.py [--generic] [--quick]

Prints, per case: the single-neuron bracket (Fourier-block relaxation), the column-generation LP (from random
neurons, certified dual bound; Fourier pricing against the SOS-priced baseline) and the smallest max-margin
network, each with wall time and relative gap to gamma*.
``--generic`` adds the un-reduced relaxation of the full polynomial for (3,2), (3,3) and (5,2) (the baseline the
symmetry reduction is measured against).

Figures measured 2026-11-21 on the 2-core CI-class machine while other jobs ran (load average 5-7, so wall
times are up to 2x the idle ones); gaps are relative, ``g*`` is the closed form used only for comparison.

single neuron, uniform weights (Fourier-block SOS, Clarabel; lower = multistart BFGS, 16 starts):
    (p,k)   time   lower-g*   upper-g*   gap       Gram
    (3,2)   0.5 s  +5.3e-16   +2.4e-09   2.4e-09   28
    (5,2)   0.3 s  +8.0e-16   +2.9e-09   2.9e-09   28
    (3,3)   0.3 s  +8.9e-16   +4.7e-10   4.7e-10   36
    (7,2)   0.4 s  +4.1e-16   +2.2e-09   2.2e-09   28
    (5,3)   1.0 s  +5.6e-16   +2.7e-08   2.7e-08   36
generic relaxation of the full polynomial (the baseline): (3,2) 2.4 s, (3,3) 10.7 s, (5,2) 157 s (82 s on a
quieter machine), Gram 55 / 78 / 136; same brackets (gaps 2.0e-09, 3.1e-10, 5.9e-09).

network LP by column generation from 4 random neurons (seed 0), Fourier pricing (default) vs SOS pricing (the
baseline, same run), then the smallest max-margin network; measured 2026-11-23, load average 10-12:
    (p,k)  fourier s rounds primal-g*  dual-g*   gap      sos s  ratio  width per-freq lower theorem
    (3,2)  0.43      17     -5.50e-11  +2.15e-12 5.72e-11 -      -      6     6        -     8
    (5,2)  0.41      18     -1.84e-10  +2.30e-10 4.14e-10 13.3   32.3   12    6        12    16
    (7,2)  0.44      18     -3.20e-10  +2.43e-10 5.63e-10 -      -      18    6        18    24
    (11,2) 0.47      20     -1.39e-10  +5.11e-10 6.50e-10 -      -      30    6        30    40
    (3,3)  0.29      16     -2.56e-11  +1.90e-13 2.58e-11 -      -      16    16       -     32
    (5,3)  0.39      17     -5.01e-10  +1.01e-10 6.02e-10 50.4   127.6  32    16       -     64
    (7,3)  0.57      18     -3.69e-10  +1.10e-10 4.79e-10 171.1  299.8  48    16       48    96
    (5,4)  1.02      17     -2.97e-10  +1.80e-10 4.78e-10 -      -      108   54       -     256
    (7,4)  2.8       18     -2.70e-10  +6.53e-10 9.23e-10 -      -      162   54       -     384
(7,4): 37.69 s before the orbit network's margin was streamed by the exhaustive engine instead of a dense array.
Every saved network (benchmarks/out/) passes ``margintheory verify --network`` at the default tolerance.
"""

from __future__ import annotations

import argparse
import time

from margintheory.core.theory import construction_width, gamma_star
from margintheory.solvers.column_generation import column_generation
from margintheory.solvers.single_neuron import solve_single_neuron
from margintheory.solvers.width import min_width_network

SINGLE = [(3, 2), (5, 2), (3, 3), (7, 2), (5, 3)]
NETWORK = [(3, 2), (5, 2), (7, 2), (11, 2), (3, 3), (5, 3), (7, 3), (5, 4), (7, 4)]
SOS_BASELINE = [(5, 2), (5, 3), (7, 3)]
GENERIC = [(3, 2), (3, 3), (5, 2)]
OUT = "benchmarks/out"


def _rel(x: float, g: float) -> str:
    return f"{(x - g) / g:+.2e}"


def bench_single(cases, method: str) -> None:
    print(f"\n== single neuron, uniform weights, method={method} ==")
    print(f"{'p':>3} {'k':>2} {'time s':>8} {'lower-g*':>10} {'upper-g*':>10} {'gap':>9} {'contains':>8} status")
    for p, k in cases:
        t0 = time.perf_counter()
        b = solve_single_neuron(p, k, method=method, n_starts=16, seed=0)
        dt = time.perf_counter() - t0
        g = gamma_star(p, k)
        ok = b.lower <= g * (1 + 1e-12) and g <= b.upper
        print(f"{p:>3} {k:>2} {dt:8.2f} {_rel(b.lower, g):>10} {_rel(b.upper, g):>10} {b.relative_gap:9.2e} "
              f"{ok!s:>8} {b.sos_summary()['status']} gram {b.sos_summary().get('gram_sizes')}")


def bench_network(cases, sos_cases) -> None:
    """Column generation priced by the closed form (default) vs the SOS bracket (the baseline, same run), then the
    smallest max-margin network (:func:`margintheory.solvers.width.min_width_network`)."""
    print("\n== network LP by column generation from random neurons (seed 0): Fourier pricing vs SOS pricing ==")
    print(f"{'p':>3} {'k':>2} {'fourier s':>9} {'rounds':>6} {'primal-g*':>10} {'dual-g*':>10} {'gap':>9} "
          f"{'sos s':>7} {'ratio':>6} {'width':>6} {'per freq':>8} {'lower':>6} {'theorem':>7}")
    for p, k in cases:
        g = gamma_star(p, k)
        t0 = time.perf_counter()
        cg = column_generation(p, k, seed=0, pricing="fourier")
        dt = time.perf_counter() - t0
        sos = "-"
        ratio = "-"
        if (p, k) in sos_cases:
            t1 = time.perf_counter()
            column_generation(p, k, seed=0, pricing="sos")
            ds = time.perf_counter() - t1
            sos, ratio = f"{ds:7.1f}", f"{ds / dt:6.1f}"
        mw = min_width_network(p, k)
        mw.network.save(f"{OUT}/solve_p{p}_k{k}_width{mw.width}.npz")
        lb = mw.lower_bound.total(p)
        print(f"{p:>3} {k:>2} {dt:9.2f} {len(cg.rounds):>6} {_rel(cg.primal_margin, g):>10} "
              f"{_rel(cg.dual_bound, g):>10} {cg.relative_gap:9.2e} {sos:>7} {ratio:>6} {mw.width:>6} "
              f"{mw.per_frequency:>8} {lb if lb is not None else '-':>6} {construction_width(p, k):>7}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generic", action="store_true", help="also run the un-reduced relaxation (slow)")
    ap.add_argument("--quick", action="store_true", help="only the single-neuron brackets")
    args = ap.parse_args()
    import os

    os.makedirs(OUT, exist_ok=True)
    bench_single(SINGLE, "auto")
    if args.generic:
        bench_single(GENERIC, "generic")
    if not args.quick:
        bench_network(NETWORK, SOS_BASELINE)


if __name__ == "__main__":
    main()
