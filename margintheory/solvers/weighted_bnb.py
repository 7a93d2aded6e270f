"""The class-weighted single-neuron problem at scale: ``w`` eliminated, the rest a small branch and bound with
rigorous eigenvalue bounds (docs/theory.md#class-weighted-scale).

For fixed input embeddings ``u = (u_1, ..., u_k)`` the objective ``F(u, w) = sum_x z_x^k (G w)_x``
(``z_x = u_1[a_1] + ... + u_k[a_k]``, ``G`` the signed matrix of ``lam = q tau``) is linear in ``w``:
``F = <w, M(u)>``, ``M(u) = G^T z^k``.  On the sphere ``|u|^2 + |w|^2 = 1`` the best ``w`` is ``M/|M|`` and the
best split ``|u|^2 = k/(k+1)``, so

    ``Psi(q, tau) = c_k f*,   f* = max_{|u| = 1} |M(u)| = max_{|v| = 1} max_{|u| = 1} <v, M(u)>,
    c_k = (k/(k+1))^(k/2) (k+1)^(-1/2)``.

``v`` lives in the zero-sum vectors on the labels ``C`` that ``G`` uses (``M`` sums to zero), written exactly as
``v = W eta`` with ``W = [I; -1^T]`` (integers; the norm ``|W eta|^2 = eta^T (I + J) eta``).

* ``k = 2``: ``max_u <v, M(u)> = lambda_max(Q(v))``, ``Q(v) = E^T diag(G v) E`` (``E`` the 0/1 embedding,
  ``kp x kp``): ``f* = max_eta lambda_max(Q(W eta))``, a convex, positively homogeneous function of ``eta`` in
  ``d = |C| - 1`` dimensions.
* ``k = 3``: ``<v, M(u)> = T_v(u, u, u)`` for a symmetric trilinear form, and by Banach's theorem its maximum on
  the sphere is ``max_{|a| = 1} lambda_max(Q(v, a))``, ``Q(v, a) = E^T diag((G v) (E a)) E``; ``a`` matters only
  through ``E_X a`` (``X`` the inputs ``G`` uses), so ``a = E_X^T beta`` exactly, ``|a|^2 = beta^T K beta`` with
  the integer matrix ``K = E_X E_X^T``.  ``lambda_max(Q)`` is convex and homogeneous in each of ``eta``, ``beta``
  separately -- worthwhile when ``|X|`` is small (peaked ``q``).

**Branch and bound** over products of simplicial cones (each factor: ``R^d`` split into its ``2^d`` orthants, cells
bisected at their longest edge, measured by the angle in the factor's norm).  For a cell with vertices ``v_i`` and
any ``c`` of norm ``<= 1`` with ``<v_i, c> > 0``, every unit point of the cone is ``s v'`` with ``v'`` in the
polytope ``conv(v_i / <v_i, c>)`` and ``s = 1/|v'| <= 1`` (``<v', c> = 1 <= |v'| |c|``), so homogeneity and
convexity give

    ``max_cell f <= max_i max(0, f(v_i)) / <v_i, c>``        (products: over vertex pairs, each factor's ``<., c>``)

-- a second-order bound (its excess is ``O(angle^2)``).  ``f(v_i)`` is bounded above rigorously: Weyl's
inequality for the float64 rounding of ``Q`` (a-priori bound ``gamma_n E^T |y| E``) and, for the computed
eigen-decomposition ``Q V = V Lambda + R``, Bauer--Fike: every eigenvalue is within ``|R|_F / sigma_min(V)`` of a
computed one, ``sigma_min(V)^2 >= 1 - |V^T V - I|_F`` (each with its own rounding bound).  Cells whose bound is at
most ``L (1 + rtol)`` are closed; ``U`` is the largest bound of a closed or remaining cell, plus the leak of the
zero-sum restriction (``|Q(1/sqrt|C|)|``, rounding-sized) and the float64 rounding of ``q tau``
(:func:`margintheory.solvers.class_weighted.weights_rounding_bound`).  ``L`` is the objective of an explicit unit
neuron (the top eigenvector at the best vertex, polished by local ascent) evaluated on the arrays as given.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from margintheory.engines.margins import input_grid
from margintheory.errors import InputError

EPS = float(np.finfo(float).eps)
#: stop refining cells when the bracket's relative width (in f) is below this
DEFAULT_RTOL = 2e-7


@dataclass(frozen=True)
class Reduction:
    """The data of the eliminated problem: the inputs ``X`` and labels ``C`` the weights use, ``G`` restricted to
    them, the 0/1 embedding rows ``E_X`` (``|X| x kp``) and ``K = E_X E_X^T`` (integers)."""

    p: int
    k: int
    inputs: np.ndarray  # X (indices into the input grid)
    labels: np.ndarray  # C
    G: np.ndarray  # (|X|, |C|)
    E: np.ndarray  # (|X|, k p), 0/1
    K: np.ndarray  # (|X|, |X|), integers

    @property
    def d_v(self) -> int:
        return len(self.labels) - 1

    @property
    def factors(self) -> list[int]:
        """Dimensions of the branch-and-bound factors: ``[d_v]`` for ``k = 2``, ``[d_v, |X|]`` for ``k = 3``."""
        return [self.d_v] if self.k == 2 else [self.d_v, len(self.inputs)]


def reduce_weights(G_full: np.ndarray, p: int, k: int) -> Reduction:
    """:class:`Reduction` of the signed matrix ``G_full`` (``(p^k, p)``): the rows and columns that are not zero."""
    if k not in (2, 3):
        raise InputError(f"the eliminated branch and bound covers k = 2 and k = 3, not k = {k}")
    rows = np.flatnonzero(np.any(G_full != 0, axis=1))
    cols = np.flatnonzero(np.any(G_full[rows] != 0, axis=0))
    if len(rows) == 0 or len(cols) < 2:
        raise InputError("the weights put no mass on any (input, wrong label) pair")
    a = input_grid(p, k)[rows]
    E = np.zeros((len(rows), k * p))
    for i in range(k):
        E[np.arange(len(rows)), i * p + a[:, i]] = 1.0
    return Reduction(p, k, rows, cols, G_full[np.ix_(rows, cols)], E, E @ E.T)


def c_k(k: int) -> float:
    """``(k/(k+1))^(k/2) (k+1)^(-1/2)``, rounded up (a few ulps)."""
    return (k / (k + 1)) ** (k / 2) / math.sqrt(k + 1) * (1 + 8 * EPS)


def _W(eta: np.ndarray) -> np.ndarray:
    """``W eta = (eta, -sum eta)`` for a batch ``(n, d)``."""
    return np.concatenate([eta, -eta.sum(axis=1, keepdims=True)], axis=1)


def _norm2(red: Reduction, factor: int, x: np.ndarray) -> np.ndarray:
    """The factor's squared norm of each row of ``x``: ``|W eta|^2`` or ``beta^T K beta``."""
    if factor == 0:
        return np.einsum("ni,ni->n", x, x) + x.sum(axis=1) ** 2
    return np.einsum("ni,ij,nj->n", x, red.K, x)


