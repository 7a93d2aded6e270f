"""``margintheory.torch`` (optional extra ``torch``) and the weights-only reader checked against torch itself:
skipped when torch is not installed (the test extra does not install it; ``pip install ".[torch]"`` does).

What runs without torch: reading PyTorch files is tested on committed fixtures in ``tests/test_network_io.py``;
here, with torch, the reader is compared with ``torch.load(weights_only=True)`` on files written the ways people
save models, and the committed fixtures with what the installed torch writes.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch not installed (optional extra 'torch')")

from margintheory.core.construction import build_construction  # noqa: E402
from margintheory.core.network import PolyNetwork  # noqa: E402
from margintheory.engines.margins import input_grid, logits  # noqa: E402
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


# -- the weights-only reader against torch itself (the reader's own tests use committed fixtures) ------------------

def _flat(tree, prefix: str = "") -> dict:
    if isinstance(tree, torch.Tensor):
        return {prefix: tree}
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list | tuple) else []
    out: dict = {}
    for key, value in items:
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def _saved_ways(tmp_path):
    """Files written the ways people save models, with the name map that reads the network from each."""
    from torch import nn

    gen = torch.Generator().manual_seed(0)
    U, W = torch.randn(6, 2, 5, generator=gen), torch.randn(6, 5, generator=gen)
    model = PolyNet(6, 2, 5, dtype=torch.float32, generator=gen)
    shared = nn.ModuleDict({"embed": nn.Embedding(5, 6), "unembed": nn.Linear(6, 5, bias=False)})
    opt = torch.optim.AdamW(model.parameters())
    model(torch.tensor([[0, 1]])).sum().backward()
    opt.step()
    big = torch.randn(3 * 6, 5, dtype=torch.float64, generator=gen)
    ways = {
        "zip.pt": (lambda f: torch.save(model.state_dict(), f), None),
        "legacy.pt": (lambda f: torch.save(model.state_dict(), f, _use_new_zipfile_serialization=False), None),
        "protocol3.pt": (lambda f: torch.save(model.state_dict(), f, pickle_protocol=3), None),
        "parameters.pt": (lambda f: torch.save({"U": model.U, "W": model.W}, f), None),  # _rebuild_parameter
        "no_byteorder.pt": (lambda f: torch.save(model.state_dict(), f, _disable_byteorder_record=True), None),
        "shared_embedding.pt": (lambda f: torch.save(shared.state_dict(), f), "U=embed.weight.T,W=unembed.weight.T"),
        "lightning.ckpt": (lambda f: torch.save({
            "state_dict": {f"net.{n}": t for n, t in model.state_dict().items()},
            "optimizer_states": [opt.state_dict()], "epoch": 2, "global_step": 10,
            "hyper_parameters": {"p": 5, "betas": (0.9, 0.99), "flag": True, "none": None},
            "shape": torch.Size([6, 5]), "dtype": torch.float32, "device": torch.device("cpu")}, f),
            "U=state_dict.net.U,W=state_dict.net.W"),
        "low_precision.pt": (lambda f: torch.save({"U": U.bfloat16(), "W": W.half()}, f), None),
        "views.pt": (lambda f: torch.save({"a": big[:6], "b": big[6:12], "w": big[12:].T.contiguous().T}, f),
                     "U=a+b,W=w"),
        "strided.pt": (lambda f: torch.save({"U": torch.randn(5, 2, 6, generator=gen).permute(2, 1, 0),
                                             "W": torch.randn(5, 6, generator=gen).T}, f), None),
    }
    for name, (save, _) in ways.items():
        save(tmp_path / name)
    return {tmp_path / name: names for name, (_, names) in ways.items()}


def test_reader_reads_what_torch_load_weights_only_reads(tmp_path):
    from margintheory.network_io import open_tensor_file

    for path, names in _saved_ways(tmp_path).items():
        ref = _flat(torch.load(path, weights_only=True))
        with open_tensor_file(path) as tf:
            tensors = tf.tensors()
            ours = dict(zip(tensors, tf.load(list(tensors.values())), strict=True))
        assert set(ours) == set(ref), path.name
        for name, t in ref.items():
            want = t.detach().float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.detach().numpy()
            got = np.asarray(ours[name], dtype=want.dtype)
            assert got.shape == want.shape and np.array_equal(got, want), f"{path.name}: {name}"
        net = PolyNetwork.load(path, names=names, k=2)
        assert (net.m, net.k, net.p) == (6, 2, 5), path.name


def test_reader_refuses_what_torch_load_weights_only_refuses(tmp_path):
    from margintheory.errors import NetworkFormatError

    model = PolyNet(2, 2, 3)
    torch.save(model, tmp_path / "module.pt")  # a pickled nn.Module, not a state dict
    torch.save(model.state_dict(), tmp_path / "protocol4.pt", pickle_protocol=4)  # FRAME opcodes
    for name, match in (("module.pt", "refusing to load"), ("protocol4.pt", "opcode")):
        with pytest.raises(Exception):  # noqa: B017 - torch's own error type varies between versions
            torch.load(tmp_path / name, weights_only=True)
        with pytest.raises(NetworkFormatError, match=match):
            PolyNetwork.load(tmp_path / name)


def test_committed_fixtures_are_what_this_torch_writes(tmp_path):
    import importlib.util
    from pathlib import Path

    from margintheory.network_io import open_tensor_file

    here = Path(__file__).resolve().parent / "fixtures"
    spec = importlib.util.spec_from_file_location("make_torch_fixtures", here / "make_torch_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in ("torch_zip_UW.pt", "torch_legacy_checkpoint.pt", "torch_zip_named_checkpoint.pt",
                 "torch_zip_lowp.pt", "safetensors_torch_lowp.safetensors"):
        with open_tensor_file(here / name) as old, open_tensor_file(tmp_path / name) as new:
            a, b = old.tensors(), new.tensors()
            assert list(a) == list(b), name
            assert [t.describe() for t in a.values()] == [t.describe() for t in b.values()], name
            for x, y in zip(old.load(list(a.values())), new.load(list(b.values())), strict=True):
                np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    expected = np.load(here / "torch_zip_lowp_expected.npz")
    again = np.load(tmp_path / "torch_zip_lowp_expected.npz")
    for key in expected.files:
        np.testing.assert_array_equal(expected[key], again[key])
