"""The class-weighted single-neuron problem as a quartic form on the sphere, bounded by its first-level
sum-of-squares certificate: solved by SCS, rounded to rationals and proved in exact integer arithmetic
(docs/theory.md#quartic-sos).

Write ``G`` for the signed matrix of the weights (``G[x, c] = [c = y(x)] q(x) sum_c' tau(x, c') - q(x) tau(x, c)``,
taken **exactly** from the float64 arrays, so the bound is for the arrays as given), ``X`` and ``C`` for the
inputs and labels it uses, ``z_x = u_1[x_1] + ... + u_k[x_k]`` and ``M_c(u) = sum_x G[x, c] z_x^k``.  The
objective of one unit neuron is ``F(u, w) = <w, M(u)>`` and ``Psi(q, tau) = max_(|u|^2 + |w|^2 = 1) F``
(docs/theory.md#class-weighted-scale).  Only the coordinates of ``u`` that some input of ``X`` touches and the
coordinates of ``w`` on ``C`` can help (the others add to the norm and not to ``F``), so the form is written in
those.  Two quartic forms:

* ``k = 2`` (``w`` eliminated): ``Psi = c_2 max_(|u| = 1) |M(u)|`` with ``c_2^2 = 4/27``, so
  ``Psi^2 = (4/27) max_(|u| = 1) f``, ``f(u) = |M(u)|^2 = sum_c M_c(u)^2``, a quartic form in the ``n_u`` used
  coordinates of ``u``;
* ``k = 3``: ``F`` itself is a quartic form in ``(u, w)`` (``n_u + |C|`` variables) and ``Psi = max_(|x| = 1) F``.

**The certificate.**  For monomials ``m(x)`` of degree 2 (``n (n + 1) / 2`` of them), a rational ``gamma`` and a
rational symmetric ``P``::

    gamma |x|^4 - f(x) = m(x)^T P m(x)        (coefficient by coefficient),        P >= 0,

so ``f <= gamma`` on the unit sphere.  SCS (a first-order conic solver: one ``m x m`` eigendecomposition per
iteration, the coefficient-matching equations factored once -- each Gram entry enters one equation) solves
``min gamma``; measured on random weights the first level is tight to the solver's accuracy (relative ``1e-9`` to
``1e-11`` at ``(5, 2)``, ``(7, 2)``, ``(11, 2)``, ``(5, 3)``, ``(7, 3)``).  Then, all in integers:

1. shift: ``P += delta D`` and ``gamma += delta`` with ``D = diag(1 on x_i^2, 2 on x_i x_j)`` (an exact Gram
   matrix of ``|x|^4``; ``D >= I``), room for the next steps;
2. round ``P`` and ``gamma`` to the grid ``2^-56`` of the working scale;
3. project exactly onto the coefficient equations: the residual of each monomial is spread evenly over its Gram
   positions (1, 2, 3, 4 or 6 of them; the orthogonal projection, since each position enters one equation);
4. prove ``P >= 0``: a float Cholesky factor of ``P - eta I`` rounded to integers ``L`` (scaled by ``2^rho``) and
   the exact remainder ``E = P - eta I - L L^T``; ``|E|_F <= eta`` (compared in integers) gives
   ``P = L L^T + (eta I + E)``, a sum of two positive semidefinite matrices.  One integer matrix product
   (python-flint), not an exact ``LDL^T`` of a ``406 x 406`` rational matrix (minutes).

Before step 2 the shifted point is polished by alternating projections (float) onto the coefficient equations and
onto ``P >= (delta / 2) I`` (:func:`polish`), and the claim starts at ``max(gamma_SCS, f(x_low))`` -- the value
the local ascent attains, below which no certificate exists -- plus ``delta``: SCS stopped early sits on a primal
infeasible point whose ``gamma`` can lie below the maximum.  If a step fails, the excess over that start grows
16-fold, or doubles and is raised by the float eigenvalue deficit (at most :data:`MAX_TRIES` tries).
:func:`check_certificate` re-checks a certificate from scratch (identity and decomposition) and is what the bound
rests on.  The upper end: ``U = ceil_sqrt(4 gamma / 27)`` (``k = 2``) or ``U = gamma`` (``k = 3``), an exact
rational ``>= Psi``.

**Stages** (:func:`_staged_certificate`).  Weights close to translation-invariant ones (uniform plus ``1e-9`` to
``1e-4`` noise) make the program nearly degenerate (the invariant maximisers form a continuum): SCS reaches
``1e-6`` in a hundred iterations and its ``1e-10`` tolerance only at its 20 000-iteration limit (``(7, 2)``: 488 s,
where random weights take 1.5 s).  SCS therefore runs in stages of :data:`STAGE_ITERATIONS` cumulative iterations,
each continuing the last (warm start) and each certified exactly; the run stops at SCS's tolerance, at a proved
relative gap of :data:`TARGET_GAP`, or after :data:`EFFORT_ITERATIONS` (what generic weights take) with a proved gap
within :data:`ACCEPT_GAP` that the last stage shrank less than :data:`PROGRESS`-fold (a stalled, near-degenerate
run; a converging one goes on, to twice that effort at most); a time limit stops it between stages and inside SCS.

**The lower end** is the unit neuron of a local maximiser of ``|M(u)| / |u|^k`` (BFGS from random points and from
the point read off SCS's dual: the moment matrix of an exact relaxation is ``m(x*) m(x*)^T``), evaluated on the
arrays by the direct sum (the caller).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import combinations_with_replacement
from typing import Any

import numpy as np
import scipy.sparse as sps

from margintheory.errors import InputError, SolverError

#: SCS's primal/dual tolerances (absolute and relative, on the problem scaled so that gamma is near 1)
SCS_EPS = 1e-10
#: SCS's iteration limit (measured: 150 to 400 iterations at the target sizes)
SCS_MAX_ITERS = 20_000
#: SCS runs in stages (cumulative iterations), each certified exactly (:func:`_staged_certificate`)
STAGE_ITERATIONS = (150, 300, 600, 1200, 2400, 4800, SCS_MAX_ITERS)
#: a stage whose proved relative gap is within this ends the run
TARGET_GAP = 1e-9
#: after this many iterations a proved relative gap within :data:`ACCEPT_GAP` ends the run (the effort cap: the
#: iterations generic weights take, :data:`SCS_ITERATIONS`)
EFFORT_ITERATIONS = 300
ACCEPT_GAP = 5e-7
#: ... and only when the last stage shrank the gap less than this factor (SCS converging well goes on, to twice
#: :data:`EFFORT_ITERATIONS` at most)
PROGRESS = 10.0
#: SCS's time limit is the time left, but at least this (a stage must return a point to certify)
MIN_SCS_SECONDS = 0.05
#: the first shift for a point SCS did not converge on (:func:`certify`)
ROUGH_SHIFT = 2.0**-28
#: first shift ``delta`` relative to ``gamma``; doubled and raised by the eigenvalue deficit per failed try
FIRST_SHIFT = 2.0**-32
MAX_TRIES = 6
#: alternating projections per try before the exact rounding (:func:`polish`): each one ``m x m`` eigendecomposition
POLISH_ROUNDS = 20
#: the polish stops when a round does not shrink the eigenvalue deficit (a larger shift is needed)
STALL = 1.0
#: rounding grid of ``P`` and ``gamma`` (bits below the working scale)
GRID_BITS = 56
#: number of variables of the largest form ever built (``(k, p) = (3, 7)`` has 28; the default 2 GiB budget
#: refuses beyond about 48): the memory grows as ``m^2`` and the time as ``m^3``, ``m = n (n + 1) / 2``
MAX_VARIABLES = 64
#: memory model above the interpreter and its libraries: ``BYTES_BASE + BYTES_PER_M2 m^2``; measured (peak resident
#: size above a warmed-up process, benchmarks/bench_estimates.py) 1.27 to 1.41 KiB per ``m^2`` from ``m = 105`` to
#: ``m = 406`` (14 MiB to 221 MiB): the float and integer Gram matrices, the monomial table of every position, SCS
BYTES_BASE = 16 * 2**20
BYTES_PER_M2 = 1500.0
#: time model: ``SCS_ITERATIONS`` iterations of an ``m x m`` eigendecomposition (``SECONDS_PER_M3 m^3`` each), the
#: exact steps (``SECONDS_PER_M2 m^2``) and the local ascent.  Measured (benchmarks/bench_class_weighted.py, 2 loaded
#: cores): 100 to 300 iterations at the target sizes, 0.8e-9 to 1.9e-9 s per ``m^3`` of wall time; an occasional
#: instance needs more (random (6, 3), seed 1: 1325 iterations, 49 s, 4x the estimate)
SCS_ITERATIONS = 300
SECONDS_PER_M3 = 1e-9
SECONDS_PER_M2 = 2e-5
SECONDS_BASE = 2.0


# -- the exact weights and the quartic form ---------------------------------------------------------------------


def _dyadic(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Integers ``N`` (object array) and ``s`` with ``values = N / 2^s`` exactly (float64 entries)."""
    mant, ex = np.frexp(np.asarray(values, dtype=np.float64))
    ints = (mant * 2.0**53).astype(np.int64)
    ex = ex.astype(np.int64) - 53
    s = int(-ex[ints != 0].min()) if np.any(ints != 0) else 0
    out = np.empty(ints.shape, dtype=object)
    flat_i, flat_e, flat_o = ints.ravel(), ex.ravel(), out.reshape(-1)
    for t in range(flat_i.size):
        flat_o[t] = int(flat_i[t]) << int(flat_e[t] + s) if flat_i[t] else 0
    return out, s


