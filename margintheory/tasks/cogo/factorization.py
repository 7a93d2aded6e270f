"""Which of CoGO's constructions a (trained) network is made of, frequency by frequency (Tian, arXiv:2410.01779,
Sec. 7, Table 2 and App. H).

For every frequency ``k = 1 .. (d-1)/2`` of the network's weights ``z[p, k, j]`` (:func:`~.algebra.from_network`):

1. **salient nodes**: the hidden nodes whose input weights at ``k``, ``(|z[a,k,j]|^2 + |z[b,k,j]|^2)^(1/2)``, reach
   ``threshold`` times the largest at ``k`` (App. H thresholds with "a universal threshold, e.g. 0.05" on weights
   of its own scale; relative to the largest node, 0.2 separates the nodes of a trained network -- 0.6 to 1 --
   from the rest, below 0.07, in the runs tried here).  The input weights alone decide: the order-6 part of the
   mixed optimizer ``z_F4/6`` (Corollary 5) carries constant biases in its *output*
   weights at the other frequencies.  Their number is the per-frequency **order** (Fig. 3, middle; Fig. 4).
2. **factorization** of an order-4 (order-6) solution as a ring product (Def. 5) of order 2 x 2 (2 x 3): the nodes
   arranged in a grid so that each of ``z_a, z_b, z_c`` is a rank-one (Kronecker) matrix, up to the pseudo-1
   ``[-1, -1, 1]`` on any node (it changes no monomial potential); every arrangement and sign pattern is tried.  The
   **factorization error** is the largest relative rank-one residual ``sqrt(sigma_2^2 + ...) / ||M||_F`` over
   ``a, b, c``; below ``factor_tol`` the solution is *factorable*.
3. **matching** each factor with the partial solutions of Sec. 5 through invariants that the ambiguities of a
   factor (a scale per component, the order of its nodes, the pseudo-1, complex conjugation) leave unchanged; with
   ``rho_p = z_p[node 1] / z_p[node 0]`` for an order-2 factor:

   * ``z_nu = u_nu + 1`` (Tbl. 1; nodes ``(1, 1, 1)``, ``(nu, -nu, -conj(nu)^2)``, ``|nu| = 1``):
     ``|rho_a| = 1``, ``rho_a + rho_b = 0``, ``rho_c + conj(rho_a)^2 = 0``; ``z_{nu=i}``: also ``rho_c = 1``;
   * ``z_xi`` (Eq. 9; ``(1, 1, 1)``, ``(xi, -i conj(xi), i)``): ``|rho_a| = |rho_b| = 1``, ``rho_c^2 = -1``,
     ``rho_a rho_b + rho_c = 0``;
   * ``z_syn,alpha beta`` (Eq. 11; ``c = (1, w, conj w)``, ``a = (1, w alpha, conj(w) beta)``, ``b = (1, w
     conj(alpha), conj(w) conj(beta))``, ``w = e^{2 pi i/3}``) for an order-3 factor: ``(c_j / c_0)^3 = 1`` with
     the three ``c_j`` distinct, ``|a_j / a_0| = |b_j / b_0| = 1``, ``a_j b_j / c_j^2 = a_0 b_0 / c_0^2``;
     ``z_syn = rho(u_syn)``: also ``(a_j c_0 / (c_j a_0))^2 = 1`` and the same for ``b``.

   The largest deviation (relative) is the **match error**; below ``match_tol`` (the paper's 10 %) the solution is
   named after Table 2's columns: ``z_nu=i * z_xi`` (order 4, Corollary 4), ``z_nu * z_syn`` (order 6, Corollary
   2), ``z_nu=i * z_syn,ab`` (order 6, Eq. 11); a factorable solution matching none is ``other``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from margintheory.core.network import PolyNetwork
from margintheory.tasks.cogo.algebra import A, B, C, from_network

SALIENT_THRESHOLD = 0.2
FACTOR_TOL = 0.1
MATCH_TOL = 0.1
W3 = np.exp(2j * np.pi / 3)
#: the names of Table 2's columns, in its order, and the two kinds of solution outside them
CONSTRUCTIONS = ("z_nu=i * z_xi", "z_nu=i * z_syn,ab", "z_nu * z_syn", "other")
SPLITS = {4: (2, 2), 6: (2, 3)}


@dataclass(frozen=True)
class FrequencySolution:
    """The solution at one frequency (module docstring)."""

    k: int
    nodes: tuple[int, ...]
    factor_error: float | None = None  # None: not of order 4 or 6
    construction: str | None = None  # None: not factorable (or not of order 4 / 6)
    match_error: float | None = None
    factors: tuple[np.ndarray, ...] = field(default=(), compare=False, repr=False)

    @property
    def order(self) -> int:
        return len(self.nodes)


def salient_nodes(z: np.ndarray, k: int, threshold: float = SALIENT_THRESHOLD) -> np.ndarray:
    """Nodes whose input weights at frequency ``k`` reach ``threshold`` times the largest (module docstring)."""
    strength = np.sqrt(np.abs(z[A, k]) ** 2 + np.abs(z[B, k]) ** 2)
    top = float(strength.max()) if strength.size else 0.0
    return np.flatnonzero(strength >= threshold * top) if top > 0 else np.zeros(0, dtype=int)


@lru_cache(maxsize=4)
def _arrangements(n: int, n1: int) -> tuple[np.ndarray, np.ndarray]:
    """Every placement of ``n`` nodes in an ``n1 x (n / n1)`` grid up to permuting rows and columns, and every
    pseudo-1 sign pattern up to the sign patterns that are themselves rank one (node 0 keeps its sign)."""
    n2 = n // n1
    seen, perms = set(), []
    for perm in itertools.permutations(range(n)):
        grid = np.array(perm).reshape(n1, n2)
        key = tuple(sorted(tuple(sorted(row)) for row in grid.tolist())), tuple(
            sorted(tuple(sorted(col)) for col in grid.T.tolist()))
        if key not in seen:
            seen.add(key)
            perms.append(perm)
    signs = np.array([(1,) + s for s in itertools.product((1, -1), repeat=n - 1)], dtype=float)
    return np.array(perms), signs


def _rank_one_residual(M: np.ndarray) -> np.ndarray:
    """``sqrt(sum_{i >= 2} sigma_i^2) / ||M||_F`` of every matrix in the stack ``M`` (0 for a zero matrix)."""
    sv = np.linalg.svd(M, compute_uv=False)
    total = np.sqrt(np.sum(sv**2, axis=-1))
    return np.sqrt(np.sum(sv[..., 1:] ** 2, axis=-1)) / np.where(total > 0, total, 1.0)


def _rank_one_factors(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x, y`` with ``M ~ x y^T`` (the leading singular pair, split evenly)."""
    u, s, vh = np.linalg.svd(M)
    return np.sqrt(s[0]) * u[:, 0], np.sqrt(s[0]) * vh[0]


