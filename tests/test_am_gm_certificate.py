"""The exact AM-GM certificate of ``max_{|z|=1} g_k = (k+1)^-((k+1)/2)`` and the upper end ``U = gamma*`` it gives.

What each test would catch: a certificate (or a checker) that accepts a constant slightly off the true maximum, in
either direction; a quotient of a two-variable step that is wrong, negative or missing; a block form whose modulus
identity does not hold; an upper end that is not exactly ``gamma*`` at the sizes the SOS path refuses; a certificate
file whose AM-GM section the independent checker does not re-check.
"""

from __future__ import annotations

import json
import math
import time
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from margintheory.certificate import am_gm, checker
from margintheory.certificate.upper_bound import certificate_document, prove_upper_bound
from margintheory.core.theory import gamma_star_exact

F = Fraction


def _gamma_squared(p: int, k: int) -> Fraction:
    g2 = sp.expand(gamma_star_exact(p, k) ** 2)
    assert g2.is_Rational
    return F(int(g2.p), int(g2.q))


def test_the_maximum_of_g_k_is_proved_exactly_for_every_k_to_32_in_milliseconds():
    t0 = time.perf_counter()
    for k in range(1, 33):
        cert = am_gm.block_form_maximum(k)
        assert cert.proved, cert.detail
        assert cert.bound_squared == F(1, (k + 1) ** (k + 1))
        assert cert.bound * cert.bound >= cert.bound_squared  # the rational bound is above the maximum
        if k % 2 == 1 or k == 8:  # (k+1)^-((k+1)/2) rational: odd k, and k + 1 = 9
            assert cert.bound**2 == cert.bound_squared
    assert time.perf_counter() - t0 < 5.0  # measured about 0.1 s for all 32


@pytest.mark.parametrize("factor", [1 - F(1, 10**12), 1 + F(1, 10**12)])
@pytest.mark.parametrize("k", [2, 3, 12])
def test_a_constant_off_the_maximum_is_refused(k, factor):
    """(k+1)^-((k+1)/2) times 1 -+ 1e-12: below the maximum is not an upper bound (the aligned point exceeds it);
    above it the claimed equality is false."""
    exact = F(1, (k + 1) ** (k + 1))
    wrong = am_gm.block_form_maximum(k, bound_squared=exact * factor**2)
    assert not wrong.proved and "FAILED" in wrong.detail
    failure = checker.check_am_gm(k, exact * factor**2, _steps(k))
    assert failure is not None and failure[0].startswith("max_{|z|=1} g_k")
    assert checker.check_am_gm(k, exact, _steps(k)) is None


def _steps(k: int) -> list[tuple[int, list[Fraction]]]:
    return [(M, [F(c) for c in am_gm.step_quotient(M)[0]]) for M in range(2, k + 2)]


def test_a_wrong_negative_or_missing_quotient_is_refused():
    k, exact = 4, F(1, 5**5)
    steps = _steps(k)
    bumped = [(M, [c + (1 if (M, j) == (4, 1) else 0) for j, c in enumerate(q)]) for M, q in steps]
    assert checker.check_am_gm(k, exact, bumped)[0] == "AM-GM chain of two-variable steps"
    assert checker.check_am_gm(k, exact, steps[:-1])[0] == "AM-GM chain of two-variable steps"
    assert checker.check_am_gm(k, exact, steps[1:] + steps[:1])[0] == "AM-GM chain of two-variable steps"
    # p_2 = (t - 1)^2 = (t - 1)^2 * 1 only: a negative coefficient elsewhere is refused even where the product is
    # right, and the quotient of a wrong degree is refused
    ok, why = checker.am_gm_step_holds(3, [F(8), F(1), F(0)])
    assert not ok and "degree" in why
    ok, why = checker.am_gm_step_holds(2, [F(-1)])
    assert not ok and "negative" in why


def test_the_modulus_identity_is_checked_against_the_block_form(monkeypatch):
    for k in (1, 2, 5, 12):
        assert checker.modulus_identity_holds(k)
    right = checker.block_form
    monkeypatch.setattr(checker, "block_form", lambda k: {m: 2 * c for m, c in right(k).items()})
    assert not checker.modulus_identity_holds(3)
    assert checker.check_am_gm(3, F(1, 4**4), _steps(3))[0].startswith("|g_k| <= |z_w|")


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_the_maximum_agrees_with_the_form_evaluated_in_floats(k):
    """An independent oracle: g_k on random unit vectors never exceeds (k+1)^-((k+1)/2), and the aligned
    equal-modulus point attains it."""
    rng = np.random.default_rng(k)
    z = rng.normal(size=(20000, k + 1)) + 1j * rng.normal(size=(20000, k + 1))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    g = np.real(np.conj(z[:, k]) * np.prod(z[:, :k], axis=1))
    bound = (k + 1) ** (-(k + 1) / 2)
    assert g.max() <= bound * (1 + 1e-12)
    x = np.full(k + 1, (k + 1) ** -0.5)
    assert math.isclose(float(np.prod(x[:k]) * x[k]), bound, rel_tol=1e-14)