def _inner(red: Reduction, factor: int, x: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The factor's inner product of rows of ``x`` (``(n, m, d)``) with ``c`` (``(n, d)``)."""
    if factor == 0:
        return np.einsum("nmi,ni->nm", x, c) + x.sum(axis=2) * c.sum(axis=1)[:, None]
    return np.einsum("nmi,ij,nj->nm", x, red.K, c)


def _gamma(n: int) -> float:
    """``n eps / (1 - n eps)``: the standard bound on the relative rounding of ``n`` float64 operations."""
    return n * EPS / (1 - n * EPS)


def _weights_y(red: Reduction, eta: np.ndarray, beta: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``y_x = (G W eta)_x`` (times ``(K beta)_x`` for ``k = 3``) for a batch, and ``|G| |W| |eta|`` (times
    ``|K| |beta|``): the scale of ``y``'s rounding."""
    h = _W(eta) @ red.G.T
    habs = np.concatenate([np.abs(eta), np.abs(eta).sum(axis=1, keepdims=True)], axis=1) @ np.abs(red.G).T
    if beta is None:
        return h, habs
    return h * (beta @ red.K), habs * (np.abs(beta) @ red.K)


def lambda_max_upper(red: Reduction, eta: np.ndarray, beta: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous upper bounds on ``lambda_max(Q)`` for a batch of points (module docstring: Weyl for the rounding of
    ``Q``, Bauer--Fike for the computed eigen-decomposition) and the top computed eigenvectors ``(n, kp)``."""
    y, yabs = _weights_y(red, eta, beta)
    n_x, n = red.E.shape
    Q = np.einsum("xi,bx,xj->bij", red.E, y, red.E)
    Qerr = _gamma(len(red.labels) + 2 * n_x + len(red.K) + 8) * np.einsum("xi,bx,xj->bij", red.E, yabs, red.E)
    lam, V = np.linalg.eigh(Q)
    R = Q @ V - V * lam[:, None, :]
    absV = np.abs(V)
    r_round = _gamma(n + 2) * (np.linalg.norm(np.abs(Q) @ absV, axis=(1, 2))
                               + np.linalg.norm(absV * np.abs(lam)[:, None, :], axis=(1, 2)))
    rnorm = np.linalg.norm(R, axis=(1, 2)) * (1 + _gamma(n * n + 2)) + r_round
    O = np.swapaxes(V, 1, 2) @ V - np.eye(n)
    orth = (np.linalg.norm(O, axis=(1, 2)) * (1 + _gamma(n * n + 2))
            + _gamma(n + 2) * np.linalg.norm(np.swapaxes(absV, 1, 2) @ absV, axis=(1, 2)))
    weyl = np.linalg.norm(Qerr, axis=(1, 2)) * (1 + _gamma(n * n + 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(orth < 0.5, lam[:, -1] + rnorm / np.sqrt(1 - orth) + weyl, np.inf)
    return bound * (1 + 4 * EPS) + 4 * EPS * np.abs(bound), V[:, :, -1]


def zero_sum_leak(red: Reduction) -> float:
    """A bound on ``f*(all unit v on C) - f*(zero-sum unit v)``: ``max_a |Q(1/sqrt|C|, a)|_F`` with ``|a| <= 1``
    (``|(E a)_x| <= sqrt(k)``), from the rows of ``G`` summing to zero only up to rounding."""
    rows = np.abs(red.G.sum(axis=1)) + _gamma(len(red.labels) + 2) * np.abs(red.G).sum(axis=1)
    scale = math.sqrt(red.k) ** (red.k - 2)
    gram = np.linalg.norm(red.E.T @ red.E)
    return float(rows.max() / math.sqrt(len(red.labels)) * scale * gram * (1 + _gamma(len(red.G) + 8)))


@dataclass
class _Factor:
    """The vertices of one factor's cones (normalized in the factor's norm) and the midpoints made so far."""

    dim: int
    points: np.ndarray
    count: int = 0
    mids: dict[tuple[int, int], int] = field(default_factory=dict)

    def add(self, x: np.ndarray) -> int:
        if self.count == len(self.points):
            self.points = np.concatenate([self.points, np.empty_like(self.points)])
        self.points[self.count] = x
        self.count += 1
        return self.count - 1


def _orthant_cells(dims: list[int]) -> tuple[list[_Factor], np.ndarray]:
    """Each factor's ``2 d`` vertices ``+-e_i`` and the ``prod 2^d`` products of orthant cones (vertex indices)."""
    import itertools

    factors, per = [], []
    for d in dims:
        f = _Factor(d, np.empty((max(64, 4 * d), d)))
        for i in range(d):
            for s in (1.0, -1.0):
                e = np.zeros(d)
                e[i] = s
                f.add(e)
        factors.append(f)
        per.append([[2 * i + (1 if s < 0 else 0) for i, s in enumerate(signs)]
                    for signs in itertools.product((1, -1), repeat=d)])
    cells = [sum(combo, []) for combo in itertools.product(*per)]
    return factors, np.array(cells, dtype=np.int64)


@dataclass
class BranchAndBound:
    """The outcome of :func:`branch_and_bound`: ``upper`` bounds ``f*`` rigorously (before the leak and ``c_k``)."""

    upper: float
    best_vertex: tuple[np.ndarray, ...]
    best_value: float
    cells_closed: int
    cells_open: int
    levels: int
    vertex_evaluations: int
    peak_cells: int
    seconds: float
    stopped: str
    details: dict[str, Any] = field(default_factory=dict)


class _Values:
    """Upper bounds of ``f`` at vertex tuples (one vertex per factor), computed in batches and cached; also the
    top eigenvector at the best one."""

    def __init__(self, red: Reduction, factors: list[_Factor]) -> None:
        self.red, self.factors = red, factors
        self.cache: dict[tuple[int, ...], float] = {}
        self.evaluations, self.best = 0, -math.inf
        self.best_key: tuple[int, ...] | None = None

    def table(self, cells: np.ndarray) -> np.ndarray:
        """``(n, d_0)`` or ``(n, d_0, d_1)`` values of every cell's vertex tuples."""
        d0 = self.factors[0].dim
        if len(self.factors) == 1:
            keys = cells[:, :d0, None]
        else:
            keys = np.stack(np.broadcast_arrays(cells[:, :d0, None], cells[:, None, d0:]), axis=-1)
        flat = keys.reshape(-1, keys.shape[-1])
        uniq = np.unique(flat, axis=0)
        missing = [tuple(int(i) for i in row) for row in uniq if tuple(int(i) for i in row) not in self.cache]
        for start in range(0, len(missing), BATCH):
            self._evaluate(missing[start:start + BATCH])
        vals = np.array([self.cache[tuple(int(i) for i in row)] for row in flat])
        return vals.reshape(keys.shape[:-1]) if len(self.factors) == 2 else vals.reshape(len(cells), d0)

    def _evaluate(self, keys: list[tuple[int, ...]]) -> None:
        idx = np.array(keys)
        eta = self.factors[0].points[idx[:, 0]]
        beta = self.factors[1].points[idx[:, 1]] if len(self.factors) == 2 else None
        ub, _ = lambda_max_upper(self.red, eta, beta)
        self.evaluations += len(keys)
        for key, value in zip(keys, ub, strict=True):
            self.cache[key] = float(value)
        top = int(np.argmax(ub))
        if ub[top] > self.best:
            self.best, self.best_key = float(ub[top]), keys[top]


def _bounds(red: Reduction, factors: list[_Factor], cells: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """The bound of the module docstring for every cell (``inf`` when a vertex is not on the centre's side)."""
    out = np.maximum(vals, 0.0)
    outside = np.zeros(len(cells), dtype=bool)
    start = 0
    for f, fac in enumerate(factors):
        V = fac.points[cells[:, start:start + fac.dim]]  # (n, d, d)
        c = V.sum(axis=1)
        c = c / (np.sqrt(_norm2(red, f, c)) * (1 + _gamma(4 * fac.dim + 8)))[:, None]
        den = _inner(red, f, V, c) * (1 - _gamma(4 * fac.dim + 8))
        outside |= np.any(~(den > 0), axis=1)
        inv = (1 + 2 * EPS) / np.where(den > 0, den, 1.0)
        out = out * (inv if f == 0 and len(factors) == 1 else inv[:, :, None] if f == 0 else inv[:, None, :])
        start += fac.dim
    bound = out.reshape(len(cells), -1).max(axis=1) * (1 + 4 * EPS)
    return np.where(outside | ~np.isfinite(bound), np.inf, bound)


def _split(red: Reduction, factors: list[_Factor], cells: np.ndarray) -> np.ndarray:
    """Bisect every cell at its longest edge (the largest angle in its factor's norm): two children each."""
    best_cos, where = np.full(len(cells), np.inf), np.zeros((len(cells), 3), dtype=np.int64)
    start = 0
    for f, fac in enumerate(factors):
        V = fac.points[cells[:, start:start + fac.dim]]
        if fac.dim > 1:
            G = np.einsum("nid,njd->nij", V, V) if f == 0 else np.einsum("nid,de,nje->nij", V, red.K, V)
            if f == 0:
                G = G + np.einsum("ni,nj->nij", V.sum(axis=2), V.sum(axis=2))
            nrm = np.sqrt(np.einsum("nii->ni", G))
            cos = G / (nrm[:, :, None] * nrm[:, None, :])
            cos[:, np.arange(fac.dim), np.arange(fac.dim)] = np.inf
            flat = cos.reshape(len(cells), -1)
            arg = flat.argmin(axis=1)
            better = flat[np.arange(len(cells)), arg] < best_cos
            best_cos = np.where(better, flat[np.arange(len(cells)), arg], best_cos)
            where[better] = np.stack([np.full(better.sum(), f), start + arg[better] // fac.dim,
                                      start + arg[better] % fac.dim], axis=1)
        start += fac.dim
    offsets = np.cumsum([0] + [fac.dim for fac in factors])
    children = np.repeat(cells, 2, axis=0)
    for n, (f, i, j) in enumerate(where):
        fac = factors[f]
        a, b = int(cells[n, i]), int(cells[n, j])
        key = (min(a, b), max(a, b))
        m = fac.mids.get(key)
        if m is None:
            x = fac.points[a] + fac.points[b]
            x = x / math.sqrt(float(_norm2(red, int(f), x[None, :])[0]))
            m = fac.mids[key] = fac.add(x)
        children[2 * n, i] = m
        children[2 * n + 1, j] = m
    assert offsets[-1] == cells.shape[1]
    return children


def branch_and_bound(red: Reduction, estimate: float, *, rtol: float = DEFAULT_RTOL, time_limit: float | None = None,
                     max_cells: int = 60_000, fixed_target: bool = False) -> BranchAndBound:
    """Refine until every cell's bound is at most ``(1 + rtol)`` times the best value known (``estimate``, raised
    by the vertex values on the way unless ``fixed_target``; it only decides when to stop), the time limit passes or
    ``max_cells`` cells are open.  ``upper`` is the largest bound of a closed or open cell: valid whatever the
    target was."""
    t0 = time.perf_counter()
    factors, cells = _orthant_cells(red.factors)
    for f, fac in enumerate(factors):
        pts = fac.points[:fac.count]
        fac.points[:fac.count] = pts / np.sqrt(_norm2(red, f, pts))[:, None]
    values = _Values(red, factors)
    upper_closed, closed, levels, peak, stopped = 0.0, 0, 0, len(cells), "converged"
    bounds = np.empty(0)
    while len(cells):
        levels += 1
        bounds = _bounds(red, factors, cells, values.table(cells))
        target = (estimate if fixed_target else max(estimate, values.best)) * (1 + rtol)
        done = bounds <= target
        if np.any(done):
            upper_closed = max(upper_closed, float(bounds[done].max()))
        closed += int(done.sum())
        cells, bounds = cells[~done], bounds[~done]
        if not len(cells):
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            stopped = "time-limit"
            break
        if 2 * len(cells) > max_cells:
            stopped = "cell-limit"
            break
        cells = _split(red, factors, cells)
        peak = max(peak, len(cells))
    upper = max(upper_closed, float(bounds.max()) if len(cells) else 0.0)
    key = values.best_key or tuple(0 for _ in factors)
    best = tuple(factors[f].points[key[f]].copy() for f in range(len(factors)))
    return BranchAndBound(upper, best, values.best, closed, len(cells), levels, values.evaluations, peak,
                          time.perf_counter() - t0, stopped)


#: the branch and bound starts from prod_f 2^(d_f) orthant cells: beyond this many dimensions it is not used
MAX_DIMENSIONS = 8
#: batch of vertex evaluations (memory: about 12 arrays of kp x kp floats per point)
BATCH = 1024


def applies(red: Reduction) -> bool:
    """Whether the branch and bound is used: ``k = 2`` or ``3`` and at most :data:`MAX_DIMENSIONS` in all."""
    return red.k in (2, 3) and sum(red.factors) <= MAX_DIMENSIONS


def eliminated_value(red: Reduction, u: np.ndarray) -> tuple[float, np.ndarray]:
    """``|M(u)| / |u|^k`` and its gradient in ``u`` (``kp``), ``M(u) = G_X^T (E_X u)^k``."""
    z = red.E @ u
    M = red.G.T @ z**red.k
    nm, nu = float(np.linalg.norm(M)), float(np.linalg.norm(u))
    if nm == 0 or nu == 0:
        return 0.0, np.zeros_like(u)
    grad_m = red.k * (red.E.T @ (z ** (red.k - 1) * (red.G @ M))) / nm
    value = nm / nu**red.k
    return value, grad_m / nu**red.k - red.k * value * u / nu**2


def local_ascent(red: Reduction, starts: list[np.ndarray]) -> tuple[float, np.ndarray]:
    """The best of BFGS runs on ``-|M(u)| / |u|^k`` from ``starts``: ``(value, unit u)``."""
    from scipy.optimize import minimize

    best, best_u = -math.inf, starts[0]
    for u0 in starts:
        res = minimize(lambda u: tuple(-x for x in eliminated_value(red, u)), u0, jac=True, method="BFGS",
                       options={"gtol": 1e-13, "maxiter": 2000})
        value = eliminated_value(red, res.x)[0]
        if value > best:
            best, best_u = value, res.x / np.linalg.norm(res.x)
    return best, best_u


def vertex_starts(red: Reduction, vertex: tuple[np.ndarray, ...]) -> list[np.ndarray]:
    """Starting points from the branch and bound's best vertex: the top eigenvector of ``Q`` there (and, for
    ``k = 3``, the direction ``a = E_X^T beta``)."""
    beta = vertex[1][None, :] if len(vertex) == 2 else None
    _, vec = lambda_max_upper(red, vertex[0][None, :], beta)
    starts = [vec[0]]
    if beta is not None:
        starts.append(red.E.T @ vertex[1])
    return starts


def unit_neuron(red: Reduction, u: np.ndarray) -> np.ndarray:
    """The unit neuron ``(rho u, sqrt(1 - rho^2) M/|M|)`` with ``rho^2 = k/(k+1)``, shape ``(k+1, p)``."""
    k, p = red.k, red.p
    u = u / np.linalg.norm(u)
    M = red.G.T @ (red.E @ u) ** k
    w = np.zeros(p)
    w[red.labels] = M / np.linalg.norm(M)
    rho = math.sqrt(k / (k + 1))
    return np.concatenate([rho * u, math.sqrt(1 - rho * rho) * w]).reshape(k + 1, p)


@dataclass
class Eliminated:
    """``f*`` bracketed: ``upper`` (rigorous: branch and bound plus the zero-sum leak) and the unit neuron of the
    best ``u`` found (``theta``, shape ``(k+1, p)``; its objective on the arrays is the caller's lower end)."""

    upper: float
    lower_estimate: float
    theta: np.ndarray
    bnb: BranchAndBound
    leak: float
    reduction: Reduction
    seconds: float

    def summary(self) -> dict[str, Any]:
        b, r = self.bnb, self.reduction
        return {"inputs_used": len(r.inputs), "labels_used": len(r.labels), "dimensions": r.factors,
                "f_upper": self.upper, "f_lower_estimate": self.lower_estimate, "zero_sum_leak": self.leak,
                "cells_closed": b.cells_closed, "cells_open": b.cells_open, "peak_cells": b.peak_cells,
                "levels": b.levels, "vertex_evaluations": b.vertex_evaluations, "stopped": b.stopped,
                "bnb_seconds": b.seconds}


def solve_eliminated(G_full: np.ndarray, p: int, k: int, *, rtol: float = DEFAULT_RTOL, n_starts: int = 8,
                     seed: int | None = 0, time_limit: float | None = None, max_cells: int = 60_000) -> Eliminated:
    """Bracket ``f* = max_{|u| = 1} |G^T (E u)^k|`` for the signed matrix ``G_full`` (``(p^k, p)``): local ascent
    from ``n_starts`` random points, the branch and bound to relative width ``rtol`` (its target follows the best
    value found), then local ascent from its best vertex (module docstring)."""
    t0 = time.perf_counter()
    red = reduce_weights(G_full, p, k)
    if not applies(red):
        raise InputError(f"the eliminated branch and bound needs k in (2, 3) and at most {MAX_DIMENSIONS} dimensions; "
                         f"these weights give {red.factors} (k = {k})")
    rng = np.random.default_rng(seed)
    estimate, u = local_ascent(red, [rng.standard_normal(k * p) for _ in range(max(1, n_starts))])
    left = None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - t0))
    bnb = branch_and_bound(red, estimate, rtol=rtol, time_limit=left, max_cells=max_cells)
    polished, u2 = local_ascent(red, vertex_starts(red, bnb.best_vertex))
    if polished > estimate:
        estimate, u = polished, u2
    leak = zero_sum_leak(red)
    return Eliminated((bnb.upper + leak) * (1 + 2 * EPS), estimate, unit_neuron(red, u), bnb, leak, red,
                      time.perf_counter() - t0)


def estimate_bytes(p: int, k: int, n_inputs: int, n_labels: int, max_cells: int = 60_000) -> float:
    """Peak memory of :func:`solve_eliminated` before anything is allocated, at its cell limit (the branch and bound
    never holds more): the ``(p^k, p)`` arrays of the weights (a few copies), one batch of :data:`BATCH`
    eigen-decompositions (about 12 arrays of ``kp x kp``), and per open cell its vertex indices (the cell, its two
    children, the sorted keys), its values (``d_0 d_1``, a few copies), the split's Gram and cosine matrices
    (``3 d_max^2``) and the vertex cache (about 200 bytes per evaluated tuple, about one per cell)."""
    n = k * p
    dims = [n_labels - 1] if k == 2 else [n_labels - 1, n_inputs]
    d, pairs = sum(dims), math.prod(dims)
    arrays = 8.0 * p**k * p * 6 + 8.0 * n_inputs * (n + n_labels + n_inputs) * 4
    batch = 12.0 * 8 * n * n * BATCH + 8.0 * BATCH * n_inputs * 4
    per_cell = 8.0 * d * 4 + 8.0 * pairs * 4 + 8.0 * max(dims) ** 2 * 3 + 200.0
    return arrays + batch + max_cells * per_cell


def recheck_upper(red: Reduction, claimed: float, *, time_limit: float | None = None,
                  max_cells: int = 60_000) -> bool:
    """Re-check a claimed ``f* <= claimed`` from scratch: the branch and bound with the target fixed at ``claimed``
    must close every cell (each cell's rigorous bound at most ``claimed``).  A claim below ``f*`` never closes the
    cells around the maximiser, so it is rejected (at the cell or time limit)."""
    if not claimed > 0:
        return False
    b = branch_and_bound(red, claimed, rtol=0.0, time_limit=time_limit, max_cells=max_cells, fixed_target=True)
    return b.stopped == "converged" and b.upper <= claimed
