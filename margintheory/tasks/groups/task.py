"""The ``group`` task: composition ``(a, b) -> ab`` on ``S_n`` and ``C_n`` (Morwani et al. Thm 7.9, App. D.8-D.9).

Verifies, on the computed representations, the hypotheses and every claim of Theorem 7.9 and reports, for a
group where the condition fails (``S_6``), the true max margin from the class LP of :mod:`.group_margin` next
to the formula.  This module wires the checks of :mod:`.group_representation_checks` (the irreps),
:mod:`.group_condition_checks` (condition, closed form, class LP) and :mod:`.group_construction_checks` (the
networks) into one result.  Cyclic groups have irreps of complex type, outside Theorem 7.9; for them the task
checks that the same path (core network, group-table labels) reproduces modular addition at ``k = 2``.
"""

from __future__ import annotations

import numpy as np

from margintheory.certificate.interval import TaskUpperBound, attach_interval, upper_at_most_check
from margintheory.core import theory
from margintheory.core.checks import Check, MarginMeasurement, VerificationResult, close_check
from margintheory.core.construction import build_construction
from margintheory.core.groups import FiniteGroup
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import GroupComposition
from margintheory.core.representations import Irrep, character_table, frobenius_schur_indicator, real_irreps
from margintheory.engines.margins import DEFAULT_MAX_MEMORY, EPS, exhaustive_margin
from margintheory.errors import InputError
from margintheory.tasks.groups import condition_checks as cond_checks
from margintheory.tasks.groups import construction_checks as net_checks
from margintheory.tasks.groups import fourier_checks, recipe_d92
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.groups.representation_checks import REP_TOL, representation_checks
from margintheory.tasks.groups.upper_bound import (
    cyclic_gamma_check,
    cyclic_upper_bound,
    formula_below_upper_check,
    real_group_upper_bound,
)
from margintheory.tasks.modular_addition.checks import margin_checks


def theorem79_checks(
    G: FiniteGroup,
    irreps: list[Irrep],
    max_memory: int,
    max_seconds: float | None,
) -> tuple[list[Check], dict, gm.ClassLP, TaskUpperBound]:
    """Condition, closed form, class LP and its exactly checked dual ``U``, Lemma D.15 blocks, the Theorem 7.9
    network, and Lemma D.11 / App. D.9.1 / App. D.9.2 for a real-type group."""
    dims = np.array([R.dim for R in irreps])
    X = character_table(G, irreps)
    checks, cond, holds, formula, lp = cond_checks.condition_and_lp_checks(X, G.order, dims)
    ub = real_group_upper_bound(G, irreps, lp.pi)
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    checks += cond_checks.lemma_d14_checks(X, sizes, G.order, dims, formula, holds)
    checks.append(cond_checks.lp_network_check(lp, X, G.order, dims))
    network, net = net_checks.theorem79_network_checks(irreps, X, G.order, formula)
    best = net if holds else gm.mixture_network(irreps, lp.mu)
    # the exhaustive pass first: a budget refusal comes before the Lemma D.15 block identities (3 s for S6)
    exhaustive, efields = net_checks.exhaustive_checks(G, irreps, best, lp, holds, X, max_memory, max_seconds, ub)
    blocks, bfields = net_checks.block_checks(G, irreps)
    measured = None if holds else (lp.mu, efields["construction_normalized_margin"],
                                   efields["construction_margin_tolerance"])
    checks += blocks + network + exhaustive + appendix_d9_checks(G, irreps, X, lp, max_memory, max_seconds, measured)
    fields = cond_checks.theorem79_fields(irreps, X, G.order, cond, holds, formula, lp)
    fields.update(bfields)
    fields.update(efields)
    return checks, fields, lp, ub


