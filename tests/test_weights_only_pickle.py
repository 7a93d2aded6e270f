"""The weights-only unpickler opcode by opcode: what it builds equals what ``pickle.loads`` builds for plain data
(a property over random nested data, memo indices past 255 and shared objects included), each allowed call builds
what it should, and each limit holds exactly at its boundary (sizes with shared objects, nesting, names, tensor
views).  Found by mutation testing (tools/mutation_network_io.sh): each test fails for some changed line."""

from __future__ import annotations

import pickle
from collections import Counter, OrderedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.errors import NetworkFormatError
from margintheory.network_io import weights_only_pickle as wop
from tests import network_files as nf

G = nf._global


def _load(data: bytes, *, objects: int = 1 << 22, file_end: bool = True, storage=None):
    limits = wop.Limits(objects, 1 << 30)
    return wop.load(wop.Reader(data, "x", file_end=file_end), storage or (lambda pid: pid), limits)


def _storage(numel: int = 4, dtype: str = "DoubleStorage") -> wop.StorageRef:
    return wop.StorageRef("0", wop.STORAGE_DTYPES[f"torch.{dtype}"], numel)


scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
           | st.text(max_size=8) | st.sampled_from(["\ud800", "é", "x" * 300]))
keys = st.text(max_size=6) | st.integers(-2**40, 2**40)
plain = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.tuples(inner) | st.tuples(inner, inner)
                     | st.tuples(inner, inner, inner) | st.lists(inner, min_size=4, max_size=6).map(tuple)
                     | st.dictionaries(keys, inner, max_size=5), max_leaves=30)


@settings(max_examples=60, deadline=None)
@given(plain)
def test_plain_data_reads_as_pickle_reads_it(obj):
    data = pickle.dumps(obj, protocol=2)
    assert _load(data) == pickle.loads(data)


def test_memo_indices_past_255_and_shared_objects():
    words = [f"w{i}" for i in range(300)]
    shared = ["s", 1]
    obj = {"words": words, "again": words[::-1], "a": shared, "b": (shared, shared), "neg": [-1, -300, -2**31],
           "big": [2**31, 2**40, -2**40, 65535, 65536], "f": [1.5, -0.0, 1e300], "t": (True, False, None)}
    data = pickle.dumps(obj, protocol=2)
    assert b"r" in data and b"j" in data  # LONG_BINPUT, LONG_BINGET
    assert _load(data) == obj


