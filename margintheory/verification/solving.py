"""``solve``: an independent numeric answer to "what is the max margin for (p, k)?" with a bracket.

Library interface (the command ``margintheory solve`` parses flags, calls :func:`solve` and prints)::

    from margintheory import solve, SolveOptions, ModularAddition
    solve(ModularAddition(5, 2))                                        # column generation (the network LP)
    solve(ModularAddition(5, 2), SolveOptions(method="single-neuron"))  # the single-neuron bracket
    solve(ModularAddition(5, 2), method="single-neuron", weights="w.npz")   # class weights q, tau (a file or arrays)
    solve(ModularAddition(7, 3), method="min-width", search=True)       # the smallest family network (+ CG)
    solve(ModularAddition(5, 2), method="max-width", max_width=8)       # that network pruned to <= 8 neurons

The mathematics lives in :mod:`margintheory.solvers` (single-neuron bracket, column generation, smallest widths)
and :mod:`margintheory.certificate`.  The bracket never uses a construction (column generation starts from random
neurons); ``gamma*`` of :mod:`margintheory.core.theory` is only the *expected* value it is compared with.  The
``min-width`` method reports the smallest max-margin network known (phase-measure families, exact moments,
exhaustive margin) and the proved lower bound on the width (docs/theory.md#smaller-networks).  One function per
method (:data:`METHODS`); every one returns the :class:`~margintheory.core.checks.VerificationResult` of ``verify``.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from margintheory.core.checks import Check, Exactness, VerificationResult, bool_check, close_check
from margintheory.core.problems import ModularAddition
from margintheory.core.theory import construction_width_of, frequencies, gamma_star_of, hypothesis_status
from margintheory.errors import InputError, SolverError
from margintheory.runtime.atomic import check_output_file
from margintheory.runtime.budget import DEFAULT_MAX_MEMORY, Estimate, require

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.solvers.class_weighted import ClassWeights
    from margintheory.solvers.column_generation import ColumnGenerationResult, RoundRecord
    from margintheory.solvers.single_neuron import SingleNeuronBracket
    from margintheory.solvers.width import MinWidthResult

__all__ = ["METHODS", "METHOD_OPTIONS", "SolveOptions", "solve"]

GAP_TOL = 1e-6
#: a lower bound is F evaluated in float64 at a float point: allow this relative rounding when comparing to gamma*
EVAL_RTOL = 1e-12

#: the methods of :func:`solve` (``SolveOptions.method``)
METHODS = ("column-generation", "single-neuron", "min-width", "max-width")
#: the options only some methods use, with their defaults (``None`` given: the default; the pricing's default follows
#: ``p``: :func:`default_pricing`); given to a method that does not use them, they are refused
METHOD_OPTION_DEFAULTS = {"pricing": "fourier", "seed": 0, "sdp_solver": "CLARABEL"}
#: which of those each method uses (``min-width`` with ``search``: column generation's)
METHOD_OPTIONS = {"column-generation": frozenset(METHOD_OPTION_DEFAULTS), "single-neuron": frozenset({"seed",
                  "sdp_solver"}), "min-width": frozenset(), "max-width": frozenset(),
                  "min-width-search": frozenset(METHOD_OPTION_DEFAULTS)}
#: ``parameters.method`` of each method (:meth:`SolveOptions.kind`)
METHOD_NAMES = {"single-neuron": "single-neuron", "column-generation": "column-generation",
                "min-width": "min-width (phase-measure family, no LP)",
                "min-width-search": "min-width (phase-measure family) + column generation (--search)",
                "max-width": "max-width (the smallest family network pruned by backward elimination, no column "
                             "generation)"}
#: what the ``min-width`` method computes at even ``p`` (the parameters' ``method``)
EVEN_MIN_WIDTH = "min-width at even p: column generation (no phase-measure family is max-margin at even p)"
#: checks that compare with the theorem's statements (odd p): informational for even p
THEOREM_CLAIMS = ("gamma*", "Lemma C.15")


@dataclass(frozen=True, kw_only=True)
class SolveOptions:
    """How to solve (as opposed to *what*: the :class:`~margintheory.core.problems.ModularAddition` problem).

    ``method``: ``"column-generation"`` (default: the network LP from random neurons, its network and certified
    bracket), ``"single-neuron"`` (the certified bracket of the single-neuron problem), ``"min-width"`` (the
    smallest max-margin network known, built and verified, with the proved width lower bound; ``search=True`` also
    runs column generation as an independent bracket) or ``"max-width"`` (that network pruned to at most
    ``max_width`` neurons by backward elimination).  ``weights`` (``single-neuron`` only): the class weights ``q``
    (``p^k``,) and ``tau`` (``p^k``, ``p``) -- a file holding arrays ``q`` and ``tau`` (``.npz``, ``.safetensors``,
    PyTorch), a pair ``(q, tau)`` or a validated :class:`~margintheory.solvers.class_weighted.ClassWeights`.
    ``pricing`` (column generation: ``"fourier"``, odd ``p`` only, or ``"sos"``; default by ``p``), ``seed`` (of every
    random start, default 0) and ``sdp_solver`` (``"CLARABEL"`` or ``"SCS"``) are refused by a method that does not
    use them.  ``time_limit`` (seconds, ``None``: none) and ``max_memory`` (bytes): the budget, refused up front
    when the estimate exceeds it.  ``out``: save the network found there (``.npz`` / ``.safetensors``, atomically;
    ``overwrite`` replaces an existing file).  ``progress``: called with each column-generation round's record.
    """

    method: str = "column-generation"
    max_width: int | None = None
    search: bool = False
    weights: str | os.PathLike[str] | tuple[Any, Any] | ClassWeights | None = None
    pricing: str | None = None
    seed: int | None = None
    sdp_solver: str | None = None
    time_limit: float | None = None
    max_memory: int = DEFAULT_MAX_MEMORY
    out: str | os.PathLike[str] | None = None
    overwrite: bool = False
    progress: Callable[[RoundRecord], None] | None = None

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if (self.method == "max-width") != (self.max_width is not None):
            raise InputError("max_width is the width of the max-width method, and that method needs it")
        if self.max_width is not None and (isinstance(self.max_width, bool) or not isinstance(self.max_width, int)
                                           or self.max_width < 1):
            raise InputError(f"max_width must be a positive integer, got {self.max_width!r}")
        if self.search and self.method != "min-width":
            raise InputError("search applies to the min-width method (column generation is the default method)")
        if self.weights is not None and self.method != "single-neuron":
            raise InputError("weights apply to the single-neuron method (the class-weighted single-neuron problem)")
        if self.time_limit is not None and not self.time_limit > 0:
            raise InputError(f"time_limit must be positive (or None for no limit), got {self.time_limit}")
        if isinstance(self.max_memory, bool) or not isinstance(self.max_memory, int) or self.max_memory < 1:
            raise InputError(f"max_memory must be a positive number of bytes, got {self.max_memory!r}")
        if self.overwrite and self.out is None:
            raise InputError("overwrite applies to the out file; no out was given")
        if self.pricing not in (None, "fourier", "sos"):
            raise InputError(f"pricing must be 'fourier' or 'sos', got {self.pricing!r}")
        if self.sdp_solver not in (None, "CLARABEL", "SCS"):
            raise InputError(f"sdp_solver must be 'CLARABEL' or 'SCS', got {self.sdp_solver!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise InputError(f"seed must be a non-negative integer, got {self.seed!r}")
        unused = sorted(n for n in METHOD_OPTION_DEFAULTS if getattr(self, n) is not None and n not in self.used())
        if unused:
            raise InputError(f"{', '.join(unused)} does not apply to the {self.kind()} method")

    def kind(self) -> str:
        """The computation asked for: a method of :data:`METHODS`, ``min-width-search`` for ``min-width`` with
        ``search``."""
        return "min-width-search" if self.search else self.method

    def used(self) -> frozenset[str]:
        """The options of :data:`METHOD_OPTION_DEFAULTS` this method uses."""
        return METHOD_OPTIONS[self.kind()]

    def resolved(self, p: int) -> SolveOptions:
        """These options with every default filled in for modulus ``p`` (``pricing``: :func:`default_pricing`), also
        those the method does not use: ``min-width`` at even ``p`` runs column generation with them."""
        out = copy.copy(self)  # not through __post_init__: the filled-in defaults are not options given
        for name, default in METHOD_OPTION_DEFAULTS.items():
            if getattr(out, name) is None:
                object.__setattr__(out, name, default_pricing(p) if name == "pricing" else default)
        return out

    @property
    def seed_value(self) -> int:
        """The seed (after :meth:`resolved`: never ``None``)."""
        return 0 if self.seed is None else self.seed

    @property
    def solver(self) -> str:
        """The SOS solver (after :meth:`resolved`: never ``None``)."""
        return self.sdp_solver or str(METHOD_OPTION_DEFAULTS["sdp_solver"])

    @property
    def pricing_name(self) -> str:
        """The pricing (after :meth:`resolved`: never ``None``)."""
        return self.pricing or str(METHOD_OPTION_DEFAULTS["pricing"])

    @property
    def width(self) -> int:
        """``max_width`` of the ``max-width`` method (0 for the others)."""
        return self.max_width or 0

    def weights_label(self) -> str | None:
        """The weights' file as given (``None``: no file; arrays given directly are ``"arrays"``)."""
        if self.weights is None:
            return None
        return os.fspath(self.weights) if isinstance(self.weights, (str, os.PathLike)) else "arrays"


