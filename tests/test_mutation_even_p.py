"""The true max margin at even ``p`` (:mod:`margintheory.solvers.even_p`, docs/theory.md#even-p-max-margin):
both ends, an independent search that never beats ``U``, tampered certificates rejected, the rows that decide.
This module is the test selection of the mutation gate's ``even_p`` area (k = 2 only: one cached SOS solve)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from margintheory.certificate.maxmin import LowerBound
from margintheory.certificate.upper_bound import prove_upper_bound
from margintheory.core.checks import VerificationResult
from margintheory.core.problems import ModularAddition
from margintheory.core.theory import gamma_star_of
from margintheory.engines.margins import exhaustive_margin, input_grid
from margintheory.errors import InputError
from margintheory.presentation.schema import validate_result
from margintheory.solvers import even_p
from margintheory.solvers.class_weighted import blocks_upper_bound, class_weights, objective_on_arrays
from margintheory.solvers.column_generation import orbit_margin_profile, random_unit_neurons
from margintheory.solvers.objective import SingleNeuronObjective


@pytest.fixture(scope="module")
def res6():
    return even_p.even_p_max_margin(ModularAddition(6, 2), max_memory=2 * 2**30)


def test_constants_profiles_and_the_lp():
    c = even_p.frequency_constants(6, 2)
    assert c[1] == c[0] and c[2] == c[0] * math.sqrt(2)
    assert c[0] == pytest.approx(2 * 2 * 6**-3 * (6 / 6) ** 1.5, rel=1e-15)
    A = even_p.frequency_profiles(6, 2)
    assert A.shape == (5, 3) and A[1, 2] == 0.0 and A[0, 2] == pytest.approx(2 * c[2])
    s, t, value = even_p.optimal_frequency_weights(6, 2)
    assert t[0] == 0 and all(t[d] == t[6 - d] for d in range(1, 6)) and abs(t.sum() - 1) < 1e-9
    assert s.sum() == pytest.approx(1.0) and value == pytest.approx(float(even_p.closed_form_max_margin(6, 2)), 1e-12)
    with pytest.raises(InputError, match="odd"):
        even_p.even_p_max_margin(ModularAddition(5, 2), max_memory=2**30)


def test_orbit_profiles_of_the_aligned_neurons_are_the_lp_columns():
    """The LP's columns are the orbit margin profiles of unit single-frequency neurons, computed over all pairs."""
    from margintheory.solvers.fourier_pricing import priced_neuron

    p, k = 6, 2
    A = even_p.frequency_profiles(p, k)
    for j in (1, 2):
        g = priced_neuron(p, k, j, 0.0, np.zeros(k))
        assert np.allclose(orbit_margin_profile(g[:k], g[k]), A[:, j - 1], rtol=0, atol=1e-15)
    alt = (-1.0) ** np.arange(p) / math.sqrt(p * (k + 1))
    assert np.allclose(orbit_margin_profile(np.stack([alt] * k), alt), A[:, 2], atol=1e-15)


def test_both_ends_and_the_gap(res6):
    assert res6.proved and res6.lower.exactness == "proved"
    gap, within, exact = res6.gap()
    assert within and exact and 0 < gap < 1e-9
    assert res6.network.m == even_p.width_of(6, 2) == 18
    measured = exhaustive_margin(res6.network)
    assert abs(measured.normalized_margin - res6.lower.value) <= 1e-13
    conj = even_p.closed_form_max_margin(6, 2)
    assert sp.simplify(conj - (8 - sp.sqrt(2)) / 279) == 0
    assert res6.lower.value <= float(conj) <= res6.upper_float


def test_an_independent_search_never_exceeds_u(res6):
    """Projected gradient ascent on the sphere under the invariant dual, from random restarts, and random networks:
    nothing exceeds the proved ``U`` (weak duality), and the search gets close to it."""
    p, k = 6, 2
    t = res6.profile
    y = input_grid(p, k).sum(axis=1) % p
    tau = t[(np.arange(p)[None, :] - y[:, None]) % p] / t.sum()
    w = class_weights(p, k, q=np.full(p**k, p**-k), tau=tau)
    obj = SingleNeuronObjective(w.pair_weights())
    rng = np.random.default_rng(5)
    best = 0.0
    for _ in range(12):
        x = rng.standard_normal((k + 1) * p)
        x /= np.linalg.norm(x)
        for _ in range(400):
            _, g = obj.value_and_grad(x)
            x = x + 0.5 * (g - (g @ x) * x)  # projected gradient step, then back onto the sphere
            x /= np.linalg.norm(x)
        best = max(best, objective_on_arrays(w, x.reshape(k + 1, p)))
    assert best <= res6.upper_float and best >= 0.999 * res6.upper_float
    U, W = random_unit_neurons(p, k, 30, rng)
    from margintheory.core.network import PolyNetwork

    assert exhaustive_margin(PolyNetwork(U, W)).normalized_margin <= res6.upper_float


