"""The ``cogo`` task: CoGO's zero-loss constructions (Tian, arXiv:2410.01779), tied to the max margin.

Theory: docs/theory.md#cogo.

Per construction: real weights (Hermitian ``z``), order (number of nodes) vs the paper, Theorem 1's loss
formula vs a direct forward pass, the 0/1-sets of Lemma 1 (``R_g`` = 1; ``R_c``, ``R_n``, ``R_*`` = 0), the
loss; where the paper's literal formula does not give zero loss, the computed loss and the corrected
construction; then the ``L_{2,3}``-normalized margin against ``gamma*(d, 2)`` and the core max-margin checks
(informational: neither paper claims a relation).  Every run also checks the algebra on seeded random weights
(Theorem 1, Theorem 3) and Table 1 (its stated potentials and the order of Theorem 4's maximal polynomial), and the
paper's other statements (:func:`paper_statement_checks`: Theorems 2, 5, 6, 7, Observation 2, Lemmas 2 and 4,
Corollary 1, and the slips of the text).

This module builds the constructions and wires the checks of :mod:`.cogo_lemma1_checks` (Lemma 1, the loss),
:mod:`.cogo_margin` (the max margin) and :mod:`.cogo_algebra_checks` (Theorems 1, 3, 4 and Table 1).
"""

from __future__ import annotations

import cmath

import numpy as np

from margintheory.core.checks import Check, VerificationResult
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import CoGO
from margintheory.engines.margins import DEFAULT_MAX_MEMORY
from margintheory.errors import InputError
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import forward_loss, from_network, theorem1_loss
from margintheory.tasks.cogo.algebra_checks import algebra_checks, theorem1_loss_check
from margintheory.tasks.cogo.dynamics_checks import dynamics_checks
from margintheory.tasks.cogo.errata_checks import errata_checks
from margintheory.tasks.cogo.lemma1_checks import SET_LABELS, SET_SHORT, ZERO_TOL, construction_checks, potential_sets
from margintheory.tasks.cogo.margin import margin_connection
from margintheory.tasks.cogo.semiring_checks import (
    algebra_statement_checks,
    corollary1_checks,
    lemma2_checks,
    lemma4_check,
)
from margintheory.tasks.modular_addition.checks import verify_network

MAX_D = 64


def build(name: str, d: int, variant: str, nu: complex, xi: complex, k0: int) -> cc.Construction:
    if name == "F6":
        return cc.build_f6(d, nu, variant)
    if name == "F4":
        return cc.build_f4(d, xi)
    if name == "F46":
        return cc.build_f46(d, k0, xi, variant)
    if name == "memorize":
        return cc.build_memorization(d)
    raise InputError(f"unknown CoGO construction {name!r}; choose from {', '.join(cc.CONSTRUCTIONS)}")


def verify_cogo(
    problem: CoGO | str,
    d: int | None = None,
    *,
    nu_angle: float = 0.0,
    xi_angle: float = 0.0,
    k0: int = 1,
    max_memory: int = DEFAULT_MAX_MEMORY,
    max_seconds: float | None = None,
) -> VerificationResult:
    """All checks of the module docstring for the problem's construction (a :class:`~margintheory.core.problems.CoGO`,
    validated when it was made), or for construction ``problem`` at ``d`` (``nu = e^{i nu_angle}``, ...)."""
    if not isinstance(problem, CoGO):
        problem = CoGO(d, problem, nu_angle=nu_angle, xi_angle=xi_angle, k0=k0)  # type: ignore[arg-type]
    if problem.construction is None:
        raise InputError("a CoGO verification needs a construction (F6, F4, F46, memorize) or a network")
    name, d, k0 = problem.construction, problem.d, problem.k0
    nu, xi = cmath.exp(1j * problem.nu_angle), cmath.exp(1j * problem.xi_angle)
    result = VerificationResult(
        f"CoGO construction {name} (d = {d})",
        fields={"construction": name, "d": d, "nu": nu, "xi": xi, "k0": k0},
    )
    result.task, result.parameters = problem.task, problem.parameters()
    paper = build(name, d, "paper", nu, xi, k0)
    checks, fields = construction_checks(paper)
    result.checks += checks
    result.fields["paper"] = fields
    best = paper
    if name == "F4":
        result.notes.append(
            f"F4 alone is not a global optimizer (Corollary 4: R_n is not a 0-set): {fields['why']}; "
            "Corollary 5 cancels the R_n sums with biased order-6 nodes (F46).")
    if name in ("F6", "F46") and fields["loss"] > ZERO_TOL:
        fixed = build(name, d, "corrected", nu, xi, k0)
        c2, f2 = construction_checks(fixed, informational=True)
        result.checks += c2
        result.fields["corrected"] = f2
        best = fixed
        result.notes.append(
            f"{name}: the paper's formula gives loss {fields['loss']:.12g}, not 0 ({fields['why']}); corrected "
            f"construction ({f2['formula']}) has loss {f2['loss']:.3g}.")
    # a refusal (RefusedError: over --max-memory or --max-seconds) propagates, as every task's does
    mc, mf, notes = margin_connection(best, max_memory, max_seconds)
    result.checks += mc
    result.fields.update(mf)
    result.notes += notes
    if mf["gamma_star"]:
        result.notes.append(
            f"{name} ({best.variant}): normalized margin {mf['normalized_margin']:.12g} = "
            f"{mf['ratio_to_gamma_star']:.12g} x gamma*(d={d}, k=2); core verdict "
            f"{mf['core_verdict']}."
        )
    ac, af = algebra_checks(d)
    result.checks += ac
    result.fields.update(af)
    result.checks += paper_statement_checks(d, max_memory, max_seconds)
    return result


