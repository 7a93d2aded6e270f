"""Real orthogonal irreducible representations, characters and their checks (Morwani et al. App. D.8, Lemma D.10).

* ``S_n``: Young's orthogonal form.  For a partition ``lam`` the basis is the standard Young tableaux; the
  adjacent transposition ``s_i = (i i+1)`` acts by ``s_i v_T = (1/r) v_T + sqrt(1 - 1/r^2) v_{s_i T}`` where
  ``r = content(i+1) - content(i)`` (content = column - row), so ``+1`` on a row, ``-1`` on a column. ``R(g)``
  for every ``g`` is obtained by a breadth-first walk ``R(g s_i) = R(g) R(s_i)``; that this defines a
  homomorphism is **checked** (:func:`check_homomorphism`), not assumed.
* ``C_n``: the real irreducibles: trivial, sign (``n`` even), and the 2-dimensional rotations by ``2 pi j g /
  n``, ``1 <= j < n/2``.  The rotations are irreducible over R but of *complex type* (Frobenius-Schur
  indicator 0): Theorem 7.9 assumes real type (absolutely irreducible), which these are not; the checks report
  it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from margintheory.core.groups import FiniteGroup


@dataclass(frozen=True)
class Irrep:
    """One real orthogonal representation ``R: G -> O(d)``, stored as ``mats[g]`` (|G| x d x d)."""

    name: str
    mats: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.mats.shape[1])

    def character(self) -> np.ndarray:
        """``chi_R(g) = tr R(g)`` (Definition D.6)."""
        return np.einsum("gii->g", self.mats)


# -- symmetric groups ----------------------------------------------------------------------------------
def partitions(n: int) -> list[tuple[int, ...]]:
    """Partitions of ``n`` in decreasing lexicographic order (``(n)`` first = trivial rep)."""
    out: list[tuple[int, ...]] = []

    def rec(rest: int, cap: int, acc: tuple[int, ...]) -> None:
        if rest == 0:
            out.append(acc)
            return
        for part in range(min(rest, cap), 0, -1):
            rec(rest - part, part, acc + (part,))

    rec(n, n, ())
    return out


def standard_tableaux(shape: tuple[int, ...]) -> list[dict[int, tuple[int, int]]]:
    """Standard Young tableaux of ``shape`` as maps ``entry -> (row, column)`` (entries ``0..n-1``)."""
    n = sum(shape)
    out: list[dict[int, tuple[int, int]]] = []

    def rec(filled: list[int], pos: dict[int, tuple[int, int]], x: int) -> None:
        if x == n:
            out.append(dict(pos))
            return
        for r, length in enumerate(shape):
            c = filled[r]
            if c < length and (r == 0 or filled[r - 1] > c):
                filled[r] += 1
                pos[x] = (r, c)
                rec(filled, pos, x + 1)
                del pos[x]
                filled[r] -= 1

    rec([0] * len(shape), {}, 0)
    return out


def young_orthogonal_generator(tableaux: list[dict[int, tuple[int, int]]], i: int) -> np.ndarray:
    """The matrix of ``s_i = (i i+1)`` in Young's orthogonal form on the given tableaux basis."""
    key = {tuple(sorted(t.items())): idx for idx, t in enumerate(tableaux)}
    d = len(tableaux)
    M = np.zeros((d, d))
    for idx, t in enumerate(tableaux):
        (r1, c1), (r2, c2) = t[i], t[i + 1]
        r = (c2 - r2) - (c1 - r1)
        M[idx, idx] = 1.0 / r
        if abs(r) > 1:
            swapped = dict(t)
            swapped[i], swapped[i + 1] = t[i + 1], t[i]
            M[key[tuple(sorted(swapped.items()))], idx] = math.sqrt(1.0 - 1.0 / r**2)
    return M


def transposition_index(G: FiniteGroup, i: int) -> int:
    """Index of ``(i i+1)`` in a symmetric group."""
    assert G.permutations is not None
    n = G.permutations.shape[1]
    target = list(range(n))
    target[i], target[i + 1] = i + 1, i
    return int(np.flatnonzero((G.permutations == np.array(target)).all(axis=1))[0])


def extend_from_generators(G: FiniteGroup, gens: list[int], gen_mats: list[np.ndarray]) -> np.ndarray:
    """``R(g)`` for all ``g`` by breadth-first search with ``R(g s) = R(g) R(s)`` from ``R(e) = I``."""
    d = gen_mats[0].shape[0]
    mats = np.full((G.order, d, d), np.nan)
    mats[0] = np.eye(d)
    queue = deque([0])
    while queue:
        g = queue.popleft()
        for s, M in zip(gens, gen_mats, strict=True):
            h = int(G.mul[g, s])
            if np.isnan(mats[h, 0, 0]):
                mats[h] = mats[g] @ M
                queue.append(h)
    if np.isnan(mats).any():
        raise ValueError("the generators do not generate the group")
    return mats


