"""The class-weighted single neuron with ``w`` eliminated (:mod:`margintheory.solvers.weighted_bnb`,
docs/theory.md#class-weighted-scale): the rigorous eigenvalue bound, the branch and bound's cover, an independent
search that never beats ``U``, a tampered claim rejected, agreement with the SOS relaxation.  Small sizes only
(``(3, 2)``, ``(5, 2)``, a peaked ``(5, 3)``); this module is the test selection of the mutation gate's
``weighted_bnb`` area."""

from __future__ import annotations

import math

import numpy as np
import pytest

from margintheory.engines.margins import input_grid
from margintheory.errors import InputError, RefusedError
from margintheory.solvers import weighted_bnb as B
from margintheory.solvers.class_weighted import (
    class_weighted_single_neuron,
    class_weights,
    eliminated_applies,
    estimate,
    objective_on_arrays,
)
from margintheory.solvers.objective import SingleNeuronObjective
from tests.class_weight_cases import random_class_weights

_weights = random_class_weights


def _red(w):
    return B.reduce_weights(w.pair_weights().signed_matrix(), w.problem.p, w.problem.k)


@pytest.fixture(scope="module")
def random52():
    w = _weights(5, 2, 1)
    return w, class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau, method="eliminated")


def test_the_reduction_keeps_the_used_rows_and_labels():
    w = _weights(5, 3, 4, peaked=True)
    red = _red(w)
    assert len(red.inputs) == 3 and red.factors == [len(red.labels) - 1, 3] and len(red.labels) <= 6
    assert red.E.shape == (3, 15) and np.all(red.E.sum(axis=1) == 3) and np.array_equal(red.K, red.E @ red.E.T)
    assert B.applies(red) and eliminated_applies(w)
    full = _red(_weights(5, 3, 4))
    assert not B.applies(full) and not eliminated_applies(_weights(5, 3, 4))
    with pytest.raises(InputError, match="k = 2 and k = 3"):
        B.reduce_weights(np.ones((5, 5)), 5, 1)
    with pytest.raises(InputError, match="no mass"):
        B.reduce_weights(np.zeros((25, 5)), 5, 2)


def test_c_k_is_the_best_split_rounded_up():
    for k in (2, 3):
        rho = np.linspace(0, 1, 200001)
        best = float(np.max(rho**k * np.sqrt(1 - rho**2)))
        assert best <= B.c_k(k) <= best * (1 + 1e-9)
        assert B.c_k(k) > (k / (k + 1)) ** (k / 2) / math.sqrt(k + 1)


def test_lambda_max_upper_is_rigorous_and_tight():
    red = _red(_weights(5, 2, 3))
    rng = np.random.default_rng(0)
    eta = rng.standard_normal((40, red.d_v))
    ub, vec = B.lambda_max_upper(red, eta)
    v = np.concatenate([eta, -eta.sum(axis=1, keepdims=True)], axis=1)
    for i in range(len(eta)):
        Q = red.E.T @ np.diag(red.G @ v[i]) @ red.E
        top = float(np.linalg.eigvalsh(Q)[-1])
        assert top <= ub[i] <= top + 1e-12 * max(1.0, abs(top))
        assert abs(vec[i] @ Q @ vec[i] - top) <= 1e-12 * max(1.0, abs(top))
    beta = rng.standard_normal((5, 3))
    red3 = _red(_weights(5, 3, 4, peaked=True))
    ub3, _ = B.lambda_max_upper(red3, rng.standard_normal((5, red3.d_v)), beta)
    assert np.all(np.isfinite(ub3))


def test_the_eliminated_value_and_its_gradient():
    red = _red(_weights(5, 2, 3))
    u = np.random.default_rng(1).standard_normal(10)
    f, g = B.eliminated_value(red, u)
    h = 1e-6
    fd = np.array([(B.eliminated_value(red, u + h * e)[0] - B.eliminated_value(red, u - h * e)[0]) / (2 * h)
                   for e in np.eye(10)])
    assert np.allclose(g, fd, rtol=1e-5, atol=1e-9)
    assert f == pytest.approx(B.eliminated_value(red, 3 * u)[0], rel=1e-12)
    assert B.eliminated_value(red, np.zeros(10)) == (0.0, pytest.approx(np.zeros(10)))


def test_bracket_is_certified_and_within_the_target(random52):
    w, b = random52
    assert b.method == "eliminated" and b.upper_exactness == "certified"
    assert 0 < b.lower <= b.upper and (b.upper - b.lower) / b.lower <= 1e-6
    assert b.lower == objective_on_arrays(w, b.maximiser)
    assert abs(np.linalg.norm(b.maximiser) - 1) < 1e-12
    e = b.weights["eliminated"]
    assert e["stopped"] == "converged" and e["cells_open"] == 0 and e["zero_sum_leak"] < 1e-12


