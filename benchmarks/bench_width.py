"""Benchmark of the smallest max-margin networks (:mod:`margintheory.core.phase_measures`,
:mod:`margintheory.solvers.width`, :mod:`margintheory.solvers.width_bounds`); not run by CI.

    python benchmarks/bench_width.py [--quick] [--certificates] [--search] [--delsarte K ... [--write]]

Prints (1) the width table per frequency for k = 1..6: proved lower bound, smallest network found, the
cyclic-lattice family, the theorem's 2^(2k-1); (2) the families verified exhaustively at the paper sizes
(k = 4, p = 47; k = 5, p = 23) next to Lemma C.18's construction in the same run (the baseline); (3) exact
(cyclotomic) verification of the family networks for small p; (4) the general-k derivation of the cyclic-lattice
family (k <= 8).  ``--certificates`` re-solves the k = 3 Delsarte SDP and checks the new certificate;
``--search`` re-runs the mixed-integer search on (Z_8)^3 that found the 16-atom design; ``--delsarte 5`` re-solves
the k = 5 Delsarte LP certificate (symmetry-reduced SDP over 1131 vectors, Clarabel, then rounding and the exact
check; ``--write`` replaces the shipped file when the new one proves at least as much).

Measured 2026-11-25 on the 2-core machine under load average 12-15 (``--delsarte 3 4 5``, via the same library calls):
    k = 3: 63 vectors, 219 pair orbits, SDP 15.9975, certified ratio 15.9966, bound 16, exact check 0.07 s
    k = 4: 313 vectors, 1413 pair orbits, SDP 40.0000, certified ratio 39.9875, bound 40, exact check 0.2 s
    k = 5: 1131 vectors, 3883 pair orbits, SDP 95.969 (optimal_inaccurate), certified ratio 95.8201, bound 96,
           107 s in all, exact check 2.1-2.6 s
    k = 6: 1877 vectors, 2897 pair orbits, SDP 192.00005 (optimal), certified ratio 191.6122, bound 192, 286 s in
           all, peak RSS 0.8 GB, exact check 1.9 s of CPU (the index meets 192 of the 224 parity classes, which caps
           it: docs/theory.md#delsarte-classes)
Measured 2026-11-28 (load average 5-12, via the same library calls, denominator 2e9, margin 1e-10):
    k = 6: 4437 vectors (|t|^2 <= 12), 12851 pair orbits, SDP 220.974 (optimal_inaccurate), certified ratio
           220.8728, bound 221, SDP 6 min, peak RSS 3.7 GB
    k = 6: 4989 vectors (SHIPPED_INDEX: |t|^2 <= 12 and five orbits with an entry 3), 16632 pair orbits, Clarabel
           with static_regularization_constant 1e-7, iterative_refinement_max_iter 30, max_step_fraction 0.95,
           tolerances 1e-7 (the defaults fail numerically): SDP 221.980 (optimal) in 26 min, certified ratio
           221.8485, bound 222 (shipped), peak RSS 5.7 GB, exact check 8.7 s of CPU, 1.0 GiB

Measured 2026-11-23 on the 2-core machine under load average 10-12 (``--search``):
    k  lower bound (proved)              smallest found      cyclic lattice  theorem
    2  6   clique, 217/37 = 5.86         6 (cyclic-lattice)  6               8
    3  16  Delsarte certificate, 15.805  16 (design-16)      18              32
    4  40  Delsarte certificate, 39.28   40 (parity-design)  54              128
    5  96  Delsarte LP, 95.8201          96 (parity-design)  162             512
    6  192 Delsarte LP, 191.6122         224 (parity-design) 486             2048   (222 since 2026-11-28)
    exact: (7,3) 48 neurons 0.2 s, (11,3) 80 neurons 2.5 s, (7,2) 0.1 s, (5,4) 108 neurons 16.1 s, all = gamma*
    paper sizes, exhaustive: (47,4) Lemma C.18 2944 neurons 170.3 s, cyclic lattice 1242 neurons 39.3 s;
    (23,5) Lemma C.18 5632 neurons 237.8 s, cyclic lattice 1782 neurons 65.6 s; relative errors <= 4e-15
    search: (Z_6)^2 6 atoms optimal 0.3 s; (Z_8)^3 16 atoms within the 60 s limit
    parity design at the paper sizes (measured later, lighter load): (47,4) 920 neurons 24.1 s, (23,5) 1056
    neurons 26.5 s, relative errors 3.7e-15, 6.4e-15
"""