def symmetric_irreps(G: FiniteGroup) -> list[Irrep]:
    """All irreducible representations of ``S_n`` in Young's orthogonal form (trivial ``(n)`` first)."""
    assert G.permutations is not None
    n = G.permutations.shape[1]
    gens = [transposition_index(G, i) for i in range(n - 1)]
    irreps = []
    for lam in partitions(n):
        tabs = standard_tableaux(lam)
        if n == 1:
            mats = np.ones((1, 1, 1))
        else:
            mats = extend_from_generators(
                G, gens, [young_orthogonal_generator(tabs, i) for i in range(n - 1)]
            )
        irreps.append(Irrep("(" + ",".join(map(str, lam)) + ")", mats))
    return irreps


# -- cyclic groups ---------------------------------------------------------------------------------------
def cyclic_irreps(G: FiniteGroup) -> list[Irrep]:
    """Real irreducibles of ``C_n``: trivial, sign (even ``n``), rotations ``rho_j``, ``1 <= j < n/2``."""
    n = G.order
    g = np.arange(n)
    out = [Irrep("trivial", np.ones((n, 1, 1)))]
    if n % 2 == 0:
        out.append(Irrep("sign", ((-1.0) ** g).reshape(n, 1, 1)))
    for j in range(1, (n - 1) // 2 + 1):
        t = 2 * math.pi * j * g / n
        c, s = np.cos(t), np.sin(t)
        out.append(Irrep(f"rot{j}", np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)))
    return out


def real_irreps(G: FiniteGroup) -> list[Irrep]:
    """The real irreducible representations of a supported group (trivial first)."""
    return symmetric_irreps(G) if G.permutations is not None else cyclic_irreps(G)


# -- checks ----------------------------------------------------------------------------------------------
def homomorphism_error(G: FiniteGroup, R: Irrep, gens: list[int] | None = None) -> float:
    """``max |R(g s) - R(g) R(s)|`` over all ``g`` and the generators ``s`` (all elements if ``gens`` is
    None).

    With ``R(e) = I`` this is a complete check: ``R(gh) = R(g)R(h)`` follows by induction on the length of
    ``h``.
    """
    S = range(G.order) if gens is None else gens
    err = float(np.abs(R.mats[0] - np.eye(R.dim)).max())
    for s in S:
        err = max(err, float(np.abs(R.mats[G.mul[:, s]] - R.mats @ R.mats[s]).max()))
    return err


def generators(G: FiniteGroup) -> list[int]:
    """Adjacent transpositions for ``S_n``; the element 1 for ``C_n``."""
    if G.permutations is not None:
        n = G.permutations.shape[1]
        return [transposition_index(G, i) for i in range(n - 1)]
    return [1]


def orthogonality_error(R: Irrep) -> float:
    """``max |R(g)^T R(g) - I|``: the representation is orthogonal (unitary)."""
    return float(np.abs(np.einsum("gji,gjk->gik", R.mats, R.mats) - np.eye(R.dim)).max())


def basis_vectors(irreps: list[Irrep]) -> tuple[np.ndarray, np.ndarray]:
    """The ``|G|`` vectors ``rho = (R(g)_{ij})_g`` of Lemma D.10 as columns, and the irrep index of each
    column."""
    cols, owner = [], []
    for r, R in enumerate(irreps):
        cols.append(R.mats.reshape(R.mats.shape[0], -1))
        owner += [r] * R.dim**2
    return np.concatenate(cols, axis=1), np.array(owner)


def schur_orthogonality_error(irreps: list[Irrep]) -> float:
    """Lemma D.10 (1)-(2): ``B^T B = diag(|G| / d_R)``; the max entrywise deviation, relative to ``|G|``."""
    B, owner = basis_vectors(irreps)
    dims = np.array([irreps[o].dim for o in owner], dtype=float)
    target = np.diag(B.shape[0] / dims)
    return float(np.abs(B.T @ B - target).max() / B.shape[0])


def character_table(G: FiniteGroup, irreps: list[Irrep]) -> np.ndarray:
    """``X[R, C] = chi_R(C)`` (rows = irreps, columns = conjugacy classes in :meth:`conjugacy_classes` order)."""
    classes = G.conjugacy_classes()
    reps = [int(c[0]) for c in classes]
    return np.array([[R.character()[g] for g in reps] for R in irreps])


def class_function_error(G: FiniteGroup, irreps: list[Irrep]) -> float:
    """Characters are constant on conjugacy classes (max deviation)."""
    cls = G.class_index()
    X = character_table(G, irreps)
    return float(max(np.abs(R.character() - X[r, cls]).max() for r, R in enumerate(irreps)))


def character_inner_products(G: FiniteGroup, irreps: list[Irrep]) -> np.ndarray:
    """``<chi_R, chi_S> = (1/|G|) sum_g chi_R(g) chi_S(g)``: the identity for real-type irreps (Theorem D.8);
    a real irrep of complex type has ``<chi, chi> = 2`` (e.g. the rotations of ``C_n``)."""
    chars = np.array([R.character() for R in irreps])
    return chars @ chars.T / G.order


def frobenius_schur_indicator(G: FiniteGroup, R: Irrep) -> float:
    """``(1/|G|) sum_g chi(g^2)``: 1 for real type; 0 for a rotation block (complex type)."""
    sq = G.mul[np.arange(G.order), np.arange(G.order)]
    return float(R.character()[sq].sum() / G.order)
