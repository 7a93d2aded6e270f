"""The computed upper ends ``U`` of sparse parity and finite groups, the exact AM-GM certificate, the exact characters
and the interval rows, pinned so that a weakened check fails: every step with its exactness and wording, the exact
constants, the rejection of a tampered or inconsistent interval, the outward roundings.  This module is the test
selection of the mutation gate's ``upper-ends`` area (docs/MUTATION.md); it runs in a few seconds."""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction as F

import numpy as np
import pytest
import sympy as sp

from margintheory.certificate import am_gm, interval
from margintheory.certificate.checker import ceil_sqrt
from margintheory.certificate.maxmin import LowerBound
from margintheory.certificate.upper_bound import ProofStep
from margintheory.core.checks import Check, MarginMeasurement, VerificationResult
from margintheory.core.groups import symmetric_group
from margintheory.core.representations import character_table, real_irreps
from margintheory.errors import SolverError
from margintheory.tasks.groups import characters
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.groups import upper_bound as gub
from margintheory.tasks.parity import maxmin


# -- AM-GM ------------------------------------------------------------------------------------------------------
def test_am_gm_polynomials_quotients_and_remainders():
    assert am_gm.step_polynomial(2) == [1, -2, 1]
    assert am_gm.step_polynomial(3) == [8, -15, 6, 1]  # (2 + t)^3 - 27 t
    assert am_gm.step_quotient(2) == ([1], (0, 0))
    assert am_gm.step_quotient(3) == ([8, 1], (0, 0))
    assert am_gm.step_quotient(4) == ([81, 14, 1], (0, 0))  # (3 + t)^4 - 256 t = (t - 1)^2 (t^2 + 14 t + 81)
    assert am_gm._divide_by_t_minus_1([-1, 0, 1]) == ([1, 1], 0)  # t^2 - 1 = (t - 1)(t + 1)
    assert am_gm._divide_by_t_minus_1([3, 0, 1]) == ([1, 1], 4)
    for bad in (1, 0, -3):
        with pytest.raises(ValueError, match=f"the AM-GM step needs M >= 2, got {bad}"):
            am_gm.step_polynomial(bad)
    for M in range(2, 16):
        q, rem = am_gm.step_quotient(M)
        assert rem == (0, 0) and min(q) >= 0 and len(q) == M - 1 and q[-1] == 1


def test_am_gm_step_and_proof_text():
    assert am_gm.am_gm_step_holds(3) == (True, "M = 3: remainders (0, 0), min coefficient of q_M 1")
    step = am_gm.prove_am_gm(3)
    assert step == ProofStep(
        "AM-GM: prod_(i<=N) a_i <= (sum_i a_i / N)^N for a >= 0, N = 3", "proved", True,
        "N = 3: by induction on M = 2..3, prod_(i<=M) a_i <= A^(M-1) a_M <= (((M-1)A + a_M)/M)^M with A the mean of "
        "the first M-1 terms; each step is p_M(t) = (M-1+t)^M - M^M t = (t-1)^2 q_M(t) >= 0 for t = a_M/A >= 0, "
        "checked in exact integers: 2 quotients q_M, every coefficient >= 0")
    assert am_gm.prove_am_gm(1).passed and "0 quotients" in am_gm.prove_am_gm(1).detail


def test_a_broken_am_gm_step_fails(monkeypatch):
    real = am_gm.step_polynomial
    monkeypatch.setattr(am_gm, "step_polynomial", lambda M: [c + (1 if i == 1 and M == 3 else 0)
                                                               for i, c in enumerate(real(M))])
    ok, text = am_gm.am_gm_step_holds(3)
    assert not ok and text == "M = 3: remainders (1, 1), min coefficient of q_M 1"
    step = am_gm.prove_am_gm(4)
    assert not step.passed and step.detail.endswith("; FAILED: M = 3: remainders (1, 1), min coefficient of q_M 1")
    monkeypatch.setattr(am_gm, "step_quotient", lambda M: ([1, -1], (0, 0)))
    assert am_gm.am_gm_step_holds(5) == (False, "M = 5: remainders (0, 0), min coefficient of q_M -1")
    with pytest.raises(SolverError, match=r"upper bound for \(n, k\) = \(6, 3\): step failed: AM-GM"):
        maxmin.parity_upper_bound.__wrapped__(6, 3)


# -- parity ------------------------------------------------------------------------------------------------------
def test_parity_series_moments_and_multinomials():
    assert maxmin.power_series_product([[1, 1], [1, 1]], 3) == [1, 2, 1, 0]
    assert maxmin.power_series_product([[0, 1, 0, 1]] * 2, 4) == [0, 0, 1, 0, 2]
    assert maxmin.power_series_product([], 2) == [1, 0, 0]
    assert [maxmin.surviving_exponents(n, k) for n, k in ((1, 1), (3, 2), (8, 5))] == [1, 1, 1]
    assert maxmin.rademacher_moments(3) == [1, 0, 1, 0]
    assert maxmin.multinomial([1, 1, 1]) == 6 and maxmin.multinomial([2, 1]) == 3 and maxmin.multinomial([0]) == 1


