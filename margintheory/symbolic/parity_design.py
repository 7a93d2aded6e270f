"""The parity design for every ``k >= 3``: ``(k+1) 2^(k-1)`` neurons per frequency reach ``gamma*``.

Statement (:func:`margintheory.core.phase_measures.parity_design_measure`): with ``Q = 2(k+1)`` and
``H = {h in {0,1}^k : h_1 + h_2 + h_3 even}``, the uniform measure ``mu`` on the points
``2 pi (t (1,...,1) + (k+1) h) / Q`` (``t = 0..k``, ``h in H``) has ``mu^(m) = 0`` for every unwanted moment ``m``
in ``M_k`` (:func:`margintheory.core.phase_measures.unwanted_phase_moments`), so its neurons at each frequency sum to
the cosine the margin needs (the per-frequency condition of :mod:`margintheory.core.phase_measures`; Lemmas C.14-C.18 of
Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers", arXiv:2402.09469, reach the same
sum with ``2^(2k-1)`` neurons).

Proof.  The atoms are the product set ``{0..k} x H`` (distinct: ``|t - t'| <= k < k + 1``), so with
``omega = exp(2 pi i / Q)`` and ``s = m_1 + ... + m_k``

    ``mu^(m) = [(1/(k+1)) sum_{t=0}^{k} omega^(t s)] * [(1/|H|) sum_{h in H} (-1)^(h.m)]``.

(i) Every ``m = n + eps (1,...,1)`` in ``M_k`` has ``s = sum n + eps k`` even (``sum n = |n|_1 = k mod 2``), so
``omega^((k+1) s) = (-1)^s = 1`` and the first factor is ``(1 - omega^((k+1)s)) / (1 - omega^s) = 0`` unless
``Q | s``.  (ii) ``H`` is a subspace of ``F_2^k`` with dual ``{0, e_1 + e_2 + e_3}``: the second factor vanishes
unless ``m mod 2`` is one of these.  (iii) Take ``eps = +1`` (``M_k = -M_k`` and ``mu^(-m)`` is the conjugate):
``s = sum n + k`` lies in ``[0, 2k]``, so ``Q | s`` forces ``s = 0``, i.e. every ``n_j <= 0`` and ``|n|_1 = k``.
If ``m = 0 mod 2`` every ``n_j`` is odd, hence ``-1``, and ``m = 0`` (the wanted term, not in ``M_k``).  If
``m = e_1 + e_2 + e_3 mod 2``, ``n_1, n_2, n_3`` are even and the other ``k - 3`` odd, so ``|n|_1 = k - 3 mod 2``,
contradicting ``|n|_1 = k``.  ``[]``  (Any odd number of parity coordinates works the same way; with one,
``H = {h : h_1 = 0}``, the design is defined for every ``k >= 1`` and has 2 and 6 atoms at ``k = 1, 2``, the proved
minima there.)

:func:`parity_design_derivation` records each step with how it was checked: sympy for the geometric series, exact
integer/cyclotomic computations per ``k`` up to ``k_max``, and the general-``k`` case analysis (iii) as a written
argument (``argued``): the statement for *every* ``k`` rests on it, each instance ``k <= k_max`` is ``proved``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from margintheory.core.phase_measures import exact_moment_check, parity_design_measure, unwanted_phase_moments
from margintheory.symbolic.derivation import Derivation

#: the parity coordinates of the design (``h_1 + h_2 + h_3`` even), 0-based
PARITY_COORDINATES = (0, 1, 2)


def surviving_moments(k: int, parity: tuple[int, ...] = PARITY_COORDINATES) -> np.ndarray:
    """The unwanted moments ``m`` in ``M_k`` on which *neither* factor of the proof vanishes: ``2(k+1) | s`` and
    ``m mod 2`` in ``{0, 1_parity}`` (exact integers).  The proof's case analysis (iii) says this is empty."""
    M = unwanted_phase_moments(k)
    s = M.sum(axis=1)
    ind = np.zeros(k, dtype=np.int64)
    ind[list(parity)] = 1
    odd = M % 2
    dual = np.all(odd == 0, axis=1) | np.all(odd == ind, axis=1)
    return M[(s % (2 * (k + 1)) == 0) & dual]


