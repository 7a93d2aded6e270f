"""The network-level max-margin problem as a linear program over neuron weights, solved by column generation
(docs/theory.md#weak-duality: homogeneity, Lemma C.5 = Lemma 7.5, weak duality of Lemma C.6 = 7.6).

For unit-norm directions ``theta_i`` and weights ``s_i = ||theta_i'||^(k+1) >= 0`` of the network
``theta' = (s_i^(1/(k+1)) theta_i)``, ``||theta'||_{2,k+1}^(k+1) = sum s_i`` and the logits are linear in ``s``:

    ``max gamma  s.t.  sum_i s_i phi_i(a, c) >= gamma  for all (a, c != y),  s >= 0,  sum_i s_i <= 1``,

``phi_i(a, c) = f_i(a)[y] - f_i(a)[c]``.  Its dual is ``min t`` over distributions ``lam`` on the pairs with
``E_lam[phi_i] <= t`` for every column; pricing a new column is the class-weighted single-neuron problem under
``lam``.  Weak duality: for **any** distribution ``lam`` and every network of norm ``<= 1``,
``h <= max_{unit theta} E_lam[phi_theta]``; so every priced value is an upper bound on the max margin (heuristic
when priced by local search, certified when the single-neuron problem under that ``lam`` is bounded by a relaxation).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.margins import input_grid
from margintheory.errors import InputError, SolverError
from margintheory.runtime.process import load_native_imports
from margintheory.solvers._quiet import native_stdout_silenced
from margintheory.solvers.cost import DENSE_MARGIN_ENTRIES
from margintheory.solvers.objective import (
    _wrong_mask,
    neuron_pair_contributions,
    pair_weights_from_lambda,
)

LP_SOLVERS = ("HIGHS", "CLARABEL")


@dataclass(frozen=True)
class LPSolution:
    """Optimal ``gamma``, weights ``s`` and dual distribution ``lam`` (shape ``(p**k, p)``) of the margin LP."""

    gamma: float
    s: np.ndarray
    lam: np.ndarray
    status: str
    seconds: float


def random_unit_neurons(p: int, k: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``m`` Gaussian directions normalised to ``||(u_1..u_k, w)|| = 1``: ``U (m, k, p)``, ``W (m, p)``."""
    X = rng.standard_normal((m, (k + 1) * p))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = X.reshape(m, k + 1, p)
    return X[:, :k].copy(), X[:, k].copy()


def max_min_lp(A: np.ndarray, *, solver: str = "HIGHS", time_limit: float | None = None):
    """``max gamma s.t. A s >= gamma, s >= 0, sum s <= 1`` for ``A (rows, columns)``.

    Returns ``(s, dual, status, seconds)`` with ``s`` normalised to ``sum s = 1`` (or 0) and ``dual`` the
    non-negative multipliers of the rows normalised to a distribution.  The LP is solved on ``A / max|A|`` so that
    the solver's absolute tolerances act as relative ones.
    """
    import cvxpy as cp

    if solver not in LP_SOLVERS:
        raise InputError(f"LP solver must be one of {LP_SOLVERS}")
    if solver not in cp.installed_solvers():
        raise SolverError(f"LP solver {solver} is not installed")
    scale = float(np.abs(A).max()) or 1.0
    s = cp.Variable(A.shape[1], nonneg=True)
    g = cp.Variable()
    margin = (A / scale) @ s >= g
    prob = cp.Problem(cp.Maximize(g), [margin, cp.sum(s) <= 1])
    opts: dict[str, object] = {}
    if solver == "HIGHS":  # output_flag: no licence banner on the process's stdout (it would corrupt --json)
        opts = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10, "output_flag": False}
    if time_limit is not None:
        opts["time_limit"] = float(max(time_limit, 1.0))
    t0 = time.perf_counter()
    status = "not-run"
    relaxed = {key: v for key, v in opts.items() if key in ("time_limit", "output_flag")}
    for attempt in (opts, relaxed):  # tight, then default tolerances
        try:
            with warnings.catch_warnings(), native_stdout_silenced():
                warnings.simplefilter("ignore")
                load_native_imports()  # (a signal must not land inside the native solve's imports)
                prob.solve(solver=solver, **attempt)
            status = str(prob.status)
        except (cp.error.SolverError, ValueError) as exc:  # cvxpy raises ValueError on an UNKNOWN solver status
            status = f"failed ({exc})"
            continue
        if status == "optimal" and s.value is not None and margin.dual_value is not None:
            break
    else:
        raise SolverError(f"margin LP: {solver} returned status {status!r}")
    sv = np.clip(np.asarray(s.value, dtype=float), 0.0, None)
    total = sv.sum()
    if total > 0:  # s = 0 (margin 0) is optimal while the columns cannot separate the data
        sv /= total
    dual = np.clip(np.asarray(margin.dual_value, dtype=float), 0.0, None)
    if dual.sum() <= 0:
        raise SolverError(f"margin LP: {solver} returned a zero dual")
    return sv, dual / dual.sum(), status, time.perf_counter() - t0