def test_parity_steps_exactly():
    ub = maxmin.parity_upper_bound.__wrapped__(7, 3)
    red, coef = maxmin.reduction_step(7, 3)
    assert coef == 6
    assert red == ProofStep(
        "reduction: F(u, w) = k! (w . b) prod_(j in S) u_j (uniform q, exact count of the surviving monomials)",
        "proved", True,
        "E[x^m] on {+1,-1} = 1 for even m, 0 for odd m (m = 0..4, exact); exponent vectors of degree 3 odd on S and "
        "even off S among 7 coordinates: 1 (power-series coefficient, exact integers), namely 1_S with multinomial "
        "coefficient 6 = 3!; so F(u, w) = 6 (w_0 - w_1) prod_(j in S) u_j")
    assert maxmin.cauchy_schwarz_step() == ProofStep(
        "Cauchy-Schwarz: (w . b)^2 <= 2 |w|^2 (exact identity)", "proved", True,
        "2 (w0^2 + w1^2) - (w0 - w1)^2 - (w0 + w1)^2 expands to 0")
    U2 = F(2 * 36, 4**4)
    assert ub.upper_squared == U2 and ub.upper == ceil_sqrt(U2) and ub.upper_algebraic == f"sqrt({U2})"
    assert ub.steps == [
        ProofStep(*maxmin.PARITY_WEAK_DUALITY[:1], "argued", True, maxmin.PARITY_WEAK_DUALITY[1]), red,
        ProofStep(maxmin.PARITY_HOMOGENEITY[0], "argued", True, maxmin.PARITY_HOMOGENEITY[1]),
        maxmin.cauchy_schwarz_step(), am_gm.prove_am_gm(4),
        ProofStep("U^2 = 2 (k!)^2 (k+1)^-(k+1) (exact), U rational >= sqrt(U^2)", "proved", True,
                  f"U^2 = {U2}; U = {ub.upper}")]
    assert ub.task == "parity" and ub.details == {"single_neuron_form": "6 (w_0 - w_1) prod_(j in S) u_j",
                                                  "relevant_coordinates": "u_S (k = 3) and w (2)"}
    assert ub.how.startswith("weak duality (uniform q) + exact reduction") and ub.seconds >= 0


def test_parity_reduction_fails_on_a_wrong_count(monkeypatch):
    monkeypatch.setattr(maxmin, "surviving_exponents", lambda n, k: 2)
    assert not maxmin.reduction_step(5, 2)[0].passed
    monkeypatch.undo()
    monkeypatch.setattr(maxmin, "rademacher_moments", lambda top: [F(1)] * (top + 1))
    assert not maxmin.reduction_step(5, 2)[0].passed


def test_construction_margin_is_exact_and_refuses_outside_its_range():
    for k in (1, 2, 5):
        L2, patterns, all_on = maxmin.construction_margin_squared(k)
        assert L2 == F(2 * math.factorial(k) ** 2, (k + 1) ** (k + 1)) and patterns == 2**k and all_on is True
    for bad in (0, maxmin.MAX_EXACT_CONSTRUCTION_K + 1):
        with pytest.raises(ValueError, match="exact construction margin for 1 <= k <= 13"):
            maxmin.construction_margin_squared(bad)
    assert maxmin.MAX_EXACT_CONSTRUCTION_K == 13


def test_construction_margin_at_its_limit_and_in_chunks(monkeypatch):
    monkeypatch.setattr(maxmin, "MAX_EXACT_CONSTRUCTION_K", 3)
    assert maxmin.construction_margin_squared(3)[0] == F(2 * 36, 4**4)
    with pytest.raises(ValueError, match="exact construction margin for 1 <= k <= 3, got 4"):
        maxmin.construction_margin_squared(4)
    monkeypatch.undo()
    L2, patterns, all_on = maxmin.construction_margin_squared(12)  # 2^12 patterns in chunks of 2^20 / 2^11 rows
    assert L2 == F(2 * math.factorial(12) ** 2, 13**13) and patterns == 4096 and all_on


def test_gamma_rows_compare_squares_exactly():
    ub = maxmin.parity_upper_bound(5, 2)
    row = maxmin.gamma_below_upper_check(2, ub)
    gamma = math.factorial(2) * math.sqrt(2.0 * 3.0**-3)
    assert row == Check(name="gamma* <= U", expected=gamma, measured=ub.upper_float, tolerance=0.0, passed=True,
                        exactness="proved", detail=f"gamma*^2 = 8/27, equal to the bound's square; U/gamma* - 1 = "
                        f"{ub.upper_float / gamma - 1:.3e}; squares compared exactly",
                        statement="closed form gamma* = k! sqrt(2 (k+1)^-(k+1)) <= U (Thm 7.8 against the computed U)")
    assert ub.upper_squared == F(8, 27)
    lowered = dataclasses.replace(ub, upper=ub.upper * F(10**12 - 1, 10**12))
    assert not maxmin.gamma_below_upper_check(2, lowered).passed
    other = interval.gamma_below_upper_exact(0.5, F(1, 5), ub, "s")
    assert "different from the bound's square" in other.detail and other.statement == "s"


# -- the interval rows -------------------------------------------------------------------------------------------
def _ub(U2=F(1, 4), upper=None, steps=None):
    return interval.TaskUpperBound("t", upper if upper is not None else ceil_sqrt(U2), U2,
                                   steps if steps is not None else [ProofStep("a", "proved", True, "d")], "how")