@pytest.mark.parametrize("data,expected", [
    (b"\x80\x02\x8f.", set()),
    (b"\x80\x02U\x03abc.", b"abc"),
    (b"\x80\x02\x8a\x02\x00\x80.", -32768),
    (b"\x80\x02\x8a\x01\xff.", -1),
    (b"\x80\x02J\xff\xff\xff\xff.", -1),
    (b"\x80\x02M\xff\xff.", 65535),
    (b"\x80\x02K\x01K\x02K\x03\x87.", (1, 2, 3)),
    (b"\x80\x05\x88\x89N\x87.", (True, False, None)),
    (b"\x80\x02" + G("collections", "OrderedDict") + b")\x81.", OrderedDict()),
    (b"\x80\x02" + G("_codecs", "encode") + b"(" + nf._str("ab\xff") + nf._str("latin1") + b"tR.", b"ab\xff"),
    (b"\x80\x02" + G("builtins", "complex") + b"(K\x01K\x02tR.", 1 + 2j),
    (b"\x80\x02" + G("builtins", "bytearray") + b"U\x02ab\x85R.", bytearray(b"ab")),
    (b"\x80\x02" + G("collections", "Counter") + nf._str("aab") + b"\x85R.", Counter("aab")),
    (b"\x80\x02" + G("builtins", "set") + b"U\x02ab\x85R.", {97, 98}),
    (b"\x80\x02" + G("collections", "OrderedDict") + b"](" + nf._str("k") + b"K\x01\x86e\x85R.", OrderedDict(k=1)),
    (b"\x80\x02" + G("torch", "Size") + b"(K\x02K\x03t\x85R.", (2, 3)),
    (b"\x80\x02" + G("torch", "device") + b"(" + nf._str("cuda") + b"K\x01tR.", "cuda:1"),
    (b"\x80\x02" + G("torch", "float32") + b".", wop.Global("torch.float32")),
    (b"\x80\x02" + G("collections", "OrderedDict") + b")R}b.", OrderedDict()),
])
def test_each_opcode_and_call_builds_what_it_should(data, expected):
    got = _load(data)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("data,match", [
    (b"\x80\x06N.", "unknown pickle protocol"),
    (b"\x80\x02]N\x81.", "refusing to call list"),
    (b"\x80\x02" + G("torch", "FloatStorage") + b")R.", "refusing to call torch.FloatStorage"),
    (b"\x80\x02" + G("collections", "OrderedDict") + b"]R.", "call arguments are not a tuple"),
    (b"\x80\x02]}b.", "refusing to set the state of a list"),
    (b"\x80\x02" + G("collections", "OrderedDict") + b")R]b.", "OrderedDict state is not a dict"),
    (b"\x80\x02" + G("collections", "OrderedDict") + b"(K\x01K\x02tR.", "OrderedDict called with 2 arguments"),
    (b"\x80\x02" + G("collections", "OrderedDict") + nf._str("ab") + b"\x85R.", "OrderedDict built from a str"),
    (b"\x80\x02" + G("collections", "OrderedDict") + b"]K\x01K\x02K\x03\x87a\x85R.", "from \\(key, value\\) pairs"),
    (b"\x80\x02" + G("builtins", "set") + b"K\x01\x85R.", "set built from a int"),
    (b"\x80\x02" + G("builtins", "bytearray") + b"K\x05\x85R.", "bytearray is allowed only from bytes"),
    (b"\x80\x02" + G("builtins", "complex") + nf._str("1") + b"\x85R.", "complex is allowed only from numbers"),
    (b"\x80\x02" + G("_codecs", "encode") + b"(" + nf._str("a") + nf._str("utf-8") + b"tR.", "latin1 encoding"),
    (b"\x80\x02" + G("torch", "device") + b"(K\x01K\x02K\x03tR.", "torch.device is allowed only"),
    (b"\x80\x02" + G("torch", "Size") + b"(K\x01\x85K\x01\x85tR.", "torch.Size called with 2 arguments"),
    (b"\x80\x02" + G("torch.nn.parameter", "Parameter") + b"N\x85R.", "Parameter is rebuilt from something"),
    (b"\x80\x02" + G("torch._utils", "_rebuild_tensor_v2") + b"(NK\x00)))tR.", "not a storage record"),
    (b"\x80\x02" + G("torch._utils", "_rebuild_sparse_tensor") + b".", "holds a sparse tensor"),
    (b"\x80\x02\x93.", r"pickle opcode b'\\x93' is not allowed"),
    (b"\x80\x02N", "x is truncated"),
])
def test_each_refusal_says_what_it_refuses(data, match):
    with pytest.raises(NetworkFormatError, match=match):
        _load(data)


def test_a_global_name_of_511_characters_is_read_and_longer_is_malformed():
    name = "n" * 510
    with pytest.raises(NetworkFormatError, match=f"names torch.{name}"):
        _load(b"\x80\x02ctorch\n" + name.encode() + b"\n.")
    with pytest.raises(NetworkFormatError, match="unterminated GLOBAL name"):
        _load(b"\x80\x02ctorch\n" + name.encode() + b"nn\n.")
    with pytest.raises(NetworkFormatError, match="exceeds the size limit"):  # cut by the size limit, not the file
        _load(b"\x80\x02ctorch\nnn", file_end=False)


def _list_of(parts: bytes) -> bytes:
    return b"\x80\x02](" + parts + b"e."


