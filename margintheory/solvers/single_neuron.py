"""The single-neuron bracket ``[lower, upper]`` for ``max_{|theta| <= 1} E_lam[psi']`` (docs/theory.md).

* lower: multi-start local maximisation (:mod:`margintheory.solvers.local`) -- a value attained by a unit neuron;
* upper: a certified SOS bound (:mod:`margintheory.solvers.sos`), either on the whole polynomial (``generic``)
  or, when the expansion in Fourier coordinates has (numerically) no cross-frequency monomials -- the case of
  uniform weights, Lemma C.14 -- per frequency block (``fourier-blocks``; :mod:`margintheory.solvers.symmetry`
  states the argument, and the computed cross-frequency mass is added to the bound rather than dropped).

Uniform weights (the default, ``method="auto"``) take the exact path ``fourier-exact`` instead: the objective is
never expanded in the ``(k+1) p`` weights.  Lemma C.14 (Li et al., "Fourier Circuits in Neural Networks and
Transformers", arXiv:2402.09469), proved for all ``p`` in :mod:`margintheory.symbolic.block_reduction`, makes every
frequency block a constant times ``g_k = Re(conj(z_w) z_1 ... z_k)`` on ``C^(k+1)``;

* lower: a local maximiser of ``g_k`` (BFGS on ``2(k+1)`` variables, seeded starts) embedded as a unit neuron of
  frequency 1 (for even ``p`` its moduli on the real frequency-``p/2`` block, whose constant is larger), its
  objective evaluated by the DFT form of Lemma C.14 (numpy FFT; and by the direct sum over all
  ``p^k`` inputs when ``p^k <= DIRECT_LIMIT``, the smaller value being reported);
* upper: the proved rational bound of :func:`margintheory.certificate.upper_bound.prove_upper_bound` (torus-reduced
  SOS certificate of ``g_k`` rounded to rationals and checked exactly), rounded up to float64.

Memory is estimated before anything is allocated; :class:`~margintheory.errors.RefusedError` beyond ``max_memory``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from margintheory.core.checks import Exactness
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.fourier import neuron_fourier
from margintheory.errors import InputError
from margintheory.runtime import progress
from margintheory.solvers.cost import DIRECT_LIMIT, single_neuron_bracket_bytes
from margintheory.solvers.local import LocalMaxima, multistart_maximise
from margintheory.solvers.objective import PairWeights, SingleNeuronObjective, pair_weights
from margintheory.solvers.polynomial import Polynomial, power_times_linear_abs_mass
from margintheory.solvers.sos import EPS, SOSBound, sphere_max_upper_bound
from margintheory.solvers.symmetry import BlockSplit, split_by_frequency

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.certificate.upper_bound import ProvedUpperBound

METHODS = ("auto", "fourier-exact", "fourier-blocks", "generic", "none")
#: cross-frequency coefficient mass (relative to the total) below which the block reduction is used by ``auto``
DECOUPLED_RTOL = 1e-12


@dataclass
class SingleNeuronBracket:
    """Result of :func:`solve_single_neuron`; ``upper`` is ``inf`` when no relaxation was run."""

    p: int
    k: int
    lower: float
    upper: float
    upper_certified: bool
    method: str
    maximiser: np.ndarray  # (k+1, p): u_1..u_k, w (unit norm)
    local: LocalMaxima
    sos: list[SOSBound] = field(default_factory=list)
    block_frequencies: list[int] = field(default_factory=list)
    cross_frequency_l1: float = float("nan")
    coefficient_error: float = 0.0
    certification: str = ""
    seconds: float = 0.0
    proved_upper: ProvedUpperBound | None = None  # the fourier-exact path's proved bound
    weights: dict[str, Any] = field(default_factory=dict)  # class weights: hypothesis, kappa (class_weighted)
    exact_upper: Fraction | None = None  # a proved upper end as an exact rational (class_weighted's quartic-sos)
    solver_info: dict[str, Any] | None = None  # what sos_summary reports for methods without SOSBound rows

    @property
    def upper_exactness(self) -> Exactness:
        """``proved`` (exact certificate), ``certified`` (float SOS with a-posteriori margin) or ``float``."""
        if self.proved_upper is not None or self.exact_upper is not None:
            return "proved"
        return "certified" if self.upper_certified else "float"

    @property
    def relative_gap(self) -> float:
        """``(upper - lower) / |lower|`` (``inf`` without an upper bound or for ``lower = 0``)."""
        if not math.isfinite(self.upper) or self.lower == 0:
            return float("inf")
        return (self.upper - self.lower) / abs(self.lower)

    def maximiser_network(self) -> PolyNetwork:
        """The maximiser as a one-neuron :class:`PolyNetwork`."""
        return PolyNetwork(self.maximiser[None, :-1], self.maximiser[None, -1])

    def fourier_description(self) -> dict[str, object]:
        """Frequency, amplitudes, phases, phase residual of the maximiser (via :func:`fourier.neuron_fourier`)."""
        nf = neuron_fourier(self.maximiser_network())
        return {"frequency": int(nf.frequency[0]), "amplitudes": nf.amplitudes[0], "phases": nf.phases[0],
                "phase_residual": float(nf.phase_residual[0]), "max_power": nf.max_power[0],
                "single_frequency": bool(nf.single_frequency[0]), "in_optimal_set": bool(nf.in_optimal_set[0])}

    def sos_summary(self) -> dict[str, object]:
        """Worst status / largest safety margin / total time of the relaxations run."""
        if self.proved_upper is not None:
            info = self.proved_upper.solver
            return {"name": "Clarabel (block SOS) + exact rational rounding", "status": info["status"],
                    "time": self.proved_upper.seconds, "gram_blocks": info["gram_blocks"],
                    "largest_block": info["largest_block"], "kkt": info["kkt"]}
        if self.solver_info is not None:
            return dict(self.solver_info)
        if not self.sos:
            return {"name": "none", "status": "not-run", "time": 0.0}
        statuses = sorted({b.status for b in self.sos})
        return {"name": self.sos[0].solver, "status": ",".join(statuses), "time": sum(b.seconds for b in self.sos),
                "max_safety_margin": max(b.safety_margin for b in self.sos),
                "max_residual_l1": max(b.residual_l1 for b in self.sos),
                "gram_sizes": sorted({b.gram_size for b in self.sos}), "relaxations": len(self.sos)}


def coefficient_error_bound(obj: SingleNeuronObjective, B: np.ndarray) -> float:
    """A-priori bound on ``sum |error|`` of the float64 expansion of ``F`` in coordinates ``B`` (``gamma_n`` bound:
    each coefficient is a sum of ``<= p^k`` products of ``k + 2`` factors)."""
    d = B.shape[1]
    L = np.zeros((len(obj.inputs), (obj.k + 1) * d))
    for i in range(obj.k):
        L[:, i * d:(i + 1) * d] = np.abs(B[obj.inputs[:, i]])
    M = np.zeros_like(L)
    M[:, obj.k * d:] = np.abs(obj.G) @ np.abs(B)
    mass = power_times_linear_abs_mass(L, M, obj.k)
    return 2.0 * (obj.p**obj.k + obj.k + 4) * EPS * mass


def _bound_blocks(obj: SingleNeuronObjective, scale: float, solver: str, time_limit: float | None,
                  split: BlockSplit | None = None):
    split = split or split_by_frequency(obj)
    R = np.concatenate([b.basis for b in split.blocks], axis=1)
    # x = R y with R orthogonal only up to rounding: |x| <= (1 + delta) |y|, so F scales by (1 + delta)^(k+1)
    delta = float(np.linalg.norm(R.T @ R - np.eye(obj.p), 2))
    bounds, freqs, slack = [], [], split.remainder_l1
    for done, (blk, poly) in enumerate(zip(split.blocks, split.block_polys, strict=True)):
        progress.report("SOS relaxations, one per frequency", done, len(split.blocks))
        if len(poly.coeffs) == 0 or np.abs(poly.coeffs).max() <= 1e-14 * split.total_l1:
            slack += float(np.abs(poly.coeffs).sum())  # a (numerically) zero block: its mass is added, not solved
            continue
        bounds.append(sphere_max_upper_bound(poly, scale=scale, solver=solver, time_limit=time_limit))
        freqs.append(blk.frequency)
    top = max([0.0] + [b.bound for b in bounds])
    err = coefficient_error_bound(obj, R)
    upper = (top + slack + err) * (1 + delta) ** (obj.k + 1) * (1 + 4 * EPS)
    note = (f"certified: per-frequency SOS bounds (solver {solver}, a-posteriori residual margins) + computed "
            f"cross-frequency mass {split.remainder_l1:.2e} + expansion rounding {err:.2e}; the reduction "
            "max_ball F <= max_j M_j + |R|_1 is an argument (homogeneity, sum r_j^(k+1) <= 1), not a solver output")
    return upper, bounds, freqs, split.remainder_l1, err, note


def _bound_generic(obj: SingleNeuronObjective, scale: float, solver: str, time_limit: float | None,
                   split: BlockSplit | None = None):
    eye = np.eye(obj.p)
    poly: Polynomial = obj.restricted_polynomial(eye)
    err = coefficient_error_bound(obj, eye)
    b = sphere_max_upper_bound(poly, scale=scale, solver=solver, time_limit=time_limit)
    upper = (max(b.bound, 0.0) + err) * (1 + 4 * EPS)
    note = (f"certified: SOS relaxation of the full polynomial (solver {solver}, a-posteriori residual margin "
            f"{b.safety_margin:.2e}) + expansion rounding {err:.2e}")
    return upper, [b], [], float("nan"), err, note


def decoupled(split: BlockSplit) -> bool:
    """Whether the Fourier-coordinate expansion has relative cross-frequency mass below ``DECOUPLED_RTOL``."""
    return split.remainder_l1 <= DECOUPLED_RTOL * split.total_l1


def estimate_memory(p: int, k: int, method: str, solver: str = "CLARABEL") -> float:
    """Peak bytes of a bracket by ``method``, from the sizes alone
    (:func:`margintheory.solvers.cost.single_neuron_bracket_bytes`)."""
    return single_neuron_bracket_bytes(p, k, method, solver)


def _require(p: int, k: int, method: str, max_memory: int, solver: str = "CLARABEL") -> None:
    from margintheory.runtime.budget import memory_refusal

    if method == "fourier-exact":
        from margintheory.certificate.block_sos import require_memory

        require_memory(k, max_memory)  # an unsupported k is refused as such
    est = estimate_memory(p, k, method, solver)
    if est > max_memory:
        raise memory_refusal(f"the single-neuron bracket by {method} for (p, k) = ({p}, {k})", est, max_memory)


def block_form_value(y: np.ndarray, k: int) -> float:
    """``g_k(z)`` at the real coordinates ``y = (alpha_1, beta_1, ..., alpha_w, beta_w)``, ``z = alpha - i beta``."""
    z = y[0::2] - 1j * y[1::2]
    return float((np.conj(z[k]) * np.prod(z[:k])).real)


def maximise_block_form(k: int, *, n_starts: int = 8, seed: int | None = 0) -> tuple[float, np.ndarray]:
    """Local maxima of ``g_k`` on the unit sphere of ``R^(2k+2)`` (BFGS on ``g_k(y)/|y|^(k+1)``); the best."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    best, best_y = -math.inf, np.zeros(2 * (k + 1))
    for _ in range(max(1, n_starts)):
        y0 = rng.standard_normal(2 * (k + 1))
        res = minimize(lambda y: -block_form_value(y, k) / float(y @ y) ** ((k + 1) / 2), y0, method="BFGS",
                       options={"gtol": 1e-12, "maxiter": 5000})
        y = polish_block_point(np.asarray(res.x) / np.linalg.norm(res.x), k)
        v = block_form_value(y, k)
        if v > best:
            best, best_y = v, y
    return best, best_y