def test_a_tampered_certificate_is_rejected(res6):
    ub = prove_upper_bound(ModularAddition(6, 2))
    cert = even_p.even_p_certificate(res6)
    assert even_p.recheck_even_p_certificate(cert, ub) == []
    lowered = {**cert, "upper_exact": str(Fraction(cert["upper_exact"]) * (1 - Fraction(1, 10**8)))}
    assert "below the bound" in even_p.recheck_even_p_certificate(lowered, ub)[0]
    skew = list(cert["dual_profile"])
    skew[1] = str(Fraction(skew[1]) * 2)  # a worse dual: its bound exceeds the claimed upper end
    assert any("below the bound" in r for r in even_p.recheck_even_p_certificate({**cert, "dual_profile": skew}, ub))
    for bad in (["1"] + cert["dual_profile"][1:], ["0", "-1/4"] + cert["dual_profile"][2:], ["0"] * 6,
                cert["dual_profile"][:5], ["0"] + ["1/3"] * 5):
        assert even_p.recheck_even_p_certificate({**cert, "dual_profile": bad}, ub)
    assert "exceeds upper" in even_p.recheck_even_p_certificate({**cert, "lower": cert["upper"] * 2}, ub)[0]
    assert "unreadable" in even_p.recheck_even_p_certificate({"lower": 1}, ub)[0]


def test_the_upper_end_is_the_weighted_closed_form_and_proved_tight():
    """``U`` of a given dual equals ``((p-1)/(p T)) max_b c_b |kappa_b| B`` (the uniform dual gives the uniform
    chain's ``U``), and a bound below the largest block fails its exact comparison."""
    p = 6
    ub = prove_upper_bound(ModularAddition(p, 2))
    uniform = np.array([0.0] + [0.2] * 5)
    U, steps, kb = even_p.invariant_dual_upper(ub, uniform)
    assert all(s.passed for s in steps) and kb.holds
    assert float(U) == pytest.approx(float(ub.upper), rel=1e-12)
    scaled = np.array([0.0] + [2.0] * 5)  # T = 10: the same normalised dual
    assert float(even_p.invariant_dual_upper(ub, scaled)[0]) == pytest.approx(float(U), rel=1e-12)
    _, need, _ = blocks_upper_bound(ub, uniform, Fraction(p - 1, p) / sum(Fraction(x) for x in uniform))
    assert max(need) <= U * U < max(need) * (1 + Fraction(1, 10**12))
    for bad in (np.array([0.1] + [0.2] * 5), np.array([0.0, -0.1] + [0.3] * 4), np.zeros(6)):
        with pytest.raises(InputError):
            even_p.invariant_dual_upper(ub, bad)


def _rows(res, checked=None):
    return {r.name: r for r in even_p.even_p_checks(res, checked)}


def test_the_rows_decide_the_gap_and_the_checked_network(res6):
    rows = _rows(res6)
    assert [n for n, r in rows.items() if not r.informational] == [
        "max margin <= U (invariant)", "true max margin: gap", "closed form in [L, U]"]
    assert all(r.passed for r in rows.values())
    assert rows["true max margin: gap"].exactness == "proved"
    assert rows["closed form in [L, U]"].passed
    assert rows["gamma* formula (even p)"].expected == gamma_star_of(6, 2)
    far = LowerBound(res6.lower.value * (1 - 1e-5), None, "float", "far", 0.0)
    wide = even_p.EvenPMaxMargin(**{**res6.__dict__, "lower": far})
    assert not _rows(wide)["true max margin: gap"].passed
    assert _rows(wide)["closed form in [L, U]"].passed  # still inside the wider interval
    above = LowerBound(res6.upper_float * 1.001, None, "float", "above", 0.0)
    row = _rows(res6, above)["checked network <= U"]
    assert not row.passed and not row.informational
    assert _rows(res6, res6.lower)["checked network <= U"].passed


def test_the_closed_form_row_can_fail(res6, monkeypatch):
    monkeypatch.setattr(even_p, "closed_form_max_margin", lambda p, k: sp.Rational(1, 40))
    assert not _rows(res6)["closed form in [L, U]"].passed


