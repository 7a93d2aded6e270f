"""The tasks of the seed papers, verified with the same machinery and reported in one result shape.

Library interface (no command line here): a task is run on a problem object of :mod:`margintheory.core.problems`
with typed keyword options::

    from margintheory import verify, ModularAddition, SparseParity, GroupComposition, CoGO
    verify(ModularAddition(7, 3))                 # the construction of Lemma C.18, float64
    verify(ModularAddition(7, 3), exact=True)     # the same in exact arithmetic
    verify(ModularAddition(7, 3), family="smallest-known")  # a smaller max-margin network (48 vs 96 neurons)
    verify(ModularAddition(7, 3), network=net, rtol=1e-3)
    verify(SparseParity(10, 4)); verify(GroupComposition("S4")); verify(CoGO(7, "F6"))

``solve(problem, options)`` (:mod:`margintheory.verification.solving`) is the numeric counterpart: the max margin
computed independently of the construction (column generation, the single-neuron bracket with class weights, the
smallest widths), in the same result shape.

``TASKS`` maps each task name to its :class:`Task` (description + runner); every runner returns a
:class:`~margintheory.core.checks.VerificationResult` whose common fields (``gamma_star``, ``normalized_margin``,
``width``, ...) are filled the same way for every task.  See docs/theory.md for the statements checked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from margintheory.core.checks import VerificationResult
from margintheory.core.problems import (
    CoGO,
    GroupComposition,
    ModularAddition,
    ModularAdditionEveryP,
    Problem,
    SparseParity,
)
from margintheory.engines.fourier import DEFAULT_SPARSITY_TOL
from margintheory.engines.margins import DEFAULT_MAX_MEMORY
from margintheory.errors import InputError, RefusedError
from margintheory.runtime.budget import require
from margintheory.verification.base import Task, VerifyOptions
from margintheory.verification.solving import SolveOptions, solve

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.core.network import PolyNetwork
    from margintheory.tasks.parity.checks import ParityNetwork

__all__ = ["TASK_NAMES", "TASKS", "SolveOptions", "Task", "VerifyOptions", "solve", "verify"]


def _verify_modular(problem: ModularAddition | ModularAdditionEveryP, o: VerifyOptions) -> VerificationResult:
    """The construction (float64 or exact) or a given network, and (``o.certificate``) the max-min interval
    ``[L, U]`` of :mod:`margintheory.certificate.maxmin`: the solver leg, refused up front if it would not fit.
    A :class:`ModularAdditionEveryP` problem: the claims for every odd ``p`` at once
    (:mod:`margintheory.tasks.modular_addition.every_p`)."""
    if isinstance(problem, ModularAdditionEveryP) and problem.even:
        from margintheory.tasks.modular_addition.every_even_p import verify_every_even_p

        options = _every_p_options(o)
        if options.pop("method", None) == "sos":
            raise InputError("the every-even-p proof bounds g_k by the exact AM-GM certificate; method 'sos' does not "
                             "apply to it")
        return verify_every_even_p(problem, **options)
    if isinstance(problem, ModularAdditionEveryP):
        from margintheory.tasks.modular_addition.every_p import verify_every_p

        return verify_every_p(problem, **_every_p_options(o))
    if not o.certificate:
        return _check_modular(problem, o)
    if problem.p % 2 == 0:  # Theorem C.22 does not hold: gamma_even (docs/theory.md#even-p-max-margin)
        return _verify_even_p(problem, o)
    from margintheory.certificate.block_sos import require_memory
    from margintheory.certificate.maxmin import attach_maxmin

    sos = o.upper_method == "sos"  # (the AM-GM certificate needs no solver)
    _first_refusal(lambda: _require_checks_fit(problem, o),
                   lambda: require_memory(problem.k, o.max_memory, o.max_seconds) if sos else 0)
    result = _check_modular(problem, o)
    attach_maxmin(result, problem, max_memory=o.max_memory, rtol=o.rtol, exact_available=o.network is None,
                  method=o.upper_method)
    return result


def _verify_even_p(problem: ModularAddition, o: VerifyOptions) -> VerificationResult:
    """Even ``p``: the max margin ``gamma_even(p, k)`` in closed form (the every-even-``p`` theorem specialised, any
    ``p``), the construction's or the network's checks when they fit (the construction's are skipped, with a note,
    when they do not: at even ``p`` they decide nothing), and up to ``LP_CROSS_CHECK_MAX_P`` the per-``p`` linear
    program's proved ``[L, U]`` as a cross-check (:mod:`margintheory.solvers.even_p`)."""
    from margintheory.certificate.block_sos import require_memory
    from margintheory.solvers.even_p import attach_even_p, estimate_even_p
    from margintheory.tasks.modular_addition.every_even_p import LP_CROSS_CHECK_MAX_P, attach_closed_form

    lp = problem.p <= LP_CROSS_CHECK_MAX_P
    skipped = None
    if o.network is None and not (o.exact or o.exhaustive):  # (a check asked for by name is refused, not skipped)
        try:
            _require_checks_fit(problem, o)
        except RefusedError as exc:
            skipped = str(exc)
    _first_refusal(lambda: _require_checks_fit(problem, o) if skipped is None else 0,
                   lambda: require_memory(problem.k, o.max_memory, o.max_seconds),
                   lambda: require(estimate_even_p(problem, o.max_memory), o.max_memory, o.max_seconds) if lp else 0)
    result = _check_modular(problem, o) if skipped is None else _even_p_result(problem, skipped)
    if lp:
        attach_even_p(result, problem, max_memory=o.max_memory)
    else:
        result.notes.append(f"p = {problem.p} > {LP_CROSS_CHECK_MAX_P}: the per-p linear program's cross-check is not "
                            "run; the closed form is the every-even-p theorem specialised")
    attach_closed_form(result, problem, max_memory=o.max_memory)
    return result


