"""Exact arithmetic in the cyclotomic field ``Q(omega_N)``, ``omega_N = exp(2 pi i / N)``, with integer vectors.

Every quantity of the construction (Lemmas C.16-C.18) is an integer combination of
``cos(2 pi t / p)`` and ``sin(2 pi t / p)``.  With ``N = lcm(p, 4)`` and ``X = omega_N``::

    2 cos(2 pi t / p) = X^(e t) + X^(-e t),      2 sin(2 pi t / p) = X^(3N/4) (X^(e t) - X^(-e t)),   e = N / p,

because ``-i = X^(3N/4)``.  So we compute in the group ring ``Z[Z_N]`` (integer vectors of length ``N``, product =
cyclic convolution), which maps onto ``Z[omega_N]`` by ``X -> omega_N``.  Equality in the field is decided
exactly by reducing modulo the ``N``-th cyclotomic polynomial ``Phi_N`` (monic with integer coefficients, so the
reduction is an integer matrix): the remainders ``1, X, ..., X^(phi(N)-1)`` form a Q-basis of ``Q(omega_N)``,
hence an element is the rational number ``r`` iff its reduced vector is ``(r, 0, ..., 0)``.

No floating point is used anywhere in this module; int64 overflow is excluded by an explicit a-priori bound.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from margintheory.errors import RefusedError

INT64_SAFE = 2**62


@lru_cache(maxsize=64)
def reduction_matrix(n: int) -> np.ndarray:
    """Integer matrix ``R`` (``n`` x ``phi(n)``): row ``t`` holds the coefficients of ``X^t mod Phi_n(X)``.

    Built by the recurrence ``X^(t+1) = X * X^t`` with ``X^d = -(c_0 + ... + c_(d-1) X^(d-1))`` (``Phi_n`` monic).
    """
    x = sp.Symbol("x")
    coeffs = [int(c) for c in reversed(sp.Poly(sp.cyclotomic_poly(n, x), x).all_coeffs())]  # c_0 .. c_d
    deg = len(coeffs) - 1
    tail = -np.array(coeffs[:deg], dtype=np.int64)
    rows = np.zeros((n, deg), dtype=np.int64)
    rows[0, 0] = 1
    for t in range(1, n):
        prev = rows[t - 1]
        rows[t, 1:] = prev[:-1]
        rows[t] += prev[-1] * tail
    rows.setflags(write=False)
    return rows


def field_order(p: int) -> int:
    """``N = lcm(p, 4)``: the cyclotomic field ``Q(omega_N)`` contains ``cos, sin (2 pi t / p)`` and ``i``."""
    return math.lcm(p, 4)


def check_int64_bound(bound: int, what: str) -> None:
    """Refuse (rather than overflow silently) when an a-priori bound on integer magnitudes exceeds 2^62."""
    if bound >= INT64_SAFE:
        raise RefusedError(f"exact integer arithmetic for {what} could exceed int64 (bound {bound}); "
                           "choose a smaller p or k")


def monomial(t: int, n: int) -> np.ndarray:
    """The group-ring element ``X^t``."""
    v = np.zeros(n, dtype=np.int64)
    v[t % n] = 1
    return v


def twice_cos(t: int, p: int) -> np.ndarray:
    """``2 cos(2 pi t / p)`` as an integer vector of length ``N = lcm(p, 4)``."""
    n = field_order(p)
    e = n // p
    return monomial(e * t, n) + monomial(-e * t, n)


def twice_sin(t: int, p: int) -> np.ndarray:
    """``2 sin(2 pi t / p) = -i (X^(e t) - X^(-e t))`` as an integer vector of length ``N = lcm(p, 4)``."""
    n = field_order(p)
    e = n // p
    q = 3 * n // 4
    return monomial(q + e * t, n) - monomial(q - e * t, n)


def twice_trig(is_sine: int, t: int, p: int) -> np.ndarray:
    """``2 cos`` (``is_sine == 0``) or ``2 sin`` (``is_sine == 1``) of ``2 pi t / p``."""
    return twice_sin(t, p) if is_sine else twice_cos(t, p)


def cyclic_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Product in ``Z[Z_N]`` along the last axis (cyclic convolution), broadcasting the leading axes.

    ``out[..., t] = sum_r b[..., r] a[..., t - r]``; loops only over the ``r`` where ``b`` is non-zero somewhere.
    """
    n = a.shape[-1]
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = np.zeros(shape, dtype=np.int64)
    bound = int(np.abs(a).sum(axis=-1).max(initial=0)) * int(np.abs(b).sum(axis=-1).max(initial=0))
    check_int64_bound(bound, "a cyclotomic product")
    nonzero = np.flatnonzero(np.abs(b).reshape(-1, n).sum(axis=0))
    for r in nonzero:
        out += b[..., r:r + 1] * np.roll(a, int(r), axis=-1)
    return out


def cyclic_pow(a: np.ndarray, k: int) -> np.ndarray:
    """``a^k`` in ``Z[Z_N]`` (``k >= 1``), batched over the leading axes."""
    out = a
    for _ in range(k - 1):
        out = cyclic_mul(out, a)
    return out


def reduce_mod_cyclotomic(v: np.ndarray) -> np.ndarray:
    """Canonical coordinates in ``Q(omega_N)`` (basis ``1, X, ..., X^(phi(N)-1)``), batched on leading axes."""
    n = v.shape[-1]
    r = reduction_matrix(n)
    bound = int(np.abs(v).sum(axis=-1).max(initial=0)) * int(np.abs(r).max(initial=1))
    check_int64_bound(bound, "the cyclotomic reduction")
    return v @ r


def rational_parts(v: np.ndarray) -> tuple[np.ndarray, bool]:
    """Reduce ``v`` and return ``(constant coefficients, every element is rational)``, exactly."""
    red = reduce_mod_cyclotomic(v)
    return red[..., 0], bool(not np.any(red[..., 1:]))


def rational_value(v: np.ndarray) -> sp.Integer:
    """The integer equal to the single element ``v`` of ``Z[omega_N]``; ``ValueError`` if it is not rational."""
    const, ok = rational_parts(np.asarray(v, dtype=np.int64))
    if not ok:
        raise ValueError("the cyclotomic element is not a rational number")
    return sp.Integer(int(const))