def exact_signed_matrix(q: np.ndarray, tau: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, int]:
    """``G`` exactly from the float64 arrays: integers ``G_int`` (object array ``(p^k, p)``) and ``s`` with
    ``G = G_int / 2^s``; ``G[x, c] = -q[x] tau[x, c]`` off the true label, ``q[x] sum_c tau[x, c]`` on it."""
    qi, sq = _dyadic(q)
    ti, st = _dyadic(tau)
    G = -(qi[:, None] * ti)
    rows = np.arange(len(q))
    G[rows, labels] = qi * ti.sum(axis=1)
    return G, sq + st


@dataclass(frozen=True)
class QuarticForm:
    """``f(x) = sum_t (numer[t] / 2^shift) x^(keys[t])`` over quartic monomials of ``nvars`` variables (``keys``:
    sorted index quadruples ``i <= j <= k <= l`` encoded as ``((i n + j) n + k) n + l``), with the bound it gives:
    ``Psi^2 <= (4/27) max f`` (``k = 2``) or ``Psi <= max f`` (``k = 3``) on the unit sphere."""

    p: int
    k: int
    nvars: int
    u_coords: np.ndarray  # indices into the k p coordinates of u (the first len(u_coords) variables)
    labels: np.ndarray  # C: the labels of w (variables after u, k = 3 only)
    inputs: np.ndarray  # X
    keys: np.ndarray
    numer: list[int]
    shift: int

    @property
    def approx(self) -> np.ndarray:
        """The coefficients in float64 (correctly rounded)."""
        den = 1 << self.shift
        return np.array([n / den for n in self.numer])