def test_require_proved_and_float_rounding():
    ub = _ub()
    assert ub.require_proved("x") is ub and ub.upper_float == 0.5 and ub.proved
    with pytest.raises(SolverError, match="upper bound for x: step failed: bad"):
        _ub(steps=[ProofStep("ok", "argued", True, ""), ProofStep("bad", "proved", False, "")]).require_proved("x")
    with pytest.raises(SolverError, match="upper bound for x: the rational U is below the proved bound"):
        _ub(upper=F(1, 2) - F(1, 10**30)).require_proved("x")
    assert _ub(U2=F(1, 3)).upper_float >= math.sqrt(1 / 3) and F(_ub(U2=F(1, 3)).upper_float) >= _ub(U2=F(1, 3)).upper
    assert interval.TaskUpperBound("t", F(1), None, [], "h").require_proved("y").upper_float == 1.0


def test_interval_gap_exact_and_float():
    half = LowerBound(0.5, sp.Rational(1, 2), "proved", "h")
    assert interval.interval_gap(_ub(), half, 1e-9) == (0.0, True, True)
    assert interval.interval_gap(_ub(U2=F(1, 4) * (1 + F(1, 10**6))), half, 1e-9)[1:] == (False, True)
    assert interval.interval_gap(_ub(U2=F(1, 4) * (1 + F(1, 10**12))), half, 1e-9)[1:] == (True, True)
    assert interval.interval_gap(_ub(U2=F(1, 5)), half, 1e-9)[1] is False  # U below L: inconsistent
    neg = LowerBound(-0.5, -sp.Rational(1, 2), "proved", "h")
    assert interval.interval_gap(_ub(), neg, 1e-9) == (math.inf, False, False)
    fl = LowerBound(0.5 - 1e-12, None, "float", "h", 1e-12)
    gap, within, exact = interval.interval_gap(_ub(), fl, 1e-9)
    assert not exact and within and gap == pytest.approx(2e-12, rel=1e-3)
    assert interval.interval_gap(_ub(), LowerBound(0.6, None, "float", "h"), 1e-9)[1] is False
    assert interval.interval_gap(_ub(), LowerBound(0.4, None, "float", "h"), 1e-9)[1] is False
    assert interval.interval_gap(_ub(), LowerBound(0.0, None, "float", "h"), 1e-9) == (math.inf, False, False)
    no_square = interval.TaskUpperBound("t", F(1, 2), None, [], "h")
    assert interval.interval_gap(no_square, half, 1e-9) == (0.0, True, True)


def test_interval_rows_exactly():
    ub = _ub(steps=[ProofStep("weak duality (Lemma 7.6): x", "argued", True, "why"),
                    ProofStep("U^2 = 2 (k!)^2 stuff", "proved", True, "d")])
    ub.upper_algebraic = "sqrt(1/4)"
    L = LowerBound(0.5, sp.Rational(1, 2), "proved", "exact how")
    g = Check(name="gamma* <= U", expected=0.5, measured=0.5, tolerance=0.0, passed=True)
    rows = interval.interval_checks(ub, L, gamma=0.5, gamma_below_upper=g, applicable=True, rtol=None)
    assert rows == [
        Check(name="max margin >= L", expected=0.5, measured=0.5, tolerance=None, passed=True, exactness="proved",
              detail="L = 1/2; exact how", informational=True,
              statement="max margin >= L: normalized margin of the checked network"),
        Check(name="max margin <= U", expected=0.5, measured=0.5, tolerance=None, passed=True, exactness="proved",
              detail="U = sqrt(1/4) (rational 1/2); how",
              statement="max margin of every network of any width <= U (computed)",
              premises=["U: weak duality (7.6)", "U: U^2 exact, U rational"]),
        g,
        Check(name="network margin = optimum", expected=1e-9, measured=0.0, tolerance=1e-9, passed=True,
              exactness="proved", detail="L = 0.5 (proved), U = 0.5 (proved); tolerance 1e-09 (decided exactly)",
              statement="network margin = max margin: (U - L)/L <= 1e-09 (decided exactly)",
              premises=["max margin >= L", "max margin <= U"]),
        Check(name="U: weak duality (7.6)", expected="argument", measured="argued", tolerance=None, passed=True,
              exactness="argued", detail="why", informational=True,
              statement="upper-bound step: weak duality (Lemma 7.6): x"),
        Check(name="U: U^2 exact, U rational", expected="holds", measured="proved", tolerance=None, passed=True,
              exactness="proved", detail="d", statement="upper-bound step: U^2 = 2 (k!)^2 stuff")]
    failed = dataclasses.replace(ub, steps=[ProofStep("x", "proved", False, "")])
    assert not interval.interval_checks(failed, L, gamma=None, gamma_below_upper=None, applicable=True,
                                        rtol=None)[1].passed
    fl = LowerBound(0.5 - 1e-12, None, "certified", "f", 1e-12)
    gap = interval.interval_checks(ub, fl, gamma=None, gamma_below_upper=None, applicable=True, rtol=1e-6)[2]
    assert gap.exactness == "certified" and gap.tolerance == 1e-6 and gap.detail.endswith("tolerance 1e-06")
    assert gap.passed and not gap.informational
    fl2 = LowerBound(0.5 - 1e-12, None, "float", "f", 1e-12)
    gap2 = interval.interval_checks(ub, fl2, gamma=None, gamma_below_upper=None, applicable=False, rtol=None)[2]
    slack = 1e-12 / (0.5 - 1e-12)
    assert gap2.exactness == "float" and gap2.informational and gap2.tolerance == 1e-9 + slack
    assert gap2.detail == (f"L = {0.5 - 1e-12:.15g} (float), U = 0.5 (proved); tolerance 1e-09 + {slack:.3g} = "
                           f"{1e-9 + slack:.6g} (1e-09 plus the float64 error bound of L, relative); the theorem's "
                           "hypothesis fails: reported")
    assert gap2.statement == (f"network margin = max margin: (U - L)/L <= 1e-09 + {slack:.3g} = {1e-9 + slack:.6g} "
                              "(1e-09 plus the float64 error bound of L, relative)")
    inexact = LowerBound(0.5, sp.sqrt(2) / 3, "proved", "h")  # L^2 rational; not the float branch
    assert interval.interval_checks(ub, inexact, gamma=None, gamma_below_upper=None, applicable=True,
                                    rtol=None)[2].exactness == "proved"


