"""CoGO's generators (Table 1), polynomial partial solutions (Theorem 4, Eq. 5) and the global optimizers of
Corollaries 2-5 (Eq. 6-11; proofs in App. C.2), built from the paper's formulas (docs/theory.md#cogo).

Single-frequency generator ``u = [a, b, c]`` = the values ``z[p, k]`` at ``+k`` (conjugates at ``-k``). The
nine single-frequency potentials of Table 1 (for ``r = sum_j prod z``), with ``x̄`` the ``-k`` entry: ``ābc =
r[-k,k,k]``, ``ab̄c = r[k,-k,k]``, ``abc̄ = r[k,k,-k]``, ``āac = r_a[-k,k,k]``, ``b̄bc = r_b[-k,k,k]``, ``aac
= r_a[k,k,k]``, ``bbc = r_b[k,k,k]``, ``āāc = r_a[-k,-k,k]``, ``b̄b̄c = r_b[-k,-k,k]``.
"""

from __future__ import annotations

import cmath
import math
from dataclasses import dataclass

import numpy as np

from margintheory.core.problems import CoGO
from margintheory.errors import InputError
from margintheory.tasks.cogo.algebra import A, B, Z, r_abc, r_pp, single_frequency

W3 = cmath.exp(2j * math.pi / 3)
MP_NAMES = ("ābc", "ab̄c", "abc̄", "āac", "b̄bc", "aac", "bbc", "āāc", "b̄b̄c")
ROOT_TOL = 1e-9
DEFAULT_NU = cmath.exp(0.2j * math.pi)  # a generic unit-modulus nu for the u_nu row of Table 1


def table1_generators(nu: complex = DEFAULT_NU) -> dict[str, tuple[complex, complex, complex]]:
    """The ``[a, b, c]`` column of Table 1."""
    w, wb = W3, W3.conjugate()
    return {
        "1_k": (1, 1, 1),
        "1~_k": (-1, -1, 1),
        "u_one": (1, -1, -1),
        "u_syn": (w, w, w),
        "u_3c": (w, wb, 1),
        "u_3a": (1, w, wb),
        "u_4c": (1j, -1j, 1),
        "u_4a": (1, 1j, -1j),
        "u_nu": (nu, -nu, -(nu.conjugate() ** 2)),
    }


def table1_stated(nu: complex = DEFAULT_NU) -> dict[str, tuple[tuple[complex, ...], int | None]]:
    """Table 1's stated evaluations (columns :data:`MP_NAMES`) and stated order of the maximal polynomial, as
    transcribed from the paper (the claims under test, not computed values)."""
    w, wb, i = W3, W3.conjugate(), 1j
    n2, nb2, n4 = nu**2, nu.conjugate() ** 2, nu**4
    return {
        "1_k": ((1,) * 9, None),
        "1~_k": ((1,) * 9, None),
        "u_one": ((1, 1, 1, -1, -1, -1, -1, -1, -1), 2),
        "u_syn": ((w, w, w, w, w, 1, 1, wb, wb), 3),
        "u_3c": ((w, wb, 1, 1, 1, wb, w, w, wb), 3),
        "u_3a": ((1, w, wb, wb, wb, wb, w, wb, 1), 3),
        "u_4c": ((-1, -1, 1, 1, 1, -1, -1, -1, -1), 2),
        "u_4a": ((1, -1, -1, -i, -i, -i, i, -i, i), 4),
        "u_nu": ((n2, n2, n4, -nb2, -nb2, -1, -1, -n4, -n4), 10),
    }


def single_frequency_mps(z: Z, k: int) -> np.ndarray:
    """The nine potentials of :data:`MP_NAMES` at frequency ``k``, read off the full potential tensors."""
    d = z.d
    m = (-k) % d
    R, Ra, Rb = r_abc(z), r_pp(z, A), r_pp(z, B)
    return np.array(
        [
            R[m, k, k],
            R[k, m, k],
            R[k, k, m],
            Ra[m, k, k],
            Rb[m, k, k],
            Ra[k, k, k],
            Rb[k, k, k],
            Ra[m, m, k],
            Rb[m, m, k],
        ]
    )


def all_single_frequency_values(z: Z, k: int) -> np.ndarray:
    """The nine potentials and their conjugates (the loss contains both)."""
    v = single_frequency_mps(z, k)
    return np.concatenate([v, np.conj(v)])


