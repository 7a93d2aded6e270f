"""CoGO (Tian, arXiv:2410.01779): Theorem 1 vs forward pass, semi-ring homomorphism, Table 1, Corollaries 2-5."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core import theory
from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import exhaustive_margin
from margintheory.errors import InputError
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import (
    A,
    B,
    Z,
    forward_loss,
    from_network,
    one,
    r_abc,
    r_pp,
    theorem1_loss,
    to_network,
)
from margintheory.tasks.cogo.lemma1_checks import potential_sets
from margintheory.tasks.cogo.margin import memorization_margin
from margintheory.tasks.cogo.task import verify_cogo


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 9), q=st.integers(1, 6), seed=st.integers(0, 2**31 - 1))
def test_theorem1_matches_forward_pass(d: int, q: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(q, 2, d))
    U -= U.mean(axis=2, keepdims=True)  # Theorem 1's zero-mean assumption
    net = PolyNetwork(U, rng.normal(size=(q, d)))
    z = from_network(net)
    assert z.hermitian_error() < 1e-12
    back, imag = to_network(z)
    assert imag < 1e-12 and np.allclose(back.U, net.U) and np.allclose(back.W, net.W)
    fl = forward_loss(net)
    assert theorem1_loss(z).total == pytest.approx(fl, rel=1e-10, abs=1e-12)


@settings(max_examples=15, deadline=None)
@given(d=st.integers(2, 7), q1=st.integers(1, 4), q2=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_potentials_are_ring_homomorphisms(d: int, q1: int, q2: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    z1 = Z(rng.normal(size=(3, d, q1)) + 1j * rng.normal(size=(3, d, q1)))
    z2 = Z(rng.normal(size=(3, d, q2)) + 1j * rng.normal(size=(3, d, q2)))
    for r in (r_abc, lambda z: r_pp(z, A), lambda z: r_pp(z, B)):
        assert np.allclose(r(z1 + z2), r(z1) + r(z2))
        assert np.allclose(r(z1 * z2), r(z1) * r(z2))
    ones = r_abc(one(d))[1:, 1:, 1:]
    assert np.allclose(ones, 1)
    assert (z1 * z2).order == q1 * q2 and (z1 + z2).order == q1 + q2


def test_table1_stated_potentials() -> None:
    """Every Table 1 cell matches except four cells of the u_nu row, which are conjugated (nu <-> conj nu)."""
    nu = cc.DEFAULT_NU
    mismatched = set()
    for name, (stated, order) in cc.table1_stated(nu).items():
        got = cc.single_frequency_mps(cc.generator(7, 1, name, nu), 1)
        for i in range(9):
            if abs(got[i] - stated[i]) > 1e-9:
                mismatched.add((name, cc.MP_NAMES[i]))
                assert abs(got[i] - np.conj(stated[i])) < 1e-9
        rho, roots = cc.maximal_polynomial(cc.generator(7, 1, name, nu), 1)
        if order is not None:
            assert rho.order == order
            vals = cc.all_single_frequency_values(rho, 1)
            before = cc.all_single_frequency_values(cc.generator(7, 1, name, nu), 1)
            assert np.abs(vals[np.abs(before - 1) > 1e-9]).max() < 1e-12
    assert mismatched == {("u_nu", "ābc"), ("u_nu", "ab̄c"), ("u_nu", "āāc"), ("u_nu", "b̄b̄c")}


@pytest.mark.parametrize("d", [3, 5, 7, 9])
def test_f6_odd_is_zero_loss_and_max_margin(d: int) -> None:
    for nu in (1.0, np.exp(0.9j)):
        con = cc.build_f6(d, nu)
        assert con.z.order == 3 * (d - 1)
        sets = potential_sets(con.z)
        assert max(sets["R_g"], sets["R_c"], sets["R_n"], sets["R_*"]) < 1e-12
        net, _ = to_network(con.z)
        assert forward_loss(net) < 1e-12
        res = exhaustive_margin(net.normalized())
        assert res.normalized_margin == pytest.approx(theory.gamma_star(d, 2), rel=1e-12)


@pytest.mark.parametrize("d", [4, 6, 8])
def test_f6_even_paper_loss_and_correction(d: int) -> None:
    """At frequency d/2 the paper's rule gives r = 2/6: loss (1 - 1/3)^2 / d = 4/(9d); 2^(-1/3) fixes it."""
    paper = forward_loss(to_network(cc.build_f6(d).z)[0])
    assert paper == pytest.approx(4 / (9 * d), rel=1e-10)
    assert forward_loss(to_network(cc.build_f6(d, variant="corrected").z)[0]) < 1e-12


@pytest.mark.parametrize("d", [5, 7, 9, 11])
def test_f4_only_misses_r_n(d: int) -> None:
    con = cc.build_f4(d)
    sets = potential_sets(con.z)
    assert sets["R_c"] < 1e-12 and sets["R_*"] < 1e-12 and sets["R_g"] < 1e-12
    assert sets["R_n"] > 0.1
    # each of the d-1 frequencies leaves sum_p sum_k' r_p[k',-k',k] = 2 (1 + i): loss 1/4 |2(1+i)|^2 (d-1) / d
    assert forward_loss(to_network(con.z)[0]) == pytest.approx(2 * (d - 1) / d, rel=1e-10)


@pytest.mark.parametrize("d", [5, 7, 9, 11])
def test_f46_paper_bias_and_corrected_bias(d: int) -> None:
    """With Eq. 65's bias -(1+i)/3 each of the d-3 order-4 frequencies leaves 2(1+i)/3: loss 2(d-3)/(9d)."""
    paper = cc.build_f46(d)
    assert paper.z.order == 2 * d
    assert forward_loss(to_network(paper.z)[0]) == pytest.approx(2 * (d - 3) / (9 * d), rel=1e-9, abs=1e-14)
    fixed = cc.build_f46(d, variant="corrected")
    assert forward_loss(to_network(fixed.z)[0]) < 1e-12
    sets = potential_sets(fixed.z)
    assert sets["R_n_summed"] < 1e-12 and (d == 5 or sets["R_n"] > 0.1) and sets["R_*"] < 1e-12


@pytest.mark.parametrize("d", [5, 6, 7])
def test_memorization_is_zero_loss(d: int) -> None:
    con = cc.build_memorization(d)
    assert con.z.order == d * d
    net = to_network(con.z)[0]
    assert forward_loss(net) < 1e-12
    assert exhaustive_margin(net.normalized()).normalized_margin == pytest.approx(memorization_margin(d), rel=1e-12)


def test_verify_cogo_results() -> None:
    assert verify_cogo("F6", 7).verdict == "verified"
    assert verify_cogo("memorize", 5).verdict == "verified"
    r = verify_cogo("F46", 7)
    assert r.verdict == "refuted" and r.fields["corrected"]["loss"] < 1e-12
    with pytest.raises(InputError):
        verify_cogo("F46", 3)
    with pytest.raises(InputError):
        verify_cogo("F6", 1)
