"""Fourier tools: the DFT convention, Plancherel, phases of cosines, Lemma C.14 / C.20 on random networks."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from margintheory.core.network import PolyNetwork
from margintheory.engines.fourier import dft, max_normalized_power, multidim_dft_theory, neuron_fourier, one_sided_power
from margintheory.engines.margins import exhaustive_margin
from margintheory.testing import networks


@given(st.integers(2, 40), st.integers(0, 2**32 - 1))
def test_plancherel_for_the_dft_convention(p, seed):
    x = np.random.default_rng(seed).normal(size=p)
    X = dft(x)
    assert math.isclose(float(np.sum(np.abs(X) ** 2)), p * float(np.sum(x**2)), rel_tol=1e-12)
    assert math.isclose(float(one_sided_power(x).sum()), p * float(np.sum(x**2)), rel_tol=1e-12)
    # convention: f^(j) = sum_x f(x) exp(-2 pi i j x / p)
    j = 1 % p
    direct = np.sum(x * np.exp(-2j * np.pi * j * np.arange(p) / p))
    assert abs(X[j] - direct) <= 1e-10 * (1 + abs(direct))


@given(st.sampled_from([5, 7, 11, 13]), st.data())
def test_cosine_phase_and_amplitude_recovered(p, data):
    zeta = data.draw(st.integers(1, (p - 1) // 2))
    k = data.draw(st.integers(1, 3))
    phases = [data.draw(st.floats(-3.0, 3.0)) for _ in range(k)]
    amp = data.draw(st.floats(0.1, 3.0))
    x = np.arange(p)
    U = np.array([[amp * np.cos(ph + 2 * np.pi * zeta * x / p) for ph in phases]])
    theta_w = sum(phases)
    W = np.array([amp * np.cos(theta_w + 2 * np.pi * zeta * x / p)])
    nf = neuron_fourier(PolyNetwork(U, W))
    assert nf.frequency[0] == zeta
    assert np.allclose(nf.amplitudes[0], amp, rtol=1e-10)
    assert abs(nf.phase_residual[0]) < 1e-9
    assert nf.in_optimal_set[0]
    # the opposite sign of w breaks the phase condition by pi
    nf_bad = neuron_fourier(PolyNetwork(U, -W))
    assert abs(abs(nf_bad.phase_residual[0]) - np.pi) < 1e-9 and not nf_bad.in_optimal_set[0]


def test_max_normalized_power_extremes():
    p = 11
    x = np.arange(p)
    assert np.isclose(max_normalized_power(np.cos(2 * np.pi * 3 * x / p)), 1.0)
    mixed = np.cos(2 * np.pi * x / p) + np.cos(2 * np.pi * 2 * x / p)
    assert np.isclose(max_normalized_power(mixed), 0.5)


@given(networks())
def test_multidim_dft_from_logits_matches_lemma_c14_formula(net):
    res = exhaustive_margin(net)
    direct = res.multidim_dft()[1:]
    formula = multidim_dft_theory(net)[1:]
    scale = max(1.0, float(np.abs(direct).max()))
    assert np.max(np.abs(direct - formula)) <= 1e-9 * scale