def polish_block_point(y: np.ndarray, k: int, iterations: int = 500) -> np.ndarray:
    """Shifted power iteration (SS-HOPM) refining a local maximiser of ``g_k`` on the sphere:
    ``z <- (grad + k |grad| z) / |...|`` (the shift makes it monotone; unshifted it oscillates) with the
    Wirtinger gradient ``(z_w conj(prod_{l != i} z_l))_i, prod_i z_i`` (the first-order condition of a maximiser is
    ``grad = (k+1) g_k z``).  The value is flat to rounding long before the phases settle, so the iteration runs
    until the step is at rounding level; the point is kept only if its value did not drop by more than 1e-13
    (relative)."""
    z = y[0::2] - 1j * y[1::2]
    best = float((np.conj(z[k]) * np.prod(z[:k])).real)
    for _ in range(iterations):
        g = np.empty_like(z)
        for i in range(k):
            g[i] = z[k] * np.conj(np.prod(np.delete(z[:k], i)))
        g[k] = np.prod(z[:k])
        cand = g + k * np.linalg.norm(g) * z
        cand /= np.linalg.norm(cand)
        step = float(np.abs(cand - z).max())
        z = cand
        if step < 1e-15:
            break
    val = float((np.conj(z[k]) * np.prod(z[:k])).real)
    if not val >= best - 1e-13 * abs(best):
        return y
    out = np.empty_like(y)
    out[0::2], out[1::2] = z.real, -z.imag
    return out