def _even_p_result(problem: ModularAddition, why: str) -> VerificationResult:
    """The result at an even ``p`` whose construction checks do not fit: the closed form's rows only."""
    result = VerificationResult(f"the max margin at even p = {problem.p}, k = {problem.k} (closed form)",
                                task=problem.task, parameters=problem.parameters())
    result.fields.update({"gamma_star": None, "normalized_margin": None, "width": None,
                          "gamma_star_note": f"p = {problem.p} is even: the closed form of Theorem C.22 assumes odd p"})
    result.applicable = False  # Theorem C.22 assumes odd p; the rows still decide the exit code
    result.notes.append(f"the construction's checks are skipped (they decide nothing at even p): {why}")
    return result


def _every_p_options(o: VerifyOptions) -> dict:
    """The options the every-p proof uses (the family and the budget); the others concern one ``p`` or a network."""
    if o.network is not None or o.exact or o.exhaustive or o.compact or o.rtol is not None or not o.certificate:
        raise InputError("the every-p proof checks the construction or a family exactly, with both ends: network, "
                         "exact, exhaustive, rtol and certificate=False do not apply to it")
    return {"family": o.family, "max_memory": o.max_memory, "max_seconds": o.max_seconds, "method": o.upper_method}


def _refusal_rank(exc: RefusedError) -> int:
    """0: no budget lifts it; 1: the optional certificate leg is unavailable; 2: a budget would allow it."""
    return {None: 0, "certificate": 1}.get(exc.parameter, 2)


def _first_refusal(*size_checks: Callable[[], object]) -> None:
    """Run every up-front size check (each only estimates) and raise the most fundamental refusal among them: a
    size nothing could allow before an unavailable optional leg before a budget that could be raised (ties: the
    first given), so that following the advice never just leads to the next refusal of a harder kind."""
    refusals = []
    for check in size_checks:
        try:
            check()
        except RefusedError as exc:
            refusals.append(exc)
    if refusals:
        first = min(refusals, key=_refusal_rank)
        if _refusal_rank(first) == 2:  # budgets: name every one that must be raised, not just the first
            first.also = [r for r in refusals if r is not first and _refusal_rank(r) == 2]
        raise first


