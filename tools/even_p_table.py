"""Print the table of docs/theory.md#even-p-max-margin: the true max margin [L, U] of modular addition for
p = 4..12 and k = 2, 3, computed by ``verify``'s max-min leg (odd p: the construction and the uniform chain;
even p: the frequency-weighted network and the optimal translation-invariant dual), with the closed forms beside.

Usage: ``python tools/even_p_table.py [--p-max 12] [--k 2 3]`` (about a minute on one core).
"""

from __future__ import annotations

import argparse
import time

import sympy as sp

from margintheory import ModularAddition, verify
from margintheory.core.theory import gamma_star_exact_of
from margintheory.solvers.even_p import closed_form_max_margin


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p-max", type=int, default=12)
    ap.add_argument("--k", type=int, nargs="+", default=[2, 3])
    args = ap.parse_args()
    print("| p | k | L (network) | U (proved) | (U-L)/L | L exactness | gamma* formula | closed form (odd p: gamma*; "
          "even p: gamma_even) | ratio to formula | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in args.k:
        for p in range(4, args.p_max + 1):
            t0 = time.perf_counter()
            res = verify(ModularAddition(p, k))
            c = res.certificate.get("per_p_lp", res.certificate)  # even p: the per-p LP bracket, not the theorem
            formula = gamma_star_exact_of(p, k)
            closed = formula if p % 2 else closed_form_max_margin(p, k)
            print(f"| {p} | {k} | {c['lower']:.12g} | {c['upper']:.12g} | {c['relative_gap']:.1e} | "
                  f"{c['lower_exactness']} | {float(formula):.12g} | `{sp.sstr(closed)}` = {float(closed):.12g} | "
                  f"{float(closed / formula):.6f} | {time.perf_counter() - t0:.1f} |", flush=True)


if __name__ == "__main__":
    main()
