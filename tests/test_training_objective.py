"""The training objective: analytic gradients vs central finite differences, cross-entropy precision, optimizers."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_softmax, softmax

from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import input_grid, logits
from margintheory.errors import InputError
from margintheory.training.objective import (
    REGULARIZERS,
    Batch,
    cross_entropy,
    forward_logits,
    objective_and_grad,
    regularizer_value_and_grad,
)
from margintheory.training.optim import OptimizerState, Schedule


def finite_difference(fun, X, h=1e-6):
    """Central differences of a scalar function of the array ``X`` (modified in place and restored)."""
    G = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        old = X[idx]
        X[idx] = old + h
        up = fun()
        X[idx] = old - h
        down = fun()
        X[idx] = old
        G[idx] = (up - down) / (2 * h)
    return G


@settings(max_examples=12, deadline=None)
@given(p=st.integers(3, 5), k=st.integers(1, 3), m=st.integers(1, 4), reg=st.sampled_from(REGULARIZERS),
       lam=st.sampled_from([0.0, 0.3]), seed=st.integers(0, 2**16))
def test_gradient_matches_finite_differences(p, k, m, reg, lam, seed):
    rng = np.random.default_rng(seed)
    U = rng.normal(0, 0.7, (m, k, p))
    W = rng.normal(0, 0.7, (m, p))
    batch = Batch.from_inputs(input_grid(p, k), p)
    val = objective_and_grad(U, W, batch, lam, reg)
    fd_U = finite_difference(lambda: objective_and_grad(U, W, batch, lam, reg).total, U)
    fd_W = finite_difference(lambda: objective_and_grad(U, W, batch, lam, reg).total, W)
    scale = max(1.0, float(np.abs(val.grad_U).max()), float(np.abs(val.grad_W).max()))
    assert np.abs(val.grad_U - fd_U).max() <= 1e-6 * scale
    assert np.abs(val.grad_W - fd_W).max() <= 1e-6 * scale


def test_gradient_on_a_minibatch_subset():
    rng = np.random.default_rng(3)
    p, k, m = 5, 2, 3
    U, W = rng.normal(size=(m, k, p)), rng.normal(size=(m, p))
    batch = Batch.from_inputs(input_grid(p, k), p).subset(np.array([0, 3, 7, 11, 24]))
    val = objective_and_grad(U, W, batch, 0.1, "norm")
    fd = finite_difference(lambda: objective_and_grad(U, W, batch, 0.1, "norm").total, U)
    assert np.abs(val.grad_U - fd).max() <= 1e-6 * max(1.0, np.abs(fd).max())


def test_forward_agrees_with_the_core_logits():
    rng = np.random.default_rng(0)
    net = PolyNetwork(rng.normal(size=(4, 3, 5)), rng.normal(size=(4, 5)))
    for block_rows in (7, 512):
        got = forward_logits(net.U, net.W, input_grid(5, 3), block_rows=block_rows)
        np.testing.assert_allclose(got, logits(net), rtol=1e-13, atol=1e-13)


def test_cross_entropy_matches_scipy_and_keeps_precision_for_tiny_losses():
    rng = np.random.default_rng(1)
    L = rng.normal(size=(6, 4)) * 5
    y = np.array([0, 1, 2, 3, 0, 1])
    loss, grad = cross_entropy(L, y)
    assert loss == pytest.approx(float(-log_softmax(L, axis=1)[np.arange(6), y].mean()), rel=1e-13)
    ref = softmax(L, axis=1)
    ref[np.arange(6), y] -= 1
    np.testing.assert_allclose(grad, ref / 6, atol=1e-15)
    # a well-classified point: loss log(1 + 3 e^-40) ~ 1.3e-17 must not round to 0 as log(sum exp) would
    tiny, g = cross_entropy(np.array([[40.0, 0.0, 0.0, 0.0]]), np.array([0]))
    assert tiny == pytest.approx(3 * math.exp(-40), rel=1e-12)
    assert g[0, 0] == pytest.approx(-3 * math.exp(-40), rel=1e-12)


def test_norm_regularizer_value_is_the_network_norm():
    rng = np.random.default_rng(2)
    net = PolyNetwork(rng.normal(size=(5, 2, 7)), rng.normal(size=(5, 7)))
    val, _, _ = regularizer_value_and_grad(net.U, net.W, "norm")
    assert val == pytest.approx(net.norm(), rel=1e-14)
    val, _, _ = regularizer_value_and_grad(net.U, net.W, "norm-power")
    assert val == pytest.approx(net.norm() ** 3, rel=1e-13)
    with pytest.raises(InputError):
        regularizer_value_and_grad(net.U, net.W, "l7")


def test_schedule_warmup_cosine_and_doubling():
    s = Schedule(0.1, 100, "cosine", warmup=10)
    assert s(5) == pytest.approx(0.05)
    assert s(10) == pytest.approx(0.1)
    assert s(100) == pytest.approx(0.0, abs=1e-15)
    assert s(55) == pytest.approx(0.05)
    d = Schedule(0.05, 100, "doubling", milestones=(10, 20))
    assert [d(5), d(15), d(25)] == [0.05, 0.1, 0.2]
    with pytest.raises(InputError):
        Schedule(-1.0, 10)


def test_adamw_decay_is_decoupled_and_gd_is_plain():
    params = {"x": np.array([1.0, -2.0])}
    OptimizerState("gd").step(params, {"x": np.array([0.5, 0.5])}, 0.1)
    np.testing.assert_allclose(params["x"], [0.95, -2.05])
    # zero gradient: Adam leaves x unchanged, AdamW shrinks it by (1 - lr * wd)
    a, b = {"x": np.array([1.0])}, {"x": np.array([1.0])}
    OptimizerState("adam").step(a, {"x": np.zeros(1)}, 0.1)
    OptimizerState("adamw", weight_decay=0.5).step(b, {"x": np.zeros(1)}, 0.1)
    assert a["x"][0] == 1.0 and b["x"][0] == pytest.approx(0.95)
    with pytest.raises(InputError):
        OptimizerState("sgdx")


def test_row_blocks_do_not_change_the_objective_or_gradient():
    rng = np.random.default_rng(5)
    p, k, m = 7, 3, 6
    U, W = rng.normal(size=(m, k, p)), rng.normal(size=(m, p))
    one = objective_and_grad(U, W, Batch.from_inputs(input_grid(p, k), p, block_rows=10**6), 0.2, "norm")
    many = objective_and_grad(U, W, Batch.from_inputs(input_grid(p, k), p, block_rows=7), 0.2, "norm")
    assert many.total == pytest.approx(one.total, rel=1e-13)
    np.testing.assert_allclose(many.grad_U, one.grad_U, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(many.grad_W, one.grad_W, rtol=1e-11, atol=1e-14)
    fd = finite_difference(lambda: objective_and_grad(U, W, Batch.from_inputs(input_grid(p, k), p, 7), 0.2,
                                                      "norm").total, W)
    assert np.abs(many.grad_W - fd).max() <= 1e-6 * max(1.0, np.abs(fd).max())
