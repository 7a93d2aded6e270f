"""The verdict code of ``verify`` pinned so that a weakened verdict fails: the lower end ``L`` (a float ``L`` is the
measured margin minus its error bound and is never labelled ``proved``), the rows that compare ``U`` with ``gamma*``
(squares compared exactly: a ``U`` below ``gamma*`` fails) and the gap ``(U - L)/L`` (its tolerance at its exact
boundary), the ``certificate`` object, and the margin engine's tolerances (:mod:`margintheory.engines.margins`,
:func:`margintheory.tasks.modular_addition.checks.margin_checks`).  Everything is built by hand (no solver, no
exhaustive
pass over
a large grid), so the module runs in about a second; it is the test selection of the mutation gate's ``verdict``
area (``tools/mutation.sh verdict``)."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from margintheory.certificate import checker, maxmin
from margintheory.certificate.maxmin import GAP_TOL, GAP_TOL_EXACT, LowerBound
from margintheory.certificate.upper_bound import HOMOGENEITY, WEAK_DUALITY, ProofStep, ProvedUpperBound, ceil_float
from margintheory.core.checks import MarginMeasurement, VerificationResult
from margintheory.core.margin_claims import (
    EQUALITY_RTOL,
    claim_tolerance,
    decide_at_most,
    decide_within,
    margin_equals,
    within_of_margin,
)
from margintheory.core.network import PolyNetwork
from margintheory.engines import margins
from margintheory.errors import InputError
from margintheory.tasks.modular_addition.checks import margin_checks

F = Fraction
EPS = float(np.finfo(float).eps)
GAMMA_5_2 = sp.sqrt(30) / 180  # gamma* for (p, k) = (5, 2)
U_5_2 = F(71848517986748754709, 2361183241434822606848)  # U of the committed p5k2 certificate
B_5_2 = F(6933745219290209, 36028797018963968)
UF = ceil_float(U_5_2)  # U rounded up to a float


def upper_bound(p=5, k=2, U=U_5_2, exact_ran=True, matches=True, lemma_passed=True) -> ProvedUpperBound:
    """A :class:`ProvedUpperBound` as :func:`prove_upper_bound` makes it (steps, constants), with ``U`` chosen."""
    steps = [ProofStep(WEAK_DUALITY[0], "argued", True, WEAK_DUALITY[1]),
             ProofStep("Lemma C.14 and the block closed form F = sum_b c_b g_k(zeta_b), for all p (sympy)", "proved",
                       lemma_passed, "11 steps"),
             ProofStep(HOMOGENEITY[0], "argued", True, HOMOGENEITY[1]),
             ProofStep("SOS certificate: max_{|z|=1} g_k <= B (exact identity, exact LDL^T of every Gram block)",
                       "proved", True, f"B = {B_5_2}"),
             ProofStep("U >= c_b B for every frequency block (exact rationals, squares compared)", "proved", True,
                       f"U = {U}")]
    check = ({"ran": True, "matches": matches, "monomials_compared": 125} if exact_ran
             else {"ran": False, "reason": "too large"})
    return ProvedUpperBound(p, k, U, B_5_2, checker.block_constants_squared(p, k), None, steps,  # type: ignore[arg-type]
                            {"name": "Clarabel", "status": "Solved", "iterations": 9, "kkt": {"gap": 1e-9}}, 1.5,
                            check)


def measured(value: float, error: float = 0.0, exact: str | None = None, how: str = "by hand") -> VerificationResult:
    """A result that carries only a typed margin (``float``, or ``proved`` with ``exact``)."""
    result = VerificationResult("t")
    result.set_margin(MarginMeasurement(value=value, error_bound=error, exactness="proved" if exact else "float",
                                        method="exhaustive", how=how, exact=exact))
    return result


def float_L(value=0.03, error=1e-12) -> LowerBound:
    return maxmin.lower_bound_from(measured(value, error))


# -- L ------------------------------------------------------------------------------------------------------------


def test_a_float_lower_end_subtracts_its_error_bound_and_is_labelled_float():
    L = float_L(0.5, 1e-6)
    assert L.exactness == "float" and L.exact is None and L.error_bound == 1e-6
    assert L.value < 0.5 - 1e-6 and L.value == math.nextafter(0.5 - 1e-6, -math.inf)
    assert L.how == "normalized margin of the network in float64 minus its a-priori error bound 1.00e-06; by hand"
    assert L.text() == str(F(L.value)) and L.rational() is None and L.exact_square is None
    bare = maxmin.lower_bound_from(measured(0.25))
    assert bare.value == math.nextafter(0.25, -math.inf) and bare.error_bound == 0.0 and bare.exactness == "float"
    assert maxmin.lower_bound_from(VerificationResult("t", fields={"width": 3})) is None


def test_an_exact_lower_end_is_proved_and_rounded_down():
    how = "normalized margin of the network, computed exactly in the cyclotomic field"
    third = maxmin.lower_bound_from(measured(1 / 3, exact="1/3", how=how))
    assert third.exactness == "proved" and third.exact == sp.Rational(1, 3) and third.error_bound == 0.0
    assert F(third.value) < F(1, 3) < F(math.nextafter(third.value, 1))  # the largest float <= 1/3
    assert third.how == how
    assert third.text() == "1/3" and third.rational() == "1/3" and third.exact_square == F(1, 9)
    quarter = maxmin.lower_bound_from(measured(0.25, exact="1/4"))
    assert quarter.value == 0.25  # exactly representable: not lowered
    root = maxmin.lower_bound_from(measured(0.03, exact=str(GAMMA_5_2)))
    assert root.exactness == "proved" and root.value == math.nextafter(float(sp.N(GAMMA_5_2, 40)), -math.inf)
    assert root.text() == "sqrt(1/1080)" and root.rational() is None and root.exact_square == F(1, 1080)
    negative = LowerBound(-0.1, -sp.sqrt(2), "proved", "")
    assert negative.text() == str(F(-0.1))  # no "sqrt(...)" for a negative value
    assert LowerBound(0.1, sp.pi / 30, "proved", "").text() == str(F(0.1))  # square not rational


# -- the gap ------------------------------------------------------------------------------------------------------


def test_relative_gap_exact_is_decided_on_squares_at_its_boundary():
    L = LowerBound(0.03, sp.Rational(3, 100), "proved", "")
    at = F(3, 100) * (1 + GAP_TOL_EXACT)
    gap, within, exact = maxmin.relative_gap(at, L)
    assert within and exact and gap == pytest.approx(1e-9, rel=1e-6, abs=0)
    gap, within, exact = maxmin.relative_gap(at + F(1, 10**30), L)
    assert not within and exact
    gap, within, exact = maxmin.relative_gap(F(6, 100), L)
    assert gap == pytest.approx(1.0, rel=1e-15, abs=0) and not within


def test_relative_gap_float_and_its_boundary():
    L = LowerBound(0.06250122641660028, None, "float", "")  # a pair whose float gap is exactly 1e-9
    U = F(0.0625012264791015)
    gap, within, exact = maxmin.relative_gap(U, L)
    assert gap == GAP_TOL and within and not exact
    gap, within, _ = maxmin.relative_gap(F(math.nextafter(0.0625012264791015, 1)), L)
    assert gap > GAP_TOL and not within
    assert maxmin.relative_gap(F(1), LowerBound(0.0, None, "float", "")) == (math.inf, False, False)
    assert maxmin.relative_gap(F(1), LowerBound(-1e-3, None, "float", "")) == (math.inf, False, False)
    zero_exact = LowerBound(0.0, sp.Integer(0), "proved", "")  # L^2 = 0: decided by the float branch
    assert maxmin.relative_gap(F(1), zero_exact) == (math.inf, False, False)


def test_gap_upper_rational_rounds_up_to_three_digits():
    def exact(x):
        return LowerBound(float(x), sp.Rational(x.numerator, x.denominator), "proved", "")

    assert maxmin.gap_upper_rational(F(2), exact(F(1))) == 1
    assert maxmin.gap_upper_rational(F(3, 2), exact(F(1))) == F(1, 2)
    assert maxmin.gap_upper_rational(F(4, 3), exact(F(1))) == F(334, 1000)
    assert maxmin.gap_upper_rational(F(1234567), exact(F(1))) == 1240000  # 1234566 -> 124 * 10^4
    assert maxmin.gap_upper_rational(F(1), exact(F(1))) == 0
    assert maxmin.gap_upper_rational(F(1, 2), exact(F(1))) == 0
    # a gap too small for float64: (1 + g)^2 >= (U/L)^2 is reached by doubling from 10^-15
    assert maxmin.gap_upper_rational(F(1) + F(1, 10**20), exact(F(1))) == F(1, 10**15)
    # float64 rounds g = 3e-15 down to 2.89e-15 (not enough): doubled once
    assert maxmin.gap_upper_rational(F(1) + F(3, 10**15), exact(F(1))) == F(289, 5 * 10**16)
    for U, L in ((U_5_2, exact(F(3, 100))), (F(7, 3), exact(F(2)))):
        g = maxmin.gap_upper_rational(U, L)
        assert (1 + g) ** 2 * L.exact_square >= U * U and (g * 10**20).denominator == 1
    f = LowerBound(0.5, None, "float", "")  # a float L: its value is the rational it holds
    assert maxmin.gap_upper_rational(F(1), f) == 1
    assert maxmin.gap_upper_rational(F(1), LowerBound(0.0, None, "float", "")) is None
    assert maxmin.gap_upper_rational(F(1), LowerBound(0.1, sp.pi, "proved", "")) is None


# -- the rows of the verdict ---------------------------------------------------------------------------------------


def rows(ub, L, gamma=GAMMA_5_2, applicable=True, rtol=None):
    return {c.name: c for c in maxmin.maxmin_checks(ub, L, gamma, applicable, rtol)}


def test_rows_of_an_exact_run():
    L = LowerBound(float(GAMMA_5_2) * (1 - 1e-15), GAMMA_5_2, "proved", "exact how")
    out = maxmin.maxmin_checks(upper_bound(), L, GAMMA_5_2, True, None)
    table = [(c.name, c.exactness, c.passed, c.informational) for c in out]
    assert table == [("max margin >= L", "proved", True, True), ("max margin <= U, gamma* <= U", "proved", True, False),
                     ("network margin = optimum", "proved", True, False), ("blocks decouple (C.14)", "proved", True,
                                                                           False),
                     ("one SOS solve, all blocks", "proved", True, False),
                     ("U: weak duality (C.6)", "argued", True, True),
                     ("U: homogeneity", "argued", True, True)]
    r = {c.name: c for c in out}
    low, up, gap = r["max margin >= L"], r["max margin <= U, gamma* <= U"], r["network margin = optimum"]
    assert (low.expected, low.measured, low.tolerance) == (float(GAMMA_5_2), L.value, None)
    assert low.detail == "L = sqrt(1/1080); exact how"
    assert low.statement == "max margin >= L: normalized margin of the checked network"
    assert (up.expected, up.measured, up.tolerance) == (float(GAMMA_5_2), UF, 0.0)
    ratio = float(U_5_2) / float(GAMMA_5_2) - 1
    assert up.detail == f"U = {U_5_2}; U/gamma* - 1 = {ratio:.3e}; squares compared exactly"
    assert up.statement == "max margin <= U, and gamma* <= U (weak duality + frequency blocks + exact SOS)"
    assert (gap.expected, gap.tolerance) == (GAP_TOL, GAP_TOL)
    assert gap.measured == pytest.approx(float(U_5_2) / float(GAMMA_5_2) - 1, rel=1e-12, abs=0)
    assert gap.detail == f"L = {L.value:.15g} (proved), U = {UF:.15g} (proved); tolerance 1e-09 (decided exactly)"
    assert gap.statement == "network margin = solver optimum: (U - L)/L <= 1e-09 (decided exactly)"


def test_a_float_lower_end_is_never_labelled_proved():
    L = float_L(float(GAMMA_5_2), 1e-15)
    r = rows(upper_bound(), L)
    assert r["max margin >= L"].exactness == "float" and r["network margin = optimum"].exactness == "float"
    cert = maxmin.certificate_field(upper_bound(), L)
    assert cert["lower_exactness"] == "float" and cert["upper_exactness"] == "proved"
    # an exact value whose gap cannot be decided exactly (L^2 not rational) is not "proved" either: the row compares
    # U with the rigorous float lower bound of L in rational arithmetic, so it is "certified"
    odd = LowerBound(0.03, sp.Rational(3, 100) + sp.pi / 10**9, "proved", "")
    assert rows(upper_bound(), odd)["network margin = optimum"].exactness == "certified"


def test_an_upper_bound_below_gamma_star_fails_the_row_on_exact_squares():
    g2 = F(1, 1080)  # gamma*^2 for (5, 2)
    below = checker.ceil_sqrt(g2 * (1 - F(1, 10**10)))  # U < gamma* (though U > gamma*^2: squares must be compared)
    assert below * below < g2 and below > g2
    row = rows(upper_bound(U=below), float_L(0.03))["max margin <= U, gamma* <= U"]
    assert row.passed is False and row.exactness == "proved"
    # U = gamma* exactly is allowed: (3, 3), where gamma* = 1/32 is rational
    r = rows(upper_bound(p=3, k=3, U=F(1, 32)), float_L(0.03125, 1e-15), gamma=sp.Rational(1, 32))
    assert r["max margin <= U, gamma* <= U"].passed is True
    r = rows(upper_bound(p=3, k=3, U=F(1, 32) - F(1, 10**40)), float_L(0.03125), gamma=sp.Rational(1, 32))
    assert r["max margin <= U, gamma* <= U"].passed is False


def test_gap_row_tolerances_and_their_boundaries():
    ub = upper_bound()
    exact = LowerBound(float(GAMMA_5_2), GAMMA_5_2, "proved", "")
    far = upper_bound(U=U_5_2 * (1 + F(1, 10**6)))
    gap = maxmin.relative_gap(far.upper, exact)[0]
    assert 1e-7 < gap < 1e-5
    # rtol above 1e-9: decided exactly too (squares of rationals), at the exact gap's boundary: the floats just
    # above and just below the irrational gap U/gamma* - 1 (the float gap is rounded: comparing it decided wrongly)
    exact_gap = sp.Rational(far.upper.numerator, far.upper.denominator) / GAMMA_5_2 - 1
    near = float(sp.N(exact_gap, 50))
    below, above = ((near, math.nextafter(near, 1)) if sp.Rational(near) < exact_gap
                    else (math.nextafter(near, 0), near))
    r = rows(far, exact, rtol=above)["network margin = optimum"]
    assert r.passed is True and r.tolerance == above and r.expected == above
    assert r.statement.endswith("(decided exactly)")
    r = rows(far, exact, rtol=below)["network margin = optimum"]
    assert r.passed is False
    assert rows(ub, exact, rtol=1e-10)["network margin = optimum"].tolerance == GAP_TOL  # never below 1e-9
    # rtol = 1e-9 exactly: the gap is still decided on exact squares, where float64 would say otherwise
    L3 = LowerBound(0.03, sp.Rational(3, 100), "proved", "")
    at = upper_bound(U=F(3, 100) * (1 + GAP_TOL_EXACT))
    gap_float = maxmin.relative_gap(at.upper, L3)[0]
    assert gap_float > GAP_TOL  # (float64 rounds this gap up)
    assert rows(at, L3, rtol=GAP_TOL)["network margin = optimum"].passed is True
    # ... with the rational 1/10^9, not the float 1e-9 (larger by 6e-26): just beyond the one, within the other
    beyond = upper_bound(U=F(3, 100) * (1 + GAP_TOL_EXACT + F(1, 10**30)))
    assert F(3, 100) * (1 + F(GAP_TOL)) > beyond.upper
    assert rows(beyond, L3)["network margin = optimum"].passed is False
    assert rows(ub, exact, rtol=1e-10)["network margin = optimum"].passed is True
    # a float L widens the tolerance by its error bound, relative to L, and says so where it matters
    L = LowerBound(0.03, None, "float", "", error_bound=3e-9)
    r = rows(ub, L)["network margin = optimum"]
    assert r.tolerance == pytest.approx(GAP_TOL + 1e-7, rel=1e-12, abs=0)
    assert r.statement == ("network margin = solver optimum: (U - L)/L <= 1e-09 + 1e-07 = 1.01e-07 (1e-09 plus the "
                           "float64 error bound of L, relative to L; --exact decides 1e-09 exactly where it fits)")
    small = LowerBound(1.0, None, "float", "", error_bound=0.01 * GAP_TOL)  # exactly 1 % of the tolerance
    r = rows(ub, small)["network margin = optimum"]
    assert r.statement == ("network margin = solver optimum: (U - L)/L <= 1e-09 + 1e-11 = 1.01e-09 (1e-09 plus the "
                           "float64 error bound of L, relative to L; --exact decides 1e-09 exactly where it fits)")
    # a network file cannot be checked with --exact: the row does not advise it there
    file_row = {c.name: c for c in maxmin.maxmin_checks(ub, small, GAMMA_5_2, True, None, exact_hint=False)}
    assert file_row["network margin = optimum"].statement == (
        "network margin = solver optimum: (U - L)/L <= 1e-09 + 1e-11 = 1.01e-09 (1e-09 plus the float64 error bound "
        "of L, relative to L)")
    tiny = LowerBound(0.03, None, "float", "", error_bound=0.03 * 0.011 * GAP_TOL)
    assert "float64 error bound of L" in rows(ub, tiny)["network margin = optimum"].statement
    exact_with_error = LowerBound(0.03, sp.Rational(3, 100), "proved", "", error_bound=1e-3)  # not a float L
    assert rows(ub, exact_with_error)["network margin = optimum"].tolerance == GAP_TOL
    L = LowerBound(float(U_5_2) / (1 + 2e-9), None, "float", "", error_bound=0.0)
    assert rows(ub, L)["network margin = optimum"].passed is False
    L = LowerBound(float(U_5_2) / (1 + 2e-9), None, "float", "", error_bound=float(U_5_2) * 2e-9)
    assert rows(ub, L)["network margin = optimum"].passed is True  # within the widened tolerance
    zero = LowerBound(0.0, None, "float", "", error_bound=1e-3)
    assert rows(ub, zero)["network margin = optimum"].tolerance == GAP_TOL


def test_rows_without_a_closed_form_and_for_even_p():
    ub = upper_bound(p=4, k=2)
    r = rows(ub, float_L(0.034), gamma=None, applicable=False)
    up = r["max margin <= U"]
    assert (up.expected, up.measured, up.tolerance, up.passed, up.exactness, up.informational) == (
        None, UF, None, True, "proved", True)
    assert up.detail == f"U = {U_5_2}; no closed form for this p"
    assert up.statement == "max margin <= U (weak duality + frequency blocks + exact SOS)"
    assert r["max margin >= L"].expected is None
    gap = r["network margin = optimum"]
    assert gap.informational is True and gap.detail.endswith("; the uniform-weight dual is not tight for even p")
    one = r["one SOS solve, all blocks"]
    assert one.expected == "2 frequencies" and one.detail.startswith("j in 1..1, j in 2: each block")
    assert rows(upper_bound(p=3, k=2), float_L(0.03))["one SOS solve, all blocks"].expected == "1 frequency"
    one = rows(upper_bound(), float_L())["one SOS solve, all blocks"]
    assert (one.expected, one.measured, one.tolerance, one.passed, one.exactness, one.informational) == (
        "2 frequencies", "1 SOS solve (g_2)", None, True, "proved", False)
    assert one.detail == ("j in 1..2: each block is c_j g_k(zeta_j) in its own orthonormal coordinates (the nonzero "
                          "frequencies are permuted by the Galois group of Q(omega_p); the change of variables is "
                          f"explicit), so one exact certificate max_(|z|=1) g_k <= B = {B_5_2} (Clarabel, status "
                          "Solved, 9 iterations) bounds them all")
    assert one.statement == ("one SOS solve bounds every frequency block (Galois-related blocks are the same form "
                             "g_k)")


def test_reduction_rows_say_which_proof_ran_and_fail_with_it():
    r = rows(upper_bound(), float_L())["blocks decouple (C.14)"]
    assert (r.expected, r.measured, r.passed) == ("proved", "all p (sympy) + exact at (p, k)", True)
    assert r.detail == ("proved for all p (sympy: 11 steps) and expanded exactly in Q(omega_5) at (p, k) = (5, 2): "
                        "125 monomials compared, equal")
    assert r.statement == "Lemma C.14: cross-frequency terms vanish, F = sum_j c_j g_k(zeta_j)"
    r = rows(upper_bound(matches=False), float_L())["blocks decouple (C.14)"]
    assert r.passed is False and r.detail.endswith("DIFFERENT")
    r = rows(upper_bound(lemma_passed=False), float_L())["blocks decouple (C.14)"]
    assert r.passed is False
    r = rows(upper_bound(exact_ran=False), float_L())["blocks decouple (C.14)"]
    assert (r.measured, r.passed) == ("all p (sympy); exact at (p, k) not run", True)
    assert r.detail == ("proved for all p (sympy: 11 steps); the exact expansion at (p, k) = (5, 2) was not run: "
                        "too large")
    r = rows(upper_bound(exact_ran=False, lemma_passed=False), float_L())["blocks decouple (C.14)"]
    assert r.passed is False
    ub = upper_bound(exact_ran=False)
    ub.reduction_check.pop("reason")
    assert rows(ub, float_L())["blocks decouple (C.14)"].detail.endswith("was not run: not requested")


def test_proof_step_rows():
    ub = upper_bound()
    every = maxmin.proof_step_checks(ub)
    assert [(c.name, c.expected, c.measured, c.exactness, c.informational) for c in every] == [
        ("U: weak duality (C.6)", "argument", "argued", "argued", True),
        ("U: block form (C.14, all p)", "holds", "proved", "proved", False),
        ("U: homogeneity", "argument", "argued", "argued", True),
        ("U: SOS: max g_k <= B", "holds", "proved", "proved", False),
        ("U: U >= c_b B (every block)", "holds", "proved", "proved", False)]
    assert every[0].statement == f"upper-bound step: {WEAK_DUALITY[0]}" and every[0].detail == WEAK_DUALITY[1]
    assert all(c.passed for c in every) and every[3].tolerance is None
    # a chain: each step names the ones before it
    assert [c.premises for c in every] == [[c.name for c in every[:i]] for i in range(len(every))]
    assert [c.name for c in maxmin.proof_step_checks(ub, include_weak_duality=False)] == [
        "U: block form (C.14, all p)", "U: homogeneity", "U: SOS: max g_k <= B", "U: U >= c_b B (every block)"]
    # without the exact expansion at (p, k), Lemma C.14 rests on its argued bookkeeping (a row before it)
    unexpanded = maxmin.proof_step_checks(upper_bound(exact_ran=False))
    assert [(c.name, c.exactness) for c in unexpanded[1:3]] == [("U: C.14 terms that cancel", "argued"),
                                                                 ("U: block form (C.14, all p)", "proved")]
    assert "U: C.14 terms that cancel" in unexpanded[2].premises
    assert all(not c.premises for c in maxmin.proof_step_checks(ub, only_argued=True))
    failed = replace(ub, steps=[replace(s, passed=False) for s in ub.steps])
    assert not any(c.passed for c in maxmin.proof_step_checks(failed))


def test_certificate_field():
    ub = upper_bound()
    L = LowerBound(0.03, sp.Rational(3, 100), "proved", "how")
    c = maxmin.certificate_field(ub, L)
    gap = maxmin.relative_gap(U_5_2, L)[0]
    assert c == {
        "lower": 0.03, "upper": UF, "relative_gap": gap, "lower_exactness": "proved",
        "upper_exactness": "proved", "lower_exact": "3/100", "upper_exact": str(U_5_2), "lower_algebraic": "3/100",
            "upper_algebraic": str(U_5_2), "upper_method": "sos",
        "lower_how": "how", "lower_method": "exhaustive",
        "upper_how": "weak duality (uniform q, tau) + Lemma C.14 frequency blocks + SOS certificate of the block form "
                     "checked in exact rational arithmetic",
        "block_bound": str(B_5_2), "lemma_c14": {"for_all_p": "proved (sympy)", "exact_at_p_k": ub.reduction_check},
        "frequency_blocks": [{"frequencies": "1..2", "domain": "complex", "constant_squared": "1/40"}],
        "sos_solves": 1, "steps": [s.to_dict() for s in ub.steps],
        "solver": {"name": "Clarabel", "status": "Solved", "iterations": 9, "kkt": {"gap": 1e-9}}, "seconds": 1.5}
    assert maxmin.certificate_field(ub, float_L())["lower_algebraic"] is None
    ub.solver.pop("kkt")
    assert maxmin.certificate_field(ub, L)["solver"] == {"name": "Clarabel", "status": "Solved", "iterations": 9,
                                                        "kkt": None}


def test_attach_maxmin_adds_the_rows_and_the_interval(monkeypatch):
    from margintheory.core.problems import ModularAddition

    def fake(problem, max_memory, method):
        assert problem == ModularAddition(5, 2) and max_memory == 2**30 and method == "am-gm"
        return upper_bound()

    monkeypatch.setattr(maxmin, "prove_upper_bound", fake)
    result = measured(0.0304, 1e-15)
    ub = maxmin.attach_maxmin(result, ModularAddition(5, 2), max_memory=2**30, rtol=1e-3, exact_available=True)
    gap_row = {c.name: c for c in result.checks}["network margin = optimum"]
    assert gap_row.tolerance == pytest.approx(1e-3 + 1e-15 / 0.0304, rel=1e-9, abs=0)  # rtol passed on
    assert "; --exact decides 0.001 exactly where it fits" in gap_row.statement  # exact_available passed on
    other = measured(0.0304, 1e-15)
    maxmin.attach_maxmin(other, ModularAddition(5, 2), max_memory=2**30, rtol=1e-3, exact_available=False)
    assert "--exact" not in {c.name: c for c in other.checks}["network margin = optimum"].statement
    assert gap_row.informational is False  # (5, 2) is applicable
    assert ub.upper == U_5_2 and [c.name for c in result.checks][:3] == [
        "max margin >= L", "max margin <= U, gamma* <= U", "network margin = optimum"]
    assert result.certificate["lower_exactness"] == "float"
    L = maxmin.lower_bound_from(result)
    assert result.fields["max_margin_interval"] == (f"[{L.value:.15g}, {float(U_5_2):.15g}]  (L float, U proved; "
                                                    f"gap {result.certificate['relative_gap']:.2e})")
    no_margin = VerificationResult("t")
    assert maxmin.attach_maxmin(no_margin, ModularAddition(5, 2), max_memory=1, exact_available=True) is None


# -- the margin engine's tolerances --------------------------------------------------------------------------------


def _net(seed=0, m=3, k=2, p=5):
    rng = np.random.default_rng(seed)
    return PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))


def test_logit_error_bound_is_the_documented_formula_and_bounds_the_float_error():
    for seed, (m, k, p) in enumerate([(3, 2, 5), (4, 3, 3), (1, 1, 4)]):
        net = _net(seed, m, k, p)
        zabs = np.abs(net.U).max(axis=2).sum(axis=1)
        want = (m + 2 * k + 2) * EPS * float(np.sum(zabs**k * np.abs(net.W).max(axis=1)))
        assert margins.logit_error_bound(net) == pytest.approx(want, rel=1e-14, abs=0)
        exact = [[sum(F(float(net.W[i, c])) * sum(F(float(net.U[i, j, a[j]])) for j in range(k)) ** k
                      for i in range(m)) for c in range(p)] for a in margins.input_grid(p, k)]
        pairs = zip(margins.logits(net).ravel(), [e for row in exact for e in row], strict=True)
        err = max(abs(F(float(x)) - e) for x, e in pairs)
        assert err <= margins.logit_error_bound(net)


def test_the_engine_measures_the_margin_and_its_tolerance():
    net = _net(1)
    res = margins.exhaustive_margin(net)
    f = margins.logits(net)
    y = margins.sum_labels(5, 2)
    g = np.array([f[i, y[i]] - np.max(np.delete(f[i], y[i])) for i in range(25)])
    assert np.allclose(res.margins, g, rtol=0, atol=1e-12) and res.h == g.min()
    norm = net.norm()
    assert res.normalized_margin == pytest.approx(g.min() / norm**3, rel=1e-13, abs=0)
    err = margins.logit_error_bound(net)
    assert res.logit_error_bound == err
    norm_rel = 3 * (3 + 3 * 5 + 2) * EPS
    assert res.normalized_tolerance == pytest.approx(2 * err / norm**3 + norm_rel * abs(res.normalized_margin),
                                                     rel=1e-12, abs=0)
    assert np.array_equal(res.on_margin, res.margins <= res.h + 4 * err)
    assert (res.p, res.k, res.m, res.norm) == (5, 2, 3, norm) and res.seconds >= 0
    zero = margins.exhaustive_margin(PolyNetwork(np.zeros((2, 2, 3)), np.zeros((2, 3))))
    assert zero.normalized_margin == 0.0 and zero.h == 0.0 and zero.normalized_tolerance == 0.0
    M = np.zeros((5, 5))  # M[s, c]: logits of class c summed over the inputs with label s
    for i in range(25):
        M[y[i]] += f[i]
    assert np.allclose(res.label_logit_sums, M, rtol=1e-12, atol=0)
    small = net.scaled(0.1)  # norm below 1: still divided by norm^(k+1)
    sres = margins.exhaustive_margin(small)
    assert small.norm() < 1 and sres.normalized_margin == pytest.approx(sres.h / small.norm() ** 3, rel=1e-13, abs=0)
    assert sres.normalized_margin == pytest.approx(res.normalized_margin, rel=1e-12, abs=0)  # homogeneity


def test_the_points_on_the_margin_are_those_within_four_error_bounds():
    net = _net(2)
    res = margins.exhaustive_margin(net)
    err = res.logit_error_bound
    M = np.full(25, 5.0)
    M[3], M[7], M[9] = 0.0, 4 * err, 4 * err * (1 + 1e-6)
    sums = np.arange(25.0).reshape(5, 5)
    fin = margins._finish(net, M, np.zeros(25), sums, 0.1, 2, margins.backends.choose("numpy"))
    assert fin.h == 0.0 and list(np.flatnonzero(fin.on_margin)) == [3, 7] and fin.label_logit_sums is sums
    assert fin.seconds == 0.1 and fin.chunk_prefixes == 2


def _measured(res, **changes):
    return replace(res, **changes)


@pytest.fixture(scope="module")
def construction_result():
    from margintheory.core.construction import build_construction

    return margins.exhaustive_margin(build_construction(5, 2))


def test_margin_rows_against_gamma_star_at_their_boundaries(construction_result):
    """One claim, |margin - gamma*| <= T = rtol gamma* (rtol defaults to EQUALITY_RTOL = 1e-8), decided from the
    enclosure margin +- (error bound + 4 eps gamma*): inside holds, outside fails, across the boundary is undecided
    (the row fails, is informational, and is named in undecided_claims).  Weak duality's '<= gamma*' is held to the
    error bound alone (1 + 4 eps passes, 1 + 5 eps does not), whatever the rtol."""
    res = _measured(construction_result, normalized_tolerance=0.0)

    def by_name(nm, rtol=None, gamma=1.0):
        checks, fields = margin_checks(_measured(res, normalized_margin=nm), gamma, rtol)
        return {c.name: c for c in checks}, fields

    assert EQUALITY_RTOL == 1e-8
    r, fields = by_name(1.0 + 4 * EPS)
    c6, c22 = r["margin <= gamma* (C.6)"], r["margin = gamma* (C.22)"]
    assert c6.passed and c22.passed and c6.tolerance == 4 * EPS and c22.tolerance == EQUALITY_RTOL
    assert (c6.expected, c6.measured, c6.exactness) == (True, True, "float")
    assert c6.detail == f"margin/gamma* = {1 + 4 * EPS:.15g}"
    assert c6.statement == "normalized margin <= gamma* (weak duality, Lemma C.6)"
    assert c22.statement == "normalized margin = gamma* (Theorem C.22)" and (c22.expected, c22.measured) == (
        1.0, 1.0 + 4 * EPS)
    assert not c22.informational and c22.detail.endswith(": holds") and fields["undecided_claims"] == []
    assert fields["ratio_to_gamma_star"] == 1.0 + 4 * EPS and fields["relative_error"] == 4 * EPS
    r, _ = by_name(1.0 + 5 * EPS)
    assert not r["margin <= gamma* (C.6)"].passed and r["margin = gamma* (C.22)"].passed
    r, fields = by_name(1.0 - 1e-8 + 8 * EPS)  # the enclosure [nm - 4 eps, nm + 4 eps] just inside 1 - T
    assert r["margin = gamma* (C.22)"].passed and fields["undecided_claims"] == []
    r, fields = by_name(1.0 - 1e-8 - 8 * EPS)  # just outside
    c22 = r["margin = gamma* (C.22)"]
    assert not c22.passed and not c22.informational and c22.detail.endswith(": fails")
    assert fields["undecided_claims"] == []
    r, fields = by_name(1.0 - 1e-8)  # across the boundary: undecided, never decided at the engine's own tolerance
    c22 = r["margin = gamma* (C.22)"]
    assert not c22.passed and c22.informational and c22.detail.endswith(": undecided")
    assert fields["undecided_claims"] == ["margin = gamma* (C.22)"]
    r, fields = by_name(1.0, rtol=0.0)  # rtol 0: equality exactly, which a float64 enclosure cannot establish
    assert not r["margin = gamma* (C.22)"].passed and "margin = gamma* (C.22)" in fields["undecided_claims"]
    r, _ = by_name(1.0 - 1e-3 + 8 * EPS, rtol=1e-3)
    assert r["margin = gamma* (C.22)"].passed and r["margin = gamma* (C.22)"].tolerance == 1e-3
    r, _ = by_name(1.0 + 1e-3, rtol=1e-3)
    assert not r["margin <= gamma* (C.6)"].passed and r["margin <= gamma* (C.6)"].tolerance == 4 * EPS
    r, _ = by_name(1.0 - 1.01e-3, rtol=1e-3)
    assert not r["margin = gamma* (C.22)"].passed and not r["margin = gamma* (C.22)"].informational
    r, _ = by_name(0.5, rtol=None, gamma=0.5)  # tolerances relative to gamma*
    assert r["margin <= gamma* (C.6)"].tolerance == 4 * EPS
    r, fields = by_name(0.25 * (1 - 0.5e-3), rtol=1e-3, gamma=0.25)  # rtol is relative: rtol gamma* absolute
    assert r["margin <= gamma* (C.6)"].passed and r["margin <= gamma* (C.6)"].tolerance == 4 * EPS
    assert r["margin = gamma* (C.22)"].passed and r["margin = gamma* (C.22)"].tolerance == pytest.approx(
        1e-3, rel=1e-12, abs=0)
    assert fields["relative_error"] == pytest.approx(0.5e-3, rel=1e-9, abs=0)
    assert fields["ratio_to_gamma_star"] == pytest.approx(1 - 0.5e-3, rel=1e-12, abs=0)
    assert r["margin <= gamma* (C.6)"].detail == f"margin/gamma* = {0.25 * (1 - 0.5e-3) / 0.25:.15g}"
    r, _ = by_name(0.25 * (1 - 1.1e-3), rtol=1e-3, gamma=0.25)
    assert not r["margin = gamma* (C.22)"].passed
    res2 = _measured(res, normalized_tolerance=1e-9, normalized_margin=1.0 + 1e-9 + 4 * EPS)
    r = {c.name: c for c in margin_checks(res2, 1.0, None)[0]}
    assert r["margin <= gamma* (C.6)"].passed and r["margin <= gamma* (C.6)"].tolerance == 1e-9 + 4 * EPS
    r = {c.name: c for c in margin_checks(_measured(res2, normalized_margin=1.0 + 1.0001e-9 + 4 * EPS), 1.0,
                                          None)[0]}
    assert not r["margin <= gamma* (C.6)"].passed


def test_points_on_the_margin_and_the_wrong_logit_spread_at_their_boundaries(construction_result):
    """err = 1e-10 and norm 2 (normalization 8), margin = gamma* = 0.125: T = 1e-8 gamma* normalized, 1e-8 in logits.
    The largest gap to the margin and the largest wrong-logit spread are known within 4 err and 2 err: below T by
    more than that holds, above it by more fails, in between is undecided; with an rtol T is rtol gamma*."""
    err = 1e-10
    M = np.full(25, 1.0)
    spread = np.zeros(25)
    res = _measured(construction_result, margins=M, h=1.0, logit_error_bound=err, norm=2.0, wrong_spread=spread,
                    normalized_margin=0.125, normalized_tolerance=0.0)

    def rows(gap, sp, rtol=None, gamma=0.125):
        M2, s2 = M.copy(), spread.copy()
        M2[[4, 5]] = 1.0 + gap
        s2[7] = sp
        checks, fields = margin_checks(_measured(res, margins=M2, wrong_spread=s2), gamma, rtol)
        return {c.name: c for c in checks}, fields

    r, fields = rows(1e-8 - 4 * err - 1e-12, 1e-8 - 2 * err - 1e-12)
    on, equal = r["all on margin (C.6)"], r["wrong logits equal (C.1)"]
    assert (on.expected, on.measured, on.tolerance, on.passed, on.exactness) == (1.0, 1.0, 1e-8, True, "float")
    assert on.detail.startswith("fraction within T of the margin; 0 points off; points whose gap to the margin exceeds")
    assert on.statement == "every point on the margin (spt q* = D_p, Lemma C.6)"
    assert (equal.expected, equal.measured, equal.tolerance, equal.passed, equal.exactness) == (
        0.0, (1e-8 - 2 * err - 1e-12) / 8, 1e-8, True, "float")
    assert equal.detail.startswith("max over points of (max - min) wrong logit, normalized")
    assert equal.statement == "all wrong-label logits equal (condition C.1)"
    assert fields == {"normalized_margin": 0.125, "margin_tolerance": 0.0, "logit_error_bound": err,
                      "relative_error": 0.0, "ratio_to_gamma_star": 1.0, "all_on_margin": True,
                      "fraction_on_margin": 1.0, "wrong_logits_equal": True,
                      "max_wrong_spread": (1e-8 - 2 * err - 1e-12) / 8, "undecided_claims": []}
    r, fields = rows(1e-8 + 4 * err + 1e-12, 1e-8 + 2 * err + 1e-12)
    assert not r["all on margin (C.6)"].passed and r["all on margin (C.6)"].measured == 23 / 25
    assert r["all on margin (C.6)"].detail.startswith("fraction within T of the margin; 2 points off")
    assert not r["wrong logits equal (C.1)"].passed and not r["wrong logits equal (C.1)"].informational
    assert fields["all_on_margin"] is False and fields["wrong_logits_equal"] is False
    assert fields["undecided_claims"] == []
    r, fields = rows(1e-8, 1e-8)  # within the error bounds of T: neither claim can be decided
    assert fields["undecided_claims"] == ["all on margin (C.6)", "wrong logits equal (C.1)"]
    assert all(r[n].informational and not r[n].passed for n in fields["undecided_claims"])
    wide = rows(1e-7, 1e-7, rtol=1e-6)[0]  # T = 1e-6 gamma* (1e-6 in logits) > 1e-7 + 4 err
    assert wide["all on margin (C.6)"].passed and wide["all on margin (C.6)"].tolerance == 1e-6
    assert wide["wrong logits equal (C.1)"].passed and wide["wrong logits equal (C.1)"].tolerance == 1e-6
    neg = _measured(res, normalized_margin=-0.125)  # no gamma*: T relative to |margin|
    assert {c.name: c for c in margin_checks(neg, None, 1e-6)[0]}["all on margin (C.6)"].passed
    r = {c.name: c for c in margin_checks(res, None, None)[0]}
    assert set(r) == {"all on margin (C.6)", "wrong logits equal (C.1)"}


# -- the typed margin that L is built from -------------------------------------------------------------------------

GOOD = {"value": 0.03, "error_bound": 1e-15, "exactness": "float", "method": "exhaustive", "how": "by hand"}


@pytest.mark.parametrize("bad, message", [
    ({"exactness": "argued"}, "margin exactness must be one of ('proved', 'certified', 'float'), got 'argued'"),
    ({"method": "brute"}, "margin method must be one of ('fourier', 'exhaustive'), got 'brute'"),
    ({"value": True}, "margin value must be a number, got True"),
    ({"value": "0.03"}, "margin value must be a number, got '0.03'"),
    ({"value": None}, "margin value must be a number, got None"),
    ({"error_bound": -5e-324}, "margin error bound must be finite and >= 0, got -5e-324"),
    ({"error_bound": math.inf}, "margin error bound must be finite and >= 0, got inf"),
    ({"error_bound": math.nan}, "margin error bound must be finite and >= 0, got nan"),
    ({"error_bound": False}, "margin error bound must be finite and >= 0, got False"),
    ({"error_bound": "0"}, "margin error bound must be finite and >= 0, got '0'"),
    ({"exactness": "proved"}, "a margin has an exact value exactly when it is proved (exactness 'proved', exact None)"),
    ({"exact": "1/3"}, "a margin has an exact value exactly when it is proved (exactness 'float', exact '1/3')"),
    ({"exactness": "certified", "exact": "1/3"},
     "a margin has an exact value exactly when it is proved (exactness 'certified', exact '1/3')"),
    ({"exactness": "proved", "exact": " "}, "the exact margin must be a non-empty string, got ' '"),
    ({"exactness": "proved", "exact": 0.5}, "the exact margin must be a non-empty string, got 0.5"),
    ({"how": " \t"}, "a margin must say how it was computed (how is empty)"),
    ({"how": None}, "a margin must say how it was computed (how is empty)"),
])
def test_an_inconsistent_margin_measurement_is_refused_with_its_reason(bad, message):
    with pytest.raises(InputError) as info:
        MarginMeasurement(**{**GOOD, **bad})
    assert str(info.value) == message


def test_margin_measurements_at_the_boundaries_of_their_validation():
    for ok in ({"error_bound": 0.0}, {"error_bound": 0}, {"error_bound": 5e-324}, {"value": 0}, {"value": -1.5},
               {"exactness": "certified"}, {"method": "fourier"}, {"exactness": "proved", "exact": "3/100"},
               {"how": "x"}):
        m = MarginMeasurement(**{**GOOD, **ok})
        assert all(getattr(m, key) == value for key, value in ok.items())  # accepted and kept as given
        assert type(m.to_fields()["margin_tolerance"]) is float  # (the JSON side always a float)


def test_margin_measurement_fields():
    m = MarginMeasurement(value=1, error_bound=0, exactness="certified", method="fourier", how="h")
    fields = m.to_fields()
    assert fields == {"normalized_margin": 1.0, "margin_tolerance": 0.0, "lower_method": "fourier",
                      "lower_how": "h", "lower_exactness": "certified"}
    assert type(fields["normalized_margin"]) is float and type(fields["margin_tolerance"]) is float
    proved = MarginMeasurement(value=0.25, error_bound=0.0, exactness="proved", method="exhaustive", how="h",
                               exact="1/4")
    assert proved.to_fields()["normalized_margin_exact"] == "1/4" and len(proved.to_fields()) == 6


# -- L from the typed margin: its method and the words of its bound -----------------------------------------------


def test_the_lower_end_keeps_the_margins_method_and_names_a_rigorous_bound():
    fourier = VerificationResult("t")
    fourier.set_margin(MarginMeasurement(value=0.5, error_bound=1e-9, exactness="certified", method="fourier",
                                         how="compact engine"))
    L = maxmin.lower_bound_from(fourier)
    assert L.method == "fourier" and L.exactness == "certified" and L.error_bound == 1e-9
    assert L.how == ("normalized margin of the network in float64 minus its rigorous error bound 1.00e-09; "
                     "compact engine")
    proved = VerificationResult("t")
    proved.set_margin(MarginMeasurement(value=0.25, error_bound=0.0, exactness="proved", method="fourier", how="h",
                                        exact="1/4"))
    assert maxmin.lower_bound_from(proved).method == "fourier"
    assert float_L().method == "exhaustive"


def test_relative_gap_float_at_its_exact_rational_boundary():
    """The float branch decides ``U <= (1 + 1e-9) L`` in exact rationals: at equality it is within, one ulp of a
    rational above it is not (the float gap printed beside it may round either way)."""
    L = LowerBound(0.0625, None, "float", "")
    at = (1 + F(GAP_TOL)) * F(0.0625)
    assert maxmin.relative_gap(at, L)[1:] == (True, False)
    assert maxmin.relative_gap(at + F(1, 10**40), L)[1:] == (False, False)


def test_gap_row_label_and_exactness_for_each_kind_of_lower_end():
    ub = upper_bound()
    L = float(GAMMA_5_2) * (1 - 1e-12)
    kinds = {
        "proved, square rational": (LowerBound(L, GAMMA_5_2, "proved", ""), "proved", "1e-09 (decided exactly)"),
        "certified": (LowerBound(L, None, "certified", "", error_bound=1e-12), "certified", "1e-09"),
        "float, no error": (LowerBound(L, None, "float", ""), "float", "1e-09"),
    }
    for what, (lower, exactness, label) in kinds.items():
        r = rows(ub, lower)["network margin = optimum"]
        assert (r.exactness, r.statement) == (exactness, f"network margin = solver optimum: (U - L)/L <= {label}"), what
    irrational = LowerBound(L, GAMMA_5_2 - sp.sqrt(2) / 10**20, "proved", "")  # proved, but L^2 is not rational
    assert irrational.exact_square is None and irrational.text() == str(F(L))
    r = rows(ub, irrational)["network margin = optimum"]
    assert (r.exactness, r.statement) == ("certified", "network margin = solver optimum: (U - L)/L <= 1e-09")


def test_the_engine_result_names_the_backend_that_computed_it():
    import types

    net = _net(1)
    res = margins._finish(net, np.array([0.5, 0.25]), np.zeros(2), np.zeros((5, 5)), 0.0, 1,
                          types.SimpleNamespace(label="some backend"))  # type: ignore[arg-type]
    assert res.backend == "some backend" and res.h == 0.25


def test_a_square_is_rational_only_when_proved_so():
    """``nsimplify`` alone would take ``(sqrt(30)/180 -+ sqrt(2)/10^20)^2`` for ``1/1080`` and overstate ``L``: the
    guess must be confirmed exactly."""
    assert maxmin.rational_square(GAMMA_5_2) == F(1, 1080)
    assert maxmin.rational_square(sp.Rational(-2, 3)) == F(4, 9)
    for near in (GAMMA_5_2 - sp.sqrt(2) / 10**20, GAMMA_5_2 + sp.sqrt(2) / 10**20):
        assert maxmin.rational_square(near) is None
    assert maxmin.rational_square(sp.pi / 30) is None  # transcendental
    assert maxmin.rational_square(sp.sqrt(3) / 7) == F(3, 49)
    # a square that sympy does not expand to a rational by itself, confirmed through its minimal polynomial
    nested = sp.sqrt(2 + sp.sqrt(3)) - sp.sqrt(2 - sp.sqrt(3))  # = sqrt(2)
    assert not sp.expand(nested**2).is_Rational and maxmin.rational_square(nested) == F(2)
    L = LowerBound(float(GAMMA_5_2), GAMMA_5_2 - sp.sqrt(2) / 10**20, "proved", "")
    assert L.exact_square is None and maxmin.relative_gap(U_5_2, L)[2] is False  # not decided on squares


def test_a_network_files_gap_row_does_not_advise_exact():
    """``--exact`` checks the construction and the families; for a network (a file) the gap row does not
    recommend it (the command would refuse it); for the construction it does."""
    import numpy as np

    from margintheory import ModularAddition, verify
    from margintheory.core.construction import build_construction
    from margintheory.core.network import PolyNetwork

    net = build_construction(5, 2)
    rounded = PolyNetwork(net.U.astype(np.float32).astype(np.float64), net.W)  # goes to the float engine
    row = {c.name: c for c in verify(ModularAddition(5, 2), network=rounded).checks}["network margin = optimum"]
    assert "float64 error bound of L" in row.statement and "--exact" not in row.statement
    exhaustive = verify(ModularAddition(5, 2), exhaustive=True)
    row = {c.name: c for c in exhaustive.checks}["network margin = optimum"]
    assert "--exact decides 1e-09 exactly" in row.statement



def test_a_result_without_a_deciding_check_is_neither_verified_nor_refuted():
    """No deciding check: nothing was claimed (it was 'refuted', exit 1, with every check passed or informational)."""
    from margintheory.core.checks import Check, VerificationResult

    r = VerificationResult("only informational rows")
    assert r.verdict == "not-applicable" and r.exit_code == 0  # no check at all
    r.add(Check(name="a", expected=0.0, measured=1.0, tolerance=0.0, passed=False, exactness="float",
                informational=True))
    assert r.verdict == "not-applicable" and r.exit_code == 0
    r.add(Check(name="b", expected=0.0, measured=0.0, tolerance=0.0, passed=True, exactness="float"))
    assert r.verdict == "verified" and r.exit_code == 0
    r.add(Check(name="c", expected=0.0, measured=1.0, tolerance=0.0, passed=False, exactness="float"))
    assert r.verdict == "refuted" and r.exit_code == 1


def test_rtol_loosens_equal_to_gamma_star_only(construction_result):
    """--rtol widens '= gamma*'; weak duality's '<= gamma*' keeps the engine's error bound (with rtol 0.5 a margin
    40 % above gamma* passed it)."""
    def rows(nm, rtol):
        res = _measured(construction_result, normalized_margin=nm, normalized_tolerance=1e-12)
        return {c.name: c for c in margin_checks(res, 1.0, rtol)[0]}

    r = rows(1.4, 0.5)
    at_most, equal = r["margin <= gamma* (C.6)"], r["margin = gamma* (C.22)"]
    assert equal.tolerance == 0.5 and at_most.tolerance == 1e-12 + 4 * EPS and not at_most.passed and equal.passed
    r = rows(0.6, 0.5)
    assert r["margin <= gamma* (C.6)"].passed and r["margin = gamma* (C.22)"].passed
    assert rows(1.0 + 0.9e-12, None)["margin <= gamma* (C.6)"].passed  # within the error bound


@pytest.mark.parametrize("lo, hi, decision", [
    (0.0, 1.0, "holds"), (1.0, 1.0, "holds"), (0.5, 1.5, "undecided"), (1.0 + 1e-16 * 3, 2.0, "fails"),
    (float("nan"), 0.5, "holds"), (0.5, float("nan"), "undecided"), (float("nan"), float("nan"), "undecided"),
])
def test_an_enclosure_decides_at_most_only_when_it_lies_on_one_side(lo, hi, decision):
    """value <= 1 from value in [lo, hi]: the whole enclosure on one side decides, straddling (or NaN) does not."""
    assert decide_at_most(lo, hi, 1.0) == decision


def test_an_enclosure_decides_within_only_when_it_lies_inside_or_outside():
    assert decide_within(0.9, 1.1, 1.0, 0.1) == "holds"
    assert decide_within(0.89, 1.0, 1.0, 0.1) == "undecided" and decide_within(1.0, 1.11, 1.0, 0.1) == "undecided"
    assert decide_within(0.5, 0.89, 1.0, 0.1) == "fails" and decide_within(1.11, 2.0, 1.0, 0.1) == "fails"
    assert decide_within(0.5, 1.5, 1.0, 0.1) == "undecided"  # wider than the band: neither inside nor outside
    assert claim_tolerance(0.25, None) == EQUALITY_RTOL * 0.25 and claim_tolerance(-0.5, 1e-3) == 0.5e-3
    assert claim_tolerance(0.25, 0.0) == 0.0
    d = margin_equals(0.99, 1.0, 1.0, 0.02)
    assert d.passed and d.tolerance == 0.02 and d.text.endswith("(rtol 0.02): holds")
    d = within_of_margin(-1.0, 0.5e-8, 1.0, None, "gap")
    assert d.passed and d.lo == 0.0 and d.text.startswith("gap in [0, 5e-09]")


def test_a_zero_margin_without_gamma_star_has_absolute_zero_tolerances(construction_result):
    """No gamma* and a zero margin: T = rtol |margin| = 0 (reported as an absolute 0, no division by zero); a point
    off the margin by more than its error bounds refutes 'all on margin', and equal wrong logits cannot be shown."""
    M = np.zeros(25)
    M[3] = 1.0
    zero = _measured(construction_result, margins=M, h=0.0, normalized_margin=0.0, normalized_tolerance=0.0,
                     logit_error_bound=1e-12, wrong_spread=np.zeros(25))
    checks, fields = margin_checks(zero, None, None)
    r = {c.name: c for c in checks}
    assert r["all on margin (C.6)"].tolerance == 0.0 and not r["all on margin (C.6)"].passed
    assert not r["all on margin (C.6)"].informational
    assert r["wrong logits equal (C.1)"].tolerance == 0.0 and fields["undecided_claims"] == ["wrong logits equal (C.1)"]
