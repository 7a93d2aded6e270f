"""The single-neuron bracket ``[lower, upper]`` for ``max_{|theta| <= 1} E_lam[psi']`` (docs/theory.md).

* lower: multi-start local maximisation (:mod:`margintheory.solvers.local`) -- a value attained by a unit neuron;
* upper: a certified SOS bound (:mod:`margintheory.solvers.sos`), either on the whole polynomial (``generic``)
  or, when the expansion in Fourier coordinates has (numerically) no cross-frequency monomials -- the case of
  uniform weights, Lemma C.14 -- per frequency block (``fourier-blocks``; :mod:`margintheory.solvers.symmetry`
  states the argument, and the computed cross-frequency mass is added to the bound rather than dropped).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from margintheory.errors import InputError
from margintheory.fourier import neuron_fourier
from margintheory.network import PolyNetwork
from margintheory.solvers.local import LocalMaxima, multistart_maximise
from margintheory.solvers.objective import PairWeights, SingleNeuronObjective, pair_weights
from margintheory.solvers.polynomial import Polynomial, power_times_linear_abs_mass
from margintheory.solvers.sos import EPS, SOSBound, sphere_max_upper_bound
from margintheory.solvers.symmetry import BlockSplit, split_by_frequency

METHODS = ("auto", "fourier-blocks", "generic", "none")
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
    for blk, poly in zip(split.blocks, split.block_polys, strict=True):
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


def solve_single_neuron(p: int, k: int, weights: PairWeights | None = None, *, method: str = "auto",
                        n_starts: int = 16, seed: int | None = 0, solver: str = "CLARABEL",
                        time_limit: float | None = None, extra_starts: np.ndarray | None = None) -> SingleNeuronBracket:
    """Bracket the class-weighted single-neuron optimum (uniform ``q``, ``tau`` by default)."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {METHODS}")
    t0 = time.perf_counter()
    weights = weights or pair_weights(p, k)
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
