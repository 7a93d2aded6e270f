"""The cyclic-lattice family for every ``k``: ``2 * 3^(k-1)`` neurons per frequency reach ``gamma*``.

Statement (:func:`margintheory.core.phase_measures.cyclic_lattice_measure`): with ``N_k = 2 * 3^(k-1)`` and
``g^(k) = (1, 3, ..., 3^(k-2), -2 * 3^(k-2))``, for all real ``x_1..x_k, y``

    ``(1/N_k) sum_{t=0}^{N_k-1} (sum_j cos(x_j + 2 pi t g_j / N_k))^k cos(y + 2 pi t G / N_k)
        = (k!/2^k) cos(x_1 + ... + x_k - y)``,   ``G = g_1 + ... + g_k``,

so the ``N_k`` neurons ``u_j[a] = cos(2 pi (t g_j/N + zeta a/p))``, ``w[c] = cos(2 pi (t G/N + zeta c/p))`` at each
frequency sum to the cosine the margin needs (the per-frequency condition of :mod:`margintheory.core.phase_measures`;
Lemma C.17-C.18 of Li et al., arXiv:2402.09469, reach the same sum with ``2^(2k-1)`` neurons).

Proof.  Expanding every cosine into exponentials, the monomial ``exp(i (n.x + eps y))`` (``|n|_1 <= k``,
``|n|_1 = k mod 2``, ``eps = +-1``) has a positive multinomial coefficient times
``(1/N) sum_t omega_N^(t (n.g + eps G)) = [N | (n + eps 1).g]`` (geometric series).  So the identity holds iff
``N_k`` divides ``m.g`` for no ``m = n + eps 1 != 0`` -- statement ``P(k)``: *if ``n.g = 1.g (mod N_k)``,
``|n|_1 <= k`` and ``|n|_1 = k (mod 2)`` then ``n = 1``* (``eps = -1``; ``eps = +1`` is ``n -> -n``).
``P(2)`` is a finite check.  ``P(k-1) => P(k)``: ``g^(k) = (1, 3 g^(k-1))`` and ``N_k = 3 N_(k-1)``; modulo 3,
``n_1 = 1 + 3c``.  Then ``n'' = (n_2 + c, n_3, ..., n_k)`` satisfies ``n''.g^(k-1) = 1.g^(k-1) (mod N_(k-1))``,
``|n''|_1 <= |n|_1 - |n_1| + |c| <= k + 1 - 2|c|`` (as ``|1 + 3c| >= 3|c| - 1``) and has the parity of ``k - 1``.
If ``c = 0`` then ``|n''|_1 <= k - 1`` and ``P(k-1)`` gives ``n'' = 1``, so ``n = 1``.  If ``c != 0``, ``|n''|_1 <=
k - 1`` still, so ``n'' = 1``, which needs ``|c| = 1`` and then ``n = (-2, 2, 1, ..., 1)`` or ``(4, 0, 1, ..., 1)``
with ``|n|_1 = k + 2 > k``: impossible.  ``[]``

:func:`lattice_family_derivation` records each step with how it was checked: sympy for the geometric series and
the recursion, exact integer enumeration of every monomial for ``k <= k_max`` (default 8), and the induction as a
written argument.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from margintheory.core.phase_measures import cyclic_lattice_generator, unwanted_phase_moments
from margintheory.symbolic.derivation import Derivation


def family_identity_holds(k: int) -> bool:
    """``N_k`` divides ``m . g^(k)`` for no unwanted moment ``m`` (exact integers, every monomial of the
    expansion), i.e. the identity of the module docstring for this ``k``."""
    n, g = cyclic_lattice_generator(k)
    M = unwanted_phase_moments(k)
    return bool(np.all((M @ np.array(g, dtype=np.int64)) % n != 0))


def expansion_monomials_match(k: int) -> bool:
    """sympy: the monomials of ``(sum_j (X_j + 1/X_j))^k (Y + 1/Y)`` are exactly ``X^n Y^eps`` with
    ``|n|_1 <= k``, ``|n|_1 = k (mod 2)``, ``eps = +-1``, each with a positive coefficient; and the coefficient of
    ``X_1 ... X_k / Y`` is ``k!`` (the wanted term ``(k!/2^k) cos(x_1 + ... + x_k - y)`` after the ``2^-(k+1)``)."""
    X = sp.symbols(f"X1:{k + 1}")
    Y = sp.Symbol("Y")
    shift = sp.Mul(*[x**k for x in X]) * Y
    poly = sp.Poly(sp.expand((sum(x + 1 / x for x in X)) ** k * (Y + 1 / Y) * shift), *X, Y)
    terms = {tuple(e - k for e in mon[:k]) + (mon[k] - 1,): c for mon, c in poly.terms()}
    want = set()
    for m in unwanted_phase_moments(k).tolist() + [[0] * k]:
        for eps in (1, -1):
            n = tuple(v - eps for v in m)
            if sum(abs(v) for v in n) <= k and (sum(abs(v) for v in n) - k) % 2 == 0:
                want.add(n + (eps,))
    return set(terms) == want and all(c > 0 for c in terms.values()) and terms[(1,) * k + (-1,)] == math.factorial(k)


def lattice_family_derivation(k_max: int = 8, sympy_k_max: int = 4) -> Derivation:
    """The proof of the module docstring, step by step, with the check each step received."""
    d = Derivation("Cyclic-lattice family: 2*3^(k-1) neurons per frequency reach gamma* (every k >= 2)")
    t, r, N = sp.symbols("t r N", integer=True)
    w = sp.Symbol("omega")
    d.exact(sp.Eq(sp.Sum(w**t, (t, 0, N - 1)), (1 - w**N) / (1 - w)),
            "geometric series: for omega = exp(2 pi i r/N) != 1 the character sum is (1 - omega^N)/(1 - omega) = 0 "
            "(omega^N = 1); for N | r every term is 1", "character sums",
            proof=lambda: sp.simplify(sp.summation(w**t, (t, 0, N - 1)).args[1][0] - (1 - w**N) / (1 - w)) == 0,
            method="sympy summation (branch omega != 1) minus the closed form simplified to 0", scope="all N")
    d.numeric(sp.Eq(sp.Symbol("moment"), sp.Symbol("indicator")),
              "so the uniform measure on {2 pi t g/N} has moment 1 at m if N | m.g and 0 otherwise",
              "character sums", max_error=lambda: max(_moment_error(k) for k in range(2, 5)), tolerance=1e-12,
              method="float64 moments of the measure vs the integer indicator (cross-check)", scope="k = 2, 3, 4")
    d.exact(sp.Eq(sp.Symbol("monomials"), sp.Symbol("unwanted moments and the wanted term")),
            "the monomials of the neuron expansion are the unwanted moments plus the wanted term (coefficient k!)",
            "Lemma C.14 (expansion)",
            proof=lambda: all(expansion_monomials_match(k) for k in range(2, sympy_k_max + 1)),
            method="sympy Poly expansion of (sum_j (X_j + 1/X_j))^k (Y + 1/Y)", scope=f"k = 2..{sympy_k_max}")
    kk = sp.Symbol("k", integer=True, positive=True)
    j = sp.Symbol("j", integer=True, positive=True)
    d.exact(sp.Eq(3 * 3 ** (j - 1), 3**j), "recursion g^(k) = (1, 3 g^(k-1)): entries 3^(j-1) -> 3^j",
            "induction", scope="all j")
    d.exact(sp.Eq(3 * (-2 * 3 ** (kk - 3)), -2 * 3 ** (kk - 2)), "recursion: last entry and N_k = 3 N_(k-1)",
            "induction", scope="all k")
    d.exact(sp.Eq(sp.Symbol("P(2)"), sp.true), "base case: N_2 = 6 divides m.(1, 4) for no m in M_2 (14 moments)",
            "induction", proof=lambda: family_identity_holds(2), method="exact integer enumeration", scope="k = 2")
    d.assumed(sp.Eq(sp.Symbol("P(k-1) => P(k)"), sp.true),
              "inductive step: n_1 = 1 + 3c; the carry c moves to position 2; |1 + 3c| >= 3|c| - 1 leaves "
              "|n''|_1 <= k - 1, so n'' = 1, which forces c = 0 (else |n|_1 = k + 2)", "induction",
              reason="written proof (module docstring of margintheory.symbolic.lattice_family), not machine-checked "
              "for general k; every instance k <= k_max is checked exactly in the next step")
    d.exact(sp.Eq(sp.Symbol("P(k)"), sp.true), "every unwanted moment of every k up to k_max, enumerated",
            "cyclic-lattice family", proof=lambda: all(family_identity_holds(k) for k in range(2, k_max + 1)),
            method="exact integer arithmetic over all m in M_k (373,166 moments at k = 8)",
            scope=f"k = 2..{k_max}")
    d.notes.append("Widths per frequency: k = 2..6 -> 6, 18, 54, 162, 486 vs the theorem's 8, 32, 128, 512, 2048.")
    return d


def _moment_error(k: int) -> float:
    from margintheory.core.phase_measures import cyclic_lattice_measure

    mu = cyclic_lattice_measure(k)
    n, g = cyclic_lattice_generator(k)
    ms = np.concatenate([unwanted_phase_moments(k)[:200], n * np.eye(k, dtype=np.int64)])
    ind = ((ms @ np.array(g)) % n == 0).astype(float)
    return float(np.abs(mu.moments(ms) - ind).max())