def test_the_size_limit_counts_shared_objects_at_each_use_exactly():
    s = b"](" + b"N" * 255 + b"eq\x00"  # S: 256 nodes
    at_limit = _list_of(s + b"h\x00" * 254 + b"N" * 255)  # 1 + 255 * 256 + 255 = 65536
    assert len(_load(at_limit, objects=65536)) == 510
    with pytest.raises(NetworkFormatError, match="more parts than the limit of 65536"):
        _load(_list_of(s + b"h\x00" * 254 + b"N" * 256), objects=65536)
    as_tuple = b"\x80\x02(" + s + b"h\x00" * 254 + b"N" * 255 + b"t."  # the same through TUPLE
    assert len(_load(as_tuple, objects=65536)) == 510
    with pytest.raises(NetworkFormatError, match="more parts than"):
        _load(b"\x80\x02(" + s + b"h\x00" * 254 + b"N" * 256 + b"t.", objects=65536)


def test_the_sharing_ratio_is_counted_per_byte_read():
    """A tree may have 16 nodes per pickle byte plus 65536: shared lists of 4096 Nones used ~16 times each."""
    s = b"](" + b"N" * 4095 + b"eq\x00"
    ok = _list_of(s + b"h\x00" * 14)  # 1 + 15 * 4096 = 61441 nodes
    assert len(_load(ok)) == 15
    with pytest.raises(NetworkFormatError, match="reuses shared objects so often"):
        _load(_list_of(s + b"h\x00" * 40))  # 1 + 41 * 4096 = 167937 > 65536 + 16 * 4200


def _nested(levels: int) -> bytes:
    return (b"}" + nf._str("a")) * levels + b"N" + b"s" * levels


def test_nesting_is_counted_as_built_even_where_the_tree_walk_never_looks():
    """A BUILD state is discarded (never walked): the unpickler's own nesting limit must still hold there."""
    od = G("collections", "OrderedDict") + b")R"
    limit = wop.MAX_DEPTH + 3
    assert _load(b"\x80\x02" + od + _nested(limit) + b"b.") == OrderedDict()
    with pytest.raises(NetworkFormatError, match="nested deeper than 64 levels"):
        _load(b"\x80\x02" + od + _nested(limit + 1) + b"b.")
    with pytest.raises(NetworkFormatError, match="nested deeper than 64 levels"):  # via APPEND
        _load(b"\x80\x02" + b"]" * (limit + 1) + b"N" + b"a" * (limit + 1) + b".")


def test_a_container_changed_after_use_is_refused_whichever_way_it_was_placed():
    for place in (b"\x85", b"]h\x00a", b"}K\x01h\x00s", b"K\x01h\x00\x86", b"K\x01K\x02h\x00\x87"):
        with pytest.raises(NetworkFormatError, match="changed after it was placed in another"):
            _load(b"\x80\x02]q\x00" + place + b"h\x00K\x01a.")
    assert _load(b"\x80\x02]q\x00h\x00K\x01a\x85.") == ([1],)  # filled first, then placed: fine


@pytest.mark.parametrize("offset,ok", [(2**63 - 1, False), (2**63, False), (127, True)])
def test_tensor_offsets_are_int64(offset, ok):
    if ok:
        ref = wop.rebuild_tensor(_storage(128), offset, (1,), (1,))
        assert ref.offset == 127
    elif offset < 2**63:
        with pytest.raises(NetworkFormatError, match="reaches element"):
            wop.rebuild_tensor(_storage(), offset, (1,), (1,))
    else:
        with pytest.raises(NetworkFormatError, match=r"storage offset must be an integer in \[0, 2\^63\)"):
            wop.rebuild_tensor(_storage(), offset, (1,), (1,))


