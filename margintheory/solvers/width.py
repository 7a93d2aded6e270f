"""Small networks: the smallest max-margin width (phase measures, exact weights) and the best margin at a capped
width (a mixed-integer step on the column-generation dictionary).

**Smallest max-margin width** (:func:`min_width_network`).  By :mod:`margintheory.core.phase_measures` a max-margin
network is, per frequency, a positive measure on the phase torus whose unwanted moments vanish.  Candidates: the
families (Lemma C.18 of Li et al., arXiv:2402.09469; the cyclic lattice; the 16-atom ``k = 3`` design) and, for
``k <= 3``, a mixed-integer search for the smallest support on the phase lattice ``(Z_Q)^k`` (HiGHS) whose weights are
then *solved exactly* on that support (rational linear algebra in ``Q(omega_Q)``).  Every candidate's moments are
checked exactly; the chosen measure is built into a network whose float64 weights are correctly rounded exact values, so
it verifies at the default tolerance.  The lower bound is :func:`margintheory.solvers.width_bounds.width_lower_bound`.

**Capped width** (``max_width``):

Given unit columns ``theta_i`` with contributions ``phi_i`` (all translates of the column-generation generators),
solve with HiGHS (through cvxpy)

* ``minimise sum_i z_i`` s.t. ``sum_i s_i phi_i(a, c) >= target`` on every wrong pair, ``sum s_i <= 1``,
  ``0 <= s_i <= z_i``, ``z_i`` binary -- the smallest width reaching ``target`` **within this dictionary**;
* or, with a width cap ``M``: ``maximise gamma`` s.t. the same rows with ``gamma``, ``sum z_i <= M``.

A width found this way is an upper bound on the smallest max-margin width (other neurons may do better); a MILP
stopped by its time limit reports its status and the best network it holds.  The margin of the returned network
is recomputed over all pairs (:func:`exact_normalised_margin`), not taken from the solver.
"""

from __future__ import annotations

import itertools
import time
import warnings
from dataclasses import dataclass

import numpy as np

from margintheory.core.network import PolyNetwork
from margintheory.core.phase_measures import PhaseMeasure
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.fourier_margin import CompactMargin
from margintheory.errors import InputError, SolverError
from margintheory.runtime.process import load_native_imports
from margintheory.solvers._quiet import native_stdout_silenced
from margintheory.solvers.column_generation import (
    exact_normalised_margin,
    max_min_lp,
    network_from_columns,
    translation_orbit,
)
from margintheory.solvers.objective import _wrong_mask, neuron_pair_contributions
from margintheory.solvers.width_bounds import WidthLowerBound, width_lower_bound


@dataclass
class WidthResult:
    """A network of small width, its recomputed margin, the MILP status and time."""

    network: PolyNetwork
    margin: float
    width: int
    dictionary_size: int
    status: str
    seconds: float
    objective: str


