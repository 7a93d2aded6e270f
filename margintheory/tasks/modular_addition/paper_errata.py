"""Slips in the modular-addition proofs of the papers, each decided by a computation and reported as an
informational row of ``verify`` (docs/theory.md#findings):

* Morwani et al., "Feature emergence via margin maximization" (arXiv:2311.07568): App. D.6.2 writes the first
  neuron pair's output as ``(cos a + cos a)^2 cos c + (cos a - cos a)^2 (-cos c)`` (``cos a`` for ``cos b``);
  App. D.6.3 defines the three-dimensional DFT with ``j`` in all three exponents (then ``f^(j, k, l)`` does not
  depend on ``k, l`` and the identity ``phi^(3)^(j, k, l) = 2 u^(j) v^(k) w^(l)`` fails); Section 7.4 states the
  norm constraint as ``sum_{j != 0} (|u^(j)|^2 + |v^(j)|^2 + |w^(j)|^2) <= 1``, which is ``<= p`` under the
  unnormalized DFT (Plancherel; App. D.6.1 has ``p``).  The wrong-label value 0 of App. D.6.2 (it is ``-1/2``) is
  the row "paper: wrong logit = 0" of the construction's table.
* Li, Liang, Shi, Song, Zhou, "Fourier circuits" (arXiv:2402.09469): Lemma C.10's (C.2) (``k = 3``) repeats Lemma
  C.14's (C.9) justification ``1 - 1/(p-1) = p/(p-1)``; Lemmas C.10 and C.14 say the non-mixed monomials of
  ``eta(delta)`` are 0 "from the definition of w" -- they equal ``mean(w)`` times a moment of ``u``, independent of
  ``delta``, so they *cancel* in ``eta(0) - E_delta eta(delta)`` and vanish only for mean-zero ``w``.

The identities are decided by sympy or in exact integer arithmetic (``proved``); the DFT and Plancherel rows are
float64 with their tolerance and measured error.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import sympy as sp

from margintheory.core.checks import Check
from margintheory.core.problems import ModularAddition

SEED = 0
#: the non-mixed-term rows enumerate ``p'^k`` inputs with ``p'`` the largest of the problem's ``p``, 5, 3 that
#: keeps ``p'^k`` at most this
NONMIXED_MAX_POINTS = 200_000


def d62_neuron_pair_rows() -> list[Check]:
    """App. D.6.2: the printed output of the first neuron pair, and the eight neurons with the printed phase
    offsets (their output is ``4 cos_zeta(a + b - c)``; the text's network function omits the factor 4)."""
    x, y, zc = sp.symbols("cos_a cos_b cos_c", real=True)
    printed = sp.expand((x + x) ** 2 * zc + (x - x) ** 2 * (-zc))
    corrected = sp.expand((x + y) ** 2 * zc + (x - y) ** 2 * (-zc))
    a, b, c = sp.symbols("a b c", real=True)
    h = sp.pi / 2
    offsets = [((0, 0, 0), (0, sp.pi, sp.pi)), ((h, -h, 0), (h, h, sp.pi)), ((-h, 0, -h), (-h, sp.pi, h)),
               ((0, -h, -h), (0, h, h))]
    total = sum((sp.cos(tu + a) + sp.cos(tv + b)) ** 2 * sp.cos(tw + c) for pair in offsets for tu, tv, tw in pair)
    residual = sp.simplify(sp.expand_trig(sp.expand(total - 4 * sp.cos(a + b - c))))
    aligned = all(bool(sp.simplify((tu + tv - tw) / (2 * sp.pi)).is_integer) for pair in offsets for tu, tv, tw in pair)
    return [
        Check(name="D.6.2: (cos a + cos a)^2", expected="4*cos_a*cos_b*cos_c", measured=str(printed), tolerance=None,
              passed=sp.simplify(printed - 4 * x * y * zc) == 0, exactness="proved", informational=True,
              detail=f"sympy: the printed expression expands to {printed}; with cos b in the second place it is "
                     f"{corrected}",
              statement="Morwani et al. App. D.6.2 as printed: (cos a + cos a)^2 cos c + (cos a - cos a)^2 (-cos c) "
                        "= 4 cos a cos b cos c (false: cos a is written for cos b)"),
        Check(name="D.6.2: 8 neurons per frequency", expected=0, measured=str(residual), tolerance=None,
              passed=residual == 0 and aligned, exactness="proved",
              detail="sympy: the eight neurons (u, v, w) = (cos(t_u + a), cos(t_v + b), cos(t_w + c)) with the "
                     "printed offsets (0,0,0), (0,pi,pi); (pi/2,-pi/2,0), (pi/2,pi/2,pi); (-pi/2,0,-pi/2), "
                     "(-pi/2,pi,pi/2); (0,-pi/2,-pi/2), (0,pi/2,pi/2) sum to 4 cos(a + b - c) (residual shown); "
                     f"t_u + t_v = t_w mod 2 pi for each: {aligned}. The text's f = sum_zeta cos_zeta(a + b - c) "
                     "drops this factor 4 (immaterial after normalization)",
              statement="App. D.6.2: the 8 neurons of a frequency, with the printed phase offsets, compute "
                        "4 cos_zeta(a + b - c), and each is an optimal neuron (t_u + t_v = t_w)"),
    ]


def d63_dft_row(p: int) -> Check:
    """App. D.6.3: ``phi^(3)(a, b, c) = 2 u(a) v(b) w(c)`` for a seeded random neuron; its 3-d DFT with the printed
    definition (``j`` in all exponents) against ``2 u^(j) v^(k) w^(l)``, and with ``(j, k, l)``."""
    rng = np.random.default_rng(SEED)
    u, v, w = rng.normal(size=(3, p))
    phi3 = 2 * np.einsum("a,b,c->abc", u, v, w)
    want = 2 * np.einsum("j,k,l->jkl", np.fft.fft(u), np.fft.fft(v), np.fft.fft(w))
    proper = np.fft.fftn(phi3)
    diag = proper[np.arange(p), np.arange(p), np.arange(p)]  # printed: sum e^{-2 pi i j (a + b + c)/p} phi3
    printed = np.broadcast_to(diag[:, None, None], (p, p, p))
    scale = float(np.abs(want).max())
    bad, good = float(np.abs(printed - want).max()) / scale, float(np.abs(proper - want).max()) / scale
    tol = 1e-12
    return Check(name="D.6.3: DFT with j, j, j", expected=0.0, measured=bad, tolerance=tol, passed=bad <= tol,
                 exactness="float", informational=True,
                 detail=f"p = {p}, seeded random u, v, w: relative max |f^(j,k,l) - 2 u^(j) v^(k) w^(l)| is {bad:.3g} "
                        f"with the printed definition (it ignores k and l) and {good:.1e} with exponents j a, k b, l c",
                 statement="Morwani et al. App. D.6.3 as printed: f^(j,k,l) = sum_{a,b,c} e^{-2 pi i j (a+b+c)/p} "
                           "f(a,b,c) gives phi^(3)^(j,k,l) = 2 u^(j) v^(k) w^(l) (false: the exponents are j a, k b, "
                           "l c)")


def sec74_norm_row(p: int) -> Check:
    """Section 7.4: for a unit-norm neuron with zero-mean vectors, ``sum_{j != 0} |u^(j)|^2 + |v^(j)|^2 +
    |w^(j)|^2`` is ``p`` (Plancherel, unnormalized DFT), not ``<= 1``."""
    rng = np.random.default_rng(SEED)
    vecs = rng.normal(size=(3, p))
    vecs -= vecs.mean(axis=1, keepdims=True)
    vecs /= np.linalg.norm(vecs)
    total = float(np.sum(np.abs(np.fft.fft(vecs, axis=1)[:, 1:]) ** 2))
    return Check(name="Sec. 7.4: sum |u^|^2.. <= 1", expected=1.0, measured=total, tolerance=1e-12,
                 passed=total <= 1 + 1e-12, exactness="float", informational=True,
                 detail=f"a seeded zero-mean neuron with ||u||^2 + ||v||^2 + ||w||^2 = 1 at p = {p}: the sum is "
                        f"{total:.15g} (= p up to {abs(total - p):.1e}; App. D.6.1 states <= p)",
                 statement="Morwani et al. Section 7.4 as printed: the norm constraint is sum_{j != 0} (|u^(j)|^2 + "
                           "|v^(j)|^2 + |w^(j)|^2) <= 1 (with the unnormalized DFT it is <= p)")


def c9_identity_row(problem: ModularAddition) -> Check:
    """(C.9) of Lemma C.14, and for ``k = 3`` (C.2) of Lemma C.10: ``1 - 1/(p-1) = p/(p-1)``, exactly at ``p``."""
    p, k = problem.p, problem.k
    lhs, rhs = 1 - Fraction(1, p - 1), Fraction(p, p - 1)
    where = "(C.9) of Lemma C.14" + (" and (C.2) of Lemma C.10" if k == 3 else "")
    return Check(name="(C.9): 1 - 1/(p-1) = p/(p-1)", expected=str(rhs), measured=str(lhs), tolerance=None,
                 passed=lhs == rhs, exactness="proved", informational=True,
                 detail=f"exact at p = {p}: 1 - 1/(p-1) = {lhs}, p/(p-1) = {rhs} (difference -2/(p-1)); the step needs "
                        f"1 + 1/(p-1) = {1 + Fraction(1, p - 1)} = p/(p-1)",
                 statement=f"Fourier circuits {where} as printed: 1 - 1/(p-1) = p/(p-1) (false; 1 + 1/(p-1) = "
                           "p/(p-1) is the identity used)")


def nonmixed_terms(p: int, k: int, u: np.ndarray, w: np.ndarray) -> tuple[Fraction, Fraction]:
    """The non-mixed part ``eta_nm(delta) = E_a[((sum_i u_i[a_i])^k - k! prod_i u_i[a_i]) w[a_1 + ... + a_k -
    delta]]`` (integers ``u`` ``(k, p)``, ``w`` ``(p,)``), exactly: ``(max_delta |eta_nm|, max_delta |eta_nm(delta)
    - eta_nm(0)|)``."""
    grid = np.array(list(itertools.product(range(p), repeat=k)), dtype=np.int64)
    vals = u[np.arange(k)[None, :], grid].astype(object)  # (p^k, k): u_i[a_i], Python integers (no overflow)
    poly = vals.sum(axis=1) ** k - math.factorial(k) * np.prod(vals, axis=1)
    s = grid.sum(axis=1) % p
    eta = [Fraction(int(np.dot(poly, w[(s - dl) % p].astype(object))), p**k) for dl in range(p)]
    return max(abs(e) for e in eta), max(abs(e - eta[0]) for e in eta)


def nonmixed_rows(problem: ModularAddition) -> list[Check]:
    """Lemmas C.10/C.14: the non-mixed monomials of ``eta(delta)`` for a seeded integer neuron whose ``w`` has mean
    ``!= 0``: non-zero (the text says 0), but the same for every ``delta`` (they cancel), exactly."""
    k = problem.k
    p = next(q for q in (problem.p, 5, 3) if q**k <= NONMIXED_MAX_POINTS or q == 3)
    rng = np.random.default_rng(SEED)
    u = rng.integers(-3, 4, size=(k, p))
    w = rng.integers(-3, 4, size=p)
    if w.sum() == 0:  # mean(w) != 0: the case the text's "= 0" misses
        w[0] += 1
    size, spread = nonmixed_terms(p, k, u, w)
    lemmas = "Lemmas C.10 (k = 3) and C.14" if k == 3 else "Lemma C.14"
    where = (f"p = {p}, k = {k}, seeded integer u_i, w with mean(w) = {Fraction(int(w.sum()), p)}; exact over "
             f"{p}^{k} inputs")
    return [
        Check(name="C.14: non-mixed terms = 0", expected="0", measured=str(size), tolerance=None, passed=size == 0,
              exactness="proved", informational=True,
              detail=f"{where}: max_delta |E_a[(non-mixed part of (u_1 + ... + u_k)^k) w(a_1+...+a_k-delta)]| = "
                     f"{size}; it is mean(w) times a moment of u, zero only for mean-zero w",
              statement=f"Fourier circuits {lemmas} as printed: every non-mixed monomial term of eta(delta) is 0"),
        Check(name="C.14: non-mixed terms cancel", expected="0", measured=str(spread), tolerance=None,
              passed=spread == 0, exactness="proved",
              detail=f"{where}: max_delta |eta_nm(delta) - eta_nm(0)| = {spread}",
              statement=f"{lemmas}, corrected: the non-mixed terms of eta(delta) do not depend on delta, so they "
                        "cancel in eta(0) - E_delta eta(delta) for every w"),
    ]


#: App. D.6.3's DFT row forms ``p^3`` arrays: at most this ``p`` (a larger problem's row uses this ``p``)
DFT_P_MAX = 61
#: Section 7.4's norm is measured on a random neuron of ``3 p`` floats up to this ``p`` (beyond: at ``10^5 + 3``)
NORM_P_MAX = 10**5
#: App. D.4's network has ``2 p^2`` neurons (kept sparse): its rows are computed up to this ``p``
MEMORIZATION_P_MAX = 1009


def wrong_logit_statement(k: int) -> str:
    """The statement of the construction table's row "paper: wrong logit = 0" (both papers make it at ``k = 2``)."""
    where = "Lemmas C.17/C.18" + ("; Morwani et al. App. D.6.2 for k = 2" if k == 2 else "")
    return f"paper's stated wrong-label value 0 ({where})"


def paper_statement_rows(problem: ModularAddition) -> tuple[list[Check], dict, list[str]]:
    """The rows of this module (and, for ``k = 2``, Appendix D.4's memorizing network,
    :mod:`margintheory.tasks.modular_addition.memorization`) for the construction's table, their fields and notes."""
    from margintheory.tasks.modular_addition.memorization import memorization_checks

    p, k = problem.p, problem.k
    rows = [c9_identity_row(problem), *nonmixed_rows(problem)]
    fields: dict = {}
    notes: list[str] = []
    if k == 2:
        rows += [*d62_neuron_pair_rows(), d63_dft_row(p if p <= DFT_P_MAX else 31),
                 sec74_norm_row(p if p <= NORM_P_MAX else NORM_P_MAX + 3)]  # (10^5 + 3 is prime)
        if p <= MEMORIZATION_P_MAX:
            mem, fields = memorization_checks(p)
            rows += mem
        else:
            notes.append(f"App. D.4's memorizing network ({2 * p * p} neurons) is checked for p <= "
                         f"{MEMORIZATION_P_MAX} only")
    return rows, fields, notes
