"""Single-neuron objective: value and gradient vs finite differences, polynomial expansion, pair contributions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import input_grid, logits
from margintheory.errors import InputError
from margintheory.solvers.objective import (
    SingleNeuronObjective,
    neuron_pair_contributions,
    pair_weights,
    pair_weights_from_lambda,
)

CASES = [(3, 2), (4, 2), (3, 3), (5, 2)]


def _random_weights(p: int, k: int, rng: np.random.Generator):
    lam = rng.random((p**k, p))
    return pair_weights_from_lambda(p, k, lam)


@settings(max_examples=12, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**31 - 1), uniform=st.booleans())
def test_gradient_matches_central_differences(case, seed, uniform):
    p, k = case
    rng = np.random.default_rng(seed)
    obj = SingleNeuronObjective(pair_weights(p, k) if uniform else _random_weights(p, k, rng))
    x = rng.standard_normal(obj.n)
    f, g = obj.value_and_grad(x)
    h = 1e-6
    fd = np.array([(obj.value(x + h * e) - obj.value(x - h * e)) / (2 * h) for e in np.eye(obj.n)])
    # value and value_and_grad sum the p^k terms in different orders; with cancellation the relative difference
    # reaches a few 1e-14 (e.g. 2.7e-14 at (p, k) = (3, 3), seed 159114, uniform weights)
    assert f == pytest.approx(obj.value(x), rel=1e-12, abs=1e-15)
    # central differences of a cubic/quartic: truncation O(h^2 |x|^(k-1)), rounding O(eps |F| / h)
    assert np.max(np.abs(fd - g)) <= 1e-7 * (1 + np.max(np.abs(g)))


@settings(max_examples=8, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**31 - 1))
def test_sphere_gradient_is_tangent_and_matches_differences(case, seed):
    p, k = case
    rng = np.random.default_rng(seed)
    obj = SingleNeuronObjective(_random_weights(p, k, rng))
    x = rng.standard_normal(obj.n)
    x /= np.linalg.norm(x)
    _, g = obj.sphere_value_and_grad(x)
    assert abs(g @ x) <= 1e-12 * (1 + np.linalg.norm(g))  # degree-0 homogeneity: radial derivative vanishes
    h = 1e-6
    fd = np.array([(obj.sphere_value_and_grad(x + h * e)[0] - obj.sphere_value_and_grad(x - h * e)[0]) / (2 * h)
                   for e in np.eye(obj.n)])
    assert np.max(np.abs(fd - g)) <= 1e-7 * (1 + np.max(np.abs(g)))


@pytest.mark.parametrize("p,k", CASES)
def test_polynomial_expansion_agrees_with_direct_evaluation(p, k):
    rng = np.random.default_rng(p * 10 + k)
    obj = SingleNeuronObjective(_random_weights(p, k, rng))
    B = np.linalg.qr(rng.standard_normal((p, p)))[0]
    poly = obj.restricted_polynomial(B)
    for _ in range(3):
        y = rng.standard_normal(obj.n)
        x = (B @ y.reshape(k + 1, p).T).T.ravel()
        assert poly(y) == pytest.approx(obj.value(x), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("p,k", [(3, 2), (5, 3)])
def test_objective_is_weighted_margin_of_the_logits(p, k):
    """``F = E_lam[f[y] - f[c]]`` with the logits of the core engine (``margins.logits``)."""
    rng = np.random.default_rng(7)
    w = _random_weights(p, k, rng)
    U, W = rng.standard_normal((1, k, p)), rng.standard_normal((1, p))
    L = logits(PolyNetwork(U, W))
    y = input_grid(p, k).sum(axis=1) % p
    direct = np.sum(w.lam * (L[np.arange(len(y)), y][:, None] - L))
    obj = SingleNeuronObjective(w)
    assert obj.value(np.concatenate([U[0], W]).ravel()) == pytest.approx(direct, rel=1e-12)
    phi = neuron_pair_contributions(U, W)[0]
    assert np.sum(w.lam * phi) == pytest.approx(direct, rel=1e-12)


def test_pair_weight_validation():
    with pytest.raises(InputError):
        pair_weights(3, 2, q=np.ones(5))
    with pytest.raises(InputError):
        pair_weights(3, 2, q=-np.ones(9) / 9 * -1 - 1)
    bad_tau = np.ones((9, 3)) / 3  # puts weight on the true label
    with pytest.raises(InputError):
        pair_weights(3, 2, tau=bad_tau)
    with pytest.raises(InputError):
        pair_weights_from_lambda(3, 2, np.zeros((9, 3)))
    assert pair_weights(3, 2).is_uniform()
    assert not _random_weights(3, 2, np.random.default_rng(0)).is_uniform()
