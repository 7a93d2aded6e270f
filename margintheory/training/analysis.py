"""Analysis of any network against the max-margin theory: how close is it to the characterisation of Theorem C.22?

:func:`analyze` takes a problem object of any task and dispatches (sparse parity, groups and CoGO to their task
packages' ``analysis`` modules; ReLU networks to :func:`analyze_relu_network`); the rest of this module is modular
addition's analysis:

Builds on :func:`margintheory.tasks.modular_addition.checks.verify_network` (margin = ``gamma*``, points on the margin,
condition C.1, Lemma C.15's optimal neurons, Lemma C.20's coverage and multidimensional DFT; strict float tolerances
unless
``rtol`` is given) and adds the measurements that say *how far* a trained network is from a max-margin one:

* ``ratio_to_gamma_star``: normalized margin / ``gamma*`` (Lemma C.15);
* per-neuron Fourier sparsity (one-sided max normalized power) and phase residuals
  ``phi_u1 + ... + phi_uk - phi_w`` (:func:`margintheory.engines.fourier.neuron_fourier`);
* the fraction of neurons in the optimal single-neuron set within the stated ``tolerance`` (unweighted and weighted
  by ``||theta_i||^(k+1)``, the neuron's share of the margin budget, so that dead neurons do not count);
* the frequency histogram and its total-variation distance to the construction's (uniform, ``2^(2k-1)`` neurons
  per frequency, Lemma C.18);
* a comparison with the construction: its exhaustively measured normalized margin and width.

All the added checks are *informational* (they measure, they do not decide); the verdict is that of
``verify_network`` with the given ``rtol``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from margintheory.backends.training_step import NetworkSpec
from margintheory.core import theory
from margintheory.core.checks import Check, VerificationResult
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, Problem, SparseParity
from margintheory.engines.fourier import neuron_fourier
from margintheory.engines.margins import DEFAULT_MAX_MEMORY, exhaustive_margin
from margintheory.errors import InputError
from margintheory.runtime.budget import Estimate, require
from margintheory.tasks.modular_addition.checks import (
    as_problem,
    estimate_construction_check,
    estimate_network_check,
    verify_network,
)
from margintheory.training.metrics import norm_shares

DEFAULT_ANALYSIS_TOLERANCE = 1e-2
#: default relative tolerance of the "equals gamma*" claims for a trained network: training reaches the max margin
#: only to the optimizer's accuracy (the k = 2 run of docs/TRAINING.md: 1 - 2e-11; float32 storage alone moves the
#: margin by about 1e-7), above ``verify``'s default (:data:`margintheory.core.margin_claims.EQUALITY_RTOL`, 1e-8).
#: ``rtol=0`` (``--rtol 0``) asks for equality exactly: a float64 margin can then only be refuted or undecided.
TRAINED_NETWORK_RTOL = 1e-6


def check_shapes(net: PolyNetwork, p: int | ModularAddition, k: int | None = None) -> ModularAddition:
    """The problem ``ModularAddition(p, k)`` (or ``p`` itself if it is one); refuse a network whose shapes do not
    match it with one clear sentence."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    if (net.p, net.k) != (p, k):
        raise InputError(f"network has k={net.k} inputs and p={net.p} classes (U shape {net.U.shape}, W shape "
                         f"{net.W.shape}) but p={p}, k={k} was requested")
    return problem