def _specialises(problem: ModularAddition, o: VerifyOptions) -> bool:
    """Whether the construction (or family network) at an odd ``p`` is checked as the every-p proof evaluated at
    ``p`` (:mod:`margintheory.tasks.modular_addition.specialised`): when the per-``p`` compact check does not fit the
    budget (it holds a ``p x p`` table) and the ``p``-free facts do, for ``k`` the every-p proof covers."""
    from margintheory.engines.fourier_margin import estimate_compact_construction, estimate_compact_family

    if o.network is not None or o.exact or o.exhaustive or o.compact or problem.p % 2 == 0:
        return False
    if problem.k > ModularAdditionEveryP.MAX_K:
        return False
    if _fits(lambda: estimate_compact_construction(problem, o.family), o):
        return False
    return _fits(lambda: estimate_compact_family(3, problem.k, o.family), o)


def _fits(estimate: Callable[[], Any], o: VerifyOptions) -> bool:
    """Whether the estimated job fits the budget of ``o`` (a refusal of any kind: no)."""
    try:
        require(estimate(), o.max_memory, o.max_seconds)
    except RefusedError:
        return False
    return True


def _require_checks_fit(problem: ModularAddition, o: VerifyOptions) -> None:
    """The up-front size check that the checks of :func:`_check_modular` make first (nothing is allocated)."""
    from margintheory.tasks.modular_addition import checks as verification

    if _specialises(problem, o):
        return
    p, k = problem.p, problem.k
    if o.network is not None:
        m = getattr(o.network, "m", 0)
        if o.exhaustive:  # else: the compact check first; the exhaustive fallback is estimated when it is needed
            require(verification.estimate_network_check(p, k, m, max_memory=o.max_memory), o.max_memory,
                    o.max_seconds)
    elif o.exact and o.family != "lemma-c18":
        from margintheory.symbolic.exact_families import check_family_size

        check_family_size(p, k, o.family)
    elif o.exact:
        from margintheory.symbolic.exact import estimate_exact_check

        require(estimate_exact_check(problem), o.max_memory, o.max_seconds)
    elif o.exhaustive:
        require(verification.estimate_family_check(problem, None, o.family, max_memory=o.max_memory), o.max_memory,
                o.max_seconds)
    else:
        from margintheory.engines.fourier_margin import estimate_compact_construction

        require(estimate_compact_construction(problem, o.family), o.max_memory, o.max_seconds)


def _check_modular(problem: ModularAddition, o: VerifyOptions) -> VerificationResult:
    """The checks of the construction (float64 or exact) or of a given network (no solver); where the theorem's
    hypothesis fails (even ``p``) its claims are reported, not deciding (:func:`_theorem_claims_reported`)."""
    return _theorem_claims_reported(_run_modular_checks(problem, o), problem)


def _theorem_claims_reported(result: VerificationResult, problem: ModularAddition) -> VerificationResult:
    """At even ``p`` Theorem C.22 (Li et al., arXiv:2402.09469) does not apply: a claim of it that fails there (all
    wrong logits equal, Lemma C.20's ``f^(j..,-j) > 0``) is a fact about the construction, not a refutation.  Every
    row becomes informational; what decides is the true max margin's two legs, attached afterwards
    (:mod:`margintheory.solvers.even_p`), so the verdict is ``not-applicable`` with exit 0 unless a leg fails."""
    if problem.applicable:
        return result
    note = " (Theorem C.22 assumes odd p: reported, not deciding)"
    result.checks = [c if c.informational else c.reported(note=note) for c in result.checks]
    return result