def test_certificate_object_and_attach():
    ub = _ub()
    ub.upper_algebraic, ub.details, ub.seconds = "sqrt(1/4)", {"extra": 1}, 0.25
    L = LowerBound(0.5, sp.Rational(1, 2), "proved", "exact how", method="exhaustive")
    assert interval.certificate_object(ub, L) == {
        "lower": 0.5, "upper": 0.5, "relative_gap": 0.0, "lower_exactness": "proved", "upper_exactness": "proved",
        "lower_exact": "1/2", "upper_exact": "1/2", "lower_algebraic": "1/2", "upper_algebraic": "sqrt(1/4)",
        "upper_squared": "1/4", "lower_how": "exact how", "lower_method": "exhaustive", "upper_how": "how",
        "steps": [{"name": "a", "exactness": "proved", "passed": True, "reason": "d"}], "seconds": 0.25, "extra": 1}
    no_sq = dataclasses.replace(ub, upper_squared=None)
    cert = interval.certificate_object(no_sq, LowerBound(0.25, None, "float", "h"))
    assert cert["upper_squared"] is None and cert["lower_algebraic"] is None and cert["lower_exact"] is None
    res = VerificationResult("t")
    assert interval.attach_interval(res, ub, gamma=None, gamma_below_upper=None, applicable=True, rtol=None) is None
    assert res.checks == [] and res.certificate is None
    res.set_margin(MarginMeasurement(value=0.5, error_bound=1e-16, exactness="float", method="exhaustive", how="m"))
    got = interval.attach_interval(res, ub, gamma=0.5, gamma_below_upper=None, applicable=True, rtol=None)
    assert got is not None and got.value < 0.5 and got.exactness == "float"
    assert [c.name for c in res.checks] == ["max margin >= L", "max margin <= U", "network margin = optimum",
                                            "U: a"]
    assert res.certificate == {**interval.certificate_object(ub, got), "upper_assumes": []}  # its step "a" is proved
    argued = dataclasses.replace(ub, steps=[ProofStep("weak duality (Lemma 7.6): x", "argued", True, "why"),
                                            *ub.steps])
    res2 = VerificationResult("t")
    res2.set_margin(MarginMeasurement(value=0.5, error_bound=1e-16, exactness="float", method="exhaustive", how="m"))
    interval.attach_interval(res2, argued, gamma=0.5, gamma_below_upper=None, applicable=True, rtol=None)
    assert res2.certificate["upper_assumes"] == ["U: weak duality (7.6)"]
    assert res.fields["max_margin_interval"] == (f"[{got.value:.15g}, 0.5]  (L float, U proved; gap "
                                                 f"{res.certificate['relative_gap']:.2e})")
    assert res.verdict == "verified"


def test_upper_at_most_row():
    ub = _ub()
    assert interval.upper_at_most_check(0.25, 1e-15, ub, "st") == Check(
        name="margin <= U", expected=0.5, measured=0.25, tolerance=2e-15, passed=True, exactness="float",
        detail="margin/U = 0.5; U computed (proved), not the closed form", statement="st")
    assert interval.upper_at_most_check(0.75, 0.25, ub, "st").passed  # at the boundary: <=
    assert not interval.upper_at_most_check(0.5 + 1e-9, 1e-15, ub, "st").passed
    zero = interval.TaskUpperBound("t", F(0), None, [], "h", exactness="certified")
    row = interval.upper_at_most_check(0.0, 0.0, zero, "s")
    assert row.tolerance is None and row.passed
    assert row.detail == "margin = 0, U = 0; U computed (certified), not the closed form"