def neuron_analysis(net: PolyNetwork, tolerance: float) -> tuple[list[Check], dict]:
    """Sparsity, phase residuals and optimal-set membership of every neuron, with ``tolerance`` stated."""
    nf = neuron_fourier(net, tolerance)
    share = norm_shares(net)
    opt = nf.in_optimal_set
    single = nf.single_frequency
    min_power = nf.max_power.min(axis=1)
    covered = sorted({int(z) for z in nf.frequency[single]} & set(theory.frequencies(net.p)))
    fields = {
        "analysis_tolerance": tolerance,
        "frequencies_covered_at_tolerance": covered,
        "neuron_max_power_min": float(min_power.min()),
        "neuron_max_power_mean": float(nf.max_power.mean()),
        "neuron_max_power_quantiles": [float(q) for q in np.quantile(min_power, [0.0, 0.1, 0.5, 0.9, 1.0])],
        "fraction_sparse": float(single.mean()),
        "weighted_fraction_sparse": float(share[single].sum()),
        "phase_residual_max": float(np.abs(nf.phase_residual).max()),
        "phase_residual_weighted_mean": float(np.sum(share * np.abs(nf.phase_residual))),
        "fraction_optimal": float(opt.mean()),
        "weighted_fraction_optimal": float(share[opt].sum()),
        "neuron_frequency": nf.frequency,
        "neuron_phase_residual": nf.phase_residual,
    }
    detail = (f"max normalized power >= 1 - {tolerance:g}, equal norms within {tolerance:g} (relative), phase "
              f"residual <= 2 pi sqrt({tolerance:g}) rad")
    checks = [
        Check(name="single-frequency neurons", expected=1.0, measured=fields["fraction_sparse"], tolerance=tolerance,
              passed=bool(single.all()), exactness="float",
              detail=f"weighted by norm share: {fields['weighted_fraction_sparse']:.6g}", informational=True,
              statement=f"fraction of neurons single-frequency (tolerance {tolerance:g})"),
        Check(name="optimal neurons", expected=1.0, measured=fields["fraction_optimal"], tolerance=tolerance,
              passed=bool(opt.all()), exactness="float",
              detail=f"{detail}; weighted by norm share: {fields['weighted_fraction_optimal']:.6g}",
              informational=True, statement=f"fraction of neurons in the optimal set (tolerance {tolerance:g})"),
        Check(name="every frequency used", expected=theory.frequencies(net.p), measured=covered, tolerance=tolerance,
              passed=covered == theory.frequencies(net.p), exactness="float", informational=True,
              statement=f"every frequency used by a single-frequency neuron (tolerance {tolerance:g})"),
    ]
    return checks, fields


