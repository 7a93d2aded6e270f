"""The max margin at even ``p``, a theorem (docs/theory.md#even-p-max-margin): ``gamma_even(p, k) = gamma*(p, k)
(p-1) r / (1 + (p-2) r)``, ``r = 2^((k-1)/2)``.

Proved for every even ``p`` as identities in ``p = 2n`` (:mod:`margintheory.symbolic.even_p`,
``verify --k K --every-p --even``), specialised by ``verify --p P --k K`` at even ``P``, cross-checked against the
per-``p`` linear program, and written as a certificate file that ``check`` re-checks exactly."""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction

import pytest
import sympy as sp

from margintheory import verify
from margintheory.certificate import checker
from margintheory.core.problems import ModularAddition, ModularAdditionEveryP
from margintheory.core.theory import gamma_star_exact_of
from margintheory.errors import InputError
from margintheory.presentation.schema import validate_result
from margintheory.solvers import even_p as solver
from margintheory.symbolic import even_p as sym
from margintheory.tasks.modular_addition import every_even_p
from margintheory.tasks.modular_addition.every_p import network_side

MEMORY = 2 * 2**30


# -- the identities in n, and what a wrong ratio does to them --------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3])
def test_the_identities_hold_with_the_true_ratio(k):
    net = network_side("lemma-c18", k)
    r = sym.true_ratio(k)
    dual, nw, opt = sym.dual_side(k), sym.network_side(k, net.logit_scale, net.per_frequency_weight), sym.optimality(k)
    assert sym.character_sums_hold() and sym.half_sum_to_product_holds(k)
    assert sym.block_ratio(k, r).holds
    assert dual.blocks_equal.holds and dual.value.holds and dual.nonnegative
    assert nw.kc_is_c.holds and nw.kr_is_r_kc.holds and nw.cost_one.holds and nw.norm_is_half_p
    assert nw.margins_equal.holds and nw.value.holds
    assert opt.kappa_sum.holds and opt.balance.holds and opt.value.holds


@pytest.mark.parametrize(("k", "wrong"), [(2, sp.Integer(1)), (2, sp.Integer(2)), (2, sp.sqrt(2) * sp.Rational(11, 10)),
                                          (3, sp.Integer(1)), (3, sp.sqrt(2))])
def test_a_wrong_ratio_breaks_the_identities(k, wrong):
    """``r = 1`` is the odd-p (uniform) weighting, ``2^(k/2)`` and ``1.1 r`` are near misses: the dual no longer
    equalizes the blocks, the network's margin is not the same at odd and even wrong labels, and neither value is
    gamma_even."""
    net = network_side("lemma-c18", k)
    dual, nw = sym.dual_side(k, wrong), sym.network_side(k, net.logit_scale, net.per_frequency_weight, wrong)
    assert not sym.block_ratio(k, wrong).holds
    assert not dual.blocks_equal.holds and not dual.value.holds
    assert not nw.margins_equal.holds and not nw.value.holds
    assert not sym.optimality(k, wrong).value.holds


def test_the_closed_form_values():
    """``3/(8p(2p-3))`` at k = 3, ``2/(3 sqrt(3p)(1 + (p-2) sqrt 2))`` at k = 2, and ``gamma*`` itself at k = 1."""
    for p in (4, 6, 10, 10**12):
        assert sym.gamma_even(p, 3) == sp.Rational(3, 8 * p * (2 * p - 3))
        k2 = 2 / (3 * sp.sqrt(3 * p) * (1 + (p - 2) * sp.sqrt(2)))
        assert sp.simplify(sym.gamma_even(p, 2) - k2) == 0
        assert sp.simplify(sym.gamma_even(p, 1) - gamma_star_exact_of(p, 1)) == 0
    assert sym.gamma_even(6, 2) > gamma_star_exact_of(6, 2)


@pytest.fixture(scope="module")
def theorem_k2():
    return verify(ModularAdditionEveryP(2, even=True), max_memory=MEMORY)


def test_verify_every_even_p_proves_it(theorem_k2):
    res = theorem_k2
    assert res.verdict == "verified" and res.exit_code == 0
    assert all(c.passed for c in res.checks)
    assert {c.exactness for c in res.checks} == {"proved", "argued"}
    assert all(c.informational for c in res.checks if c.exactness == "argued")
    names = {c.name for c in res.checks}
    assert {"L(p) = gamma_even(p, k)", "U: both blocks equal", "L = U = gamma_even(p, k)",
            "U: c'/c = r (all even p)", "max margin in [L, U], all p"} <= names
    assert res.parameters["even"] is True and res.parameters["k"] == 2
    validate_result(json.loads(json.dumps(res.to_dict())))


