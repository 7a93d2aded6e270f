"""The class-weighted single-neuron objective (docs/theory.md#class-weighted-margin; Def. C.12-C.13,
Lemma C.5 = Morwani et al. Lemma 7.5) for arbitrary weights over (input, wrong label) pairs.

Weights are a distribution ``lam[a, c]`` over pairs ``(a, c != y(a))`` of ``D_p`` (``lam = q(a) tau(a, c)``).
For one neuron ``theta = (u_1, ..., u_k, w)`` with ``z_a = u_1[a_1] + ... + u_k[a_k]`` the contribution to the
logits is ``f(a)[c] = z_a^k w[c]`` and the class-weighted objective is

    ``E_lam[psi'] = sum_{a, c != y} lam[a, c] (f(a)[y] - f(a)[c]) = sum_a z_a^k (G w)_a``,

with the *signed weight matrix* ``G[a, c] = [c = y(a)] sum_c' lam[a, c'] - lam[a, c]``.  It is a form of degree
``k + 1`` in the ``(k + 1) p`` coordinates ``x = (u_1, ..., u_k, w)`` (flattened in that order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.margins import input_grid
from margintheory.errors import InputError
from margintheory.solvers.polynomial import Polynomial, power_times_linear


@dataclass(frozen=True)
class PairWeights:
    """A distribution ``lam`` (shape ``(p**k, p)``, zero on the true label) over (input, wrong label) pairs."""

    p: int
    k: int
    lam: np.ndarray

    @property
    def inputs(self) -> np.ndarray:
        """``D_p`` in :func:`margintheory.engines.margins.input_grid` order."""
        return input_grid(self.p, self.k)

    @property
    def labels(self) -> np.ndarray:
        """``y(a) = (a_1 + ... + a_k) mod p``."""
        return self.inputs.sum(axis=1) % self.p

    def signed_matrix(self) -> np.ndarray:
        """``G[a, c] = [c = y(a)] sum_c' lam[a, c'] - lam[a, c]`` (so that ``E_lam[psi'] = sum_a z_a^k (G w)_a``)."""
        G = -self.lam.copy()
        rows = np.arange(G.shape[0])
        G[rows, self.labels] += self.lam.sum(axis=1)
        return G

    def is_uniform(self, rtol: float = 1e-9) -> bool:
        """Whether every wrong pair has weight ``1 / (p^k (p - 1))`` to relative tolerance ``rtol``."""
        target = 1.0 / (self.p**self.k * (self.p - 1))
        mask = _wrong_mask(self.p, self.k)
        return bool(np.all(np.abs(self.lam[mask] - target) <= rtol * target))


def _wrong_mask(p: int, k: int) -> np.ndarray:
    """Boolean ``(p**k, p)``: true on the wrong labels ``c != y(a)``."""
    y = input_grid(p, k).sum(axis=1) % p
    mask = np.ones((p**k, p), dtype=bool)
    mask[np.arange(p**k), y] = False
    return mask


def pair_weights(p: int | ModularAddition, k: int | None = None, q: np.ndarray | None = None,
                 tau: np.ndarray | None = None) -> PairWeights:
    """``lam[a, c] = q(a) tau(a, c)``: ``q`` over ``D_p`` (default uniform ``p^-k``), ``tau(a, .)`` over wrong labels
    (default uniform ``1/(p-1)``; docs/theory.md#margins).  Arrays are validated (non-negative, normalised).
    ``p`` is a :class:`~margintheory.core.problems.ModularAddition` or an integer with ``k``."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    n, mask = p**k, _wrong_mask(p, k)
    qa = np.full(n, 1.0 / n) if q is None else np.asarray(q, dtype=float)
    if qa.shape != (n,) or not np.all(np.isfinite(qa)) or np.any(qa < 0) or abs(qa.sum() - 1) > 1e-9:
        raise InputError(f"q must be a probability vector of length p^k = {n}")
    if tau is None:
        ta = np.where(mask, 1.0 / (p - 1), 0.0)
    else:
        ta = np.asarray(tau, dtype=float)
        if ta.shape != (n, p) or not np.all(np.isfinite(ta)) or np.any(ta < 0) or np.any(ta[~mask] != 0):
            raise InputError(f"tau must be a non-negative ({n}, {p}) array vanishing on the true labels")
        if np.any(np.abs(ta.sum(axis=1) - 1) > 1e-9):
            raise InputError("every row of tau must sum to 1 over the wrong labels")
    return PairWeights(p, k, qa[:, None] * ta)


def pair_weights_from_lambda(p: int | ModularAddition, k: int | None, lam: np.ndarray) -> PairWeights:
    """Pair weights given directly (e.g. an LP dual); clipped at 0 and renormalised, shape checked.  ``p`` is a
    :class:`~margintheory.core.problems.ModularAddition` (``k`` ``None``) or an integer with ``k``."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    lam = np.asarray(lam, dtype=float)
    if lam.shape != (p**k, p) or not np.all(np.isfinite(lam)):
        raise InputError(f"pair weights must be a finite ({p**k}, {p}) array")
    lam = np.where(_wrong_mask(p, k), np.clip(lam, 0.0, None), 0.0)
    total = lam.sum()
    if total <= 0:
        raise InputError("pair weights are all zero")
    return PairWeights(p, k, lam / total)


class SingleNeuronObjective:
    """``F(x) = sum_a z_a^k (G w)_a`` with value and gradient (vectorised numpy), ``x = (u_1..u_k, w)`` flat."""

    def __init__(self, weights: PairWeights) -> None:
        self.weights = weights
        self.p, self.k = weights.p, weights.k
        self.n = (self.k + 1) * self.p
        self.inputs = weights.inputs
        self.G = weights.signed_matrix()

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(U (k, p), w (p,))`` from the flat vector."""
        X = np.asarray(x, dtype=float).reshape(self.k + 1, self.p)
        return X[:-1], X[-1]

    def preactivations(self, U: np.ndarray) -> np.ndarray:
        """``z_a = sum_i u_i[a_i]`` for every input ``a``."""
        return U[np.arange(self.k)[None, :], self.inputs].sum(axis=1)

    def value(self, x: np.ndarray) -> float:
        """``F(x)``."""
        U, w = self.split(x)
        return float(np.dot(self.preactivations(U) ** self.k, self.G @ w))

    def value_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``F(x)`` and ``grad F(x)``: ``dF/dw = G^T z^k``, ``dF/du_i[t] = sum_{a_i = t} k z_a^(k-1) (G w)_a``."""
        U, w = self.split(x)
        z = self.preactivations(U)
        v = self.G @ w
        zk1 = z ** (self.k - 1)
        grad = np.empty((self.k + 1, self.p))
        back = self.k * zk1 * v
        for i in range(self.k):
            grad[i] = np.bincount(self.inputs[:, i], weights=back, minlength=self.p)
        grad[-1] = self.G.T @ (zk1 * z)
        return float(np.dot(zk1 * z, v)), grad.ravel()

    def restricted_polynomial(self, B: np.ndarray) -> Polynomial:
        """``y -> F(B y_1, ..., B y_k, B y_w)`` as a polynomial in ``(k+1) d`` variables for a ``(p, d)`` basis ``B``
        (``B = I`` gives the full objective; a Fourier block gives one frequency's restriction, Lemma C.14)."""
        B = np.asarray(B, dtype=float)
        d = B.shape[1]
        L = np.zeros((len(self.inputs), (self.k + 1) * d))
        for i in range(self.k):
            L[:, i * d:(i + 1) * d] = B[self.inputs[:, i]]
        M = np.zeros_like(L)
        M[:, self.k * d:] = self.G @ B
        return power_times_linear(L, M, self.k)

    def sphere_value_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``F(x / |x|) = F(x) / |x|^(k+1)`` (homogeneity) and its gradient, for optimisation on the sphere."""
        r2 = float(np.dot(x, x))
        f, g = self.value_and_grad(x)
        d = self.k + 1
        scale = r2 ** (-d / 2)
        return f * scale, g * scale - d * f * scale / r2 * x


def neuron_pair_contributions(U: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``phi_i(a, c) = f_i(a)[y] - f_i(a)[c]`` for every neuron of a network: shape ``(m, p**k, p)``
    (zero on the true label).  ``U (m, k, p)``, ``W (m, p)``; ``f_i(a)[c] = z_{i,a}^k W[i, c]`` (Eq. 4.2)."""
    m, k, p = U.shape
    A = input_grid(p, k)
    y = A.sum(axis=1) % p
    Z = U[:, np.arange(k)[None, :], A].sum(axis=2) ** k  # (m, n)
    wy = W[:, y]  # (m, n)
    return Z[:, :, None] * (wy[:, :, None] - W[:, None, :])