def appendix_d9_checks(G: FiniteGroup, irreps: list[Irrep], X: np.ndarray, lp: gm.ClassLP,
                       max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None,
                       measured: tuple[np.ndarray, float, float] | None = None) -> list[Check]:
    """Lemma D.11 on random neurons, the identity of App. D.9.1 and the recipe of App. D.9.2 against the LP.
    ``measured``: the block masses, margin and error bound of a block network already measured on all inputs (the
    exhaustive pass), reused when the recipe's network is that one."""
    dims = np.array([R.dim for R in irreps])
    rows = [fourier_checks.lemma_d11_check(G, irreps, X), fourier_checks.d91_check(G, irreps)]
    try:
        search = recipe_d92.search_recipe(X, dims, G.order, lp)
    except ValueError as exc:  # too many subset pairs (e.g. D_60: 33 irreps): the recipe is not searched
        rows.append(Check(name="D.9.2 recipe = LP", expected=lp.primal, measured=None, tolerance=None, passed=True,
                          exactness="float", informational=True, detail=f"not searched: {exc}",
                          statement="App. D.9.2: a choice of kappa_R, kappa_C meeting the three conditions"))
        return rows

    def network_margin(mu: np.ndarray) -> tuple[float, float, str]:
        if measured is not None and np.allclose(mu, measured[0], rtol=0.0, atol=1e-12):
            return measured[1], measured[2], "on all |G|^2 inputs (the same network as the exhaustive pass)"
        return block_network_margin(G, irreps, mu, max_memory, max_seconds)

    return rows + recipe_d92.recipe_checks(search, lp, [R.name for R in irreps], network_margin,
                                           None if measured is None else measured[0])


def block_network_margin(G: FiniteGroup, irreps: list[Irrep], mu: np.ndarray, max_memory: int = DEFAULT_MAX_MEMORY,
                         max_seconds: float | None = None) -> tuple[float, float, str]:
    """The normalized margin (and its error bound) of Lemma D.15's blocks with masses ``mu``
    (:func:`~margintheory.tasks.groups.margin.mixture_network`), measured on all ``|G|^2`` inputs."""
    res = exhaustive_margin(gm.mixture_network(irreps, mu), max_memory, labels=G.product_labels(),
                            max_seconds=max_seconds)
    return res.normalized_margin, res.normalized_tolerance, "on all |G|^2 inputs"


def attach_group_interval(result: VerificationResult, G: FiniteGroup, ub: TaskUpperBound, margin: float,
                          error_bound: float, how: str) -> None:
    """``[L, U]`` of the max margin: ``L`` the checked network's margin (float64, all ``|G|^2`` inputs, minus its
    error bound), ``U`` computed (:mod:`.upper_bound`); the closed form, where one applies, as the third column.  Where
    Theorem 7.9's condition fails (or ``|C_n|`` is even) the verdict is not-applicable and the interval is the true
    max margin's."""
    result.set_margin(MarginMeasurement(value=float(margin), error_bound=float(error_bound), exactness="float",
                                        method="exhaustive", how=how))
    f = result.fields
    gamma_row: Check | None
    if "condition_holds" in f:
        applicable = bool(f["condition_holds"])
        dims = [row[0] for row in ub.details["character_table"]]  # chi_R(e) = d_R, exact
        gamma = f["gamma_star_formula"] if applicable else None
        gamma_row = formula_below_upper_check(dims, G.order, ub) if applicable else None
    else:
        applicable = G.order % 2 == 1
        gamma = theory.gamma_star(G.order, 2) if applicable else None
        gamma_row = cyclic_gamma_check(G.order, ub)
    if not applicable:
        result.applicable = False
    attach_interval(result, ub, gamma=gamma, gamma_below_upper=gamma_row, applicable=applicable, rtol=None)