def test_verify_every_even_p_turns_red_on_a_wrong_ratio(monkeypatch):
    """The task's rows read the ratio from :func:`symbolic.even_p.true_ratio`: a wrong one (the odd-p weighting
    r = 1 at k = 2) must make a deciding row fail, not only a number change."""
    monkeypatch.setattr(sym, "true_ratio", lambda k: sp.Integer(1))
    res = every_even_p.verify_every_even_p(ModularAdditionEveryP(2, even=True), max_memory=MEMORY)
    failed = {c.name for c in res.checks if not c.passed and not c.informational}
    assert {"U: c'/c = r (all even p)", "U: both blocks equal", "per unit cost: C and r C"} <= failed
    assert res.exit_code == 1


def test_every_even_p_refuses_what_it_does_not_prove():
    with pytest.raises(InputError):
        every_even_p.verify_every_even_p(ModularAdditionEveryP(2), max_memory=MEMORY)
    with pytest.raises(InputError):
        every_even_p.verify_every_even_p(ModularAdditionEveryP(2, even=True), family="parity-design")
    with pytest.raises(InputError):
        ModularAdditionEveryP(2, even=1)  # type: ignore[arg-type]


# -- one even p: the closed form, and the per-p linear program as a cross-check --------------------------------------


@pytest.mark.parametrize("k", [2, 3])
def test_the_closed_form_agrees_with_the_per_p_lp(k):
    """p = 4..14: the LP over the frequency weights (HiGHS, float64) agrees with gamma_even to 1e-12, and lies in the
    proved bracket that verify reports (the closed form rounded down, rho_k times it rounded up)."""
    for p in range(4, 15, 2):
        cf = every_even_p.closed_form_at(p, k, max_memory=MEMORY)
        _, profile, lp = solver.optimal_frequency_weights(p, k)
        exact = float(sp.N(cf["exact"], 30))
        assert abs(lp / exact - 1) < 1e-12, (p, k, lp, exact)
        assert cf["lower"] <= exact <= cf["upper"] and cf["upper"] / cf["lower"] - 1 < 1e-9
        assert cf["proved"]
        t = cf["dual"]  # the theorem's dual, normalized: two values, the even one 2r - 1 times the odd one
        assert sp.simplify(sum(t) - 1) == 0 and t[0] == 0
        assert sp.simplify(t[2] / t[1] - (2 * sym.true_ratio(k) - 1)) == 0
        # the LP's (symmetrised) optimal dual is the same profile (the optimum is unique up to float64)
        assert max(abs(float(profile[d]) / sum(profile) - float(t[d])) for d in range(p)) < 1e-9


def test_verify_at_even_p_reports_the_closed_form_and_the_lp_cross_check():
    res = verify(ModularAddition(4, 2), max_memory=MEMORY)
    rows = {c.name: c for c in res.checks}
    assert rows["max margin = gamma_even"].passed and rows["max margin = gamma_even"].exactness == "proved"
    assert rows["closed form in [L, U]"].passed and not rows["closed form in [L, U]"].informational
    c = res.certificate
    g = sym.gamma_even(4, 2)
    assert c["max_margin_exact"] == sp.sstr(g) and c["lower"] <= float(g) <= c["upper"]
    assert (c["lower_exactness"], c["upper_exactness"]) == ("proved", "proved")
    assert c["per_p_lp"]["lower"] <= float(g) <= c["per_p_lp"]["upper"]
    assert res.verdict == "not-applicable" and res.exit_code == 0


