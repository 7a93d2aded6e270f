"""The network-level margin LP: planted problems with known optimum, symmetry reduction, column generation."""

from __future__ import annotations

import numpy as np
import pytest

from margintheory.core.theory import gamma_star
from margintheory.engines.margins import exhaustive_margin
from margintheory.errors import SolverError
from margintheory.solvers.column_generation import (
    column_generation,
    lambda_from_tau,
    max_min_lp,
    orbit_margin_profile,
    random_unit_neurons,
    solve_margin_lp,
    translation_orbit,
)
from margintheory.solvers.objective import _wrong_mask, neuron_pair_contributions
from margintheory.solvers.width import smallest_width


def test_planted_lp_identity_columns():
    """``max gamma: s >= gamma, sum s <= 1`` on n coordinates: gamma = 1/n, s and the dual uniform."""
    n = 5
    s, dual, status, _ = max_min_lp(np.eye(n))
    assert status == "optimal"
    assert np.min(s) == pytest.approx(1 / n, rel=1e-9)
    assert np.allclose(dual, 1 / n, rtol=1e-8)


def test_planted_lp_with_dominated_column():
    """Columns (1, 0), (0, 1), (0.25, 0.25): optimum 1/2 from the first two, the third unused."""
    A = np.array([[1.0, 0.0, 0.25], [0.0, 1.0, 0.25]])
    s, _, _, _ = max_min_lp(A)
    assert (A @ s).min() == pytest.approx(0.5, rel=1e-9)
    assert s[2] == pytest.approx(0.0, abs=1e-9)


def test_planted_network_lp_from_one_optimal_orbit_p3():
    """p = 3: the translates of one optimal cosine neuron (Lemma C.15 form) reach gamma*(3, 2) exactly
    (the known optimum of this planted LP: it is feasible for the max-margin problem and matches the bound)."""
    p, k = 3, 2
    beta = np.sqrt(2 / ((k + 1) * p))
    x = np.arange(p)
    cosv = beta * np.cos(2 * np.pi * x / p)
    Uo, Wo = translation_orbit(np.stack([cosv, cosv]), cosv)
    lp = solve_margin_lp(neuron_pair_contributions(Uo, Wo), _wrong_mask(p, k))
    assert lp.gamma == pytest.approx(gamma_star(p, k), rel=1e-9)


def test_orbit_profile_is_the_orbit_average():
    rng = np.random.default_rng(2)
    U, W = random_unit_neurons(5, 2, 1, rng)
    Uo, Wo = translation_orbit(U[0], W[0])
    phi = neuron_pair_contributions(Uo, Wo).sum(axis=0) / len(Uo)
    prof = orbit_margin_profile(U[0], W[0])
    from margintheory.engines.margins import input_grid

    y = input_grid(5, 2).sum(axis=1) % 5
    for d in range(1, 5):
        col = phi[np.arange(25), (y + d) % 5]
        assert np.allclose(col, prof[d - 1], rtol=1e-12, atol=1e-15)  # constant over inputs: translation invariance
    lam = lambda_from_tau(5, 2, np.full(4, 0.25))
    assert lam.sum() == pytest.approx(1.0) and np.all(lam[_wrong_mask(5, 2)] > 0)


def test_column_generation_reaches_gamma_star_p3_k2():
    g = gamma_star(3, 2)
    res = column_generation(3, 2, seed=1)
    assert res.converged and res.dual_certified
    assert res.primal_margin == pytest.approx(g, rel=1e-6)
    assert res.primal_margin <= g * (1 + 1e-12) and g <= res.dual_bound
    assert res.relative_gap < 1e-6
    em = exhaustive_margin(res.network)  # independent recomputation by the core engine
    assert float(em.normalized_margin) == pytest.approx(res.primal_margin, rel=1e-9)
    w = smallest_width(res.generators[res.weights > 0], target=res.lp_value * (1 - 1e-6), time_limit=30)
    assert w.width <= res.width and w.margin >= res.lp_value * (1 - 1e-6)
    capped = smallest_width(res.generators[res.weights > 0], max_width=3, time_limit=30)
    assert capped.width <= 3 and capped.margin < g


def test_column_generation_time_limit_is_reported():
    with pytest.raises(SolverError):
        column_generation(5, 2, seed=0, time_limit=1e-9)


def test_cyclic_lattice_search_finds_the_family_orders():
    """The smallest cyclic phase lattices avoiding every unwanted moment: N = 6 (k = 2) and 18 (k = 3), the
    cyclic-lattice family's 2 * 3^(k-1), with its generator among them."""
    from margintheory.core.phase_measures import cyclic_lattice_generator
    from margintheory.solvers.width import cyclic_phase_lattices

    for k in (2, 3):
        found = cyclic_phase_lattices(k, 2 * 3 ** (k - 1))
        n, g = cyclic_lattice_generator(k)
        assert min(N for N, _ in found) == n and (n, g) in found