def embed_block_point(y: np.ndarray, p: int, k: int, frequency: int = 1) -> np.ndarray:
    """The unit neuron ``(u_1, ..., u_k, w)`` (shape ``(k+1, p)``) whose frequency-``j`` coordinates are ``y``:
    ``u = alpha sqrt(2/p) cos(2 pi j x/p) + beta sqrt(2/p) sin(2 pi j x/p)``."""
    x = np.arange(p)
    c = np.sqrt(2.0 / p) * np.cos(2 * np.pi * frequency * x / p)
    s = np.sqrt(2.0 / p) * np.sin(2 * np.pi * frequency * x / p)
    return np.array([y[2 * i] * c + y[2 * i + 1] * s for i in range(k + 1)])


def embed_real_block_point(x: np.ndarray, p: int) -> np.ndarray:
    """The unit neuron with coordinates ``x`` (length ``k+1``) on the alternating vector ``(-1)^t / sqrt(p)``
    (frequency ``p/2``, even ``p``); there the block is ``c' x_w x_1 ... x_k`` (Lemma C.14)."""
    alt = (-1.0) ** np.arange(p) / np.sqrt(p)
    return np.outer(np.asarray(x, dtype=float), alt)


def objective_by_dft(theta: np.ndarray, p: int, k: int) -> float:
    """``F(theta) = k!/((p-1) p^k) sum_{j != 0} w^(-j) prod_i u_i^(j)`` (Lemma C.14, uniform weights; numpy FFT
    with the convention ``f^(j) = sum_x f(x) e^(-2 pi i j x / p)``)."""
    hat = np.fft.fft(np.asarray(theta, dtype=float), axis=1)
    terms = np.conj(hat[k, 1:]) * np.prod(hat[:k, 1:], axis=0)
    return float(math.factorial(k) / ((p - 1) * float(p) ** k) * terms.sum().real)