def test_verify_at_a_huge_even_p_is_the_closed_form(capsys):
    """P = 10^12, k = 3: no per-p LP, no construction check (noted), the exact closed form 3/(8P(2P-3))."""
    from margintheory.cli import main

    p = 10**12
    assert main(["verify", "--p", str(p), "--k", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate_result(doc)
    c = doc["certificate"]
    assert Fraction(c["max_margin_exact"]) == Fraction(3, 8 * p * (2 * p - 3))
    assert c["lower"] <= 3 / (8 * p * (2 * p - 3)) <= c["upper"] and "per_p_lp" not in c
    assert any("linear program" in n for n in doc["notes"]) and any("skipped" in n for n in doc["notes"])


# -- the certificate file and its independent checker ---------------------------------------------------------------


@pytest.fixture(scope="module")
def doc6():
    return solver.even_p_certificate_document(ModularAddition(6, 2), max_memory=MEMORY)


def _status(doc):
    out = checker.check_data(doc)
    return out.status, out.message


def test_the_even_p_certificate_is_the_true_max_margin_and_checks(doc6):
    status, message = _status(doc6)
    assert status == "valid", message
    g = float(sym.gamma_even(6, 2))
    upper = Fraction(doc6["claim"]["upper"])
    assert g <= float(upper) <= g * (1 + 1e-9)  # not the uniform chain's 0.0314
    assert "lower_witness" in doc6 and len(doc6["lower_witness"]["U"]) == solver.width_of(6, 2)
    names = [s.name for s in checker.check_data(doc6).steps]
    assert any(n.startswith("closed form: the network") for n in names)
    assert any(n.startswith("lower bound: exact margin") for n in names)


def _tampered(doc, path, value):
    bad = copy.deepcopy(doc)
    obj = bad
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    return bad


@pytest.mark.parametrize(("path", "value", "step"), [
    (("even_p", "dual", "even"), ["1", "0"], "upper bound U >= ((p-1)/(p T))"),  # the uniform dual
    (("even_p", "dual", "odd"), ["1000001/1000000", "0"], "upper bound U >= ((p-1)/(p T))"),  # 1e-6 off
    (("even_p", "ratio"), ["2", "0"], "ratio r^2"),
    (("even_p", "ratio"), ["0", "-1"], "ratio r^2"),
    (("even_p", "network", "real"), ["16/31", "-2/31"], "closed form: the network"),
    (("even_p", "max_margin_squared"), ["22/25947", "-16/77840"], "closed form: the dual"),
    (("claim", "upper"), "1/43", "upper bound U >= ((p-1)/(p T))"),
])
def test_the_checker_refuses_a_tampered_even_p_certificate(doc6, path, value, step):
    out = checker.check_data(_tampered(doc6, path, value))
    assert out.status == "invalid", out.message
    assert step in out.message


def test_the_even_p_section_is_read_strictly(doc6):
    extra = _tampered(doc6, ("even_p", "kappa"), ["1", "0"])
    assert checker.check_data(extra).status == "unreadable"
    garbled = _tampered(doc6, ("even_p", "ratio"), ["0", "1", "2"])
    assert checker.check_data(garbled).status == "unreadable"
    odd = _tampered(doc6, ("p",), 7)
    del odd["lower_witness"]
    for part in ("reduction", "sos"):
        odd[part]["p"] = 7
    assert "even p" in checker.check_data(odd).message


def test_q_sqrt2_sign_is_exact():
    near = (Fraction(99, 70), Fraction(-1))  # 99/70 - sqrt 2 > 0 (99^2 = 9801 > 2 * 70^2 = 9800)
    assert checker.q2_sign(near) == 1 and checker.q2_sign((-near[0], -near[1])) == -1
    assert checker.q2_sign((Fraction(140, 99), Fraction(-1))) == -1  # 140/99 < sqrt 2
    assert checker.q2_sign((Fraction(0), Fraction(0))) == 0
    x = (Fraction(3), Fraction(-2))
    assert checker.q2_mul(checker.q2_div(x, (Fraction(1), Fraction(1))), (Fraction(1), Fraction(1))) == x
    assert math.isclose(float(x[0]) + float(x[1]) * math.sqrt(2), 3 - 2 * math.sqrt(2))


def test_verify_writes_the_even_p_certificate_and_check_accepts_it(tmp_path, capsys):
    from margintheory.cli import main

    path = tmp_path / "c.json"
    assert main(["verify", "--p", "4", "--k", "2", "--certificate", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert "even_p" in doc and float(Fraction(doc["claim"]["upper"])) < 1.001 * float(sym.gamma_even(4, 2))
    capsys.readouterr()
    assert main(["check", str(path)]) == 0
    assert "closed form" in capsys.readouterr().out


def test_even_goes_with_every_p(capsys):
    from margintheory.cli import main

    assert main(["verify", "--p", "6", "--k", "2", "--even"]) == 2
    assert "--even goes with --every-p" in capsys.readouterr().err


def test_a_checked_network_is_compared_with_the_closed_form_beyond_the_lp():
    """p = 66 > 64 (no per-p LP): the construction's exact margin is still compared with U = rho_k gamma_even."""
    res = verify(ModularAddition(66, 3), max_memory=MEMORY)
    rows = {c.name: c for c in res.checks}
    row = rows["checked network <= U"]
    assert row.passed and not row.informational and row.measured < float(sym.gamma_even(66, 3))
    assert "closed form in [L, U]" not in rows and res.exit_code == 0


def test_the_closed_form_rows_measure_the_network_and_the_dual_at_p(monkeypatch):
    """At a given even p the measured ends are the network's margins and the dual's value evaluated at n = p/2 from
    their own expressions: a dual whose value is off by a factor fails the rows (they are not gamma_even restated)."""
    import dataclasses

    from margintheory.symbolic import even_p as sym
    from margintheory.tasks.modular_addition import every_even_p as evp

    assert evp.closed_form_at(8, 2, max_memory=2**31)["ends_equal_gamma_even"]
    real = sym.dual_side

    def off(k, *a, **kw):  # noqa: ANN001, ANN202 - the patched dual_side
        return dataclasses.replace(real(k, *a, **kw), psi_complex=real(k).psi_complex * 1.001)

    monkeypatch.setattr(sym, "dual_side", off)
    cf = evp.closed_form_at(8, 2, max_memory=2**31)
    assert not cf["ends_equal_gamma_even"] and not cf["proved"]
