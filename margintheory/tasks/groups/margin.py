"""Max margin of group composition ``(a, b) -> ab`` (Morwani et al. Thm 7.9, App. D.9).

The network is the core quadratic :class:`~margintheory.core.network.PolyNetwork` with ``k = 2`` and ``p = |G|``;
only the labels change (``a*b`` instead of ``a+b``).

* condition: ``sum_{R != 1} d_R^1.5 chi_R(C) < 0`` for every non-trivial class ``C`` (Lemma D.14);
* closed form: ``gamma* = 2 / (3 sqrt(3|G|) sum_{R != 1} d_R^2.5)`` (Thm 7.9);
* construction (Lemma D.15): per irrep ``R`` and ``i, j, k``, the neuron pair ``(u, v, w) = (R_ij, R_jk,
  R_ik)`` and ``(R_ij, -R_jk, -R_ik)`` outputs ``4 R(a)_ij R(b)_jk R(c)_ik``, so the ``2 d_R^3`` neurons
  output ``4 tr(R(a) R(b) R(c)^T) = 4 chi_R(a b c^-1)``;
* the class LP: with per-block weights ``mu_R`` (``sum mu_R = 1`` = unit ``L_{2,3}`` norm) the margin at wrong
  class ``c`` is ``sum_R mu_R kappa_R (d_R - chi_R(C))``, ``C`` the class of ``(ab)^-1 c``; its LP dual is
  ``min_pi max_R kappa_R sum_C pi_C (d_R - chi_R(C))`` which is Lemma D.13's upper bound (weak duality) for
  class-constant weights ``tau_c = pi_C / |C|`` (optimal by the task's symmetry), with ``kappa_R = 2 d_R^-1.5
  / (3 sqrt 3 |G|^1.5)``.  Primal value = dual value certifies ``gamma*`` (up to the LP tolerance) for every
  group whose irreps are all of real type, whether or not the condition holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from margintheory.core.groups import FiniteGroup
from margintheory.core.network import PolyNetwork
from margintheory.core.representations import Irrep
from margintheory.errors import SolverError

LP_TOL = 1e-9


def condition_values(X: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """``sum_{R != 1} d_R^1.5 chi_R(C)`` for every non-trivial class ``C`` (columns 1..K-1 of ``X``)."""
    return (dims[1:] ** 1.5) @ X[1:, 1:]


def kappa(order: int, d: int) -> float:
    """Logit of a unit-``L_{2,3}``-norm irrep block per unit of ``chi_R(abc^-1)``: ``2 d^-1.5 (3|G|)^-1.5``.

    Derived from Lemma D.13's optimum ``tr(alpha beta gamma^T) = (d / 3|G|)^1.5`` times the cross-term factor
    2 of ``(u(a) + v(b))^2``; :func:`irrep_block` is checked against it numerically.
    """
    return 2.0 * d**-1.5 * (3.0 * order) ** -1.5


def irrep_block(R: Irrep, irrep_index: int) -> PolyNetwork:
    """Lemma D.15's ``2 d^3`` neurons for ``R``, each of unit Euclidean norm (so the block has norm^3 = 2
    d^3)."""
    M = R.mats  # (|G|, d, d)
    order, d = M.shape[0], R.dim
    i, j, k = (a.reshape(-1) for a in np.meshgrid(np.arange(d), np.arange(d), np.arange(d), indexing="ij"))
    u, v, w = M[:, i, j].T, M[:, j, k].T, M[:, i, k].T  # (d^3, |G|) each, squared norm |G|/d
    scale = math.sqrt(d / (3.0 * order))
    U = np.concatenate([np.stack([u, v], 1), np.stack([u, -v], 1)]) * scale
    W = np.concatenate([w, -w]) * scale
    meta = {"irrep": np.full(2 * d**3, irrep_index), "sign": np.repeat([1, -1], d**3)}
    return PolyNetwork(U, W, meta)


def mixture_network(irreps: list[Irrep], mu: np.ndarray) -> PolyNetwork:
    """Blocks with ``L_{2,3}`` mass ``mu_R`` (``sum mu = 1``): every neuron of block ``R`` scaled by ``(mu_R /
    (2 d_R^3))^(1/3)``; blocks with ``mu_R = 0`` and the trivial irrep are left out."""
    parts = []
    for r, R in enumerate(irreps):
        if r == 0 or mu[r] <= 0:
            continue
        parts.append(irrep_block(R, r).scaled((mu[r] / (2 * R.dim**3)) ** (1.0 / 3.0)))
    return PolyNetwork.concatenate(parts)


def theorem79_weights(dims: np.ndarray) -> np.ndarray:
    """Lemma D.16's scaling (neurons of ``R`` scaled by ``d_R^(1/3)``) as block masses: ``mu_R ∝ d_R^2.5``."""
    mu = np.where(np.arange(len(dims)) == 0, 0.0, dims**2.5)
    return mu / mu.sum()


def class_margins(mu: np.ndarray, X: np.ndarray, order: int, dims: np.ndarray) -> np.ndarray:
    """Margin of the block mixture against each non-trivial class: ``sum_R mu_R kappa_R (d_R - chi_R(C))``."""
    kap = np.array([kappa(order, int(d)) for d in dims])
    return (mu * kap) @ (dims[:, None] - X[:, 1:])


