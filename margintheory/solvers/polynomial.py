"""Sparse multivariate polynomials (exponent matrix + coefficients) and the expansion of the single-neuron
objective ``F(y) = sum_a (L_a . y)^k (M_a . y)`` in any linear coordinates ``y`` (docs/theory.md#lemma-c14).

The expansion is exact algebra carried out in float64: ``(L . y)^k = sum_{|alpha| = k} (k! / alpha!) L^alpha y^alpha``
(multinomial theorem), then multiplied by the linear form ``M . y``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Polynomial:
    """``sum_t coeffs[t] * prod_l y_l ** exps[t, l]`` with unique exponent rows."""

    exps: np.ndarray  # (N, n) int
    coeffs: np.ndarray  # (N,) float

    @property
    def nvars(self) -> int:
        return int(self.exps.shape[1])

    @property
    def degree(self) -> int:
        return int(self.exps.sum(axis=1).max()) if len(self.coeffs) else 0

    def __call__(self, y: np.ndarray) -> float:
        """Evaluate at one point."""
        return float(np.dot(self.coeffs, np.prod(np.asarray(y, dtype=float)[None, :] ** self.exps, axis=1)))


def monomials_of_degree(n: int, degree: int) -> np.ndarray:
    """All exponent vectors of total degree ``degree`` in ``n`` variables, shape ``(C(n+d-1, d), n)``."""
    rows = []
    for combo in itertools.combinations_with_replacement(range(n), degree):
        e = np.zeros(n, dtype=np.int64)
        np.add.at(e, list(combo), 1)
        rows.append(e)
    return np.array(rows, dtype=np.int64).reshape(-1, n)


def monomials_up_to(n: int, degree: int) -> np.ndarray:
    """All exponent vectors of total degree ``<= degree``."""
    return np.concatenate([monomials_of_degree(n, d) for d in range(degree + 1)])


def multinomial(exps: np.ndarray) -> np.ndarray:
    """``|alpha|! / prod alpha_l!`` for each row."""
    fact = np.array([math.factorial(i) for i in range(int(exps.max(initial=0)) + 1)], dtype=float)
    total = np.array([math.factorial(int(s)) for s in exps.sum(axis=1)], dtype=float)
    return total / np.prod(fact[exps], axis=1)


def collect(exps: np.ndarray, coeffs: np.ndarray) -> Polynomial:
    """Sum the coefficients of equal exponent rows (rows compared as raw bytes: exact and fast)."""
    e = np.ascontiguousarray(exps, dtype=np.int64)
    keys = e.view(np.dtype((np.void, e.dtype.itemsize * e.shape[1]))).ravel()
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    out = np.zeros(len(first))
    np.add.at(out, inv.ravel(), coeffs)
    return Polynomial(e[first], out)


def power_times_linear(L: np.ndarray, M: np.ndarray, k: int) -> Polynomial:
    """``sum_a (L[a] . y)^k (M[a] . y)`` expanded into monomials (multinomial theorem; vectorised over ``a``)."""
    n = L.shape[1]
    Ek = monomials_of_degree(n, k)  # (Nk, n)
    mult = multinomial(Ek)
    T = np.zeros((len(Ek), n))  # coefficient of y^alpha * y_l
    step = max(1, 2**22 // max(1, len(Ek) * n))
    for start in range(0, L.shape[0], step):
        Lc = L[start:start + step]
        P = np.prod(Lc[:, None, :] ** Ek[None, :, :], axis=2) * mult[None, :]  # (chunk, Nk)
        T += P.T @ M[start:start + step]
    exps = (Ek[:, None, :] + np.eye(n, dtype=np.int64)[None, :, :]).reshape(-1, n)
    return collect(exps, T.ravel())


def power_times_linear_abs_mass(L: np.ndarray, M: np.ndarray, k: int) -> float:
    """``sum`` over all terms of the expansion of :func:`power_times_linear` of ``|term|`` (inputs taken in absolute
    value, so every term is non-negative and no collection is needed)."""
    n = L.shape[1]
    Ek = monomials_of_degree(n, k)
    mult = multinomial(Ek)
    La, Ma = np.abs(L), np.abs(M)
    total = 0.0
    step = max(1, 2**22 // max(1, len(Ek) * n))
    for start in range(0, L.shape[0], step):
        P = np.prod(La[start:start + step, None, :] ** Ek[None, :, :], axis=2) * mult[None, :]
        total += float((P.sum(axis=1) * Ma[start:start + step].sum(axis=1)).sum())
    return total


def norm_power(n: int, h: int) -> Polynomial:
    """``(y_1^2 + ... + y_n^2)^h`` expanded (multinomial theorem)."""
    E = monomials_of_degree(n, h)
    return Polynomial(2 * E, multinomial(E))