def test_attach_replaces_the_interval_and_keeps_the_verdict(res6):
    result = VerificationResult(title="t", applicable=False, task="modular-addition", parameters={"p": 6, "k": 2})
    even_p.attach_even_p(result, ModularAddition(6, 2), max_memory=2 * 2**30)
    c = result.certificate
    assert result.verdict == "not-applicable" and result.exit_code == 0
    assert c["lower"] == res6.lower.value and c["upper"] == res6.upper_float and c["upper_exactness"] == "proved"
    assert Fraction(c["upper_exact"]) == res6.upper and c["relative_gap"] < 1e-9
    assert "not-applicable" in result.notes[-1] and "true max margin" in result.fields["max_margin_interval"]


def test_estimate_sizes_the_leg_and_refuses_up_front():
    small = even_p.estimate_even_p(ModularAddition(6, 2), 2**30)
    big = even_p.estimate_even_p(ModularAddition(12, 3), 2**30)
    assert 0 < small.bytes < big.bytes and small.seconds > 0 and big.seconds > 0
    from margintheory.errors import RefusedError

    with pytest.raises(RefusedError):
        even_p.even_p_max_margin(ModularAddition(6, 2), max_memory=1000)


def test_verify_cli_at_even_p_reports_the_true_max_margin():
    out = subprocess.run([sys.executable, "-m", "margintheory.cli", "verify", "--p", "4", "--k", "2", "--json"],
                         capture_output=True, text=True, timeout=300)
    doc = json.loads(out.stdout)
    validate_result(doc)
    mine = [c for c in doc["checks"] if c["name"] in ("max margin <= U (invariant)", "true max margin: gap",
                                                        "checked network <= U")]
    assert len(mine) == 3 and all(c["passed"] and not c["informational"] for c in mine)
    c = doc["certificate"]
    assert doc["verdict"] == "not-applicable" and c["relative_gap"] <= 1e-6
    assert c["lower"] <= float(even_p.closed_form_max_margin(4, 2)) <= c["upper"]
    assert c["lower"] > 1.1 * gamma_star_of(4, 2)


def test_the_rows_and_steps_say_what_they_are(res6):
    """The names, exactness labels and roles of the rows and proof steps are what a reader (and the certificate
    file) relies on: a step labelled ``proved`` that is an argument, a deciding row turned informational, or a
    renamed row is a defect no value comparison sees.  Pinned here (the mutation run found these unpinned)."""
    rows = [(c.name, c.exactness, c.informational) for c in even_p.even_p_checks(res6, None)]
    assert rows == [
        ("max margin >= L (network)", "proved", True),
        ("max margin <= U (invariant)", "proved", False),
        ("true max margin: gap", "proved", False),
        ("gamma* formula (even p)", "float", True),
        ("closed form in [L, U]", "proved", False),
    ]
    steps = [(s.name.split(" ")[0], s.exactness, s.passed) for s in res6.steps]
    assert steps == [("weak", "argued", True), ("Lemma", "proved", True), ("Lemma", "proved", True),
                     ("homogeneity:", "argued", True), ("SOS", "proved", True), ("|kappa_t(j)|^2", "proved", True),
                     ("U", "proved", True)]
    first, *_, kappa, last = res6.steps
    assert first.name == "weak duality with the invariant dual lam(a, c) = t(c - y(a)) / (p^k T)"
    assert "Lemma C.6" in first.detail and "K = I - C(t)/T" in first.detail
    assert kappa.name == "|kappa_t(j)|^2 <= r for every frequency j" and "diagonally dominant" in kappa.detail
    assert last.name.startswith("U >= (p-1)/(p T) c_b |kappa_t(b)| B") and f"U = {res6.upper}" in last.detail
    cert = even_p.even_p_certificate(res6)
    assert (cert["lower_exactness"], cert["upper_exactness"]) == ("proved", "proved")
    assert Fraction(cert["upper_exact"]) == res6.upper and "translation-invariant dual" in cert["upper_how"]
    assert "even p" in cert["of"] and cert["kappa_bound"] == str(res6.kappa.r)
    assert [s["exactness"] for s in cert["steps"]] == [e for _, e, _ in steps]


def test_a_profile_is_any_nonnegative_scale_of_t():
    """``tau = t / T``: a profile scaled below a total of 1 gives the same ``U``; a profile with ``t(0) != 0``, a
    negative entry or no mass is refused."""
    ub = prove_upper_bound(ModularAddition(6, 2), max_memory=2 * 2**30)
    t = np.array([0.0, 0.3, 0.2, 0.1, 0.2, 0.3])
    U = even_p.invariant_dual_upper(ub, t)[0]
    assert even_p.invariant_dual_upper(ub, t * 1e-3)[0] == pytest.approx(U, rel=1e-12)
    for bad in (t + np.eye(6)[0] * 0.1, t - np.eye(6)[2] * 0.3, np.zeros(6)):
        with pytest.raises(InputError, match="invariant dual profile"):
            even_p.invariant_dual_upper(ub, bad)
