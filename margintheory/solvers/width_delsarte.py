"""The Delsarte linear-programming bound on the neurons per frequency, with symmetric, exactly checked certificates.

A max-margin network has, at each frequency, at least as many neurons as the smallest support of a positive measure
``mu = sum_a w_a delta_{theta_a}`` on ``T^k`` with ``mu^(m) = 0`` for every unwanted moment ``m`` in ``M_k``
(:mod:`margintheory.core.phase_measures`; ``p`` prime, ``p > 2k``).  **The bound** -- the analogue of the linear
programming bound of P. Delsarte, "An algebraic approach to the association schemes of coding theory", Philips Res.
Rep. Suppl. 10 (1973), and of Delsarte, Goethals, Seidel, "Spherical codes and designs", Geom. Dedicata 6 (1977):
let ``F(theta) = sum_d f_d exp(-i d.theta)`` be real with

* ``F >= 0`` on the torus, and
* ``f_d <= 0`` for every ``d`` outside ``M_k + {0}`` (on ``M_k`` the coefficients are free).

Then ``sum_{a,b} w_a w_b F(theta_a - theta_b) = sum_d f_d |mu^(-d)|^2``: the terms on ``M_k`` vanish (``M_k = -M_k``),
the terms outside ``M_k + {0}`` are ``<= 0``, so the double sum is ``<= f_0 mu(T^k)^2``; dropping the pairs
``a != b`` (``F >= 0``) it is ``>= F(0) sum_a w_a^2 >= F(0) mu(T^k)^2 / N`` (Cauchy-Schwarz).  Hence
``N >= F(0) / f_0``.  The largest such ratio is the optimum of a linear programme whose dual is "maximise the mass
that the difference measure ``sum_{a,b} w_a w_b delta_{theta_a - theta_b}`` puts at 0, over positive measures whose
Fourier transform is ``>= 0`` everywhere and ``0`` on ``M_k``" -- the distance-distribution relaxation of the
smallest support.  (The pointwise bound of :mod:`margintheory.solvers.width_bounds` is the special case ``f_d = 0``
outside ``M_k + {0}``, whose optimum for ``k = 5`` is 92.23; allowing ``f_d < 0`` there is what lifts ``k = 5`` to
96, the size of the parity design, so 96 is the minimum.)

**The certificate.**  ``F = v(theta)^* G v(theta)`` with ``v = (exp(i s.theta))_{s in T}`` and ``G`` a positive definite
integer matrix (over a common denominator) indexed by a set ``T`` of integer vectors: ``F >= 0`` and
``f_d = sum_{s - t = d} G[s, t]``, ``f_0 = trace G``, ``F(0) = 1^T G 1``.  ``T`` is closed under the group
``S_k x {+1, -1}`` (coordinate permutations and negation, which preserve ``M_k``), ``G`` is invariant under it, and
the certificate stores one value per orbit of index pairs.  :func:`check_delsarte_certificate` re-checks it with
integers only: the orbit values fill ``G`` consistently, ``G`` is symmetric, every difference class outside
``M_k + {0}`` sums to ``<= 0``, and ``G`` is positive definite -- block by block over the characters of an
elementary abelian 2-subgroup ``H`` of the group (negation and disjoint transpositions; ``G`` commutes with ``H``,
so the ``+-1``-character vectors split ``G`` into orthogonal blocks), each block by an exact identity
``2^(2s) C = L L^T + E`` with ``L`` integer and ``E`` strictly diagonally dominant (python-flint).  A passing check
proves ``N >= ceil(1^T G 1 / trace G)``.

The certificate is *found* (nothing here is trusted) by a semidefinite programme reduced by the same symmetry
(:func:`delsarte_sdp`: pair orbits, a numerically block-diagonalised commutant, cvxpy + Clarabel), rounded by
:func:`round_delsarte_certificate`.  Derivation and results: docs/theory.md ("smaller networks").
"""

from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from threadpoolctl import threadpool_limits

from margintheory.core.phase_measures import unwanted_phase_moments
from margintheory.errors import SolverError
from margintheory.runtime import strict_json
from margintheory.runtime.process import load_native_imports

#: largest absolute numerator the int64 path accepts is ``2^62 / (64 n^2)`` (sums of ``64 n^2`` entries stay exact)
_INT64_HEADROOM = 2**62


