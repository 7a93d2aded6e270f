"""Network files: .npz / .safetensors round trips, PyTorch files read without torch, the name mapping, and the
file-reading faults (non-regular files, size budget, bombs, pickles, malformed headers): one clear error each."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy as stnp
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.errors import InputError, MarginTheoryError, NetworkFormatError, RefusedError
from margintheory.network_io import NameMap, open_tensor_file, read_arrays
from margintheory.testing import networks
from tests import network_files as nf

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NAMED = "U=model.embeds.0.weight.T+model.embeds.1.weight.T,W=model.unembed.weight.T"


def assert_same_network(a: PolyNetwork, b: PolyNetwork) -> None:
    np.testing.assert_array_equal(a.U, b.U)
    np.testing.assert_array_equal(a.W, b.W)


# -- .npz and .safetensors ----------------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(networks(max_m=5))
def test_npz_to_safetensors_to_npz_is_identical(tmp_path_factory, net):
    d = tmp_path_factory.mktemp("rt")
    net = PolyNetwork(net.U, net.W, {"frequency": np.arange(net.m), "sign": np.ones((net.m, net.k))})
    net.save(d / "a.npz")
    PolyNetwork.load(d / "a.npz").save(d / "b.safetensors")
    back = PolyNetwork.load(d / "b.safetensors")
    back.save(d / "c.npz")
    again = PolyNetwork.load(d / "c.npz")
    for got in (back, again):
        assert_same_network(got, net)
        assert set(got.metadata) == {"frequency", "sign"}
        np.testing.assert_array_equal(got.metadata["sign"], net.metadata["sign"])
    assert sorted(p.name for p in d.iterdir()) == ["a.npz", "b.safetensors", "c.npz"]  # no temporaries left


def test_safetensors_interoperates_with_the_reference_library(tmp_path):
    net = build_construction(5, 2)
    net.save(tmp_path / "ours.safetensors")
    theirs = stnp.load_file(tmp_path / "ours.safetensors")
    np.testing.assert_array_equal(theirs["U"], net.U)
    from safetensors import safe_open

    with safe_open(tmp_path / "ours.safetensors", framework="np") as fh:
        assert fh.metadata() == {"format": "margintheory.PolyNetwork", "format_version": "1"}
    # a file written by a user with the reference library, float32, other tensor order
    stnp.save_file({"W": net.W.astype(np.float32), "U": net.U.astype(np.float32)}, tmp_path / "user.safetensors")
    got = PolyNetwork.load(tmp_path / "user.safetensors")
    np.testing.assert_array_equal(got.U, net.U.astype(np.float32))


def test_output_suffix_chooses_the_format_and_others_are_refused(tmp_path):
    net = build_construction(3, 2)
    for bad in ("net.pt", "net.txt", "net"):
        with pytest.raises(InputError, match="npz or .safetensors|read, not written"):
            net.save(tmp_path / bad)
    assert list(tmp_path.iterdir()) == []


def test_format_version_must_be_a_scalar_integer_one(tmp_path):
    net = build_construction(3, 2)
    for value, match in [(np.array([1, 1, 1]), "scalar integer"), (np.array(1.0), "scalar integer"),
                         (np.array(2), "unsupported format_version 2")]:
        np.savez(tmp_path / "v.npz", U=net.U, W=net.W, format_version=value)
        with pytest.raises(NetworkFormatError, match=match):
            PolyNetwork.load(tmp_path / "v.npz")
    stnp.save_file({"U": net.U, "W": net.W}, tmp_path / "v.safetensors", metadata={"format_version": "7"})
    with pytest.raises(NetworkFormatError, match="unsupported format_version"):
        PolyNetwork.load(tmp_path / "v.safetensors")


# -- state-dict layouts and the name mapping ----------------------------------------------------------------------

def _sd_file(tmp_path: Path, sd: dict[str, np.ndarray], name: str = "sd.safetensors") -> Path:
    stnp.save_file({k: np.ascontiguousarray(v) for k, v in sd.items()}, tmp_path / name)
    return tmp_path / name


def test_layouts_a_and_b_map_to_the_same_network(tmp_path):
    net = build_construction(5, 2)
    a = _sd_file(tmp_path, {"module.U": net.U, "module.W": net.W}, "a.safetensors")
    b = _sd_file(tmp_path, {"model.embed.0.weight": net.U[:, 0].T, "model.embed.1.weight": net.U[:, 1].T,
                            "model.out.weight": net.W.T}, "b.safetensors")
    for path in (a, b):
        assert_same_network(PolyNetwork.load(path), net)


def test_two_tensors_differing_only_by_a_prefix_are_not_chosen_by_file_order(tmp_path):
    """module.U and U in one file: the one read depended on the order of the file's entries (verified one way,
    refuted the other); now the file is refused naming both, and a name map chooses."""
    net = build_construction(5, 2)
    for order in ({"module.U": net.U, "module.W": net.W, "U": 0 * net.U},
                  {"U": 0 * net.U, "W": net.W, "module.U": net.U}):
        path = _sd_file(tmp_path, order)
        with pytest.raises(NetworkFormatError, match="differ only by a prefix") as info:
            PolyNetwork.load(path)
        assert "module.U and U" in str(info.value) or "U and module.U" in str(info.value)
    chosen = PolyNetwork.load(_sd_file(tmp_path, {"module.U": net.U, "module.W": net.W, "U": 0 * net.U}),
                              names="U=module.U,W=module.W")
    assert_same_network(chosen, net)


@pytest.mark.parametrize("sd,match", [
    ({"U": np.zeros((2, 2, 5)), "W": np.zeros((2, 4))}, "U must be"),
    ({"U": np.zeros((2, 2, 5)), "W": np.zeros((2, 5)), "b": np.zeros(5)}, "unexpected tensors"),
    ({"embed.0.weight": np.zeros((5, 3)), "out.weight": np.zeros((5, 3)), "out.bias": np.zeros(5)}, "bias"),
    ({"embed.0.weight": np.zeros((5, 3)), "embed.2.weight": np.zeros((5, 3)), "out.weight": np.zeros((5, 3))},
     "numbered"),
    ({"embed.0.weight": np.zeros((5, 3)), "out.weight": np.zeros((4, 3))}, "each part must be"),
    ({"fc.weight": np.zeros((5, 3))}, "no network in a documented layout.*name map"),
    ({"U": np.full((1, 1, 3), np.nan), "W": np.zeros((1, 3))}, "non-finite"),
])
def test_malformed_state_dicts_are_refused(tmp_path, sd, match):
    with pytest.raises(NetworkFormatError, match=match):
        PolyNetwork.load(_sd_file(tmp_path, sd))


@pytest.mark.parametrize("text,match", [
    ("U=a", "missing W"), ("U=a,W=b,U=c", "twice"), ("X=a,W=b", "cannot read"), ("U=a+,W=b", "empty key"),
    ("U=a,W=b+c", "'\\+' in W"), ("", "cannot read"),
])
def test_bad_name_maps(text, match):
    with pytest.raises(InputError, match=match):
        NameMap.parse(text)


def test_name_mapping_list_transpose_and_shared_embedding(tmp_path):
    net = build_construction(5, 3)
    m, k, p = net.U.shape
    listed = _sd_file(tmp_path, {f"emb{j}": net.U[:, j].T for j in range(k)} | {"unembed": net.W.T}, "l.safetensors")
    got = PolyNetwork.load(listed, names="U=emb0.T+emb1.T+emb2.T,W=unembed.T")
    assert_same_network(got, net)
    with pytest.raises(InputError, match="lists 3 matrices .* k = 2"):
        PolyNetwork.load(listed, names="U=emb0.T+emb1.T+emb2.T,W=unembed.T", k=2)
    with pytest.raises(NetworkFormatError, match="append .T"):
        PolyNetwork.load(listed, names="U=emb0+emb1.T+emb2.T,W=unembed.T")
    with pytest.raises(NetworkFormatError, match="no tensor 'embed0'.*did you mean emb0"):
        PolyNetwork.load(listed, names="U=embed0+emb1+emb2,W=unembed.T")
    # one embedding table shared by all input positions (a model summing one-hot embeddings of its inputs)
    rng = np.random.default_rng(0)
    E, W = rng.normal(size=(p, m)), rng.normal(size=(p, m))
    shared = _sd_file(tmp_path, {"tok.weight": E, "out.weight": W}, "s.safetensors")
    with pytest.raises(InputError, match="shared by all input positions.*number of inputs k"):
        PolyNetwork.load(shared, names="U=tok.weight.T,W=out.weight.T")
    got = PolyNetwork.load(shared, names="U=tok.weight.T,W=out.weight.T", k=3)
    a = np.array([4, 0, 2])
    hidden = E[a].sum(axis=0)  # the model: sum of the inputs' embeddings, cubed, times the output layer
    np.testing.assert_allclose(_logits(got, a), (hidden**3) @ W.T, rtol=1e-12)


def _logits(net: PolyNetwork, a: np.ndarray) -> np.ndarray:
    from margintheory.engines.margins import logits

    return logits(net, a[None, :])[0]


def test_dotted_keys_are_split_anywhere_and_ambiguity_is_an_error(tmp_path):
    with open_tensor_file(FIXTURES / "torch_zip_named_checkpoint.pt") as tf:
        from margintheory.network_io.names import KeyRef, lookup

        t, transpose = lookup(tf, KeyRef("model.unembed.weight.T"))
        assert t.shape == (5, 16) and transpose
        with pytest.raises(NetworkFormatError, match="names a int"):
            lookup(tf, KeyRef("step"))
    path = _sd_file(tmp_path, {"a.b": np.zeros((2, 3))})
    with open_tensor_file(path) as tf:
        tf.tree = {"a": {"b": tf.tree["a.b"]}, "a.b": tf.tree["a.b"]}
        with pytest.raises(NetworkFormatError, match="ambiguous"):
            lookup(tf, KeyRef("a.b"))


# -- PyTorch files, read without torch ----------------------------------------------------------------------------

def test_torch_fixtures_hold_the_construction():
    net = build_construction(5, 2)
    assert_same_network(PolyNetwork.load(FIXTURES / "torch_zip_UW.pt"), net)  # float64 state dict, zip format
    legacy = PolyNetwork.load(FIXTURES / "torch_legacy_checkpoint.pt")  # {"model": embed/out layout, optimizer}
    np.testing.assert_array_equal(legacy.U, net.U.astype(np.float32))
    np.testing.assert_array_equal(legacy.W, net.W.astype(np.float32))
    # two embeddings that are views into one storage, an output matrix stored transposed (non-contiguous)
    assert_same_network(PolyNetwork.load(FIXTURES / "torch_zip_named_checkpoint.pt", names=NAMED), net)


@pytest.mark.parametrize("fixture", ["torch_zip_lowp.pt", "safetensors_torch_lowp.safetensors"])
def test_low_precision_tensors_match_torchs_own_conversion(fixture):
    """bfloat16 and float16 written by torch.save and by safetensors.torch.save_file."""
    expected = np.load(FIXTURES / "torch_zip_lowp_expected.npz")
    got = read_arrays(FIXTURES / fixture, ("U", "W", "U16", "W16"))
    for name in ("U", "W", "U16", "W16"):
        np.testing.assert_array_equal(got[name].astype(np.float32), expected[name])
    with open_tensor_file(FIXTURES / fixture) as tf:
        assert [t.describe() for t in tf.tensors().values()] == [
            "U (16, 2, 5) bfloat16", "W (16, 5) bfloat16", "U16 (16, 2, 5) float16", "W16 (16, 5) float16"]
    net = PolyNetwork.load(FIXTURES / fixture, names="U=U,W=W")  # bfloat16: the construction to ~3 digits
    np.testing.assert_allclose(net.W, build_construction(5, 2).W, rtol=0, atol=4e-3)


def test_checkpoint_contents_are_listed_from_headers_only():
    with open_tensor_file(FIXTURES / "torch_legacy_checkpoint.pt") as tf:
        flat = tf.flat()
        assert flat["epoch"] == 3
        assert flat["optimizer.param_groups.0.lr"] == pytest.approx(1e-3)
        assert tf.tensors()["optimizer.state.0.exp_avg"].shape == (3, 2)


@pytest.mark.parametrize("legacy", [False, True])
def test_hand_written_state_dicts_in_both_torch_layouts(tmp_path, legacy):
    net = build_construction(3, 2)
    pkl, storages = nf.state_dict_pickle({"U": net.U, "W": net.W}, legacy=legacy)
    path = tmp_path / "net.pth"
    path.write_bytes(nf.torch_legacy_bytes(pkl, storages) if legacy else nf.torch_zip_bytes(pkl, storages))
    assert_same_network(PolyNetwork.load(path), net)


def _evil_pickles(marker: Path) -> dict[str, bytes]:
    cmd = f"touch {marker}"
    call = nf._tuple([nf._str(cmd)]) + b"R"
    return {
        "os.system": b"\x80\x02" + nf._global("os", "system") + call + b".",
        "builtins.eval": b"\x80\x02" + nf._global("builtins", "eval") + nf._tuple([nf._str("1")]) + b"R.",
        "posix.system": b"\x80\x02" + nf._global("posix", "system") + call + b".",
        "numpy reconstruct": b"\x80\x02" + nf._global("numpy.core.multiarray", "_reconstruct") + b").",
        "STACK_GLOBAL": b"\x80\x04" + nf._str("os") + nf._str("system") + b"\x93.",
        "INST": b"(ios\nsystem\n" + nf._str(cmd)[0:0] + b".",
        "bytearray(n)": b"\x80\x02" + nf._global("builtins", "bytearray") + nf._tuple([nf._int(2**31 - 1)]) + b"R.",
        "OrderedDict.__setstate__": b"\x80\x02" + nf._global("collections", "Counter") + b")R}b.",
    }


@pytest.mark.parametrize("case", list(_evil_pickles(Path("x"))))
def test_weights_only_rule_refuses_everything_else(tmp_path, case):
    marker = tmp_path / "pwned"
    pkl = _evil_pickles(marker)[case]
    for path in (tmp_path / "z.pt", tmp_path / "l.pt"):
        data = nf.torch_zip_bytes(pkl, {}) if path.name == "z.pt" else nf.torch_legacy_bytes(pkl, {})
        path.write_bytes(data)
        with pytest.raises(NetworkFormatError) as err:
            PolyNetwork.load(path)
        assert str(err.value).startswith(str(path))
    assert not marker.exists()


def test_plain_pickles_and_torchscript_style_globals_are_refused(tmp_path):
    import pickle

    plain = tmp_path / "plain.pkl"
    plain.write_bytes(pickle.dumps({"U": [1.0]}, protocol=2))
    with pytest.raises(NetworkFormatError, match="not a PyTorch file"):
        PolyNetwork.load(plain)
    scripted = tmp_path / "scripted.pt"
    scripted.write_bytes(nf.torch_zip_bytes(b"\x80\x02" + nf._global("__torch__", "Model") + b").", {}))
    with pytest.raises(NetworkFormatError, match="names __torch__.Model"):
        PolyNetwork.load(scripted)


@pytest.mark.parametrize("case,match", [
    ("view past storage", "reaches element"),
    ("missing storage", "missing from the archive"),
    ("short storage", "truncated"),
    ("cycle", "cycle"),
])
def test_malformed_torch_structures(tmp_path, case, match):
    t = nf.tensor_pickle("0", "DoubleStorage", 10, (4, 3), (3, 1))
    if case == "view past storage":
        pkl, storages = nf.dict_pickle({"U": t}), {"0": bytes(80)}
    elif case == "missing storage":
        pkl, storages = nf.dict_pickle({"U": nf.tensor_pickle("0", "DoubleStorage", 2, (2,), (1,))}), {}
    elif case == "short storage":
        pkl, storages = nf.dict_pickle({"U": nf.tensor_pickle("0", "DoubleStorage", 20, (20,), (1,))}), {"0": bytes(8)}
    else:
        pkl, storages = b"\x80\x02]q\x00h\x00a.", {}
    path = tmp_path / "x.pt"
    path.write_bytes(nf.torch_zip_bytes(pkl, storages))
    with pytest.raises(NetworkFormatError, match=match):
        with open_tensor_file(path) as tf:
            tf.load(list(tf.tensors().values()))


# -- files trusted too much: non-regular files, size budget, bombs, headers ---------------------------------------

@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "fifo", "directory"])
def test_only_regular_files_are_opened(tmp_path, target):
    path = {"fifo": tmp_path / "pipe.npz", "directory": tmp_path}.get(target, Path(target))
    if target == "fifo":
        os.mkfifo(path)
    if not path.exists():
        pytest.skip(f"{path} does not exist here")
    with pytest.raises(NetworkFormatError, match="not a regular file"):
        PolyNetwork.load(path)


def test_huge_declared_shapes_are_refused_before_reading(tmp_path):
    header = {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
    (tmp_path / "h.npz").write_bytes(nf.npz_bytes({"U.npy": nf.npy_bytes(header, b"\0" * 64),
                                                    "W.npy": nf.array_npy(np.zeros((2, 3)))}))
    with pytest.raises(NetworkFormatError, match=r"truncated: its header declares shape \(1000000, 1000000\)"):
        PolyNetwork.load(tmp_path / "h.npz")
    st = {"U": {"dtype": "F64", "shape": [10**6, 10**6], "data_offsets": [0, 8 * 10**12]}}
    (tmp_path / "h.safetensors").write_bytes(nf.safetensors_bytes(st, b"\0" * 64))
    with pytest.raises(NetworkFormatError, match="truncated"):
        PolyNetwork.load(tmp_path / "h.safetensors")
    (tmp_path / "l.safetensors").write_bytes(nf.safetensors_bytes(b"{}", length=2**62))
    with pytest.raises(NetworkFormatError, match="header length .* exceeds"):
        PolyNetwork.load(tmp_path / "l.safetensors")


def _bomb(declared: int) -> bytes:
    """U (n, 2, 4) and W (n, 4) of zeros, deflated ~1000:1: a network file in every respect, ``declared`` bytes
    uncompressed."""
    rows = declared // 96 // 2**17 * 2**17
    return nf.zip_bomb_npz(rows, {"U.npy": (2, 4), "W.npy": (4,)})


def test_zip_bomb_is_refused_before_decompression(tmp_path):
    bomb = tmp_path / "bomb.npz"
    bomb.write_bytes(_bomb(3 * 2**30))  # ~3 MB on disk, 3 GiB declared
    assert bomb.stat().st_size < 8 * 2**20
    tracemalloc.start()
    try:
        with pytest.raises(RefusedError, match="more than the memory budget max_memory = 2.0 GiB"):
            PolyNetwork.load(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20
    # with a budget that allows it, the same code path does decompress (the refusal above is the budget's doing)
    small = tmp_path / "small.npz"
    small.write_bytes(nf.zip_bomb_npz(2**17, {"X.npy": ()}))
    assert read_arrays(small, ("X",))["X"].shape == (2**17,)


def test_object_arrays_are_never_unpickled(tmp_path):
    obj = np.array([{"evil": 1}], dtype=object)
    (tmp_path / "o.npz").write_bytes(nf.npz_bytes({"U.npy": nf.array_npy(obj), "W.npy": nf.array_npy(obj)}))
    with pytest.raises(NetworkFormatError, match="pickled data is never loaded"):
        PolyNetwork.load(tmp_path / "o.npz")


@pytest.mark.parametrize("name,data,match", [
    ("t.npz", b"not a zip", "not an .npz archive"),
    ("t.npz", nf.safetensors_bytes({}), "looks like a safetensors file"),
    ("t.npz", nf.npz_bytes({"U.npy": b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 70000}), "not a valid .npy header"),
    ("t.npz", nf.npz_bytes({"U.txt": b"x"}), "not an .npy member"),
    ("t.safetensors", nf.safetensors_bytes(b"[1,2]"), "JSON object"),
    ("t.safetensors", nf.safetensors_bytes(b"{not json"), "not valid JSON"),
    ("t.safetensors", nf.safetensors_bytes({"U": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}},
                                           b"\0"), "unsupported dtype"),
    ("t.safetensors", nf.safetensors_bytes({"U": {"dtype": "F64", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8),
     "needs 16 bytes"),
    ("t.safetensors", nf.safetensors_bytes({"U": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]},
                                            "W": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),
     "overlap"),
    ("t.safetensors", b"\x01\x00", "not a safetensors file"),
    ("t.pt", b"\x80\x02", "truncated"),
    ("t.pt", b"garbage!", "not a PyTorch file"),
    ("t.weird", b"garbage!", "unknown network file type"),
])
def test_malformed_files_say_what_is_wrong(tmp_path, name, data, match):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(NetworkFormatError, match=match):
        PolyNetwork.load(tmp_path / name)


# -- the command line ---------------------------------------------------------------------------------------------

def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "margintheory.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_cli_verifies_a_torch_checkpoint_with_names_and_refuses_devices(tmp_path):
    proc = _cli("verify", "--network", str(FIXTURES / "torch_zip_named_checkpoint.pt"), "--names", NAMED)
    assert proc.returncode == 0, proc.stderr
    assert "verified" in proc.stdout
    fifo = tmp_path / "net.npz"
    os.mkfifo(fifo)
    for target in (str(fifo),):  # a FIFO must be refused at once, not block (devices: see the library tests)
        proc = _cli("verify", "--network", target, "--p", "5", "--k", "2", timeout=30)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1 and "not a regular file" in proc.stderr
    proc = _cli("analyze", str(FIXTURES / "torch_zip_named_checkpoint.pt"), "--p", "5", "--k", "2", "--names", "U=x")
    assert proc.returncode == 2 and "missing W" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_zip_bomb_is_refused_in_bounded_memory(tmp_path):
    bomb = tmp_path / "bomb.npz"
    bomb.write_bytes(_bomb(3_900_000_000))
    # the peak is read by a small launcher from its own children: a child forked straight from this (large) test
    # worker would report the worker's resident size, which Linux carries into the child's maxrss across exec
    launcher = ("import resource, subprocess, sys\n"
                "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,"
                " timeout=120)\n"
                "sys.stderr.write(r.stderr)\n"
                "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    proc = subprocess.run([sys.executable, "-c", launcher, sys.executable, "-m", "margintheory.cli", "verify",
                           "--network", str(bomb)], capture_output=True, text=True, timeout=150)
    code, maxrss = (int(x) for x in proc.stdout.split())
    text = proc.stderr
    assert code == 2 and "Traceback" not in text and "memory budget" in text, text
    assert text.count("\n") == 1
    assert maxrss < 600 * 1024  # KiB: the 3.9 GB payload was never decompressed


def test_any_failure_is_a_margintheory_error(tmp_path):
    (tmp_path / "x.npz").write_bytes(nf.npz_bytes({"U.npy": nf.array_npy(np.zeros((1, 1, 3)))}))
    with pytest.raises(MarginTheoryError, match="missing|no network"):
        PolyNetwork.load(tmp_path / "x.npz")


def test_training_checkpoints_go_through_the_same_reader(tmp_path):
    from margintheory.training.checkpoint import load_checkpoint

    fifo = tmp_path / "checkpoint.npz"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a readable training checkpoint .*not a regular file"):
        load_checkpoint(fifo)
    obj = tmp_path / "obj.npz"
    obj.write_bytes(nf.npz_bytes({"state_json.npy": nf.array_npy(np.array([{"a": 1}], dtype=object))}))
    with pytest.raises(InputError, match="pickled data is never loaded"):
        load_checkpoint(obj)


def test_parity_networks_in_both_formats(tmp_path):
    from margintheory.tasks.parity.checks import ParityNetwork, build_parity_construction

    net = build_parity_construction(6, 3)
    for name in ("par.npz", "par.safetensors"):
        net.save(tmp_path / name)
        back = ParityNetwork.load(tmp_path / name)
        np.testing.assert_array_equal(back.U, net.U)
        np.testing.assert_array_equal(back.S, net.S)
    with pytest.raises(NetworkFormatError, match="not a regular file"):
        ParityNetwork.load(tmp_path)


LAYOUTS = ["npz", "safetensors", "layout-b", "list-T", "nested-zip", "nested-legacy"]


@settings(max_examples=25, deadline=None)
@given(networks(max_m=4), st.sampled_from(LAYOUTS))
def test_every_layout_reads_back_the_same_network(tmp_path_factory, net, layout):
    """The same weights written in any supported layout (and mapped with --names where needed) read back
    bit-identical."""
    d = tmp_path_factory.mktemp("layout")
    k = net.k
    names = None
    if layout in ("npz", "safetensors"):
        path = d / f"n.{layout}"
        net.save(path)
    elif layout == "layout-b":
        path = _sd_file(d, {f"embed.{j}.weight": net.U[:, j].T for j in range(k)} | {"out.weight": net.W.T})
    elif layout == "list-T":
        path = _sd_file(d, {f"e{j}": net.U[:, j].T for j in range(k)} | {"o": net.W.T})
        names = "U=" + "+".join(f"e{j}.T" for j in range(k)) + ",W=o.T"
    else:
        sd = {f"emb{j}.weight": np.ascontiguousarray(net.U[:, j]) for j in range(k)} | {"head": net.W}
        pkl, storages = nf.state_dict_pickle(sd, legacy=layout == "nested-legacy")
        # wrap the state dict in a checkpoint {"model": sd, "epoch": 3}
        pkl = b"\x80\x02}(" + nf._str("model") + pkl[2:-1] + nf._str("epoch") + nf._int(3) + b"u."
        path = d / "ckpt.pt"
        path.write_bytes(nf.torch_legacy_bytes(pkl, storages) if layout == "nested-legacy"
                         else nf.torch_zip_bytes(pkl, storages))
        names = "U=" + "+".join(f"model.emb{j}.weight" for j in range(k)) + ",W=model.head"
    # with one input position, a one-key U is read as a shared table: the user gives k (--k), as here
    assert_same_network(PolyNetwork.load(path, names=names, k=k if names else None), net)


def test_memory_budget_boundary_is_exact(tmp_path):
    """float64 U, W are read once (no copy); float32 ones also get their float64 copy counted."""
    net = build_construction(5, 2)
    net.save(tmp_path / "f64.npz")
    need = net.U.nbytes + net.W.nbytes
    PolyNetwork.load(tmp_path / "f64.npz", max_memory=need + 8 * net.m * 3)  # + the meta__ int arrays
    with pytest.raises(RefusedError, match="more than the memory budget"):
        PolyNetwork.load(tmp_path / "f64.npz", max_memory=need - 1)
    np.savez(tmp_path / "f32.npz", U=net.U.astype(np.float32), W=net.W.astype(np.float32))
    need32 = need // 2 + need
    PolyNetwork.load(tmp_path / "f32.npz", max_memory=need32)
    with pytest.raises(RefusedError):
        PolyNetwork.load(tmp_path / "f32.npz", max_memory=need32 - 1)


def test_float32_checkpoint_verifies_at_the_precision_it_was_saved_in(capsys):
    """The float32 advice of docs/network-files.md: the construction rounded to float32 is refuted at the float64
    tolerance (its margin is below gamma* by ~5e-8) and verified with --rtol 1e-5 --fourier-tol 1e-5."""
    from margintheory.cli import main

    ckpt = str(FIXTURES / "torch_legacy_checkpoint.pt")
    assert main(["verify", "--network", ckpt]) == 1
    assert main(["verify", "--network", ckpt, "--rtol", "1e-5"]) == 1  # the Fourier checks still at 1e-8
    assert main(["verify", "--network", ckpt, "--rtol", "1e-5", "--fourier-tol", "1e-5"]) == 0
    assert "verdict: verified" in capsys.readouterr().out


def test_a_mapped_weight_with_a_nonzero_bias_is_refused(tmp_path):
    """Verifying U and W of a model whose layers have biases would verify a different function."""
    net = build_construction(5, 2)
    sd = {"embeds.0.weight": net.U[:, 0, :].T.copy(), "embeds.1.weight": net.U[:, 1, :].T.copy(),
          "unembed.weight": net.W.T.copy()}
    names = "U=embeds.0.weight.T+embeds.1.weight.T,W=unembed.weight.T"
    for bias, ok in ((np.zeros(5), True), (np.r_[0.0, 0, 0, 0, 1e-3], False)):
        stnp.save_file({**sd, "unembed.bias": bias}, tmp_path / "hf.safetensors")
        if ok:
            assert_same_network(PolyNetwork.load(tmp_path / "hf.safetensors", names=names), net)
        else:
            with pytest.raises(NetworkFormatError, match="unembed.bias is a nonzero bias of unembed.weight"):
                PolyNetwork.load(tmp_path / "hf.safetensors", names=names)
    stnp.save_file({**sd, "embeds.1.bias": np.ones(16)}, tmp_path / "hf.safetensors")
    with pytest.raises(NetworkFormatError, match="embeds.1.bias"):
        PolyNetwork.load(tmp_path / "hf.safetensors", names=names)