def _run_modular_checks(problem: ModularAddition, o: VerifyOptions) -> VerificationResult:
    from margintheory.core.network import PolyNetwork
    from margintheory.tasks.modular_addition import checks as verification

    if o.network is not None:
        if not isinstance(o.network, PolyNetwork):
            raise InputError("modular addition checks a PolyNetwork (arrays U (m, k, p), W (m, p))")
        return verification.verify_network(o.network, problem=problem, max_memory=o.max_memory,
                                           max_seconds=o.max_seconds, rtol=o.rtol,
                                           fourier_tolerance=o.fourier_tolerance, min_share=o.min_share,
                                           exhaustive=o.exhaustive)
    if (o.fourier_tolerance, o.min_share) != (DEFAULT_SPARSITY_TOL, 0.0):
        raise InputError("fourier_tolerance and min_share apply to a given network, not to the construction")
    if o.exact and o.family != "lemma-c18":
        from margintheory.symbolic.exact_families import verify_family_exact

        return verify_family_exact(problem, family=o.family)
    if o.exact:
        from margintheory.symbolic.exact import verify_construction_exact

        return verify_construction_exact(problem, max_memory=o.max_memory, max_seconds=o.max_seconds)
    if _specialises(problem, o):
        from margintheory.tasks.modular_addition.specialised import verify_specialised

        return verify_specialised(problem, o.family)
    return verification.verify_construction(problem, max_memory=o.max_memory, max_seconds=o.max_seconds,
                                            family=o.family, exhaustive=o.exhaustive)


def _verify_parity(problem: SparseParity, o: VerifyOptions) -> VerificationResult:
    from margintheory.tasks.parity import checks as parity

    if o.network is None:
        require(parity.estimate_parity_check(problem.n, problem.k, 2 ** (problem.k - 1), problem.k, True),
                o.max_memory, o.max_seconds)
        built = parity.build_parity_construction(problem)
        result = parity.verify_parity(built, construction=True, rtol=o.rtol, max_memory=o.max_memory,
                                      max_seconds=o.max_seconds)
    else:
        net = o.network
        if not isinstance(net, parity.ParityNetwork):
            raise InputError("parity checks a ParityNetwork (arrays U (m, n), W (m, 2), support S)")
        if (net.n, net.k) != (problem.n, problem.k):
            raise InputError(f"the network has n = {net.n}, k = |S| = {net.k} but the problem has n = {problem.n}, "
                             f"k = {problem.k}")
        result = parity.verify_parity(net, construction=False, rtol=o.rtol, max_memory=o.max_memory,
                                      max_seconds=o.max_seconds)
    result.fields["gamma_star_note"] = problem.gamma_star_note
    return result


def _verify_group(problem: GroupComposition, o: VerifyOptions) -> VerificationResult:
    from margintheory.core.network import PolyNetwork
    from margintheory.tasks.groups import task as group_task

    if o.network is None:
        result = group_task.verify_group(problem.G, max_memory=o.max_memory, max_seconds=o.max_seconds)
    else:
        if not isinstance(o.network, PolyNetwork):
            raise InputError("group composition checks a PolyNetwork with k = 2 and p = |G|")
        result = group_task.verify_group_network(problem.G, o.network, max_memory=o.max_memory,
                                                 max_seconds=o.max_seconds, rtol=o.rtol)
        result.fields["width"] = o.network.m
    group_task.group_common_fields(problem, result, construction=o.network is None)
    return result


def _verify_cogo(problem: CoGO, o: VerifyOptions) -> VerificationResult:
    from margintheory.core.network import PolyNetwork
    from margintheory.tasks.cogo import task as cogo_task

    if o.network is not None:
        net = o.network
        if not isinstance(net, PolyNetwork) or net.p != problem.d:
            raise InputError(f"CoGO checks a quadratic PolyNetwork on Z_d with d = {problem.d}")
        result = cogo_task.verify_cogo_network(net, max_memory=o.max_memory, max_seconds=o.max_seconds)
        result.fields["width"] = net.m
    else:
        result = cogo_task.verify_cogo(problem, max_memory=o.max_memory, max_seconds=o.max_seconds)
        checked = result.fields.get("corrected") or result.fields.get("paper") or {}
        result.fields["width"] = checked.get("order")
    result.fields["gamma_star"] = problem.gamma_star
    result.fields["gamma_star_note"] = problem.gamma_star_note
    return result