def default_pricing(p: int) -> str:
    """The closed-form (Fourier) pricing needs odd ``p`` (for even ``p`` the real frequency ``p/2`` is not priced by
    it); even ``p`` is priced by the SOS bracket."""
    return "fourier" if p % 2 == 1 else "sos"


def solve(problem: ModularAddition, options: SolveOptions | None = None, **kwargs: Any) -> VerificationResult:
    """Solve ``problem`` numerically under ``options`` (or the same as keywords: ``solve(problem,
    method="single-neuron")``) and return the result: the bracket ``[lower, upper]`` of the max margin with its
    checks, in the result shape of ``verify`` (see :class:`SolveOptions`)."""
    if options is not None and kwargs:
        raise InputError("give the options either as a SolveOptions or as keywords, not both")
    o = SolveOptions(**kwargs) if options is None else options
    if not isinstance(o, SolveOptions):
        raise InputError(f"options must be a SolveOptions, got {type(o).__name__}")
    if not isinstance(problem, ModularAddition):
        raise InputError(f"solve takes a ModularAddition problem, got {problem!r}")
    p, k = problem.p, problem.k
    if o.method == "max-width" and p % 2 == 0:
        raise InputError("the max-width method needs odd p: it prunes a phase-measure family network, and those are "
                         "max-margin for odd p only (for even p the closed form gamma* does not apply)")
    if o.pricing == "fourier" and p % 2 == 0:
        raise InputError(f"pricing 'fourier' needs odd p (the closed form does not price the real frequency p/2); "
                         f"p = {p} is priced by 'sos', the default for even p")
    o = o.resolved(p)
    if o.out is not None:
        from margintheory.network_io import output_format

        # a device, a directory, an unwritable place or (without overwrite) an existing file: refused before the
        # solve, and so is an unsupported suffix
        check_output_file(o.out, overwrite=o.overwrite)
        output_format(o.out)
    start = time.perf_counter()
    weights = _class_weights(problem, o)
    require(_estimate(p, k, o, weights), o.max_memory, o.time_limit, time_parameter="time_limit")
    kind = o.kind()
    if kind == "single-neuron":
        result = _single_neuron(problem, o, weights)
    elif kind == "max-width":
        result = _max_width(problem, o)
    elif p % 2 == 0 and kind != "column-generation":
        result = _min_width_even(problem, o)
    elif kind != "column-generation":
        result = _min_width_direct(problem, o)
    else:
        result = _network(problem, o)
    if not problem.applicable:
        _outside_the_theorem(result)
    _schema_fields(result, problem, o, time.perf_counter() - start)
    if kind.startswith("min-width") and p % 2 == 0:
        result.parameters.update(method=EVEN_MIN_WIDTH, seed=o.seed, pricing=o.pricing)
    return result