def distinct(values: np.ndarray, tol: float = ROOT_TOL) -> list[complex]:
    """Distinct values up to ``tol``."""
    out: list[complex] = []
    for v in values:
        if all(abs(v - u) > tol for u in out):
            out.append(complex(v))
    return out


def polynomial_solution(u: Z, k: int, roots: list[complex]) -> Z:
    """``prod_{s in roots} (u + s^)`` expanded as ``sum_l c_l * u^(L-l)`` (Eq. 5): coefficient ``e_l`` of
    ``prod (x - s)`` realized as the order-1 weight ``cbrt(e_l) 1_k`` (real cube root: ``r(c 1_k) = c^3`` for
    every potential only if ``c`` is real, which holds because the root set is closed under conjugation)."""
    coeffs = np.poly(np.array(roots, dtype=complex)) if roots else np.array([1.0])
    if np.abs(coeffs.imag).max() > ROOT_TOL:
        raise InputError("polynomial coefficients are not real: the root set is not closed under conjugation")
    L = len(coeffs) - 1
    powers = [single_frequency(u.d, k, np.ones(3))]  # u^0 = 1_k, u^1, ..., u^L (ring powers)
    for _ in range(L):
        powers.append(powers[-1] * u)
    terms = [powers[L - idx].scaled(float(np.cbrt(e))) for idx, e in enumerate(coeffs.real) if abs(e) > ROOT_TOL]
    return _sum(terms)


def maximal_polynomial(u: Z, k: int) -> tuple[Z, list[complex]]:
    """Theorem 4's ``rho(u)``: roots = the distinct single-frequency potential values other than 1."""
    vals = all_single_frequency_values(u, k)
    roots = [v for v in distinct(vals) if abs(v - 1) > ROOT_TOL]
    return polynomial_solution(u, k, roots), roots


def generator(d: int, k: int, name: str, nu: complex = DEFAULT_NU) -> Z:
    """A Table 1 generator at frequency ``k``."""
    return single_frequency(d, k, np.array(table1_generators(nu)[name]))


# -- Corollaries ---------------------------------------------------------------------------------------------
def z_syn(d: int, k: int) -> Z:
    """``rho(u_syn) = u^2 + u + 1`` (order 3)."""
    return maximal_polynomial(generator(d, k, "u_syn"), k)[0]


def z_nu(d: int, k: int, nu: complex) -> Z:
    """``u_nu + 1_k`` (order 2; 'not maximal polynomial')."""
    return generator(d, k, "u_nu", nu) + single_frequency(d, k, np.ones(3))


def z_xi(d: int, k: int, xi: complex) -> Z:
    """Eq. 9: ``z_a = [1, xi]``, ``z_b = [1, -i conj(xi)]``, ``z_c = [1, i]`` (order 2)."""
    return single_frequency(d, k, np.array([[1, xi], [1, -1j * np.conj(xi)], [1, 1j]]))


def rho_one(d: int, k: int) -> Z:
    """``rho(u_one) = u_one + 1`` (order 2, real: usable at ``k = d/2``)."""
    return generator(d, k, "u_one") + single_frequency(d, k, np.ones(3))