def orbit_dictionary(generators: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All translates of the generators ``(n, k+1, p)``: ``U (n p^k, k, p)``, ``W (n p^k, p)``."""
    k = generators.shape[1] - 1
    parts = [translation_orbit(g[:k], g[k]) for g in generators]
    return np.concatenate([u for u, _ in parts]), np.concatenate([w for _, w in parts])


def _milp(A: np.ndarray, *, target: float | None, max_width: int | None, time_limit: float | None):
    import cvxpy as cp

    if "HIGHS" not in cp.installed_solvers():
        raise SolverError("width MILP: HiGHS is not installed")
    scale = float(np.abs(A).max()) or 1.0
    n = A.shape[1]
    s = cp.Variable(n, nonneg=True)
    z = cp.Variable(n, boolean=True)
    cons = [s <= z, cp.sum(s) <= 1]
    if target is not None:
        cons.append((A / scale) @ s >= target / scale)
        prob = cp.Problem(cp.Minimize(cp.sum(z)), cons)
    else:
        g = cp.Variable()
        cons += [(A / scale) @ s >= g, cp.sum(z) <= max_width]
        prob = cp.Problem(cp.Maximize(g), cons)
    opts: dict[str, object] = {"mip_rel_gap": 0.0, "primal_feasibility_tolerance": 1e-10,
                               "mip_feasibility_tolerance": 1e-10, "output_flag": False}
    if time_limit is not None:
        opts["time_limit"] = float(max(time_limit, 1.0))
    try:
        with warnings.catch_warnings(), native_stdout_silenced():
            warnings.simplefilter("ignore")
            load_native_imports()  # (a signal must not land inside the native solve's imports)
            prob.solve(solver="HIGHS", **opts)
    except (cp.error.SolverError, ValueError) as exc:  # ValueError: cvxpy on an UNKNOWN status
        raise SolverError(f"width MILP: HiGHS failed ({exc})") from None
    if s.value is None:
        raise SolverError(f"width MILP: HiGHS returned status {prob.status!r} without a solution")
    return np.clip(np.asarray(s.value, dtype=float), 0.0, None), str(prob.status)


def _lp_on(A: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, float]:
    s, _, _, _ = max_min_lp(A[:, cols])
    return s, float((A[:, cols] @ s).min())


def greedy_prune(A: np.ndarray, *, target: float | None = None, max_width: int | None = None,
                 time_limit: float | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Backward elimination on the LP support: try to drop columns in order of increasing LP weight, re-solving
    the LP each time; with ``target`` a drop is kept only if the margin stays ``>= target``; with ``max_width``
    the lightest column is dropped until at most ``max_width`` remain.  Returns ``(columns, s, status)``."""
    if target is None and max_width is None:
        raise InputError("greedy_prune needs a target margin or a maximum width")
    t0 = time.perf_counter()
    cols = np.arange(A.shape[1])
    s, val = _lp_on(A, cols)
    cols, s = cols[s > 0], s[s > 0]
    status = "locally-minimal"
    tried: set[int] = set()
    while len(cols) > 1:
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status = "time-limit"
            break
        if max_width is not None and len(cols) <= max_width:
            break
        order = [c for c in cols[np.argsort(s)] if int(c) not in tried]
        if not order:
            break
        c = int(order[0])
        trial = cols[cols != c]
        s_t, val_t = _lp_on(A, trial)
        if max_width is not None and not np.any(s_t > 0):
            tried.add(c)  # without column c no positive margin is left (the LP's optimum is s = 0): keep it
        elif max_width is not None or (target is not None and val_t >= target):
            cols, s = trial[s_t > 0], s_t[s_t > 0]
        else:
            tried.add(c)
    return cols, s, status


def smallest_width(generators: np.ndarray, *, target: float | None = None, max_width: int | None = None,
                   time_limit: float | None = 60.0, method: str = "greedy", support_tol: float = 1e-9) -> WidthResult:
    """Small networks from the translates of ``generators`` (exactly one of ``target`` / ``max_width``).

    ``method="greedy"``: :func:`greedy_prune` (a locally minimal support: no single column can be removed);
    ``method="milp"``: the MILP of the module docstring (minimal within the dictionary if HiGHS proves optimality).
    """
    if (target is None) == (max_width is None):
        raise ValueError("give exactly one of target and max_width")
    t0 = time.perf_counter()
    U, W = orbit_dictionary(generators)
    p, k = U.shape[2], U.shape[1]
    A = neuron_pair_contributions(U, W)[:, _wrong_mask(p, k)].T
    if method == "greedy":
        chosen, _, status = greedy_prune(A, target=target, max_width=max_width, time_limit=time_limit)
    else:
        sv, status = _milp(A, target=target, max_width=max_width, time_limit=time_limit)
        chosen = np.flatnonzero(sv > support_tol * sv.max()) if np.any(sv > 0) else np.zeros(0, dtype=int)
    if len(chosen) == 0:
        raise SolverError(f"width search: status {status!r} and an empty network")
    # the weights are re-optimised by the LP on the chosen support
    s_sel, _ = _lp_on(A, chosen)
    sv = np.zeros(len(U))
    sv[chosen] = s_sel
    net = network_from_columns(U, W, sv)
    goal = "min-width" if target is not None else f"max-margin at width <= {max_width}"
    return WidthResult(net, exact_normalised_margin(net), net.m, len(U), f"{method}: {status}",
                       time.perf_counter() - t0, goal)


# -- cyclic phase lattices: how the cyclic-lattice family was found -------------------------------------------------

def cyclic_phase_lattices(k: int, max_order: int) -> list[tuple[int, tuple[int, ...]]]:
    """``(N, g)`` with ``g`` in ``Z_N^k`` (``g_1 = 1``) such that ``N`` divides no ``m . g`` for ``m`` in ``M_k``, by
    increasing ``N`` (the uniform measure on ``{2 pi t g / N}`` is then a max-margin phase measure)."""
    from margintheory.core.phase_measures import unwanted_phase_moments

    M = unwanted_phase_moments(k)
    found = []
    for N in range(2, max_order + 1):
        rest = np.array(list(itertools.product(range(N), repeat=k - 1)), dtype=np.int64).reshape(-1, k - 1)
        g = np.concatenate([np.ones((len(rest), 1), dtype=np.int64), rest], axis=1)
        ok = np.ones(len(g), dtype=bool)
        for chunk in range(0, len(M), 2048):
            ok &= np.all((M[chunk:chunk + 2048] @ g.T) % N != 0, axis=0)
        found += [(N, tuple(int(v) for v in row)) for row in g[ok]]
    return found


# -- smallest support on a phase lattice, exact weights --------------------------------------------------------------

#: the phase lattices searched by default (``k -> Q``); ``k >= 4`` relies on the families
DEFAULT_GRIDS = {1: 4, 2: 6, 3: 8}


def _moment_rows(k: int, q: int, points: np.ndarray) -> np.ndarray:
    """Real equations ``sum_a w_a cos/sin(2 pi m.a/Q) = 0``, one pair per ``+-m``: shape ``(2 |M|/2, n)``."""
    from margintheory.core.phase_measures import unwanted_phase_moments

    M = unwanted_phase_moments(k)
    M = M[[tuple(m) > tuple(-v for v in m) for m in M.tolist()]]
    ang = 2 * np.pi * ((M @ points.T) % q) / q
    rows = np.concatenate([np.cos(ang), np.sin(ang)])
    rows[np.abs(rows) < 1e-13] = 0.0
    return rows


def exact_weights_on_support(k: int, q: int, points: np.ndarray) -> tuple | None:
    """The unique weights (rationals summing to 1) of a measure on ``points`` with vanishing unwanted moments, solved
    exactly: each moment ``sum_a w_a omega_Q^(m.a)`` is written in the basis ``1, X, ..., X^(phi(Q)-1)`` of
    ``Q(omega_Q)`` (rows of the cyclotomic reduction matrix), giving a rational linear system.  ``None`` when the
    solution is not unique or not positive."""
    import sympy as sp

    from margintheory.core.cyclotomic import reduction_matrix
    from margintheory.core.phase_measures import unwanted_phase_moments

    R = reduction_matrix(q)
    M = unwanted_phase_moments(k)
    res = (M @ points.T) % q  # (|M|, n)
    A = R[res]  # (|M|, n, phi(Q))
    rows = np.unique(A.transpose(0, 2, 1).reshape(-1, len(points)), axis=0)
    system = sp.Matrix(rows.tolist())
    null = system.nullspace()
    if len(null) != 1:
        return None
    v = null[0] / sum(null[0])
    if any(x <= 0 for x in v):
        return None
    from fractions import Fraction

    return tuple(Fraction(int(x.p), int(x.q)) for x in v)


def search_phase_measure(k: int, q: int, *, time_limit: float = 30.0):
    """Smallest support of a max-margin phase measure on ``(Z_Q)^k`` (mixed-integer program, HiGHS via scipy):
    ``min sum z`` s.t. the moment equations, ``sum w = 1``, ``0 <= w <= z``, ``z`` binary, an atom fixed at 0
    (translation invariance).  The support found is then given exact weights (:func:`exact_weights_on_support`)
    and its moments checked exactly.  Returns ``(PhaseMeasure or None, status)``."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    from margintheory.core.phase_measures import exact_moment_check

    points = np.array(list(itertools.product(range(q), repeat=k)), dtype=np.int64)
    n = len(points)
    C = _moment_rows(k, q, points)
    cons = [LinearConstraint(np.hstack([C, np.zeros_like(C)]), -1e-9, 1e-9),
            LinearConstraint(np.hstack([np.ones((1, n)), np.zeros((1, n))]), 1, 1),
            LinearConstraint(np.hstack([np.eye(n), -np.eye(n)]), -np.inf, 0)]
    lb, ub = np.zeros(2 * n), np.ones(2 * n)
    lb[n] = 1  # the atom at 0
    with native_stdout_silenced():
        res = milp(np.concatenate([np.zeros(n), np.ones(n)]), constraints=cons, bounds=Bounds(lb, ub),
                   integrality=np.concatenate([np.zeros(n), np.ones(n)]), options={"time_limit": float(time_limit)})
    status = "optimal on the lattice" if res.status == 0 else f"best found ({res.message})"
    if res.x is None:
        return None, f"no solution ({res.message})"
    support = np.flatnonzero(res.x[:n] > 1e-7)
    weights = exact_weights_on_support(k, q, points[support])
    if weights is None:
        return None, f"{status}; support of {len(support)} has no unique exact positive weights"
    measure = PhaseMeasure(k, q, points[support], weights, f"lattice-search-Z{q}",
                           f"smallest support found on (Z_{q})^{k} by a mixed-integer program; weights solved exactly",
                           source="this package (margintheory.solvers.width.search_phase_measure)")
    if not exact_moment_check(measure).passed:
        return None, f"{status}; exact moment check failed"
    return measure, status


@dataclass
class MinWidthResult:
    """The smallest max-margin network found, how, and the bounds it is compared with."""

    p: int
    k: int
    measure: PhaseMeasure
    network: PolyNetwork
    margin: float
    margin_tolerance: float
    attempts: list[dict[str, object]]
    lower_bound: WidthLowerBound
    seconds: float
    #: the margin of the exact network from its phase moments (:mod:`margintheory.engines.fourier_margin`)
    compact: CompactMargin | None = None

    @property
    def per_frequency(self) -> int:
        return self.measure.size

    @property
    def width(self) -> int:
        return self.network.m


def min_width_network(p: int | ModularAddition, k: int | None = None, *, time_limit: float = 30.0,
                      search: bool = True) -> MinWidthResult:
    """The smallest max-margin network this package can build for ``(p, k)`` (module docstring), with the exact
    moment check of every candidate, the exact margin of the network (from its phase moments, no input enumerated:
    :func:`margintheory.engines.fourier_margin.compact_margin`) and the certified lower bound.  The
    lattice search runs only when no family meets the lower bound (it cannot do better otherwise).  Takes a
    :class:`~margintheory.core.problems.ModularAddition` (or loose ``(p, k)``, validated once into one)."""
    from margintheory.core.construction import build_phase_measure_network
    from margintheory.core.phase_measures import FAMILIES, exact_moment_check, family_measure
    from margintheory.engines.fourier_margin import compact_margin, cosine_network_from_measure

    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    t0 = time.perf_counter()
    attempts: list[dict[str, object]] = []
    candidates: list[PhaseMeasure] = []
    for fam in sorted(FAMILIES, key=lambda f: _family_size_or_inf(f, k)):  # smallest first
        if candidates and _family_size_or_inf(fam, k) > candidates[0].size:
            attempts.append({"method": fam, "per_frequency": _family_size_or_inf(fam, k),
                             "status": f"not checked: larger than the {candidates[0].name} measure"})
            continue
        try:
            mu = family_measure(fam, k)
        except ValueError as exc:
            attempts.append({"method": fam, "status": str(exc)})
            continue
        chk = exact_moment_check(mu)
        attempts.append({"method": fam, "per_frequency": mu.size, "moments_vanish": chk.passed,
                         "seconds": chk.seconds})
        if chk.passed:
            candidates.append(mu)
    lower = width_lower_bound(k)
    if search and k in DEFAULT_GRIDS and min(m.size for m in candidates) > lower.per_frequency:
        t1 = time.perf_counter()
        mu, status = search_phase_measure(k, DEFAULT_GRIDS[k], time_limit=time_limit)
        attempts.append({"method": f"mixed-integer search on (Z_{DEFAULT_GRIDS[k]})^{k}",
                         "per_frequency": None if mu is None else mu.size, "status": status,
                         "seconds": time.perf_counter() - t1})
        if mu is not None:
            candidates.append(mu)
    best = min(candidates, key=lambda m: (m.size, m.name != "smallest-known"))
    net = build_phase_measure_network(p, best)
    exact = cosine_network_from_measure(p, best, source=best.description)
    cm = compact_margin(exact)  # the exact network's margin from its phase moments (no input enumerated)
    return MinWidthResult(p, k, best, net, float(cm.normalized_margin), float(cm.normalized_tolerance), attempts,
                          lower, time.perf_counter() - t0, cm)


def _family_size_or_inf(family: str, k: int) -> float:
    from margintheory.core.phase_measures import family_size

    try:
        return float(family_size(family, k))
    except ValueError:
        return float("inf")


def prune_to_width(net: PolyNetwork, max_width: int, time_limit: float | None = None) -> WidthResult:
    """The best margin found with at most ``max_width`` of the network's neurons: backward elimination with the LP
    re-solved at each step (:func:`greedy_prune`); an upper bound on nothing, a network that exists."""
    t0 = time.perf_counter()
    k = net.k
    gens = np.concatenate([net.U, net.W[:, None, :]], axis=1)
    gens = gens / np.linalg.norm(gens.reshape(len(gens), -1), axis=1)[:, None, None]
    U, W = gens[:, :k], gens[:, k]
    A = neuron_pair_contributions(U, W)[:, _wrong_mask(U.shape[2], k)].T
    cols, _, status = greedy_prune(A, max_width=max_width, time_limit=time_limit)
    if len(cols) == 0:
        raise SolverError(f"the {len(U)} neurons have no positive margin together (the margin LP's optimum is 0)")
    if len(cols) > max_width:
        raise SolverError(f"no network of width <= {max_width} with a positive margin was found: backward "
                          f"elimination from {len(U)} neurons stops at {len(cols)} ({status}; dropping any further "
                          "neuron leaves no positive margin)")
    s_sel, _ = _lp_on(A, cols)
    sv = np.zeros(len(U))
    sv[cols] = s_sel
    pruned = network_from_columns(U, W, sv)
    return WidthResult(pruned, exact_normalised_margin(pruned), pruned.m, len(U), f"pruned to <= {max_width}: {status}",
                       time.perf_counter() - t0, f"max-margin at width <= {max_width}")