def _min_width_even(problem: ModularAddition, o: SolveOptions) -> VerificationResult:
    """``min-width`` at even ``p``: the phase-measure families are max-margin for odd ``p`` only, so no smallest
    max-margin network is known; the max margin is still computed with both legs (column generation's network and its
    dual bound) and the verdict is ``not-applicable``."""
    result = _network(problem, o)
    result.title = f"min-width at even p = {problem.p}: " + result.title
    result.notes.append(f"the min-width method builds the smallest phase-measure family network, which is max-margin "
                        f"for odd p only; at p = {problem.p} none is known, so the network LP's bracket (column "
                        "generation, lower and upper end) is reported instead; the verdict is not-applicable")
    return result


def _outside_the_theorem(result: VerificationResult) -> None:
    """Even ``p``: the theorem does not apply (as in ``verify``), so the comparisons with its closed form and its
    optimal-neuron set are reported but do not decide; the verdict is ``not-applicable`` (exit 0 if every computed
    check passed)."""
    result.applicable = False
    for check in result.checks:
        if any(claim in f"{check.name} {check.statement}" for claim in THEOREM_CLAIMS):
            check.informational = True


def _schema_fields(result: VerificationResult, problem: ModularAddition, o: SolveOptions, seconds: float) -> None:
    """The common fields: the margin is the lower bound (attained by the network or neuron found)."""
    result.task = problem.task
    kind = o.kind()
    result.parameters = {**problem.parameters(), "method": METHOD_NAMES[kind], "seed": o.seed}
    if o.weights is not None:
        result.parameters["weights"] = o.weights_label()
    if kind in ("column-generation", "min-width-search"):  # the pricing actually used (the default follows p)
        result.parameters["pricing"] = o.pricing
    if kind in ("min-width", "max-width"):  # no random start
        del result.parameters["seed"]
    flags = {"max_width": o.max_width, "min_width": o.method == "min-width", "search": o.search,
             "time_limit": o.time_limit}
    result.parameters.update({name: value for name, value in flags.items() if value})
    f = result.fields
    if "seconds" in f:
        f["solver_seconds"] = f.pop("seconds")
    f.update(gamma_star=problem.gamma_star, gamma_star_note=problem.gamma_star_note,
             normalized_margin=f["lower_bound"], seconds=seconds)
    if not f.get("weights", {}).get("uniform", True):  # class weights: the optimum is not gamma*, no ratio to it
        f.update(gamma_star=None, gamma_star_note="class weights: the single-neuron optimum has no closed form here; "
                 "the checks compare the bracket with gamma* x sum(q tau) (weak duality)")


