"""Network model: validation, the (2, k+1) norm, homogeneity, .npz round trip and bad files."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from margintheory.core.network import PolyNetwork
from margintheory.errors import NetworkFormatError
from margintheory.testing import networks


def test_norm_definition_by_hand():
    U = np.zeros((2, 2, 3))
    W = np.zeros((2, 3))
    U[0, 0, 0] = 3.0
    W[0, 0] = 4.0  # ||theta_0|| = 5
    U[1, 1, 2] = 1.0  # ||theta_1|| = 1
    net = PolyNetwork(U, W)
    assert np.allclose(net.neuron_norms(), [5.0, 1.0])
    assert np.isclose(net.norm(), (5.0**3 + 1.0) ** (1 / 3))


@given(networks(), st.floats(0.1, 10.0))
def test_norm_is_positively_homogeneous(net, alpha):
    assert np.isclose(net.scaled(alpha).norm(), alpha * net.norm(), rtol=1e-12)
    assert np.isclose(net.normalized().norm(), 1.0, rtol=1e-12)


@given(networks())
def test_save_load_roundtrip(tmp_path_factory, net):
    path = tmp_path_factory.mktemp("n") / "net.npz"
    net = PolyNetwork(net.U, net.W, {"frequency": np.arange(net.m)})
    net.save(path)
    back = PolyNetwork.load(path)
    assert np.array_equal(back.U, net.U) and np.array_equal(back.W, net.W)
    assert np.array_equal(back.metadata["frequency"], np.arange(net.m))
    assert [p.name for p in path.parent.iterdir()] == ["net.npz"]  # no temporary left behind


@pytest.mark.parametrize(
    "U,W,msg",
    [
        (np.zeros((2, 3)), np.zeros((2, 3)), "shape"),
        (np.zeros((2, 2, 3)), np.zeros((2, 4)), "requires W"),
        (np.full((1, 1, 3), np.nan), np.zeros((1, 3)), "non-finite"),
        (np.full((1, 1, 3), np.inf), np.zeros((1, 3)), "non-finite"),
        (np.array([[["a", "b", "c"]]]), np.zeros((1, 3)), "numeric"),
        (np.zeros((0, 2, 3)), np.zeros((0, 3)), "degenerate"),
    ],
)
def test_invalid_networks(U, W, msg):
    with pytest.raises(NetworkFormatError, match=msg):
        PolyNetwork(U, W)


def test_bad_files(tmp_path):
    text = tmp_path / "text.npz"
    text.write_text("not a zip")
    with pytest.raises(NetworkFormatError, match="not an .npz"):
        PolyNetwork.load(text)
    missing = tmp_path / "missing.npz"
    np.savez(missing, U=np.zeros((1, 2, 3)))
    with pytest.raises(NetworkFormatError, match="missing"):
        PolyNetwork.load(missing)
    good = tmp_path / "good.npz"
    PolyNetwork(np.ones((2, 2, 3)), np.ones((2, 3))).save(good)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(NetworkFormatError):
        PolyNetwork.load(truncated)
    with pytest.raises(NetworkFormatError, match="no such file"):
        PolyNetwork.load(tmp_path / "nope.npz")
    (tmp_path / "link.npz").symlink_to(tmp_path / "gone" / "x.npz")
    with pytest.raises(NetworkFormatError) as exc:
        PolyNetwork.load(tmp_path / "link.npz")
    gone = tmp_path / "gone" / "x.npz"
    assert str(exc.value) == f"{tmp_path / 'link.npz'}: a symbolic link to {gone}, which does not exist"


def test_saved_files_respect_the_umask(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = tmp_path / "net.npz"
        PolyNetwork(np.ones((1, 2, 3)), np.ones((1, 3))).save(path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
