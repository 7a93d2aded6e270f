"""Small max-margin networks: a mixed-integer step on the column-generation dictionary (see docs/theory.md).

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

from margintheory.errors import InputError, SolverError
from margintheory.margins import input_grid
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
        if max_width is not None or (target is not None and val_t >= target):
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
    support = [int(i) for i in np.flatnonzero(weights > 0)]
    extra = [i for i in range(len(generators)) if i not in support and obj.value(generators[i].ravel()) >= threshold]
    per_orbit = p ** (k1 - 1)
    keep = (support + extra)[: max(len(support), max_columns // per_orbit)]
    return generators[keep]


# -- phase-grid dictionary and sparse vertices ---------------------------------------------------------------------
# In Fourier coordinates one frequency block of the uniform objective is Re(conj(w^) prod_j u_j^) (Lemma C.14), which
# is invariant under u_j^ -> e^{i phi_j} u_j^, w^ -> e^{i (phi_1 + ... + phi_k)} w^ and under moving the block to any
# other frequency of the same kind.  So the maximiser found by the single-neuron solver generates a family of
# maximisers: its amplitudes and (aligned) phases, shifted on a grid of phases, at every frequency.  Membership of
# every generated column in the optimal set is re-checked numerically (its objective value is recomputed).


def phase_family(maximiser: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """The maximiser's amplitudes and phases, shifted by each row ``t`` of ``shifts (n, k)`` (``w`` by ``sum t``),
    at every frequency ``1..(p-1)/2``; unit neurons of shape ``(n (p-1)/2, k+1, p)``."""
    from margintheory.fourier import neuron_fourier

    k1, p = maximiser.shape
    k = k1 - 1
    nf = neuron_fourier(PolyNetwork(maximiser[None, :k], maximiser[None, k]))
    amps, phases = nf.amplitudes[0], nf.phases[0]
    total = np.concatenate([shifts, shifts.sum(axis=1, keepdims=True)], axis=1)  # (n, k+1)
    x = np.arange(p)
    out = []
    for z in range(1, (p - 1) // 2 + 1):
        ang = phases[None, :, None] + total[:, :, None] + 2 * np.pi * z * x[None, None, :] / p
        out.append(amps[None, :, None] * np.cos(ang))
    cols = np.concatenate(out)
    return cols / np.linalg.norm(cols.reshape(len(cols), -1), axis=1)[:, None, None]


def phase_grid_dictionary(maximiser: np.ndarray, grid: int) -> np.ndarray:
    """Unit neurons ``u_j[x] = A_j cos(phi_j + t_j + 2 pi z x/p)``, ``w[c] = A_w cos(phi_w + t_1+..+t_k + 2 pi z c/p)``
    for ``t_j`` in ``(2 pi / grid) Z_grid`` and every frequency ``z = 1..(p-1)/2``, from the maximiser's amplitudes
    ``A`` and phases ``phi`` (:func:`margintheory.fourier.neuron_fourier`).  Shape ``(n, k+1, p)``."""
    k = maximiser.shape[0] - 1
    return phase_family(maximiser, 2 * np.pi * input_grid(grid, k) / grid)


def sparse_vertices(A: np.ndarray, target: float, *, trials: int = 40, seed: int = 0,
                    time_limit: float | None = None) -> tuple[np.ndarray, str]:
    """Sparsity by vertices: the minimal-support points of ``{s >= 0, sum s = 1, A s >= target}`` are vertices, and
    the simplex method returns vertices.  Minimise ``trials`` random positive costs (HiGHS dual simplex via
    cvxpy) and keep the smallest support whose exact margin re-check (LP on that support) reaches ``target``."""
    import cvxpy as cp

    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    scale = float(np.abs(A).max()) or 1.0
    n = A.shape[1]
    s = cp.Variable(n, nonneg=True)
    c = cp.Parameter(n)
    prob = cp.Problem(cp.Minimize(c @ s), [(A / scale) @ s >= target / scale, cp.sum(s) == 1])
    best: np.ndarray | None = None
    status = "no-vertex-reached-target"
    for _ in range(trials):
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            status = "time-limit"
            break
        c.value = rng.random(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                prob.solve(solver="HIGHS", primal_feasibility_tolerance=1e-10, dual_feasibility_tolerance=1e-10)
            except (cp.error.SolverError, ValueError):
                continue
        if prob.status != "optimal" or s.value is None:
            continue
        support = np.flatnonzero(np.asarray(s.value) > 1e-12)
        if best is not None and len(support) >= len(best):
            continue
        if _lp_on(A, support)[1] >= target * (1 - 1e-12):
            best, status = support, "vertex"
    if best is None:
        raise SolverError(f"width search: {status} (no vertex of the target polytope found)")
    return best, f"{status}; {trials} random vertices"


def min_width_on_phase_grid(maximiser: np.ndarray, target: float, grid: int, *, trials: int = 40, seed: int = 0,
                            time_limit: float | None = None) -> WidthResult:
    """Smallest support found among vertices over the phase-grid dictionary (an upper bound on the minimal width)."""
    from margintheory.solvers.objective import SingleNeuronObjective, pair_weights

    t0 = time.perf_counter()
    cols = phase_grid_dictionary(maximiser, grid)
    k = cols.shape[1] - 1
    p = cols.shape[2]
    obj = SingleNeuronObjective(pair_weights(p, k))
    values = np.array([obj.value(c.ravel()) for c in cols])
    U, W = cols[:, :k], cols[:, k]
    A = neuron_pair_contributions(U, W)[:, _wrong_mask(p, k)].T
    chosen, status = sparse_vertices(A, target, trials=trials, seed=seed, time_limit=time_limit)
    s_sel, _ = _lp_on(A, chosen)
    sv = np.zeros(len(U))
    sv[chosen] = s_sel
    net = network_from_columns(U, W, sv)
    res = WidthResult(net, exact_normalised_margin(net), net.m, len(U), status, time.perf_counter() - t0,
                      f"min-width on a {grid}-point phase grid")
    res.column_value_spread = float(values.max() - values.min())  # type: ignore[attr-defined]
    return res


# -- cyclic phase lattices -----------------------------------------------------------------------------------------
# Expanding (sum_j cos(theta_j + w a_j))^k cos(theta_1 + ... + theta_k + w c) into exponentials, a term with net
# exponents n in Z^k on the inputs and eps = +-1 on the class carries the phase factor exp(i (n + eps 1) . theta);
# only n = -eps 1 (the fully mixed term, Lemma C.14) is phase-free.  For p large enough that frequencies do not
# alias, a weighted set of phase vectors theta gives the max margin iff its moments vanish at every other
# m = n + eps 1 (|n|_1 <= k, |n|_1 = k mod 2).  The cyclic group {t g 2 pi / N : t in Z_N} has vanishing moments
# exactly at the m with m . g != 0 mod N.  This derivation only proposes candidates: each one is accepted only
# after the margin LP on all pairs (and the exhaustive engine) reaches the target for the given p.


def unwanted_phase_moments(k: int) -> np.ndarray:
    """The moment vectors ``m = n + eps 1 != 0`` of the derivation above, shape ``(count, k)``."""
    rng = range(-k, k + 1)
    out = set()
    for n in itertools.product(rng, repeat=k):
        a = sum(abs(v) for v in n)
        if a > k or (k - a) % 2:
            continue
        for eps in (1, -1):
            m = tuple(v + eps for v in n)
            if any(m):
                out.add(m)
    return np.array(sorted(out), dtype=np.int64)


def cyclic_phase_lattices(k: int, max_order: int) -> list[tuple[int, tuple[int, ...]]]:
    """``(N, g)`` with ``g`` in ``Z_N^k`` (``g_1 = 1``) such that ``m . g != 0 (mod N)`` for every unwanted ``m``,
    by increasing ``N``."""
    M = unwanted_phase_moments(k)
    found = []
    for N in range(2, max_order + 1):
        for rest in itertools.product(range(N), repeat=k - 1):
            g = np.array((1, *rest))
            if np.all((M @ g) % N != 0):
                found.append((N, (1, *rest)))
    return found


def min_width_cyclic_lattice(maximiser: np.ndarray, target: float, *, max_order: int = 40,
                             time_limit: float | None = None) -> WidthResult:
    """The first candidate lattice (smallest ``N``) whose phase family, with LP-optimised weights, reaches
    ``target`` on every pair: width ``<= N (p-1)/2`` (the LP may drop columns)."""
    t0 = time.perf_counter()
    k1, p = maximiser.shape
    k = k1 - 1
    tried = 0
    for N, g in cyclic_phase_lattices(k, max_order):
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            break
        tried += 1
        shifts = 2 * np.pi * np.outer(np.arange(N), g) / N
        cols = phase_family(maximiser, shifts)
        U, W = cols[:, :k], cols[:, k]
        A = neuron_pair_contributions(U, W)[:, _wrong_mask(p, k)].T
        s, val = _lp_on(A, np.arange(len(U)))
        if val >= target:
            net = network_from_columns(U, W, s)
            return WidthResult(net, exact_normalised_margin(net), net.m, len(U),
                               f"cyclic lattice N={N}, g={g} ({tried} candidates tried)", time.perf_counter() - t0,
                               "min-width over cyclic phase lattices")
    raise SolverError(f"width search: no cyclic phase lattice of order <= {max_order} reached the target "
                      f"({tried} candidates tried)")


@dataclass
class WidthSearch:
    """The best network found and every attempt (method, width, margin, status, seconds)."""

    best: WidthResult
    attempts: list[dict[str, object]]


def search_small_width(maximiser: np.ndarray, generators: np.ndarray, weights: np.ndarray, target: float, *,
                       max_width: int | None = None, time_limit: float | None = 120.0) -> WidthSearch:
    """Smallest width reaching ``target`` found by (1) cyclic phase lattices of the solver's maximiser family,
    (2) random vertices over a 4-point phase grid of that family and, only if both fail, (3) the column-generation
    dictionary (fewest orbits, then backward elimination); with ``max_width``, if no
    network that small reaches the target, the best one is pruned (LP re-solved each step) down to ``max_width``."""
    attempts: list[dict[str, object]] = []
    found: list[WidthResult] = []
    k = maximiser.shape[0] - 1
    runs = [("cyclic-lattice", lambda: min_width_cyclic_lattice(maximiser, target, max_order=24 if k <= 3 else 12,
                                                                time_limit=time_limit)),
            ("phase-grid-vertices", lambda: min_width_on_phase_grid(maximiser, target, 4, trials=20,
                                                                    time_limit=time_limit)),
            ("cg-dictionary", lambda: _cg_dictionary_width(generators, weights, target, time_limit))]
    for name, run in runs:
        if found and name == "cg-dictionary":  # only when the phase-family searches failed (slower and wider)
            break
        try:
            r = run()
        except SolverError as exc:
            attempts.append({"method": name, "status": str(exc)})
            continue
        attempts.append({"method": name, "width": r.width, "margin": r.margin, "status": r.status,
                         "seconds": r.seconds, "dictionary": r.dictionary_size})
        if r.margin >= target * (1 - 1e-12):
            found.append(r)
    if not found:
        raise SolverError("width search: no method reached the target margin")
    best = min(found, key=lambda r: r.width)
    if max_width is not None and best.width > max_width:
        gens = np.concatenate([best.network.U, best.network.W[:, None, :]], axis=1)
        gens = gens / np.linalg.norm(gens.reshape(len(gens), -1), axis=1)[:, None, None]
        U, W = gens[:, :k], gens[:, k]
        A = neuron_pair_contributions(U, W)[:, _wrong_mask(U.shape[2], k)].T
        cols, _, status = greedy_prune(A, max_width=max_width, time_limit=time_limit)
        s_sel, _ = _lp_on(A, cols)
        sv = np.zeros(len(U))
        sv[cols] = s_sel
        net = network_from_columns(U, W, sv)
        best = WidthResult(net, exact_normalised_margin(net), net.m, len(U), f"pruned to <= {max_width}: {status}",
                           0.0, f"max-margin at width <= {max_width}")
        attempts.append({"method": "prune-to-max-width", "width": best.width, "margin": best.margin,
                         "status": best.status})
    return WidthSearch(best, attempts)


def _cg_dictionary_width(generators: np.ndarray, weights: np.ndarray, target: float,
                         time_limit: float | None) -> WidthResult:
    gens = width_generators(generators, weights, target)
    gens = gens[fewest_orbits(gens, target)]
    return smallest_width(gens, target=target, time_limit=time_limit)


def phase_moment_clique(k: int) -> list[tuple[int, ...]]:
    """A largest set ``S`` of integer vectors whose pairwise differences are all unwanted moments (exact
    branch-and-bound over the finitely many candidates; ``0 in S`` by translation).

    Lower-bound argument (not solver-certified): if a positive measure ``mu`` with ``N`` atoms has vanishing moments
    on every unwanted ``m`` (the per-frequency condition derived above), then for
    ``P(theta) = |sum_{s in S} c_s e^{i s.theta}|^2 >= 0`` one has ``int P dmu = mu(T^k) sum |c_s|^2 > 0``; if
    ``N < |S|`` some ``c != 0`` makes ``P`` vanish at every atom, a contradiction.  Hence every max-margin network
    needs ``>= |S|`` neurons per frequency -- under the assumptions that it consists of optimal single-frequency
    neurons (Lemma C.6 / C.15), that ``p`` is prime and ``p > 2k`` (no aliasing between the patterns
    ``(n zeta, eps zeta) mod p``), so that the frequencies decouple.
    """
    M = {tuple(int(v) for v in m) for m in unwanted_phase_moments(k)}
    cand = sorted(M)
    adj = {q: {r for r in cand if r != q and tuple(a - b for a, b in zip(q, r, strict=True)) in M} for q in cand}
    best: list[tuple[int, ...]] = []

    def expand(chosen: list[tuple[int, ...]], pool: set[tuple[int, ...]]) -> None:
        nonlocal best
        if len(chosen) > len(best):
            best = list(chosen)
        for v in sorted(pool, key=lambda v: (-len(adj[v] & pool), v)):
            if len(chosen) + len(pool) <= len(best):
                return
            expand(chosen + [v], pool & adj[v])
            pool = pool - {v}

    expand([], set(cand))
    return [tuple([0] * k), *best]


def per_frequency_lower_bound(p: int, k: int) -> dict[str, object]:
    """``|S|`` of :func:`phase_moment_clique` and whether its assumptions on ``p`` hold (prime, ``p > 2k``)."""
    from margintheory.theory import is_prime

    clique = phase_moment_clique(k)
    applies = bool(is_prime(p) and p > 2 * k)
    return {"neurons_per_frequency_at_least": len(clique), "width_at_least": len(clique) * ((p - 1) // 2),
            "applies_to_this_p": applies, "clique": clique,
            "kind": "argument (moment/positivity), assumes optimal single-frequency neurons, p prime, p > 2k"}