def _class_weights(problem: ModularAddition, o: SolveOptions) -> ClassWeights | None:
    """The class weights of ``o.weights``, validated by :func:`margintheory.solvers.class_weighted.class_weights`;
    from a file: shapes and dtypes checked on the headers, sizes within ``max_memory`` before any data is read."""
    if o.weights is None:
        return None
    from margintheory.solvers.class_weighted import ClassWeights, class_weights

    if isinstance(o.weights, ClassWeights):
        if (o.weights.problem.p, o.weights.problem.k) != (problem.p, problem.k):
            raise InputError(f"the class weights are for (p, k) = ({o.weights.problem.p}, {o.weights.problem.k}), "
                             f"the problem is ({problem.p}, {problem.k})")
        return o.weights
    if not isinstance(o.weights, (str, os.PathLike)):
        try:
            q, tau = o.weights
        except (TypeError, ValueError):
            raise InputError("weights must be a file, a pair (q, tau) or a ClassWeights") from None
        return class_weights(problem, q=q, tau=tau)
    from margintheory.network_io import read_stored_arrays

    path, n, p = o.weights_label(), problem.p**problem.k, problem.p
    # reading the arrays and checking them (a float64 copy, the shifted view of tau, comparisons): before any data
    require(Estimate(f"reading and checking the class weights of {path}", 32.0 * n * (p + 1), None), o.max_memory,
            None)
    arrays = read_stored_arrays(o.weights, ("q", "tau"), max_memory=o.max_memory, shapes={"q": (n,), "tau": (n, p)},
                                exclusive=True)
    try:
        return class_weights(problem, q=arrays["q"][0], tau=arrays["tau"][0],
                             stored={name: dtype for name, (_, dtype) in arrays.items()})
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def _estimate(p: int, k: int, o: SolveOptions, weights: ClassWeights | None = None) -> Estimate:
    """Memory and time of the requested solve, from ``(p, k)`` before anything is allocated."""
    from margintheory.solvers.cost import (
        column_generation_estimate,
        max_width_estimate,
        min_width_estimate,
        single_neuron_estimate,
    )

    if weights is not None:
        from margintheory.solvers.class_weighted import estimate

        return estimate(weights, solver=o.solver, max_memory=o.max_memory)
    kind = o.kind()
    if kind == "min-width":
        return min_width_estimate(p, k)
    if kind == "max-width":
        return max_width_estimate(p, k, o.width)
    if kind == "single-neuron":  # the method solve_single_neuron's "auto" takes for uniform weights
        sn = "fourier-exact" if o.solver == "CLARABEL" else "fourier-blocks"
        return single_neuron_estimate(p, k, solver=o.solver, method=sn)
    cg = column_generation_estimate(p, k, solver=o.solver, pricing=o.pricing_name)
    if kind == "min-width-search":  # column generation's network is kept while the family is verified
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