# -- groups ------------------------------------------------------------------------------------------------------
def test_rational_dual_kappa_and_brackets():
    pi = gub.rational_dual(np.array([0.25, -1e-17, 0.75]))
    assert pi == [F(1, 4), F(0), F(3, 4)]
    assert gub.rational_dual(np.array([1.0, 1.0])) == [F(1, 2), F(1, 2)]
    with pytest.raises(ValueError, match="the dual class weights have no positive entry"):
        gub.rational_dual(np.array([-1.0, 0.0]))
    assert gub.kappa_squared(6, 2) == F(4, 8 * 18**3)
    assert float(gub.kappa_squared(24, 3)) == pytest.approx(gm.kappa(24, 3) ** 2, rel=1e-15)
    table = characters.exact_character_table(symmetric_group(3))  # trivial, (2,1), sign
    U2, brackets, ok = gub.dual_bound_squared(table, 6, [F(1, 2), F(1, 2)])
    assert brackets == [F(5, 2), F(1)] and ok  # 2 - (-1/2 + 0), 1 - (1/2 - 1/2)
    assert U2 == max(gub.kappa_squared(6, 2) * F(25, 4), gub.kappa_squared(6, 1))
    assert gub.dual_bound_squared([[1, 1], [1, 5]], 2, [F(1)])[2] is False


def test_group_chain_exactly():
    G = symmetric_group(3)
    irreps = real_irreps(G)
    X = character_table(G, irreps)
    dims = np.array([R.dim for R in irreps])
    lp = gm.solve_class_lp(X, G.order, dims)
    ub = gub.real_group_upper_bound(G, irreps, lp.pi)
    names = [s.name for s in ub.steps]
    assert names == [gub.GROUP_WEAK_DUALITY[0],
                     "character table: exact integers (Murnaghan-Nakayama), orthogonal, every irrep of real type",
                     "checked dual: pi >= 0 and sum_C pi_C = 1 exactly (the LP dual rounded to rationals)",
                     gub.D11[0], gub.BLOCK_MAX[0], am_gm.prove_am_gm(3).name,
                     "U^2 = max_R kappa_R^2 (d_R - sum_C pi_C chi_R(C))^2 (exact), U rational >= sqrt(U^2)"]
    assert [s.exactness for s in ub.steps] == ["argued", "proved", "proved", "argued", "argued", "proved", "proved"]
    pi = gub.rational_dual(lp.pi)
    U2, _, _ = gub.dual_bound_squared(characters.exact_character_table(G), 6, pi)
    assert ub.upper_squared == U2 and ub.upper == ceil_sqrt(U2) and ub.details["dual_class_weights"] == [
        str(p) for p in pi]
    assert ub.details["class_sizes"] == [1, 2, 3] and ub.details["character_table"] == [[1, 1, 1], [2, -1, 0],
                                                                                         [1, 1, -1]]
    assert ub.steps[2].detail == "2 of 2 classes weighted; grid 2^-60, scaled to sum 1"
    assert ub.steps[6].detail.startswith("brackets d_R - pi . chi_R all >= 0: True (min ")
    row = gub.formula_below_upper_check(list(dims), G.order, ub)
    assert row.passed and row.exactness == "proved" and row.name == "gamma* <= U"
    low = dataclasses.replace(ub, upper=ub.upper * F(10**9 - 1, 10**9))
    assert not gub.formula_below_upper_check(list(dims), G.order, low).passed


def test_group_dual_check_fails_on_bad_weights(monkeypatch):
    G = symmetric_group(3)
    irreps = real_irreps(G)
    monkeypatch.setattr(gub, "rational_dual", lambda pi: [F(1, 2), F(1, 3)])  # sums to 5/6
    with pytest.raises(SolverError, match="checked dual"):
        gub.real_group_upper_bound(G, irreps, np.array([0.5, 0.5]))
    monkeypatch.setattr(gub, "rational_dual", lambda pi: [F(3, 2), F(-1, 2)])  # a negative weight
    with pytest.raises(SolverError, match="checked dual"):
        gub.real_group_upper_bound(G, irreps, np.array([0.5, 0.5]))


def test_cyclic_bounds():
    ub = gub.cyclic_upper_bound(5, 2 * 2**30)
    assert ub.upper_squared is None and ub.task == "group" and ub.how.startswith("C_5 = Z_5: modular addition's")
    row = gub.cyclic_gamma_check(5, ub)
    assert row.passed and row.detail.startswith("gamma*^2 = 1/1080, ")  # 16 / (216 * 4^2 * 5)
    assert gub.cyclic_gamma_check(6, ub) is None