def kronecker_factorizations(vals: np.ndarray, n1: int, tol: float = FACTOR_TOL
                             ) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """Ring-product factorizations of one frequency's node values ``vals`` (``(3, n)`` complex: ``a, b, c``) into
    factors of orders ``n1`` and ``n / n1``: ``(error, x (3, n1), y (3, n / n1))`` for every arrangement and sign
    pattern with error ``<= tol``, best first (a solution with special values has several exact ones: the factors of
    ``z_syn * z_{nu=1}`` can be regrouped), or the best one alone when none is within ``tol``."""
    n = vals.shape[1]
    n2 = n // n1
    perms, signs = _arrangements(n, n1)
    res_c = _rank_one_residual(vals[C][perms].reshape(-1, n1, n2))  # the pseudo-1 leaves z_c unchanged
    keep = perms[res_c <= max(float(res_c.min()) * (1 + 1e-9) + 1e-12, tol)]
    res_c = _rank_one_residual(vals[C][keep].reshape(-1, n1, n2))
    signed = {p: (vals[p][None, :] * signs)[:, keep].reshape(len(signs), len(keep), n1, n2) for p in (A, B)}
    res = np.maximum(np.maximum(_rank_one_residual(signed[A]), _rank_one_residual(signed[B])), res_c[None, :])
    chosen = np.argwhere(res <= tol)
    if not len(chosen):
        chosen = np.array([np.unravel_index(int(np.argmin(res)), res.shape)])
    out = []
    for si, pi in chosen[np.argsort(res[tuple(chosen.T)], kind="stable")]:
        x, y = np.zeros((3, n1), complex), np.zeros((3, n2), complex)
        for p, M in ((A, signed[A][si, pi]), (B, signed[B][si, pi]), (C, vals[C][keep[pi]].reshape(n1, n2))):
            x[p], y[p] = _rank_one_factors(M)
        out.append((float(res[si, pi]), x, y))
    return out