def paper_statement_checks(d: int, max_memory: float | None = DEFAULT_MAX_MEMORY,
                           max_seconds: float | None = None) -> list[Check]:
    """The remaining statements of the paper, each a row (docs/theory.md#cogo-statements): Theorem 2 and
    Observation 2, Lemma 2 (part 2 false as printed), Corollary 1, Lemma 4, Theorems 5-7 at ``d`` (Theorems 5 and 7
    within the budgets, else a refused row), and the slips of the text (informational)."""
    return (algebra_statement_checks(d) + lemma2_checks(d) + corollary1_checks(d) + [lemma4_check(d)]
            + dynamics_checks(d, max_memory, max_seconds) + errata_checks(d))


def verify_cogo_network(
    net: PolyNetwork, *, max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None
) -> VerificationResult:
    """A given quadratic network on ``Z_d``: Theorem 1 vs forward pass, Lemma 1's sets, loss, margin."""
    if net.k != 2:
        raise InputError(f"CoGO networks have k = 2 inputs; got k = {net.k}")
    z = from_network(net)
    d = net.p
    mean = float(np.abs(z.z[:2, 0, :]).max())
    result = VerificationResult(f"CoGO network check (d = {d}, q = {net.m})", fields={"d": d, "order": net.m},
                                task="cogo", parameters={"d": d, "construction": None})
    lt, fl = theorem1_loss(z).total, forward_loss(net)
    result.add(theorem1_loss_check(lt, fl, f"input-weight means (z[a,0], z[b,0]) max {mean:.3e}; Theorem 1 assumes 0",
                                   informational=mean > ZERO_TOL, statement="Theorem 1 loss = forward-pass loss"))
    sets = potential_sets(z)
    for key in ("R_g", "R_c", "R_n", "R_*", "R_n_summed"):
        result.add(
            Check(name=SET_SHORT[key], expected=0.0, measured=sets[key], tolerance=ZERO_TOL,
                  passed=sets[key] <= ZERO_TOL, exactness="float", informational=True,
                  detail="max deviation from the set's condition (0 when it holds)", statement=SET_LABELS[key])
        )
    # the claim about a given network: it is a global optimizer of Theorem 1's loss (loss 0), as the constructions are
    result.add(Check(name="loss = 0", expected=0.0, measured=fl, tolerance=ZERO_TOL, passed=fl <= ZERO_TOL,
                     exactness="float", detail="forward-pass loss of the network (Theorem 1's objective)",
                     statement="the network is a global optimizer: its loss is 0 (Theorem 1)"))
    result.fields.update(loss=fl, loss_theorem1=lt, potential_deviations=sets)
    core = verify_network(net, d, 2, max_memory=max_memory, max_seconds=max_seconds)
    result.checks += [
        c.reported("core: ")
        for c in core.checks
    ]
    result.fields.update(normalized_margin=None if core.margin is None else core.margin.value,
                         core_verdict=core.verdict)
    return result