def factorisation_predicts_moments(k: int) -> bool:
    """Exact: for every ``m`` in ``M_k``, in the box ``[-2, 2]^k`` and on the period vectors, ``mu^(m) != 0``
    (integer counts reduced modulo the cyclotomic polynomial, as in
    :func:`margintheory.core.phase_measures.exact_moment_check`) exactly when neither factor of the product formula
    vanishes: the diagonal factor unless ``s`` is even and ``2(k+1)`` does not divide it, the parity factor unless
    ``m mod 2`` is outside ``{0, e_1 + e_2 + e_3}`` -- the proof's formula, tested on the measure the package
    builds (odd ``s`` included, where the diagonal factor is ``2 / (1 - omega^s) != 0``)."""
    from margintheory.core.cyclotomic import reduce_mod_cyclotomic

    mu = parity_design_measure(k)
    q = mu.denominator
    grid = np.array(np.meshgrid(*[np.arange(-2, 3)] * k, indexing="ij")).reshape(k, -1).T
    ms = np.unique(np.concatenate([unwanted_phase_moments(k), grid, q * np.eye(k, dtype=np.int64)]), axis=0)
    res = (ms @ mu.points.T) % q
    counts = np.zeros((len(ms), q), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(len(ms)), res.shape[1]), res.ravel()), 1)
    nonzero = np.any(reduce_mod_cyclotomic(counts) != 0, axis=1)
    ind = np.zeros(k, dtype=np.int64)
    ind[list(PARITY_COORDINATES)] = 1
    odd = ms % 2
    s = ms.sum(axis=1)
    diagonal = (s % 2 == 1) | (s % q == 0)  # for odd s, omega^((k+1)s) = -1 and the factor is 2/(1 - omega^s)
    predicted = diagonal & (np.all(odd == 0, axis=1) | np.all(odd == ind, axis=1))
    return bool(np.array_equal(nonzero, predicted))


def parity_design_derivation(k_max: int = 8, factor_k_max: int = 5) -> Derivation:
    """The proof of the module docstring, step by step, with the check each step received."""
    if k_max < 3 or factor_k_max < 3:
        raise ValueError("the parity design needs k >= 3")
    d = Derivation("Parity design: (k+1) 2^(k-1) neurons per frequency reach gamma* (every k >= 3)")
    t, s, K = sp.symbols("t s K", integer=True, nonnegative=True)
    w = sp.Symbol("omega")
    d.exact(sp.Eq(sp.Sum(w**t, (t, 0, K)), (1 - w ** (K + 1)) / (1 - w)),
            "geometric series: for omega^s != 1 the diagonal factor is (1 - omega^((k+1)s))/(1 - omega^s), "
            "and omega^((k+1)s) = (-1)^s = 1 for even s", "character sums",
            proof=lambda: sp.simplify(sp.summation(w**t, (t, 0, K)).args[1][0] - (1 - w ** (K + 1)) / (1 - w)) == 0,
            method="sympy summation (branch omega != 1) minus the closed form simplified to 0", scope="all k")
    d.exact(sp.Eq(sp.Symbol("mu^(m)"), sp.Symbol("diagonal factor * parity factor")),
            "product formula: the moment is non-zero exactly when 2(k+1) | s and m mod 2 is in {0, e1+e2+e3}",
            "character sums", proof=lambda: all(factorisation_predicts_moments(k) for k in range(3, factor_k_max + 1)),
            method="exact moments (integer counts reduced modulo Phi_(2k+2)) vs the predicted support, on M_k, the "
            "box [-2, 2]^k and the period vectors", scope=f"k = 3..{factor_k_max}")
    d.exact(sp.Eq(sp.Symbol("s(m) mod 2"), 0), "every unwanted moment has an even coordinate sum s",
            "unwanted moments", proof=lambda: all(bool(np.all(unwanted_phase_moments(k).sum(axis=1) % 2 == 0))
                                                  for k in range(3, k_max + 1)),
            method="exact integer enumeration of M_k", scope=f"k = 3..{k_max}")
    d.assumed(sp.Eq(sp.Symbol("surviving_moments"), 0),
              "case analysis: Q | s forces s = 0, n <= 0, |n|_1 = k; m = 0 mod 2 gives m = 0, m = e1+e2+e3 mod 2 "
              "gives |n|_1 = k - 3 mod 2 != k", "parity design",
              reason="written proof (module docstring of margintheory.symbolic.parity_design), not machine-checked "
              "for general k; every instance k <= k_max is checked exactly in the next steps")
    d.exact(sp.Eq(sp.Symbol("surviving_moments"), 0),
            "no unwanted moment survives both factors, enumerated", "parity design",
            proof=lambda: all(len(surviving_moments(k)) == 0 for k in range(3, k_max + 1)),
            method="exact integer arithmetic over all m in M_k", scope=f"k = 3..{k_max}")
    d.exact(sp.Eq(sp.Symbol("mu^(m)"), 0), "the moments of the measure the package builds vanish on M_k",
            "parity design", proof=lambda: all(exact_moment_check(parity_design_measure(k)).passed
                                               for k in range(3, k_max + 1)),
            method="integer counts reduced modulo the cyclotomic polynomial Phi_(2k+2) (exact_moment_check)",
            scope=f"k = 3..{k_max}")
    d.notes.append("Widths per frequency: k = 3..8 -> " + ", ".join(str((k + 1) * 2 ** (k - 1)) for k in range(3, 9))
                   + " vs the theorem's " + ", ".join(str(2 ** (2 * k - 1)) for k in range(3, 9)) + ".")
    return d
