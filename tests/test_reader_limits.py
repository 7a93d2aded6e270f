"""The readers' own limits, each pinned by a file just over it (and one just under, where the boundary matters): the
weights-only allow-list, the pickle size, nesting, operations, shared objects, keys that are hashed, names, the time
budget; the safetensors header length; the budget of a view into a larger storage.  The hostile-file campaign that
runs the real command (the time budget given as --max-seconds included) is tests/faults/test_hostile_files.py."""

from __future__ import annotations

import io
import pickle
import time
import zipfile

import pytest

from margintheory.core.network import PolyNetwork
from margintheory.errors import NetworkFormatError, RefusedError
from margintheory.network_io import open_tensor_file
from margintheory.network_io import weights_only_pickle as wop
from margintheory.network_io.torch_format import pickle_limit
from tests import network_files as nf

MIB = 2**20


def test_the_allow_list_is_exactly_this():
    """A callable added to the allow-list (say ``builtins.getattr``) must be a deliberate, reviewed change."""
    assert set(wop.CALLABLES) == {
        "collections.OrderedDict", "collections.Counter", "builtins.set", "builtins.bytearray", "builtins.complex",
        "_codecs.encode", "torch.Size", "torch.device", "torch._utils._rebuild_tensor",
        "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor_v3", "torch._utils._rebuild_parameter",
        "torch._utils._rebuild_parameter_with_state", "torch._tensor._rebuild_from_type_v2",
        "torch.nn.parameter.Parameter",
    }
    assert wop.MARKERS == set(wop.STORAGE_DTYPES) | set(wop.DTYPE_GLOBALS) | {"torch.Tensor"}
    assert all(m.startswith("torch.") for m in wop.MARKERS)


@pytest.mark.parametrize("path", ["builtins.getattr", "builtins.eval", "collections.defaultdict", "torch.load"])
def test_globals_outside_the_allow_list_are_refused(tmp_path, path):
    module, _, name = path.rpartition(".")
    f = tmp_path / "g.pt"
    f.write_bytes(nf.torch_zip_bytes(b"\x80\x02" + nf._global(module, name) + b").", {}))
    with pytest.raises(NetworkFormatError, match=f"names {path}"):
        open_tensor_file(f)


def _pickle_of(n_bytes: int) -> bytes:
    """A valid pickle of exactly ``n_bytes`` bytes (a string)."""
    body = n_bytes - 2 - 5 - 1
    return b"\x80\x02" + nf._str("x" * body) + b"."


def test_a_data_pkl_over_the_limit_is_refused_before_it_is_read(tmp_path):
    budget = 64 * MIB
    limit = pickle_limit(budget)
    assert limit == MIB
    for size, refused in ((limit, False), (limit + 1, True)):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("archive/data.pkl", _pickle_of(size))
        f = tmp_path / "big.pt"
        f.write_bytes(buf.getvalue())
        if refused:
            with pytest.raises(NetworkFormatError, match=f"data.pkl of {limit + 1} bytes exceeds the {limit}-byte"):
                open_tensor_file(f, max_memory=budget)
        else:
            with open_tensor_file(f, max_memory=budget) as tf:
                assert tf.tree == "x" * (size - 8)


def test_a_legacy_pickle_running_past_the_limit_is_refused(tmp_path):
    budget = 64 * MIB
    f = tmp_path / "big.pt"
    f.write_bytes(pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + _pickle_of(MIB + 64))
    with pytest.raises(NetworkFormatError, match="exceeds the size limit"):
        open_tensor_file(f, max_memory=budget)


def test_a_safetensors_header_longer_than_the_file_is_refused_as_such(tmp_path):
    f = tmp_path / "h.safetensors"
    f.write_bytes(nf.safetensors_bytes(b"{}", length=1000))  # within the format's 100 MB, beyond the file's 10 bytes
    with pytest.raises(NetworkFormatError, match=r"header length 1000 exceeds the file \(10 bytes\)"):
        PolyNetwork.load(f)


@pytest.mark.parametrize("metadata", [[], "", 0, False])
def test_safetensors_metadata_that_is_not_an_object_is_refused(tmp_path, metadata):
    """As the reference reader ("expected a map"): a falsy non-object __metadata__ was read as empty."""
    import numpy as np

    U, W = np.ones((1, 2, 3)), np.ones((1, 3))
    header = {"__metadata__": metadata,
              "U": {"dtype": "F64", "shape": [1, 2, 3], "data_offsets": [0, 48]},
              "W": {"dtype": "F64", "shape": [1, 3], "data_offsets": [48, 72]}}
    f = tmp_path / "m.safetensors"
    f.write_bytes(nf.safetensors_bytes(header, U.tobytes() + W.tobytes()))
    with pytest.raises(NetworkFormatError, match="__metadata__ must map strings to strings"):
        PolyNetwork.load(f)
    header["__metadata__"] = None  # null: no metadata
    f.write_bytes(nf.safetensors_bytes(header, U.tobytes() + W.tobytes()))
    assert PolyNetwork.load(f).m == 1