def frequency_comparison(net: PolyNetwork, problem: ModularAddition) -> tuple[list[Check], dict]:
    """Frequency histogram (norm-share weighted) vs the construction's uniform histogram (Lemma C.18)."""
    p = problem.p
    nf = neuron_fourier(net)
    share = norm_shares(net)
    counts = np.bincount(nf.frequency, minlength=p // 2 + 1)
    mass = np.bincount(nf.frequency, weights=share, minlength=p // 2 + 1)
    freqs = list(problem.frequencies)
    uniform = np.zeros(p // 2 + 1)
    uniform[freqs] = 1.0 / len(freqs)
    tv = 0.5 * float(np.abs(mass - uniform).sum())
    fields = {"frequency_histogram": counts, "frequency_mass": mass, "frequency_tv_to_construction": tv}
    check = Check(name="mass per frequency", expected=0.0, measured=tv, tolerance=1e-9, passed=tv <= 1e-9,
                  exactness="float", detail="0 = every frequency carries the same share of ||theta||^(k+1)",
                  informational=True,
                  statement="norm mass per frequency vs the construction's uniform split (total variation)")
    return [check], fields


def construction_comparison(net: PolyNetwork, problem: ModularAddition, margin: float, max_memory: int,
                            max_seconds: float | None = None) -> tuple[list, dict]:
    """The construction's measured normalized margin and width next to the network's (odd ``p``)."""
    ref = build_construction(problem)
    res = exhaustive_margin(ref, max_memory, max_seconds=max_seconds)
    ratio = margin / res.normalized_margin
    fields = {"construction_width": ref.m, "construction_normalized_margin": res.normalized_margin,
              "ratio_to_construction": ratio, "width_over_theorem_width": net.m / float(problem.theorem_width or net.m)}
    check = Check(name="margin / construction's", expected=1.0, measured=ratio, tolerance=res.normalized_tolerance,
                  passed=abs(ratio - 1.0) <= res.normalized_tolerance / res.normalized_margin + 1e-12,
                  exactness="float", detail=f"construction (m={ref.m}) measured {res.normalized_margin:.15g}",
                  informational=True, statement="normalized margin / construction's normalized margin")
    return [check], fields


def ratio_text(ratio: float) -> str:
    """The ratio as a factor of ``gamma*``: ``(1 - 1.98e-11) x gamma*`` within ``1e-4`` of 1 (six decimals would print
    ``1.000000``), ``gamma*`` for exactly 1, else ``0.963412 x gamma*``."""
    if abs(ratio - 1.0) < 1e-4:
        return "gamma*" if ratio == 1.0 else f"(1 {'-' if ratio < 1 else '+'} {abs(ratio - 1.0):.2e}) x gamma*"
    return f"{ratio:.6f} x gamma*"


def estimate_analysis(p: int | ModularAddition, k: int | None, m: int, *, compare_construction: bool = True,
                      max_memory: int | None = DEFAULT_MAX_MEMORY) -> Estimate:
    """Memory and time of :func:`analyze_network` for the problem ``p`` (or ``ModularAddition(p, k)``): the
    network's check, then (optionally) the construction's."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    est = estimate_network_check(p, k, m, max_memory=max_memory)
    if compare_construction and problem.applicable:
        est = est.plus(estimate_construction_check(problem, max_memory=max_memory))
    return Estimate(f"analysing a network of width {m} on {p}^{k} points", est.bytes, est.seconds)


def analyze_network(net: PolyNetwork, p: int | ModularAddition, k: int | None = None, *,
                    max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None,
                    rtol: float | None = TRAINED_NETWORK_RTOL, tolerance: float = DEFAULT_ANALYSIS_TOLERANCE,
                    compare_construction: bool = True, title: str | None = None,
                    exhaustive: bool = False) -> VerificationResult:
    """``verify_network`` plus the informational measurements of the module docstring, for the problem
    ``ModularAddition(p, k)`` (or ``p`` itself if it is one).  ``rtol``: relative tolerance of the "equals gamma*"
    claims, :data:`TRAINED_NETWORK_RTOL` by default (``None``: ``verify``'s default, ``0``: equality exactly;
    :mod:`margintheory.core.margin_claims`).
    ``exhaustive``: the margin over all ``p^k`` inputs even for a network whose Fourier structure gives it without
    enumeration (``verify --exhaustive``)."""
    start = time.perf_counter()
    problem = check_shapes(net, p, k)
    if not (0 < tolerance < 1):
        raise InputError(f"tolerance must be in (0, 1), got {tolerance}")
    require(estimate_analysis(problem, None, net.m, compare_construction=compare_construction,
                              max_memory=max_memory), max_memory, max_seconds)
    result = verify_network(net, problem=problem, max_memory=max_memory, max_seconds=max_seconds, rtol=rtol,
                            title=title or f"analysis of a network (p={problem.p}, k={problem.k}, m={net.m})",
                            exhaustive=exhaustive)
    unit = net.normalized()
    parts = [neuron_analysis(unit, tolerance), frequency_comparison(unit, problem)]
    if compare_construction and problem.applicable:
        measured = result.margin.value if result.margin is not None else float("nan")  # always set there
        parts.append(construction_comparison(net, problem, measured, max_memory, max_seconds))
    for checks, fields in parts:
        result.checks.extend(checks)
        result.fields.update(fields)
    if problem.applicable:
        result.notes.append(
            f"normalized margin = {ratio_text(result.fields['ratio_to_gamma_star'])} (claims 'equal to "
            f"gamma*' checked at relative tolerance {rtol or 0:g}"
            + (": the default for trained networks; --rtol 0 asks for equality exactly)"
               if rtol == TRAINED_NETWORK_RTOL else ")")
            + f"; {100 * result.fields['weighted_fraction_optimal']:.2f}% of the norm budget is in optimal neurons "
            f"(tolerance {tolerance:g})"
        )
    result.fields["seconds"] = time.perf_counter() - start
    return result


def analyze(problem: Problem, net: Any, *, activation: str = "power", rtol: float | None = TRAINED_NETWORK_RTOL,
            tolerance: float = DEFAULT_ANALYSIS_TOLERANCE, max_memory: int = DEFAULT_MAX_MEMORY,
            max_seconds: float | None = None, compare_construction: bool = True, exhaustive: bool = False,
            title: str | None = None, loss_tol: float | None = None,
            output_scale: float | None = None) -> VerificationResult:
    """How close a (trained) network of any task is to the task's max-margin characterization.

    * :class:`ModularAddition`: :func:`analyze_network` (Theorem C.22);
    * :class:`SparseParity`: :func:`margintheory.tasks.parity.analysis.analyze_parity_network` (Thm 7.8; ``net`` a
      :class:`~margintheory.tasks.parity.checks.ParityNetwork`);
    * :class:`GroupComposition`: :func:`margintheory.tasks.groups.analysis.analyze_group_network` (Thm 7.9);
    * :class:`CoGO`: :func:`margintheory.tasks.cogo.analysis.analyze_cogo_network` (the loss, the per-frequency
      orders and the constructions the solution factorizes into; ``loss_tol``: the loss a trained network may keep,
      default :data:`~margintheory.tasks.cogo.analysis.TRAINED_LOSS_TOL`; ``output_scale``: the ``s`` of the loss the
      network was trained on, when not Eq. 1's ``1/(2d)``).

    ``activation="relu"``: a ReLU network, about which the theorems claim nothing; its normalized margin
    (``||theta||_2^2``) and Fourier / irrep statistics are measured (:func:`analyze_relu_network`, verdict
    not-applicable)."""
    if not (0 < tolerance < 1):
        raise InputError(f"tolerance must be in (0, 1), got {tolerance}")
    if activation == "relu":
        return analyze_relu_network(problem, net, tolerance=tolerance, title=title)
    if activation != "power":
        raise InputError(f"activation must be 'power' or 'relu', got {activation!r}")
    if isinstance(problem, ModularAddition):
        return analyze_network(net, problem, max_memory=max_memory, max_seconds=max_seconds, rtol=rtol,
                               tolerance=tolerance, compare_construction=compare_construction, title=title,
                               exhaustive=exhaustive)
    if isinstance(problem, SparseParity):
        from margintheory.tasks.parity.analysis import analyze_parity_network

        return analyze_parity_network(_parity_net(problem, net), rtol=rtol, tolerance=tolerance,
                                      max_memory=max_memory, max_seconds=max_seconds, title=title)
    if isinstance(problem, GroupComposition):
        from margintheory.tasks.groups.analysis import analyze_group_network

        return analyze_group_network(problem, net, rtol=rtol, tolerance=tolerance, max_memory=max_memory,
                                     max_seconds=max_seconds, title=title)
    if isinstance(problem, CoGO):
        from margintheory.tasks.cogo.analysis import TRAINED_LOSS_TOL, analyze_cogo_network

        return analyze_cogo_network(net, loss_tol=TRAINED_LOSS_TOL if loss_tol is None else loss_tol,
                                    output_scale=output_scale, max_memory=max_memory, max_seconds=max_seconds,
                                    title=title)
    raise InputError(f"no analysis for {problem!r}")


def _parity_net(problem: SparseParity, net: Any) -> Any:
    from margintheory.tasks.parity.checks import ParityNetwork

    if not isinstance(net, ParityNetwork):
        raise InputError(f"a sparse-parity analysis needs a ParityNetwork, got {type(net).__name__}")
    if (net.n, net.k) != (problem.n, problem.k):
        raise InputError(f"the network has n={net.n}, |S|={net.k}; the problem has n={problem.n}, k={problem.k}")
    return net


def relu_logits(problem: Problem, net: Any) -> tuple[np.ndarray, np.ndarray, NetworkSpec]:
    """The ReLU network's logits on all of the task's points, their labels, and its specification."""
    from margintheory.training.objective import forward_logits
    from margintheory.training.tasks import training_task

    task = training_task(problem)
    spec = task.network_spec("relu")
    if net.U.shape[1:] != spec.u_shape(1)[1:] or net.W.shape[1] != spec.classes:
        raise InputError(f"the network's shapes U {net.U.shape}, W {net.W.shape} are not those of {task.label()} "
                         f"(U (m,) + {spec.u_shape(1)[1:]}, W (m, {spec.classes}))")
    inputs, labels = task.points()
    return forward_logits(net.U, net.W, inputs, network=spec), labels, spec


def analyze_relu_network(problem: Problem, net: Any, *, tolerance: float = DEFAULT_ANALYSIS_TOLERANCE,
                         title: str | None = None) -> VerificationResult:
    """A ReLU network (Morwani et al. Figs. 7.1 (a), 7.4 (b), D.1 (a)): normalized margin ``h / ||theta||_2^2``
    over all points, and the Fourier (``Z_p``, ``Z_d``) or irrep (a group) statistics of its neurons, all
    informational; the verdict is not-applicable (no theorem claims a max margin of a ReLU network)."""
    from margintheory.training.metrics import margin_from_logits, margin_measures

    start = time.perf_counter()
    logits_all, labels, spec = relu_logits(problem, net)
    correct = float((logits_all.argmax(axis=1) == labels).mean())
    measures = margin_measures(net.U, net.W, float(margin_from_logits(logits_all, labels).min()), 2, None)
    result = VerificationResult(title or f"ReLU network ({problem.task}, m={net.U.shape[0]})", task=problem.task,
                                parameters=problem.parameters())
    result.applicable = False
    result.fields.update(width=int(net.U.shape[0]), activation="relu", accuracy=correct,
                         normalized_margin=measures["normalized_margin"], norm=measures["norm"], gamma_star=None,
                         gamma_star_note="a ReLU network: the closed forms (Theorems C.22, 7.8, 7.9) are about "
                                         "polynomial networks, so no gamma* applies")
    result.add(Check(name="accuracy", expected=1.0, measured=correct, tolerance=None, passed=correct == 1.0,
                     exactness="float", informational=True, statement="fraction of all points classified correctly"))
    if isinstance(problem, GroupComposition):
        from margintheory.core.representations import real_irreps
        from margintheory.tasks.groups.analysis import irrep_measures

        checks, fields = irrep_measures(PolyNetwork(net.U, net.W), real_irreps(problem.G), tolerance)
    elif isinstance(problem, ModularAddition | CoGO):
        checks, fields = relu_fourier_measures(PolyNetwork(net.U, net.W), tolerance)
    else:
        checks, fields = [], {}
    result.checks += checks
    result.fields.update(fields)
    result.notes.append("a ReLU network: the max-margin theorems are about polynomial networks, so nothing is "
                        "claimed (verdict not-applicable); the normalized margin uses ||theta||_2^2 (ReLU networks "
                        "are 2-homogeneous) and the structure statistics are measured")
    result.fields["seconds"] = time.perf_counter() - start
    return result


def relu_fourier_measures(net: PolyNetwork, tolerance: float) -> tuple[list[Check], dict]:
    """Max normalized power of every embedding vector (Morwani et al. Fig. 7.4: about 0.9 for ReLU, 1 for the
    quadratic network), the neurons' dominant frequencies and the norm share per frequency (Fig. D.1)."""
    from margintheory.engines.fourier import fourier_summary, one_sided_power

    fs = fourier_summary(net.U, net.W)
    P = one_sided_power(net.U)
    tot = P.sum(axis=-1)
    vec_max = np.where(tot > 0, P.max(axis=-1) / np.where(tot > 0, tot, 1.0), 0.0)
    freqs = theory.frequencies(net.p)
    r2 = net.neuron_norms() ** 2
    mass = np.bincount(fs.dominant_frequency, weights=r2 / r2.sum(), minlength=net.p // 2 + 1)
    uniform = np.zeros_like(mass)
    uniform[freqs] = 1.0 / len(freqs)
    fields = {"embedding_max_power_mean": float(vec_max.mean()),
              "embedding_max_power_quantiles": [float(q) for q in np.quantile(vec_max, [0.0, 0.1, 0.5, 0.9, 1.0])],
              "mean_max_power": fs.mean_max_power, "frequencies_covered": fs.frequencies_covered,
              "frequency_histogram": np.bincount(fs.dominant_frequency, minlength=net.p // 2 + 1),
              "frequency_mass": mass, "frequency_tv_to_uniform": 0.5 * float(np.abs(mass - uniform).sum())}
    checks = [
        Check(name="max power of u (Fig. 7.4)", expected=1.0, measured=fields["embedding_max_power_mean"],
              tolerance=tolerance, passed=bool(vec_max.min() >= 1 - tolerance), exactness="float", informational=True,
              detail=f"min {vec_max.min():.4f}; quantiles 0/10/50/90/100%: "
                     + ", ".join(f"{q:.4f}" for q in np.quantile(vec_max, [0.0, 0.1, 0.5, 0.9, 1.0])),
              statement="mean max normalized Fourier power of the embedding vectors u_j"),
        Check(name="every frequency used", expected=len(freqs), measured=fs.frequencies_covered, tolerance=None,
              passed=fs.frequencies_covered == len(freqs), exactness="float", informational=True,
              statement="every frequency is the dominant frequency of a sparse neuron (Fig. D.1)"),
    ]
    return checks, fields
