"""App. D.9.2's recipe (:mod:`margintheory.tasks.groups.recipe_d92`) against the class LP: the recipe found at ``S_6``,
``kappa = all`` is Theorem 7.9, the recipe's network built and measured, and the row failing for a broken system 1,
wrong masses and a wrong LP value.  Small cases only: this module is also the test selection of the mutation gate's
``recipe_d92`` area (``tools/mutation.sh recipe_d92``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from margintheory.core import theory
from margintheory.core.groups import symmetric_group
from margintheory.core.representations import character_table, real_irreps
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.groups import recipe_d92


def _setup(n):
    G = symmetric_group(n)
    irreps = real_irreps(G)
    X = character_table(G, irreps)
    dims = np.array([R.dim for R in irreps])
    return G, irreps, X, dims, gm.solve_class_lp(X, G.order, dims)


def test_d92_recipe_at_s6_equals_the_lp_and_everything_fails_condition_1():
    G, irreps, X, dims, lp = _setup(6)
    search = recipe_d92.search_recipe(X, dims, G.order, lp)
    assert search.everything is not None and search.everything.conditions[0] is False  # Thm 7.9's weights < 0
    best = search.smallest
    assert best is not None and len(best.irreps) == 3 and best.holds
    assert best.value == pytest.approx(lp.primal, rel=1e-12) and best.network_margin == pytest.approx(lp.primal,
                                                                                                     rel=1e-12)
    built = []

    def measured(mu):  # S_6's exhaustive pass is the task's (minutes): stand in for the network measured there
        built.append(mu)
        return lp.primal, 1e-15, "stub"

    names = [R.name for R in irreps]
    rows = recipe_d92.recipe_checks(search, lp, names, measured, prefer=lp.mu)
    assert [r.passed for r in rows] == [False, True] and rows[0].informational and not rows[1].informational
    assert np.allclose(built[0], lp.mu, atol=1e-12)  # the pair whose network the exhaustive pass measured
    wrong = dataclasses.replace(lp, primal=lp.primal * (1 + 1e-6))
    assert not recipe_d92.recipe_checks(search, wrong, names, measured)[1].passed
    off = recipe_d92.recipe_checks(search, lp, names, lambda mu: (lp.primal * (1 - 1e-6), 1e-15, "stub"))
    assert not off[1].passed  # a network whose measured margin is not the LP value
    outside = recipe_d92.recipe(X, dims, G.order, (1, 2, 5), (7, 8, 9))  # sets off the LP's: some condition fails
    assert outside is None or not outside.holds


def test_d92_recipe_network_is_built_and_measured():
    """S_4: the recipe's network is built from Lemma D.15's blocks and measured on all |G|^2 inputs; the LP formula is
    not what decides (a network built with the masses permuted fails)."""
    from margintheory.tasks.groups.task import block_network_margin

    G, irreps, X, dims, lp = _setup(4)
    search = recipe_d92.search_recipe(X, dims, G.order, lp)
    names = [R.name for R in irreps]
    row = recipe_d92.recipe_checks(search, lp, names, lambda mu: block_network_margin(G, irreps, mu))[1]
    assert row.passed and not row.informational and row.measured == pytest.approx(lp.primal, rel=1e-12)

    def permuted(mu):
        return block_network_margin(G, irreps, np.concatenate([[0.0], np.roll(mu[1:], 1)]))

    assert not recipe_d92.recipe_checks(search, lp, names, permuted)[1].passed


def test_d92_a_broken_system_one_fails_the_row(monkeypatch):
    """A sign flipped in system 1: no choice of the sets meets the conditions, and that is a failed deciding row."""
    G, irreps, X, dims, lp = _setup(4)
    real = recipe_d92._system_one

    def flipped(X, dims, kR, kC):
        return real(-X, dims, kR, kC)  # lam_m = 1 + sum pi_C chi_m(C) / d_m

    monkeypatch.setattr(recipe_d92, "_system_one", flipped)
    search = recipe_d92.search_recipe(X, dims, G.order, lp)
    row = recipe_d92.recipe_checks(search, lp, [R.name for R in irreps], lambda mu: (lp.primal, 0.0, "stub"))[1]
    assert not row.passed and not row.informational


@pytest.mark.parametrize("n", [3, 4, 5])
def test_d92_with_everything_is_theorem_79(n):
    G, irreps, X, dims, lp = _setup(n)
    sol = recipe_d92.recipe(X, dims, G.order, tuple(range(1, len(dims))), tuple(range(1, len(dims))))
    assert sol is not None and sol.holds
    assert sol.value == pytest.approx(theory.gamma_star_theorem79(G.order, dims), rel=1e-12)
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    assert np.allclose(sol.pi[1:], gm.lemma_d14_weights(X, sizes, dims), atol=1e-12)
    assert np.allclose(sol.scaling[1:], dims[1:] / dims[1:].sum(), atol=1e-12)


