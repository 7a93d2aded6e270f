"""Hostile PyTorch files, made at run time: small pickles that try to make the weights-only reader hang, crash or end
in a traceback (no code can run: every global outside the allow-list is refused anyway).

:func:`hostile_files` returns ``{name: bytes}``, every kind in the zip layout of ``torch.save`` and, where the layout
allows, the legacy one.  The kinds:

* **deep**: a tuple nested 10^6 deep (1 MB of ``TUPLE1``) placed where CPython would hash it (a dict key, a set,
  ``Counter`` or ``OrderedDict`` element, a storage key, the legacy key list): hashing recurses in C without a guard
  and used to crash the interpreter (segfault);
* **dag**: ``L_i = (L_{i-1}, L_{i-1})`` built through the memo, 60 levels in ~400 bytes (2^60 leaves as a tree;
  15 levels for a "small dag", which the unpickler's limits let through to the step that meets it),
  placed in every spot a later step walks, prints or hashes (the tree walk, persistent ids, tensor sizes, strides,
  offsets and metadata, dtypes, ``torch.Size`` / ``torch.device`` arguments, call targets, ``BUILD`` states, the
  legacy header and key list); also as lists, dicts, and a list changed after it was shared (stale sizes);
* **huge**: persistent ids and tensor headers with huge numbers (255-byte integers, 10^5 dimensions, long keys);
* **unhashable**: a list or dict among the legacy storage keys (used to reach ``set(keys)`` and end in a traceback),
  nested-tuple dict keys, cycles, and keys that are long runs of digits.
"""

from __future__ import annotations

import pickle
import struct

from tests import network_files as nf

DEEP = 10**6
LEVELS = 60
SMALL_LEVELS = 15  # 2^15 leaves: within the reader's tree limits, so that each later step meets it
PAYLOAD = 200  # memo slot of the payload


def _bin_get(i: int) -> bytes:
    return b"h" + bytes([i])


def _bin_put(i: int) -> bytes:
    return b"q" + bytes([i])


def _long(n: int) -> bytes:
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def deep_tuple() -> bytes:
    return b"N" + b"\x85" * DEEP + _bin_put(PAYLOAD)


def dag(kind: str = "tuple", levels: int = LEVELS) -> bytes:
    """Opcodes that leave ``L_levels`` in memo slot :data:`PAYLOAD` (and the lower levels on the stack)."""
    out = b"K\x01" + _bin_put(0)
    for i in range(1, levels + 1):
        prev = _bin_get(i - 1)
        if kind == "tuple":
            out += prev + prev + b"\x86"
        elif kind == "list":
            out += b"]" + b"(" + prev + prev + b"e"
        else:
            out += b"}" + b"(" + nf._str("a") + prev + nf._str("b") + prev + b"u"
        out += _bin_put(i)
    return out + _bin_get(levels) + _bin_put(PAYLOAD)


def stale_dag() -> bytes:
    """An empty list shared 60 levels up (a tiny tree when built), then filled: the tree grows 2^60-fold afterwards."""
    out = b"]" + _bin_put(0) + _bin_get(0) + _bin_put(1)
    for i in range(2, LEVELS + 2):
        out += _bin_get(i - 1) + _bin_get(i - 1) + b"\x86" + _bin_put(i)
    return out + _bin_get(0) + b"(" + b"K\x01" * 8 + b"e" + _bin_get(LEVELS + 1) + _bin_put(PAYLOAD)


P = _bin_get(PAYLOAD)
OD = nf._global("collections", "OrderedDict") + b")R"


def storage(legacy: bool, key: bytes = nf._str("0"), stype: bytes = nf._global("torch", "DoubleStorage"),
            numel: bytes = b"K\x01") -> bytes:
    return b"(" + nf._str("storage") + stype + key + nf._str("cpu") + numel + (b"N" if legacy else b"") + b"tQ"


def tensor(legacy: bool, *, fn: str = "_rebuild_tensor_v2", offset: bytes = b"K\x00", size: bytes = b"K\x01\x85",
           stride: bytes = b"K\x01\x85", tail: bytes = b"", st: bytes | None = None) -> bytes:
    return (nf._global("torch._utils", fn) + b"(" + (st or storage(legacy)) + offset + size + stride + b"\x89" + OD
            + tail + b"tR")


