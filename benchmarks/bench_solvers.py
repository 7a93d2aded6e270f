"""Benchmark of :mod:`margintheory.solvers`: time and gap for every case; not run by CI.

    python benchmarks/bench_solvers.py [--generic] [--quick]

Prints, per case: the single-neuron bracket (Fourier-block relaxation), the column-generation LP (from random
neurons, certified dual bound) and the width search, each with wall time and relative gap to gamma*.
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

network LP by column generation from 4 random neurons (seed 0), certified dual bound, then width search:
    (p,k)   time    rounds  primal-g*  dual-g*   gap      tau min/max  CG width  found width  theorem
    (3,2)   2.7 s   17      -5.5e-11   +2.4e-09  2.5e-09  0.99991      18        6            8
    (5,2)   9.6 s   28      -4.7e-10   +3.4e-09  3.8e-09  0.99992      100       12           16
    (7,2)   23 s    38      -4.1e-10   +2.4e-09  2.8e-09  0.99986      294       18           24
    (11,2)  23 s    47      -3.0e-10   +4.1e-09  4.4e-09  0.99965      1210      30           40
    (3,3)   5.2 s   16      -2.6e-11   +1.3e-09  1.4e-09  0.99986      54        18           32
    (5,3)   22 s    29      -3.0e-10   +2.7e-08  2.8e-08  0.99987      500       36           64
    (7,3)   90 s    38      -3.2e-10   +8.8e-08  8.8e-08  0.99982      2058      54           96
The found widths come from cyclic phase lattices (6 phase vectors per frequency for k = 2, 18 for k = 3); every
saved network (benchmarks/out/) passes ``margintheory verify --network`` with ``--rtol 1e-6``.
"""

from __future__ import annotations

import argparse
import time

from margintheory.solvers.column_generation import column_generation
from margintheory.solvers.single_neuron import solve_single_neuron
from margintheory.solvers.width import min_width_network
from margintheory.theory import construction_width, gamma_star

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
