"""Small max-margin networks: a mixed-integer step on the column-generation dictionary (issue 4, part 3).

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

import time
import warnings
from dataclasses import dataclass

import numpy as np

from margintheory.errors import SolverError
from margintheory.network import PolyNetwork
from margintheory.solvers.column_generation import (
    exact_normalised_margin,
    max_min_lp,
    network_from_columns,
    orbit_margin_profile,
    translation_orbit,
)
from margintheory.solvers.objective import _wrong_mask, neuron_pair_contributions


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
                               "mip_feasibility_tolerance": 1e-10}
    if time_limit is not None:
        opts["time_limit"] = float(max(time_limit, 1.0))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prob.solve(solver="HIGHS", **opts)
    except cp.error.SolverError as exc:
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
        if max_width is not None or val_t >= target:
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


def fewest_orbits(generators: np.ndarray, target: float, time_limit: float | None = 30.0) -> np.ndarray:
    """The fewest translation orbits whose orbit-averaged profiles reach ``target`` (MILP on the reduced LP of
    :mod:`margintheory.solvers.column_generation`: ``p - 1`` rows, one column per generator)."""
    k = generators.shape[1] - 1
    A = np.array([orbit_margin_profile(g[:k], g[k]) for g in generators]).T
    sv, _ = _milp(A, target=target, max_width=None, time_limit=time_limit)
    chosen = np.flatnonzero(sv > 1e-9 * max(sv.max(), 1e-300))
    s_sel, val = _lp_on(A, chosen) if len(chosen) else (None, -np.inf)
    if val < target * (1 - 1e-9):
        return np.arange(len(generators))  # the MILP's choice fails the exact re-check: keep every orbit
    return chosen


def width_generators(generators: np.ndarray, weights: np.ndarray, threshold: float,
                     max_columns: int = 400) -> np.ndarray:
    """Generators for the width MILP: the LP support first, then every other generator whose uniform single-neuron
    value is ``>= threshold`` (only maximisers can appear in a max-margin network, Lemma C.6), up to
    ``max_columns`` translates in all."""
    from margintheory.solvers.objective import SingleNeuronObjective, pair_weights

    k1, p = generators.shape[1], generators.shape[2]
    obj = SingleNeuronObjective(pair_weights(p, k1 - 1))
    support = list(np.flatnonzero(weights > 0))
    extra = [i for i in range(len(generators)) if i not in support and obj.value(generators[i].ravel()) >= threshold]
    per_orbit = p ** (k1 - 1)
    keep = (support + extra)[: max(len(support), max_columns // per_orbit)]
    return generators[keep]
