"""The condition, the closed form and the class LP of Theorem 7.9 (Morwani et al.), checked on a character table
(docs/theory.md#lemma-d14, #group-lp).

* the condition ``sum_{R != 1} d_R^1.5 chi_R(C) < 0`` for every non-trivial class (informational: it decides
  which statement applies);
* the class LP of :mod:`.group_margin` (primal = dual certifies the max margin over single-irrep blocks);
* the closed form against the LP value (equal when the condition holds, below it otherwise);
* Lemma D.14's class weights (with the corrected sign) as a dual solution;
* the LP's block network evaluated through the characters.
"""

from __future__ import annotations

import numpy as np

from margintheory.core import theory
from margintheory.core.checks import Check, bool_check, close_check
from margintheory.core.representations import Irrep
from margintheory.tasks.groups import margin as gm

LP_REL_TOL = 1e-9


def condition_and_lp_checks(
    X: np.ndarray, order: int, dims: np.ndarray
) -> tuple[list[Check], np.ndarray, bool, float, gm.ClassLP]:
    """The condition, the LP's duality gap and the closed form vs the LP value; also returns the condition
    values, whether it holds, the formula and the LP solution."""
    cond = gm.condition_values(X, dims)
    holds = bool(np.all(cond < 0))
    formula = theory.gamma_star_theorem79(order, dims)
    lp = gm.solve_class_lp(X, order, dims)
    checks = [
        bool_check(
            "condition of Thm 7.9",
            holds,
            exactness="float",
            tolerance=0.0,
            detail=f"values per class {np.round(cond, 6).tolist()} (strict sign, no tolerance)",
            informational=True,
            statement="condition sum_{R!=1} d_R^1.5 chi_R(C) < 0 for every class C != e (Thm 7.9)"),
        Check(name="class LP: primal = dual", expected=0.0, measured=lp.gap / lp.primal, tolerance=LP_REL_TOL,
              passed=abs(lp.gap) <= LP_REL_TOL * lp.primal, exactness="float",
              detail="relative gap; HiGHS optimal on both",
              statement="class LP: primal (block masses) = dual (class weights)"),
        _closed_form_check(holds, formula, lp),
    ]
    return checks, cond, holds, formula, lp


def _closed_form_check(holds: bool, formula: float, lp: gm.ClassLP) -> Check:
    """Thm 7.9's value equals the LP's when the condition holds; otherwise it is strictly below it."""
    if holds:
        return close_check("Thm 7.9 formula = LP", formula, lp.primal, LP_REL_TOL,
        statement="closed form 2/(3 sqrt(3|G|) sum d_R^2.5) = LP max margin")
    return Check(name="Thm 7.9 formula < max margin", expected="< LP value", measured=formula / lp.primal,
                 tolerance=LP_REL_TOL, passed=formula < lp.primal * (1 - LP_REL_TOL), exactness="float",
                 detail=f"formula {formula:.12g}, LP max margin {lp.primal:.12g}, ratio formula/LP "
        f"{formula / lp.primal:.9f}; the formula is still attained by the mu ∝ d^2.5 network",
                 statement="closed form of Thm 7.9 (condition fails): formula < true max margin")


def lemma_d14_checks(
    X: np.ndarray, sizes: np.ndarray, order: int, dims: np.ndarray, formula: float, holds: bool
) -> list[Check]:
    """Lemma D.14's weights ``tau_C = -sum_R z_R chi_R(C)`` sum to 1 and equalize every irrep at the formula;
    when the condition holds they are non-negative, i.e. a valid dual (so the formula is an upper bound)."""
    pi14 = gm.lemma_d14_weights(X, sizes, dims)
    v14 = gm.dual_values(pi14, X, order, dims)
    ok14 = abs(pi14.sum() - 1) <= LP_REL_TOL and float(np.ptp(v14)) <= LP_REL_TOL * formula
    checks = [
        Check(name="Lemma D.14 weights equalize", expected=formula, measured=float(v14.max()), tolerance=LP_REL_TOL,
              passed=bool(ok14 and abs(v14.max() - formula) <= LP_REL_TOL * formula), exactness="float",
              detail=f"sum |C| tau_C = {pi14.sum():.15g}; min |C| tau_C = {pi14.min():.6g} "
                     "(>= 0 iff the condition holds); the statement's sign (+) gives sum -1",
              statement="Lemma D.14 weights (tau_C = -sum z_R chi_R(C)) sum to 1 and equalize every irrep at the "
                        "formula")
    ]
    if holds:
        checks.append(
            Check(name="Lemma D.14 weights >= 0", expected=">= 0", measured=float(pi14.min()), tolerance=0.0,
                  passed=bool(pi14.min() >= 0), exactness="float",
                  statement="Lemma D.14 weights are non-negative (a valid dual: formula is an upper bound)")
        )
    return checks


def lp_network_check(lp: gm.ClassLP, X: np.ndarray, order: int, dims: np.ndarray) -> Check:
    """The margin of the LP's block network, computed from the characters, equals the LP value."""
    lp_margin = float(gm.class_margins(lp.mu, X, order, dims).min())
    return close_check("LP block network margin", lp.primal, lp_margin, LP_REL_TOL,
    statement="LP block network margin (blocks + characters) = LP value")


def theorem79_fields(
    irreps: list[Irrep], X: np.ndarray, order: int, cond: np.ndarray, holds: bool, formula: float, lp: gm.ClassLP
) -> dict:
    """The values behind the checks above (JSON fields of the group task)."""
    dims = np.array([R.dim for R in irreps])
    return {
        "condition_values": cond.tolist(),
        "condition_holds": holds,
        "gamma_star_formula": formula,
        "gamma_star_lp": lp.primal,
        "lp_dual": lp.dual,
        "lp_block_masses": lp.mu.tolist(),
        "lp_class_weights": lp.pi.tolist(),
        "theorem_width": theory.theorem79_width(dims),
        "irreps_used_by_lp": [irreps[r].name for r in np.flatnonzero(lp.mu > 1e-9)],
        "irreps_tight_under_dual": [irreps[r].name for r in gm.tight_irreps(lp, X, order, dims)],
    }