def _solve_fourier_exact(problem: ModularAddition, n_starts: int, seed: int | None, max_memory: int,
                         time_limit: float | None) -> SingleNeuronBracket:
    from margintheory.certificate.upper_bound import prove_upper_bound

    p, k = problem.p, problem.k
    t0 = time.perf_counter()
    gval, y = maximise_block_form(k, n_starts=n_starts, seed=seed)
    theta = embed_block_point(y, p, k)
    if p % 2 == 0 and k >= 2:  # the real frequency-p/2 block has the larger constant: embed |z| there
        theta = embed_real_block_point(np.abs(y[0::2] - 1j * y[1::2]), p)
    lower = objective_by_dft(theta, p, k)
    how = "DFT form of Lemma C.14"
    if p**k <= DIRECT_LIMIT:
        direct = SingleNeuronObjective(pair_weights(problem)).value(theta.ravel())
        lower, how = min(lower, direct), "min of the DFT form and the direct sum over all p^k inputs"
    ub = prove_upper_bound(problem, max_memory=max_memory, time_limit=time_limit)
    local = LocalMaxima(lower, theta.ravel(), np.array([lower]), theta.ravel()[None, :], n_starts, seed,
                        time.perf_counter() - t0)
    out = SingleNeuronBracket(p, k, lower, ub.upper_float, True, "fourier-exact", theta, local)
    out.block_frequencies = list(range(1, p // 2 + 1))
    out.cross_frequency_l1 = 0.0
    out.proved_upper = ub
    out.certification = (f"proved: U = {ub.upper} from the frequency-block reduction (Lemma C.14, proved for all p) "
                         f"and an SOS certificate of g_k checked in exact rational arithmetic; lower: g_k = "
                         f"{gval:.15g} at a local maximiser, embedded at frequency "
                         f"{p // 2 if p % 2 == 0 and k >= 2 else 1} ({how})")
    out.seconds = time.perf_counter() - t0
    return out


def solve_single_neuron(p: int | ModularAddition, k: int | None = None, weights: PairWeights | None = None, *,
                        method: str = "auto",
                        n_starts: int = 16, seed: int | None = 0, solver: str = "CLARABEL",
                        time_limit: float | None = None, extra_starts: np.ndarray | None = None,
                        max_memory: int = 2 * 2**30) -> SingleNeuronBracket:
    """Bracket the class-weighted single-neuron optimum (uniform ``q``, ``tau`` by default).

    ``method="auto"`` takes ``fourier-exact`` for uniform weights with the Clarabel solver (module docstring; it
    calls Clarabel directly), else ``fourier-blocks`` (cvxpy with ``solver``) when
    the weights decouple the frequencies numerically, else ``generic``.  Refuses up front beyond ``max_memory``.
    ``p`` is a :class:`~margintheory.core.problems.ModularAddition` (validated when it was made) or an
    integer with ``k``.
    """
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {METHODS}")
    uniform = weights is None or weights.is_uniform(rtol=0.0)
    if method == "auto" and uniform and extra_starts is None and solver == "CLARABEL":
        method = "fourier-exact"
    if method == "fourier-exact":
        if not uniform:
            raise InputError("the fourier-exact bracket needs uniform weights (Lemma C.14)")
        _require(p, k, method, max_memory)
        return _solve_fourier_exact(problem, n_starts, seed, max_memory, time_limit)
    # auto: the expansion and the per-frequency relaxations up front; the generic relaxation (far larger) only once
    # the split shows that the frequencies do not decouple, before it is built
    _require(p, k, "fourier-blocks" if method == "auto" else method, max_memory, solver)
    t0 = time.perf_counter()
    weights = weights or pair_weights(problem)
    if (weights.p, weights.k) != (p, k):
        raise InputError(f"weights are for (p, k) = {(weights.p, weights.k)}, not {(p, k)}")
    obj = SingleNeuronObjective(weights)
    local = multistart_maximise(obj, n_starts=n_starts, seed=seed, extra_starts=extra_starts)
    maxi = local.x.reshape(k + 1, p)
    out = SingleNeuronBracket(p, k, local.value, float("inf"), False, method, maxi, local)
    if method == "none":
        out.certification = "no relaxation run: upper bound unavailable"
    else:
        split = split_by_frequency(obj) if method in ("auto", "fourier-blocks") else None
        if method == "auto" and split is not None:
            method = "fourier-blocks" if decoupled(split) else "generic"
            if method == "generic":
                _require(p, k, method, max_memory, solver)
        out.method = method
        runner = _bound_blocks if method == "fourier-blocks" else _bound_generic
        remaining = None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - t0))
        scale = local.value if local.value > 0 else None
        upper, bounds, freqs, cross, err, note = runner(obj, scale or 1.0, solver, remaining, split)
        out.upper, out.sos, out.block_frequencies = upper, bounds, freqs
        out.cross_frequency_l1, out.coefficient_error, out.certification = cross, err, note
        out.upper_certified = True
    out.seconds = time.perf_counter() - t0
    return out