def cyclic_checks(G: FiniteGroup, max_memory: int, max_seconds: float | None) -> tuple[list[Check], dict]:
    """``C_n`` through the group path = modular addition at ``k = 2``: the core construction with the
    group-table labels has the same margins as with the modular-addition labels, and (odd ``n``) equals
    ``gamma*(n, 2)``."""
    n = G.order
    if n < 3:
        raise InputError("the cyclic-group check needs n >= 3")
    net = build_construction(n, 2)
    via_group = exhaustive_margin(net, max_memory, labels=G.product_labels(), max_seconds=max_seconds)
    via_sum = exhaustive_margin(net, max_memory, max_seconds=max_seconds)
    diff = float(np.abs(via_group.margins - via_sum.margins).max())
    checks = [
        Check(name="labels = modular addition", expected=0.0, measured=diff, tolerance=0.0, passed=diff == 0.0,
              exactness="proved", detail="max |margin difference| between the two label paths",
              statement="group-table labels = modular-addition labels (C_n = Z_n)")
    ]
    fields = {
        "modular_addition_margin": via_sum.normalized_margin,
        "group_path_margin": via_group.normalized_margin,
        "group_path_margin_tolerance": via_group.normalized_tolerance,
    }
    if n % 2 == 1:
        g = theory.gamma_star(n, 2)
        tol = via_group.normalized_tolerance + 4 * EPS * g
        checks.append(
            close_check(
                "group-path margin (7.7)",
                g,
                via_group.normalized_margin,
                tol / g,
                statement="group-path margin of the Lemma C.18 network = gamma*(n, 2) (Morwani et al. Thm 7.7)")
        )
        fields["gamma_star_modular"] = g
    return checks, fields


def require_irreps_budget(G: FiniteGroup, max_memory: int, max_seconds: float | None) -> None:
    """Refuse up front (:class:`~margintheory.errors.RefusedError`) a group whose irreps would not fit the budget."""
    from margintheory.core.representations import estimate_regular_irreps, needs_regular_irreps
    from margintheory.runtime.budget import require

    if needs_regular_irreps(G):
        require(estimate_regular_irreps(G.order), max_memory, max_seconds)


def verify_group(
    G: FiniteGroup, *, max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None
) -> VerificationResult:
    """All checks of the module docstring for the constructions of ``G``, and the max margin as ``[L, U]``."""
    require_irreps_budget(G, max_memory, max_seconds)
    irreps = real_irreps(G)
    result = VerificationResult(f"group composition on {G.name} (|G| = {G.order}; Morwani et al. Thm 7.9)",
                                task="group", parameters={"group": G.name, "order": G.order})
    checks, fields = representation_checks(G, irreps)
    result.checks += checks
    result.fields.update(fields)
    if fields["all_irreps_real_type"]:
        checks, f2, lp, ub = theorem79_checks(G, irreps, max_memory, max_seconds)
        result.checks += checks
        result.fields.update(f2)
        which = "Theorem 7.9's network" if f2["condition_holds"] else "the class LP's block network"
        attach_group_interval(result, G, ub, f2["construction_normalized_margin"],
                              f2["construction_margin_tolerance"], f"float64 margin of {which} on all |G|^2 = "
                              f"{G.order**2} inputs (exhaustive engine), minus its a-priori error bound")
        if not f2["condition_holds"]:
            result.notes.append(_condition_fails_note(G, f2, result))
    elif G.family != "cyclic":
        kinds = sorted({"complex" if abs(f) < 0.5 else "quaternionic" for f in fields["frobenius_schur"]
                        if abs(f - 1) >= 0.5})
        result.applicable = False
        result.notes.append(
            f"{G.name} has irreps of {' and '.join(kinds)} type (Frobenius-Schur indicators "
            f"{sorted(set(round(f) for f in fields['frobenius_schur']))}): Theorem 7.9 assumes every irrep of real "
            "type, so it does not apply (verdict not-applicable). The max margin of such a group is not computed: the "
            "package has no proved upper end U for irreps of complex or quaternionic type, and reports none rather "
            "than one it cannot re-check. The irreps above are computed and checked (types, orthogonality, "
            "completeness).")
    else:
        result.notes.append(
            f"{G.name} has irreps of complex type: Theorem 7.9 does not apply; checked instead that "
            "the group path reproduces modular addition (k = 2)."
        )
        checks, f2 = cyclic_checks(G, max_memory, max_seconds)
        result.checks += checks
        result.fields.update(f2)
        if G.order % 2 == 0:
            attach_even_cyclic_max_margin(result, G, f2, max_memory, max_seconds)
            return result
        ub = cyclic_upper_bound(G.order, max_memory)
        result.add(upper_at_most_check(f2["group_path_margin"], f2["group_path_margin_tolerance"], ub,
                                       "group-path margin <= U, modular addition's proved bound at k = 2"))
        attach_group_interval(result, G, ub, f2["group_path_margin"], f2["group_path_margin_tolerance"],
                              f"float64 margin of Lemma C.18's network (k = 2) with the group-table labels on all "
                              f"{G.order**2} inputs, minus its a-priori error bound")
    return result