def _single_neuron(problem: ModularAddition, o: SolveOptions,
                   weights: ClassWeights | None = None) -> VerificationResult:
    """The bracket for uniform weights (default) or the class weights of ``o.weights``; uniform weights given in a
    file give the same rows as the default (the bracket then for the file's arrays, equal to rounding)."""
    p, k = problem.p, problem.k
    g = gamma_star_of(p, k)  # the closed form's value also for even p (compared there, informational)
    b = _bracket(problem, o, weights)
    if weights is not None:  # weak duality for the weights as given: gamma* sum(q tau) <= Psi(q, tau)
        g *= weights.total
    uniform = weights is None or weights.uniform
    what = ("uniform q and tau" if weights is None else
            f"{'uniform' if uniform else 'class'} weights of {o.weights_label()}")
    res = VerificationResult(f"single-neuron max margin, p={p}, k={k} ({what})")
    total = 1.0 if weights is None else weights.total
    rows = (_weighted_bracket_checks(g, b, weights) if weights is not None and not uniform else
            _bracket_checks(g, b.lower, b.upper, b.upper_certified, b.upper_exactness, total))
    for c in rows:
        res.add(c)
    if b.proved_upper is not None:
        from margintheory.certificate.maxmin import proof_step_checks

        steps = proof_step_checks(b.proved_upper, include_weak_duality=False)
        upper_row = next(c for c in rows if _is_upper_row(c.name))
        upper_row.premises += [c.name for c in steps]  # U is the chain's conclusion: its exactness follows the steps
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
                       "block_frequencies": b.block_frequencies, "seed": o.seed,
                       "upper_bound_exactness": upper.exactness, "upper_bound_assumes": list(upper.assumes),
                       "local_values_top": b.local.values[:5], "seconds": b.seconds})
    if weights is not None:
        res.fields["weights"] = {"file": o.weights_label(), **b.weights}
        if weights.total != 1.0:
            res.notes.append(f"the weights sum to {weights.total!r}, not exactly 1: gamma* is compared as gamma* x "
                             "that sum (the objective is linear in the weights)")
    res.notes.append(b.certification)
    _hypothesis_note(res, p)
    if o.out is not None:
        _save(b.maximiser_network(), o.out, res)
    return res


def _bracket(problem: ModularAddition, o: SolveOptions, weights: ClassWeights | None) -> SingleNeuronBracket:
    if weights is None:
        from margintheory.solvers.single_neuron import solve_single_neuron

        return solve_single_neuron(problem, seed=o.seed_value, solver=o.solver, time_limit=o.time_limit,
                                   max_memory=o.max_memory)
    from margintheory.solvers.class_weighted import class_weighted_single_neuron

    return class_weighted_single_neuron(problem, q=weights.q, tau=weights.tau, stored=weights.stored,
                                        seed=o.seed_value, solver=o.solver, time_limit=o.time_limit,
                                        max_memory=o.max_memory)


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


def _column_generation(problem: ModularAddition, o: SolveOptions) -> ColumnGenerationResult:
    """Column generation from random neurons (the network LP), converged or a :class:`SolverError`."""
    from margintheory.solvers.column_generation import column_generation

    cg = column_generation(problem, seed=o.seed_value, time_limit=o.time_limit, pricing=o.pricing_name,
                           progress=o.progress, max_memory=o.max_memory, sdp_solver=o.solver)
    if not cg.converged:
        raise SolverError(f"column generation stopped ({cg.status}) after {len(cg.rounds)} rounds: bracket "
                          f"[{cg.primal_margin:.12g}, {cg.dual_bound:.12g}]; raise the time limit")
    return cg


