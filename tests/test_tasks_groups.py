"""Finite groups (Morwani et al. Thm 7.9): representations, characters, condition, closed form, LP, constructions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core import theory
from margintheory.core.groups import cyclic_group, parse_group, symmetric_group
from margintheory.core.network import PolyNetwork
from margintheory.core.representations import (
    basis_vectors,
    character_table,
    real_irreps,
    schur_orthogonality_error,
)
from margintheory.engines.margins import class_weighted_margins, exhaustive_margin, logits
from margintheory.errors import InputError
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.groups.task import verify_group, verify_group_network
from margintheory.testing import group_elements


@pytest.fixture(scope="module", params=["S3", "S4", "S5"])
def group(request):
    G = parse_group(request.param)
    return G, real_irreps(G)


def test_irreps_are_homomorphisms_on_all_pairs(group) -> None:
    G, irreps = group
    for R in irreps:
        lhs = R.mats[G.mul]  # R(ab)
        rhs = np.einsum("aij,bjk->abik", R.mats, R.mats)
        assert np.abs(lhs - rhs).max() < 1e-12


def test_orthogonality_relations(group) -> None:
    G, irreps = group
    assert sum(R.dim**2 for R in irreps) == G.order
    assert schur_orthogonality_error(irreps) < 1e-13
    B, _ = basis_vectors(irreps)
    assert np.linalg.matrix_rank(B) == G.order
    X = character_table(G, irreps)
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    assert np.allclose((X * sizes) @ X.T / G.order, np.eye(len(irreps)), atol=1e-12)  # row orthogonality
    assert np.allclose(X.T @ X, np.diag(G.order / sizes), atol=1e-9)  # column orthogonality


def test_s5_character_table_matches_paper_table_d1() -> None:
    """Morwani et al. Table D.1 as a set of rows over the same classes (the paper labels the rows
    'standard' and 'standard x sign' the other way round: chi_standard((1 2)) = +2)."""
    G = symmetric_group(5)
    irreps = real_irreps(G)
    X = np.round(character_table(G, irreps)).astype(int)
    reps = [G.labels[int(c[0])] for c in G.conjugacy_classes()]
    # paper columns: e, (12), (12)(34), (123), (1234), (12345), (12)(345) with sizes 1 10 15 20 30 24 20
    paper = np.array([[1, 1, 1, 1, 1, 1, 1], [1, -1, 1, 1, -1, 1, -1], [4, -2, 0, 1, 0, -1, 1],
                      [4, 2, 0, 1, 0, -1, -1], [5, 1, 1, -1, -1, 0, 1], [5, -1, 1, -1, 1, 0, -1],
                      [6, 0, -2, 0, 0, 1, 0]])
    cycle_types = [sorted(len(c.split()) for c in r.strip("()").split(")(")) if r != "e" else [] for r in reps]
    wanted = [[], [2], [2, 2], [3], [4], [5], [2, 3]]
    order = [cycle_types.index(w) for w in wanted]
    ours = {tuple(row) for row in X[:, order].tolist()}
    assert ours == {tuple(r) for r in paper.tolist()}
    sizes = [len(G.conjugacy_classes()[i]) for i in order]
    assert sizes == [1, 10, 15, 20, 30, 24, 20]
    standard = [r for r, R in zip(X[:, order].tolist(), irreps, strict=True) if R.name == "(4,1)"][0]
    assert standard[1] == 2


def test_condition_and_closed_form(group) -> None:
    G, irreps = group
    dims = np.array([R.dim for R in irreps])
    X = character_table(G, irreps)
    assert np.all(gm.condition_values(X, dims) < 0)
    lp = gm.solve_class_lp(X, G.order, dims)
    assert lp.primal == pytest.approx(lp.dual, rel=1e-9)
    assert lp.primal == pytest.approx(theory.gamma_star_theorem79(G.order, dims), rel=1e-9)
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    pi = gm.lemma_d14_weights(X, sizes, dims)  # an independent dual certificate for the formula
    assert pi.sum() == pytest.approx(1.0) and pi.min() >= 0
    assert gm.dual_values(pi, X, G.order, dims) == pytest.approx(theory.gamma_star_theorem79(G.order, dims), rel=1e-12)


def test_construction_margin_is_closed_form() -> None:
    for name in ("S3", "S4"):
        res = verify_group(parse_group(name))
        assert res.verdict == "verified", [c.name for c in res.checks if not c.passed]
        assert res.fields["construction_normalized_margin"] == pytest.approx(res.fields["gamma_star_formula"],
                                                                             rel=1e-12)


def test_s6_condition_fails_and_lp_beats_formula() -> None:
    G = symmetric_group(6)
    irreps = real_irreps(G)
    dims = np.array([R.dim for R in irreps])
    X = character_table(G, irreps)
    assert np.any(gm.condition_values(X, dims) >= 0)
    lp = gm.solve_class_lp(X, G.order, dims)
    formula = theory.gamma_star_theorem79(G.order, dims)
    assert lp.primal == pytest.approx(lp.dual, rel=1e-9)
    assert lp.primal > formula * (1 + 1e-6)
    pi = gm.lemma_d14_weights(X, np.array([len(c) for c in G.conjugacy_classes()]), dims)
    assert pi.min() < 0  # D.14's weights are not a valid dual when the condition fails
    assert gm.class_margins(gm.theorem79_weights(dims), X, G.order, dims).min() == pytest.approx(formula, rel=1e-12)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(1e-4, 0.3))
def test_perturbed_group_networks_never_exceed_max_margin(seed: int, scale: float) -> None:
    G = symmetric_group(3)
    irreps = real_irreps(G)
    dims = np.array([R.dim for R in irreps])
    bound = theory.gamma_star_theorem79(G.order, dims)
    net = gm.mixture_network(irreps, gm.theorem79_weights(dims))
    rng = np.random.default_rng(seed)
    pert = PolyNetwork(net.U + scale * rng.normal(size=net.U.shape), net.W + scale * rng.normal(size=net.W.shape))
    res = exhaustive_margin(pert.normalized(), labels=G.product_labels())
    assert res.normalized_margin <= bound + res.normalized_tolerance


def test_lemma_d13_bound_holds_for_single_neurons() -> None:
    """Weak duality with the LP's class weights: no unit neuron beats the dual value (random and optimized)."""
    from scipy.optimize import minimize

    G = symmetric_group(3)
    irreps = real_irreps(G)
    dims = np.array([R.dim for R in irreps])
    X = character_table(G, irreps)
    lp = gm.solve_class_lp(X, G.order, dims)
    cls = G.class_index()
    inv = G.inverses()
    labels = G.product_labels()
    grid = np.arange(G.order)
    offset = cls[G.mul[inv[labels][:, None], grid[None, :]]]  # class of (ab)^-1 c
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    tau = np.where(offset > 0, lp.pi[np.maximum(offset - 1, 0)] / sizes[offset], 0.0)

    def value(v: np.ndarray) -> float:
        v = v / np.linalg.norm(v)
        net = PolyNetwork(v[: 2 * G.order].reshape(1, 2, G.order), v[2 * G.order:].reshape(1, G.order))
        return float(class_weighted_margins(logits(net), labels, tau).mean())

    rng = np.random.default_rng(0)
    vals = [value(rng.normal(size=3 * G.order)) for _ in range(200)]
    opt = [-minimize(lambda v: -value(v), rng.normal(size=3 * G.order), method="BFGS").fun for _ in range(4)]
    assert max(vals + opt) <= lp.dual * (1 + 1e-7)
    assert max(opt) == pytest.approx(lp.dual, rel=1e-5)  # and the bound is attained