def test_tensor_views_metadata_and_empty_tensors():
    assert wop.rebuild_tensor(_storage(0), 0, (0, 3), (3, 1)).numel == 0  # an empty view of an empty storage
    assert wop.rebuild_tensor(_storage(6), 0, (2, 3), (1, 2), False, OrderedDict(), {}).stride == (1, 2)
    with pytest.raises(NetworkFormatError, match="reaches element 7 of a storage of 6"):
        wop.rebuild_tensor(_storage(6), 1, (2, 3), (3, 1))
    with pytest.raises(NetworkFormatError, match=r"metadata <dict of 1> \(conjugate"):
        wop.rebuild_tensor(_storage(6), 0, (6,), (1,), False, OrderedDict(), {"conj": True})
    with pytest.raises(NetworkFormatError, match="size and stride|different lengths"):
        wop.rebuild_tensor(_storage(6), 0, (6,), (1, 1))
    with pytest.raises(NetworkFormatError, match="tensor stride must be"):
        wop.rebuild_tensor(_storage(6), 0, (6,), (-1,))
    v3 = wop.CALLABLES["torch._utils._rebuild_tensor_v3"]
    ref = v3(_storage(2, "FloatStorage"), 0, (2,), (1,), False, OrderedDict(), wop.Global("torch.float32"))
    assert ref.dtype == wop.DTYPE_GLOBALS["torch.float32"]
    with pytest.raises(NetworkFormatError, match="rebuilt from a storage of another type"):
        v3(_storage(2), 0, (2,), (1,), False, OrderedDict(), wop.Global("torch.float32"))
    sub = wop.CALLABLES["torch._tensor._rebuild_from_type_v2"]
    args = (_storage(2), 0, (2,), (1,))
    assert sub(wop.Global("torch._utils._rebuild_tensor_v2"), wop.Global("torch.Tensor"), args, {}).shape == (2,)
    with pytest.raises(NetworkFormatError, match="tensor subclass 'torch.float32' is not supported"):
        sub(wop.Global("torch._utils._rebuild_tensor_v2"), wop.Global("torch.float32"), args, {})
    param = wop.CALLABLES["torch._utils._rebuild_parameter"]
    assert param(wop.rebuild_tensor(*args), False, OrderedDict()).shape == (2,)


def test_tuple_nesting_is_counted_as_built():
    od = G("collections", "OrderedDict") + b")R"
    limit = wop.MAX_DEPTH + 3

    def state(chain: int) -> bytes:  # {"a": ((...(None,)...),)}: height 1 + chain
        return b"}" + nf._str("a") + b"N" + b"\x85" * chain + b"s"

    assert _load(b"\x80\x02" + od + state(limit - 1) + b"b.") == OrderedDict()
    with pytest.raises(NetworkFormatError, match="nested deeper than 64 levels"):
        _load(b"\x80\x02" + od + state(limit) + b"b.")


@pytest.mark.parametrize("data,match", [
    (b"\x80\x02]K\x01K\x02s.", "cannot set items of a list"),
    (b"\x80\x02](K\x01K\x02u.", "cannot set items of a list"),
    (b"\x80\x02}(K\x01u.", "odd number of items in SETITEMS"),
    (b"\x80\x02}K\x01a.", "cannot append to a dict"),
    (b"\x80\x02}(K\x01e.", "cannot extend a dict"),
])
def test_malformed_container_operations_say_which(data, match):
    with pytest.raises(NetworkFormatError, match=match):
        _load(data)


def test_tensor_sizes_are_at_most_64_int64_values():
    size = wop.CALLABLES["torch.Size"]
    assert size(tuple([1] * 64)) == tuple([1] * 64) and size((2**63 - 1,)) == (2**63 - 1,)
    for bad in ((2**63,), (-1,), tuple([1] * 65), (1.0,)):
        with pytest.raises(NetworkFormatError, match=r"tensor size must be a tuple of at most 64 integers in"):
            size(bad)
    with pytest.raises(NetworkFormatError, match=r"tensor size must be .* got \(-1,\)"):
        wop.rebuild_tensor(_storage(), 0, (-1,), (1,))
    with pytest.raises(NetworkFormatError, match=r"offset must be an integer in \[0, 2\^63\), got 9223372036854775808"):
        wop.rebuild_tensor(_storage(), 2**63, (1,), (1,))
    with pytest.raises(NetworkFormatError, match="a tensor is rebuilt from something that is not a storage record"):
        wop.rebuild_tensor(None, 0, (1,), (1,))