def attach_even_cyclic_max_margin(result: VerificationResult, G: FiniteGroup, f2: dict, max_memory: int,
                                  max_seconds: float | None) -> None:
    """``|C_n|`` even: no closed form applies (the papers assume odd ``n``), so the verdict is not-applicable, and
    the true max margin is still bracketed with both ends.  ``C_n`` is ``Z_n`` (the isomorphism relabels inputs and
    classes alike, so every network's margin is kept), so its max margin is modular addition's at ``(p, k) = (n, 2)``:
    ``L`` from the network of optimal frequency weights, ``U`` proved from the optimal translation-invariant dual
    (:mod:`margintheory.solvers.even_p`, docs/theory.md#even-p-max-margin).  The group path's own margin (Lemma
    C.18's network with the group-table labels) is the checked network, compared with ``U``."""
    from margintheory.core.problems import ModularAddition
    from margintheory.runtime.budget import require
    from margintheory.solvers.even_p import attach_even_p, estimate_even_p

    problem = ModularAddition(G.order, 2)
    require(estimate_even_p(problem, max_memory), max_memory, max_seconds)
    result.set_margin(MarginMeasurement(
        value=float(f2["group_path_margin"]), error_bound=float(f2["group_path_margin_tolerance"]),
        exactness="float", method="exhaustive",
        how=f"float64 margin of Lemma C.18's network (k = 2) with the group-table labels on all {G.order**2} "
            "inputs, minus its a-priori error bound"))
    result.applicable = False
    attach_even_p(result, problem, max_memory=max_memory)
    result.notes[-1] = (f"|{G.name}| = {G.order} is even: gamma*(n, 2) does not apply (the papers assume odd n), so "
                        "the verdict is not-applicable; C_n = Z_n, so the true max margin is modular addition's at "
                        f"(p, k) = ({G.order}, 2): L from the best network found, U from the optimal "
                        "translation-invariant dual (proved); the gap row decides the exit code")


def _condition_fails_note(G: FiniteGroup, f2: dict, result: VerificationResult) -> str:
    cert = result.certificate or {}
    return (f"{G.name}: the condition of Thm 7.9 fails for some class, so the theorem does not apply (verdict "
            f"not-applicable) and its closed form {f2['gamma_star_formula']:.12g} is only a lower bound. The true max "
            f"margin lies in [L, U] = [{cert.get('lower', float('nan')):.15g}, {cert.get('upper', float('nan')):.15g}] "
            f"(relative gap {cert.get('relative_gap', float('nan')):.2e}): L the margin of the class LP's network "
            f"(irreps {f2['irreps_used_by_lp']}), U the LP's dual checked exactly (Lemma D.13 bound); formula/max "
            f"margin = {f2['gamma_star_formula'] / f2['gamma_star_lp']:.9f}; any max-margin network uses only irreps "
            f"in {f2['irreps_tight_under_dual']} (tight under the optimal class weights; cf. App. D.9.2).")


