"""CoGO's factorization search (Tian, arXiv:2410.01779, App. H; Table 2): sort trained solutions into the
paper's constructions (docs/theory.md#cogo-constructions).

For a network's weights ``z`` (:func:`margintheory.tasks.cogo.algebra.from_network`) and each frequency ``k`` in
``1..(d-1)/2``:

1. **order** (App. H: "thresholding with a universal threshold, e.g. 0.05"): the nodes ``j`` whose contribution to
   ``r_kkk``, ``|z[a,k,j] z[b,k,j] z[c,k,j]|^(1/3)``, is at least :data:`SALIENT_THRESHOLD`.  (A node carrying only
   an output bias at ``k``, as the ``z_F6`` part of Corollary 5's mixture does at the ``z_F4`` frequencies, has no
   input component there and is not counted.)
2. **factorization** of an order-4 (``2 x 2``) or order-6 (``2 x 3``) solution into a ring product ``z1 * z2``
   (Def. 5: per ``(p, k)`` Kronecker product of node vectors): every assignment of the nodes to the cells of the
   ``a x b`` grid (the ``n!`` permutations, App. H) is scored by how far the output row ``z[c,k,.]`` is from rank
   one (it is invariant under the pseudo-1 ``1~ = [-1, -1, 1]``); for the best assignments, every choice of
   applying ``1~`` to the nodes (negating their ``a`` and ``b`` entries) is scored on the ``a`` and ``b`` rows.  The
   **factorization error** is ``||z - z1 * z2|| / ||z||`` over the three rows (best rank-one approximations, SVD);
   a solution is *factorable* when it is at most :data:`FACTORABLE_ERROR`.
3. **matching** the factors' canonical forms (Def. 8: each row divided by its value at a reference node, which
   removes the order-1 factor ``y``) against CoGO's partial solutions, up to complex conjugation, the order of the
   nodes and ``1~`` on a node: ``z_nu = u_nu + 1`` (Table 1, ``|nu| = 1``), ``z_{nu=i}``, ``z_xi`` (Eq. 9) and
   ``z_{syn,alpha beta}`` (Eq. 11; ``z_syn = rho(u_syn)`` at ``alpha = beta = 1``); free unit-modulus parameters are
   fitted.  A match is a relative distance at most :data:`MATCH_DISTANCE` (App. H: "< 10% of the norm").

Table 2's classes: order 4 ``z_{nu=i} * z_xi``; order 6 ``z_nu * z_syn`` (the order-3 factor is ``z_syn``) or else
``z_{nu=i} * z_{syn,alpha beta}``; any other factorable solution is ``others``.
"""

from __future__ import annotations

import cmath
import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from margintheory.tasks.cogo.algebra import A, B, C, Z

SALIENT_THRESHOLD = 0.05
FACTORABLE_ERROR = 0.1
MATCH_DISTANCE = 0.1
W3 = cmath.exp(2j * math.pi / 3)
CLASSES = ("nu=i * xi", "nu=i * syn(alpha,beta)", "nu * syn", "others")
#: which class a solution matching several takes (z_syn is z_{syn,alpha beta} at alpha = beta = 1)
PRIORITY = ("nu=i * xi", "nu * syn", "nu=i * syn(alpha,beta)")
#: grid of unit-modulus parameters searched before refinement
_ANGLES = np.exp(1j * np.linspace(0, 2 * math.pi, 360, endpoint=False))


def salient_nodes(z: Z, k: int, threshold: float = SALIENT_THRESHOLD) -> np.ndarray:
    """Indices of the nodes of the per-frequency solution at ``k`` (module docstring, step 1)."""
    strength = np.abs(z.z[A, k] * z.z[B, k] * z.z[C, k]) ** (1 / 3)
    return np.flatnonzero(strength >= threshold)


