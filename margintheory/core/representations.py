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
from margintheory.runtime.budget import Estimate


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
    mats[G.identity] = np.eye(d)
    queue = deque([G.identity])
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


def real_irreps(G: FiniteGroup, seed: int = 0) -> list[Irrep]:
    """The real irreducible representations of ``G`` (trivial first): Young's orthogonal form for ``S_n``, the
    rotations for ``C_n``, and :func:`regular_real_irreps` (from the regular representation) for every other group."""
    if G.family == "symmetric" and G.permutations is not None:
        return symmetric_irreps(G)
    if G.family == "cyclic":
        return cyclic_irreps(G)
    return regular_real_irreps(G, seed=seed)


# -- any finite group ---------------------------------------------------------------------------------------
def needs_regular_irreps(G: FiniteGroup) -> bool:
    """Whether :func:`real_irreps` computes ``G``'s irreps from its regular representation (not ``S_n``, ``C_n``)."""
    return not ((G.family == "symmetric" and G.permutations is not None) or G.family == "cyclic")


def estimate_regular_irreps(order: int) -> Estimate:
    """Memory and time of :func:`regular_real_irreps` from the order alone: about eight ``order x order`` float64
    arrays at the peak (the two symmetric matrices, the eigenvectors, the index table, the slices of
    :func:`_restricted`) plus a first call's fixed 1 MiB, and ``order^3`` work (two dense eigen-decompositions and the
    restrictions).  Calibrated by ``benchmarks/bench_groups.py`` on this project's 2-core machine (2026-12-08, idle;
    docs/benchmarks.md#finite-groups): the estimate is 0.8x-1.1x of the measured peak from order 8 to 1000 (``C_10 x
    D_50``: 67 MiB, 3.9 s), except where the peak is a few kB; the time estimate is 0.4x-7.5x of the measured time
    (tens of milliseconds below order 400)."""
    return Estimate(f"the real irreps of a group of order {order} (regular representation)",
                    64.0 * order * order + 2**20, 4e-9 * float(order) ** 3 + 0.05)


#: eigenvalues closer than this (relative to the spread) belong to one cluster
CLUSTER_RTOL = 1e-7


def _clusters(values: np.ndarray, tol: float) -> list[np.ndarray]:
    """Indices of sorted ``values`` grouped where consecutive values differ by at most ``tol``."""
    order = np.argsort(values)
    groups, current = [], [int(order[0])]
    for a, b in zip(order[:-1], order[1:], strict=True):
        if values[b] - values[a] <= tol:
            current.append(int(b))
        else:
            groups.append(np.array(current))
            current = [int(b)]
    groups.append(np.array(current))
    return groups