def _column_generation_rows(problem: ModularAddition, o: SolveOptions, cg: ColumnGenerationResult,
                            prefix: str = "") -> tuple[list[Check], dict[str, object]]:
    """The bracket of column generation's network (its margin ``L``, the certified dual bound ``U``), the margin
    recomputed by the exhaustive engine and the uniform dual (informational); with the fields that describe the run.
    ``prefix`` names the rows when they are an independent check beside another network's (``min-width`` with
    ``search``)."""
    from margintheory.engines.margins import exhaustive_margin

    p, k = problem.p, problem.k
    g, lower = gamma_star_of(p, k), cg.primal_margin
    rows = _bracket_checks(g, lower, cg.dual_bound, cg.dual_certified)
    rows.append(close_check("network margin = gamma*", g, lower, GAP_TOL,
                            statement="network margin = gamma* (relative 1e-6)"))
    em = exhaustive_margin(cg.network, o.max_memory)
    rows.append(close_check("margin recomputed", lower, float(em.normalized_margin),
                            max(1e-9, float(em.normalized_tolerance) / max(lower, 1e-300)),
                            statement="margin recomputed by the exhaustive engine (margins.exhaustive_margin)"))
    uniform = _uniform_dual_bound(problem, o, cg.pricing_solver)
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
              "column_generation_width": cg.width, "seed": o.seed, "pricing": o.pricing,
              "round_log": [r.__dict__ for r in cg.rounds]}
    for common in ("p", "k", "gamma_star"):  # the caller's (they are the problem's, not the run's)
        del fields[common]
    return rows, fields


def _dual_note(cg: ColumnGenerationResult) -> str:
    return ("upper bound: weak duality (docs/theory.md) with the final LP dual, priced by "
            f"{cg.pricing_solver.get('name')} with a rigorous rounding bound" if cg.dual_certified else
            "upper bound NOT certified (pricing by local search only)")


def _network(problem: ModularAddition, o: SolveOptions) -> VerificationResult:
    """The default: the network LP by column generation from random neurons, its network and certified bracket."""
    p, k = problem.p, problem.k
    cg = _column_generation(problem, o)
    res = VerificationResult(f"network max margin by column generation, p={p}, k={k}")
    rows, fields = _column_generation_rows(problem, o, cg)
    for c in rows:
        res.add(c)
    res.fields.update({"p": p, "k": k, "gamma_star": gamma_star_of(p, k), **fields,
                       "theorem_width": construction_width_of(p, k)})
    res.notes.append(_dual_note(cg))
    _hypothesis_note(res, p)
    if o.out is not None:
        _save(cg.network, o.out, res)
    return res


def _save(net, path: str | os.PathLike[str], res: VerificationResult) -> None:  # noqa: ANN001 - a PolyNetwork
    """Write the network found (atomically); ``network_file`` names it."""
    net.save(path)
    res.fields["network_file"] = os.fspath(path)


def _min_width_direct(problem: ModularAddition, o: SolveOptions) -> VerificationResult:
    """``min-width``: the smallest family network built directly (:func:`margintheory.solvers.width.
    min_width_network`), its margin ``L`` exact from its phase moments (no input enumerated) and the proved upper
    bound ``U`` of :mod:`margintheory.certificate` -- the max-min interval of ``verify``.  With ``search``, column
    generation runs first and its bracket is added as extra rows (``CG ...``) and ``details.column_generation``; the
    network reported, saved and certified is the family's."""
    from margintheory.certificate.maxmin import certificate_field, lower_bound_from, maxmin_checks
    from margintheory.certificate.upper_bound import prove_upper_bound
    from margintheory.tasks.modular_addition.compact import compact_measurement
    p, k = problem.p, problem.k
    cg = _column_generation(problem, o) if o.search else None
    res = VerificationResult(f"smallest max-margin network known, p={p}, k={k}: built directly and verified "
                             "(L from its phase moments, U proved)"
                             + ("; column generation from random neurons as an independent bracket" if cg else ""))
    info: dict[str, object] = {}
    mw = _width(problem, o, res, info)
    net = mw.network
    cm = mw.compact
    if cm is None or cm.normalized_margin_exact is None:
        raise SolverError("the family network's margin was not computed exactly")
    res.set_margin(compact_measurement(cm))
    L = lower_bound_from(res)
    if L is None:  # pragma: no cover - the margin was set just above
        raise SolverError("the family network's margin was not recorded")
    ub = prove_upper_bound(problem, max_memory=o.max_memory)
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
        rows, fields = _column_generation_rows(problem, o, cg, prefix="CG ")
        for c in rows:
            res.add(c)
        res.fields.update(column_generation=fields, rounds=len(cg.rounds),
                          uniform_dual_bound=fields["uniform_dual_bound"])
        res.notes.append("column generation (rows CG ...): " + _dual_note(cg))
    _hypothesis_note(res, p)
    if o.out is not None:
        _save(net, o.out, res)
    return res