@pytest.mark.parametrize("p, k", [(10007, 3), (1009, 9), (101, 12), (101, 32)])
def test_the_upper_end_is_gamma_star_exactly_where_the_sos_path_refuses(p, k):
    t0 = time.perf_counter()
    ub = prove_upper_bound(p, k, method="am-gm", exact_reduction=False)
    assert time.perf_counter() - t0 < 5.0  # (Lemma C.14's sympy proof is cached per k; the bound itself: ms)
    assert ub.upper_squared == _gamma_squared(p, k) and ub.method == "am-gm" and ub.sos is None
    assert ub.upper * ub.upper >= ub.upper_squared and ub.upper_float >= float(gamma_star_exact(p, k))


def test_the_sos_bound_is_a_cross_check_above_the_exact_maximum():
    sos = prove_upper_bound(7, 3, method="sos")
    exact = prove_upper_bound(7, 3, method="am-gm")
    assert exact.upper_squared == _gamma_squared(7, 3) < sos.upper_squared
    assert F(1, 4**4) <= sos.block_bound**2 <= F(1, 4**4) * (1 + F(1, 10**9)) ** 2


def _doc(p: int, k: int) -> dict:
    ub = prove_upper_bound(p, k, method="am-gm")
    lower = ub.upper_text  # the construction's exact margin is gamma* = U
    return json.loads(json.dumps(certificate_document(ub, lower, "proved", "stated", F(0))))


@pytest.mark.parametrize("p, k", [(5, 2), (7, 3)])
def test_the_certificate_file_carries_the_am_gm_form_and_check_re_checks_it(p, k):
    doc = _doc(p, k)
    assert "sos" not in doc and doc["am_gm"]["bound_squared"] == str(F(1, (k + 1) ** (k + 1)))
    out = checker.check_data(doc)
    assert out.status == "valid", out.message
    names = [s.name for s in out.steps if s.exactness == "proved"]
    assert checker.AM_GM_STEP in names and "AM-GM chain of two-variable steps" in names
    assert any("exactly" in s.detail for s in out.steps if s.name.startswith("upper bound U"))
    # U squared equals gamma*^2: the claimed gap 0 is checked, not assumed
    text = doc["claim"]["upper"]
    assert (F(text[5:-1]) if text.startswith("sqrt(") else F(text) ** 2) == _gamma_squared(p, k)


def test_the_checker_refuses_a_tampered_am_gm_file():
    doc = _doc(5, 2)
    exact = F(doc["am_gm"]["bound_squared"])
    bad = json.loads(json.dumps(doc))
    bad["am_gm"]["bound_squared"] = str(exact * (1 - F(1, 10**12)) ** 2)
    out = checker.check_data(bad)
    assert out.status == "invalid" and out.steps[-1].name == checker.AM_GM_STEP
    bad = json.loads(json.dumps(doc))
    bad["am_gm"]["steps"][1]["quotient"][0] = "7"  # (2 + t)^3 - 27 t = (t - 1)^2 (t + 8)
    assert checker.check_data(bad).steps[-1].name == "AM-GM chain of two-variable steps"
    bad = json.loads(json.dumps(doc))
    U2 = F(doc["claim"]["upper"][5:-1])
    bad["claim"].update(upper=f"sqrt({U2 * (1 - F(1, 10**12)) ** 2})", lower=None, relative_gap_at_most=None)
    out = checker.check_data(bad)
    assert out.status == "invalid" and out.steps[-1].name == "upper bound U >= c max g_k for every block"
    bad = json.loads(json.dumps(doc))
    bad["claim"]["relative_gap_at_most"] = "0"
    bad["claim"]["lower"] = f"sqrt({U2 * (1 - F(1, 10**12)) ** 2})"  # gap 0 claimed, but L < U
    assert checker.check_data(bad).steps[-1].name == "relative gap (U - L)/L <= claimed"
    bad = json.loads(json.dumps(doc))
    bad["sos"] = {}
    assert checker.check_data(bad).status == "unreadable"
