"""Sparse parity (Morwani et al. Thm 7.8): closed form vs construction, weak duality, characterization, file format."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core import theory
from margintheory.errors import InputError, NetworkFormatError
from margintheory.tasks.parity import checks as parity


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 9), data=st.data())
def test_construction_attains_closed_form(n: int, data) -> None:
    k = data.draw(st.integers(1, n))
    S = np.sort(data.draw(st.permutations(list(range(n))))[:k])
    res = parity.verify_parity(parity.build_parity_construction(n, k, S), construction=True)
    assert res.verdict == "verified", [c.name for c in res.checks if not c.passed]
    assert res.fields["relative_error"] < 1e-13


def test_target_size_10_4() -> None:
    res = parity.verify_parity(parity.build_parity_construction(10, 4), construction=True)
    assert res.verdict == "verified"


def test_closed_form_equals_single_neuron_optimum() -> None:
    """gamma* = max over unit neurons of sqrt(2) k! prod u_S beta (D.7), maximized numerically by AM-GM-free search."""
    from scipy.optimize import minimize

    for k in (1, 2, 3, 4):
        def neg(v: np.ndarray, k: int = k) -> float:
            v = v / np.linalg.norm(v)
            return -math.sqrt(2) * math.factorial(k) * float(np.prod(v[:k])) * v[k]

        best = min(minimize(neg, np.random.default_rng(s).uniform(0.2, 1, k + 1), method="Nelder-Mead",
                            options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000}).fun for s in range(3))
        assert -best == pytest.approx(theory.gamma_star_parity(k), rel=1e-8)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(1e-3, 0.5), extra=st.integers(0, 3))
def test_perturbed_networks_never_exceed_closed_form(seed: int, scale: float, extra: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = 6, 3
    net = parity.build_parity_construction(n, k)
    U = np.concatenate([net.U, rng.normal(size=(extra, n))]) + scale * rng.normal(size=(net.m + extra, n))
    W = np.concatenate([net.W, rng.normal(size=(extra, 2))]) + scale * rng.normal(size=(net.m + extra, 2))
    pert = parity.ParityNetwork(U, W, net.S).normalized()
    h = parity.margins(pert).min()
    assert h <= theory.gamma_star_parity(k) * (1 + 1e-12)


def test_characterization_detects_violations() -> None:
    net = parity.build_parity_construction(5, 2)
    U = net.U.copy()
    U[0, 4] = 0.1  # off-support weight
    bad = parity.ParityNetwork(U, net.W, net.S)
    ch = parity.characterization(bad.normalized())
    assert not ch["support"][0] and ch["support"][1:].all()
    W = net.W.copy()
    W[1] = W[1][::-1]  # flips the sign condition
    ch2 = parity.characterization(parity.ParityNetwork(net.U, W, net.S).normalized())
    assert not ch2["sign"][1]
    res = parity.verify_parity(bad, construction=False)
    assert res.verdict == "refuted"


def test_file_round_trip_and_errors(tmp_path) -> None:
    net = parity.build_parity_construction(6, 3, np.array([1, 3, 5]))
    path = tmp_path / "par.npz"
    net.save(path)
    back = parity.ParityNetwork.load(path)
    assert np.array_equal(back.S, [1, 3, 5]) and np.array_equal(back.U, net.U)
    np.savez(tmp_path / "noS.npz", U=net.U, W=net.W)
    with pytest.raises(InputError):
        parity.ParityNetwork.load(tmp_path / "noS.npz")
    assert parity.ParityNetwork.load(tmp_path / "noS.npz", k=3).k == 3
    np.savez(tmp_path / "bad.npz", U=net.U, W=net.W[:, :1])
    with pytest.raises(NetworkFormatError):
        parity.ParityNetwork.load(tmp_path / "bad.npz", k=3)
    with pytest.raises(InputError):
        theory.validate_nk(3, 4)
