"""``.safetensors`` files (Hugging Face): an 8-byte little-endian header length, a JSON header, raw tensor bytes.

The header is validated before any data is read: its length against the file size and the format's 100 MB limit,
every entry's dtype, shape and ``data_offsets`` (inside the data section, ``end - begin`` equal to the bytes the
shape needs, no overlaps or holes, as the format requires).  Writing goes through ``safetensors.numpy.save``,
so files are readable by ``safetensors.numpy.load_file`` / ``safetensors.torch.load_file``.
"""

from __future__ import annotations

import json
import math
from typing import BinaryIO

import numpy as np

from margintheory.errors import NetworkFormatError
from margintheory.network_io._files import read_exact
from margintheory.network_io._tensors import BFLOAT16, LazyTensor, bfloat16_to_float32, dtype_itemsize
from margintheory.network_io.weights_only_pickle import MAX_DIMS, show
from margintheory.runtime import strict_json

MAX_HEADER = 100_000_000  # the limit of the reference implementation
DTYPES: dict[str, np.dtype | str] = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": BFLOAT16,
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"), "U32": np.dtype("<u4"), "U16": np.dtype("<u2"), "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


def looks_like_safetensors(head: bytes) -> bool:
    """Header length in the first 8 bytes followed by ``{``."""
    return len(head) >= 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < MAX_HEADER


def scan_safetensors(fh: BinaryIO, path: str, size: int) -> tuple[dict[str, LazyTensor], dict[str, str]]:
    """The tensors (lazy) and the ``__metadata__`` string pairs of a ``.safetensors`` file, from its header."""
    if size < 8:
        raise NetworkFormatError(f"{path}: not a safetensors file ({size} bytes; the header length alone takes 8)")
    n = int.from_bytes(read_exact(fh, 8, f"{path}: safetensors header length"), "little")
    if n > MAX_HEADER or n > size - 8:
        limit = "the format's limit of 100 MB" if n > MAX_HEADER else f"the file ({size} bytes)"
        raise NetworkFormatError(f"{path}: safetensors header length {n} exceeds {limit}")
    try:
        header = strict_json.loads(bytes(read_exact(fh, n, f"{path}: safetensors header")).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, strict_json.DuplicateKeyError, RecursionError) as exc:
        raise NetworkFormatError(f"{path}: safetensors header is not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(header, dict):
        raise NetworkFormatError(f"{path}: safetensors header must be a JSON object")
    metadata = header.pop("__metadata__", None)
    metadata = {} if metadata is None else metadata  # absent or null; [] or "" are refused below (as safetensors does)
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in metadata.items()):
        raise NetworkFormatError(f"{path}: safetensors __metadata__ must map strings to strings")
    start = 8 + n
    data_len = size - start
    tensors: dict[str, LazyTensor] = {}
    spans = []
    for name, info in header.items():
        where = f"{path}: tensor {_quoted(name)}"
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise NetworkFormatError(f"{where}: header entry must have exactly dtype, shape, data_offsets")
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if code not in DTYPES:
            raise NetworkFormatError(f"{where}: unsupported dtype {show(code)} (supported: {', '.join(DTYPES)})")
        if (not isinstance(shape, list) or len(shape) > MAX_DIMS
                or not all(type(s) is int and 0 <= s < 2**63 for s in shape)):
            raise NetworkFormatError(f"{where}: shape must be a list of at most {MAX_DIMS} integers in [0, 2^63), "
                                     f"got {show(shape)}")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(type(o) is int for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise NetworkFormatError(f"{where}: data_offsets must be [begin, end] with 0 <= begin <= end")
        dtype = DTYPES[code]
        need = math.prod(shape) * dtype_itemsize(dtype)
        if offsets[1] - offsets[0] != need:
            raise NetworkFormatError(f"{where}: shape {show(tuple(shape))} {code} needs {need} bytes but data_offsets "
                                     f"span {offsets[1] - offsets[0]}")
        if offsets[1] > data_len:
            raise NetworkFormatError(f"{where}: data ends at byte {offsets[1]} of a {data_len}-byte data section "
                                     "(truncated file)")
        spans.append((offsets[0], offsets[1], name))
        tensors[name] = LazyTensor(name, tuple(shape), dtype, loader=_loader(fh, start + offsets[0], need, shape,
                                                                             dtype, where))
    end = 0
    for begin, stop, name in sorted(spans):
        if begin != end:
            what = "overlap" if begin < end else "leave a hole"
            raise NetworkFormatError(f"{path}: tensor {_quoted(name)} data_offsets {what} (the format requires a "
                                     "contiguous data section)")
        end = stop
    if end != data_len:
        raise NetworkFormatError(f"{path}: {data_len - end} bytes after the last tensor (not a valid safetensors file)")
    return tensors, metadata


def _quoted(name: str) -> str:
    """A tensor name for a message: in full up to 200 characters, shortened beyond (the header may hold 100 MB)."""
    return repr(name) if len(name) <= 200 else show(name)


def _loader(fh: BinaryIO, offset: int, nbytes: int, shape: list[int], dtype: np.dtype | str, where: str):
    def load() -> np.ndarray:
        fh.seek(offset)
        raw = read_exact(fh, nbytes, where)
        if dtype == BFLOAT16:
            return bfloat16_to_float32(np.frombuffer(raw, dtype="<u2")).reshape(shape)
        return np.frombuffer(raw, dtype=dtype).reshape(shape)

    return load


def write_safetensors(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> bytes:
    """The bytes of a ``.safetensors`` file (``safetensors.numpy.save``) holding ``arrays`` and ``metadata``."""
    from safetensors.numpy import save

    for name, arr in arrays.items():
        if np.asarray(arr).dtype.kind not in "biuf":
            raise NetworkFormatError(f"array {name!r} (dtype {np.asarray(arr).dtype}) cannot be stored in a "
                                     ".safetensors file (numeric tensors only); save as .npz instead")
    return save({n: np.ascontiguousarray(a) for n, a in arrays.items()}, metadata=metadata)