def _in_dict(obj: bytes) -> bytes:
    return b"}(" + nf._str("U") + obj + b"u"


def contexts(legacy: bool) -> dict[str, bytes]:
    """Where the payload ``P`` is placed: opcodes pushing the object the file holds (it uses storage ``'0'`` of one
    float64 element when it holds a tensor)."""
    g = nf._global
    return {
        "value": _in_dict(P),
        "root": P,
        "dict key (SETITEMS)": b"}(" + P + b"Nu",
        "dict key (SETITEM)": b"}" + P + b"Ns",
        "set element": g("builtins", "set") + b"]" + P + b"a\x85R",
        "Counter element": g("collections", "Counter") + b"]" + P + b"a\x85R",
        "OrderedDict key": g("collections", "OrderedDict") + b"]" + P + b"N\x86a\x85R",
        "persistent id": _in_dict(P + b"Q"),
        "storage type": _in_dict(storage(legacy, stype=P)),
        "storage key": _in_dict(storage(legacy, key=P)),
        "tensor size": _in_dict(tensor(legacy, size=P)),
        "tensor stride": _in_dict(tensor(legacy, stride=P)),
        "tensor offset": _in_dict(tensor(legacy, offset=P)),
        "tensor metadata": _in_dict(tensor(legacy, tail=P)),
        "v3 dtype": _in_dict(tensor(legacy, fn="_rebuild_tensor_v3", tail=P)),
        "subclass type": _in_dict(g("torch._tensor", "_rebuild_from_type_v2") + b"("
                                  + g("torch._utils", "_rebuild_tensor_v2") + P + b")}tR"),
        "torch.Size argument": _in_dict(g("torch", "Size") + P + b"\x85R"),
        "torch.device argument": _in_dict(g("torch", "device") + P + b"\x85R"),
        "bytearray argument": _in_dict(g("builtins", "bytearray") + P + b"\x85R"),
        "call target": _in_dict(P + b")R"),
        "BUILD state": _in_dict(OD + P + b"b"),
    }


def _file(obj: bytes, prelude: bytes, legacy: bool) -> bytes:
    pkl = b"\x80\x02" + prelude + obj + b"."
    storages = {"0": bytes(8)}
    return nf.torch_legacy_bytes(pkl, storages) if legacy else nf.torch_zip_bytes(pkl, storages)


def _legacy_header_file(prelude: bytes, where: str) -> bytes:
    """A legacy file whose magic number, system info or storage key list is the payload."""
    hostile = b"\x80\x02" + prelude + P + b"."
    body = nf.dict_pickle({"U": tensor(True)})
    parts = [pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2), pickle.dumps(1001, protocol=2),
             pickle.dumps({"protocol_version": 1001, "little_endian": True}, protocol=2), body,
             pickle.dumps(["0"], protocol=2)]
    parts[{"magic": 0, "info": 2, "keys": 4}[where]] = hostile
    if where == "keys":  # the payload inside the key list
        parts[4] = b"\x80\x02" + prelude + b"]" + P + b"a."
    return b"".join(parts) + struct.pack("<q", 1) + bytes(8)


def _unhashable_keys(item: bytes) -> bytes:
    parts = [pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2), pickle.dumps(1001, protocol=2),
             pickle.dumps({"little_endian": True}, protocol=2), nf.dict_pickle({"U": tensor(True)}),
             b"\x80\x02](" + nf._str("0") + item + b"e."]
    return b"".join(parts) + struct.pack("<q", 1) + bytes(8)