def solve_margin_lp(phi: np.ndarray, mask: np.ndarray, *, solver: str = "HIGHS",
                    time_limit: float | None = None) -> LPSolution:
    """The LP of the module docstring for columns ``phi (m, p**k, p)`` on the wrong pairs ``mask``;
    ``gamma`` is recomputed from ``s`` as the exact minimum over pairs (not the solver's objective)."""
    A = phi[:, mask].T  # (pairs, m)
    sv, dual, status, seconds = max_min_lp(A, solver=solver, time_limit=time_limit)
    lam = np.zeros(mask.shape)
    lam[mask] = dual
    return LPSolution(float((A @ sv).min()), sv, lam, status, seconds)


def network_from_columns(U: np.ndarray, W: np.ndarray, s: np.ndarray, support_tol: float = 0.0) -> PolyNetwork:
    """``theta_i' = s_i^(1/(k+1)) theta_i`` for the columns with ``s_i > support_tol`` (unit columns assumed)."""
    keep = np.flatnonzero(s > support_tol)
    k = U.shape[1]
    r = s[keep] ** (1.0 / (k + 1))
    return PolyNetwork(U[keep] * r[:, None, None], W[keep] * r[:, None], {"lp_weight": s[keep]})


def _distinct(points: np.ndarray, values: np.ndarray, threshold: float, limit: int) -> list[int]:
    """Indices of up to ``limit`` local maxima above ``threshold`` that are not (anti)parallel to one another."""
    chosen: list[int] = []
    for i in np.argsort(-values):
        if values[i] <= threshold or len(chosen) >= limit:
            break
        if all(abs(float(points[i] @ points[j])) < 1 - 1e-9 for j in chosen):
            chosen.append(int(i))
    return chosen


# -- translation symmetry ------------------------------------------------------------------------------------------
# The group Z_p^k acts on neurons by u_i -> u_i(. - t_i), w -> w(. - t_1 - ... - t_k) and on pairs by
# (a, c) -> (a + t, c + t_1 + ... + t_k); phi is equivariant, so the LP is invariant.  Over a dictionary closed
# under the group an optimal s may be taken constant on orbits, and the orbit-summed contribution depends on the
# pair only through d = c - y(a) in {1..p-1}: the LP shrinks to p-1 rows (one per d), its dual is
# lam(a, c) = tau(c - y(a)) / p^k.  Validity of the reported bounds does not rest on this reduction: the network's
# margin is recomputed over all pairs, and weak duality holds for any distribution lam.