def _restricted(G: FiniteGroup, V: np.ndarray) -> np.ndarray:
    """``R(g) = V^T L(g) V`` for every ``g`` (``V``: orthonormal columns spanning an invariant subspace); ``L(g) V``
    is ``V`` with its rows permuted, ``(L(g) V)[y] = V[g^-1 y]``.  Done in slices of ``g`` holding at most about
    ``|G|^2`` numbers at a time."""
    n, d = V.shape
    rows = G.mul[G.inverses()]  # rows[g, y] = g^-1 y
    out = np.empty((n, d, d))
    step = max(1, n // max(1, d))
    for g0 in range(0, n, step):
        out[g0:g0 + step] = np.einsum("yi,gyj->gij", V, V[rows[g0:g0 + step]], optimize=True)
    return out


def regular_real_irreps(G: FiniteGroup, seed: int = 0, *, attempts: int = 4) -> list[Irrep]:
    """The real irreducible representations of any finite group, split out of its real regular representation
    (the "random central element" method; Serre, *Linear representations of finite groups*, Sec. 2.6 and 13.2).

    1. A random real class function ``z`` with ``z(g^-1) = z(g)`` gives the symmetric central element ``Z = sum_g z(g)
       L(g)``; its eigenspaces are the real isotypic components (for a complex-type irrep, ``pi`` and its conjugate
       together; their eigenvalues ``sum_g z(g) chi_pi(g) / d_pi`` are equal and real).
    2. A random real ``b`` with ``b(h^-1) = b(h)`` gives ``B[y, x] = b(y^-1 x)``, symmetric and commuting with every
       ``L(g)`` (an element of the right regular algebra).  On an isotypic component it is a random Hermitian element
       of the commutant ``M_m(K)`` (``K = R, C, H`` for real, complex, quaternionic type), so each of its eigenspaces is
       one real irreducible subspace, of real dimension ``d`` (real type) or ``2 d`` (complex and quaternionic type,
       realified).
    3. ``R(g) = V^T L(g) V`` on an orthonormal basis ``V`` of one eigenspace per isotypic component: real orthogonal.

    The type is told by the Frobenius-Schur indicator of the realified character (1 real, 0 complex, -2
    quaternionic; :func:`frobenius_schur_indicator`).  Nothing here is assumed: the checks of
    :mod:`margintheory.tasks.groups.representation_checks` re-check homomorphism, orthogonality, irreducibility
    (``<chi, chi> = 1, 2, 4``) and completeness.  A draw whose clusters are not all of one size is redrawn (``seed +
    1``, ...), up to ``attempts`` times; then ``ValueError``.
    """
    n = G.order
    inv = G.inverses()
    cls = G.class_index()
    n_classes = int(cls.max()) + 1
    # x^-1 y for all pairs: the class / element index the two matrices read
    y_inv_x = G.mul[inv[:, None], np.arange(n)[None, :]]  # [y, x] = y^-1 x
    last_error = ""
    for attempt in range(attempts):
        rng = np.random.default_rng(seed + attempt)
        zc = rng.standard_normal(n_classes)
        z = zc[cls] + zc[cls[inv]]  # real class function, z(g^-1) = z(g)
        Z = z[G.mul[np.arange(n)[:, None], inv[None, :]]]  # Z[y, x] = z(y x^-1)
        b = rng.standard_normal(n)
        b = b + b[inv]
        B = b[y_inv_x]
        zval, zvec = np.linalg.eigh(Z)
        scale = max(1.0, float(np.abs(zval).max()))
        irreps: list[Irrep] = []
        ok = True
        for comp in _clusters(zval, CLUSTER_RTOL * scale):
            W = zvec[:, comp]
            bval, bvec = np.linalg.eigh(W.T @ B @ W)
            bscale = max(1.0, float(np.abs(bval).max()))
            parts = _clusters(bval, CLUSTER_RTOL * bscale)
            sizes = {len(c) for c in parts}
            if len(sizes) != 1 or len(comp) % len(parts[0]) != 0:
                ok = False
                last_error = f"eigenspaces of sizes {sorted(len(c) for c in parts)} in a component of {len(comp)}"
                break
            V = W @ bvec[:, parts[0]]
            irreps.append(Irrep("", _restricted(G, V)))
        if ok:
            return _name_irreps(G, irreps)
    raise ValueError(f"{G.name}: the regular representation did not split into irreducibles ({last_error})")


def _name_irreps(G: FiniteGroup, irreps: list[Irrep]) -> list[Irrep]:
    """Trivial first, then by dimension and character; names ``trivial`` and ``R<i> (d=D[, complex|quaternionic])``."""
    classes = G.conjugacy_classes()
    reps = [int(c[0]) for c in classes]

    def key(R: Irrep) -> tuple:
        chi = R.character()
        trivial = R.dim == 1 and bool(np.all(np.abs(chi - 1) < 1e-6))
        return (not trivial, R.dim, tuple(-np.round(chi[reps], 6)))

    ordered = sorted(irreps, key=key)
    out = []
    for i, R in enumerate(ordered):
        if i == 0:
            out.append(Irrep("trivial", R.mats))
            continue
        fs = frobenius_schur_indicator(G, R)
        kind = "" if abs(fs - 1) < 0.5 else (", complex" if abs(fs) < 0.5 else ", quaternionic")
        out.append(Irrep(f"R{i} (d={R.dim}{kind})", R.mats))
    return out


# -- checks ----------------------------------------------------------------------------------------------
def homomorphism_error(G: FiniteGroup, R: Irrep, gens: list[int] | None = None) -> float:
    """``max |R(g s) - R(g) R(s)|`` over all ``g`` and the generators ``s`` (all elements if ``gens`` is
    None).

    With ``R(e) = I`` this is a complete check: ``R(gh) = R(g)R(h)`` follows by induction on the length of
    ``h``.
    """
    S = range(G.order) if gens is None else gens
    err = float(np.abs(R.mats[G.identity] - np.eye(R.dim)).max())
    for s in S:
        err = max(err, float(np.abs(R.mats[G.mul[:, s]] - R.mats @ R.mats[s]).max()))
    return err


def generators(G: FiniteGroup) -> list[int]:
    """Adjacent transpositions for ``S_n``; the element 1 for ``C_n``; otherwise a generating set found greedily
    (each new generator the smallest element outside the subgroup generated so far)."""
    if G.family == "symmetric" and G.permutations is not None:
        n = G.permutations.shape[1]
        return [transposition_index(G, i) for i in range(n - 1)]
    if G.family == "cyclic":
        return [1]
    gens: list[int] = []
    reached = np.zeros(G.order, dtype=bool)
    reached[G.identity] = True
    while not reached.all():
        g = int(np.flatnonzero(~reached)[0])
        gens.append(g)
        frontier = np.flatnonzero(reached)
        while len(frontier):  # close the subgroup under right multiplication by the generators
            new = np.unique(G.mul[frontier][:, gens].reshape(-1))
            new = new[~reached[new]]
            reached[new] = True
            frontier = new
    return gens


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
    """``(1/|G|) sum_g chi(g^2)`` of the (realified) character: 1 for real type; 0 for complex type (a rotation
    block); -2 for a realified quaternionic irrep (twice the indicator -1 of its complex irrep)."""
    sq = G.mul[np.arange(G.order), np.arange(G.order)]
    return float(R.character()[sq].sum() / G.order)