@dataclass(frozen=True)
class DelsarteCertificate:
    """``G[i, j] = numerator / denominator`` for every pair ``(i, j)`` in the ``S_k x {+-1}``-orbit (taken together
    with its transpose) of each stored ``(i, j, numerator)``; rows and columns are indexed by ``index``."""

    k: int
    index: tuple[tuple[int, ...], ...]
    orbits: tuple[tuple[int, int, int], ...]
    denominator: int

    def to_json(self) -> str:
        return json.dumps({"k": self.k, "bound": "Delsarte LP (double sum), group S_k x {+1,-1}",
                           "denominator": self.denominator, "index": self.index, "orbits": self.orbits},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> DelsarteCertificate:
        d = strict_json.loads(text)
        return cls(int(d["k"]), tuple(tuple(int(v) for v in r) for r in d["index"]),
                   tuple((int(i), int(j), int(v)) for i, j, v in d["orbits"]), int(d["denominator"]))


@dataclass(frozen=True)
class DelsarteCheck:
    """Outcome of :func:`check_delsarte_certificate`: each condition, the ratio ``1^T G 1 / trace G`` and the bound."""

    complete: bool
    symmetric: bool
    signs: bool
    positive_definite: bool
    blocks: tuple[int, ...]
    ratio: Fraction
    bound: int
    seconds: float
    reason: str

    @property
    def passed(self) -> bool:
        return self.complete and self.symmetric and self.signs and self.positive_definite


@lru_cache(maxsize=16)
def allowed_differences(k: int) -> frozenset[tuple[int, ...]]:
    """``M_k + {0}``: the differences whose class sums are free."""
    return frozenset({tuple(int(v) for v in m) for m in unwanted_phase_moments(k)} | {(0,) * k})


def symmetric_box(k: int, radius: int, max_norm2: int | None = None,
                  extra_orbits: tuple[tuple[int, ...], ...] = ()) -> list[tuple[int, ...]]:
    """The vectors of ``[-radius, radius]^k`` with even coordinate sum (``M_k`` lies in that sublattice) and, with
    ``max_norm2``, squared Euclidean norm at most ``max_norm2``, together with the ``S_k x {+-1}``-orbits of
    ``extra_orbits`` (even-sum vectors): closed under coordinate permutations and negation, sorted.  The shipped
    certificates use :data:`SHIPPED_INDEX` (``k = 5``: ``symmetric_box(5, 2, 12)``, 1131 vectors)."""
    box = {t for t in itertools.product(range(-radius, radius + 1), repeat=k)
           if sum(t) % 2 == 0 and (max_norm2 is None or sum(v * v for v in t) <= max_norm2)}
    for v in extra_orbits:
        if len(v) != k or sum(v) % 2:
            raise ValueError(f"extra orbit representative {v} must have length {k} and even sum")
        box |= {tuple(sg * x for x in p) for p in itertools.permutations(v) for sg in (1, -1)}
    return sorted(box)


#: ``k -> (radius, max_norm2, extra_orbits)`` of :func:`symmetric_box` indexing the shipped certificate for ``k``
SHIPPED_INDEX: dict[int, tuple[int, int | None, tuple[tuple[int, ...], ...]]] = {
    3: (2, None, ()), 4: (2, None, ()), 5: (2, 12, ()),
    6: (2, 12, ((3, 2, 1, 0, 0, 0), (3, 1, 1, 1, 0, 0), (3, 1, 1, 1, 1, 1), (3, 1, 1, 1, 1, -1), (3, 1, 1, 1, -1, -1)))}


def parity_classes(k: int, index: list[tuple[int, ...]] | tuple[tuple[int, ...], ...]) -> int:
    """How many classes of ``Z^k / L_k`` the index vectors meet, ``L_k = {t : t = 0 mod 2, sum t = 0 mod 2k+2}``
    (the characters of the group ``H = {tau 1/(2k+2) + h/2}`` that contains the parity design).  For an index set
    of even-sum vectors this bounds the certificate: ``1^T G 1 / trace G <= parity_classes(k, index)``
    (docs/theory.md#delsarte-classes), so an index set proves ``(k+1) 2^(k-1)`` only if it meets all
    ``(k+1) 2^(k-1)`` even classes."""
    return len({(sum(t) % (2 * k + 2), tuple(v % 2 for v in t)) for t in index})


def _codes(A: np.ndarray, lo: int, base: int) -> np.ndarray:
    return (A.astype(np.int64) - lo) @ (base ** np.arange(A.shape[1] - 1, -1, -1, dtype=np.int64))


def group_actions(index: tuple[tuple[int, ...], ...] | list[tuple[int, ...]],
                  elements: list[tuple[int, tuple[int, ...]]]) -> np.ndarray | None:
    """Rows ``g``: the position of ``g(index[i])`` for each ``i``, for ``g = (sign, permutation)`` in ``elements``
    (``g(t)_j = sign * t_{permutation[j]}``); ``None`` if ``index`` is not closed under them."""
    A = np.array(index, dtype=np.int64)
    lo, base = int(-np.abs(A).max()), int(2 * np.abs(A).max() + 1)
    codes = _codes(A, lo, base)
    order = np.argsort(codes)
    rows = []
    for sign, perm in elements:
        c = _codes(sign * A[:, list(perm)], lo, base)
        at = np.clip(np.searchsorted(codes, c, sorter=order), 0, len(codes) - 1)
        pos = order[at]
        if not np.array_equal(codes[pos], c):
            return None
        rows.append(pos)
    return np.array(rows, dtype=np.int64)


def group_closure(index: tuple[tuple[int, ...], ...] | list[tuple[int, ...]]) -> np.ndarray | None:
    """Every element of ``S_k x {+1, -1}`` as a permutation of the positions of ``index`` (closure of negation,
    the transposition ``(0 1)`` and the cycle ``(0 1 ... k-1)`` under composition); ``None`` if ``index`` is not
    closed under the group."""
    k = len(index[0])
    gens = group_actions(index, [(-1, tuple(range(k))), (1, (1, 0, *range(2, k))) if k > 1 else (1, (0,)),
                                 (1, (*range(1, k), 0))])
    if gens is None:
        return None
    identity = np.arange(len(index))
    seen = {identity.tobytes(): identity}
    frontier = [identity]
    while frontier:
        fresh = []
        for a in frontier:
            for g in gens:
                b = g[a]
                if b.tobytes() not in seen:
                    seen[b.tobytes()] = b
                    fresh.append(b)
        frontier = fresh
    return np.array(list(seen.values()))


def expand_gram(cert: DelsarteCertificate) -> tuple[np.ndarray | None, str]:
    """The full integer matrix ``G`` (int64) from the orbit values, or ``None`` and the reason: every entry must be
    reached, and reached by one value only."""
    n = len(cert.index)
    if n == 0 or len(set(cert.index)) != n or any(len(t) != cert.k for t in cert.index) or cert.denominator <= 0:
        return None, "index vectors must be distinct, of length k, and the denominator positive"
    acts = group_closure(cert.index)
    if acts is None:
        return None, "index is not closed under coordinate permutations and negation"
    reps = np.array(cert.orbits, dtype=object).reshape(-1, 3)
    if len(reps) == 0 or max(abs(int(v)) for v in reps[:, 2]) > _INT64_HEADROOM // (64 * n * n):
        return None, "no orbit values, or numerators too large for the exact int64 path"
    i, j, v = (np.asarray(reps[:, c], dtype=np.int64) for c in range(3))
    if i.min() < 0 or j.min() < 0 or max(i.max(), j.max()) >= n:
        return None, "orbit representative out of range"
    owner = np.full((n, n), -1, dtype=np.int64)
    rid = np.arange(len(i))
    for a, b in ((i, j), (j, i)):
        rows, cols = acts[:, a], acts[:, b]
        owner[rows, cols] = rid
    for a, b in ((i, j), (j, i)):
        rows, cols = acts[:, a], acts[:, b]
        if not np.array_equal(owner[rows, cols], np.broadcast_to(rid, rows.shape)):
            return None, "two stored orbits overlap (the same matrix entry gets two values)"
    if (owner < 0).any():
        return None, f"{int((owner < 0).sum())} matrix entries are in no stored orbit"
    return v[owner], ""


def difference_class_sums(k: int, index: tuple[tuple[int, ...], ...], G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(differences, sums)``: every difference ``d = s - t`` of the index and ``sum_{s - t = d} G[s, t]`` (exact
    int64), the Fourier coefficients ``f_d`` of ``v^* G v``."""
    A = np.array(index, dtype=np.int64)
    n = len(A)
    lo, hi = int(A.min() - A.max()), int(A.max() - A.min())
    base = hi - lo + 1
    c = _codes(A, 0, base)
    key = (c[:, None] - c[None, :]).ravel()
    if int(np.abs(G).max()) * n * n < 2**52:  # float sums of integers below 2^53 are exact
        kmin = int(key.min())
        key -= kmin
        sums_f = np.bincount(key, weights=G.ravel().astype(float))
        hit = np.bincount(key) > 0
        code = np.flatnonzero(hit)
        sums = np.rint(sums_f[hit]).astype(np.int64)
        d = np.zeros((len(code), A.shape[1]), dtype=np.int64)
        rest = code + kmin
        for j in range(A.shape[1] - 1, -1, -1):  # digits of the difference code, lowest last
            q, r = np.divmod(rest - lo, base)
            d[:, j], rest = r + lo, q
        return d, sums
    order = np.argsort(key, kind="stable")
    ks = key[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    sums = np.add.reduceat(G.ravel()[order], starts)
    first = order[starts]
    d = A[first // n] - A[first % n]
    return d, sums


def _character_columns(index: tuple[tuple[int, ...], ...]) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """For the elementary abelian 2-group ``H`` generated by negation and the transpositions ``(0 1), (2 3), ...``:
    per character ``chi`` of ``H`` the vectors ``sum_h chi(h) e_{h t}`` (one per ``H``-orbit on which they are not
    zero), as (positions, signs) arrays padded with position 0 and sign 0.  The
    vectors of all characters are nonzero, mutually orthogonal and ``n`` in number: a basis.  Also returns the
    generators' action (rows): a matrix invariant under them is invariant under ``H``."""
    k = len(index[0])
    gens = [(-1, tuple(range(k)))] + [(1, tuple(q ^ 1 if q < 2 * (k // 2) and q // 2 == r else q
                                               for q in range(k))) for r in range(k // 2)]
    r = len(gens)
    acts = group_actions(index, gens)
    if acts is None:
        raise ValueError("index is not closed under negation and the transpositions")
    n = len(index)
    elems = np.zeros((2**r, n), dtype=np.int64)
    elems[0] = np.arange(n)
    for e in range(1, 2**r):
        low = (e & -e).bit_length() - 1
        elems[e] = acts[low][elems[e ^ (1 << low)]]
    signs = np.array([[1 - 2 * (bin(chi & e).count("1") % 2) for e in range(2**r)] for chi in range(2**r)])
    cols: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(2**r)]
    seen = np.zeros(n, dtype=bool)
    for t in range(n):
        if seen[t]:
            continue
        img = elems[:, t]
        seen[img] = True
        pos, first = np.unique(img, return_index=True)
        for chi in np.flatnonzero(np.all(signs[:, img == t] == 1, axis=1)):
            cols[chi].append((pos, signs[chi, first]))
    out = []
    for lst in cols:
        P = np.zeros((len(lst), 2**r), dtype=np.int64)
        S = np.zeros((len(lst), 2**r), dtype=np.int64)
        for a, (pos, sg) in enumerate(lst):
            P[a, :len(pos)], S[a, :len(sg)] = pos, sg
        out.append((P, S))
    return out, acts


def character_basis_is_valid(blocks: list[tuple[np.ndarray, np.ndarray]], gens: np.ndarray, n: int) -> bool:
    """Verify what the block reduction needs, without appeal to character theory: within each block the columns
    have disjoint supports and no zero column; every column ``u`` of block ``chi`` satisfies ``pi(g) u = chi(g) u``
    for each generator ``g`` (``chi(g_r) = -1`` iff bit ``r`` of ``chi`` is set); and there are ``n`` columns.  Then
    columns of different blocks are orthogonal (``u^T v = (pi(g) u)^T (pi(g) v) = -u^T v`` for a ``g`` where the
    characters differ), so the columns are a basis, and ``u^T G v = 0`` across blocks for ``G`` commuting with the
    ``pi(g)`` (same argument)."""
    if sum(len(P) for P, _ in blocks) != n:
        return False
    for chi, (P, S) in enumerate(blocks):
        colid = np.full(n, -1, dtype=np.int64)
        sgn = np.zeros(n, dtype=np.int64)
        live = S != 0
        rows = np.broadcast_to(np.arange(len(P))[:, None], P.shape)[live]
        if len(P) and (not live.any(axis=1).all() or len(np.unique(P[live])) != int(live.sum())):
            return False
        colid[P[live]], sgn[P[live]] = rows, S[live]
        x = P[live]
        for r, g in enumerate(gens):
            factor = -1 if (chi >> r) & 1 else 1
            if not (np.array_equal(colid[g[x]], colid[x]) and np.array_equal(sgn[g[x]], factor * sgn[x])):
                return False
    return True


def _block_gram(G: np.ndarray, P: np.ndarray, S: np.ndarray, Gf: np.ndarray | None = None) -> np.ndarray:
    """``B^T G B`` for the ``+-1`` columns ``(P, S)``, exactly: in float64 (``Gf``, the float copy of ``G``) when
    every partial sum is an integer below ``2^53`` (float arithmetic on such integers is exact), else by int64
    gathers."""
    import scipy.sparse as sp

    m, h = P.shape
    if m == 0:
        return np.zeros((0, 0), dtype=np.int64)
    if int(np.abs(G).max()) * h * h * len(G) < 2**52:
        B = sp.csc_matrix((S.ravel().astype(float), (P.ravel(), np.repeat(np.arange(m), h))), shape=(len(G), m))
        X = np.asarray(B.T @ (G.astype(float) if Gf is None else Gf))  # B^T G, i.e. (G B)^T: G is symmetric
        return np.rint(np.asarray(B.T @ np.ascontiguousarray(X.T))).astype(np.int64)
    C = np.zeros((m, m), dtype=np.int64)
    for u in range(h):
        for w in range(h):
            C += (S[:, u, None] * S[None, :, w]) * G[P[:, u][:, None], P[:, w][None, :]]
    return C


def exactly_positive_definite(C: np.ndarray) -> bool:
    """Decide ``C > 0`` for a symmetric integer matrix, exactly: a float Cholesky factor of ``C - delta I`` is only a
    hint; with ``L`` its integer rounding at scale ``2^s``, the identity ``2^(2s) C = L L^T + E`` is formed in exact
    integer arithmetic (python-flint) and ``E`` must be strictly diagonally dominant with positive diagonal (then
    ``E > 0`` by Gershgorin, ``L L^T >= 0``, so ``C > 0``).  ``False`` means "not proved", never "proved not"."""
    import flint

    m = len(C)
    if m == 0:
        return True
    if not np.array_equal(C, C.T):
        return False
    Cf = C.astype(float)
    lam = float(np.linalg.eigvalsh(Cf)[0])
    if not lam > 0:
        return False
    try:
        Lf = np.linalg.cholesky(Cf - (lam / 2) * np.eye(m))
    except np.linalg.LinAlgError:
        return False
    s = max(0, math.ceil(math.log2(16 * m * m * max(1.0, float(np.abs(Lf).max())) / (lam / 2))) + 1)
    scaled = np.tril(Lf) * 2.0**s  # any integer L is a valid hint: rounding only has to be good, not exact
    L = np.rint(scaled).astype(np.int64).tolist() if np.abs(scaled).max() < 2**62 else \
        [[int(round(float(v))) for v in row] for row in scaled]
    Lm = flint.fmpz_mat(L)
    E = flint.fmpz_mat([[int(v) for v in row] for row in C]) * (2 ** (2 * s)) - Lm * Lm.transpose()
    rows = [[int(v) for v in row] for row in E.tolist()]
    return all(row[a] > sum(abs(v) for v in row) - abs(row[a]) for a, row in enumerate(rows))


def check_delsarte_certificate(cert: DelsarteCertificate) -> DelsarteCheck:
    """The exact check of the module docstring (integers, fractions and python-flint only; floats appear solely as
    hints inside :func:`exactly_positive_definite`)."""
    t0 = time.perf_counter()

    def fail(reason: str, **kw: bool) -> DelsarteCheck:
        flags = {"complete": False, "symmetric": False, "signs": False, "positive_definite": False} | kw
        return DelsarteCheck(**flags, blocks=(), ratio=Fraction(0), bound=0, seconds=time.perf_counter() - t0,
                             reason=reason)

    G, why = expand_gram(cert)
    if G is None:
        return fail(why)
    if not np.array_equal(G, G.T):
        return fail("G is not symmetric", complete=True)
    allowed = allowed_differences(cert.k)
    d, sums = difference_class_sums(cert.k, cert.index, G)
    bad = [c for c in (tuple(int(v) for v in dd) for dd in d[sums > 0]) if c not in allowed]
    if bad:
        return fail(f"difference class {bad[0]} (outside M_k + 0) sums to > 0", complete=True, symmetric=True)
    with threadpool_limits(limits=1, user_api="blas"):  # small dense blocks: threads only add contention
        return _check_invariant_blocks(cert, G, t0)


def _check_invariant_blocks(cert: DelsarteCertificate, G: np.ndarray, t0: float) -> DelsarteCheck:
    """The last steps of :func:`check_delsarte_certificate` (``G`` complete, symmetric, signs checked):
    ``H``-invariance (on the generators), the character blocks exactly positive definite, the ratio."""
    blocks, gens = _character_columns(cert.index)
    if not all(np.array_equal(G[np.ix_(h, h)], G) for h in gens):
        return DelsarteCheck(True, True, True, False, (), Fraction(0), 0, time.perf_counter() - t0,
                             "G does not commute with the 2-subgroup")
    sizes = tuple(len(P) for P, _ in blocks)
    Gf = G.astype(float)
    pd = character_basis_is_valid(blocks, gens, len(cert.index)) and all(
        exactly_positive_definite(_block_gram(G, P, S, Gf)) for P, S in blocks)
    trace = int(np.trace(G).item())
    total = int(G.sum())  # (int64: |entries| <= 2^62 / (64 n^2), checked by expand_gram)
    ratio = Fraction(total, trace) if trace > 0 else Fraction(0)
    bound = max(0, math.ceil(ratio))
    return DelsarteCheck(True, True, True, pd, sizes, ratio, bound, time.perf_counter() - t0,
                         "" if pd else "a character block is not proved positive definite")


# ---------------------------------------------------------------- finding a certificate (nothing here is trusted)

def pair_orbits(index: list[tuple[int, ...]] | tuple[tuple[int, ...], ...], chunk: int = 256) -> tuple[np.ndarray, int]:
    """The orbit id of every index pair ``(i, j)`` under coordinate permutations, negation and transposition
    (``G`` is symmetric), ids ``0 .. norb - 1``: the multiset of columns ``(s_j, t_j)`` is a complete invariant
    under permutations, so the id is the smallest sorted column code over the four sign/transpose variants."""
    A = np.array(index, dtype=np.int64)
    n = len(A)
    r = int(np.abs(A).max())
    b = 2 * r + 1
    code = np.empty((n, n), dtype=np.int64)
    for lo in range(0, n, chunk):
        S = np.repeat(A[lo:lo + chunk], n, axis=0)
        T = np.tile(A, (min(chunk, n - lo), 1))
        best = None
        for X, Y in ((S, T), (T, S), (-S, -T), (-T, -S)):
            c = _codes(np.sort((X + r) * b + (Y + r), axis=1), 0, b * b)
            best = c if best is None else np.minimum(best, c)
        code[lo:lo + chunk] = np.asarray(best).reshape(-1, n)
    uniq, inv = np.unique(code, return_inverse=True)
    return inv.reshape(n, n), len(uniq)


def symmetry_adapted_basis(orb: np.ndarray, norb: int, seed: int = 0) -> list[tuple[int, np.ndarray]]:
    """Numerical block diagonalisation of the matrices constant on the pair orbits: the eigenspaces of a random
    such matrix are irreducible submodules; two are of the same type iff a second random one couples them, and its
    coupling aligns their bases.  Returns ``(d, U)`` per type, ``U`` of shape ``(n, m, d)``: every invariant ``G`` is
    ``sum U (B kron I_d) U^T`` with ``B = U[:, :, 0]^T G U[:, :, 0]`` (``m x m``)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal(norb)[orb]
    w, V = np.linalg.eigh((X + X.T) / 2)
    del X
    cut = np.flatnonzero(np.diff(w) > 1e-8 * max(1.0, float(np.abs(w).max()))) + 1
    groups = np.split(V, cut, axis=1)
    Y = rng.standard_normal(norb)[orb]
    Y = (Y + Y.T) / 2
    types: list[list[int]] = []
    coupled: list[np.ndarray] = []  # Y applied to the first eigenspace of each type
    for gi, Vg in enumerate(groups):
        for t, YV in zip(types, coupled, strict=True):
            if YV.shape[1] == Vg.shape[1] and np.abs(Vg.T @ YV).max() > 1e-6:
                t.append(gi)
                break
        else:
            types.append([gi])
            coupled.append(Y @ Vg)
    out = []
    for t, YV in zip(types, coupled, strict=True):
        V0 = groups[t[0]]
        basis = [V0]
        for gi in t[1:]:
            W = groups[gi] @ (groups[gi].T @ YV)
            basis.append(W / np.linalg.norm(W[:, 0]))
        out.append((V0.shape[1], np.stack(basis, axis=1)))
    return out


def _difference_orbit_codes(A: np.ndarray, ri: np.ndarray, rj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each pair orbit (representatives ``ri, rj``): the code of its difference orbit (``min`` of the sorted
    ``d`` and sorted ``-d``) and the representative difference ``d``."""
    d = A[ri] - A[rj]
    r = int(np.abs(d).max())
    c = np.minimum(_codes(np.sort(d, axis=1), -r, 2 * r + 1), _codes(np.sort(-d, axis=1), -r, 2 * r + 1))
    return c, d


def _orbit_data(k: int, index: list[tuple[int, ...]]) -> dict[str, np.ndarray | int]:
    """Pair orbits, their representatives and sizes, the diagonal orbits, and per difference orbit outside
    ``M_k + {0}`` a row of orbit sizes (the class-sum constraint ``sum |O| x_O <= 0``)."""
    import scipy.sparse as sp

    A = np.array(index, dtype=np.int64)
    n = len(A)
    orb, norb = pair_orbits(index)
    _, first = np.unique(orb.ravel(), return_index=True)
    ri, rj = first // n, first % n
    sizes = np.bincount(orb.ravel(), minlength=norb)
    qcode, d = _difference_orbit_codes(A, ri, rj)
    allowed = allowed_differences(k)
    uq, qinv = np.unique(qcode, return_inverse=True)
    off = np.array([tuple(int(v) for v in d[np.flatnonzero(qinv == q)[0]]) not in allowed for q in range(len(uq))])
    rows = np.flatnonzero(off[qinv])
    W = sp.csr_matrix((sizes[rows].astype(float), (np.searchsorted(np.flatnonzero(off), qinv[rows]), rows)),
                      shape=(int(off.sum()), norb))
    diag = np.zeros(norb, dtype=bool)
    diag[orb[np.arange(n), np.arange(n)]] = True
    return {"orb": orb, "norb": norb, "ri": ri, "rj": rj, "sizes": sizes, "diag": diag, "W": W, "qinv": qinv,
            "off": off}


def delsarte_sdp(k: int, index: list[tuple[int, ...]], *, solver: str = "CLARABEL",
                 solver_opts: dict[str, object] | None = None,
                 log=lambda msg: None) -> tuple[dict[str, np.ndarray | int], np.ndarray, float, str]:
    """Maximise ``1^T G 1`` over invariant ``G >= 0`` with ``trace G = 1`` and every difference class outside
    ``M_k + {0}`` summing to ``<= 0``, in the block-diagonal form of :func:`symmetry_adapted_basis` (cvxpy).
    Returns the orbit data, the orbit values ``x`` (``G[i, j] = x[orb[i, j]]``), the optimum and the status."""
    import cvxpy as cp

    t0 = time.perf_counter()
    data = _orbit_data(k, index)
    orb, norb, sizes = data["orb"], int(data["norb"]), np.asarray(data["sizes"], dtype=float)
    log(f"{len(index)} vectors, {norb} pair orbits ({time.perf_counter() - t0:.0f} s)")
    blocks = symmetry_adapted_basis(np.asarray(orb), norb)
    log(f"blocks (irrep dim, multiplicity): {sorted((d, U.shape[1]) for d, U in blocks)} "
        f"({time.perf_counter() - t0:.0f} s)")
    diag = np.asarray(data["diag"])
    W = data["W"]
    rows: list[list[np.ndarray]] = [[], [], []]  # objective, trace, class sums: one piece per block
    Bs = []
    for _, U in blocks:
        K = _orbit_coefficients(U, data)  # x_O = <K_O, B>; built per block to bound memory
        rows[0].append(sizes @ K)
        rows[1].append(sizes[diag] @ K[diag])
        rows[2].append(np.asarray(W @ K))
        m = U.shape[1]
        Bs.append(cp.Variable((m, m), PSD=True))
        del K
    v = cp.hstack([cp.vec(B, order="C") for B in Bs])
    obj, tr, cls = (np.concatenate(r, axis=-1) for r in rows)
    prob = cp.Problem(cp.Maximize(obj @ v), [tr @ v == 1, cls @ v <= 0])
    load_native_imports()  # (a signal must not land inside the native solve's imports)
    prob.solve(solver=solver, **(solver_opts or {}))
    log(f"SDP {prob.status}, value {prob.value} ({time.perf_counter() - t0:.0f} s)")
    if prob.status not in ("optimal", "optimal_inaccurate") or v.value is None:
        raise SolverError(f"Delsarte SDP: status {prob.status!r}")
    x = sum(_orbit_coefficients(U, data) @ np.asarray(B.value).ravel() for (_, U), B in zip(blocks, Bs, strict=True))
    return data, np.asarray(x), float(prob.value), str(prob.status)


def _orbit_coefficients(U: np.ndarray, data: dict[str, np.ndarray | int]) -> np.ndarray:
    """``K[O] = sym(sum_l U[i_O, :, l] U[j_O, :, l]^T)`` flattened: the orbit value ``x_O = G[i_O, j_O]`` of
    ``G = U (B kron I) U^T`` is ``<K[O], B>`` for symmetric ``B``."""
    K = np.einsum("oal,obl->oab", U[np.asarray(data["ri"])], U[np.asarray(data["rj"])])
    return ((K + K.transpose(0, 2, 1)) / 2).reshape(len(K), -1)


def round_delsarte_certificate(k: int, index: list[tuple[int, ...]], data: dict[str, np.ndarray | int],
                               x: np.ndarray, *, denominator: int = 10**9,
                               margin: float = 1e-6) -> DelsarteCertificate:
    """An SDP solution made into an exact candidate: orbit values scaled to trace 1 and rounded over
    ``denominator``; a difference class outside ``M_k + {0}`` whose sum became positive is pushed back to ``<= 0``
    on its largest orbit; ``eta I`` added above the most negative eigenvalue (``+ margin``).  Nothing here is
    trusted: check with :func:`check_delsarte_certificate`."""
    orb = np.asarray(data["orb"])
    sizes, diag = np.asarray(data["sizes"]), np.asarray(data["diag"])
    qinv, off = np.asarray(data["qinv"]), np.asarray(data["off"])
    x = np.asarray(x, dtype=float) / float(sizes[diag] @ x[diag])
    xi = np.rint(x * denominator).astype(np.int64)
    for q in np.flatnonzero(off):
        members = np.flatnonzero(qinv == q)
        total = int(sizes[members] @ xi[members])
        if total > 0:
            big = members[np.argmax(sizes[members])]
            xi[big] -= -(-total // int(sizes[big]))
    blocks, _ = _character_columns(tuple(index))
    G = xi[orb]
    Gf = G.astype(float)
    lam = min(float(np.linalg.eigvalsh(_block_gram(G, P, S, Gf) / np.sqrt(np.outer(nrm, nrm)))[0])
              for P, S in blocks if len(P) for nrm in [np.abs(S).sum(1).astype(float)])
    xi[diag] += int(math.ceil(max(0.0, -lam) * 2 + margin * denominator))
    ri, rj = np.asarray(data["ri"]), np.asarray(data["rj"])
    reps = tuple((int(i), int(j), int(v)) for i, j, v in zip(ri, rj, xi, strict=True))
    return DelsarteCertificate(k, tuple(tuple(int(v) for v in t) for t in index), reps, denominator)


def solve_delsarte_certificate(k: int, radius: int = 2, max_norm2: int | None = None, *,
                               extra_orbits: tuple[tuple[int, ...], ...] = (),
                               denominator: int = 10**9, margin: float = 1e-6, solver: str = "CLARABEL",
                               solver_opts: dict[str, object] | None = None,
                               log=lambda msg: None) -> tuple[DelsarteCertificate, dict[str, object]]:
    """The whole search: :func:`delsarte_sdp` on :func:`symmetric_box` ``(k, radius, max_norm2, extra_orbits)``, then
    :func:`round_delsarte_certificate` (``denominator``, diagonal ``margin``: the margin costs about ``n margin`` of
    the trace, so large index sets need a small one); returns the (unchecked) certificate and what the SDP reported."""
    t0 = time.perf_counter()
    index = symmetric_box(k, radius, max_norm2, extra_orbits)
    data, x, value, status = delsarte_sdp(k, index, solver=solver, solver_opts=solver_opts, log=log)
    cert = round_delsarte_certificate(k, index, data, x, denominator=denominator, margin=margin)
    return cert, {"sdp_value": value, "sdp_status": status, "vectors": len(index), "pair_orbits": data["norb"],
                  "seconds": time.perf_counter() - t0}