def _ratio(x: np.ndarray) -> np.ndarray | None:
    """``z_p[1] / z_p[0]`` for ``p = a, b, c`` of an order-2 factor (``None`` if a node vanishes)."""
    scale = float(np.abs(x).max())
    if scale == 0 or np.any(np.abs(x[:, 0]) <= 1e-9 * scale):
        return None
    return x[:, 1] / x[:, 0]


def nu_error(x: np.ndarray, nu_i: bool = False) -> float:
    """Deviation of an order-2 factor from ``z_nu`` (``nu_i``: from ``z_{nu=i}``); module docstring."""
    r = _ratio(x)
    if r is None:
        return np.inf
    err = max(abs(abs(r[A]) - 1), abs(r[A] + r[B]), abs(r[C] + np.conj(r[A]) ** 2))
    return max(err, abs(r[C] - 1)) if nu_i else err


def xi_error(x: np.ndarray) -> float:
    """Deviation of an order-2 factor from ``z_xi`` (module docstring)."""
    r = _ratio(x)
    if r is None:
        return np.inf
    return max(abs(abs(r[A]) - 1), abs(abs(r[B]) - 1), abs(r[C] ** 2 + 1), abs(r[A] * r[B] + r[C]))


def syn_error(y: np.ndarray, alpha_beta: bool = True) -> float:
    """Deviation of an order-3 factor from ``z_syn,alpha beta`` (``alpha_beta=False``: from ``z_syn``)."""
    scale = float(np.abs(y).max())
    if scale == 0 or np.any(np.abs(y) <= 1e-9 * scale):
        return np.inf
    rc, ra, rb = y[C] / y[C, 0], y[A] / y[A, 0], y[B] / y[B, 0]
    t = y[A] * y[B] / y[C] ** 2
    err = max(float(np.abs(rc**3 - 1).max()), abs(abs(rc[1] - rc[2]) - np.sqrt(3)),
              float(np.abs(np.abs(ra) - 1).max()), float(np.abs(np.abs(rb) - 1).max()),
              float(np.abs(t / t[0] - 1).max()))
    if not alpha_beta:
        err = max(err, float(np.abs((ra / rc) ** 2 - 1).max()), float(np.abs((rb / rc) ** 2 - 1).max()))
    return err


def match(order: int, x: np.ndarray, y: np.ndarray, tol: float = MATCH_TOL) -> tuple[str, float]:
    """The Table 2 construction the factors ``x`` (order 2) and ``y`` (order 2 or 3) match, and the match error;
    ``"other"`` (with the smallest error) when none is within ``tol``."""
    if order == 4:
        candidates = {"z_nu=i * z_xi": min(max(nu_error(x, True), xi_error(y)), max(nu_error(y, True), xi_error(x)))}
    else:
        candidates = {"z_nu * z_syn": max(nu_error(x), syn_error(y, alpha_beta=False)),
                      "z_nu=i * z_syn,ab": max(nu_error(x, True), syn_error(y))}
    name, err = min(candidates.items(), key=lambda item: item[1])
    return (name if err <= tol else "other"), float(err)


def frequency_solutions(net: PolyNetwork, *, threshold: float = SALIENT_THRESHOLD, factor_tol: float = FACTOR_TOL,
                        match_tol: float = MATCH_TOL) -> list[FrequencySolution]:
    """Steps 1-3 of the module docstring at every frequency ``1 .. (d-1)/2``; of several factorizations within
    ``factor_tol`` the one that matches a construction best is kept."""
    z = from_network(net).z
    out = []
    for k in range(1, (z.shape[1] - 1) // 2 + 1):
        nodes = tuple(int(j) for j in salient_nodes(z, k, threshold))
        if len(nodes) not in SPLITS:
            out.append(FrequencySolution(k, nodes))
            continue
        found = kronecker_factorizations(z[:, k, list(nodes)], SPLITS[len(nodes)][0], factor_tol)
        if found[0][0] > factor_tol:
            out.append(FrequencySolution(k, nodes, found[0][0], None, None, found[0][1:]))
            continue
        scored = [(match(len(nodes), x, y, match_tol), err, x, y) for err, x, y in found]
        (name, merr), err, x, y = min(scored, key=lambda item: (item[0][1], item[1]))
        out.append(FrequencySolution(k, nodes, err, name, merr, (x, y)))
    return out