def test_exact_characters_pinned():
    assert characters.cycle_type([1, 0, 2, 4, 3]) == (2, 2, 1) and characters.cycle_type([0, 1]) == (1, 1)
    assert characters.cycle_type([1, 2, 0]) == (3,)
    assert characters.murnaghan_nakayama((2, 1), (1, 1, 1)) == 2 and characters.murnaghan_nakayama((2, 1), (3,)) == -1
    assert characters.murnaghan_nakayama((2, 1), (2, 1)) == 0 and characters.murnaghan_nakayama((1, 1, 1), (2, 1)) == -1
    assert characters.murnaghan_nakayama((2, 2), (2, 2)) == 2 and characters.murnaghan_nakayama((3, 1), (4,)) == -1
    with pytest.raises(ValueError, match="partitions of different sizes"):
        characters.murnaghan_nakayama((2,), (1,))
    with pytest.raises(ValueError, match="exact characters are computed for the symmetric groups"):
        from margintheory.core.groups import cyclic_group

        characters.exact_character_table(cyclic_group(5))
    G = symmetric_group(4)
    facts = characters.exact_character_facts(G, real_irreps(G))
    assert facts.holds and facts.orthogonal and facts.square and facts.dims_match and facts.real_type
    assert facts.table == [[1, 1, 1, 1, 1], [3, -1, 1, -1, 0], [2, 2, 0, 0, -1], [3, -1, -1, 1, 0], [1, 1, -1, -1, 1]]
    assert facts.summary().startswith("5 irreps x 5 classes (Murnaghan-Nakayama, integers); row orthogonality "
                                      "sum_C |C| chi chi' = |G| delta exact; chi(e) = d_R yes; Frobenius-Schur "
                                      "indicators ['1'] (1 = real type)")
    assert characters.frobenius_schur_exact(G, [[1, -1, 1, 1, 1]], facts.sizes) == [F(1, 2)]
    broken = dataclasses.replace(facts, trace_error=1e-8)
    assert not broken.holds and not dataclasses.replace(facts, real_type=False).holds
    assert not characters.exact_character_facts(G, real_irreps(G)[:-1]).holds


def test_group_steps_and_texts_exactly():
    G = symmetric_group(3)
    irreps = real_irreps(G)
    X = character_table(G, irreps)
    lp = gm.solve_class_lp(X, G.order, np.array([R.dim for R in irreps]))
    ub = gub.real_group_upper_bound(G, irreps, lp.pi)
    facts = characters.exact_character_facts(G, irreps)
    pi = gub.rational_dual(lp.pi)
    U2, brackets, _ = gub.dual_bound_squared(facts.table, 6, pi)
    assert ub.steps == [
        ProofStep(gub.GROUP_WEAK_DUALITY[0], "argued", True, gub.GROUP_WEAK_DUALITY[1]),
        ProofStep("character table: exact integers (Murnaghan-Nakayama), orthogonal, every irrep of real type",
                  "proved", True, facts.summary()),
        ProofStep("checked dual: pi >= 0 and sum_C pi_C = 1 exactly (the LP dual rounded to rationals)", "proved",
                  True, "2 of 2 classes weighted; grid 2^-60, scaled to sum 1"),
        ProofStep(gub.D11[0], "argued", True, gub.D11[1]),
        ProofStep(gub.BLOCK_MAX[0], "argued", True, gub.BLOCK_MAX[1]),
        am_gm.prove_am_gm(3),
        ProofStep("U^2 = max_R kappa_R^2 (d_R - sum_C pi_C chi_R(C))^2 (exact), U rational >= sqrt(U^2)", "proved",
                  True, f"brackets d_R - pi . chi_R all >= 0: True (min {float(min(brackets)):.6g}); U^2 = "
                  f"{float(U2):.17g}; U = {ub.upper}")]
    assert ub.how == ("weak duality (uniform q, class weights pi = the class LP's dual, rounded to rationals and "
                      "checked exactly) + Lemma D.11's irrep blocks (factor 2) + Lemmas D.12-D.13 (Cauchy-Schwarz, "
                      "exact AM-GM) + exact characters")
    assert ub.task == "group" and ub.upper_algebraic == f"sqrt({U2})" and ub.exactness == "proved"
    assert set(ub.details) == {"dual_class_weights", "character_table", "class_sizes", "character_method"}
    assert ub.seconds > 0
    assert ub.details["character_method"] == "Murnaghan-Nakayama, integers"
    assert facts.summary() == ("3 irreps x 3 classes (Murnaghan-Nakayama, integers); row orthogonality sum_C |C| chi "
                               "chi' = |G| delta exact; chi(e) = d_R yes; Frobenius-Schur indicators ['1'] (1 = real "
                               "type); max |trace of the computed representation - chi| = 0.00e+00 (tolerance 1e-09)")
    import flint

    before = flint.ctx.prec
    row = gub.formula_below_upper_check([1, 2, 1], 6, ub)
    assert flint.ctx.prec == before
    formula = 2 / (3 * math.sqrt(18) * (2**2.5 + 1))
    assert row.expected == formula and row.measured == ub.upper_float and row.tolerance == 0.0
    assert row.detail.startswith("27 |G| U^2 (sum d^2.5)^2 = [4.00000000000000") and row.detail.endswith(
        f"vs 4 (ball arithmetic, 256 bits); U/gamma* - 1 = {ub.upper_float / formula - 1:.3e}")
    assert row.statement == "closed form of Thm 7.9, 2/(3 sqrt(3|G|) sum d_R^2.5) <= U (against the computed U)"


def test_cyclic_texts_exactly():
    from margintheory.certificate.upper_bound import prove_upper_bound
    from margintheory.core.problems import ModularAddition

    ub = gub.cyclic_upper_bound(5, 2 * 2**30)
    mod = prove_upper_bound(ModularAddition(5, 2), max_memory=2 * 2**30)
    assert ub.upper == mod.upper and ub.steps == mod.steps and ub.seconds == mod.seconds
    assert ub.how == ("C_5 = Z_5: modular addition's proved bound at (p, k) = (5, 2): weak duality (uniform q, tau) + "
                      "Lemma C.14 frequency blocks (the irrep blocks of Z_n) + SOS certificate checked in exact "
                      "rational arithmetic")
    assert ub.details == {"block_bound": str(mod.block_bound), "sos_solver": mod.solver}
    row = gub.cyclic_gamma_check(5, ub)
    assert row.statement == "gamma*(5, 2) of modular addition <= U (Thm C.22 against the computed U)"
    assert row.expected == pytest.approx(0.03042903097250922, rel=1e-15)


