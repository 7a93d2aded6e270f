"""Certified SOS upper bounds and single-neuron brackets on tiny cases (docs/theory.md#weak-duality)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from margintheory.core.theory import gamma_star
from margintheory.errors import SolverError
from margintheory.solvers import sos as sos_module
from margintheory.solvers.objective import SingleNeuronObjective, pair_weights, pair_weights_from_lambda
from margintheory.solvers.polynomial import Polynomial
from margintheory.solvers.single_neuron import solve_single_neuron
from margintheory.solvers.sos import sphere_max_upper_bound
from margintheory.solvers.symmetry import real_fourier_blocks, split_by_frequency


def test_sos_bound_on_forms_with_known_maximum():
    # y1 y2 y3 on S^2: AM-GM gives 3^(-3/2) (odd degree: Putinar certificate on the sphere)
    cubic = Polynomial(np.array([[1, 1, 1]]), np.array([1.0]))
    b = sphere_max_upper_bound(cubic)
    assert 3**-1.5 <= b.bound <= 3**-1.5 * (1 + 1e-6)
    # y1^2 y2^2 - y3^4 on S^2: max 1/4 (even degree: homogeneous Gram certificate)
    quartic = Polynomial(np.array([[2, 2, 0], [0, 0, 4]]), np.array([1.0, -1.0]))
    b = sphere_max_upper_bound(quartic)
    assert 0.25 <= b.bound <= 0.25 * (1 + 1e-6)
    assert b.safety_margin >= 0 and b.status in sos_module.ACCEPTED_STATUS


def test_real_fourier_basis_is_orthonormal():
    for p in (3, 4, 7):
        R = np.concatenate([b.basis for b in real_fourier_blocks(p)], axis=1)
        assert R.shape == (p, p)
        assert np.max(np.abs(R.T @ R - np.eye(p))) < 1e-14


def test_block_split_uniform_decouples_random_weights_do_not():
    split = split_by_frequency(SingleNeuronObjective(pair_weights(5, 2)))
    assert split.remainder_l1 <= 1e-13 * split.total_l1
    rng = np.random.default_rng(1)
    w = pair_weights_from_lambda(5, 2, rng.random((25, 5)))
    split = split_by_frequency(SingleNeuronObjective(w))
    assert split.remainder_l1 > 1e-3 * split.total_l1


@pytest.mark.parametrize("p,k", [(3, 2), (5, 2), (3, 3)])
def test_uniform_bracket_contains_gamma_star_with_small_gap(p, k):
    b = solve_single_neuron(p, k, n_starts=6, seed=3)
    g = gamma_star(p, k)
    assert b.method == "fourier-exact" and b.upper_certified and b.upper_exactness == "proved"
    assert b.lower <= g * (1 + 1e-12) and g <= b.upper
    assert b.relative_gap < 1e-6
    fd = b.fourier_description()
    assert fd["in_optimal_set"] and 1 <= fd["frequency"] <= (p - 1) // 2


def test_generic_relaxation_agrees_with_block_reduction_on_3_2():
    g = gamma_star(3, 2)
    generic = solve_single_neuron(3, 2, method="generic", n_starts=4)
    assert generic.lower <= g * (1 + 1e-12) <= generic.upper * (1 + 1e-12)
    assert generic.relative_gap < 1e-6


def test_generic_certificate_is_an_upper_bound_for_random_weights():
    rng = np.random.default_rng(5)
    w = pair_weights_from_lambda(3, 2, rng.random((9, 3)))
    b = solve_single_neuron(3, 2, w, method="auto", n_starts=12, seed=0)
    assert b.method == "generic" and b.upper_certified
    assert b.lower <= b.upper
    assert math.isfinite(b.relative_gap)


def test_even_modulus_exceeds_the_formula():
    """p = 6: the Nyquist block (a real 1-dim frequency) beats the odd-prime formula; computed, both bounds agree."""
    b = solve_single_neuron(6, 2, n_starts=8, seed=0)
    assert b.relative_gap < 1e-6
    assert b.lower > gamma_star(6, 2) * 1.4


def test_solver_failure_status_raises(monkeypatch):
    import cvxpy as cp

    def fake_solve(self, *args, **kwargs):
        self._status = "infeasible"
        return None

    monkeypatch.setattr(cp.Problem, "solve", fake_solve)
    monkeypatch.setattr(cp.Problem, "status", property(lambda self: "infeasible"))
    with pytest.raises(SolverError, match="infeasible"):
        sphere_max_upper_bound(Polynomial(np.array([[1, 1, 1]]), np.array([1.0])))


def test_missing_solver_raises(monkeypatch):
    import cvxpy as cp

    monkeypatch.setattr(cp, "installed_solvers", lambda: ["SCS"])
    with pytest.raises(SolverError, match="not installed"):
        sphere_max_upper_bound(Polynomial(np.array([[1, 1, 1]]), np.array([1.0])), solver="CLARABEL")


@pytest.mark.parametrize("shift", [1e-3, -1e-3])
def test_certified_bound_survives_a_perturbed_certificate(shift):
    """The a-posteriori bound stays above the true maximum when the solver's Gram matrix and gamma are spoiled:
    the residual and the negative eigenvalues are charged to the bound (module docstring of ``sos``)."""
    cubic = Polynomial(np.array([[1, 1, 1]]), np.array([1.0]))
    rel = sos_module._build(cubic)
    gamma, Q, lam, _ = sos_module._solve(rel, "CLARABEL", None, False)
    rng = np.random.default_rng(0)
    E = rng.standard_normal(Q.shape)
    bad_Q = Q + shift * (E + E.T)
    bound, safety, residual, eig = sos_module._certify(rel, gamma - abs(shift), bad_Q, lam, 0.0)
    assert bound >= 3**-1.5
    assert residual > 0 and safety > abs(shift)
