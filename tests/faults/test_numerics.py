"""The normalized margin is scale-invariant: a valid network scaled by 1e200 or 1e-200 gets the same verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest

from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.tasks.modular_addition.checks import verify_network
from tests.faults.helpers import run_cli


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e300, 1e-300])
def test_verdict_is_scale_invariant(scale):
    net = build_construction(5, 2)
    base = verify_network(net, 5, 2)
    scaled = verify_network(net.scaled(scale), 5, 2)
    assert base.verdict == scaled.verdict == "verified"
    assert math.isclose(scaled.fields["normalized_margin"], base.fields["normalized_margin"], rel_tol=1e-13)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_norm_does_not_overflow_or_underflow(scale):
    rng = np.random.default_rng(3)
    net = PolyNetwork(rng.normal(size=(6, 3, 5)), rng.normal(size=(6, 5)))
    big = net.scaled(scale)
    assert math.isclose(big.norm() / scale, net.norm(), rel_tol=1e-13)
    assert np.allclose(big.neuron_norms() / scale, net.neuron_norms(), rtol=1e-13)
    assert np.allclose(big.normalized().U, net.normalized().U, rtol=1e-13, atol=1e-300)


def test_scaled_network_file_through_the_command_line(tmp_path):
    build_construction(5, 2).scaled(1e200).save(tmp_path / "big.npz")
    run = run_cli("verify", "--network", str(tmp_path / "big.npz"), "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