def test_a_small_view_into_a_storage_over_the_budget_is_refused_before_reading(tmp_path):
    """Reading a view reads its whole storage: a (2, 2) view into a 1 MiB storage counts as 1 MiB."""
    numel = MIB // 8
    view = nf.tensor_pickle("0", "DoubleStorage", numel, (2, 2), (2, 1))
    f = tmp_path / "v.pt"
    f.write_bytes(nf.torch_zip_bytes(nf.dict_pickle({"U": view}), {"0": bytes(8 * numel)}))
    with open_tensor_file(f, max_memory=MIB // 2) as tf:
        (t,) = tf.tensors().values()
        assert t.nbytes == 32 and t.read_nbytes == MIB
        with pytest.raises(RefusedError, match="max_memory"):
            tf.load([t])
    with open_tensor_file(f, max_memory=2 * MIB) as tf:
        assert tf.load(list(tf.tensors().values()))[0].shape == (2, 2)


def _nested(levels: int) -> bytes:
    """``{"a": {"a": ... {"a": None}}}`` with ``levels`` dicts."""
    return b"\x80\x02" + (b"}" + nf._str("a")) * levels + b"N" + b"s" * levels + b"."


def test_nesting_of_64_levels_reads_and_deeper_is_refused_as_it_is_built(tmp_path):
    f = tmp_path / "n.pt"
    f.write_bytes(nf.torch_zip_bytes(_nested(64), {}))
    with open_tensor_file(f) as tf:
        assert tf.flat() == {".".join(["a"] * 64): None}
    f.write_bytes(nf.torch_zip_bytes(_nested(100), {}))
    with pytest.raises(NetworkFormatError, match="nested deeper than 64 levels"):
        open_tensor_file(f)
    f.write_bytes(nf.torch_zip_bytes(b"\x80\x02N" + b"\x85" * 10**5 + b".", {}))
    t0 = time.perf_counter()
    with pytest.raises(NetworkFormatError, match="nested deeper than 64 levels"):
        open_tensor_file(f)
    assert time.perf_counter() - t0 < 1


def _memo_dag(levels: int) -> bytes:
    out = b"\x80\x02K\x01q\x00"
    for i in range(1, levels + 1):
        out += b"h" + bytes([i - 1]) + b"h" + bytes([i - 1]) + b"\x86q" + bytes([i])
    return out + b"."


def test_shared_objects_count_at_each_use(tmp_path):
    f = tmp_path / "d.pt"
    f.write_bytes(nf.torch_zip_bytes(_memo_dag(10), {}))  # 2^11 - 1 nodes: read, expanded as a tree
    with open_tensor_file(f) as tf:
        assert len(tf.flat()) == 2**10
    f.write_bytes(nf.torch_zip_bytes(_memo_dag(60), {}))  # 2^61 - 1 nodes in 400 bytes: refused at once
    with pytest.raises(NetworkFormatError, match=r"reuses shared objects so often .* 131071 parts"):
        open_tensor_file(f)


def test_a_shared_config_is_read_at_both_places(tmp_path):
    cfg = {"lr": 0.1, "betas": (0.9, 0.98)}
    f = tmp_path / "s.pt"
    f.write_bytes(nf.torch_zip_bytes(pickle.dumps({"a": cfg, "b": [cfg, cfg]}, protocol=2), {}))
    with open_tensor_file(f) as tf:
        assert tf.flat() == {"a.lr": 0.1, "a.betas.0": 0.9, "a.betas.1": 0.98, "b.0.lr": 0.1, "b.0.betas.0": 0.9,
                             "b.0.betas.1": 0.98, "b.1.lr": 0.1, "b.1.betas.0": 0.9, "b.1.betas.1": 0.98}


@pytest.mark.parametrize("pkl,match", [
    (b"\x80\x02]q\x00h\x00\x85h\x00K\x01a.", "changed after it was placed in another"),
    (b"\x80\x02]q\x00h\x00a.", "cycle"),
    (b"\x80\x02}q\x00K\x01h\x00s.", "cycle"),
    (b"\x80\x02}(K\x01\x85\x85Nu.", "refusing a nested tuple as dict key"),
    (b"\x80\x02}]Ns.", "refusing a list as dict key"),
    (b"\x80\x02cbuiltins\nset\n]]a\x85R.", "refusing a list as set element"),
    (b"\x80\x02ccollections\nCounter\n]K\x01\x85\x85a\x85R.", "refusing a nested tuple as Counter key"),
    (b"\x80\x02ccollections\nOrderedDict\n]]N\x86a\x85R.", "refusing a list as OrderedDict key"),
    (b"\x80\x02ctorch\ndevice\n]\x85R.", "torch.device is allowed only"),
    (b"\x80\x02ctorch\nSize\n(" + b"K\x01" * 65 + b"t\x85R.", "at most 64 integers"),
])
def test_what_would_be_hashed_walked_or_changed_is_checked_first(tmp_path, pkl, match):
    f = tmp_path / "k.pt"
    f.write_bytes(nf.torch_zip_bytes(pkl, {}))
    with pytest.raises(NetworkFormatError, match=match):
        open_tensor_file(f)


def test_flat_tuple_keys_and_sets_of_strings_are_read(tmp_path):
    f = tmp_path / "t.pt"
    f.write_bytes(nf.torch_zip_bytes(pickle.dumps({("a", 1): 2, 3: None}, protocol=2), {}))
    with open_tensor_file(f) as tf:
        assert tf.tree == {"3": None}  # a tuple key has no dotted name: skipped
    strings = b"](" + nf._str("x") + nf._str("y") + b"e"
    f.write_bytes(nf.torch_zip_bytes(b"\x80\x02" + nf._global("builtins", "set") + strings + b"\x85R.", {}))
    with open_tensor_file(f) as tf:
        assert tf.tree == {"x", "y"}


def test_messages_show_untrusted_values_briefly():
    dag: object = 1
    for _ in range(60):
        dag = (dag, dag)  # 2^60 leaves: str() would never finish
    t0 = time.perf_counter()
    text = wop.show(dag)
    assert time.perf_counter() - t0 < 2 and len(text) < 200  # microseconds; 2 s only guards a loaded machine
    assert len(wop.show("k" * 10**6)) < 60 and len(wop.show(b"k" * 10**6)) < 60
    assert wop.show({i: i for i in range(10**5)}) == "<dict of 100000>"


def test_operations_are_bounded_by_the_memory_budget(tmp_path):
    f = tmp_path / "o.pt"
    f.write_bytes(nf.torch_zip_bytes(b"\x80\x02(" + b"N" * 70_000 + b"t.", {}))
    with pytest.raises(NetworkFormatError, match="more operations than the limit of 65536") as err:
        open_tensor_file(f, max_memory=32 * MIB)
    assert err.value.parameter == "max_memory"
    with open_tensor_file(f) as tf:  # the default budget allows 4 Mi operations
        assert len(tf.tree) == 70_000


def test_dotted_names_are_bounded(tmp_path):
    inner = b"N"
    for _ in range(40):
        inner = b"}(h\x01" + inner + b"u"
    f = tmp_path / "names.pt"
    f.write_bytes(nf.torch_zip_bytes(b"\x80\x02" + nf._str("k" * 65536) + b"q\x01" + inner + b".", {}))
    with pytest.raises(NetworkFormatError, match="dotted names of the object tree exceed 16777216 characters"):
        open_tensor_file(f, max_memory=2**30)


def test_parsing_stops_at_the_time_budget(tmp_path):
    f = tmp_path / "slow.pt"
    f.write_bytes(nf.torch_zip_bytes(b"\x80\x02(" + b"N" * 5000 + b"t.", {}))
    with pytest.raises(RefusedError, match="longer than the time budget max_seconds") as err:
        open_tensor_file(f, max_seconds=1e-9)
    assert err.value.parameter == "max_seconds"
    with open_tensor_file(f, max_seconds=60) as tf:
        assert len(tf.tree) == 5000


def test_a_huge_declared_size_is_printed_as_a_power_of_two(tmp_path):
    huge = 2**2030
    raw = huge.to_bytes(255, "little", signed=True)
    pid = (b"(" + nf._str("storage") + nf._global("torch", "DoubleStorage") + nf._str("0") + nf._str("cpu")
           + b"\x8a\xff" + raw + b"tQ")
    view = (nf._global("torch._utils", "_rebuild_tensor_v2") + b"(" + pid + b"K\x00K\x02K\x02\x86K\x02K\x01\x86\x89"
            + nf._global("collections", "OrderedDict") + b")RtR")
    f = tmp_path / "h.pt"
    f.write_bytes(nf.torch_zip_bytes(nf.dict_pickle({"U": view}), {"0": bytes(8)}))
    with open_tensor_file(f) as tf, pytest.raises(RefusedError, match=r"~2\^2033 bytes"):
        tf.load(list(tf.tensors().values()))


def test_safetensors_messages_shorten_what_the_header_says(tmp_path):
    f = tmp_path / "long.safetensors"
    name = "n" * 10**6
    bad = "shape must be a list of at most 64"
    for shape, match in (([2] * 64, "shape .* needs"), ([2] * 65, bad), ([2**63], bad)):
        f.write_bytes(nf.safetensors_bytes({name: {"dtype": "F64", "shape": shape, "data_offsets": [0, 8]}},
                                           bytes(8)))
        with pytest.raises(NetworkFormatError, match=rf"tensor 'nnnn.*\.\.\.n+': {match}") as err:
            PolyNetwork.load(f)
        assert len(str(err.value)) < 400


def test_an_npz_with_too_many_members_is_refused_before_reading_them(tmp_path):
    """Each member's header was read: 200 000 empty members took 13 s and 485 MB before the 'no network' error."""
    import numpy as np

    from margintheory.network_io.npz import MAX_MEMBERS

    f = tmp_path / "many.npz"
    with zipfile.ZipFile(f, "w") as zf:
        empty = nf.array_npy(np.zeros(0))
        for i in range(MAX_MEMBERS + 1):
            zf.writestr(f"a{i}.npy", empty)
    with pytest.raises(NetworkFormatError, match=f"has {MAX_MEMBERS + 1} members; .* at most {MAX_MEMBERS}"):
        PolyNetwork.load(f)
