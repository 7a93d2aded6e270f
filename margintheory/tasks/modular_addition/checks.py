"""Wiring of the claims of Theorem 4.9 / C.22 (docs/theory.md#theorem-c22) into checks on a concrete network.

``verify_construction`` builds the network of Lemma C.18 and checks every claim; ``verify_network`` checks the
claims that characterise a max-margin network (Lemma C.6's certificate, Lemma C.15's optimal neurons, Lemma C.20's
frequency coverage) for any network.  The *expected* side of each check comes from :mod:`margintheory.core.theory` or
from a direct evaluation of the statement; the *measured* side always from the network: via the exhaustive engine
(:mod:`margintheory.engines.margins`), the Fourier tools (:mod:`margintheory.engines.fourier`), or, for a network
of exact single-frequency cosines, its phase moments (:mod:`margintheory.engines.fourier_margin`, no input
enumerated; docs/theory.md#compact-margin).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from collections.abc import Iterator
from typing import Protocol

import numpy as np

from margintheory.core import theory
from margintheory.core.checks import Check, VerificationResult, bool_check, close_check
from margintheory.core.construction import build_construction
from margintheory.core.margin_claims import (
    EQUALITY_RTOL,
    ClaimDecision,
    Decision,
    claim_tolerance,
    margin_equals,
    within_of_margin,
)
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.fourier import DEFAULT_SPARSITY_TOL, NeuronFourier, multidim_dft_theory, neuron_fourier
from margintheory.engines.fourier_margin import CompactMargin, estimate_compact_construction, power_of_two_rescaled
from margintheory.engines.margins import (
    DEFAULT_MAX_MEMORY,
    EPS,
    MarginResult,
    engine_bytes_per_point,
    estimate_cost,
    exhaustive_margin,
    norm_power_relative_error,
    worker_count,
)
from margintheory.errors import InputError
from margintheory.runtime.budget import Estimate, grid_points, require
from margintheory.tasks.modular_addition import compact as compact_verification
from margintheory.tasks.modular_addition.compact import claim_row, undecided_names
from margintheory.tasks.modular_addition.paper_errata import paper_statement_rows, wrong_logit_statement


class MarginEngine(Protocol):
    """Where the exhaustive pass of the checks runs, called as ``engine(net, max_memory, max_seconds=...)`` like
    :func:`margintheory.engines.margins.exhaustive_margin` (the default: this process's threads).  ``holds_points``:
    it keeps
    per-point arrays in this process (the up-front memory estimate counts them); ``parallelism``: the cores the pass
    is spread over (the time estimate is divided by it).  ``margintheory.engines.split_margin`` spreads it over a
    cluster."""

    holds_points: bool

    @property
    def parallelism(self) -> int: ...

    def __call__(self, net: PolyNetwork, max_memory: int, *, max_seconds: float | None) -> MarginResult: ...


_ENGINE: contextvars.ContextVar[MarginEngine | None] = contextvars.ContextVar("margintheory_margin_engine",
                                                                             default=None)


@contextlib.contextmanager
def margin_engine(engine: MarginEngine | None) -> Iterator[None]:
    """Run the exhaustive passes of the checks made inside the block (in this context) with ``engine``; the
    verdicts, tolerances and reported values are the same as with the default engine."""
    token = _ENGINE.set(engine)
    try:
        yield
    finally:
        _ENGINE.reset(token)


def per_frequency_cosine_sum(p: int, x: np.ndarray) -> np.ndarray:
    """``sum_{zeta=1}^{(p-1)/2} cos(2 pi zeta x / p)``, evaluated directly (the intended construction output)."""
    zetas = np.asarray(theory.frequencies(p))
    residues = np.arange(p)
    table = np.cos(2.0 * np.pi * ((np.outer(residues, zetas)) % p) / p).sum(axis=1)  # one value per residue
    return table[np.asarray(x) % p]


def _base_fields(problem: ModularAddition) -> dict:
    exact = problem.gamma_star_exact
    return {
        "p": problem.p,
        "k": problem.k,
        "hypothesis": problem.hypothesis,
        "gamma_star": problem.gamma_star,
        "gamma_star_note": problem.gamma_star_note,
        "gamma_star_exact": None if exact is None else str(exact),
        "theorem_width": problem.theorem_width,
    }


def _hypothesis_check(problem: ModularAddition) -> Check:
    status = problem.hypothesis
    return bool_check(
        "hypothesis: odd prime", status == "odd-prime", exactness="proved",
        detail=f"p = {problem.p} is {status.replace('-', ' ')}", informational=True,
        statement="hypothesis: p is an odd prime (as the papers assume)")


def margin_checks(res: MarginResult, gamma: float | None, rtol: float | None) -> tuple[list[Check], dict]:
    """Margin claims: normalized margin = gamma* (and never above it), all points on the margin, condition C.1.

    Each claim is the one of :mod:`margintheory.core.margin_claims` (tolerance ``T = rtol gamma*``, ``rtol`` defaulting
    to ``EQUALITY_RTOL``), decided from the exhaustive pass's enclosures: each value plus or minus its a-priori float64
    error bound.  A claim the enclosure cannot decide is named in ``fields["undecided_claims"]`` (its row fails and is
    informational: the verdict is ``undecided``).  Weak duality (``<= gamma*``) is held to the error bound alone.
    """
    checks: list[Check] = []
    nm = res.normalized_margin
    scale = res.normalization
    abs_tol = res.normalized_tolerance
    fields: dict = {"normalized_margin": nm, "margin_tolerance": abs_tol, "logit_error_bound": res.logit_error_bound}
    decisions: list[tuple[Check, ClaimDecision]] = []
    reference = gamma if gamma is not None else abs(nm)
    if gamma is not None:
        err = abs_tol + 4 * EPS * gamma
        checks.append(bool_check("margin <= gamma* (C.6)", nm <= gamma + err, tolerance=err / gamma,
                                 detail=f"margin/gamma* = {nm / gamma:.15g}",
                                 statement="normalized margin <= gamma* (weak duality, Lemma C.6)"))
        decisions.append(claim_row("margin = gamma* (C.22)", gamma, nm, margin_equals(nm - err, nm + err, gamma, rtol),
                                   "normalized margin = gamma* (Theorem C.22)", relative_to=gamma))
        fields["relative_error"] = abs(nm - gamma) / gamma
        fields["ratio_to_gamma_star"] = nm / gamma
    e = res.logit_error_bound
    t_logit = claim_tolerance(reference, rtol) * scale
    off = res.points_above(res.h + t_logit)
    frac = (res.points - off) / res.points
    decisions.append(claim_row("all on margin (C.6)", 1.0, frac, _points_on_margin(res, t_logit / scale),
                               "every point on the margin (spt q* = D_p, Lemma C.6)", relative_to=reference,
                               detail=f"fraction within T of the margin; {off} points off"))
    spread = res.max_wrong_spread
    rel = norm_power_relative_error(res.k, res.m, res.p)  # of scale = ||theta||^(k+1)
    lo_s, hi_s = (spread - 2 * e) / scale * (1 - rel), (spread + 2 * e) / scale * (1 + rel)
    decisions.append(claim_row("wrong logits equal (C.1)", 0.0, spread / scale, within_of_margin(
        lo_s, hi_s, reference, rtol, "largest wrong-logit spread (normalized)"),
        "all wrong-label logits equal (condition C.1)", relative_to=reference,
        detail="max over points of (max - min) wrong logit, normalized"))
    checks += [c for c, _ in decisions]
    fields.update(all_on_margin=decisions[-2][1].passed, fraction_on_margin=frac,
                  wrong_logits_equal=decisions[-1][1].passed,
                  max_wrong_spread=spread / scale, undecided_claims=undecided_names(decisions))
    return checks, fields


def _points_on_margin(res: MarginResult, t: float) -> ClaimDecision:
    """Every input's normalized margin within ``t`` of the network's, decided from counts (an engine split over a
    cluster keeps no per-point margins, only :meth:`MarginResult.points_above`): each point's gap to ``h`` is known
    within ``4 err`` (its margin and ``h`` each within ``2 err``), so the claim holds when no point is above
    ``h + t norm - 4 err`` and fails when one is above ``h + t norm + 4 err``."""
    e, scale = res.logit_error_bound, res.normalization
    rel = norm_power_relative_error(res.k, res.m, res.p)  # of scale = ||theta||^(k+1)
    above_hi = res.points_above(res.h + t * scale * (1 - rel) - 4 * e)
    above_lo = res.points_above(res.h + t * scale * (1 + rel) + 4 * e)
    decision: Decision = "holds" if above_hi == 0 else "fails" if above_lo > 0 else "undecided"
    return ClaimDecision(decision, 0.0, t, t, f"points whose gap to the margin exceeds T = {t:.3g} (normalized) "
                                              f"for certain: {above_lo}, possibly: {above_hi}: {decision}")


def checked_neurons(net: PolyNetwork, min_share: float) -> np.ndarray:
    """The neurons whose norm share ``||theta_i||^(k+1) / ||theta||^(k+1)`` exceeds ``min_share`` (a boolean mask);
    :class:`~margintheory.errors.InputError` when that leaves none (nothing would be checked)."""
    norms = net.neuron_norms()
    r = (norms / norms.max()) ** (net.k + 1) if norms.max() > 0 else norms
    share = r / r.sum()
    active = share > min_share
    if not active.any():
        raise InputError(f"min_share = {min_share:g} leaves out every neuron (the largest norm share is "
                         f"{float(share.max()):.6g}); pass a smaller value")
    return active


def neuron_checks(net: PolyNetwork, tolerance: float, min_share: float = 0.0) -> tuple[list[Check], dict]:
    """Lemma C.15's optimal set (single frequency, equal amplitudes, phase sum) and Lemma C.20's coverage.

    Neurons whose norm share ``||theta_i||^(k+1) / ||theta||^(k+1)`` is at most ``min_share`` are left out of the
    per-neuron checks (they contribute at most that fraction to any logit); zero neurons are always left out.
    """
    nf = neuron_fourier(net, tolerance)
    active = checked_neurons(net, min_share)
    m = int(active.sum())
    single, equal = nf.single_frequency[active], nf.equal_amplitudes[active]
    aligned, opt = nf.phase_aligned[active], nf.in_optimal_set[active]
    covered, strict = frequencies_used(nf, active), sorted({int(z) for z in nf.frequency[active][single]})
    wanted = theory.frequencies(net.p)
    max_res = float(np.max(np.abs(nf.phase_residual[active])))
    checks = [
        Check(name="single frequency", expected=m, measured=int(single.sum()), tolerance=tolerance,
              passed=bool(single.all()), exactness="float",
              detail=f"min max-power {float(nf.max_power[active].min()):.15g}; "
              f"{net.m - m} neuron(s) with norm share <= {min_share:g} left out",
              statement="neurons single-frequency (max normalized power = 1)"),
        Check(name="equal amplitudes", expected=m, measured=int(equal.sum()), tolerance=tolerance,
              passed=bool(equal.all()), exactness="float",
              statement="neurons with equal amplitudes ||u_1||=...=||u_k||=||w||"),
        Check(name="phase sum = theta_w", expected=0.0, measured=max_res, tolerance=2 * math.pi * math.sqrt(tolerance),
              passed=bool(aligned.all()), exactness="float", detail="max |residual| in radians",
              statement="phase condition theta_u1+...+theta_uk = theta_w (mod 2 pi)"),
        Check(name="optimal neurons (C.15)", expected=m, measured=int(opt.sum()), tolerance=tolerance,
              passed=bool(opt.all()), exactness="float",
              statement="every neuron in the optimal single-neuron set (Lemma C.15)"),
        Check(name="all frequencies (C.20)", expected=wanted, measured=covered, tolerance=None,
              passed=covered == wanted, exactness="float",
              detail=f"the dominant frequency of each checked neuron whose every vector has max normalized power >= "
                     f"{COVERAGE_POWER:g} (as train counts 'frequencies covered'); by the neurons single-frequency "
                     f"at the tolerance {tolerance:g}: {strict}",
              statement="every frequency 1..(p-1)/2 used (Lemma C.20)"),
    ]
    fields = {
        "neurons_in_optimal_set": bool(opt.all()),
        "fraction_in_optimal_set": float(opt.mean()),
        "fraction_single_frequency": float(single.mean()),
        "mean_max_normalized_power": float(nf.max_power.mean()),
        "neurons_checked": m,
        "min_norm_share": min_share,
        "max_phase_residual": max_res,
        "frequencies_covered": covered,
        "frequencies_covered_single_frequency": strict,
        "fourier_tolerance": tolerance,
    }
    return checks, fields


#: a neuron "uses" its dominant frequency (Lemma C.20's coverage) when every one of its vectors has at least this
#: normalized power there (``margintheory.training.metrics.SPARSE_THRESHOLD``, what ``train`` and its figures count)
COVERAGE_POWER = 0.9


def frequencies_used(nf: NeuronFourier, active: np.ndarray) -> list[int]:
    """The frequencies ``1..(p-1)/2`` that are the dominant frequency of an ``active`` neuron whose vectors all have
    max normalized power ``>= COVERAGE_POWER`` (Lemma C.20's "every frequency is used")."""
    sparse = active & np.all(nf.max_power >= COVERAGE_POWER, axis=1)
    return sorted({int(z) for z in nf.frequency[sparse]} & set(theory.frequencies(nf.p)))


def multidim_dft_checks(net: PolyNetwork, res: MarginResult, rtol: float | None = None) -> tuple[list[Check], dict]:
    """Lemma C.20: ``f^(j,...,j,-j) > 0`` for every ``j != 0``, measured from the exhaustive logits, and its
    agreement with the single-neuron formula of Lemma C.14."""
    direct = res.multidim_dft()[1:] / res.normalization
    formula = multidim_dft_theory(net)[1:] / res.normalization
    scale = float(np.max(np.abs(direct))) if direct.size else 0.0
    tol = (net.p ** net.k) * net.p * res.logit_error_bound / res.normalization * 4 + 64 * EPS * scale
    tol = max(tol, (rtol or 0.0) * scale)
    min_real = float(direct.real.min())
    max_imag = float(np.abs(direct.imag).max())
    agree = float(np.max(np.abs(direct - formula)))
    checks = [*compact_verification.dft_sign_rows(min_real, max_imag, tol, scale, "min real part over j != 0"),
        Check(name="f^(j..,-j) by C.14", expected=0.0, measured=agree, tolerance=tol,
              passed=bool(agree <= tol + 1e-12 * scale), exactness="float", detail="max abs difference over j != 0",
              statement="f^(j,...,j,-j) from logits = k! sum_i w^(-j) prod u^(j) (Lemma C.14)"),
    ]
    return checks, {"multidim_dft_min_real": min_real, "multidim_dft": [complex(z) for z in direct]}


def construction_logit_checks(res: MarginResult, raw_scale: float, *, family: bool = False
                              ) -> tuple[list[Check], dict]:
    """The stated network function of Lemma C.17/C.18: ``f(a, c) = sum_zeta cos_zeta(a_1+...+a_k - c)``.

    ``res`` is the exhaustive pass over the *normalized* construction and ``raw_scale = ||theta_raw||^(k+1)`` the
    factor back to the unnormalized one (homogeneity), so no second pass is needed.  The expected values are the
    direct evaluation of the cosine sum.  The paper states the value 0 for wrong labels (proofs of Lemmas C.17
    and C.18); that statement is reported as an informational check so that the discrepancy is visible.
    """
    p, k = res.p, res.k
    M = res.label_logit_sums * raw_scale  # M[s, c]: sum of raw logits of class c over the inputs with label s
    mean_logit = M / p ** (k - 1)
    x = (np.arange(p)[:, None] - np.arange(p)[None, :]) % p
    expected = per_frequency_cosine_sum(p, x.reshape(-1)).reshape(p, p)
    tol = 8 * res.logit_error_bound * raw_scale
    dev = float(np.max(np.abs(mean_logit - expected)))
    correct = float(np.mean(np.diag(mean_logit)))
    wrong = float((mean_logit.sum() - np.trace(mean_logit)) / (p * (p - 1)))
    exp_correct = float(per_frequency_cosine_sum(p, np.array([0]))[0])
    exp_wrong = float(per_frequency_cosine_sum(p, np.arange(1, p)).mean())
    # the means inherit the logits' rigorous float error bound (``tol``), which exceeds 1e-12 for large k and width
    # (e.g. k = 5, p = 23, 1056 neurons: 2.2e-12 relative)
    checks = [
        Check(name="network function (C.18)", expected=0.0, measured=dev, tolerance=tol, passed=dev <= tol,
              exactness="float", detail="max |mean logit - cosine sum| over (label, class), unnormalized construction",
              statement="network function = sum_zeta cos_zeta(a_1+...+a_k-c) (Lemma C.18)"),
        close_check("correct logit = (p-1)/2", exp_correct, correct, max(1e-12, tol / abs(exp_correct)),
                    statement="correct-label logit (unnormalized) = (p-1)/2"),
        close_check("mean wrong logit", exp_wrong, wrong, max(1e-12, tol), relative=False,
                    statement="mean wrong-label logit (unnormalized) = mean_{x != 0} sum_zeta cos(2 pi zeta x/p)"),
    ]
    if not family:  # the paper's statement is about its construction (a family's logits are rescaled here)
        checks.append(Check(name="paper: wrong logit = 0", expected=0.0, measured=wrong, tolerance=1e-12,
                            passed=abs(wrong) <= 1e-12, exactness="float",
                            detail="the paper's claim; the computed value differs" if abs(wrong) > 1e-12 else "",
                            informational=True, statement=wrong_logit_statement(k)))
    fields = {
        "construction_correct_logit": correct,
        "construction_wrong_logit": wrong,
        "normalized_correct_logit": correct / raw_scale,
        "normalized_wrong_logit": wrong / raw_scale,
        "normalized_margin_from_logits": (correct - wrong) / raw_scale,
    }
    return checks, fields


#: peak memory of the checks per byte of weights (copies: normalized network, engine layout, DFTs of every neuron);
#: calibrated against the measured peak resident size above the interpreter (benchmarks/bench_estimates.py: the
#: estimate is 1.2-1.6x the measured peak; the construction also keeps the unnormalized network and its neurons)
NETWORK_WEIGHT_COPIES = 8
CONSTRUCTION_WEIGHT_COPIES = 10
CONSTRUCTION_BYTES_PER_NEURON = 1024


def estimate_network_check(p: int, k: int, m: int, *, max_memory: int | None = DEFAULT_MAX_MEMORY,
                           construction: bool = False) -> Estimate:
    """Peak memory and run time of :func:`verify_network` (or :func:`verify_construction` when ``construction``)
    for width ``m``, from ``(p, k, m)`` alone; nothing is allocated."""
    n = grid_points(p, k)
    what = (f"the construction of width {m} checked on {p}^{k} points" if construction else
            f"checking a network of width {m} on {p}^{k} points")
    if n == math.inf or m * (k + 1) * p > 2**100:
        return Estimate(what, math.inf, math.inf)
    eng = estimate_cost(p, k, m, max_memory if max_memory is not None else 2**62, workers=worker_count(None))
    weights = 8 * m * (k + 1) * p
    copies = CONSTRUCTION_WEIGHT_COPIES if construction else NETWORK_WEIGHT_COPIES
    extra = CONSTRUCTION_BYTES_PER_NEURON * m if construction else 0
    engine = _ENGINE.get()
    per_point = engine_bytes_per_point() if engine is None or engine.holds_points else 0
    need = copies * weights + per_point * n + eng.chunk_bytes + 64 * p * p + extra
    return Estimate(what, need, eng.seconds if engine is None else eng.seconds / max(1, engine.parallelism))


def verify_network(net: PolyNetwork, p: int | None = None, k: int | None = None, *,
                   problem: ModularAddition | None = None,
                   max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None,
                   rtol: float | None = None, fourier_tolerance: float = DEFAULT_SPARSITY_TOL,
                   min_share: float = 0.0, title: str | None = None, exhaustive: bool = False) -> VerificationResult:
    """Check the max-margin characterisation of Theorem C.22 on ``net`` (normalized internally).

    The problem is ``problem`` or ``ModularAddition(p, k)`` (each defaulting to the network's own ``p``, ``k``).
    A network that is, up to float64 rounding, an exact single-frequency cosine network is checked without
    enumerating the inputs (:mod:`margintheory.tasks.modular_addition.compact`); any other network, or every network
    with
    ``exhaustive``, by the exhaustive engine (``result.margin.method`` says which, ``result.margin.how`` why).

    ``rtol``: relative tolerance ``T / gamma*`` of the margin claims (= gamma*, every point on the margin, C.1;
    default :data:`~margintheory.core.margin_claims.EQUALITY_RTOL`), the same for every engine: each decides them
    from its enclosure, the shortcut hands a file it cannot decide to the exhaustive engine, and a claim the
    exhaustive engine cannot decide makes the verdict ``undecided``; ``fourier_tolerance``: leakage allowed
    in the Fourier checks; ``min_share``: neurons with at most this norm share are left out of the per-neuron
    checks (see :func:`neuron_checks`).
    """
    if problem is None:
        problem = ModularAddition(net.p if p is None else p, net.k if k is None else k)
    why = "the exhaustive engine was requested"
    if not exhaustive:
        compact, why = _compact_network_check(net, problem, max_memory=max_memory, max_seconds=max_seconds,
                                              rtol=rtol, fourier_tolerance=fourier_tolerance, min_share=min_share,
                                              title=title)
        if compact is not None:
            return compact
    result = _check_network(net, problem, max_memory=max_memory, max_seconds=max_seconds, rtol=rtol,
                            fourier_tolerance=fourier_tolerance, min_share=min_share, title=title)[0]
    _say_why_exhaustive(result, problem, why)
    return result


def _say_why_exhaustive(result: VerificationResult, problem: ModularAddition, why: str) -> None:
    """Add to the typed margin of an exhaustive check why the exhaustive engine ran."""
    m = result.margin
    if m is not None:
        result.set_margin(compact_verification.exhaustive_measurement(problem.p, problem.k, m.value, m.error_bound,
                                                                      why))


def _compact_network_check(net: PolyNetwork, problem: ModularAddition, *, max_memory: int,
                           max_seconds: float | None, rtol: float | None, fourier_tolerance: float,
                           min_share: float, title: str | None) -> tuple[VerificationResult | None, str]:
    """:func:`verify_network` without enumerating inputs, or ``(None, why the shortcut was refused)``."""
    start = time.perf_counter()
    p, k = problem.p, problem.k
    if (net.p, net.k) != (p, k):
        raise InputError(f"network has p={net.p}, k={net.k} (U shape {net.U.shape}) but p={p}, k={k} was requested")
    checked_neurons(net.normalized(), min_share)
    scaled, _ = power_of_two_rescaled(net)  # the logits of a network scaled by 1e200 would overflow float64
    cm, why = compact_verification.compact_network(net, max_memory, max_seconds)
    if cm is None or scaled is None:
        return None, f"the Fourier shortcut was refused: {why}"
    fields = _base_fields(problem)
    fields["width"] = net.m
    rows, values = compact_verification.network_rows(cm, problem, multidim_dft_theory(scaled), rtol,
                                                     neuron_checks(net.normalized(), fourier_tolerance, min_share))
    if values.get("undecided_claims"):  # the certified interval is too coarse for the claim: the finer engine decides
        lo, hi = cm.normalized_lower, cm.normalized_upper
        return None, (f"the Fourier shortcut cannot decide {', '.join(values['undecided_claims'])} (its certified "
                      f"enclosure straddles the claim's tolerance; margin in [{lo:.17g}, {hi:.17g}])")
    return _compact_result(problem, cm, title or f"network check (p={p}, k={k}, m={net.m}), without enumerating "
                           "inputs", fields, rows, values, start, f"lower end without enumeration: {cm.how}"), ""


def _compact_result(problem: ModularAddition, cm: CompactMargin, title: str, fields: dict, rows: list[Check],
                    values: dict, start: float, note: str) -> VerificationResult:
    """The result of a check made without enumerating inputs: the typed margin, the hypothesis row, ``rows``."""
    result = VerificationResult(title, fields=fields)
    result.set_margin(compact_verification.compact_measurement(cm))
    result.task, result.parameters, result.applicable = problem.task, problem.parameters(), problem.applicable
    result.add(_hypothesis_check(problem))
    for c in rows:
        result.add(c)
    fields.update(values)
    fields["seconds"] = time.perf_counter() - start
    _add_notes(result, problem)
    result.notes.append(note)
    return result


def _check_network(net: PolyNetwork, problem: ModularAddition, *, max_memory: int, max_seconds: float | None,
                   rtol: float | None = None, fourier_tolerance: float = DEFAULT_SPARSITY_TOL,
                   min_share: float = 0.0, title: str | None = None) -> tuple[VerificationResult, MarginResult]:
    """:func:`verify_network` that also returns the exhaustive pass over the normalized network."""
    start = time.perf_counter()
    p, k = problem.p, problem.k
    if (net.p, net.k) != (p, k):
        raise InputError(f"network has p={net.p}, k={net.k} (U shape {net.U.shape}) but p={p}, k={k} was requested")
    require(estimate_network_check(p, k, net.m, max_memory=max_memory), max_memory, max_seconds)
    checked_neurons(net.normalized(), min_share)  # refuse before the exhaustive pass, not after it
    fields = _base_fields(problem)
    fields["width"] = net.m
    result = VerificationResult(title or f"network check (p={p}, k={k}, m={net.m})", fields=fields)
    result.task = problem.task
    result.parameters = problem.parameters()
    result.applicable = problem.applicable
    result.add(_hypothesis_check(problem))
    unit = net.normalized()
    engine = _ENGINE.get() or exhaustive_margin
    res = engine(unit, max_memory, max_seconds=max_seconds)
    gamma = fields["gamma_star"]
    for part in (margin_checks(res, gamma, rtol), neuron_checks(unit, fourier_tolerance, min_share),
                 multidim_dft_checks(unit, res, rtol)):
        for c in part[0]:
            result.add(c)
        fields.update(part[1])
    result.set_margin(compact_verification.exhaustive_measurement(p, k, res.normalized_margin,
                                                                  res.normalized_tolerance))
    fields["engine_seconds"] = res.seconds
    fields["engine_backend"] = res.backend
    fields["seconds"] = time.perf_counter() - start
    _add_notes(result, problem)
    if fields.get("undecided_claims"):
        result.notes.append(
            f"undecided: {', '.join(fields['undecided_claims'])} -- the exhaustive engine's float64 enclosure "
            f"(margin +- {res.normalized_tolerance:.2g}) straddles the claims' tolerance (rtol "
            f"{EQUALITY_RTOL if rtol is None else rtol:g} of gamma*), and no finer engine is available; a larger "
            "--rtol can decide them")
    return result, res


def estimate_construction_check(p: int | ModularAddition, k: int | None = None, *,
                                max_memory: int | None = DEFAULT_MAX_MEMORY) -> Estimate:
    """:func:`estimate_network_check` for the construction of Lemma C.18 (width from the closed form) of the problem
    ``p`` (or ``ModularAddition(p, k)``)."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    if 2 * k - 1 + math.log2(max(p, 2)) > 100:  # the width alone is beyond any memory (and 2^(2k-1) unbounded work)
        return Estimate(f"the construction for p = {p}, k = {k}", math.inf, math.inf)
    return estimate_network_check(p, k, theory.construction_width_of(p, k), max_memory=max_memory,
                                  construction=True)


def estimate_family_check(p: int | ModularAddition, k: int | None, family: str, *,
                          max_memory: int | None = DEFAULT_MAX_MEMORY) -> Estimate:
    """:func:`estimate_network_check` for a family network (:func:`verify_family`) of the problem ``p`` (or
    ``ModularAddition(p, k)``), from its size formula (:func:`margintheory.core.phase_measures.family_size`; the
    measure is not built)."""
    from margintheory.core import phase_measures

    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    if family == "lemma-c18":
        return estimate_construction_check(problem, max_memory=max_memory)
    try:
        size = phase_measures.family_size(family, k)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if size == math.inf:  # beyond any memory
        return Estimate(f"the {family} network for p = {p}, k = {k}", math.inf, math.inf)
    return estimate_network_check(p, k, int(size) * ((p - 1) // 2), max_memory=max_memory, construction=True)


def verify_construction(p: int | ModularAddition, k: int | None = None, *, max_memory: int = DEFAULT_MAX_MEMORY,
                        max_seconds: float | None = None, family: str = "lemma-c18",
                        exhaustive: bool = False) -> VerificationResult:
    """Check every claim of Theorem C.22 on the Lemma C.18 network for ``ModularAddition(p, k)`` (or the problem
    ``p``) or on another ``family`` (:mod:`margintheory.core.phase_measures`): as the exact network, from its phase
    moments, without enumerating inputs (:mod:`margintheory.tasks.modular_addition.compact`); with ``exhaustive`` (or if
    the moments did not qualify) the float64 network is built and checked on all ``p^k`` inputs."""
    problem = as_problem(p, k)
    why = "the exhaustive engine was requested"
    result = None
    if not exhaustive:
        result = _compact_construction_check(problem, family, max_memory=max_memory, max_seconds=max_seconds)
        why = "the exact network's off-diagonal phase moments do not vanish"
    if result is None:
        if family != "lemma-c18":
            result = verify_family(problem, family, max_memory=max_memory, max_seconds=max_seconds)
        else:
            result = _exhaustive_construction(problem, max_memory=max_memory, max_seconds=max_seconds)
        _say_why_exhaustive(result, problem, why)
    if family == "lemma-c18":  # the papers' other statements about modular addition (informational or exact rows)
        rows, fields, notes = paper_statement_rows(problem)
        result.checks += rows
        result.fields.update(fields)
        result.notes += notes
    return result


def _compact_construction_check(problem: ModularAddition, family: str, *, max_memory: int,
                                max_seconds: float | None) -> VerificationResult | None:
    """:func:`verify_construction` on the exact network, without enumerating inputs (``None``: not applicable)."""
    start = time.perf_counter()
    require(estimate_compact_construction(problem, family), max_memory, max_seconds)
    cm = compact_verification.compact_construction(problem, family)
    if cm is None:
        return None
    p, k = problem.p, problem.k
    fields = _base_fields(problem)
    what = "construction of Lemma C.18" if family == "lemma-c18" else f"{family} network"
    rows, values = compact_verification.construction_rows(cm, problem, family)
    return _compact_result(problem, cm, f"{what} (p={p}, k={k}), exact, without enumerating inputs", fields, rows,
                           values, start, f"{cm.network.source}; lower end without enumeration: {cm.how}")


def _exhaustive_construction(problem: ModularAddition, *, max_memory: int,
                             max_seconds: float | None) -> VerificationResult:
    """The float64 construction of Lemma C.18 checked on all ``p^k`` inputs."""
    p, k = problem.p, problem.k
    require(estimate_construction_check(problem, max_memory=max_memory), max_memory, max_seconds)
    raw = build_construction(problem, normalize=False)
    net = raw.normalized()
    result, res = _check_network(net, problem, max_memory=max_memory, max_seconds=max_seconds,
                                 title=f"construction of Lemma C.18 (p={p}, k={k})")
    expected_width = problem.theorem_width
    result.checks.insert(1, Check(name="width (C.18)", expected=expected_width, measured=net.m, tolerance=None,
                                  passed=expected_width == net.m, exactness="proved",
                                  informational=expected_width is None,
                                  statement="width = 2^(2k-1)(p-1)/2 (Lemma C.18)"))
    checks, fields = construction_logit_checks(res, raw.norm() ** (k + 1))
    result.checks.extend(checks)
    result.fields.update(fields)
    if p % 2:
        # the margin seen on the logit values: (correct - wrong) / ||theta||^(k+1) must equal the engine's margin
        assert result.margin is not None  # set by _check_network
        result.add(close_check("margin from logits", result.margin.value,
                               fields["normalized_margin_from_logits"], 1e-10,
                               statement="correct - wrong logit (normalized) = measured margin"))
    return result


def verify_family(problem: ModularAddition, family: str, *, max_memory: int = DEFAULT_MAX_MEMORY,
                  max_seconds: float | None = None) -> VerificationResult:
    """A smaller max-margin network (``build_construction(p, k, family=...)``, docs/theory.md#smaller-networks): its
    phase measure's unwanted moments vanish (exact), and every claim of Theorem C.22 is checked on the built network
    as for Lemma C.18's.  Its unnormalized function is ``(k!/2^k) sum_zeta cos_zeta(a_1+...+a_k-c)``, so the logit
    checks are made on it rescaled by ``2^k/k!``."""
    from margintheory.core import phase_measures

    p, k = problem.p, problem.k
    require(estimate_family_check(problem, None, family, max_memory=max_memory), max_memory, max_seconds)
    measure = phase_measures.family_measure(family, k)
    raw = build_construction(problem, normalize=False, family=family)
    net = raw.normalized()
    result, res = _check_network(net, problem, max_memory=max_memory, max_seconds=max_seconds,
                                 title=f"{family} network, {measure.size} neurons per frequency (p={p}, k={k})")
    moments = phase_measures.exact_moment_check(measure)
    result.checks.insert(1, Check(name="phase moments vanish", expected=0, measured=len(moments.failures),
                                  tolerance=None, passed=moments.passed, exactness="proved",
                                  detail=f"{moments.checked} moments; {moments.method}",
                                  statement=f"unwanted phase moments of the {family} measure vanish"))
    nf = (p - 1) // 2
    result.checks.insert(2, Check(name="width", expected=measure.size * nf, measured=net.m, tolerance=None,
                                  passed=measure.size * nf == net.m, exactness="proved",
                                  statement=f"width = {measure.size} x (p-1)/2 (theorem's 2^(2k-1)(p-1)/2 = "
                                  f"{2 ** (2 * k - 1) * nf})"))
    checks, fields = construction_logit_checks(res, raw.norm() ** (k + 1) * 2**k / math.factorial(k), family=True)
    result.checks.extend(checks)
    result.fields.update(fields)
    result.fields.update(family=family, width_per_frequency=measure.size, theorem_width=problem.theorem_width)
    result.notes.append(f"{measure.description} ({measure.source}); logit checks on the network rescaled by 2^k/k!")
    return result


def _add_notes(result: VerificationResult, problem: ModularAddition) -> None:
    p, status = problem.p, problem.hypothesis
    if status == "odd-composite":
        result.notes.append(f"p = {p} is not prime: the papers' hypothesis is not met; every claim was checked anyway.")
    if status == "even":
        result.notes.append(
            f"p = {p} is even: the closed form gamma* is not applicable (the theorem assumes odd p); the margin of "
            "the network was computed and is printed above."
        )
