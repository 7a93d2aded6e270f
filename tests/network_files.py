"""Builders of valid and malformed network files for the reader tests and the fuzzer (no torch needed).

``torch_zip_bytes`` / ``torch_legacy_bytes`` write files in the layouts of ``torch.save`` (zip and legacy) from a
hand-written pickle, so the weights-only reader can be fed pickles that torch itself would never write.
"""

from __future__ import annotations

import io
import math
import pickle
import struct
import zipfile
import zlib

import numpy as np


def npy_bytes(header: dict | str, data: bytes = b"", version: int = 1) -> bytes:
    """An ``.npy`` stream with an arbitrary header (any shape or dtype text) followed by ``data``."""
    text = header if isinstance(header, str) else repr(header)
    body = text.encode("latin1")
    pad = 64 - (10 + len(body) + 1) % 64
    body = body + b" " * pad + b"\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body + data
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", len(body)) + body + data


def npz_bytes(members: dict[str, bytes], compress: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def array_npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _deflated_zeros(header: bytes, total: int, chunk: int = 1 << 20) -> bytes:
    """A raw deflate stream of ``header`` followed by ``total`` zero bytes (a multiple of ``chunk``), built from one
    repeated full-flush block: about ``total / 1000`` bytes, in milliseconds."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = co.compress(header) + co.flush(zlib.Z_FULL_FLUSH)
    block = co.compress(b"\0" * chunk) + co.flush(zlib.Z_FULL_FLUSH)
    assert co.compress(b"\0" * chunk) + co.flush(zlib.Z_FULL_FLUSH) == block
    return head + block * (total // chunk - 1) + co.compress(b"\0" * chunk) + co.flush()


def zip_bomb_npz(rows: int, members: dict[str, tuple[int, ...]], extra: dict[str, bytes] | None = None,
                 chunk: int = 1 << 20) -> bytes:
    """An ``.npz`` whose members ``name -> shape_tail`` are honest ``.npy`` arrays of float64 zeros of shape
    ``(rows, *shape_tail)``, each deflated ~1000:1; ``extra`` members are stored as they are.  Every member's data
    must be a multiple of ``chunk`` bytes and below 4 GiB (no zip64 records)."""
    entries = []
    for name, tail in members.items():
        total = rows * 8 * math.prod(tail)
        assert total % chunk == 0 and total < 2**32 - 2**16
        header = npy_bytes({"descr": "<f8", "fortran_order": False, "shape": (rows, *tail)})
        crc = 0  # the CRC of a large bomb is left wrong: a reader that refuses it never gets to check
        if total <= 1 << 26:
            crc = zlib.crc32(b"\0" * total, zlib.crc32(header))
        entries.append((name, 8, _deflated_zeros(header, total, chunk), len(header) + total, crc))
    entries += [(k, 0, v, len(v), zlib.crc32(v)) for k, v in (extra or {}).items()]
    body, central = b"", b""
    for fname, method, data, size, crc in entries:
        raw = fname.encode()
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc, len(data), size,
                               len(raw), 0, 0, 0, 0, 0, len(body)) + raw
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), size, len(raw), 0)
        body += raw + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(body), 0)
    return body + central + end


def safetensors_bytes(header: dict | bytes, data: bytes = b"", length: int | None = None) -> bytes:
    """A safetensors file from a header (dict -> JSON) and a data section; ``length`` overrides the length field."""
    raw = header if isinstance(header, bytes) else __import__("json").dumps(header).encode()
    return struct.pack("<Q", len(raw) if length is None else length) + raw + data


# -- PyTorch layouts from hand-written pickles ------------------------------------------------------------------

def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _str(s: str) -> bytes:
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _int(i: int) -> bytes:
    return b"J" + struct.pack("<i", i)


def _tuple(items: list[bytes]) -> bytes:
    return b"(" + b"".join(items) + b"t"


def tensor_pickle(key: str, storage: str, numel: int, shape: tuple[int, ...], stride: tuple[int, ...],
                  offset: int = 0, legacy: bool = False) -> bytes:
    """Opcodes that push ``torch._utils._rebuild_tensor_v2(storage, offset, shape, stride, False, OrderedDict())``."""
    pid = [_str("storage"), _global("torch", storage), _str(key), _str("cpu"), _int(numel)]
    if legacy:
        pid.append(b"N")
    return (_global("torch._utils", "_rebuild_tensor_v2")
            + _tuple([_tuple(pid) + b"Q", _int(offset), _tuple([_int(s) for s in shape]),
                      _tuple([_int(s) for s in stride]), b"\x89", _global("collections", "OrderedDict") + b")R"])
            + b"R")


def dict_pickle(entries: dict[str, bytes]) -> bytes:
    """``{name: <opcodes>}`` as a protocol-2 pickle."""
    body = b"".join(_str(k) + v for k, v in entries.items())
    return b"\x80\x02}(" + body + b"u."


STORAGE = {np.dtype("<f8"): "DoubleStorage", np.dtype("<f4"): "FloatStorage", np.dtype("<i8"): "LongStorage"}


def state_dict_pickle(arrays: dict[str, np.ndarray], legacy: bool = False) -> tuple[bytes, dict[str, bytes]]:
    """A pickle of ``{name: tensor}`` (contiguous, one storage each) and the storages' raw bytes by key."""
    entries, storages = {}, {}
    for i, (name, arr) in enumerate(arrays.items()):
        arr = np.ascontiguousarray(arr)
        key = str(i)
        stride = tuple(s // arr.itemsize for s in arr.strides)
        entries[name] = tensor_pickle(key, STORAGE[arr.dtype], arr.size, arr.shape, stride, legacy=legacy)
        storages[key] = arr.tobytes()
    return dict_pickle(entries), storages


def torch_zip_bytes(pkl: bytes, storages: dict[str, bytes], archive: str = "archive") -> bytes:
    """The zip layout of ``torch.save``: ``archive/data.pkl``, ``archive/data/<key>``, ``archive/byteorder``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{archive}/data.pkl", pkl)
        zf.writestr(f"{archive}/byteorder", b"little")
        for key, data in storages.items():
            zf.writestr(f"{archive}/data/{key}", data)
        zf.writestr(f"{archive}/version", b"3\n")
    return buf.getvalue()


def torch_legacy_bytes(pkl: bytes, storages: dict[str, bytes], itemsize: int = 8) -> bytes:
    """The legacy layout: magic, protocol, system info, the object, the key list, then each storage."""
    out = [pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2), pickle.dumps(1001, protocol=2),
           pickle.dumps({"protocol_version": 1001, "little_endian": True}, protocol=2), pkl,
           pickle.dumps(list(storages), protocol=2)]
    for data in storages.values():
        out.append(struct.pack("<q", len(data) // itemsize) + data)
    return b"".join(out)