def _odd_files() -> dict[str, bytes]:
    g = nf._global
    huge = _long(2**2030)
    many = b"(" + b"K\x01" * 10**5 + b"t"
    zipped = {
        "huge numel": _in_dict(tensor(False, st=storage(False, numel=huge))),
        "huge size": _in_dict(tensor(False, size=huge + b"\x85")),
        "huge offset": _in_dict(tensor(False, offset=huge)),
        "many dims": _in_dict(tensor(False, size=many, stride=many)),
        "huge persistent id": _in_dict(many + b"Q"),
        "long storage key": _in_dict(storage(False, key=nf._str("k" * 10**6))),
        "nested tuple key": b"}((K\x01\x85K\x02tNu",
        "list cycle": b"]q\x00h\x00a",
        "dict cycle": b"}q\x00" + nf._str("a") + b"h\x00s",
        "changed after use": b"]q\x00h\x00\x85h\x00K\x01a",
        "digit key": b"}(" + nf._str("embed." + "9" * 5000 + ".weight") + tensor(False) + nf._str("out.weight")
                     + tensor(False) + b"u",
        "long key at every level": _long_keys(),
        "set of lists": g("builtins", "set") + b"]]a\x85R",
        "huge numel, loaded": b"}(" + nf._str("U") + _huge_view(huge) + nf._str("W") + _huge_view(huge) + b"u",
        "many operations": b"(" + b"N" * 300_000 + b"t",
        "slow parse": b"(" + b"N" * 5000 + b"t",
    }
    out = {f"odd {name} (zip)": _file(obj, b"", False) for name, obj in zipped.items()}
    out["odd unhashable key: list (legacy)"] = _unhashable_keys(b"]")
    out["odd unhashable key: dict (legacy)"] = _unhashable_keys(b"}")
    out["odd huge numel (legacy)"] = _file(_in_dict(tensor(True, st=storage(True, numel=huge))), b"", True)
    return out


#: command-line arguments some files are run with (a small memory budget: a small operation limit)
EXTRA_ARGS = {"odd many operations (zip)": ["--max-memory", "64M"],
              "odd huge numel, loaded (zip)": ["--names", "U=U,W=W", "--k", "2"],
              "odd slow parse (zip)": ["--max-seconds", "1e-9"]}
#: what the one line must say for some files (the limit that stops them)
EXPECTED = {"odd many operations (zip)": "raise --max-memory", "odd slow parse (zip)": "raise --max-seconds",
            "odd huge numel, loaded (zip)": "~2^2034 bytes", "dag as value (zip)": "reuses shared objects",
            "deep tuple as dict key (SETITEMS) (legacy)": "nested deeper than 64 levels",
            "odd changed after use (zip)": "changed after it was placed", "odd nested tuple key (zip)": "nested tuple"}


def _huge_view(numel: bytes) -> bytes:
    """A (2, 2) view into a storage declaring ``numel`` elements."""
    return tensor(False, st=storage(False, numel=numel), size=b"K\x02K\x02\x86", stride=b"K\x02K\x01\x86")


def _long_keys() -> bytes:
    """60 nested dicts, each under the same 64 KB key (memoized): dotted names of up to 60 x 64 KB characters."""
    inner = b"N"
    for _ in range(60):
        inner = b"}(" + _bin_get(1) + inner + b"u"
    return nf._str("k" * 65536) + _bin_put(1) + inner


def hostile_files() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    deep_spots = ["dict key (SETITEMS)", "dict key (SETITEM)", "set element", "Counter element", "OrderedDict key",
                  "storage key", "value"]
    for legacy in (False, True):
        fmt = "legacy" if legacy else "zip"
        spots = contexts(legacy)
        for spot in deep_spots:
            files[f"deep tuple as {spot} ({fmt})"] = _file(spots[spot], deep_tuple(), legacy)
        for spot, obj in spots.items():
            files[f"dag as {spot} ({fmt})"] = _file(obj, dag(), legacy)
        for kind in ("list", "dict"):
            files[f"dag of {kind}s ({fmt})"] = _file(_in_dict(P), dag(kind), legacy)
        files[f"dag changed after use ({fmt})"] = _file(_in_dict(P), stale_dag(), legacy)
    spots = contexts(False)
    for spot in ("persistent id", "tensor size", "v3 dtype", "torch.device argument", "dict key (SETITEMS)",
                 "set element", "Counter element", "OrderedDict key"):
        files[f"small dag as {spot} (zip)"] = _file(spots[spot], dag(levels=SMALL_LEVELS), False)
    files["deep tuple as legacy storage key (legacy)"] = _legacy_header_file(deep_tuple(), "keys")
    for where in ("magic", "info", "keys"):
        files[f"dag as legacy {where} (legacy)"] = _legacy_header_file(dag(), where)
    files.update(_odd_files())
    return files