def test_exact_character_facts_each_condition(monkeypatch):
    G = symmetric_group(3)
    irreps = real_irreps(G)
    good = characters.exact_character_facts(G, irreps)
    assert characters.frobenius_schur_exact(G, good.table, good.sizes) == [1, 1, 1]
    for field in ("orthogonal", "square", "dims_match", "real_type"):
        assert not dataclasses.replace(good, **{field: False}).holds
    assert dataclasses.replace(good, trace_error=1e-9).holds and not dataclasses.replace(good, trace_error=2e-9).holds
    monkeypatch.setattr(characters, "exact_character_table", lambda g: [[1, 1, 1], [2, -1, 0], [1, 1, 1]])
    bad = characters.exact_character_facts(G, irreps)
    assert not bad.orthogonal and bad.dims_match and bad.square and not bad.holds
    assert bad.trace_error == 2.0 and "|G| delta FAILS; chi(e)" in bad.summary()
    monkeypatch.setattr(characters, "exact_character_table", lambda g: [[1, 1, 1], [3, -1, 0], [1, 1, -1]])
    assert not characters.exact_character_facts(G, irreps).dims_match
    assert "chi(e) = d_R NO" in characters.exact_character_facts(G, irreps).summary()


def test_boundaries_that_survived_the_first_gate_run(monkeypatch):
    """One assertion per weakened comparison found by the mutation gate (docs/MUTATION.md, area upper-ends)."""
    monkeypatch.setattr(am_gm, "step_quotient", lambda M: ([1, 0, 1], (0, 0)))  # a zero coefficient is allowed
    assert am_gm.am_gm_step_holds(4)[0] is True
    monkeypatch.undo()
    half = _ub()  # U = 1/2 exactly, U^2 = 1/4
    assert interval.gamma_below_upper_exact(0.5, F(1, 4), half, "s").passed  # equality allowed
    loose = dataclasses.replace(half, upper=F(1, 2) + F(1, 10**6))  # rational U above the proved bound
    exact_half = LowerBound(0.5, sp.Rational(1, 2), "proved", "h")
    assert interval.interval_gap(loose, exact_half, 1e-9)[1] is True  # decided on the bound's square, not U^2
    tol = 2.0**-10
    edge = _ub(U2=F(1, 4) * (1 + F(tol)) ** 2)
    assert interval.interval_gap(edge, exact_half, tol)[1] is True
    between = _ub(U2=F(1, 4) * (1 + F(tol)) ** 2 * (1 + F(tol) / 2))
    assert interval.interval_gap(between, exact_half, tol)[1] is False
    fl = LowerBound(0.5, None, "float", "h")
    assert interval.interval_gap(half, fl, tol)[1] is True  # L = U allowed
    top = interval.TaskUpperBound("t", F(1, 2) * (1 + F(tol)), None, [], "h")
    assert interval.interval_gap(top, fl, tol)[1] is True  # U = (1 + tol) L allowed
    zero = LowerBound(0.0, None, "float", "h", 1e-3)
    assert interval.interval_checks(half, zero, gamma=None, gamma_below_upper=None, applicable=True,
                                    rtol=None)[2].tolerance == 1e-9
    irrational = LowerBound(0.5, sp.sqrt(sp.pi) / 4, "proved", "h")  # proved but L^2 not rational: the float route
    assert interval.interval_checks(half, irrational, gamma=None, gamma_below_upper=None, applicable=True,
                                    rtol=None)[2].exactness == "certified"


def test_attach_passes_its_arguments():
    ub = _ub()
    res = VerificationResult("t")
    res.set_margin(MarginMeasurement(value=0.3, error_bound=0.0, exactness="float", method="exhaustive", how="m"))
    g = Check(name="gamma* <= U", expected=0.5, measured=0.5, tolerance=0.0, passed=True)
    interval.attach_interval(res, ub, gamma=0.3, gamma_below_upper=g, applicable=False, rtol=0.99)
    assert res.checks[0].expected == 0.3 and res.checks[2] is g
    gap = res.checks[3]
    assert gap.informational and gap.tolerance == 0.99 and gap.passed  # rtol reached the row: (0.5-0.3)/0.3 <= 0.99


