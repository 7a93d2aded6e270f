"""Benchmarks of the parity, group and CoGO tasks (not run by CI): sizes beyond the test budget, with timings.

Run: ``python benchmarks/bench_tasks.py [--quick]``.  Prints one line per case: what was computed, the error
against the claim, and the wall time.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.optimize import minimize

from margintheory.core.groups import parse_group, symmetric_group
from margintheory.core.network import PolyNetwork
from margintheory.core.representations import character_table, real_irreps
from margintheory.engines.margins import class_weighted_margins, logits
from margintheory.tasks.cogo.task import verify_cogo
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.groups.task import verify_group
from margintheory.tasks.parity import checks as parity


def timed(f, *a, **kw):
    t = time.perf_counter()
    out = f(*a, **kw)
    return out, time.perf_counter() - t


def bench_parity(quick: bool) -> None:
    cases = [(10, 4), (12, 6), (16, 4)] if quick else [(10, 4), (12, 6), (16, 4), (18, 8), (20, 4), (20, 10)]
    for n, k in cases:
        res, s = timed(parity.verify_parity, parity.build_parity_construction(n, k), construction=True)
        print(f"parity n={n:2d} k={k:2d}: {res.verdict:8s} rel.err {res.fields['relative_error']:.2e} "
              f"gamma*={res.fields['gamma_star']:.12g}  {s:7.2f} s")


def bench_groups(quick: bool) -> None:
    for name in (["S3", "S4", "S5", "C7"] if quick else ["S3", "S4", "S5", "S6", "C7", "C11", "C13"]):
        res, s = timed(verify_group, parse_group(name), max_seconds=None)
        f = res.fields
        extra = ""
        if "gamma_star_lp" in f:
            extra = (f"formula {f['gamma_star_formula']:.12g} LP {f['gamma_star_lp']:.12g} "
                     f"ratio {f['gamma_star_formula'] / f['gamma_star_lp']:.9f} condition "
                     f"{'holds' if f['condition_holds'] else 'FAILS'}; exhaustive margin "
                     f"{f.get('construction_normalized_margin', float('nan')):.12g} ({f.get('exhaustive')})")
        else:
            extra = f"group-path margin {f['group_path_margin']:.12g} (modular {f['modular_addition_margin']:.12g})"
        print(f"group {name:3s}: {res.verdict:8s} {extra}  {s:7.2f} s")


def bench_lemma_d13(name: str, starts: int) -> None:
    """Best single unit neuron found by BFGS against the LP's class weights vs the dual value (Lemma D.13)."""
    G = symmetric_group(int(name[1:]))
    irreps = real_irreps(G)
    dims = np.array([R.dim for R in irreps])
    X = character_table(G, irreps)
    lp = gm.solve_class_lp(X, G.order, dims)
    cls, inv, labels = G.class_index(), G.inverses(), G.product_labels()
    offset = cls[G.mul[inv[labels][:, None], np.arange(G.order)[None, :]]]
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    tau = np.where(offset > 0, lp.pi[np.maximum(offset - 1, 0)] / sizes[offset], 0.0)
    n = G.order

    def value(v: np.ndarray) -> float:
        v = v / np.linalg.norm(v)
        net = PolyNetwork(v[: 2 * n].reshape(1, 2, n), v[2 * n:].reshape(1, n))
        return float(class_weighted_margins(logits(net), labels, tau).mean())

    rng = np.random.default_rng(0)
    t = time.perf_counter()
    best = max(-minimize(lambda v: -value(v), rng.normal(size=3 * n), method="BFGS").fun for _ in range(starts))
    print(f"Lemma D.13 on {name}: best single neuron / dual bound = {best / lp.dual:.9f} "
          f"({starts} BFGS starts, {time.perf_counter() - t:.1f} s)")


def bench_cogo(quick: bool) -> None:
    ds = [7, 8, 11] if quick else [7, 8, 11, 23, 24, 31]
    for d in ds:
        for name in ("F6", "F4", "F46", "memorize"):
            if name == "memorize" and d > 23:
                continue
            res, s = timed(verify_cogo, name, d, max_seconds=None)
            f = res.fields
            corr = f.get("corrected", {}).get("loss")
            ratio = f.get("ratio_to_gamma_star")
            memo = f" sqrt(2/(d-1)) = {math.sqrt(2 / (d - 1)):.12g}" if name == "memorize" else ""
            print(f"cogo {name:8s} d={d:2d}: {res.verdict:8s} order {f['paper']['order']:4d} loss(paper) "
                  f"{f['paper']['loss']:.6g}" + (f" loss(corrected) {corr:.2g}" if corr is not None else "")
                  + (f" margin/gamma* {ratio:.12g}" if ratio is not None else
                     f" margin {f.get('normalized_margin')}") + memo + f"  {s:6.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    bench_parity(args.quick)
    bench_groups(args.quick)
    bench_lemma_d13("S3", 5)
    if not args.quick:
        bench_lemma_d13("S4", 5)
    bench_cogo(args.quick)


if __name__ == "__main__":
    main()