TASKS: dict[str, Task] = {
    "modular-addition": Task(
        name="modular-addition",
        dataset="all p^k inputs (a_1..a_k) in Z_p^k, label a_1+...+a_k mod p",
        encoding="one-hot per input",
        activation="x^k (k = number of inputs)",
        classes="p",
        norm="L_{2,k+1}",
        closed_form="gamma* = 2 k! / ((2k+2)^((k+1)/2) (p-1) p^((k-1)/2))",
        constructions=("Lemma C.18",),
        reference="Li et al., Fourier circuits (arXiv:2402.09469), Thm 4.9 / C.22",
        problem_type=(ModularAddition, ModularAdditionEveryP),
        runner=_verify_modular,
        options=frozenset({"exact", "rtol", "fourier_tolerance", "min_share", "family", "exhaustive",
                           "upper_method", "compact"}),
    ),
    "parity": Task(
        name="parity",
        dataset="all 2^n inputs x in {+1,-1}^n, label prod_{j in S} x_j, |S| = k",
        encoding="x itself (u . x)",
        activation="x^k",
        classes="2",
        norm="L_{2,k+1}",
        closed_form="gamma* = k! sqrt(2 (k+1)^-(k+1)) for m >= 2^(k-1)",
        constructions=("2^(k-1) neurons (D.7)",),
        reference="Morwani et al. (arXiv:2311.07568), Thm 7.8, proof App. D.7",
        problem_type=SparseParity,
        runner=_verify_parity,
        options=frozenset({"rtol"}),
    ),
    "group": Task(
        name="group",
        dataset="all |G|^2 pairs (a, b), label ab",
        encoding="one-hot per input (k = 2, p = |G|)",
        activation="x^2",
        classes="|G|",
        norm="L_{2,3}",
        closed_form="gamma* = 2 / (3 sqrt(3|G|) sum_{R != 1} d_R^2.5) if sum_R d_R^1.5 chi_R(C) < 0 for all C != e",
        constructions=("2 sum d_R^3 neurons (Lemma D.15)", "class-LP network"),
        reference="Morwani et al. (arXiv:2311.07568), Thm 7.9, App. D.8-D.9",
        problem_type=GroupComposition,
        runner=_verify_group,
        options=frozenset({"rtol"}),
    ),
    "cogo": Task(
        name="cogo",
        dataset="all d^2 pairs (a, b) in Z_d^2, label a+b mod d",
        encoding="one-hot per input (k = 2, p = d)",
        activation="x^2",
        classes="d",
        norm="squared loss on zero-mean outputs (Eq. 1); L_{2,3} for the margin",
        closed_form="zero loss under Lemma 1's 0/1-sets",
        constructions=("F6", "F4", "F46", "memorize"),
        reference="Tian, CoGO (arXiv:2410.01779), Thm 1, Lemma 1, Cor. 2-5",
        problem_type=CoGO,
        runner=_verify_cogo,
        options=frozenset(),
    ),
}
TASK_NAMES: tuple[str, ...] = tuple(TASKS)


def task_for(problem: Problem) -> Task:
    """The :class:`Task` that verifies ``problem``."""
    for task in TASKS.values():
        if isinstance(problem, task.problem_type):
            return task
    raise InputError(f"not a problem object of margintheory.core.problems: {problem!r}")


def verify(problem: Problem, *, network: PolyNetwork | ParityNetwork | None = None, exact: bool = False,
           rtol: float | None = None, fourier_tolerance: float = DEFAULT_SPARSITY_TOL, min_share: float = 0.0,
           max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None,
           family: str = "lemma-c18", certificate: bool = True, exhaustive: bool = False,
           upper_method: str = "am-gm", compact: bool = False) -> VerificationResult:
    """Verify ``problem`` (its construction, or ``network``) and return the result; see :class:`VerifyOptions`."""
    options = VerifyOptions(network=network, exact=exact, rtol=rtol, fourier_tolerance=fourier_tolerance,
                            min_share=min_share, max_memory=max_memory, max_seconds=max_seconds, family=family,
                            certificate=certificate, exhaustive=exhaustive, upper_method=upper_method,
                            compact=compact)
    return task_for(problem).run(problem, options)


def __getattr__(name: str) -> object:  # the 0.1.0 module margintheory.verification's names (deprecated; docs/API.md)
    from margintheory._compat import forwarded_attribute

    return forwarded_attribute(__name__, name)