def test_group_boundaries_that_survived_the_first_gate_run(monkeypatch):
    assert characters.exact_character_facts(symmetric_group(3), real_irreps(symmetric_group(3))).summary().count(
        "delta exact;") == 1
    table = [[1, 1, 1], [2, -1, 0], [1, 1, -1]]  # S_3: classes e, 3-cycles, transpositions
    U2, brackets, ok = gub.dual_bound_squared(table, 6, [F(1), F(0)])
    assert brackets == [F(3), F(0)] and ok is True and U2 == gub.kappa_squared(6, 2) * 9  # a zero bracket is fine
    with pytest.raises(ValueError):
        gub.dual_bound_squared(table, 6, [F(1)])  # a dual of the wrong length is refused
    with pytest.raises(ValueError) as exc:
        gub.rational_dual(np.array([0.0]))
    assert str(exc.value) == "the dual class weights have no positive entry"

    def facts(tab, order):
        return characters.ExactCharacters(tab, [1] * len(tab), order, True, True, True, True, [F(1)] * len(tab), 0.0)

    steps, U2, U = gub._dual_steps(facts([[1, 1], [1, 5]], 2), [F(1)])  # a negative bracket
    assert not steps[2].passed
    steps, U2, U = gub._dual_steps(facts([[1, 1], [1, 1]], 2), [F(1)])  # U = 0 exactly
    assert steps[2].passed and U2 == 0 and U == 0
    steps, U2, U = gub._dual_steps(facts([[1, 1], [1, -9]], 2), [F(1)])  # U^2 > 1
    assert steps[2].passed and U2 == F(400, 216)
    steps, U2, U = gub._dual_steps(facts([[1, 1], [1, -53]], 12), [F(1)])  # U^2 = 1/4: U = 1/2 exactly
    assert steps[2].passed and U2 == F(1, 4) and U == F(1, 2)
    steps, _, _ = gub._dual_steps(facts([[1, 1, 1], [1, 1, -1]], 2), [F(1), F(0)])  # a zero weight is valid
    assert steps[1].passed and steps[1].detail == "1 of 2 classes weighted; grid 2^-60, scaled to sum 1"
    G = symmetric_group(3)
    irreps = real_irreps(G)
    X = character_table(G, irreps)
    lp = gm.solve_class_lp(X, 6, np.array([R.dim for R in irreps]))
    assert gub.real_group_upper_bound(G, irreps, lp.pi).seconds < 60
    monkeypatch.setattr(characters, "exact_character_table", lambda g: [[1, 1, 1], [2, 0, 0], [1, 1, -1]])
    with pytest.raises(SolverError) as err:
        gub.real_group_upper_bound(G, irreps, lp.pi)
    assert str(err.value).startswith("upper bound for S3: step failed: character table")
    monkeypatch.undo()
    c5 = gub.cyclic_upper_bound(5, 2 * 2**30)
    assert gub.cyclic_gamma_check(9, c5) is not None and gub.cyclic_gamma_check(4, c5) is None


def test_formula_row_at_equality_and_below():
    rational = interval.TaskUpperBound("t", F(2, 9), None, [], "h")  # dims (1, 1), |G| = 3: formula = 2/9 exactly
    row = gub.formula_below_upper_check([1, 1], 3, rational)
    assert row.passed and row.exactness == "proved" and row.expected == pytest.approx(2 / 9, rel=1e-15)
    below = gub.formula_below_upper_check([1, 1], 3, dataclasses.replace(rational, upper=F(2, 9) - F(1, 10**30)))
    assert not below.passed and below.exactness == "proved"


def test_parity_boundaries_that_survived_the_first_gate_run():
    for n, k in ((3, 1), (5, 2), (6, 3)):
        for degree in (k + 2, k + 4):
            brute = sum(1 for a in itertools.product(range(degree + 1), repeat=n) if sum(a) == degree
                        and all(a[j] % 2 == 1 for j in range(k)) and all(a[j] % 2 == 0 for j in range(k, n)))
            assert maxmin.surviving_exponents(n, k, degree) == brute
    assert maxmin.surviving_exponents(6, 3) == maxmin.surviving_exponents(6, 3, 3) == 1
    ub3 = maxmin.parity_upper_bound(4, 3)
    assert maxmin.gamma_below_upper_check(3, ub3).detail.startswith("gamma*^2 = 9/32, equal")  # 2 * 36 / 4^4


def test_construction_margin_counts_the_patterns_it_evaluated(monkeypatch):
    assert maxmin.construction_margin_squared(4)[1] == 16
    real_unique = np.unique
    monkeypatch.setattr(np, "unique", lambda a, axis=None: real_unique(a, axis=axis)[:3])
    assert maxmin.construction_margin_squared(4)[1] == 3  # the count is of distinct rows, not of the array's length
    monkeypatch.undo()
    real_ones = np.ones
    monkeypatch.setattr(np, "ones", lambda shape, dtype=None: real_ones(shape, float))
    with pytest.raises(TypeError, match="must be computed in integers"):
        maxmin.construction_margin_squared(3)


def test_the_last_survivors_that_are_not_equivalent():
    from margintheory.errors import RefusedError

    with pytest.raises(RefusedError, match="max_memory = 1000 bytes"):
        gub.cyclic_upper_bound(5, 1000)  # the budget reaches the SOS solve
    res = VerificationResult("t")
    res.set_margin(MarginMeasurement(value=0.5, error_bound=0.0, exactness="float", method="exhaustive", how="m"))
    interval.attach_interval(res, _ub(), gamma=None, gamma_below_upper=None, applicable=True, rtol=None)
    gap = res.checks[2]
    assert gap.name == "network margin = optimum" and not gap.informational and "hypothesis" not in gap.detail


def test_a_dual_with_one_grid_step_is_still_a_dual():
    assert gub.rational_dual(np.array([2.0**-60, 0.0])) == [F(1), F(0)]  # numerator sum 1: positive, accepted