@dataclass
class ClassLP:
    """Primal (block masses) and dual (class weights) LP solutions and their values."""

    mu: np.ndarray
    primal: float
    pi: np.ndarray
    dual: float
    status: str

    @property
    def gap(self) -> float:
        return self.dual - self.primal


def solve_class_lp(X: np.ndarray, order: int, dims: np.ndarray) -> ClassLP:
    """Solve both LPs of the module docstring with HiGHS; raise :class:`SolverError` unless both are optimal."""
    K = len(dims)
    kap = np.array([kappa(order, int(d)) for d in dims])
    A = kap[1:, None] * (dims[1:, None] - X[1:, 1:])  # (irreps R != 1) x (classes C != e)
    nR, nC = A.shape
    # primal: max t  s.t.  t - sum_R mu_R A[R, C] <= 0,  sum mu = 1, mu >= 0
    c = np.zeros(nR + 1)
    c[-1] = -1.0
    res = linprog(
        c,
        A_ub=np.hstack([-A.T, np.ones((nC, 1))]),
        b_ub=np.zeros(nC),
        A_eq=np.hstack([np.ones((1, nR)), np.zeros((1, 1))]),
        b_eq=[1.0],
        bounds=[(0, None)] * nR + [(None, None)],
        method="highs",
    )
    # dual: min s  s.t.  sum_C pi_C A[R, C] - s <= 0,  sum pi = 1, pi >= 0
    c2 = np.zeros(nC + 1)
    c2[-1] = 1.0
    res2 = linprog(
        c2,
        A_ub=np.hstack([A, -np.ones((nR, 1))]),
        b_ub=np.zeros(nR),
        A_eq=np.hstack([np.ones((1, nC)), np.zeros((1, 1))]),
        b_eq=[1.0],
        bounds=[(0, None)] * nC + [(None, None)],
        method="highs",
    )
    for r, name in ((res, "primal"), (res2, "dual")):
        if r.status != 0:
            raise SolverError(f"class LP ({name}) not solved: HiGHS status {r.status}: {r.message}")
    mu = np.zeros(K)
    mu[1:] = np.clip(res.x[:nR], 0.0, None)
    mu /= mu.sum()
    pi = np.clip(res2.x[:nC], 0.0, None)
    return ClassLP(mu, float(-res.fun), pi, float(res2.fun), "optimal")


def lemma_d14_weights(X: np.ndarray, sizes: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """Lemma D.14's class masses ``pi_C = |C| tau_C`` with ``tau_C = -sum_{R != 1} z_R chi_R(C)``,
    ``z_R = d_R^1.5 / sum d^2.5``.  The statement writes ``tau_C = +sum z_R chi_R(C)``; its proof's vector
    ``tau = [1, -tau_C2, ...]`` carries the minus, and only with it do the masses sum to 1 (checked)."""
    z = np.where(np.arange(len(dims)) == 0, 0.0, dims**1.5) / np.sum(dims[1:] ** 2.5)
    return -(z @ X)[1:] * sizes[1:]


def dual_values(pi: np.ndarray, X: np.ndarray, order: int, dims: np.ndarray) -> np.ndarray:
    """Per non-trivial irrep, the best unit neuron's class-weighted margin under class masses ``pi`` (D.13)."""
    kap = np.array([kappa(order, int(d)) for d in dims])
    return kap[1:] * ((dims[1:, None] - X[1:, 1:]) @ pi)


def tight_irreps(lp: ClassLP, X: np.ndarray, order: int, dims: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """Irreps whose single-neuron value under the optimal dual weights equals the dual value: by Lemma 7.6 the
    only irreps any max-margin network can use (indices into the irrep list)."""
    vals = dual_values(lp.pi, X, order, dims)
    return 1 + np.flatnonzero(vals >= lp.dual * (1 - rtol))


def irrep_power_fractions(net: PolyNetwork, B: np.ndarray, owner: np.ndarray, dims: np.ndarray) -> np.ndarray:
    """Per neuron and irrep, the fraction of ``||u||^2 + ||v||^2 + ||w||^2`` carried by that irrep's basis
    vectors.

    Coefficients ``alpha = (d_R/|G|) B^T u`` (Lemma D.10 orthogonality); power ``(|G|/d_R) alpha^2`` (Lemma
    D.12).
    """
    order = B.shape[0]
    colscale = dims[owner] / order  # (|G|,)
    power = np.zeros((net.m, len(dims)))
    for vec in (net.U[:, 0, :], net.U[:, 1, :], net.W):
        coef = (vec @ B) * colscale
        pw = coef**2 * (order / dims[owner])
        np.add.at(power.T, owner, pw.T)
    tot = power.sum(axis=1, keepdims=True)
    return np.divide(power, tot, out=np.zeros_like(power), where=tot > 0)


def block_identity_error(G: FiniteGroup, R: Irrep, net: PolyNetwork, triples: np.ndarray) -> float:
    """``max |f(a,b)[c] - 2 d^3 kappa_R chi_R(a b c^-1)|`` over the given ``(a, b, c)`` rows, relative."""
    a, b, c = triples.T
    Z = net.U[:, 0, a] + net.U[:, 1, b]  # (m, n)
    vals = np.einsum("mn,mn->n", Z**2, net.W[:, c])
    inv = G.inverses()
    x = G.mul[G.mul[a, b], inv[c]]
    target = 2 * R.dim**3 * kappa(G.order, R.dim) * R.character()[x]
    return float(np.abs(vals - target).max() / (2 * R.dim**3 * kappa(G.order, R.dim) * R.dim))