def verify_group_network(
    G: FiniteGroup,
    net: PolyNetwork,
    *,
    max_memory: int = DEFAULT_MAX_MEMORY,
    max_seconds: float | None = None,
    rtol: float | None = None,
) -> VerificationResult:
    """A given network (core ``.npz``, ``k = 2``, ``p = |G|``, elements in :mod:`.groups` order) against the
    max margin of ``G`` (LP value for real-type groups, ``gamma*(n, 2)`` for odd cyclic groups) and the computed
    upper end ``U``; the max margin as ``[L, U]`` with ``L`` this network's margin."""
    if net.k != 2 or net.p != G.order:
        raise InputError(f"a network for {G.name} needs k=2 and p={G.order}; got k={net.k}, p={net.p}")
    require_irreps_budget(G, max_memory, max_seconds)
    irreps = real_irreps(G)
    result = VerificationResult(f"network check on {G.name} (m = {net.m})", task="group",
                                parameters={"group": G.name, "order": G.order})
    res = exhaustive_margin(net.normalized(), max_memory, labels=G.product_labels(), max_seconds=max_seconds)
    real = all(abs(frobenius_schur_indicator(G, R) - 1) < REP_TOL for R in irreps)
    gamma: float | None
    if real:
        dims = np.array([R.dim for R in irreps])
        X = character_table(G, irreps)
        lp = gm.solve_class_lp(X, G.order, dims)
        gamma, holds = lp.primal, bool(np.all(gm.condition_values(X, dims) < 0))
        result.fields.update(gamma_star_lp=lp.primal, condition_holds=holds,
                             gamma_star_formula=theory.gamma_star_theorem79(G.order, dims))
        result.checks += net_checks.single_irrep_checks(net, irreps, np.arange(1, len(irreps)) if holds else None)[0]
        ub = real_group_upper_bound(G, irreps, lp.pi)
    else:
        gamma = theory.gamma_star(G.order, 2) if G.order % 2 else None
        ub = cyclic_upper_bound(G.order, max_memory)
    mc, mf = margin_checks(res, gamma, rtol)
    result.checks += net_checks.with_upper_row([net_checks.relabel(c) for c in mc], res.normalized_margin,
                                               res.normalized_tolerance, ub)
    result.fields.update(mf)
    attach_group_interval(result, G, ub, res.normalized_margin, res.normalized_tolerance,
                          f"float64 margin of the given network on all {G.order**2} inputs, minus its a-priori error "
                          "bound")
    return result


def group_common_fields(problem: GroupComposition, result: VerificationResult, *, construction: bool) -> None:
    """The group task's own names mapped onto the common fields.

    ``gamma_star`` is Theorem 7.9's closed form where its hypotheses hold (real-type irreps and the class
    condition), ``gamma*(n, 2)`` of modular addition for odd cyclic groups, else ``None`` (the class-LP max margin
    stays in ``details.gamma_star_lp``).  The margin checks of a group are made against the LP value; their ratio
    and error move to ``details`` under ``*_to_max_margin`` names.
    """
    f = result.fields
    for key in ("ratio_to_gamma_star", "relative_error"):
        if key in f:
            f[key + "_to_max_margin"] = f.pop(key)
    name, order = problem.group, problem.order
    if "condition_holds" in f:  # real-type irreps: Theorem 7.9's setting
        holds = bool(f["condition_holds"])
        if holds:
            f["gamma_star"] = problem.theorem79_formula
            f["gamma_star_note"] = ("Theorem 7.9 (Morwani et al.): 2 / (3 sqrt(3|G|) sum_{R != 1} d_R^2.5); its "
                                    "condition holds and the class LP agrees")
        else:
            f["gamma_star"] = None
            f["gamma_star_note"] = (f"the condition of Theorem 7.9 fails for {name}: no closed form (verdict "
                                    "not-applicable); the true max margin is the certificate's [L, U] (the class-LP "
                                    "network's margin and the exactly checked dual; details.gamma_star_lp is the LP)")
    elif problem.G.family != "cyclic":
        f["gamma_star"] = None
        f["gamma_star_note"] = (f"{name} has irreps of complex or quaternionic type: Theorem 7.9 does not apply and no "
                                "closed form is known; the max margin is not computed")
    elif order % 2:
        f["gamma_star"] = theory.gamma_star(order, 2)
        f["gamma_star_note"] = (f"{name} = Z_{order}: modular addition's gamma*(p = {order}, k = 2) (Theorem C.22); "
                                "irreps of complex type are outside Theorem 7.9")
    else:
        f["gamma_star"] = None
        f["gamma_star_note"] = f"{name} has even order and irreps of complex type: no closed form applies"
    if construction:
        if "construction_normalized_margin" in f:
            f["normalized_margin"] = f["construction_normalized_margin"]
            f["width"] = f.get("construction_width")
        elif "group_path_margin" in f:
            f["normalized_margin"] = f["group_path_margin"]
            f["width"] = theory.construction_width(order, 2)
