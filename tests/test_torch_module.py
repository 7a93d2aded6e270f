"""``margintheory.torch`` (optional extra ``torch``): skipped when torch is not installed.

What runs without torch: reading PyTorch files is tested on committed fixtures in ``tests/test_network_io.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch not installed (optional extra 'torch')")

from margintheory.construction import build_construction  # noqa: E402
from margintheory.margins import input_grid, logits  # noqa: E402
from margintheory.network import PolyNetwork  # noqa: E402
from margintheory.torch import PolyNet  # noqa: E402


def test_forward_matches_the_numpy_network():
    net = build_construction(5, 3)
    model = PolyNet.from_network(net)
    a = input_grid(5, 3)
    got = model(torch.from_numpy(a)).detach().numpy()
    np.testing.assert_allclose(got, logits(net), rtol=1e-12, atol=1e-14)
    assert float(model.norm().detach()) == pytest.approx(net.norm(), rel=1e-12)


def test_round_trip_and_state_dict_read_without_torch(tmp_path):
    net = build_construction(5, 2)
    model = PolyNet.from_network(net)
    back = model.to_network()
    np.testing.assert_array_equal(back.U, net.U)
    torch.save(model.state_dict(), tmp_path / "net.pt")
    got = PolyNetwork.load(tmp_path / "net.pt")  # the package's weights-only reader, not torch
    np.testing.assert_array_equal(got.W, net.W)
    torch.save({"model": model.state_dict(), "epoch": 1}, tmp_path / "ckpt.pt", _use_new_zipfile_serialization=False)
    np.testing.assert_array_equal(PolyNetwork.load(tmp_path / "ckpt.pt").U, net.U)


def test_gradient_flows_and_shapes_are_checked():
    model = PolyNet(4, 2, 5, generator=torch.Generator().manual_seed(0))
    out = model(torch.tensor([[0, 1], [4, 2]]))
    out.sum().backward()
    assert model.U.grad is not None and model.U.grad.shape == (4, 2, 5)
    with pytest.raises(ValueError, match="shape"):
        model(torch.tensor([0, 1]))