from __future__ import annotations

import argparse
import time

from margintheory.core.construction import build_construction
from margintheory.core.phase_measures import (
    cyclic_lattice_measure,
    exact_moment_check,
    lemma_c18_measure,
    smallest_known_measure,
)
from margintheory.core.theory import gamma_star
from margintheory.engines.margins import exhaustive_margin
from margintheory.solvers.width_bounds import (
    check_gram_certificate,
    even_box,
    solve_gram_certificate,
    width_lower_bound,
)


def width_table(ks) -> None:
    print("\n== neurons per frequency of a max-margin network (p prime > 2k for the lower bound) ==")
    print("| k | lower bound | how | smallest found | cyclic lattice 2*3^(k-1) | theorem 2^(2k-1) | found/theorem |")
    print("|---|---|---|---|---|---|---|")
    for k in ks:
        lb = width_lower_bound(k)
        best = smallest_known_measure(k)
        lat = cyclic_lattice_measure(k).size if k >= 2 else "-"
        th = lemma_c18_measure(k).size if k <= 6 else 2 ** (2 * k - 1)
        assert exact_moment_check(best).passed
        how = ("Delsarte LP certificate" if "Delsarte LP" in lb.method else
               "Delsarte certificate" if "Delsarte" in lb.method else "clique")
        print(f"| {k} | {lb.per_frequency} ({lb.exactness}) | {how}, ratio {lb.ratio} | {best.size} ({best.name}) "
              f"| {lat} | {th} | {best.size / th:.3f} |")


def paper_sizes(cases) -> None:
    print("\n== exhaustive verification at the paper sizes: family vs Lemma C.18 (baseline, same run) ==")
    print(f"{'p':>3} {'k':>2} {'family':>15} {'m':>6} {'seconds':>8} {'margin/g*-1':>12} {'tolerance/g*':>12}")
    for p, k in cases:
        for fam in ("lemma-c18", "cyclic-lattice", "parity-design"):
            t0 = time.perf_counter()
            net = build_construction(p, k, family=fam)
            res = exhaustive_margin(net, max_seconds=None)
            dt = time.perf_counter() - t0
            g = gamma_star(p, k)
            rel = float(res.normalized_margin) / g - 1
            tol = float(res.normalized_tolerance) / g
            assert abs(rel) <= tol
            print(f"{p:>3} {k:>2} {fam:>15} {net.m:>6} {dt:8.2f} {rel:12.2e} {tol:12.2e}")


def exact_small(cases) -> None:
    from margintheory.symbolic.exact_families import verify_family_exact

    print("\n== exact (cyclotomic) verification of family networks ==")
    for p, k, fam in cases:
        t0 = time.perf_counter()
        r = verify_family_exact(p, k, fam)
        print(f"p={p} k={k} {fam}: {r.verdict}, width {r.fields['width']}, normalized margin "
              f"{r.fields.get('normalized_margin_exact')} = gamma* {r.fields['gamma_star_exact']}, "
              f"{time.perf_counter() - t0:.1f} s")


def derivation() -> None:
    from margintheory.symbolic.lattice_family import lattice_family_derivation

    t0 = time.perf_counter()
    d = lattice_family_derivation(8)
    print(f"\n== cyclic-lattice family, general k: {d.summary()} ({time.perf_counter() - t0:.1f} s) ==")
    from margintheory.symbolic.parity_design import parity_design_derivation

    t0 = time.perf_counter()
    d = parity_design_derivation(8, factor_k_max=6)
    print(f"== parity design, general k: {d.summary()} ({time.perf_counter() - t0:.1f} s) ==")


def certificates(with_k4: bool) -> None:
    """Re-solve the shipped certificates (k = 3 by Clarabel; k = 4 by SCS: Clarabel's factorization needs > 10 GB
    at 169 vectors) and check the new ones exactly."""
    cases = [(3, even_box(3, -3, 1), "CLARABEL")] + ([(4, even_box(4, -3, 1, 4), "SCS")] if with_k4 else [])
    for k, index, solver in cases:
        t0 = time.perf_counter()
        cert = solve_gram_certificate(k, index, solver=solver, denominator=10**7 if k == 4 else 10**9)
        chk = check_gram_certificate(cert)
        print(f"\n== k = {k} Delsarte certificate re-solved: {len(cert.index)} vectors, SDP ({solver}) + rounding "
              f"{time.perf_counter() - t0:.1f} s, exact check {chk.seconds:.2f} s, passed {chk.passed}, ratio "
              f"{float(chk.ratio):.6f}, bound {chk.bound} ==")


