"""Exact pricing of the column-generation LP: the single-neuron problem under translation-invariant class weights.

The orbit LP of :mod:`margintheory.solvers.column_generation` has duals ``lam(a, c) = tau(c - y(a)) / p^k`` with
``tau`` a distribution on ``d = 1..p-1``.  For such weights the class-weighted single-neuron objective (Def. C.12-C.13
of Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers", arXiv:2402.09469) is

    ``E_lam[phi_theta] = p^-k sum_a (u_1[a_1] + ... + u_k[a_k])^k w_tau[a_1 + ... + a_k]``,
    ``w_tau[y] = sum_d tau(d) (w[y] - w[y + d])``,  ``w_tau^(j) = kappa(j) w^(j)``,
    ``kappa(j) = 1 - sum_d tau(d) exp(2 pi i j d / p)``  (``kappa(0) = 0``).

Every monomial of ``z_a^k`` that misses an input position sums ``w_tau`` over a full residue class, which is
``kappa(0) w^(0) = 0``; only the fully mixed ``k! u_1[a_1]...u_k[a_k]`` survives (Lemma C.14's computation, for any
``tau``), and by Plancherel

    ``E = (2 k! / p^(k+1)) sum_{j=1}^{(p-1)/2} Re(kappa(j) w^(j) conj(u_1^(j) ... u_k^(j)))``.

With ``sum_i ||u_i||^2 + ||w||^2 = 1``, ``|Re(.)| <= |kappa(j)| prod |.|``, AM-GM and ``sum_j x_j^q <= (sum x_j)^q``
(``q = (k+1)/2 >= 1``, as in Lemma C.15) give the exact maximum

    ``max E = C_{p,k} max_j |kappa(j)|``,  ``C_{p,k} = 2 k! p^-(k+1) (p / (2k+2))^((k+1)/2)``,

attained by ``u_i[x] = A cos(theta_i + 2 pi j x/p)``,
``w[c] = A cos(theta_1 + ... + theta_k - arg kappa(j) + 2 pi j c/p)``, ``A = (2 / ((k+1) p))^(1/2)``, for any
phases ``theta``.  (For uniform ``tau``, ``kappa = p/(p-1)`` at every ``j``
and ``C_{p,k} p/(p-1) = gamma*``; and since ``sum_{j != 0} kappa(j) = p`` for *every* ``tau``, no translation-invariant
dual does better than the uniform one.)  Pricing is therefore a closed form, valid for ``p`` odd: no SOS relaxation
and no local search are needed; the tests compare it with both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

EPS = np.finfo(float).eps


def pricing_constant(p: int, k: int) -> float:
    """``C_{p,k} = 2 k! p^-(k+1) (p/(2k+2))^((k+1)/2)``."""
    return 2.0 * math.factorial(k) * p ** -(k + 1.0) * (p / (2.0 * k + 2.0)) ** ((k + 1) / 2.0)


def kappa(p: int, tau: np.ndarray) -> np.ndarray:
    """``kappa(j) = 1 - sum_d tau(d) exp(2 pi i j d/p)`` for ``j = 1..(p-1)/2`` (``tau`` over ``d = 1..p-1``,
    normalised here to a distribution)."""
    tau = np.asarray(tau, dtype=float)
    tau = tau / tau.sum()
    j = np.arange(1, (p - 1) // 2 + 1)
    d = np.arange(1, p)
    ang = 2.0 * np.pi * ((j[:, None] * d[None, :]) % p) / p
    return 1.0 - np.exp(1j * ang) @ tau


@dataclass(frozen=True)
class FourierPrice:
    """``values[j-1] = C |kappa(j)|``; ``upper`` adds a rigorous bound on the float64 rounding of that value."""

    values: np.ndarray
    phases: np.ndarray  # arg kappa(j)
    upper: float

    @property
    def best_frequency(self) -> int:
        return int(np.argmax(self.values)) + 1

    @property
    def best_value(self) -> float:
        return float(self.values.max())


def price(p: int, k: int, tau: np.ndarray) -> FourierPrice:
    """Exact single-neuron maximum under ``lam = tau(c - y)/p^k`` per frequency, and a certified upper bound on it.

    Rounding: each ``kappa(j)`` is ``1 -`` a sum of ``p - 1`` products of a probability and a unit complex number
    (``exp`` accurate to 2 ulp); the float sum's error is below ``(p + 4) eps`` in modulus; the constant and the
    modulus add ``(2k + 8) eps`` relative.  ``upper = C (max |kappa| + (p + 4) eps) (1 + (2k + 8) eps)``.
    """
    kp = kappa(p, tau)
    c = pricing_constant(p, k)
    values = c * np.abs(kp)
    upper = c * (float(np.abs(kp).max()) + (p + 4) * EPS) * (1 + (2 * k + 8) * EPS)
    return FourierPrice(values, np.angle(kp), upper)


def priced_neuron(p: int, k: int, j: int, phase: float, theta: np.ndarray) -> np.ndarray:
    """The maximiser at frequency ``j`` with input phases ``theta`` (length ``k``) and ``arg kappa(j) = phase``:
    a unit vector of shape ``(k+1, p)`` (rows ``u_1..u_k, w``)."""
    x = np.arange(p)
    amp = math.sqrt(2.0 / ((k + 1) * p))
    ang = np.concatenate([theta, [float(np.sum(theta)) - phase]])
    out = amp * np.cos(ang[:, None] + 2.0 * np.pi * ((j * x) % p)[None, :] / p)
    return out / np.linalg.norm(out)
