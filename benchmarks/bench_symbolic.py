"""Benchmarks of the symbolic / exact layer; not run by CI.  Prints measured wall-clock figures.

Targets on the 2-core CI machine: exact construction check (p=11, k=3) < 60 s; sum-to-product identity (k=8) < 30 s.

    python benchmarks/bench_symbolic.py
"""

from __future__ import annotations

import time

from margintheory.symbolic import identities
from margintheory.symbolic.bound_chain import gamma_star_derivation
from margintheory.symbolic.exact import verify_construction_exact
from margintheory.symbolic.fourier_reduction import check_fourier_reduction


def timed(label: str, fn, target: float | None = None):
    start = time.perf_counter()
    out = fn()
    sec = time.perf_counter() - start
    verdict = "" if target is None else f"  (target < {target:.0f} s: {'met' if sec < target else 'MISSED'})"
    print(f"{label:<62} {sec:8.2f} s{verdict}")
    return out


def main() -> None:
    for p, k, target in [(11, 3, 60.0), (7, 3, None), (13, 3, None), (7, 4, None)]:
        res = timed(f"exact construction check p={p}, k={k}", lambda p=p, k=k: verify_construction_exact(p, k), target)
        print(f"    verdict {res.verdict}, normalized margin {res.fields['normalized_margin_exact']}, "
              f"relative error {res.fields['relative_error_exact']}, width {res.fields['width']}")
    for method, target in [("substitution", 30.0), ("direct", 30.0)]:
        identities.check_sum_to_product.cache_clear()
        res = timed(f"sum-to-product identity k=8 ({method})", lambda m=method: identities.check_sum_to_product(8, m),
                    target)
        print(f"    full {res.full_sum_ok}, half {res.half_sum_ok}, mirror {res.mirror_terms_equal}, "
              f"{res.monomials_per_term} monomials per term")
    ok = timed("cosine expansion k=6 (exact, y = exp(2ia) substitution)",
               lambda: identities.verify_cosine_expansion_exact(6))
    print(f"    identity holds: {ok}")
    res = timed("Lemma C.14 exact, p=5, k=3", lambda: check_fourier_reduction(5, 3))
    print(f"    matches {res.matches}, {res.monomials_compared} monomials")
    d = timed("gamma* derivation (symbolic p, k)", gamma_star_derivation)
    print(f"    {d.summary()}")


if __name__ == "__main__":
    main()