def delsarte(ks, write: bool) -> None:
    """Re-solve the Delsarte LP certificates (symmetry-reduced SDP on :data:`SHIPPED_INDEX`, Clarabel), round and
    check them exactly; with ``--write`` replace the shipped files (atomic write) when the new one proves at least
    as much.  Peak RSS from ``getrusage`` (the whole process so far)."""
    import resource
    from importlib import resources

    from margintheory.runtime.atomic import atomic_write_text
    from margintheory.solvers.width_bounds import SHIPPED_DELSARTE, shipped_delsarte_certificate
    from margintheory.solvers.width_delsarte import (
        SHIPPED_INDEX,
        check_delsarte_certificate,
        solve_delsarte_certificate,
    )

    for k in ks:
        radius, norm2, extra = SHIPPED_INDEX[k]
        rounding = {"denominator": 2 * 10**9, "margin": 1e-10} if k >= 6 else {}  # n 1e-6 of the trace is 0.9 at k = 6
        opts = None if k < 6 else {"static_regularization_constant": 1e-7, "iterative_refinement_max_iter": 30,
                                   "max_iter": 500, "max_step_fraction": 0.95, "tol_gap_rel": 1e-7, "tol_gap_abs": 1e-7,
                                   "tol_feas": 1e-7}
        cert, info = solve_delsarte_certificate(k, radius, norm2, extra_orbits=extra, **rounding, solver_opts=opts,
                                                log=lambda m: print("   ", m, flush=True))
        chk = check_delsarte_certificate(cert)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"\n== k = {k} Delsarte LP certificate: {info['vectors']} vectors, {info['pair_orbits']} pair orbits, "
              f"SDP {info['sdp_status']} {info['sdp_value']:.6f}, solve + rounding {info['seconds']:.0f} s, peak RSS "
              f"{rss:.0f} MB; exact check {chk.seconds:.2f} s, passed {chk.passed}, ratio {float(chk.ratio):.6f}, "
              f"bound {chk.bound} ==")
        old = shipped_delsarte_certificate(k)
        old_bound = check_delsarte_certificate(old).bound if old is not None else 0
        if write and chk.passed and chk.bound >= old_bound:
            target = resources.files("margintheory.data").joinpath(SHIPPED_DELSARTE[k])
            atomic_write_text(str(target), cert.to_json())
            print(f"   written to {target}")


def search() -> None:
    from margintheory.solvers.width import search_phase_measure

    for k, q, tl in ((2, 6, 30.0), (3, 8, 60.0)):
        t0 = time.perf_counter()
        mu, status = search_phase_measure(k, q, time_limit=tl)
        print(f"search on (Z_{q})^{k}: {None if mu is None else mu.size} atoms, {status}, "
              f"{time.perf_counter() - t0:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="table and exact checks only (no paper sizes)")
    ap.add_argument("--certificates", action="store_true", help="re-solve the k = 3 certificate SDP")
    ap.add_argument("--certificate-k4", action="store_true", help="also re-solve the k = 4 one (SCS, ~15 min)")
    ap.add_argument("--search", action="store_true", help="re-run the lattice searches")
    ap.add_argument("--delsarte", type=int, nargs="+", metavar="K",
                    help="re-solve the Delsarte LP certificates for these k (k = 5: ~8 min, k = 6: see docstring)")
    ap.add_argument("--write", action="store_true", help="with --delsarte: replace the shipped certificates")
    args = ap.parse_args()
    if args.delsarte:
        delsarte(args.delsarte, args.write)
        return
    width_table(range(1, 7))
    derivation()
    exact_small([(7, 3, "smallest-known"), (11, 3, "smallest-known"), (7, 2, "cyclic-lattice"),
                 (5, 4, "cyclic-lattice")])
    if not args.quick:
        paper_sizes([(47, 4), (23, 5)])
    if args.certificates or args.certificate_k4:
        certificates(args.certificate_k4)
    if args.search:
        search()


if __name__ == "__main__":
    main()