def rank_one_residual(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For a stack of matrices ``(..., a, b)``: the squared residual of the best rank-one approximation and the
    approximation itself (SVD)."""
    u, s, vh = np.linalg.svd(M, full_matrices=False)
    approx = s[..., :1, None] * u[..., :, :1] @ vh[..., :1, :]
    return (s[..., 1:] ** 2).sum(axis=-1), approx


@dataclass(frozen=True)
class Factorization:
    """``z ~ z1 * z2``: the factors (``(3, a)`` and ``(3, b)``, canonical: reference node first), the relative
    error, the node order (grid cell ``(i, j)`` holds node ``order[i * b + j]``) and the pseudo-1 signs applied to
    the grid cells (``-1``: ``1~`` on that node)."""

    z1: np.ndarray
    z2: np.ndarray
    error: float
    order: tuple[int, ...]
    signs: tuple[int, ...]


@functools.cache
def grid_assignments(a: int, b: int) -> np.ndarray:
    """One node order per way of placing ``a*b`` nodes on an ``a x b`` grid up to permuting its rows and its columns
    (which leaves a rank-one grid rank one): 60 orders for ``2 x 3``, 6 for ``2 x 2``."""
    seen, out = set(), []
    for perm in itertools.permutations(range(a * b)):
        grid = np.array(perm).reshape(a, b)
        key = (frozenset(frozenset(row) for row in grid.tolist()), frozenset(frozenset(col) for col in grid.T.tolist()))
        if key not in seen:
            seen.add(key)
            out.append(perm)
    return np.array(out)


#: a factorization within this much (relative error) of the best one is an alternative of it (module docstring)
TIE_ERROR = 0.01
#: at most this many alternatives are classified
MAX_ALTERNATIVES = 16


def factorizations(v: np.ndarray, shape: tuple[int, int]) -> list[Factorization]:
    """The ring factorizations of the per-frequency solution ``v`` (``(3, a*b)``: rows a, b, c at ``+k``) into an
    order-``a`` and an order-``b`` factor (module docstring, step 2), best first: the best one and its alternatives
    (relative error within :data:`TIE_ERROR` of it; a product such as ``z_{nu=1} * z_syn`` has several exact ones,
    since ``z_{nu=1}``'s nodes are closed under multiplying by ``[1, -1, -1]``).  The node orders searched are those
    whose output row is factorable on its own (relative residual at most :data:`FACTORABLE_ERROR`) and the best one,
    each over every pseudo-1 pattern."""
    a, b = shape
    perms = grid_assignments(a, b)
    c_res, _ = rank_one_residual(v[C][perms].reshape(-1, a, b))
    norm2 = max(float((np.abs(v) ** 2).sum()), 1e-300)
    keep = (c_res <= FACTORABLE_ERROR**2 * max(float((np.abs(v[C]) ** 2).sum()), 1e-300)) | (c_res <= c_res.min())
    patterns = sign_patterns(a, b)
    scored = []
    for perm, cr in zip(perms[keep], c_res[keep], strict=True):
        ab = v[[A, B]][:, perm].reshape(1, 2, a, b) * patterns[:, None, :, :]  # (patterns, 2, a, b)
        total = rank_one_residual(ab)[0].sum(axis=1) + cr
        scored += [(math.sqrt(max(float(t), 0.0) / norm2), perm, patterns[j]) for j, t in enumerate(total)]
    scored.sort(key=lambda x: x[0])
    best = scored[0][0]
    out: list[Factorization] = []
    for error, perm, pattern in scored:
        if error > best + TIE_ERROR or len(out) == MAX_ALTERNATIVES:
            break
        grid = v[:, perm].reshape(3, a, b) * np.stack([pattern, pattern, np.ones((a, b))])
        z1, z2 = _factors(rank_one_residual(grid)[1])
        out.append(Factorization(z1, z2, error, tuple(int(x) for x in perm), tuple(int(x) for x in pattern.ravel())))
    return out


@functools.cache
def sign_patterns(a: int, b: int) -> np.ndarray:
    """``(patterns, a, b)``: the pseudo-1 patterns on an ``a x b`` grid up to flipping whole rows and columns (a
    flip of a row or a column is ``1~`` on a node of a factor, which the matching allows): first row and column
    ``+1``, the others free (4 patterns for ``2 x 3``, 2 for ``2 x 2``)."""
    free = (a - 1) * (b - 1)
    out = np.ones((2**free, a, b))
    for i, s in enumerate(itertools.product((1, -1), repeat=free)):
        out[i, 1:, 1:] = np.array(s).reshape(a - 1, b - 1)
    return out


def factorize(v: np.ndarray, shape: tuple[int, int]) -> Factorization:
    """The best factorization of :func:`factorizations`."""
    return factorizations(v, shape)[0]


def _factors(approx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank-one ``(3, a, b)`` matrices ``x y^T`` as their factors, each row divided by its first entry
    (canonical form, Def. 8: the per-row scales are the order-1 factor ``y``)."""
    u, s, vh = np.linalg.svd(approx, full_matrices=False)
    x, y = u[:, :, 0] * s[:, :1], vh[:, 0, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        return x / x[:, :1], y / y[:, :1]


# -- CoGO's partial solutions, canonical forms (reference node first) ------------------------------------------
def _unit(x: complex) -> complex:
    return x / abs(x) if abs(x) > 0 else 1.0


def z_nu_form(nu: complex | np.ndarray) -> np.ndarray:
    """``z_nu = u_nu + 1`` (Table 1) with the ``1`` node as reference: ``[[1, nu], [1, -nu], [1, -conj(nu)^2]]``
    (``(..., 3, 2)`` for an array of ``nu``)."""
    nu = np.asarray(nu, dtype=complex)
    one = np.ones_like(nu)
    return np.stack([np.stack([one, nu], -1), np.stack([one, -nu], -1), np.stack([one, -np.conj(nu) ** 2], -1)], -2)


def z_xi_form(xi: complex | np.ndarray) -> np.ndarray:
    """Eq. 9: ``[[1, xi], [1, -i conj(xi)], [1, i]]`` (``(..., 3, 2)`` for an array of ``xi``)."""
    xi = np.asarray(xi, dtype=complex)
    one = np.ones_like(xi)
    return np.stack([np.stack([one, xi], -1), np.stack([one, -1j * np.conj(xi)], -1), np.stack([one, 1j * one], -1)],
                    -2)


def z_syn_form(alpha: complex, beta: complex) -> np.ndarray:
    """Eq. 11: ``[[1, w alpha, conj(w) beta], [1, w conj(alpha), conj(w) conj(beta)], [1, w, conj(w)]]``."""
    w, wb = W3, W3.conjugate()
    return np.array([[1, w * alpha, wb * beta], [1, w * np.conj(alpha), wb * np.conj(beta)], [1, w, wb]])


@functools.cache
def _variant_maps(n: int) -> tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]:
    """(reference node, order of the other nodes, pseudo-1 signs on them) for a factor of order ``n``."""
    return tuple((ref, order, signs) for ref in range(n) for order in itertools.permutations(
        [j for j in range(n) if j != ref]) for signs in itertools.product((1, -1), repeat=n - 1))


def _variants(f: np.ndarray) -> list[np.ndarray]:
    """The canonical forms of one factor under a change of reference node, of node order, of ``1~`` on the
    non-reference nodes, and complex conjugation (finite ones only)."""
    out = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for ref, order, signs in _variant_maps(f.shape[1]):
            g = (f / f[:, ref : ref + 1])[:, [ref, *order]]
            g[:2, 1:] *= np.array(signs)
            if np.all(np.isfinite(g)):
                out += [g, np.conj(g)]
    return out


def _distance(f: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``||f - target|| / ||target||`` (over the last two axes of ``target``)."""
    return np.linalg.norm(f - target, axis=(-2, -1)) / np.linalg.norm(target, axis=(-2, -1))


def _fit_one(forms, f: np.ndarray) -> float:  # noqa: ANN001 - a function of one unit-modulus parameter
    """Smallest distance of the factor ``f`` (any variant) to ``forms(t)`` over unit ``t`` (a grid of 360 angles,
    then a finer one around the best)."""
    best = math.inf
    for g in _variants(f):
        d = _distance(g, forms(_ANGLES))
        fine = np.exp(1j * (np.angle(_ANGLES[int(np.argmin(d))]) + np.linspace(-0.01, 0.01, 41)))
        best = min(best, float(d.min()), float(_distance(g, forms(fine)).min()))
    return best


def match_distances(f: np.ndarray) -> dict[str, float]:
    """Distances of a canonical factor to CoGO's partial solutions of its order (module docstring, step 3)."""
    variants = _variants(f)
    if not variants:
        return {}
    if f.shape[1] == 2:
        return {"nu=i": min(float(_distance(g, z_nu_form(1j))) for g in variants), "nu": _fit_one(z_nu_form, f),
                "xi": _fit_one(z_xi_form, f)}
    if f.shape[1] == 3:
        return {"syn": min(float(_distance(g, z_syn_form(1, 1))) for g in variants),
                "syn(alpha,beta)": min(_syn_alpha_beta(g) for g in variants)}
    return {}


def _syn_alpha_beta(g: np.ndarray) -> float:
    """Distance of a canonical order-3 factor to ``z_{syn,alpha beta}``, ``alpha, beta`` fitted from rows a, b."""
    alpha = _unit(g[A, 1] / W3 + np.conj(g[B, 1] / W3))
    beta = _unit(g[A, 2] / W3.conjugate() + np.conj(g[B, 2] / W3.conjugate()))
    return float(_distance(g, z_syn_form(alpha, beta)))


@dataclass(frozen=True)
class SolutionClass:
    """One per-frequency solution sorted: its frequency, order, factorization (``None`` unless order 4 or 6),
    whether it is factorable, and its class (:data:`CLASSES`, ``None`` when not factorable)."""

    k: int
    order: int
    factorization: Factorization | None
    factorable: bool
    kind: str | None


def classify(factor: Factorization) -> str:
    """Table 2's class of one factorization (module docstring)."""
    small, big = (factor.z1, factor.z2) if factor.z1.shape[1] <= factor.z2.shape[1] else (factor.z2, factor.z1)
    d_small, d_big = match_distances(small), match_distances(big)
    if not d_small or not d_big:
        return CLASSES[3]
    if big.shape[1] == 2:
        pair = min(max(d_small["nu=i"], d_big["xi"]), max(d_big["nu=i"], d_small["xi"]))
        return CLASSES[0] if pair <= MATCH_DISTANCE else CLASSES[3]
    if d_big["syn"] <= MATCH_DISTANCE and d_small["nu"] <= MATCH_DISTANCE:
        return CLASSES[2]
    if d_big["syn(alpha,beta)"] <= MATCH_DISTANCE and d_small["nu=i"] <= MATCH_DISTANCE:
        return CLASSES[1]
    return CLASSES[3]


def classify_alternatives(alternatives: list[Factorization]) -> tuple[str, Factorization]:
    """The class of a solution: the first of :data:`PRIORITY` that one of its factorizations (best first) matches,
    with that factorization; ``others`` (with the best factorization) when none does."""
    found = [(PRIORITY.index(kind), i) for i, f in enumerate(alternatives) if (kind := classify(f)) != CLASSES[3]]
    if not found:
        return CLASSES[3], alternatives[0]
    rank, i = min(found)
    return PRIORITY[rank], alternatives[i]


def sort_solutions(z: Z, threshold: float = SALIENT_THRESHOLD) -> list[SolutionClass]:
    """Every per-frequency solution of ``z`` (frequencies ``1..(d-1)/2``) with its order, factorization and class."""
    out = []
    for k in range(1, (z.d - 1) // 2 + 1):
        nodes = salient_nodes(z, k, threshold)
        shape = {4: (2, 2), 6: (2, 3)}.get(len(nodes))
        if shape is None:
            out.append(SolutionClass(k, len(nodes), None, False, None))
            continue
        alternatives = factorizations(z.z[:, k][:, nodes], shape)
        if alternatives[0].error > FACTORABLE_ERROR:
            out.append(SolutionClass(k, len(nodes), alternatives[0], False, None))
            continue
        kind, chosen = classify_alternatives(alternatives)
        out.append(SolutionClass(k, len(nodes), chosen, True, kind))
    return out