def half_frequencies(d: int) -> list[int]:
    """``1 .. floor((d-1)/2)``."""
    return list(range(1, (d - 1) // 2 + 1))


@dataclass
class Construction:
    """A CoGO network and how it was built (``variant``: 'paper' = literal formula, 'corrected')."""

    name: str
    z: Z
    variant: str
    claimed_order: int | None
    formula: str


def _sum(parts: list[Z]) -> Z:
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def _even_term(d: int, scale: float) -> list[Z]:
    return [rho_one(d, d // 2).scaled(scale)] if d % 2 == 0 else []


def build_f6(d: int, nu: complex = 1.0, variant: str = "paper") -> Construction:
    """Corollary 2 (Eq. 6): ``6^(-1/3) sum_k z_syn^(k) * z_nu^(k) * 1_k``; even ``d``: plus ``rho(u_one)`` at
    ``d/2``, inside the ``6^(-1/3)`` sum ('paper') or scaled by ``2^(-1/3)`` ('corrected', so ``r[d/2]^3 =
    1``)."""
    parts = [
        (z_syn(d, k) * z_nu(d, k, nu) * single_frequency(d, k, np.ones(3))).scaled(6 ** (-1 / 3))
        for k in half_frequencies(d)
    ]
    parts += _even_term(d, 6 ** (-1 / 3) if variant == "paper" else 2 ** (-1 / 3))
    return Construction(
        "F6",
        _sum(parts),
        variant,
        3 * (d - 1) if d % 2 else None,
        "6^(-1/3) sum_k rho(u_syn) * (u_nu + 1) * 1_k"
        + (
            "; + rho(u_one) at d/2 scaled " + ("6^(-1/3)" if variant == "paper" else "2^(-1/3)")
            if d % 2 == 0
            else ""
        ),
    )


def build_memorization(d: int) -> Construction:
    """Corollary 3 (Eq. 8): nodes ``(j1, j2)``, ``z_a = w^(k j1)``, ``z_b = w^(k j2)``, ``z_c =
    w^(-k(j1+j2))``, all over ``d^(2/3)``, ``k != 0``."""
    k = np.arange(d)[:, None, None]
    j1 = np.arange(d)[None, :, None]
    j2 = np.arange(d)[None, None, :]
    w = np.exp(2j * np.pi / d)
    za = np.broadcast_to(w ** (k * j1), (d, d, d)).reshape(d, -1)
    zb = np.broadcast_to(w ** (k * j2), (d, d, d)).reshape(d, -1)
    zc = (w ** (-k * (j1 + j2))).reshape(d, -1)
    z = np.stack([za, zb, zc]) / d ** (2 / 3)
    z[:, 0, :] = 0
    return Construction("memorize", Z(z), "paper", d * d, "d^(-2/3) z_a * z_b (Eq. 8)")


def build_f4(d: int, xi: complex = 1.0) -> Construction:
    """``4^(-1/3) sum_k rho(u_{nu=i})^(k) * z_xi^(k)`` (Corollary 4 at every frequency); even ``d``: plus
    ``2^(-1/3) rho(u_one)`` at ``d/2`` (z_xi is complex, not allowed at ``d/2``)."""
    parts = [
        (maximal_polynomial(generator(d, k, "u_4c"), k)[0] * z_xi(d, k, xi)).scaled(4 ** (-1 / 3))
        for k in half_frequencies(d)
    ]
    parts += _even_term(d, 2 ** (-1 / 3))
    return Construction(
        "F4",
        _sum(parts),
        "paper",
        4 * len(half_frequencies(d)) + 2 * (d % 2 == 0),
        "4^(-1/3) sum_k rho(u_4c) * z_xi (Corollary 4)",
    )


PAPER_BIAS = -(1 + 1j) / 3  # Eq. 65
CORRECTED_BIAS = -(1 + 1j) / 2  # solves 6^-1 * 2 * 6 * const + 4^-1 * 4 (1+i) = 0


def build_f46(d: int, k0: int = 1, xi: complex = 1.0, variant: str = "paper") -> Construction:
    """Corollary 5 (Eq. 10): ``6^(-1/3) ẑ_F6^(k0) + 4^(-1/3) sum_{k != k0} z_F4^(k)``; ``ẑ`` is ``z_syn^(k0) *
    z_{nu=1}^(k0)`` with the constant ``const`` added to its ``(c, m)`` entries for every F4 frequency ``m``
    (conjugate at ``-m``); ``const = -(1+i)/3`` (Eq. 65, 'paper') or ``-(1+i)/2`` ('corrected')."""
    ks = half_frequencies(d)
    if k0 not in ks:
        raise InputError(f"k0 must be in 1..{(d - 1) // 2}, got {k0}")
    const = PAPER_BIAS if variant == "paper" else CORRECTED_BIAS
    hat = z_syn(d, k0) * z_nu(d, k0, 1.0)
    zz = hat.z.copy()
    for m in ks:
        if m != k0:
            zz[2, m, :] += const
            zz[2, d - m, :] += np.conj(const)
    parts = [Z(zz).scaled(6 ** (-1 / 3))]
    parts += [
        (maximal_polynomial(generator(d, k, "u_4c"), k)[0] * z_xi(d, k, xi)).scaled(4 ** (-1 / 3))
        for k in ks
        if k != k0
    ]
    parts += _even_term(d, 2 ** (-1 / 3))
    return Construction(
        "F46",
        _sum(parts),
        variant,
        2 * d if d % 2 else None,
        f"6^(-1/3) ẑ_F6^(k0={k0}) + 4^(-1/3) sum_(k != k0) z_F4^(k), bias {const:.6g}",
    )


CONSTRUCTIONS = CoGO.CONSTRUCTIONS  # the names, declared with the problem object
