"""``margintheory solve``: an independent numeric answer to "what is the max margin for (p, k)?" with a bracket.

Wiring only: the mathematics lives in :mod:`margintheory.solvers` (single-neuron bracket, column generation,
smallest widths).  The bracket never uses a construction (column generation starts from random neurons);
``gamma*`` from :mod:`margintheory.core.theory` is only the *expected* value it is compared with.  ``--min-width``
reports the smallest max-margin network known (phase-measure families, exact moments, exhaustive margin) and the
proved lower bound on the width (docs/theory.md#smaller-networks).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from margintheory.commands._options import byte_size, nonneg_int, positive_int
from margintheory.core.checks import Check, Exactness, VerificationResult, bool_check, close_check
from margintheory.core.problems import ModularAddition
from margintheory.core.theory import construction_width_of, frequencies, gamma_star_of, hypothesis_status
from margintheory.errors import InputError, SolverError
from margintheory.presentation.report import emit
from margintheory.runtime.atomic import check_output_file
from margintheory.runtime.budget import DEFAULT_MAX_MEMORY, Estimate, require
from margintheory.runtime.process import say

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.solvers.class_weighted import ClassWeights
    from margintheory.solvers.column_generation import ColumnGenerationResult
    from margintheory.solvers.single_neuron import SingleNeuronBracket
    from margintheory.solvers.width import MinWidthResult

GAP_TOL = 1e-6
#: a lower bound is F evaluated in float64 at a float point: allow this relative rounding when comparing to gamma*
EVAL_RTOL = 1e-12
SUMMARY_FIELDS = ["lower_bound", "upper_bound", "upper_bound_exactness", "upper_bound_assumes", "upper_bound_certified",
                  "relative_gap", "rounds",
                  "width_per_frequency", "lower_bound_width", "lower_bound_width_per_frequency",
                  "width_lower_bound_exactness", "width_lower_bound_applies", "theorem_width",
                  "theorem_width_per_frequency", "family", "solver", "uniform_dual_bound"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "solve",
        help="numeric max margin for (p, k): certified single-neuron bracket or column-generation LP",
        description="Compute the max margin numerically, independently of the proof: a certified bracket "
        "[lower, upper] for the single-neuron problem (--single-neuron) or the network-level LP solved by column "
        "generation from random neurons. Exit codes: 0 verified, 1 refuted, 2 bad input or solver failure.",
    )
    parser.add_argument("--p", type=int, required=True, help="modulus p (integer >= 3)")
    parser.add_argument("--k", type=int, required=True, help="number of inputs k (integer >= 1)")
    parser.add_argument("--single-neuron", action="store_true", help="bracket the single-neuron problem only")
    parser.add_argument("--weights", metavar="FILE.npz",
                        help="with --single-neuron: class weights q (p^k,) over the inputs in row-major order of "
                        "(a_1..a_k) and tau (p^k, p) over the wrong labels (default: uniform); proved when "
                        "translation-invariant (q constant, tau[x, y(x)+d] depending on d only), else certified")
    parser.add_argument("--max-width", type=positive_int, metavar="M",
                        help="the smallest max-margin network known, pruned to at most M neurons by backward "
                        "elimination (the margin LP re-solved per neuron dropped; no column generation); a pruned "
                        "network's margin is reported, not judged (below the proved minimum width no network reaches "
                        "gamma*: the verdict is then not-applicable)")
    parser.add_argument("--min-width", action="store_true",
                        help="the smallest max-margin network known (exact phase measures per frequency), with the "
                        "proved lower bound on the width and the theorem's width")
    parser.add_argument("--search", action="store_true",
                        help="with --min-width (not with --max-width): also run column generation (the network LP "
                        "from random neurons, an independent bracket, reported as extra rows) before building and "
                        "verifying the smallest family; without it --min-width builds and verifies the family only")
    parser.add_argument("--pricing", default=None, choices=("fourier", "sos"),
                        help="column-generation pricing: exact closed form per frequency (default for odd p; it "
                        "needs odd p) or the SOS bracket (default for even p); column generation only")
    parser.add_argument("--seed", type=nonneg_int, default=None,
                        help="seed of every random start (default 0); column generation and --single-neuron")
    parser.add_argument("--time-limit", type=float, default=None, metavar="SEC", help="overall time limit")
    parser.add_argument("--sdp-solver", default=None, choices=("CLARABEL", "SCS"),
                        help="SOS solver (default CLARABEL); column generation and --single-neuron")
    parser.add_argument("--max-memory", type=byte_size, default=DEFAULT_MAX_MEMORY, metavar="BYTES",
                        help="memory budget of the solvers, e.g. 2G (default 2 GiB); larger jobs are refused up front")
    parser.add_argument("--json", action="store_true", help="print one JSON object (verdict + checks)")
    parser.add_argument("--out", metavar="FILE", help="save the network found (.npz or .safetensors, by suffix)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    return emit(solve_result(args), args.json, SUMMARY_FIELDS)


def solve_result(args: argparse.Namespace) -> VerificationResult:
    """The computation of ``margintheory solve`` for the parsed ``args`` (also a sweep's ``solve`` cell)."""
    problem = ModularAddition(args.p, args.k)
    p, k = problem.p, problem.k
    if args.time_limit is not None and not args.time_limit > 0:
        raise InputError(f"--time-limit must be positive, got {args.time_limit}")
    if args.single_neuron and (args.max_width or args.min_width):
        raise InputError("--max-width / --min-width apply to the network problem, not to --single-neuron")
    if args.max_width and args.p % 2 == 0:
        raise InputError("--max-width needs odd p: it prunes a phase-measure family network, and those are "
                         "max-margin for odd p only (for even p the closed form gamma* does not apply)")
    if args.overwrite and args.out is None:
        raise InputError("--overwrite applies to the --out file; no --out was given")
    if args.weights is not None and not args.single_neuron:
        raise InputError("--weights applies to --single-neuron (the class-weighted single-neuron problem)")
    if args.search and not args.min_width:
        raise InputError("--search applies to --min-width (solve without --min-width is column generation already)")
    if args.search and args.max_width:
        raise InputError("--search applies to --min-width without --max-width (--max-width prunes the smallest family "
                         "network and runs no column generation)")
    _check_method_options(args)
    if args.out is not None:
        from margintheory.network_io import output_format

        # a device, a directory, an unwritable place or (without --overwrite) an existing file: refused before the
        # solve, and so is an unsupported suffix
        check_output_file(args.out, overwrite=args.overwrite)
        output_format(args.out)
    start = time.perf_counter()
    weights = None if args.weights is None else _read_weights(problem, args)
    require(_estimate(p, k, args, weights), args.max_memory, args.time_limit, time_parameter="time_limit")
    method = _method(args)
    if method == "single-neuron":
        result = _single_neuron(problem, args, weights)
    elif method == "max-width":
        result = _max_width(problem, args)
    elif method in ("min-width", "min-width-search") and p % 2 == 0:
        result = _min_width_even(problem, args)
    elif method in ("min-width", "min-width-search"):
        result = _min_width_direct(problem, args)
    else:
        result = _network(problem, args)
    if not problem.applicable:
        _outside_the_theorem(result)
    _schema_fields(result, problem, args, time.perf_counter() - start)
    if method in ("min-width", "min-width-search") and p % 2 == 0:
        result.parameters.update(method=EVEN_MIN_WIDTH, seed=args.seed, pricing=args.pricing)
    return result


#: what ``--min-width`` computes at even ``p`` (the parameters' ``method``)
EVEN_MIN_WIDTH = "min-width at even p: column generation (no phase-measure family is max-margin at even p)"


def _min_width_even(problem: ModularAddition, args: argparse.Namespace) -> VerificationResult:
    """``--min-width`` at even ``p``: the phase-measure families are max-margin for odd ``p`` only, so no smallest
    max-margin network is known; the max margin is still computed with both legs (column generation's network and its
    dual bound) and the verdict is ``not-applicable``."""
    result = _network(problem, args)
    result.title = f"--min-width at even p = {problem.p}: " + result.title
    result.notes.append(f"--min-width builds the smallest phase-measure family network, which is max-margin for odd p "
                        f"only; at p = {problem.p} none is known, so the network LP's bracket (column generation, "
                        "lower and upper end) is reported instead; the verdict is not-applicable")
    return result


#: checks that compare with the theorem's statements (odd p): informational for even p
THEOREM_CLAIMS = ("gamma*", "Lemma C.15")


def _outside_the_theorem(result: VerificationResult) -> None:
    """Even ``p``: the theorem does not apply (as in ``verify``), so the comparisons with its closed form and its
    optimal-neuron set are reported but do not decide; the verdict is ``not-applicable`` (exit 0 if every computed
    check passed)."""
    result.applicable = False
    for check in result.checks:
        if any(claim in f"{check.name} {check.statement}" for claim in THEOREM_CLAIMS):
            check.informational = True


def _schema_fields(result: VerificationResult, problem: ModularAddition, args: argparse.Namespace,
                   seconds: float) -> None:
    """The common fields: the margin is the lower bound (attained by the network or neuron found)."""
    result.task = problem.task
    method = _method(args)
    result.parameters = {**problem.parameters(), "method": METHOD_NAMES[method], "seed": args.seed}
    if args.weights is not None:
        result.parameters["weights"] = args.weights
    if method in ("column-generation", "min-width-search"):  # the pricing actually used (the default follows p)
        result.parameters["pricing"] = args.pricing
    if method in ("min-width", "max-width"):  # no random start
        del result.parameters["seed"]
    for flag in ("max_width", "min_width", "search", "time_limit"):
        if getattr(args, flag):
            result.parameters[flag] = getattr(args, flag)
    f = result.fields
    if "seconds" in f:
        f["solver_seconds"] = f.pop("seconds")
    f.update(gamma_star=problem.gamma_star, gamma_star_note=problem.gamma_star_note,
             normalized_margin=f["lower_bound"], seconds=seconds)
    if not f.get("weights", {}).get("uniform", True):  # class weights: the optimum is not gamma*, no ratio to it
        f.update(gamma_star=None, gamma_star_note="class weights: the single-neuron optimum has no closed form here; "
                 "the checks compare the bracket with gamma* x sum(q tau) (weak duality)")


def _read_weights(problem: ModularAddition, args: argparse.Namespace) -> ClassWeights:
    """``q`` and ``tau`` from ``--weights`` (shapes and dtypes checked on the headers, sizes within --max-memory
    before any data is read), validated by :func:`margintheory.solvers.class_weighted.class_weights`."""
    from margintheory.network_io import read_stored_arrays
    from margintheory.solvers.class_weighted import class_weights

    n, p = problem.p**problem.k, problem.p
    # reading the arrays and checking them (a float64 copy, the shifted view of tau, comparisons): before any data
    require(Estimate(f"reading and checking the class weights of {args.weights}", 32.0 * n * (p + 1), None),
            args.max_memory, None)
    arrays = read_stored_arrays(args.weights, ("q", "tau"), max_memory=args.max_memory,
                                shapes={"q": (n,), "tau": (n, p)}, exclusive=True)
    try:
        return class_weights(problem, q=arrays["q"][0], tau=arrays["tau"][0],
                             stored={name: dtype for name, (_, dtype) in arrays.items()})
    except InputError as exc:
        raise InputError(f"{args.weights}: {exc}") from None


#: the defaults of the options that only some methods use (given by hand elsewhere, they are refused); the pricing's
#: default follows p (:func:`_default_pricing`)
METHOD_OPTION_DEFAULTS = {"pricing": "fourier", "seed": 0, "sdp_solver": "CLARABEL"}
#: ``parameters.method`` of each method (:func:`_method`)
METHOD_NAMES = {"single-neuron": "single-neuron", "column-generation": "column-generation",
                "min-width": "min-width (phase-measure family, no LP)",
                "min-width-search": "min-width (phase-measure family) + column generation (--search)",
                "max-width": "max-width (the smallest family network pruned by backward elimination, no column "
                             "generation)"}


def _method(args: argparse.Namespace) -> str:
    """Which computation the flags ask for: ``single-neuron``, ``max-width`` (the smallest family network pruned),
    ``min-width`` (the family built and verified directly), ``min-width-search`` (that, and column generation as an
    independent bracket) or ``column-generation`` (the default)."""
    if args.single_neuron:
        return "single-neuron"
    if args.max_width:
        return "max-width"
    if args.min_width:
        return "min-width-search" if args.search else "min-width"
    return "column-generation"


def _default_pricing(p: int) -> str:
    """The closed-form (Fourier) pricing needs odd ``p`` (for even ``p`` the real frequency ``p/2`` is not priced by
    it); even ``p`` is priced by the SOS bracket."""
    return "fourier" if p % 2 == 1 else "sos"


def _check_method_options(args: argparse.Namespace) -> None:
    """Refuse ``--pricing``, ``--seed``, ``--sdp-solver`` where the chosen method does not use them (arguments are
    checked, never ignored), and ``--pricing fourier`` for even ``p`` (the closed form does not apply there), then
    fill in their defaults: column generation (also ``--min-width --search``) uses all three, ``--single-neuron``
    the seed and the SOS solver, ``--min-width`` alone and ``--max-width`` none (no LP over random neurons, no
    random start)."""
    method = _method(args)
    used: set[str] = set()
    if method == "min-width":
        label = "--min-width without --search (no LP, no random start)"
    elif method == "max-width":
        label = "--max-width (the smallest family network pruned; no column generation, no random start)"
    elif method == "single-neuron":
        label, used = "--single-neuron", {"seed", "sdp_solver"}
    else:
        label, used = "column generation", set(METHOD_OPTION_DEFAULTS)
    if "pricing" in used and args.pricing == "fourier" and args.p % 2 == 0:
        raise InputError(f"--pricing fourier needs odd p (the closed form does not price the real frequency p/2); "
                         f"p = {args.p} is priced by --pricing sos, the default for even p")
    for name, default in METHOD_OPTION_DEFAULTS.items():
        if getattr(args, name, None) is None:
            setattr(args, name, _default_pricing(args.p) if name == "pricing" else default)
        elif name not in used:
            raise InputError(f"--{name.replace('_', '-')} does not apply to {label}")


def _estimate(p: int, k: int, args: argparse.Namespace, weights: ClassWeights | None = None) -> Estimate:
    """Memory and time of the requested solve, from ``(p, k)`` before anything is allocated."""
    from margintheory.solvers.cost import (
        column_generation_estimate,
        max_width_estimate,
        min_width_estimate,
        single_neuron_estimate,
    )

    if weights is not None:
        from margintheory.solvers.class_weighted import estimate

        return estimate(weights, solver=args.sdp_solver, max_memory=args.max_memory)
    method = _method(args)
    if method == "min-width":
        return min_width_estimate(p, k)
    if method == "max-width":
        return max_width_estimate(p, k, args.max_width)
    if method == "single-neuron":  # the method solve_single_neuron's "auto" takes for uniform weights
        sn = "fourier-exact" if args.sdp_solver == "CLARABEL" else "fourier-blocks"
        return single_neuron_estimate(p, k, solver=args.sdp_solver, method=sn)
    cg = column_generation_estimate(p, k, solver=args.sdp_solver, pricing=args.pricing)
    if method == "min-width-search":  # column generation's network is kept while the family is verified
        return cg.plus(min_width_estimate(p, k), f"column generation and the smallest max-margin network for p = {p}, "
                       f"k = {k}")
    return cg


#: the end of the name of the row whose claim is the upper end of the bracket (the chain's conclusion: its premises
#: are the chain's rows); the row is "gamma* <= upper bound", or "gamma* x sum(w) <= upper bound"
#: (:func:`_gamma_compared`)
UPPER_ROW_END = " <= upper bound"


def _is_upper_row(name: str) -> bool:
    return name.endswith(UPPER_ROW_END) and name.startswith("gamma*")


def _gamma_compared(total: float) -> str:
    """What the bracket rows compare with: ``gamma*``, or ``gamma* x total`` for weights whose total
    ``sum_x q[x] sum_c tau[x, c]`` is not exactly 1 (weak duality for the weights as given: ``gamma* total <=
    Psi(q, tau)``; the bound on ``gamma*`` itself is ``U / total``)."""
    return "gamma*" if total == 1.0 else "gamma* x sum(w)"


def _total_detail(g: float, upper: float, total: float) -> str:
    if total == 1.0:
        return ""
    return (f"; the weights given total sum(w) = sum_x q[x] sum_c tau[x, c] = {total!r}, so the bound on gamma* = "
            f"{g / total:.15g} is U / total = {upper / total:.15g}")


def _bracket_checks(g: float, lower: float, upper: float, certified: bool,
                    how: Exactness | None = None, total: float = 1.0) -> list[Check]:
    """``L <= g <= U`` and the gap; ``g`` is ``gamma*``, or ``gamma* x total`` for weights of that total
    (:func:`_gamma_compared`), and the rows are named for what they compare."""
    how = how or ("certified" if certified else "float")
    gap = (upper - lower) / abs(lower) if lower > 0 else float("inf")
    named = _gamma_compared(total)
    return [
        bool_check(f"lower bound <= {named}", lower <= g * (1 + EVAL_RTOL),
                   tolerance=EVAL_RTOL, detail=f"lower {lower:.15g}, {named} {g:.15g}",
                   statement=f"lower bound <= {named} (a value attained by a unit network)"),
        bool_check(f"{named} <= upper bound", g <= upper, exactness=how,
                   detail=f"{named} {g:.15g}, upper {upper:.15g} ({how if certified else 'NOT certified: heuristic'})"
                   + _total_detail(g, upper, total),
                   statement=f"{named} <= upper bound"),
        # the lower end is a float evaluation (not rounded down), so the gap is a float comparison whatever the
        # upper bound's standing
        bool_check(f"relative gap < {GAP_TOL:g}", gap < GAP_TOL, tolerance=GAP_TOL,
                   exactness="float", detail=f"gap {gap:.3e} (lower: float evaluation; upper: {how})",
                   statement=f"relative gap (upper - lower) / lower < {GAP_TOL:g}"),
    ]


def _single_neuron(problem: ModularAddition, args: argparse.Namespace,
                   weights: ClassWeights | None = None) -> VerificationResult:
    """The bracket for uniform weights (default) or the class weights of ``--weights``; uniform weights given in a
    file give the same rows as the default (the bracket then for the file's arrays, equal to rounding)."""
    p, k = problem.p, problem.k
    g = gamma_star_of(p, k)  # the closed form's value also for even p (compared there, informational)
    b = _bracket(problem, args, weights)
    if weights is not None:  # weak duality for the weights as given: gamma* sum(q tau) <= Psi(q, tau)
        g *= weights.total
    uniform = weights is None or weights.uniform
    what = "uniform q and tau" if weights is None else f"{'uniform' if uniform else 'class'} weights of {args.weights}"
    res = VerificationResult(f"single-neuron max margin, p={p}, k={k} ({what})")
    total = 1.0 if weights is None else weights.total
    rows = (_weighted_bracket_checks(g, b, weights) if weights is not None and not uniform else
            _bracket_checks(g, b.lower, b.upper, b.upper_certified, b.upper_exactness, total))
    for c in rows:
        res.add(c)
    if b.proved_upper is not None:
        from margintheory.certificate.maxmin import proof_step_checks

        steps = proof_step_checks(b.proved_upper, include_weak_duality=False)
        upper = next(c for c in rows if _is_upper_row(c.name))
        upper.premises += [c.name for c in steps]  # U is the chain's conclusion: its exactness follows from the steps
        for c in steps:
            res.add(c)
    fd = b.fourier_description()
    if uniform:
        res.add(bool_check("maximiser optimal (C.15)",
                           bool(fd["in_optimal_set"]), tolerance=1e-8,
                           detail=f"frequency {fd['frequency']}, phase residual {fd['phase_residual']:.2e}",
                           statement="maximiser is single-frequency with equal amplitudes and aligned phases "
                                     "(Lemma C.15)"))
    if b.method == "fourier-blocks":
        res.add(bool_check("frequencies decouple (C.14)",
                           b.cross_frequency_l1 <= 1e-12, tolerance=1e-12,
                           detail=f"sum |cross-frequency coefficients| = {b.cross_frequency_l1:.2e} (added to bound)",
                           statement="objective couples only equal frequencies (Lemma C.14; computed cross-frequency "
                                     "mass)"))
    res.fields.update(_common_fields(p, k, g, b.lower, b.upper, b.upper_certified, 0, 1, b.sos_summary()))
    upper = next(c for c in res.derive().checks if _is_upper_row(c.name))  # exactness derived from the premises
    res.fields.update({"method": b.method, "certification": b.certification, "maximiser_fourier": fd,
                       "block_frequencies": b.block_frequencies, "seed": args.seed,
                       "upper_bound_exactness": upper.exactness, "upper_bound_assumes": list(upper.assumes),
                       "local_values_top": b.local.values[:5], "seconds": b.seconds})
    if weights is not None:
        res.fields["weights"] = {"file": args.weights, **b.weights}
        if weights.total != 1.0:
            res.notes.append(f"the weights sum to {weights.total!r}, not exactly 1: gamma* is compared as gamma* x "
                             "that sum (the objective is linear in the weights)")
    res.notes.append(b.certification)
    _hypothesis_note(res, p)
    if args.out is not None:
        _save(b.maximiser_network(), args.out, res)
    return res


def _bracket(problem: ModularAddition, args: argparse.Namespace, weights: ClassWeights | None) -> SingleNeuronBracket:
    options = {"seed": args.seed, "solver": args.sdp_solver, "time_limit": args.time_limit,
               "max_memory": args.max_memory}
    if weights is None:
        from margintheory.solvers.single_neuron import solve_single_neuron

        return solve_single_neuron(problem, **options)
    from margintheory.solvers.class_weighted import class_weighted_single_neuron

    return class_weighted_single_neuron(problem, q=weights.q, tau=weights.tau, stored=weights.stored, **options)


def _weighted_bracket_checks(g: float, b: SingleNeuronBracket, weights: ClassWeights) -> list[Check]:
    """Rows of a bracket for non-uniform weights: weak duality (``gamma* <= Psi(q, tau) <= U``), ``L <= U`` and the
    gap; whether the reduction applied; for translation-invariant weights the closed form of
    :mod:`margintheory.solvers.fourier_pricing` as an independent value (odd ``p``)."""
    how = b.upper_exactness
    gap = b.relative_gap
    named = _gamma_compared(weights.total)
    rows = [
        bool_check(f"{named} <= upper bound", g <= b.upper, exactness=how,
                   detail=f"{named} {g:.15g}, upper {b.upper:.15g} ({how})" + _total_detail(g, b.upper, weights.total),
                   statement=f"{named} <= U: by weak duality (Lemma C.6) every weighting gives Psi(q, tau) >= "
                   "gamma* x its total weight",
                   premises=["Lemma C.6"]),
        bool_check("lower bound <= upper bound", b.lower <= b.upper, detail=f"[{b.lower:.15g}, {b.upper:.15g}]",
                   statement="L <= U (L: a unit neuron's value on the given arrays, float64)"),
        # the lower end is a float64 evaluation (not rounded down), so the gap is a float comparison whatever the
        # upper bound's standing (as in _bracket_checks)
        bool_check(f"relative gap < {GAP_TOL:g}", gap < GAP_TOL, tolerance=GAP_TOL, exactness="float",
                   detail=f"gap {gap:.3e} (lower: float evaluation; upper: {how})",
                   statement=f"relative gap (upper - lower) / lower < {GAP_TOL:g}"),
        Check(name="weights translation-invariant", expected="decided exactly",
              measured="holds" if weights.translation_invariant else "does not hold", tolerance=None, passed=True,
              exactness="proved", informational=True, detail="exact comparison of the float64 entries; "
              + ("the frequency reduction applies (proved bound)" if weights.translation_invariant else
                 "the frequency reduction does not apply: the bound is a float SOS relaxation with a rigorous safety "
                 "margin (certified)"),
              statement="q constant and tau[x, y(x)+d] depending on d only (the hypothesis of the frequency "
                        "reduction, docs/theory.md#class-weighted-bracket)"),
    ]
    if weights.profile is not None and weights.problem.p % 2 == 1:
        from margintheory.solvers.fourier_pricing import price

        p, k = weights.problem.p, weights.problem.k
        # price() normalises t to a distribution and takes q = p^-k: scale back to the arrays as given
        scale = float(weights.q[0]) * p**k * float(weights.profile.sum())
        value = price(p, k, weights.profile[1:]).best_value * scale
        ok = b.lower <= value * (1 + EVAL_RTOL) and value <= b.upper * (1 + EVAL_RTOL)
        rows.append(bool_check("closed form C max|kappa|", ok, tolerance=EVAL_RTOL, informational=True,
                               detail=f"C_(p,k) max_j |kappa(j)| = {value:.15g}",
                               statement="L <= C_(p,k) max_j |kappa(j)| <= U (closed form of "
                                         "solvers.fourier_pricing, tau normalised)"))
    return rows


def _column_generation(problem: ModularAddition, args: argparse.Namespace) -> ColumnGenerationResult:
    """Column generation from random neurons (the network LP), converged or a :class:`SolverError`."""
    from margintheory.solvers.column_generation import column_generation

    with _progress(sys.stderr.isatty()) as report:
        cg = column_generation(problem, seed=args.seed, time_limit=args.time_limit, pricing=args.pricing,
                               progress=report, max_memory=args.max_memory, sdp_solver=args.sdp_solver)
    if not cg.converged:
        raise SolverError(f"column generation stopped ({cg.status}) after {len(cg.rounds)} rounds: bracket "
                          f"[{cg.primal_margin:.12g}, {cg.dual_bound:.12g}]; raise --time-limit")
    return cg


def _column_generation_rows(problem: ModularAddition, args: argparse.Namespace, cg: ColumnGenerationResult,
                            prefix: str = "") -> tuple[list[Check], dict[str, object]]:
    """The bracket of column generation's network (its margin ``L``, the certified dual bound ``U``), the margin
    recomputed by the exhaustive engine and the uniform dual (informational); with the fields that describe the run.
    ``prefix`` names the rows when they are an independent check beside another network's (``--min-width
    --search``)."""
    from margintheory.engines.margins import exhaustive_margin

    p, k = problem.p, problem.k
    g, lower = gamma_star_of(p, k), cg.primal_margin
    rows = _bracket_checks(g, lower, cg.dual_bound, cg.dual_certified)
    rows.append(close_check("network margin = gamma*", g, lower, GAP_TOL,
                            statement="network margin = gamma* (relative 1e-6)"))
    em = exhaustive_margin(cg.network, args.max_memory)
    rows.append(close_check("margin recomputed", lower, float(em.normalized_margin),
                            max(1e-9, float(em.normalized_tolerance) / max(lower, 1e-300)),
                            statement="margin recomputed by the exhaustive engine (margins.exhaustive_margin)"))
    uniform = _uniform_dual_bound(problem, args, cg.pricing_solver)
    rows.append(bool_check("uniform dual optimal", uniform <= lower * (1 + GAP_TOL), tolerance=GAP_TOL,
                           exactness="certified", informational=True,
                           detail=f"uniform bound {uniform:.15g}, primal {lower:.15g}",
                           statement="uniform weights are an optimal dual: certified uniform pricing bound within "
                                     "1e-6 of the primal margin"))
    if prefix:
        about = "column generation's network (from random neurons, independent of the family): "
        rows = [replace(c, name=prefix + c.name, statement=about + c.statement) for c in rows]
    solver = {"name": "HIGHS (LP) + " + str(cg.pricing_solver.get("name")) + " (pricing)",
              "status": cg.status + "; pricing " + str(cg.pricing_solver.get("status")), "time": cg.seconds}
    fields = {**_common_fields(p, k, g, lower, cg.dual_bound, cg.dual_certified, len(cg.rounds), cg.width, solver),
              "uniform_dual_bound": uniform, "lp_value": cg.lp_value, "heuristic_dual_bound": cg.heuristic_dual_bound,
              "dual_weights": cg.dual_summary(), "orbits_in_support": int(np.count_nonzero(cg.weights > 0)),
              "column_generation_width": cg.width, "seed": args.seed, "pricing": args.pricing,
              "round_log": [r.__dict__ for r in cg.rounds]}
    for common in ("p", "k", "gamma_star"):  # the caller's (they are the problem's, not the run's)
        del fields[common]
    return rows, fields


def _dual_note(cg: ColumnGenerationResult) -> str:
    return ("upper bound: weak duality (docs/theory.md) with the final LP dual, priced by "
            f"{cg.pricing_solver.get('name')} with a rigorous rounding bound" if cg.dual_certified else
            "upper bound NOT certified (pricing by local search only)")


def _network(problem: ModularAddition, args: argparse.Namespace) -> VerificationResult:
    """The default: the network LP by column generation from random neurons, its network and certified bracket."""
    p, k = problem.p, problem.k
    cg = _column_generation(problem, args)
    res = VerificationResult(f"network max margin by column generation, p={p}, k={k}")
    rows, fields = _column_generation_rows(problem, args, cg)
    for c in rows:
        res.add(c)
    res.fields.update({"p": p, "k": k, "gamma_star": gamma_star_of(p, k), **fields,
                       "theorem_width": construction_width_of(p, k)})
    res.notes.append(_dual_note(cg))
    _hypothesis_note(res, p)
    if args.out is not None:
        _save(cg.network, args.out, res)
    return res


def _save(net, path: str, res: VerificationResult) -> None:  # noqa: ANN001 - a PolyNetwork
    """Write the network found (atomically) and say so: one line on stderr."""
    net.save(path)
    res.fields["network_file"] = path
    say(f"wrote {path}")


def _min_width_direct(problem: ModularAddition, args: argparse.Namespace) -> VerificationResult:
    """``--min-width``: the smallest family network built directly (:func:`margintheory.solvers.width.
    min_width_network`), its margin ``L`` exact from its phase moments (no input enumerated) and the proved upper
    bound ``U`` of :mod:`margintheory.certificate` -- the max-min interval of ``verify``.  With ``--search``, column
    generation runs first and its bracket is added as extra rows (``CG ...``) and ``details.column_generation``; the
    network reported, saved and certified is the family's."""
    from margintheory.certificate.maxmin import certificate_field, lower_bound_from, maxmin_checks
    from margintheory.certificate.upper_bound import prove_upper_bound
    from margintheory.tasks.modular_addition.compact import compact_measurement
    p, k = problem.p, problem.k
    cg = _column_generation(problem, args) if args.search else None
    res = VerificationResult(f"smallest max-margin network known, p={p}, k={k}: built directly and verified "
                             "(L from its phase moments, U proved)"
                             + ("; column generation from random neurons as an independent bracket" if cg else ""))
    info: dict[str, object] = {}
    mw = _width(problem, args, res, info)
    net = mw.network
    cm = mw.compact
    if cm is None or cm.normalized_margin_exact is None:
        raise SolverError("the family network's margin was not computed exactly")
    res.set_margin(compact_measurement(cm))
    L = lower_bound_from(res)
    if L is None:  # pragma: no cover - the margin was set just above
        raise SolverError("the family network's margin was not recorded")
    ub = prove_upper_bound(problem, max_memory=args.max_memory)
    for c in maxmin_checks(ub, L, problem.gamma_star_exact, problem.applicable, None):
        res.add(c)
    res.certificate = certificate_field(ub, L)
    g = gamma_star_of(p, k)
    res.fields.update(_common_fields(p, k, g, L.value, ub.upper_float, True, 0, net.m, {
        "name": "none: a phase-measure family built directly (no LP)", "status": "U: " + str(ub.solver.get("status")),
        "time": ub.seconds}))
    res.fields.update(info, theorem_width=construction_width_of(p, k), upper_bound_exact=str(ub.upper),
                      column_generation="not run (pass --search to run it as an independent check)")
    res.fields["relative_gap"] = res.certificate["relative_gap"]  # one gap: the certificate's (exact L where known)
    if cg is not None:
        rows, fields = _column_generation_rows(problem, args, cg, prefix="CG ")
        for c in rows:
            res.add(c)
        res.fields.update(column_generation=fields, rounds=len(cg.rounds),
                          uniform_dual_bound=fields["uniform_dual_bound"])
        res.notes.append("column generation (rows CG ...): " + _dual_note(cg))
    _hypothesis_note(res, p)
    if args.out is not None:
        _save(net, args.out, res)
    return res


def _max_width(problem: ModularAddition, args: argparse.Namespace) -> VerificationResult:
    """``--max-width M``: the smallest family network (as ``--min-width`` builds it, its rows included) pruned to at
    most ``M`` neurons by backward elimination (:func:`margintheory.solvers.width.prune_to_width`; no column
    generation).  Below the family's width the pruned network's margin is reported, not judged: below the proved
    minimum width no network reaches ``gamma*`` (the verdict is then ``not-applicable``), and between the two the
    elimination is a heuristic whose shortfall refutes nothing."""
    from margintheory.engines.margins import exhaustive_margin
    from margintheory.solvers.width import prune_to_width

    p, k, M = problem.p, problem.k, args.max_width
    g = gamma_star_of(p, k)
    res = VerificationResult(f"best network found with at most {M} neurons, p={p}, k={k}: the smallest max-margin "
                             "network known, pruned by backward elimination")
    info: dict[str, object] = {}
    mw = _width(problem, args, res, info)
    net, margin, seconds = mw.network, mw.margin, 0.0
    status = f"not pruned: the family network has {net.m} <= {M} neurons"
    if net.m > M:
        pr = prune_to_width(net, M, args.time_limit)
        net, margin, status, seconds = pr.network, pr.margin, pr.status, pr.seconds
    pruned = net is not mw.network
    res.add(bool_check(f"width <= {M}", net.m <= M, exactness="proved", detail=f"width {net.m}; {status}",
                       statement=f"the network has at most {M} neurons"))
    # weak duality: no network exceeds gamma* (a float comparison of the recomputed margin)
    res.add(bool_check("margin <= gamma*", margin <= g * (1 + EVAL_RTOL), tolerance=EVAL_RTOL,
                       detail=f"margin {margin:.15g}, gamma* {g:.15g}",
                       statement="the network's normalized margin <= gamma* (weak duality, Lemma C.6)"))
    em = exhaustive_margin(net, args.max_memory)
    res.add(close_check("margin recomputed", margin, float(em.normalized_margin),
                        max(1e-9, float(em.normalized_tolerance) / max(margin, 1e-300)),
                        statement="margin recomputed by the exhaustive engine (margins.exhaustive_margin)"))
    lb = mw.lower_bound
    _pruned_margin_row(res, problem, M, margin, pruned, lb.total(p) if lb.applies_to(p) else None)
    res.fields.update(_common_fields(p, k, g, margin, None, False, 0, net.m, {
        "name": "HIGHS (the margin LP, re-solved per neuron dropped)", "status": status, "time": seconds}))
    res.fields.update(upper_bound_certified=None, rounds=None)  # no upper bound computed, no column generation
    res.fields.update(info, theorem_width=construction_width_of(p, k), family_width=mw.width,
                      upper_bound_note="not computed: no bound on the best margin at width <= M; every network's "
                      "margin is <= gamma* (weak duality)", column_generation="not run (--max-width prunes the "
                      "smallest family network)")
    res.fields["width_search"]["pruned"] = status
    _hypothesis_note(res, p)
    if args.out is not None:
        _save(net, args.out, res)
    return res


def _pruned_margin_row(res: VerificationResult, problem: ModularAddition, M: int, margin: float, pruned: bool,
                       minimum: int | None) -> None:
    """The row "margin = gamma*" of ``--max-width M``: deciding for an unpruned network; for a pruned one reported,
    not judged (below the proved ``minimum`` width the verdict is ``not-applicable``)."""
    p, k = problem.p, problem.k
    g = gamma_star_of(p, k)
    below = minimum is not None and M < minimum
    why = (f"below the proved minimum width {minimum} no network reaches gamma*" if below else
           "backward elimination is a heuristic: a margin below gamma* at this width refutes nothing")
    res.add(close_check("pruned margin = gamma*" if pruned else "network margin = gamma*", g, margin, GAP_TOL,
                        detail=f"ratio {margin / g:.6g}" + (f"; {why}" if pruned else ""),
                        statement=f"the network of width <= {M} reaches gamma* (relative 1e-6)"
                                  + (f" -- reported, not judged: {why}" if pruned else "")))
    res.checks[-1].informational = pruned
    if pruned and not below:
        res.notes.append(f"the pruned network's margin ({margin / g:.6g} gamma*) is reported, not judged: backward "
                         f"elimination is a heuristic, and whether a max-margin network of width <= {M} exists is "
                         "not decided here")
    if below:
        res.applicable = False
        res.notes.append(f"--max-width {M} is below the proved minimum width {minimum} of a max-margin network "
                         f"for (p, k) = ({p}, {k}): gamma* is out of reach, so the verdict is not-applicable (exit 0 "
                         "when the family's and the pruned network's checks pass); the margin found is reported")


def _width(problem: ModularAddition, args: argparse.Namespace, res: VerificationResult,
           info: dict[str, object]) -> MinWidthResult:
    """The smallest max-margin network (:func:`margintheory.solvers.width.min_width_network`) with its rows: the
    phase moments vanish, it reaches ``gamma*``, the width lower bound (informational); ``info`` gets its fields."""
    from margintheory.solvers.width import min_width_network

    p, k = problem.p, problem.k
    mw = min_width_network(problem, time_limit=args.time_limit or 30.0)
    lb = mw.lower_bound
    nf = len(frequencies(p))
    theorem = construction_width_of(p, k)
    applies = lb.applies_to(p)
    info.update({"width_per_frequency": mw.per_frequency, "family": mw.measure.name,
                 "family_description": mw.measure.description, "theorem_width": theorem,
                 "theorem_width_per_frequency": 2 ** (2 * k - 1),
                 "lower_bound_width": lb.total(p), "lower_bound_width_per_frequency": lb.per_frequency,
                 "width_lower_bound_exactness": lb.exactness if applies else None, "width_lower_bound_applies": applies,
                 "width_lower_bound_method": lb.description, "width_lower_bound_ratio": lb.ratio,
                 "width_lower_bound_assumes": lb.assumes,
                 "width_search": {"attempts": mw.attempts, "seconds": mw.seconds, "frequencies": nf}})
    cm = mw.compact
    vanish = cm is not None and cm.structure.wanted_only
    res.add(bool_check("phase moments vanish", vanish, exactness="proved",
                       detail=f"{mw.measure.description}; " + (f"{cm.structure.checked} off-diagonal and the diagonal "
                                                              "moments reduced modulo Phi_Q" if cm else "not checked"),
                       statement="the phase measure's unwanted moments vanish (exact; every frequency max-margin)"))
    res.add(_reach_check(problem, mw, f"width {mw.width} = {mw.per_frequency} x {nf}; theorem's {theorem}"))
    if applies:
        minimal = mw.per_frequency == lb.per_frequency
        res.add(bool_check(f">= {lb.per_frequency} per frequency",
                           mw.per_frequency >= lb.per_frequency, exactness="proved", informational=True,
                           detail=f"{lb.description}; width >= {lb.total(p)}"
                           + ("; the width found is minimal" if minimal else ""),
                           statement=f"lower bound: every max-margin network has >= {lb.per_frequency} neurons per "
                                     "frequency"))
    else:
        res.notes.append(f"width lower bound ({lb.per_frequency} per frequency) needs p prime and p > 2k: "
                         f"not applicable to p = {p} (frequencies may alias)")
    return mw


def _reach_check(problem: ModularAddition, mw, detail: str) -> Check:
    """The family network's normalized margin equals ``gamma*``: exactly (squares of the exact values compared) when
    its margin is exact, else within its rigorous tolerance."""
    import sympy as sp

    name = f"{mw.per_frequency}/frequency reach gamma*"
    statement = f"{mw.per_frequency} neurons per frequency reach gamma* (margin from the phase moments, exact)"
    exact, gamma = (mw.compact.normalized_margin_exact if mw.compact else None), problem.gamma_star_exact
    if exact is not None and gamma is not None:
        equal = sp.nsimplify(exact**2 - gamma**2) == 0
        return Check(name=name, expected=float(gamma), measured=mw.margin, tolerance=0.0, passed=bool(equal),
                     exactness="proved", detail=f"{detail}; {exact} = {gamma}", statement=statement)
    return close_check(name, gamma_star_of(problem.p, problem.k), mw.margin,
                       max(mw.margin_tolerance / mw.margin, 1e-15), detail=detail, statement=statement)


def _uniform_dual_bound(problem: ModularAddition, args: argparse.Namespace, pricing: dict[str, object]) -> float:
    """Weak duality with uniform ``q``, ``tau``: the certified single-neuron upper bound (``inf`` on failure)."""
    from margintheory.solvers.single_neuron import solve_single_neuron

    if str(pricing.get("name", "")).startswith("closed-form"):
        from margintheory.solvers.fourier_pricing import price

        return price(problem.p, problem.k, np.ones(problem.p - 1)).upper

    try:
        b = solve_single_neuron(problem, n_starts=4, seed=args.seed, solver=args.sdp_solver, max_memory=args.max_memory)
    except SolverError:
        return float("inf")
    return b.upper if b.upper_certified else float("inf")


def _common_fields(p, k, g, lower, upper, certified, rounds, width, solver) -> dict[str, object]:
    """The fields every network result has (``upper=None``: no upper bound computed, no gap)."""
    gap = None if upper is None else (upper - lower) / abs(lower) if lower > 0 else float("inf")
    return {"p": p, "k": k, "gamma_star": g, "lower_bound": lower, "upper_bound": upper,
            "upper_bound_certified": bool(certified), "relative_gap": gap, "rounds": rounds, "width": width,
            "solver": solver}


def _hypothesis_note(res: VerificationResult, p: int) -> None:
    status = hypothesis_status(p)
    if status != "odd-prime":
        res.notes.append(f"p = {p} is {status}: the papers assume an odd prime; the numbers above are computed anyway")


@contextlib.contextmanager
def _progress(enabled: bool):
    """A rich status line on stderr updated every column-generation round (nothing when ``enabled`` is false:
    stderr is not a terminal)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(file=sys.stderr), transient=False, redirect_stdout=False,
                  redirect_stderr=False) as prog:
        task = prog.add_task("column generation: starting", total=None)

        def report(rec) -> None:
            gap = (rec.priced_upper - rec.lp_value) / rec.lp_value if rec.lp_value > 0 else float("inf")
            prog.update(task, description=f"round {rec.round}: LP {rec.lp_value:.12g}  priced <= "
                        f"{rec.priced_upper:.12g}  gap {gap:.2e}  orbits {rec.orbits} (+{rec.added})")

        yield report
