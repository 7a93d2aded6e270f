"""The sum-of-squares bound on one frequency block of the single-neuron objective, reduced by its phase symmetries.

By Lemma C.14 of Li, Liang, Shi, Song, Zhou, "Fourier Circuits in Neural Networks and Transformers" (arXiv:2402.09469;
Lemma 7.6 ff. of Morwani et al., arXiv:2311.07568 for ``k = 2``), with uniform ``q`` and ``tau`` every frequency
block of the class-weighted single-neuron objective is, in its own complex coordinates ``z_i = u_i-coordinate``,
a constant times the *block form* (:mod:`margintheory.symbolic.block_reduction`, docs/theory.md#frequency-blocks)::

    g_k(z_1, ..., z_k, z_w) = Re(conj(z_w) z_1 z_2 ... z_k),        z in C^(k+1) = R^(2k+2).

This module bounds ``max_{|z| = 1} g_k`` from above by a sum-of-squares (SOS) program solved with Clarabel.

Complex coordinates.  A real polynomial in ``(Re z, Im z)`` is a polynomial in ``z, conj(z)``; a monomial is
``z^a conj(z)^b``, stored as the tuple ``a + b`` of length ``2(k+1)``.  A real SOS ``sum_l q_l(Re z, Im z)^2`` is
``sum_{r,s} H_rs conj(m_r) m_s`` for the monomials ``m`` and a Hermitian PSD ``H``; when the polynomial has real
coefficients in these coordinates (``g_k`` does: it is invariant under ``z -> conj(z)``), ``Re H`` is another such
Gram matrix, so ``H`` is taken real symmetric.

Phase symmetry.  The torus ``T^k`` acts by ``z_i -> e^(i phi_i) z_i`` (``i <= k``), ``z_w -> e^(i (phi_1+...+phi_k))
z_w`` and leaves ``g_k`` and ``|z|`` invariant; ``z^a conj(z)^b`` has the character ``chi_i = a_i - b_i + a_w - b_w``.
Averaging a Gram matrix over the torus keeps it feasible and kills the entries between monomials of different
characters, so ``H`` is block diagonal by character (hundreds of blocks of size <= 8 at ``k = 6`` instead of one
``3060 x 3060`` matrix).  The reduction only shapes the search: the certificate returned is checked as a full
polynomial identity (:mod:`margintheory.certificate.checker`).

Relaxations (``h`` = half the degree):

* ``k`` odd (``g_k`` a form of even degree ``k + 1``, ``h = (k+1)/2``):
  ``gamma |z|^(2h) - g_k = sum_blocks m^T H m`` with the monomials of degree exactly ``h``;
* ``k`` even (odd degree, ``h = (k+2)/2``): ``gamma - g_k = sum_blocks m^T H m + lambda(z) (1 - |z|^2)`` with the
  monomials of degree ``<= h`` and a free character-0 multiplier ``lambda`` of degree ``<= 2h - 2`` (Putinar).

One conic program is solved (Clarabel, called directly so that the primal and dual iterates are available for
the KKT checks of the tests): ``min gamma``.  Its Gram blocks are then shifted by a positive definite certificate
of a small constant, rounded to rationals and projected exactly by :mod:`margintheory.certificate.rational_sos`.
Every solver status is checked; anything but ``Solved`` raises :class:`~margintheory.errors.SolverError`.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sps

from margintheory.certificate.checker import block_form, conj_times, norm_power
from margintheory.errors import InputError, RefusedError, SolverError
from margintheory.runtime.process import load_native_imports, run_isolated

Monomial = tuple[int, ...]
#: statuses of Clarabel accepted as a solution (anything else raises :class:`SolverError`)
ACCEPTED = ("Solved",)
#: largest ``k`` whose relaxation is ever built (the memory estimate refuses most of the way there)
MAX_K = 12
#: memory of the conic solve above the interpreter and its libraries (what the budget ``max_memory`` bounds).  The
#: relaxation depends on ``k`` alone, so its peak is measured per ``k`` (``benchmarks/bench_estimates.py``, peak
#: resident size above the interpreter; setup and the first factorisation, which every later iteration reuses):
#: k <= 5 under 8 MB, k = 6: 40 MB, k = 7: 70 MB, k = 8: 1.48 GiB, k = 9: 5.67 GiB (the homogeneous relaxation
#: of odd k fills its factor far more than the even one with as many variables: 1.15x the variables of k = 8, 3.8x
#: the memory).  The estimate is the measured peak with :data:`MEASURED_HEADROOM`; beyond k = 9 (no machine here
#: holds it) it is extrapolated from the measured ``k`` of the same parity as ``(variables)^GROWTH``, the
#: factorisation's fill-in growing faster than the variables.
MEASURED_BYTES = {1: 8e6, 2: 8e6, 3: 8e6, 4: 8e6, 5: 8e6, 6: 40e6, 7: 70e6, 8: 1.59e9, 9: 6.09e9}
MEASURED_HEADROOM = 1.15
BYTES_BASE = 16 * 2**20
GROWTH = 1.4
#: run time of the relaxation (build, Clarabel, exact rounding) per ``k``, measured on a loaded 2-core x86-64
#: machine: k = 8: 12 iterations in 110 s (plus 25 s of set-up), k = 9: 443 s per iteration, 12 iterations;
#: beyond, extrapolated as the memory (the factorisation's work grows at least as its size)
MEASURED_SECONDS = {1: 1.0, 2: 1.0, 3: 1.0, 4: 2.0, 5: 3.0, 6: 10.0, 7: 15.0, 8: 150.0, 9: 5500.0}


def compositions(n: int, total: int) -> Iterator[tuple[int, ...]]:
    """All ``e in N^n`` with ``sum e = total``."""
    if n == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in compositions(n - 1, total - first):
            yield (first, *rest)


def complex_monomials(n: int, degree: int, up_to: bool) -> list[Monomial]:
    """Monomials ``z^a conj(z)^b`` of total degree ``degree`` (or ``<= degree``) in ``n`` complex variables."""
    out: list[Monomial] = []
    for d in range(degree + 1) if up_to else (degree,):
        for da in range(d + 1):
            for a in compositions(n, da):
                for b in compositions(n, d - da):
                    out.append(a + b)
    return out


def torus_character(m: Monomial, k: int) -> tuple[int, ...]:
    """The character of ``z^a conj(z)^b`` under the phase torus of ``g_k`` (module docstring)."""
    n = k + 1
    a, b = m[:n], m[n:]
    return tuple(a[i] - b[i] + a[k] - b[k] for i in range(k))


def conjugate(m: Monomial) -> Monomial:
    """``conj(z^a conj(z)^b) = z^b conj(z)^a``."""
    n = len(m) // 2
    return m[n:] + m[:n]


@dataclass
class BlockStructure:
    """The monomial bases (grouped by torus character) and the multiplier support of the relaxation for ``k``."""

    k: int
    homogeneous: bool
    half_degree: int
    blocks: list[list[Monomial]]
    multiplier: list[Monomial] = field(default_factory=list)

    @property
    def nvars(self) -> int:
        return self.k + 1

    @property
    def gram_entries(self) -> int:
        """Number of scalar variables in the Gram blocks (upper triangles)."""
        return sum(len(b) * (len(b) + 1) // 2 for b in self.blocks)

    @property
    def variables(self) -> int:
        return self.gram_entries + len(self.multiplier) + 1

    def gamma_polynomial(self) -> dict[Monomial, Fraction]:
        """The polynomial multiplying ``gamma``: ``|z|^(2h)`` (forms) or ``1`` (Putinar)."""
        n = self.nvars
        return norm_power(n, self.half_degree) if self.homogeneous else {tuple([0] * (2 * n)): Fraction(1)}


def relaxation_degree(k: int) -> tuple[bool, int]:
    """``(homogeneous, h)`` of the relaxation of ``g_k`` (module docstring)."""
    if k % 2 == 1:
        return True, (k + 1) // 2
    return False, (k + 2) // 2


#: :func:`estimate_variables` for every supported ``k``, counted once (the count itself enumerates the basis: about
#: 10 s for ``k = 10`` and 45 s for ``k = 11``, too slow for an up-front check); a test re-counts ``k <= 7``
VARIABLES = {1: 4, 2: 28, 3: 30, 4: 258, 5: 283, 6: 3842, 7: 4414, 8: 57837, 9: 66379, 10: 1039893, 11: 1199181}


def estimate_variables(k: int) -> int:
    """Number of conic variables of the relaxation for ``k``, computed by counting (no polynomial is expanded)."""
    homogeneous, h = relaxation_degree(k)
    sizes: dict[tuple[int, ...], int] = defaultdict(int)
    for m in _iter_basis(k, homogeneous, h):
        sizes[torus_character(m, k)] += 1
    mult = 0 if homogeneous else count_invariant_monomials(k, 2 * h - 2)
    # conjugation pairing (ConicProgram): only one of the blocks chi, -chi carries variables
    gram = sum(s * (s + 1) // 2 for c, s in sizes.items() if c >= tuple(-x for x in c))
    return gram + (mult + 1) // 2 + 1


def count_invariant_monomials(k: int, degree: int) -> int:
    """Number of character-0 monomials of degree ``<= degree`` (the multiplier's support), by counting: character 0
    means ``a_i - b_i = -d`` for ``i <= k`` and ``a_w - b_w = d``; a pair with difference ``e`` has degree
    ``|e| + 2t``, so the count is ``sum_d C(floor((degree - (k+1)|d|)/2) + k + 1, k + 1)``."""
    total, d = 0, 0
    while (k + 1) * d <= degree:
        c = math.comb((degree - (k + 1) * d) // 2 + k + 1, k + 1)
        total += c if d == 0 else 2 * c
        d += 1
    return total


def _iter_basis(k: int, homogeneous: bool, h: int) -> Iterator[Monomial]:
    n = k + 1
    for d in (h,) if homogeneous else range(h + 1):
        for da in range(d + 1):
            for a in compositions(n, da):
                for b in compositions(n, d - da):
                    yield a + b


def basis_size(k: int) -> int:
    """Number of monomials in the (unreduced) basis: ``C(2n+h-1, h)`` or ``C(2n+h, h)``, ``n = k + 1``."""
    homogeneous, h = relaxation_degree(k)
    n2 = 2 * (k + 1)
    return math.comb(n2 + h - 1, h) if homogeneous else math.comb(n2 + h, h)


def supported(k: int) -> bool:
    """Whether the relaxation for ``k`` is built at all (``k <= MAX_K`` and at most 2 000 000 basis monomials: that
    is ``k <= 11``); beyond, no memory budget would make it available."""
    return k <= MAX_K and basis_size(k) <= 2_000_000


def largest_supported_k() -> int:
    """The largest ``k`` of :func:`supported` (11)."""
    return max(k for k in range(1, MAX_K + 1) if supported(k))


def _extrapolated(table: dict[int, float], k: int, variables: float) -> float:
    """``table[k]``, or the largest measured ``k`` of the same parity scaled by ``(variables)^GROWTH``."""
    if k in table:
        return table[k]
    ref = max(j for j in table if j % 2 == k % 2)
    return table[ref] * (variables / VARIABLES[ref]) ** GROWTH


def estimate_memory(k: int) -> int:
    """Peak bytes of building and solving the relaxation for ``k`` (measured per ``k``, :data:`MEASURED_BYTES`)."""
    if not supported(k):
        return 2**62
    variables = VARIABLES[k] if k in VARIABLES else estimate_variables(k)
    return int(BYTES_BASE + MEASURED_HEADROOM * _extrapolated(MEASURED_BYTES, k, variables))


def estimate_seconds(k: int) -> float:
    """Run time of building, solving and rounding the relaxation for ``k`` (:data:`MEASURED_SECONDS`)."""
    if not supported(k):
        return math.inf
    variables = VARIABLES[k] if k in VARIABLES else estimate_variables(k)
    return _extrapolated(MEASURED_SECONDS, k, variables)


def memory_lower_bound(k: int) -> int:
    """A cheap lower bound of :func:`estimate_memory` (every pair of mirrored basis monomials is at least one Gram
    variable; the measured ``k`` need no enumeration)."""
    if not supported(k):
        return 2**62
    return estimate_memory(k) if k in VARIABLES else int(BYTES_BASE + _extrapolated(MEASURED_BYTES, k,
                                                                                     basis_size(k) // 2))


def require_supported(k: int) -> None:
    """:class:`RefusedError` (``parameter="certificate"``: the caller may do without it) for a ``k`` beyond
    :func:`largest_supported_k`."""
    if not supported(k):
        raise RefusedError(f"the proved upper bound (the block SOS relaxation of the single-neuron problem) is "
                           f"available for k <= {largest_supported_k()} only, not k = {k}", parameter="certificate")


def require_memory(k: int, max_memory: int, max_seconds: float | None = None) -> int:
    """The estimate for ``k``, or :class:`RefusedError` (one line, with the estimate) when it exceeds the budget
    (``max_memory``; and ``max_seconds`` when given).

    A ``k`` the relaxation does not support is refused first, naming ``parameter="certificate"`` (the caller may do
    without the certificate); the cheap lower bound is tried before the full estimate, so that hopeless sizes are
    refused without enumerating their bases."""
    from margintheory.runtime.budget import Estimate, memory_refusal, require

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    require_supported(k)
    low = memory_lower_bound(k)
    est = low if low > max_memory else estimate_memory(k)
    what = f"the block SOS relaxation for k = {k}"
    if est > max_memory:
        exc = memory_refusal(what, est, max_memory, at_least=est == low and k not in VARIABLES)
        if exc.parameter is None:  # beyond this machine: no budget helps, only doing without the proved bound
            exc.parameter = "certificate"
        raise exc
    require(Estimate(what, est, estimate_seconds(k)), max_memory, max_seconds)  # (and the address-space limit)
    return est


def relaxation_structure(k: int) -> BlockStructure:
    """Bases grouped by torus character, and the multiplier support (character-0 monomials) for ``k``."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InputError(f"k must be an integer in 1..{MAX_K}, got {k!r}")
    homogeneous, h = relaxation_degree(k)
    groups: dict[tuple[int, ...], list[Monomial]] = defaultdict(list)
    for m in _iter_basis(k, homogeneous, h):
        groups[torus_character(m, k)].append(m)
    blocks = [groups[c] for c in sorted(groups)]
    mult = [] if homogeneous else [m for m in complex_monomials(k + 1, 2 * h - 2, True)
                                   if not any(torus_character(m, k))]
    return BlockStructure(k, homogeneous, h, blocks, mult)


# -- the conic program -------------------------------------------------------------------------------------------


@dataclass
class ConicProgram:
    """Coefficient matching ``A_H svec(H) + A_lam lam - a_gamma gamma = -f`` over the monomials ``keys``.

    Conjugation pairing: the block of character ``-chi`` is the mirror image (``m -> conj(m)``) of the block of
    ``chi``; since the target has real coefficients, averaging a solution with its mirror keeps it feasible, so the
    mirror block is given the *same* Gram matrix (in the conjugated basis) and only ``rep_blocks`` carry
    variables; multiplier coefficients of ``nu`` and ``conj(nu)`` are shared the same way.  Rows that became exact
    duplicates are dropped.  :func:`grams_from_svec` expands a solution back to every block.
    """

    structure: BlockStructure
    keys: list[Monomial]
    A_H: sps.csr_matrix
    A_lam: sps.csr_matrix
    a_gamma: np.ndarray
    f: np.ndarray
    rep_blocks: list[int]
    mirrors: dict[int, tuple[int, list[int]]]
    lam_vars: list[Monomial]

    @property
    def n_equations(self) -> int:
        return len(self.keys)


def _mirror_map(structure: BlockStructure) -> tuple[list[int], dict[int, tuple[int, list[int]]]]:
    """Representative blocks and, for each one with a distinct mirror, ``(mirror index, sigma)`` with
    ``mirror_basis[sigma[r]] = conj(rep_basis[r])``."""
    where = {m: (b, r) for b, blk in enumerate(structure.blocks) for r, m in enumerate(blk)}
    reps, mirrors, seen = [], {}, set()
    for b, blk in enumerate(structure.blocks):
        if b in seen:
            continue
        mb = where[conjugate(blk[0])][0]
        reps.append(b)
        seen.add(b)
        if mb != b:
            seen.add(mb)
            mirrors[b] = (mb, [where[conjugate(m)][1] for m in blk])
    return reps, mirrors


def build_program(structure: BlockStructure, target: dict[Monomial, float]) -> ConicProgram:
    """The coefficient-matching equations of ``sum m^T H m (+ lam (1 - |z|^2)) = gamma N - target``.

    ``svec`` is Clarabel's scaled upper triangle (column-major, off-diagonal entries times ``sqrt 2``), so an
    off-diagonal variable ``x`` stands for ``H_rs = H_sr = x / sqrt 2`` and contributes
    ``x / sqrt 2 (conj(m_r) m_s + conj(m_s) m_r)`` (and the conjugates of both through the mirror block).
    ``target`` must have real coefficients in ``z, conj(z)`` (``c(conj mu) = c(mu)``).
    """
    index: dict[Monomial, int] = {}

    def key(m: Monomial) -> int:
        if m not in index:
            index[m] = len(index)
        return index[m]

    reps, mirrors = _mirror_map(structure)
    rows, cols, vals = [], [], []
    col = 0
    inv_sqrt2 = 1.0 / math.sqrt(2.0)
    for b in reps:
        blk = structure.blocks[b]
        twin = b in mirrors
        for j, ms in enumerate(blk):
            for i in range(j + 1):
                mr = blk[i]
                monos = [conj_times(mr, ms)] if i == j else [conj_times(mr, ms), conj_times(ms, mr)]
                if twin:
                    monos += [conjugate(m) for m in monos]
                w = 1.0 if i == j else inv_sqrt2
                for m in monos:
                    rows.append(key(m))
                    cols.append(col)
                    vals.append(w)
                col += 1
    lam_vars, (lrows, lcols, lvals) = _multiplier_columns(structure, key)
    gamma_poly = structure.gamma_polynomial()
    for m in list(gamma_poly) + list(target):
        key(m)
    N = len(index)
    A_H = sps.csr_matrix((vals, (rows, cols)), shape=(N, col))
    A_lam = sps.csr_matrix((lvals, (lrows, lcols)), shape=(N, len(lam_vars)))
    a_gamma = np.zeros(N)
    for m, cg in gamma_poly.items():
        a_gamma[index[m]] = float(cg)
    f = np.zeros(N)
    for m, ct in target.items():
        f[index[m]] = float(ct)
    keys = sorted(index, key=index.__getitem__)
    keep = _distinct_rows(keys, index, sps.hstack([A_H, A_lam, a_gamma[:, None], f[:, None]]).tocsr())
    return ConicProgram(structure, [keys[i] for i in keep], A_H[keep], A_lam[keep], a_gamma[keep], f[keep], reps,
                        mirrors, lam_vars)


def _multiplier_columns(structure: BlockStructure, key: Callable[[Monomial], int]
                        ) -> tuple[list[Monomial], tuple[list[int], list[int], list[float]]]:
    """The columns of the multiplier ``lam (1 - |z|^2)`` (one per real monomial pair of ``lam``): its monomials
    ``m`` with ``+1`` and ``m |z_var|^2`` with ``-1``, as (the variables, (rows, columns, values))."""
    n = structure.nvars
    lam_vars = [m for m in structure.multiplier if m <= conjugate(m)]
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for c, m0 in enumerate(lam_vars):
        for m in {m0, conjugate(m0)}:
            rows.append(key(m))
            cols.append(c)
            vals.append(1.0)
            for var in range(n):
                shifted = list(m)
                shifted[var] += 1
                shifted[n + var] += 1
                rows.append(key(tuple(shifted)))
                cols.append(c)
                vals.append(-1.0)
    return lam_vars, (rows, cols, vals)


def _distinct_rows(keys: list[Monomial], index: dict[Monomial, int], M: sps.csr_matrix) -> list[int]:
    """Rows to keep: the row of ``conj(mu)`` is dropped when it equals the row of ``mu`` exactly."""
    keep = []
    for i, m in enumerate(keys):
        c = conjugate(m)
        j = index.get(c, i)
        if j < i:
            a, b = M.getrow(i), M.getrow(j)
            if a.nnz == b.nnz and (a != b).nnz == 0:
                continue
        keep.append(i)
    return keep


@dataclass
class ConicSolution:
    """One Clarabel solve: primal ``x``, slack ``s``, dual ``z`` and the problem data ``(A, b, q, cones)``."""

    status: str
    x: np.ndarray
    s: np.ndarray
    z: np.ndarray
    A: sps.csc_matrix
    b: np.ndarray
    q: np.ndarray
    cones: list[tuple[str, int]]
    iterations: int
    seconds: float


def _clarabel_cones(cones: list[tuple[str, int]]) -> list:
    import clarabel

    kinds = {"zero": clarabel.ZeroConeT, "nonneg": clarabel.NonnegativeConeT, "psd": clarabel.PSDTriangleConeT}
    return [kinds[kind](dim) for kind, dim in cones]


def solve_conic(q: np.ndarray, A: sps.spmatrix, b: np.ndarray, cones: list[tuple[str, int]], *,
                tol: float = 1e-12, max_iter: int = 200, time_limit: float | None = None) -> ConicSolution:
    """``min q.x  s.t.  A x + s = b, s in cones`` with Clarabel; the status is checked (``SolverError`` otherwise).

    ``cones``: ``("zero", m)``, ``("nonneg", m)`` or ``("psd", n)`` (scaled upper triangle of an ``n x n`` block).
    """
    import clarabel

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = tol
    settings.tol_gap_rel = tol
    settings.tol_feas = tol
    settings.max_iter = max_iter
    if time_limit is not None:
        settings.time_limit = float(time_limit)
    A = sps.csc_matrix(A)
    t0 = time.perf_counter()
    load_native_imports()  # (a signal must not land inside the native solve's imports)
    status, x, s, z, iterations = run_isolated(_clarabel_solve, np.asarray(q, dtype=float), A,
                                               np.asarray(b, dtype=float), cones, settings)
    if status not in ACCEPTED:
        raise SolverError(f"block SOS relaxation: Clarabel returned status {status} after {iterations} "
                          "iterations; no bound")
    return ConicSolution(status, x, s, z, A, np.asarray(b, float), np.asarray(q, float), cones, iterations,
                         time.perf_counter() - t0)


def _clarabel_solve(q: np.ndarray, A: sps.csc_matrix, b: np.ndarray, cones: list[tuple[str, int]],
                    settings: object) -> tuple[str, np.ndarray, np.ndarray, np.ndarray, int]:
    """One Clarabel solve (run in a child process by :func:`solve_conic`: an allocation failure in Rust aborts the
    process it runs in): status, ``x``, ``s``, ``z``, iterations."""
    import clarabel

    P = sps.csc_matrix((A.shape[1], A.shape[1]))
    sol = clarabel.DefaultSolver(P, q, A, b, _clarabel_cones(cones), settings).solve()
    return str(sol.status), np.asarray(sol.x), np.asarray(sol.s), np.asarray(sol.z), int(sol.iterations)


def _psd_cones(prog: ConicProgram) -> list[tuple[str, int]]:
    sizes = [len(prog.structure.blocks[b]) for b in prog.rep_blocks]
    return [("nonneg", 1) if s == 1 else ("psd", s) for s in sizes]


def smat(v: np.ndarray, n: int) -> np.ndarray:
    """Inverse of ``svec``: the symmetric ``n x n`` matrix (off-diagonal entries divided by ``sqrt 2``)."""
    M = np.zeros((n, n))
    pos = 0
    for j in range(n):
        for i in range(j + 1):
            M[i, j] = M[j, i] = v[pos] if i == j else v[pos] / math.sqrt(2.0)
            pos += 1
    return M


def minimise_gamma(prog: ConicProgram, **opts) -> tuple[float, ConicSolution]:
    """Phase 1: ``min gamma`` (variables ``[gamma, svec H..., lam...]``)."""
    nH, nl = prog.A_H.shape[1], prog.A_lam.shape[1]
    eq = sps.hstack([-prog.a_gamma[:, None], prog.A_H, prog.A_lam])
    psd = sps.hstack([sps.csr_matrix((nH, 1)), -sps.eye(nH), sps.csr_matrix((nH, nl))])
    A = sps.vstack([eq, psd])
    b = np.concatenate([-prog.f, np.zeros(nH)])
    q = np.zeros(1 + nH + nl)
    q[0] = 1.0
    sol = solve_conic(q, A, b, [("zero", prog.n_equations)] + _psd_cones(prog), **opts)
    return float(sol.x[0]), sol


def grams_from_svec(prog: ConicProgram, h: np.ndarray) -> list[np.ndarray]:
    """The Gram blocks of every block (mirrors expanded) from the stacked ``svec`` vector of the representatives."""
    out: list[np.ndarray] = [np.zeros((0, 0))] * len(prog.structure.blocks)
    pos = 0
    for b in prog.rep_blocks:
        s = len(prog.structure.blocks[b])
        m = s * (s + 1) // 2
        G = smat(h[pos:pos + m], s)
        out[b] = G
        if b in prog.mirrors:
            mb, sigma = prog.mirrors[b]
            Gm = np.empty_like(G)
            Gm[np.ix_(sigma, sigma)] = G
            out[mb] = Gm
        pos += m
    return out


def multiplier_from_solution(prog: ConicProgram, lam: np.ndarray) -> np.ndarray:
    """The multiplier coefficients of every monomial of ``structure.multiplier`` (conjugates share a value)."""
    value = {}
    for m, v in zip(prog.lam_vars, lam, strict=True):
        value[m] = value[conjugate(m)] = float(v)
    return np.array([value[m] for m in prog.structure.multiplier])


@dataclass
class BlockSOSSolution:
    """Float solution of the relaxation of ``g_k`` (phase 1) with the slack ``s`` of the PSD cones as Gram blocks
    (an interior-point slack lies inside the cone; the equality residual is what the exact projection removes)."""

    k: int
    structure: BlockStructure
    program: ConicProgram
    gamma: float
    grams: list[np.ndarray]
    multiplier: np.ndarray
    solution: ConicSolution
    seconds: float

    @property
    def status(self) -> str:
        return self.solution.status


def solve_block_sos(k: int, *, max_memory: int = 2 * 2**30, time_limit: float | None = None) -> BlockSOSSolution:
    """``min gamma`` for ``g_k`` (module docstring); refuses up front what would exceed ``max_memory``."""
    require_memory(k, max_memory)
    t0 = time.perf_counter()
    structure = relaxation_structure(k)
    target = {m: float(c) for m, c in block_form(k).items()}
    prog = build_program(structure, target)
    gamma, sol = minimise_gamma(prog, time_limit=time_limit)
    if not (gamma > 0 and math.isfinite(gamma)):
        raise SolverError(f"block SOS relaxation for k = {k}: the solver returned gamma = {gamma!r}")
    n_eq, nH = prog.n_equations, prog.A_H.shape[1]
    grams = grams_from_svec(prog, sol.s[n_eq:n_eq + nH])
    lam = multiplier_from_solution(prog, np.asarray(sol.x[1 + nH:]))
    return BlockSOSSolution(k, structure, prog, gamma, grams, lam, sol, time.perf_counter() - t0)


# -- KKT residuals (used by the tests, reported by the certificate) ------------------------------------------------


def _cone_slices(cones: list[tuple[str, int]]) -> Iterator[tuple[str, int, slice]]:
    pos = 0
    for kind, dim in cones:
        size = dim * (dim + 1) // 2 if kind == "psd" else dim
        yield kind, dim, slice(pos, pos + size)
        pos += size


def cone_violation(v: np.ndarray, cones: list[tuple[str, int]], dual: bool = False) -> float:
    """How far ``v`` is from the cone product (its dual with ``dual=True``; the zero cone's dual is free)."""
    worst = 0.0
    for kind, dim, sl in _cone_slices(cones):
        part = v[sl]
        if kind == "zero":
            worst = max(worst, 0.0 if dual else float(np.abs(part).max(initial=0.0)))
        elif kind == "nonneg":
            worst = max(worst, float(max(0.0, -part.min(initial=0.0))))
        else:
            worst = max(worst, float(max(0.0, -np.linalg.eigvalsh(smat(part, dim))[0])))
    return worst


def kkt_residuals(sol: ConicSolution) -> dict[str, float]:
    """Primal / dual feasibility and complementarity of a conic solution (as cvxpy's solver tests check them):
    ``|A x + s - b|``, ``dist(s, K)``, ``|A^T z + q|``, ``dist(z, K*)``, ``|s . z|`` and the duality gap."""
    A, x, s, z, b, q = sol.A, sol.x, sol.s, sol.z, sol.b, sol.q
    scale = 1.0 + max(float(np.abs(b).max(initial=0.0)), float(np.abs(q).max(initial=0.0)))
    return {
        "primal_residual": float(np.abs(A @ x + s - b).max()) / scale,
        "primal_cone": cone_violation(s, sol.cones) / scale,
        "dual_residual": float(np.abs(A.T @ z + q).max()) / scale,
        "dual_cone": cone_violation(z, sol.cones, dual=True) / scale,
        "complementarity": abs(float(s @ z)) / scale,
        "duality_gap": abs(float(q @ x + b @ z)) / (1.0 + abs(float(q @ x))),
    }


def random_invariant_target(k: int, rng: np.random.Generator, terms: int = 4) -> dict[Monomial, float]:
    """A random real polynomial invariant under the phase torus of ``g_k``, of the relaxation's degree: random
    character-0 monomials ``mu`` with coefficients ``c (mu + conj mu)`` (random instances for the solver tests)."""
    homogeneous, h = relaxation_degree(k)
    degree = 2 * h if homogeneous else 2 * h - 1
    pool = [m for m in complex_monomials(k + 1, degree, not homogeneous) if not any(torus_character(m, k))]
    out: dict[Monomial, float] = defaultdict(float)
    for i in rng.choice(len(pool), size=min(terms, len(pool)), replace=False):
        m, c = pool[int(i)], float(rng.normal())
        out[m] += c
        out[conjugate(m)] += c
    return dict(out)


__all__ = ["ACCEPTED", "BlockSOSSolution", "BlockStructure", "ConicProgram", "ConicSolution",
           "build_program", "estimate_memory", "estimate_seconds", "kkt_residuals", "minimise_gamma",
           "random_invariant_target", "relaxation_structure", "require_memory", "solve_block_sos", "solve_conic"]