@pytest.mark.parametrize("n", [5, 7])
def test_cyclic_group_path_agrees_with_modular_addition(n: int) -> None:
    res = verify_group(cyclic_group(n))
    assert res.verdict == "verified"
    assert res.fields["group_path_margin"] == pytest.approx(theory.gamma_star(n, 2), rel=1e-12)
    assert res.fields["all_irreps_real_type"] is False


def test_given_network_check(tmp_path) -> None:
    G = symmetric_group(3)
    irreps = real_irreps(G)
    dims = np.array([R.dim for R in irreps])
    net = gm.mixture_network(irreps, gm.theorem79_weights(dims))
    assert verify_group_network(G, net).verdict == "verified"
    bad = PolyNetwork(net.U + 0.05 * np.random.default_rng(1).normal(size=net.U.shape), net.W)
    assert verify_group_network(G, bad).verdict == "refuted"
    with pytest.raises(InputError):
        verify_group_network(symmetric_group(4), net)


@settings(max_examples=60)
@given(st.sampled_from(["S3", "S4", "C7"]).flatmap(
    lambda name: st.tuples(st.just(parse_group(name)), group_elements(name), group_elements(name))))
def test_conjugates_stay_in_their_class(case) -> None:
    G, g, a = case
    conjugate = int(G.mul[G.mul[g, a], G.inverses()[g]])
    assert any(a in c and conjugate in c for c in G.conjugacy_classes())


def test_group_axioms_and_names() -> None:
    for name in ("S3", "s_4", "C5", "Z6"):
        G = parse_group(name)
        assert all(G.check_axioms().values())
    assert [len(c) for c in symmetric_group(4).conjugacy_classes()] == [1, 3, 6, 6, 8]
    for bad in ("Q9", "S9", "S1", "C1", "", "A2", "D2", "Dic1", "S3xQ9", "perm:", "perm:(0 1)(1 2)"):
        with pytest.raises(InputError):
            parse_group(bad)