def translation_orbit(U: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ``p^k`` translates of one neuron ``(U (k, p), w (p))``: ``(p**k, k, p)``, ``(p**k, p)``."""
    k, p = U.shape
    T = input_grid(p, k)  # translations t
    x = np.arange(p)
    Uo = np.stack([U[i][(x[None, :] - T[:, i:i + 1]) % p] for i in range(k)], axis=1)
    Wo = w[(x[None, :] - T.sum(axis=1, keepdims=True)) % p]
    return Uo, Wo


def orbit_margin_profile(U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``Phi(d) = p^-k sum_a phi(a, y(a) + d)`` for ``d = 1..p-1``: the orbit-averaged contribution."""
    k, p = U.shape
    phi = neuron_pair_contributions(U[None], w[None])[0]  # (p**k, p)
    A = input_grid(p, k)
    y = A.sum(axis=1) % p
    d = np.arange(1, p)
    return phi[np.arange(len(A))[:, None], (y[:, None] + d[None, :]) % p].mean(axis=0)


def lambda_from_tau(p: int, k: int, tau: np.ndarray) -> np.ndarray:
    """``lam(a, c) = tau(c - y(a)) / p^k`` (``tau`` indexed by ``d = 1..p-1``)."""
    y = input_grid(p, k).sum(axis=1) % p
    full = np.concatenate([[0.0], tau])
    return full[(np.arange(p)[None, :] - y[:, None]) % p] / p**k


@dataclass
class RoundRecord:
    """One round: LP value (primal margin of the orbit network), priced bracket under the LP dual, columns."""

    round: int
    lp_value: float
    priced_lower: float
    priced_upper: float
    orbits: int
    support: int
    added: int
    seconds: float


@dataclass
class ColumnGenerationResult:
    """The network found (its margin is a lower bound on the max margin) and the dual bounds."""

    p: int
    k: int
    primal_margin: float  # min over all pairs of the final network, normalised (recomputed, not the LP value)
    lp_value: float
    dual_bound: float  # min over rounds of the priced upper bound (certified iff dual_certified)
    dual_certified: bool
    heuristic_dual_bound: float  # min over rounds of the priced local value (an upper bound if pricing is exact)
    network: PolyNetwork
    tau: np.ndarray  # final LP dual over d = c - y in 1..p-1
    generators: np.ndarray  # (n_orbits, k+1, p) unit orbit generators
    weights: np.ndarray  # LP weight of each orbit
    rounds: list[RoundRecord]
    converged: bool
    status: str
    seconds: float
    pricing_solver: dict[str, object] = field(default_factory=dict)

    @property
    def width(self) -> int:
        return self.network.m

    @property
    def relative_gap(self) -> float:
        return (self.dual_bound - self.primal_margin) / abs(self.primal_margin) if self.primal_margin else np.inf

    def dual_summary(self) -> dict[str, object]:
        """Is the final dual uniform?  On which points (``lam(a, c) = tau(c - y) / p^k``)?"""
        t = self.tau
        return {"form": "lam(a,c) = tau(c - y(a)) / p^k (uniform over inputs by the symmetry reduction)",
                "tau": t, "tau_min_over_max": float(t.min() / t.max()), "support_d": np.flatnonzero(t > 0) + 1,
                "uniform_rtol_1e-6": bool(np.all(np.abs(t - 1 / len(t)) <= 1e-6 / len(t)))}


def orbit_network(generators: np.ndarray, weights: np.ndarray) -> PolyNetwork:
    """Every translate of every generator with ``weights > 0``, scaled so that ``||theta||_{2,k+1} = 1``."""
    k = generators.shape[1] - 1
    parts_U, parts_W, s, orbit = [], [], [], []
    for o in np.flatnonzero(weights > 0):
        Uo, Wo = translation_orbit(generators[o, :k], generators[o, k])
        parts_U.append(Uo)
        parts_W.append(Wo)
        s.append(np.full(len(Uo), weights[o] / len(Uo)))
        orbit.append(np.full(len(Uo), o))
    sv = np.concatenate(s)
    net = network_from_columns(np.concatenate(parts_U), np.concatenate(parts_W), sv)
    return PolyNetwork(net.U, net.W, {"lp_weight": sv, "orbit": np.concatenate(orbit)})




def exact_normalised_margin(net: PolyNetwork) -> float:
    """``min_{(a, c != y)} (f[y] - f[c]) / ||theta||^(k+1)`` computed from every neuron over every pair (dense for
    small networks; streamed by :func:`margintheory.engines.margins.exhaustive_margin` when the dense array would exceed
    :data:`DENSE_MARGIN_ENTRIES`, e.g. the orbit networks of ``(7, 4)``: ``(p-1) p^k`` neurons)."""
    if net.m * net.p ** (net.k + 1) > DENSE_MARGIN_ENTRIES:
        from margintheory.engines.margins import exhaustive_margin

        return float(exhaustive_margin(net).normalized_margin)
    phi = neuron_pair_contributions(net.U, net.W).sum(axis=0)
    return float(phi[_wrong_mask(net.p, net.k)].min() / net.norm() ** (net.k + 1))


def column_generation(p: int | ModularAddition, k: int | None = None, *, seed: int = 0, initial_columns: int = 4,
                      n_starts: int = 8, add_per_round: int = 4, max_rounds: int = 60, rtol: float = 1e-9,
                      time_limit: float | None = None, lp_solver: str = "HIGHS", certify: bool = True,
                      max_warm_starts: int = 8, pricing: str | None = None,
                      progress: Callable[[RoundRecord], None] | None = None,
                      max_memory: int = 2 * 2**30, sdp_solver: str = "CLARABEL") -> ColumnGenerationResult:
    """Column generation for the problem ``p`` (a :class:`~margintheory.core.problems.ModularAddition`, or an integer
    with ``k``) over translation-closed dictionaries, from random unit neurons (never the construction).  Each round:
    the reduced LP over orbits; its dual ``tau`` defines pair weights ``lam``; the single-neuron problem under ``lam``
    is bracketed by :func:`solve_single_neuron` (multi-start lower value; certified SOS upper bound when ``certify``);
    the priced upper value is a certified bound on the max margin (weak duality); up to ``add_per_round`` distinct
    local maxima above the LP value are added as new orbits.  Stops when the priced lower value is
    ``<= lp_value (1 + rtol)``.  ``max_memory``, ``sdp_solver``: the SOS pricing's budget (refused up front), solver.

    ``pricing="fourier"`` (the default for odd ``p``; refused for even ``p``) prices by the closed form of
    :mod:`margintheory.solvers.fourier_pricing` (exact under the LP's translation-invariant dual; its rounding-safe
    value is the certified bound) and adds the maximiser of each of the ``add_per_round`` best frequencies;
    ``pricing="sos"`` (the default for even ``p``) uses :func:`solve_single_neuron` as described above."""
    problem = as_problem(p, k)
    p, k, pricing = problem.p, problem.k, _pricing_for(problem.p, pricing)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    gens, profiles = _initial_orbits(p, k, initial_columns, rng)
    rounds: list[RoundRecord] = []
    status, converged = "max-rounds", False
    dual_ub, heur_ub = np.inf, np.inf
    solver_info: dict[str, object] = {}
    sv = tau = None
    for r in range(1, max_rounds + 1):
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            status = "time-limit"
            break
        sv, tau, _, _ = max_min_lp(np.array(profiles).T, solver=lp_solver, time_limit=left)
        lp_value = float((np.array(profiles).T @ sv).min())
        support = np.flatnonzero(sv > 0)
        if pricing == "fourier":
            X, rec, done = _fourier_round(p, k, tau, lp_value, rtol, add_per_round, rng, r, len(gens),
                                          len(support), time.perf_counter() - t0)
            upper_certified, solver_info = True, dict(FOURIER_PRICING_INFO)
        else:
            heavy = support[np.argsort(-sv[support])][:max_warm_starts]  # warm starts: the heaviest columns
            X, rec, done, upper_certified, solver_info = _sos_round(
                problem, tau, lp_value, rtol, add_per_round, rng, gens[heavy], (r, len(gens), len(support), t0),
                certify=certify, n_starts=n_starts, time_limit=left, max_memory=max_memory, solver=sdp_solver)
        heur_ub = min(heur_ub, rec.priced_lower)
        dual_ub = min(dual_ub, rec.priced_upper) if upper_certified else dual_ub
        rounds.append(rec)
        if progress is not None:
            progress(rec)
        if done:
            status, converged = "converged", True
            break
        gens = np.concatenate([gens, X])
        profiles += [orbit_margin_profile(g[:k], g[k]) for g in X]
    net, sv, tau, lp_value = _final_network(gens, profiles, sv, tau, lp_solver)
    certified_all = certify and bool(np.isfinite(dual_ub))
    return ColumnGenerationResult(p, k, exact_normalised_margin(net), lp_value, float(dual_ub), certified_all,
                                  float(heur_ub), net, tau, gens, sv, rounds, converged, status,
                                  time.perf_counter() - t0, solver_info)


#: the solver record of a round priced by the closed form
FOURIER_PRICING_INFO = {"name": "closed-form Fourier pricing (fourier_pricing.price)", "status": "exact"}


def _pricing_for(p: int, pricing: str | None) -> str:
    """``pricing`` checked (``None``: the default for ``p``); the closed form needs odd ``p`` (frequency ``p/2`` is
    real and not priced by it), so even ``p`` is priced by SOS and ``"fourier"`` is refused there, not replaced."""
    if pricing is None:
        return "fourier" if p % 2 == 1 else "sos"
    if pricing not in ("fourier", "sos"):
        raise InputError(f"pricing must be 'fourier' or 'sos', got {pricing!r}")
    if pricing == "fourier" and p % 2 == 0:
        raise InputError(f"fourier pricing needs odd p (the closed form does not price the real frequency p/2); "
                         f"p = {p}: use pricing 'sos'")
    return pricing


def _final_network(gens: np.ndarray, profiles: list[np.ndarray], sv: np.ndarray | None, tau: np.ndarray | None,
                   lp_solver: str) -> tuple[PolyNetwork, np.ndarray, np.ndarray, float]:
    """The orbit network of the last LP (re-solved once if the loop stopped after adding columns), its weights,
    dual and value."""
    if sv is None or tau is None:  # both come from the same LP solve
        raise SolverError("column generation: time limit reached before the first LP was solved")
    if len(sv) < len(gens):  # the loop stopped after adding columns: re-solve once
        sv, tau, _, _ = max_min_lp(np.array(profiles).T, solver=lp_solver)
    if not np.any(sv > 0) or tau is None:
        raise SolverError("column generation: no network with positive margin found (increase the time limit)")
    return orbit_network(gens, sv), sv, tau, float((np.array(profiles).T @ sv).min())


def _initial_orbits(p: int, k: int, count: int, rng: np.random.Generator) -> tuple[np.ndarray, list[np.ndarray]]:
    """``count`` random unit neurons as orbit generators ``(count, k+1, p)`` and their margin profiles."""
    U0, W0 = random_unit_neurons(p, k, count, rng)
    gens = np.concatenate([U0, W0[:, None, :]], axis=1)
    return gens, [orbit_margin_profile(g[:k], g[k]) for g in gens]


def _sos_round(problem: ModularAddition, tau: np.ndarray, lp_value: float, rtol: float, add: int,
               rng: np.random.Generator, warm: np.ndarray, record: tuple[int, int, int, float], *, certify: bool,
               n_starts: int, time_limit: float | None, max_memory: int, solver: str = "CLARABEL"
               ) -> tuple[np.ndarray, RoundRecord, bool, bool, dict[str, Any]]:
    """One pricing step by :func:`solve_single_neuron` under the LP dual ``tau`` (warm-started from the generators
    ``warm``): ``(new generators, the round's record, converged, upper bound certified, solver summary)``;
    ``record`` is ``(round, orbits, support, start time)``."""
    from margintheory.solvers.single_neuron import solve_single_neuron

    p, k = problem.p, problem.k
    weights = pair_weights_from_lambda(problem, None, lambda_from_tau(p, k, tau))
    starts = warm.reshape(len(warm), -1) if len(warm) else None
    bracket = solve_single_neuron(problem, None, weights, method="auto" if certify else "none", n_starts=n_starts,
                                  seed=int(rng.integers(2**31)), extra_starts=starts, time_limit=time_limit,
                                  max_memory=max_memory, solver=solver)
    loc = bracket.local
    new = _distinct(loc.points, loc.values, lp_value * (1 + rtol), add)
    X = loc.points[new].reshape(len(new), k + 1, p)
    r, orbits, support, t0 = record
    rec = RoundRecord(r, lp_value, bracket.lower, bracket.upper, orbits, support, len(new), time.perf_counter() - t0)
    done = not new or bracket.lower <= lp_value * (1 + rtol)
    return X, rec, done, bracket.upper_certified, bracket.sos_summary()


def _fourier_round(p: int, k: int, tau: np.ndarray, lp_value: float, rtol: float, add: int,
                   rng: np.random.Generator, r: int, orbits: int, support: int, elapsed: float):
    """One pricing step by the closed form: ``(new generators, record, converged)``."""
    from margintheory.solvers.fourier_pricing import price, priced_neuron

    pr = price(p, k, tau)
    order = [int(j) + 1 for j in np.argsort(-pr.values) if pr.values[j] > lp_value * (1 + rtol)][:add]
    X = np.array([priced_neuron(p, k, j, float(pr.phases[j - 1]), rng.uniform(0, 2 * np.pi, k)) for j in order])
    rec = RoundRecord(r, lp_value, pr.best_value, pr.upper, orbits, support, len(order), elapsed)
    return X.reshape(len(order), k + 1, p), rec, not order