def test_an_independent_search_never_exceeds_u(random52):
    """Projected gradient ascent on the sphere of the full objective ``F(u, w)`` from random restarts."""
    w, b = random52
    obj = SingleNeuronObjective(w.pair_weights())
    rng = np.random.default_rng(11)
    best = -math.inf
    for _ in range(16):
        x = rng.standard_normal(obj.n)
        x /= np.linalg.norm(x)
        for _ in range(500):
            _, g = obj.value_and_grad(x)
            x = x + 3.0 * (g - (g @ x) * x)
            x /= np.linalg.norm(x)
        best = max(best, objective_on_arrays(w, x.reshape(3, 5)))
    assert best <= b.upper and best >= b.lower * (1 - 1e-6)


def test_a_tampered_claim_is_rejected(random52):
    w, b = random52
    red = _red(w)
    f_upper = b.weights["eliminated"]["f_upper"]
    assert B.recheck_upper(red, f_upper, max_cells=20_000)
    assert not B.recheck_upper(red, f_upper * (1 - 1e-4), max_cells=20_000)
    assert not B.recheck_upper(red, 0.0) and not B.recheck_upper(red, -1.0)


def test_agrees_with_the_proved_bracket_on_invariant_weights():
    """On translation-invariant weights the proved closed form (exact SOS + kappa identity, a different certificate)
    and the eliminated problem must overlap.  There the maximisers form a continuum (every phase), so the branch
    and bound stops at its cell limit with a wider, still valid, bound -- and says so."""
    p, k = 5, 2
    t = np.array([0.0, 0.5, 0.25, 0.125, 0.125])
    y = input_grid(p, k).sum(axis=1) % p
    tau = t[(np.arange(p)[None, :] - y[:, None]) % p]
    q = np.full(p**k, 1 / p**k)
    proved = class_weighted_single_neuron(p, k, q=q, tau=tau)
    w = class_weights(p, k, q=q, tau=tau)
    res = B.solve_eliminated(w.pair_weights().signed_matrix(), p, k, max_cells=4000)
    assert proved.method == "fourier-exact" and res.bnb.stopped == "cell-limit"
    assert B.c_k(k) * res.upper >= proved.lower
    assert objective_on_arrays(w, res.theta) <= proved.upper
    assert objective_on_arrays(w, res.theta) == pytest.approx(proved.lower, rel=1e-9)


def test_peaked_weights_k3():
    w = _weights(5, 3, 1, peaked=True)
    b = class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau, method="eliminated")
    assert b.method == "eliminated" and (b.upper - b.lower) / b.lower <= 1e-6
    assert b.weights["eliminated"]["dimensions"] == [len(_red(w).labels) - 1, 3]


def test_estimate_and_refusal():
    w = _weights(5, 2, 1)
    est = estimate(w, method="eliminated")
    assert "eliminated" in est.what and 0 < est.bytes < 2**30
    assert B.estimate_bytes(7, 2, 49, 7) > B.estimate_bytes(5, 2, 25, 5)
    with pytest.raises(RefusedError):
        class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau, max_memory=10**6, method="eliminated")
    with pytest.raises(InputError, match="eliminated"):
        full = _weights(5, 3, 4)
        class_weighted_single_neuron(full.problem, q=full.q, tau=full.tau, method="eliminated")


def test_time_limit_keeps_a_valid_bound():
    w = _weights(5, 2, 1)
    red = _red(w)
    b = B.branch_and_bound(red, 1e-9, rtol=0.0, max_cells=3000, fixed_target=True)
    assert b.stopped == "cell-limit" and b.cells_open > 0
    assert b.upper >= B.solve_eliminated(w.pair_weights().signed_matrix(), 5, 2).lower_estimate


def test_the_eigenvalue_bound_holds_for_a_wrong_eigendecomposition(monkeypatch):
    """The bound must not trust ``eigh``: with its eigenvalues lowered by 1e-4 and its eigenvectors perturbed by
    1e-3 (not orthonormal), Bauer--Fike's residual term must still lift the bound above the true ``lambda_max``; with
    eigenvectors too far from orthonormal (``|V^T V - I|_F >= 1/2``) the bound is infinite.  A bound that subtracted
    the residual, or trusted the eigenvalues, passes the exact-decomposition test above but not this one."""
    red = _red(_weights(5, 2, 3))
    rng = np.random.default_rng(2)
    eta = rng.standard_normal((12, red.d_v))
    v = np.concatenate([eta, -eta.sum(axis=1, keepdims=True)], axis=1)
    tops = [float(np.linalg.eigvalsh(red.E.T @ np.diag(red.G @ v[i]) @ red.E)[-1]) for i in range(len(eta))]
    eigh = np.linalg.eigh

    def wrong(Q):
        lam, V = eigh(Q)
        return lam - 1e-4, V + 1e-3 * np.random.default_rng(3).standard_normal(V.shape)

    monkeypatch.setattr(np.linalg, "eigh", wrong)
    ub, _ = B.lambda_max_upper(red, eta)
    for top, u in zip(tops, ub, strict=True):
        assert top <= u <= top + 1.0 * max(1.0, abs(top)), (top, u)

    def far(Q):
        lam, V = eigh(Q)
        return lam, 1.2 * V  # V^T V - I = 0.44 I: |.|_F = 0.44 sqrt(10) in [0.5, 1.5)

    monkeypatch.setattr(np.linalg, "eigh", far)
    ub, _ = B.lambda_max_upper(red, eta)
    assert np.all(np.isposinf(ub))