def encode(idx: np.ndarray, n: int) -> np.ndarray:
    """Keys of monomials given as rows of indices (any order, degree 4): sorted, then base ``n``."""
    s = np.sort(np.asarray(idx, dtype=np.int64), axis=1)
    return ((s[:, 0] * n + s[:, 1]) * n + s[:, 2]) * n + s[:, 3]


def _power_monomials(coords: np.ndarray, k: int) -> list[tuple[tuple[int, ...], int]]:
    """The monomials of ``(x_c1 + ... + x_ck)^k`` for distinct coordinates: (sorted index tuple, multinomial)."""
    out = []
    for combo in combinations_with_replacement(sorted(int(c) for c in coords), k):
        mult = math.factorial(k)
        for c in set(combo):
            mult //= math.factorial(combo.count(c))
        out.append((combo, mult))
    return out


def _used(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows (inputs) and columns (labels) of the exact ``G`` that are not zero."""
    nz = np.vectorize(bool, otypes=[bool])(G)
    rows = np.flatnonzero(nz.any(axis=1))
    cols = np.flatnonzero(nz[rows].any(axis=0))
    if len(rows) == 0 or len(cols) < 2:
        raise InputError("the weights put no mass on any (input, wrong label) pair")
    return rows, cols


def quartic_form(G: np.ndarray, shift: int, p: int, k: int) -> QuarticForm:
    """The quartic form of the module docstring for the exact ``G = G_int / 2^shift`` (``(p^k, p)``)."""
    from margintheory.engines.margins import input_grid

    if k not in (2, 3):
        raise InputError(f"the quartic SOS bound covers k = 2 and k = 3, not k = {k}")
    rows, cols = _used(G)
    coords = input_grid(p, k)[rows] + (np.arange(k) * p)[None, :]  # the k coordinates of u each input touches
    u_coords = np.unique(coords)
    local = np.searchsorted(u_coords, coords)
    n_u = len(u_coords)
    nvars = n_u if k == 2 else n_u + len(cols)
    Gx = G[np.ix_(rows, cols)]
    h: dict[tuple[int, ...], np.ndarray] = {}  # monomial of M (degree k in u) -> its coefficients over C
    for x in range(len(rows)):
        for mono, mult in _power_monomials(local[x], k):
            h[mono] = h.get(mono, 0) + mult * Gx[x]
    if k == 2:
        keys, numer = _square_norm(h, nvars)
        return QuarticForm(p, k, nvars, u_coords, cols, rows, keys, numer, 2 * shift)
    terms: dict[int, int] = {}
    for mono, coef in h.items():
        for c in range(len(cols)):
            if coef[c]:
                key = int(encode(np.array([[*mono, n_u + c]]), nvars)[0])
                terms[key] = terms.get(key, 0) + int(coef[c])
    keys = np.array(sorted(terms), dtype=np.int64)
    return QuarticForm(p, k, nvars, u_coords, cols, rows, keys, [terms[int(t)] for t in keys], shift)


def _square_norm(h: dict[tuple[int, ...], np.ndarray], n: int) -> tuple[np.ndarray, list[int]]:
    """``sum_c M_c^2`` for ``M_c = sum_mono h[mono][c] x^mono`` (degree 2): keys and exact numerators."""
    monos = sorted(h)
    H = np.array([h[m] for m in monos], dtype=object)  # (monomials, labels)
    terms: dict[int, int] = {}
    idx = np.array(monos, dtype=np.int64)
    for a in range(len(monos)):
        prods = H[a:] @ H[a]  # exact Python integers
        keys = encode(np.concatenate([np.repeat(idx[a][None, :], len(monos) - a, axis=0), idx[a:]], axis=1), n)
        for t, (key, val) in enumerate(zip(keys.tolist(), prods, strict=True)):
            if val:
                terms[key] = terms.get(key, 0) + (val if t == 0 else 2 * val)
    keys_arr = np.array(sorted(terms), dtype=np.int64)
    return keys_arr, [terms[int(t)] for t in keys_arr]


# -- the Gram structure and the conic program ---------------------------------------------------------------------


@dataclass(frozen=True)
class GramStructure:
    """The degree-2 monomials ``x_bi[r] x_bj[r]`` (``bi <= bj``), the positions ``(c, r)``, ``c <= r``, of the
    upper triangle in SCS's order (``svec``: lower triangle by columns), the quartic monomial of each position
    (``row``, an index into the sorted ``keys``) and, per monomial, the number of full-matrix positions that give it
    (``count``) and its coefficient in ``|x|^4`` (``norm``)."""

    n: int
    bi: np.ndarray
    bj: np.ndarray
    col: np.ndarray
    rowpos: np.ndarray
    keys: np.ndarray
    row: np.ndarray
    count: np.ndarray
    norm: np.ndarray

    @property
    def size(self) -> int:
        return len(self.bi)

    @property
    def diagonal(self) -> np.ndarray:
        """``D``: the diagonal Gram matrix of ``|x|^4`` (1 on ``x_i^2``, 2 on ``x_i x_j``)."""
        return np.where(self.bi == self.bj, 1, 2)


def gram_structure(n: int) -> GramStructure:
    """:class:`GramStructure` of the quartic forms in ``n`` variables (every quartic monomial occurs)."""
    bi, bj = np.triu_indices(n)
    col, rowpos = np.triu_indices(len(bi))
    quad = encode(np.stack([bi[col], bj[col], bi[rowpos], bj[rowpos]], axis=1), n)
    keys, row = np.unique(quad, return_inverse=True)
    row = row.ravel()
    count = np.bincount(row, weights=np.where(col == rowpos, 1, 2), minlength=len(keys)).astype(np.int64)
    norm = np.zeros(len(keys), dtype=np.int64)
    i = np.arange(n)
    norm[np.searchsorted(keys, encode(np.stack([i, i, i, i], axis=1), n))] = 1
    a, b = np.triu_indices(n, 1)
    norm[np.searchsorted(keys, encode(np.stack([a, a, b, b], axis=1), n))] = 2
    return GramStructure(n, bi, bj, col, rowpos, keys, row, count, norm)


def target_rows(gs: GramStructure, form: QuarticForm) -> np.ndarray:
    """The index in ``gs.keys`` of every monomial of ``form`` (all of them occur)."""
    rows = np.searchsorted(gs.keys, form.keys)
    if len(rows) and (rows.max() >= len(gs.keys) or np.any(gs.keys[rows] != form.keys)):
        raise InputError("the form has a monomial outside the quartic monomials of its variables")
    return rows


@dataclass
class ConicSolve:
    """SCS's answer on the problem scaled by ``2^-sigma``: ``gamma`` and the Gram matrix ``P`` (of the scaled
    problem), the moment matrix ``Y`` read off the dual, the status and the work done."""

    gamma: float
    P: np.ndarray
    Y: np.ndarray
    sigma: int
    status: str
    iterations: int
    seconds: float
    #: SCS's own vectors ``x``, ``y``, ``s``: the warm start of the next stage (:func:`solve_scs`)
    state: dict[str, np.ndarray] | None = None

    @property
    def converged(self) -> bool:
        """SCS met its tolerances (:data:`SCS_EPS`) before its iteration or time limit."""
        return self.status == "solved"


def solve_scs(gs: GramStructure, form: QuarticForm, scale: float, *, time_limit: float | None = None,
              max_iters: int = SCS_MAX_ITERS, warm: ConicSolve | None = None) -> ConicSolve:
    """``min gamma`` s.t. ``gamma |x|^4 - f / 2^sigma = m^T P m``, ``P >= 0`` with SCS (``2^sigma`` the power of
    two nearest ``scale``, an estimate of ``max f``), at most ``max_iters`` iterations, started from ``warm`` (a
    previous stage's answer on the same problem: SCS continues from its ``x``, ``y``, ``s``).  A status other than
    solved (accurately or not) raises :class:`SolverError`."""
    import scs

    sigma = round(math.log2(scale)) if scale > 0 else 0
    f = np.zeros(len(gs.keys))
    f[target_rows(gs, form)] = form.approx / 2.0**sigma
    nsv, nr = len(gs.col), len(gs.keys)
    off = gs.col != gs.rowpos
    eq = sps.csc_matrix((np.concatenate([-gs.norm.astype(float), np.where(off, math.sqrt(2.0), 1.0)]),
                         (np.concatenate([np.arange(nr), gs.row]), np.concatenate([np.zeros(nr, dtype=np.int64),
                                                                                  1 + np.arange(nsv)]))),
                        shape=(nr, 1 + nsv))
    psd = sps.hstack([sps.csc_matrix((nsv, 1)), -sps.eye(nsv, format="csc")])
    A = sps.vstack([eq, psd]).tocsc()
    b = np.concatenate([-f, np.zeros(nsv)])
    c = np.zeros(1 + nsv)
    c[0] = 1.0
    settings: dict[str, Any] = {"eps_abs": SCS_EPS, "eps_rel": SCS_EPS, "max_iters": int(max_iters), "verbose": False}
    if time_limit is not None:
        settings["time_limit_secs"] = float(time_limit)
    t0 = time.perf_counter()
    solver = scs.SCS({"A": A, "b": b, "c": c}, {"z": nr, "s": [gs.size]}, **settings)
    sol = (solver.solve() if warm is None or warm.state is None or warm.sigma != sigma else
           solver.solve(warm_start=True, **warm.state))
    status = str(sol["info"]["status"])
    # 1: solved, 2: solved inaccurate (also at the iteration or time limit); the bound rests on the exact
    # certificate alone, so an inaccurate point is only a worse starting point for the rounding
    if int(sol["info"]["status_val"]) not in (1, 2) or not np.all(np.isfinite(sol["x"])):
        raise SolverError(f"quartic SOS bound: SCS returned status {status!r} after {sol['info']['iter']} "
                          "iterations; no bound")
    m = gs.size
    P = np.zeros((m, m))
    vals = np.where(off, sol["s"][nr:] / math.sqrt(2.0), sol["s"][nr:])
    P[gs.rowpos, gs.col] = vals
    P[gs.col, gs.rowpos] = vals
    Y = np.zeros((m, m))
    Y[gs.rowpos, gs.col] = sol["y"][:nr][gs.row]
    Y[gs.col, gs.rowpos] = sol["y"][:nr][gs.row]
    done = int(sol["info"]["iter"]) + (warm.iterations if warm is not None else 0)
    return ConicSolve(float(sol["x"][0]), P, Y, sigma, status, done, time.perf_counter() - t0 + (
        warm.seconds if warm is not None else 0.0), {name: np.array(sol[name]) for name in ("x", "y", "s")})


def moment_point(gs: GramStructure, Y: np.ndarray) -> np.ndarray:
    """The point ``x`` whose degree-2 moments best match the dual's moment matrix ``Y ~ m(x) m(x)^T`` (top
    eigenvector of ``Y``, then of the matrix ``x_i x_j`` it holds); a starting point for the local ascent."""
    lam, V = np.linalg.eigh(Y)
    v = V[:, np.argmax(np.abs(lam))]
    X = np.zeros((gs.n, gs.n))
    X[gs.bi, gs.bj] = v
    X[gs.bj, gs.bi] = v
    mu, W = np.linalg.eigh(X)
    return W[:, np.argmax(np.abs(mu))]


# -- the exact certificate ---------------------------------------------------------------------------------------


@dataclass
class QuarticCertificate:
    """``gamma |x|^4 - f = m^T P m`` with ``P = P_int / den`` and ``gamma = gamma_int / den`` (integers), and the
    decomposition ``P = L L^T / 2^(2 rho) + (eta I + E)`` with ``L = chol`` (integers) and ``eta = eta_int / den``,
    ``|E|_F <= eta`` (module docstring, step 4)."""

    gamma_int: int
    den: int
    P_int: list[list[int]]
    chol: list[list[int]]
    rho: int
    eta_int: int
    delta: float = 0.0
    tries: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def gamma(self) -> Fraction:
        return Fraction(self.gamma_int, self.den)


def _round_grid(x: np.ndarray, bits: int) -> np.ndarray:
    """``round(x 2^bits)`` as int64 (``|x 2^bits| < 2^58`` is checked)."""
    y = np.rint(np.asarray(x) * 2.0**bits)
    if np.any(np.abs(y) >= 2.0**58):
        raise SolverError("quartic SOS bound: the Gram matrix is too large for the rounding grid")
    return y.astype(np.int64)


def _affine_projection(gs: GramStructure, P: np.ndarray, gamma: float, f: np.ndarray) -> np.ndarray:
    """``P`` projected (float) onto ``gamma |x|^4 - f = m^T P m``: each monomial's residual spread evenly over its
    positions (the orthogonal projection, since each position enters one equation)."""
    upper = P[gs.rowpos, gs.col]
    sums = np.zeros(len(gs.keys))
    np.add.at(sums, gs.row, np.where(gs.col == gs.rowpos, upper, 2 * upper))
    corr = (gamma * gs.norm - f - sums) / gs.count
    out = P.copy()
    out[gs.rowpos, gs.col] += corr[gs.row]
    low = gs.col != gs.rowpos
    out[gs.col[low], gs.rowpos[low]] += corr[gs.row[low]]
    return out


def polish(gs: GramStructure, form: QuarticForm, sol: ConicSolve, delta: float,
           rounds: int = POLISH_ROUNDS) -> ConicSolve:
    """The shifted point ``(gamma + delta, P + delta D)`` moved towards the set where the identity holds and ``P >=
    (delta / 2) I`` by alternating projections (float; the affine projection last).  That set is not empty when
    ``gamma`` is within ``delta`` of the optimum (``P* + delta D``, ``D >= I``, lies in it), so the projections
    converge even where SCS's point is inaccurate; what they leave is made up by :func:`project_exactly`'s exact
    projection and checked by :func:`prove_psd` -- nothing here is trusted."""
    from dataclasses import replace

    gamma = sol.gamma + delta
    P = sol.P + np.diag(delta * gs.diagonal.astype(float))
    f = np.zeros(len(gs.keys))
    f[target_rows(gs, form)] = form.approx / 2.0**sol.sigma
    floor = delta / 2
    deficit = math.inf
    for _ in range(rounds):
        P = _affine_projection(gs, P, gamma, f)
        lam, V = np.linalg.eigh(P)
        if lam[0] >= floor or floor - lam[0] > STALL * deficit:  # done, or converging too slowly to finish
            break
        deficit = floor - lam[0]
        P = (V * np.maximum(lam, floor)) @ V.T
        P = (P + P.T) / 2  # exactly symmetric: the exact projection reads the upper triangle
    return replace(sol, gamma=gamma, P=_affine_projection(gs, P, gamma, f))


def project_exactly(gs: GramStructure, form: QuarticForm, sol: ConicSolve, delta: float
                    ) -> tuple[int, int, np.ndarray]:
    """Steps 1-3 of the module docstring: ``(gamma_int, den, P_int)`` (``P_int`` an object ``m x m`` array of
    Python integers) with ``sum_(positions of t) P_int = gamma_int norm_t - f_t den`` for every monomial ``t``."""
    g_bits = GRID_BITS - sol.sigma  # the grid 2^-g_bits of the unscaled problem
    shift_int = int(math.ceil(delta * 2.0**GRID_BITS))
    Pt = _round_grid(sol.P, GRID_BITS)
    Pt[np.arange(gs.size), np.arange(gs.size)] += shift_int * gs.diagonal
    gamma_grid = int(math.ceil(sol.gamma * 2.0**GRID_BITS)) + shift_int
    D = max(g_bits, form.shift, 0)
    den = 12 << D
    up = 12 << (D - g_bits) if D >= g_bits else None
    if up is None:  # pragma: no cover - D >= g_bits by construction
        raise AssertionError("grid above the common denominator")
    upper = Pt[gs.rowpos, gs.col]
    sums = np.zeros(len(gs.keys), dtype=np.int64)
    np.add.at(sums, gs.row, np.where(gs.col == gs.rowpos, upper, 2 * upper))
    f_den = [0] * len(gs.keys)
    for r, val in zip(target_rows(gs, form).tolist(), form.numer, strict=True):
        f_den[r] = val * (12 << (D - form.shift))
    corr = [0] * len(gs.keys)
    for t in range(len(gs.keys)):
        resid = gamma_grid * up * int(gs.norm[t]) - f_den[t] - int(sums[t]) * up
        cnt = int(gs.count[t])
        if resid % cnt:
            raise AssertionError("a residual not divisible by its position count")  # pragma: no cover
        corr[t] = resid // cnt
    P_int = Pt.astype(object) * up
    corr_arr = np.array(corr, dtype=object)
    P_int[gs.rowpos, gs.col] += corr_arr[gs.row]
    low = gs.col != gs.rowpos
    P_int[gs.col[low], gs.rowpos[low]] += corr_arr[gs.row[low]]
    return gamma_grid * up, den, P_int


def prove_psd(P_int: np.ndarray, den: int) -> tuple[tuple[list[list[int]], int, int] | None, float]:
    """Step 4: ``(L, rho, eta_int)`` with ``P_int / den = L L^T / 4^rho + eta_int / den I + E``, ``|E|_F <=
    eta_int / den`` (``None`` when the float screen or the exact comparison fails), and the float smallest
    eigenvalue of ``P_int / den`` (what a larger shift must make up)."""
    Pf = np.array([[v / den for v in row] for row in P_int.tolist()])
    lam_min = float(np.linalg.eigvalsh(Pf)[0])
    if not lam_min > 0:
        return None, lam_min
    eta_int = int(lam_min / 2 * den)
    try:
        Lf = np.linalg.cholesky(Pf - (eta_int / den) * np.eye(len(Pf)))
    except np.linalg.LinAlgError:
        return None, lam_min
    rho = 52 - math.frexp(float(np.abs(Lf).max()))[1]
    chol = np.rint(Lf * 2.0**rho).astype(np.int64).tolist()
    if not remainder_within(P_int.tolist(), den, chol, rho, eta_int):
        return None, lam_min
    return (chol, rho, eta_int), lam_min


def remainder_within(P_int: list[list[int]], den: int, chol: list[list[int]], rho: int, eta_int: int) -> bool:
    """Exactly: ``E = P - eta I - L L^T / 4^rho`` (``P = P_int / den``, ``eta = eta_int / den``) has
    ``|E|_F <= eta`` -- then ``P`` is positive semidefinite.  In integers (times ``den 4^rho``), with one
    python-flint matrix product."""
    from flint import fmpz_mat

    n = len(P_int)
    if eta_int < 0 or len(chol) != n or any(len(r) != n for r in chol) or any(len(r) != n for r in P_int):
        return False
    L = fmpz_mat(chol)
    four = 1 << (2 * rho)
    E = fmpz_mat(P_int) * four - (L * L.transpose()) * den
    diag = eta_int * four
    total = 0
    for i, row in enumerate(E.tolist()):
        for j, entry in enumerate(row):
            v = int(entry) - (diag if i == j else 0)
            total += v * v
    return total <= diag * diag


def identity_holds(form: QuarticForm, cert: QuarticCertificate) -> bool:
    """Exactly: ``gamma |x|^4 - f = m^T P m`` coefficient by coefficient, summing ``P`` over every position
    ``(a, b)`` of the full matrix (``m`` the degree-2 monomials ``x_i x_j``, ``i <= j``, in ``np.triu_indices``
    order)."""
    n = form.nvars
    bi, bj = np.triu_indices(n)
    m = len(bi)
    if len(cert.P_int) != m or any(len(r) != m for r in cert.P_int) or cert.den <= 0:
        return False
    a, b = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    keys = encode(np.stack([bi[a.ravel()], bj[a.ravel()], bi[b.ravel()], bj[b.ravel()]], axis=1), n)
    acc: dict[int, int] = {}
    flat = [v for row in cert.P_int for v in row]
    for key, v in zip(keys.tolist(), flat, strict=True):
        acc[key] = acc.get(key, 0) + int(v)
    want: dict[int, int] = {}
    i = np.arange(n)
    for key in encode(np.stack([i, i, i, i], axis=1), n).tolist():
        want[key] = cert.gamma_int
    s, t = np.triu_indices(n, 1)
    for key in encode(np.stack([s, s, t, t], axis=1), n).tolist():
        want[key] = 2 * cert.gamma_int
    if cert.den % (1 << form.shift):
        return False
    scale = cert.den >> form.shift
    for key, val in zip(form.keys.tolist(), form.numer, strict=True):
        want[key] = want.get(key, 0) - val * scale
    return all(acc.get(key, 0) == want.get(key, 0) for key in set(acc) | set(want))


def check_certificate(form: QuarticForm, cert: QuarticCertificate) -> tuple[bool, str]:
    """Re-check a certificate from scratch: the identity and the positive semidefinite decomposition, both in
    exact integers.  ``(holds, reason)``."""
    if not identity_holds(form, cert):
        return False, "the identity gamma |x|^4 - f = m^T P m does not hold coefficient by coefficient"
    if not remainder_within(cert.P_int, cert.den, cert.chol, cert.rho, cert.eta_int):
        return False, "P = L L^T + eta I + E with |E|_F <= eta does not hold"
    return True, ""


def certify(gs: GramStructure, form: QuarticForm, sol: ConicSolve, gamma_low: float | None = None
            ) -> QuarticCertificate:
    """Steps 1-4 from ``base = max(gamma, gamma_low)`` (``gamma_low``: a value of ``f / 2^sigma`` attained on the
    sphere, so no certificate can claim less; SCS's ``gamma`` lies below it when SCS stopped early on a primal
    infeasible point): the claim ``base (1 + FIRST_SHIFT)``, the point polished (:func:`polish`) and rounded; after
    a failed try the excess over ``base`` grows 16-fold, or doubles and is raised by 1.1 times the float eigenvalue
    deficit when that is more (``D >= I``: the shift ``delta D`` raises every eigenvalue by at least ``delta``).  The
    certificate returned has passed :func:`check_certificate`."""
    base = max(sol.gamma, gamma_low if gamma_low is not None else -math.inf)
    # SCS stopped before its tolerance: its point is rougher, the first claim a little higher
    extra = (FIRST_SHIFT if sol.converged else ROUGH_SHIFT) * max(base, 0.0)
    for tries in range(1, MAX_TRIES + 1):
        delta = base - sol.gamma + extra
        gamma_int, den, P_int = project_exactly(gs, form, polish(gs, form, sol, delta), 0.0)
        proof, lam_min = prove_psd(P_int, den)
        if proof is not None:
            chol, rho, eta_int = proof
            cert = QuarticCertificate(gamma_int, den, P_int.tolist(), chol, rho, eta_int, delta * 2.0**sol.sigma,
                                      tries)
            ok, why = check_certificate(form, cert)
            if not ok:  # pragma: no cover - the construction satisfies both by design
                raise SolverError(f"quartic SOS bound: the rounded certificate fails its check ({why})")
            return cert
        extra = max(16 * extra, 2 * extra + 1.1 * max(-lam_min, 0.0) / 2.0**sol.sigma)
    raise SolverError(f"quartic SOS bound: no positive semidefinite rounding after {MAX_TRIES} shifts (last "
                      f"{extra / max(sol.gamma, 1e-300):.1e} of gamma); the first SOS level may not be tight enough "
                      "here")


def upper_from_gamma(k: int, gamma: Fraction) -> Fraction:
    """``U >= Psi``: ``ceil_sqrt(4 gamma / 27)`` for ``k = 2`` (``Psi^2 = (4/27) max |M|^2``), ``gamma`` for
    ``k = 3`` (``Psi = max F``)."""
    from margintheory.certificate.checker import ceil_sqrt

    return ceil_sqrt(Fraction(4, 27) * gamma) if k == 2 else gamma


# -- the bracket ---------------------------------------------------------------------------------------------------


@dataclass
class QuarticSOS:
    """The proved ``upper >= Psi`` (exact rational), its certificate, the best unit ``u`` (``k p`` coordinates) of
    the local ascent with its value ``f_lower = |M(u)|`` (the caller evaluates the unit neuron on the arrays) and
    the work done."""

    upper: Fraction
    form: QuarticForm
    certificate: QuarticCertificate
    u: np.ndarray
    f_lower: float
    scs: ConicSolve
    seconds: dict[str, float]

    def summary(self) -> dict[str, Any]:
        c, s, f = self.certificate, self.scs, self.form
        m = f.nvars * (f.nvars + 1) // 2
        return {"variables": f.nvars, "gram_size": m, "monomials": len(gram_monomials(f.nvars)),
                "inputs_used": len(f.inputs), "labels_used": len(f.labels), "scs_status": s.status,
                "scs_iterations": s.iterations, "scs_gamma": s.gamma * 2.0**s.sigma, "gamma": float(c.gamma),
                "shift": c.delta, "shift_tries": c.tries, "f_lower": self.f_lower, "upper": float(self.upper),
                "seconds": dict(self.seconds)}


def form_size(G: np.ndarray, p: int, k: int) -> int:
    """The number of variables of the form for the float signed matrix ``G`` (before anything is allocated): the
    coordinates of ``u`` its inputs touch, plus its labels for ``k = 3``."""
    from margintheory.engines.margins import input_grid

    rows = np.flatnonzero(np.any(G != 0, axis=1))
    cols = np.flatnonzero(np.any(G[rows] != 0, axis=0))
    coords = np.unique(input_grid(p, k)[rows] + (np.arange(k) * p)[None, :])
    return len(coords) + (len(cols) if k == 3 else 0)


def estimate_bytes(nvars: int) -> float:
    """Peak memory of :func:`solve_quartic_sos` for a form in ``nvars`` variables (:data:`BYTES_PER_M2`)."""
    m = nvars * (nvars + 1) // 2
    return BYTES_BASE + BYTES_PER_M2 * m * m


def estimate_seconds(nvars: int) -> float:
    """Run time of :func:`solve_quartic_sos` (:data:`SECONDS_PER_M3`); SCS's iteration count is the uncertain
    part (a factor of 2 either way)."""
    m = nvars * (nvars + 1) // 2
    return SCS_ITERATIONS * SECONDS_PER_M3 * m**3 + SECONDS_PER_M2 * m * m + SECONDS_BASE


def gram_monomials(n: int) -> range:
    """The quartic monomials of ``n`` variables (as a range of their count ``C(n + 3, 4)``)."""
    return range(math.comb(n + 3, 4))


def _local_ascent(G: np.ndarray, p: int, k: int, starts: list[np.ndarray]) -> tuple[float, np.ndarray]:
    from margintheory.solvers.weighted_bnb import local_ascent, reduce_weights

    return local_ascent(reduce_weights(G, p, k), starts)


def relative_gap(k: int, gamma: Fraction, f_low: float) -> float:
    """``(U - L) / L`` of a certificate's ``gamma`` (``U``: :func:`upper_from_gamma`) against the local ascent's
    ``L = c_k f_low`` (float; the caller's ``L`` is the neuron evaluated on the arrays)."""
    from margintheory.solvers.weighted_bnb import c_k

    lower = c_k(k) * f_low
    return (float(upper_from_gamma(k, gamma)) - lower) / lower if lower > 0 else math.inf


def _attained(k: int, f_low: float) -> float:
    """A value of the form ``f`` attained on the sphere by the local ascent's point: ``|M(u)|^2`` (``k = 2``),
    ``c_3 |M(u)|`` (``k = 3``, ``w`` aligned with ``M(u)``)."""
    from margintheory.solvers.weighted_bnb import c_k

    return f_low**2 if form_is_square(k) else c_k(k) * f_low


def form_is_square(k: int) -> bool:
    """``k = 2``: the form is ``|M(u)|^2`` (``w`` eliminated); ``k = 3``: the objective itself."""
    return k == 2


def _staged_certificate(gs: GramStructure, form: QuarticForm, scale: float, G: np.ndarray,
                        best: tuple[float, np.ndarray], t0: float, time_limit: float | None
                        ) -> tuple[ConicSolve, QuarticCertificate, float, np.ndarray, dict[str, float]]:
    """SCS in the stages of :data:`STAGE_ITERATIONS`, each continuing the last (warm start): after each, the local
    ascent from the moment point and the exact certificate of the point reached; stop at SCS's tolerance, at the
    proved relative gap :data:`TARGET_GAP`, after :data:`EFFORT_ITERATIONS` with a gap within :data:`ACCEPT_GAP`,
    or when ``time_limit`` (seconds since ``t0``) is spent.  Near-degenerate forms (weights close to
    translation-invariant ones, whose maximisers form a continuum) reach ``1e-6`` in a few hundred iterations and
    ``1e-9`` only after thousands: the effort cap keeps their time near that of generic weights."""
    p, k = form.p, form.k
    f_low, u = best
    sol: ConicSolve | None = None
    cert: QuarticCertificate | None = None
    failure = ""
    spent = {"local_ascent": 0.0, "scs": 0.0, "exact_certificate": 0.0}
    previous = math.inf
    for total in STAGE_ITERATIONS:
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if sol is not None and left is not None and left <= 0:
            break
        ts = time.perf_counter()
        sol = solve_scs(gs, form, scale, time_limit=None if left is None else max(left, MIN_SCS_SECONDS),
                        max_iters=total - (sol.iterations if sol is not None else 0), warm=sol)
        ta = time.perf_counter()
        x = moment_point(gs, sol.Y)
        start = np.zeros(k * p)
        start[form.u_coords] = x[:len(form.u_coords)]
        if np.any(start):
            f2, u2 = _local_ascent(G, p, k, [start])
            if f2 > f_low:
                f_low, u = f2, u2
        tc = time.perf_counter()
        try:
            cert = certify(gs, form, sol, _attained(k, f_low) / 2.0**sol.sigma)
        except SolverError as exc:
            failure = str(exc)
        td = time.perf_counter()
        spent["scs"] += ta - ts
        spent["local_ascent"] += tc - ta
        spent["exact_certificate"] += td - tc
        gap = relative_gap(k, cert.gamma, f_low) if cert is not None else math.inf
        stalled = gap > previous / PROGRESS  # the last doubling of the iterations did not shrink the gap 10-fold
        capped = sol.iterations >= 2 * EFFORT_ITERATIONS  # twice the effort: stop even while converging
        if sol.converged or gap <= TARGET_GAP or (sol.iterations >= EFFORT_ITERATIONS and gap <= ACCEPT_GAP
                                                  and (stalled or capped)):
            break
        previous = gap
    if sol is None or cert is None:
        raise SolverError(failure or "quartic SOS bound: no SCS stage ran")
    return sol, cert, f_low, u, spent


def solve_quartic_sos(q: np.ndarray, tau: np.ndarray, labels: np.ndarray, G: np.ndarray, p: int, k: int, *,
                      n_starts: int = 8, seed: int | None = 0, time_limit: float | None = None) -> QuarticSOS:
    """The bracket of the module docstring for the arrays ``q``, ``tau`` (``labels = y(x)``) and their float
    signed matrix ``G`` (for the local ascent only): local ascent, SCS, the moment point polished, the exact
    certificate."""
    from threadpoolctl import threadpool_limits

    # small dense matrices (side <= 406): BLAS threads only add contention (measured on 2 loaded cores: a
    # 105 x 105 eigendecomposition 2.8 ms on one thread, 68 ms on two)
    with threadpool_limits(limits=1, user_api="blas"):
        return _solve_quartic_sos(q, tau, labels, G, p, k, n_starts=n_starts, seed=seed, time_limit=time_limit)


def _solve_quartic_sos(q: np.ndarray, tau: np.ndarray, labels: np.ndarray, G: np.ndarray, p: int, k: int, *,
                       n_starts: int, seed: int | None, time_limit: float | None) -> QuarticSOS:
    from margintheory.solvers.weighted_bnb import c_k

    t0 = time.perf_counter()
    G_int, shift = exact_signed_matrix(q, tau, labels)
    form = quartic_form(G_int, shift, p, k)
    if form.nvars > MAX_VARIABLES:
        raise InputError(f"the quartic SOS bound is built for at most {MAX_VARIABLES} variables; these weights give "
                         f"{form.nvars}")
    rng = np.random.default_rng(seed)
    f_low, u = _local_ascent(G, p, k, [rng.standard_normal(k * p) for _ in range(max(1, n_starts))])
    t1 = time.perf_counter()
    gs = gram_structure(form.nvars)
    scale = f_low**2 if k == 2 else c_k(k) * f_low
    sol, cert, f_low, u, spent = _staged_certificate(gs, form, scale, G, (f_low, u), t0, time_limit)
    t4 = time.perf_counter()
    seconds = {"local_ascent": (t1 - t0) + spent["local_ascent"], "scs": spent["scs"],
               "exact_certificate": spent["exact_certificate"], "total": t4 - t0}
    return QuarticSOS(upper_from_gamma(k, cert.gamma), form, cert, u, f_low, sol, seconds)