def _max_width(problem: ModularAddition, o: SolveOptions) -> VerificationResult:
    """``max-width`` ``M``: the smallest family network (as ``min-width`` builds it, its rows included) pruned to at
    most ``M`` neurons by backward elimination (:func:`margintheory.solvers.width.prune_to_width`; no column
    generation).  Below the family's width the pruned network's margin is reported, not judged: below the proved
    minimum width no network reaches ``gamma*`` (the verdict is then ``not-applicable``), and between the two the
    elimination is a heuristic whose shortfall refutes nothing."""
    from margintheory.engines.margins import exhaustive_margin
    from margintheory.solvers.width import prune_to_width

    p, k, M = problem.p, problem.k, o.width
    g = gamma_star_of(p, k)
    res = VerificationResult(f"best network found with at most {M} neurons, p={p}, k={k}: the smallest max-margin "
                             "network known, pruned by backward elimination")
    info: dict[str, object] = {}
    mw = _width(problem, o, res, info)
    net, margin, seconds = mw.network, mw.margin, 0.0
    status = f"not pruned: the family network has {net.m} <= {M} neurons"
    if net.m > M:
        pr = prune_to_width(net, M, o.time_limit)
        net, margin, status, seconds = pr.network, pr.margin, pr.status, pr.seconds
    pruned = net is not mw.network
    res.add(bool_check(f"width <= {M}", net.m <= M, exactness="proved", detail=f"width {net.m}; {status}",
                       statement=f"the network has at most {M} neurons"))
    # weak duality: no network exceeds gamma* (a float comparison of the recomputed margin)
    res.add(bool_check("margin <= gamma*", margin <= g * (1 + EVAL_RTOL), tolerance=EVAL_RTOL,
                       detail=f"margin {margin:.15g}, gamma* {g:.15g}",
                       statement="the network's normalized margin <= gamma* (weak duality, Lemma C.6)"))
    em = exhaustive_margin(net, o.max_memory)
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
    if o.out is not None:
        _save(net, o.out, res)
    return res


def _pruned_margin_row(res: VerificationResult, problem: ModularAddition, M: int, margin: float, pruned: bool,
                       minimum: int | None) -> None:
    """The row "margin = gamma*" of ``max-width`` ``M``: deciding for an unpruned network; for a pruned one reported,
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


def _width(problem: ModularAddition, o: SolveOptions, res: VerificationResult,
           info: dict[str, object]) -> MinWidthResult:
    """The smallest max-margin network (:func:`margintheory.solvers.width.min_width_network`) with its rows: the
    phase moments vanish, it reaches ``gamma*``, the width lower bound (informational); ``info`` gets its fields."""
    from margintheory.solvers.width import min_width_network

    p, k = problem.p, problem.k
    mw = min_width_network(problem, time_limit=o.time_limit or 30.0)
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


def _uniform_dual_bound(problem: ModularAddition, o: SolveOptions, pricing: dict[str, object]) -> float:
    """Weak duality with uniform ``q``, ``tau``: the certified single-neuron upper bound (``inf`` on failure)."""
    from margintheory.solvers.single_neuron import solve_single_neuron

    if str(pricing.get("name", "")).startswith("closed-form"):
        from margintheory.solvers.fourier_pricing import price

        return price(problem.p, problem.k, np.ones(problem.p - 1)).upper

    try:
        b = solve_single_neuron(problem, n_starts=4, seed=o.seed_value, solver=o.solver, max_memory=o.max_memory)
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
