"""The computed upper end ``U`` of group composition (Morwani et al. Thm 7.9, Lemmas D.11-D.13) and the checks of
App. D.9.1, App. D.9.2 and Lemma D.11: an independent search (projected gradient ascent on the sphere, on the
class-weighted objective evaluated from its definition) never exceeds ``U``; exact characters against known values; a
tampered table, dual or bound is rejected; each D.9 check fails on a wrong implementation."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from margintheory.core import theory
from margintheory.core.checks import VerificationResult
from margintheory.core.groups import cyclic_group, symmetric_group
from margintheory.core.network import PolyNetwork
from margintheory.core.representations import character_table, real_irreps
from margintheory.engines.margins import exhaustive_margin
from margintheory.errors import SolverError
from margintheory.tasks.groups import characters, fourier_checks
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.groups import upper_bound as gub
from margintheory.tasks.groups.task import attach_group_interval


def _setup(n):
    G = symmetric_group(n)
    irreps = real_irreps(G)
    X = character_table(G, irreps)
    dims = np.array([R.dim for R in irreps])
    return G, irreps, X, dims, gm.solve_class_lp(X, G.order, dims)


def psi_and_gradient(G, u, v, w, tau):
    """The class-weighted single-neuron objective from its definition and its gradient (no irrep used)."""
    order = G.order
    S = np.zeros((order, order))  # (S w)[g] = sum_x tau_x w(g x)
    np.add.at(S, (np.repeat(np.arange(order), order), G.mul.reshape(-1)), np.tile(tau, order))
    A = np.eye(order) - S
    Dw = A @ w
    D = Dw[G.mul]
    Z = u[:, None] + v[None, :]
    psi = float(np.mean(Z**2 * D))
    gu = 2 * (Z * D).sum(1) / order**2
    gv = 2 * (Z * D).sum(0) / order**2
    ztot = np.zeros(order)
    np.add.at(ztot, G.mul.reshape(-1), (Z**2).reshape(-1))
    return psi, np.concatenate([gu, gv, A.T @ ztot / order**2])


@pytest.mark.parametrize("n", [3, 4])
def test_independent_search_never_exceeds_u(n):
    G, irreps, X, dims, lp = _setup(n)
    ub = gub.real_group_upper_bound(G, irreps, lp.pi)
    pi = np.array([float(x) for x in gub.rational_dual(lp.pi)])
    cls, sizes = G.class_index(), np.array([len(c) for c in G.conjugacy_classes()])
    tau = np.concatenate([[0.0], pi])[cls] / sizes[cls]
    rng = np.random.default_rng(n)
    best = -math.inf
    for _ in range(6):
        theta = rng.normal(size=3 * G.order)
        theta /= np.linalg.norm(theta)
        for _ in range(300):
            _, g = psi_and_gradient(G, *theta.reshape(3, -1), tau)
            theta = theta + 2.0 * G.order * g
            theta /= np.linalg.norm(theta)
        psi = psi_and_gradient(G, *theta.reshape(3, -1), tau)[0]
        assert psi == pytest.approx(fourier_checks.weighted_margin_direct(G, *theta.reshape(3, -1), pi), rel=1e-10)
        best = max(best, psi)
    assert best <= ub.upper_float * (1 + 1e-12)
    assert best >= ub.upper_float * (1 - 1e-4)  # the LP dual is optimal: the bound is attained by one neuron


def test_random_and_perturbed_networks_never_exceed_u():
    G, irreps, X, dims, lp = _setup(3)
    ub = gub.real_group_upper_bound(G, irreps, lp.pi)
    net = gm.mixture_network(irreps, lp.mu)
    rng = np.random.default_rng(1)
    for scale in (0.0, 1e-3, 0.3, 3.0):
        pert = PolyNetwork(net.U + scale * rng.normal(size=net.U.shape), net.W + scale * rng.normal(size=net.W.shape))
        res = exhaustive_margin(pert.normalized(), labels=G.product_labels())
        assert res.normalized_margin <= ub.upper_float + res.normalized_tolerance


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_u_against_lp_and_formula(n):
    G, irreps, X, dims, lp = _setup(n)
    ub = gub.real_group_upper_bound(G, irreps, lp.pi)
    assert ub.upper_float == pytest.approx(lp.dual, rel=1e-13)
    formula = theory.gamma_star_theorem79(G.order, dims)
    row = gub.formula_below_upper_check(list(dims), G.order, ub)
    assert row.passed and row.exactness == "proved"
    if n < 6:
        assert ub.upper_float == pytest.approx(formula, rel=1e-13)
    else:
        assert ub.upper_float > formula * 1.19  # the condition fails: the max margin exceeds the formula
    assert [s.exactness for s in ub.steps] == ["argued", "proved", "proved", "argued", "argued", "proved", "proved"]


def test_exact_characters_of_s5_and_their_checks():
    G = symmetric_group(5)
    table = characters.exact_character_table(G)
    assert table[1] == [4, 2, 0, 1, -1, -1, 0]  # standard: fixed points - 1
    assert characters.murnaghan_nakayama((3, 2), (5,)) == 0 and characters.murnaghan_nakayama((2, 2, 1), (5,)) == 0
    assert characters.murnaghan_nakayama((5,), (2, 2, 1)) == 1
    assert characters.murnaghan_nakayama((1,) * 5, (2, 1, 1, 1)) == -1
    facts = characters.exact_character_facts(G, real_irreps(G))
    assert facts.holds and facts.indicators == [1] * 7
    facts.table[2][3] += 1  # a tampered table is not orthogonal
    sizes = facts.sizes
    gram = sum(sizes[c] * facts.table[2][c] ** 2 for c in range(7))
    assert gram != G.order


def test_a_tampered_dual_table_or_bound_is_rejected(monkeypatch):
    G, irreps, X, dims, lp = _setup(4)
    bad = lp.pi.copy()
    bad[0] = -0.5  # negatives are clipped; the rest still sums to 1 exactly: a valid (worse) dual
    ub_bad = gub.real_group_upper_bound(G, irreps, bad)
    assert ub_bad.upper > gub.real_group_upper_bound(G, irreps, lp.pi).upper
    assert sum(gub.rational_dual(bad)) == 1 and min(gub.rational_dual(bad)) >= 0
    with pytest.raises(ValueError):
        gub.rational_dual(np.zeros(4))
    real = characters.exact_character_table

    def tampered(group):
        t = real(group)
        t[1][1] += 1
        return t

    monkeypatch.setattr(characters, "exact_character_table", tampered)
    with pytest.raises(SolverError, match="character table"):
        gub.real_group_upper_bound(G, irreps, lp.pi)
    monkeypatch.undo()
    ub = gub.real_group_upper_bound(G, irreps, lp.pi)
    with pytest.raises(SolverError, match="below the proved bound"):
        dataclasses.replace(ub, upper=ub.upper * Fraction(999999, 1000000)).require_proved("S4")
    monkeypatch.setattr(gub, "kappa_squared", lambda order, d: -Fraction(4, d**3 * (3 * order) ** 3))
    with pytest.raises(SolverError, match="U\\^2 = max_R"):
        gub.real_group_upper_bound(G, irreps, lp.pi)


def test_dual_bound_is_the_lemma_d13_value():
    G, irreps, X, dims, lp = _setup(3)
    pi = gub.rational_dual(lp.pi)
    U2, brackets, ok = gub.dual_bound_squared(characters.exact_character_table(G), G.order, pi)
    values = [gm.kappa(G.order, int(d)) * float(b) for d, b in zip(dims[1:], brackets, strict=True)]
    assert ok and math.sqrt(float(U2)) == pytest.approx(max(values), rel=1e-15)
    assert max(values) == pytest.approx(float(gm.dual_values(lp.pi, X, G.order, dims).max()), rel=1e-13)


def test_lemma_d11_check_and_that_it_can_fail(monkeypatch):
    G, irreps, X, dims, lp = _setup(4)
    assert fourier_checks.lemma_d11_check(G, irreps, X).passed
    u, v, w = np.random.default_rng(2).normal(size=(3, G.order))
    pi = lp.pi
    two, _ = fourier_checks.weighted_margin_d11(irreps, X, u, v, w, pi)
    one, _ = fourier_checks.weighted_margin_d11(irreps, X, u, v, w, pi, factor=1.0)
    assert two == pytest.approx(2 * one, rel=1e-14)  # the printed lemma is half the margin
    real = fourier_checks.weighted_margin_d11
    monkeypatch.setattr(fourier_checks, "weighted_margin_d11",
                        lambda *a, factor=2.0: real(*a, factor=1.0 if factor == 2.0 else factor))
    assert not fourier_checks.lemma_d11_check(G, irreps, X).passed
    monkeypatch.undo()
    Xbad = X.copy()
    Xbad[2, 1] += 1  # a wrong character
    assert not fourier_checks.lemma_d11_check(G, irreps, Xbad).passed


def test_d91_identity_and_that_it_can_fail():
    G = symmetric_group(3)
    irreps = real_irreps(G)
    worst, swapped, cols = fourier_checks.fourier_identity_d91(G, irreps)
    assert worst <= 1e-12 and cols == 6 and swapped <= 1e-12  # the paper's swapped pairs carry nothing
    assert fourier_checks.d91_check(G, irreps).passed
    flipped = dataclasses.replace(G, mul=G.mul.T.copy())  # the opposite group: rho_l(ba) instead of rho_l(ab)
    assert fourier_checks.fourier_identity_d91(flipped, irreps)[0] > 1e-3
    assert fourier_checks.fourier_identity_d91(symmetric_group(5), real_irreps(symmetric_group(5)))[2] == 7


def test_condition_failing_group_is_not_applicable_with_both_ends():
    """S_6's verdict without the exhaustive pass: the LP network's margin from the characters stands in for L."""
    G, irreps, X, dims, lp = _setup(6)
    ub = gub.real_group_upper_bound(G, irreps, lp.pi)
    margin = float(gm.class_margins(lp.mu, X, G.order, dims).min())
    formula = theory.gamma_star_theorem79(G.order, dims)
    res = VerificationResult("S6", task="group", fields={"condition_holds": False, "gamma_star_formula": formula})
    attach_group_interval(res, G, ub, margin, 1e-21, "characters")
    assert res.verdict == "not-applicable" and res.exit_code == 0
    assert res.certificate["relative_gap"] <= 1e-12 and res.certificate["upper_exactness"] == "proved"
    assert next(c for c in res.checks if c.name == "network margin = optimum").informational


def test_cyclic_groups_use_modular_additions_bound():
    ub = gub.cyclic_upper_bound(7, 2 * 2**30)
    assert ub.upper_float == pytest.approx(theory.gamma_star(7, 2), rel=1e-9)
    assert gub.cyclic_gamma_check(7, ub).passed and gub.cyclic_gamma_check(8, ub) is None
    res = VerificationResult("C7", task="group")
    attach_group_interval(res, cyclic_group(7), ub, theory.gamma_star(7, 2) * (1 - 1e-14), 1e-15, "test")
    assert res.verdict == "verified"


def test_even_cyclic_group_brackets_the_true_max_margin():
    """C_6 = Z_6: no closed form applies (not-applicable), and both ends of the true max margin are modular
    addition's at (p, k) = (6, 2): the gap closes (the uniform dual alone left it at 0.6 for C_8), and the group
    path's own margin (Lemma C.18's network) lies below U."""
    from fractions import Fraction

    from margintheory import GroupComposition, ModularAddition, verify
    from margintheory.solvers.even_p import even_p_max_margin

    res = verify(GroupComposition("C6"))
    assert res.verdict == "not-applicable" and res.exit_code == 0
    cert = res.certificate
    assert cert["relative_gap"] <= 1e-6 and cert["upper_exactness"] == "proved"
    modular = even_p_max_margin(ModularAddition(6, 2), max_memory=2**31)
    assert Fraction(cert["upper_exact"]) == modular.upper
    rows = {c.name: c for c in res.checks}
    assert rows["checked network <= U"].passed and not rows["checked network <= U"].informational
    assert res.normalized_margin < float(modular.upper) * (1 - 1e-3)  # Lemma C.18's network is not optimal here


def test_a_network_on_an_even_cyclic_group_is_bracketed_by_the_true_max_margin():
    """A given network on C_6 (the even-p frequency-weighted network, which attains the max margin): its ``U`` is
    the optimal invariant dual's (the uniform dual's is not attained at even n), so ``[L, U]`` closes to 1e-6 with
    L this network's margin; a weaker network stays below U, its gap reported."""
    from fractions import Fraction

    from margintheory.core.problems import ModularAddition
    from margintheory.solvers.even_p import even_p_max_margin, real_block_network
    from margintheory.tasks.groups.task import verify_group_network

    G = cyclic_group(6)
    modular = even_p_max_margin(ModularAddition(6, 2), max_memory=2**31)
    res = verify_group_network(G, modular.network)
    cert = res.certificate
    assert Fraction(cert["upper_exact"]) == modular.upper and cert["upper_exactness"] == "proved"
    assert cert["relative_gap"] <= 1e-6
    weaker = verify_group_network(G, real_block_network(6, 2))
    assert weaker.certificate["upper_exact"] == cert["upper_exact"]
    assert weaker.certificate["relative_gap"] > 1e-3
