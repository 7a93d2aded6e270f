"""PyTorch files (``torch.save``) read without torch: the zip format (torch >= 1.6) and the legacy format.

* **zip**: ``<archive>/data.pkl`` (the pickled object), ``<archive>/data/<key>`` (one raw storage per key,
  little-endian unless ``<archive>/byteorder`` says ``big``), ``<archive>/version`` and friends.  Persistent ids
  are ``('storage', storage_type, key, location, numel)``.
* **legacy**: five consecutive pickles (magic number ``0x1950a86a20f9469cfc6c``, protocol version 1001, system info,
  the object with persistent ids ``('storage', storage_type, key, location, numel, view_metadata)``, the list of
  storage keys) followed, for each key in that order, by the element count (int64) and the raw storage.

Both are interpreted by :mod:`.weights_only_pickle`; storages and tensors become
:class:`~margintheory.network_io._tensors.LazyTensor` leaves whose data is read only when a tensor is used.
The layouts follow ``torch/serialization.py`` (``_load`` and ``_legacy_load``).
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from typing import Any, BinaryIO

import numpy as np

from margintheory.errors import NetworkFormatError
from margintheory.network_io._files import read_exact
from margintheory.network_io._tensors import BFLOAT16, LazyTensor, bfloat16_to_float32, dtype_itemsize
from margintheory.network_io.weights_only_pickle import (
    MAX_DEPTH,
    STORAGE_DTYPES,
    Global,
    Limits,
    Reader,
    StorageRef,
    TensorRef,
    load,
    show,
)
from margintheory.runtime.budget import format_bytes

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".pkl")


def pickle_limit(max_memory: int) -> int:
    """Largest pickle accepted: a state dict's pickle holds names and shapes only (the data is stored apart), and
    interpreting a pickle can take ~50 bytes of Python objects per byte, so the bound is ``max_memory / 64``
    (32 MiB at the default budget)."""
    return max(1 << 20, min(64 << 20, max_memory // 64))


def _storage_record(pid: Any, legacy: bool) -> tuple[str, np.dtype | str, int]:
    if not isinstance(pid, tuple) or not pid or pid[0] not in ("storage", b"storage"):
        raise NetworkFormatError(f"persistent id {show(pid)} is not a storage record")
    fields = pid[1:]
    if len(fields) != (5 if legacy else 4):
        raise NetworkFormatError(f"storage record has {len(fields)} fields, expected {5 if legacy else 4}")
    storage_type, key, _location, numel = fields[:4]
    if legacy and fields[4] is not None:
        raise NetworkFormatError("legacy storage views (files of torch < 1.0) are not supported")
    if not isinstance(storage_type, Global) or storage_type.path not in STORAGE_DTYPES:
        raise NetworkFormatError(f"unsupported storage type {show(storage_type)}")
    if not isinstance(key, str) or type(numel) is not int or numel < 0:
        raise NetworkFormatError("malformed storage record (key must be a string, numel a non-negative integer)")
    return key, STORAGE_DTYPES[storage_type.path], numel


class _Storages:
    """Storage records seen while unpickling, each read (once) on demand."""

    def __init__(self, path: str, legacy: bool) -> None:
        self.path, self.legacy = path, legacy
        self.records: dict[str, StorageRef] = {}
        self.cache: dict[str, bytearray] = {}

    def persistent_load(self, pid: Any) -> StorageRef:
        key, dtype, numel = _storage_record(pid, self.legacy)
        seen = self.records.get(key)
        if seen is not None and (seen.dtype != dtype or seen.numel != numel):
            raise NetworkFormatError(f"storage {show(key)} is declared twice with different types or sizes")
        self.records[key] = ref = seen or StorageRef(key, dtype, numel)
        return ref


def scan_torch(fh: BinaryIO, path: str, size: int, max_memory: int,
               max_seconds: float | None = None) -> tuple[Any, Any]:
    """The object tree of a PyTorch file (tensors as lazy leaves) and a closer; zip or legacy by content.

    The work is bounded by :class:`~.weights_only_pickle.Limits` from the memory budget, and parsing and walking the
    tree stop with a :class:`~margintheory.errors.RefusedError` after ``max_seconds`` (``None``: no time limit)."""
    head = fh.read(4)
    fh.seek(0)
    limits = Limits.for_budget(max_memory, max_seconds)
    if head[:2] == b"PK":
        return _scan_zip(fh, path, max_memory, limits)
    if head[:1] == b"\x80":
        return _scan_legacy(fh, path, size, max_memory, limits), None
    raise NetworkFormatError(f"{path}: not a PyTorch file (neither the zip format of torch.save nor a legacy pickle)")


def _scan_zip(fh: BinaryIO, path: str, max_memory: int, limits: Limits) -> tuple[Any, Any]:
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise NetworkFormatError(f"{path}: not a readable PyTorch zip archive ({str(exc)[:120]})") from None
    try:
        pkls = [i for i in zf.infolist() if i.filename.endswith("/data.pkl") and i.filename.count("/") == 1]
        if len(pkls) != 1:
            raise NetworkFormatError(f"{path}: a zip archive without exactly one <archive>/data.pkl is not a file "
                                     "written by torch.save")
        prefix = pkls[0].filename[: -len("data.pkl")]
        limit = pickle_limit(max_memory)
        if pkls[0].file_size > limit:
            raise NetworkFormatError(f"{path}: data.pkl of {pkls[0].file_size} bytes exceeds the {limit}-byte limit "
                                     "for the pickled structure")
        big = _byteorder(zf, prefix, path)
        storages = _Storages(path, legacy=False)
        with zf.open(pkls[0]) as member:
            data = read_exact(member, pkls[0].file_size, f"{path}: data.pkl")
        tree = load(Reader(data, f"{path}: data.pkl"), storages.persistent_load, limits)
        infos = {i.filename: i for i in zf.infolist()}

        def read_storage(ref: StorageRef) -> bytearray:
            name = f"{prefix}data/{ref.key}"
            info = infos.get(name)
            need = ref.numel * dtype_itemsize(ref.dtype)
            if info is None:
                raise NetworkFormatError(f"{path}: storage {show(ref.key)} is missing from the archive")
            if info.file_size < need:
                raise NetworkFormatError(f"{path}: storage {show(ref.key)} is truncated ({info.file_size} of {need} "
                                         "bytes)")
            try:
                with zf.open(info) as member:
                    return read_exact(member, need, f"{path}: storage {show(ref.key)}")
            except NetworkFormatError:
                raise
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise NetworkFormatError(f"{path}: storage {show(ref.key)} is damaged ({str(exc)[:120]})") from None

        for ref in storages.records.values():
            if f"{prefix}data/{ref.key}" not in infos:
                raise NetworkFormatError(f"{path}: storage {show(ref.key)} is missing from the archive")
        return _lazy_tree(tree, path, read_storage, big, storages, limits), zf.close
    except BaseException:
        zf.close()
        raise


def _byteorder(zf: zipfile.ZipFile, prefix: str, path: str) -> bool:
    try:
        info = zf.getinfo(f"{prefix}byteorder")
    except KeyError:
        return False
    if info.file_size > 16:
        raise NetworkFormatError(f"{path}: malformed byteorder record")
    order = zf.read(info)
    if order not in (b"little", b"big"):
        raise NetworkFormatError(f"{path}: unknown byte order {order[:16]!r}")
    return order == b"big"


def _scan_legacy(fh: BinaryIO, path: str, size: int, max_memory: int, limits: Limits) -> Any:
    limit = pickle_limit(max_memory)
    reader = Reader(read_exact(fh, min(size, limit), path), path, file_end=size <= limit)

    def no_storage(pid: Any) -> Any:
        raise NetworkFormatError(f"{path}: unexpected storage record in the file header")

    if load(reader, no_storage, limits) != LEGACY_MAGIC:
        raise NetworkFormatError(f"{path}: a pickle, but not a PyTorch file (no torch.save magic number); "
                                 "plain pickles are never loaded")
    if load(reader, no_storage, limits) != LEGACY_PROTOCOL:
        raise NetworkFormatError(f"{path}: unsupported legacy PyTorch protocol version")
    info = load(reader, no_storage, limits)
    big = isinstance(info, dict) and info.get("little_endian") is False
    storages = _Storages(path, legacy=True)
    tree = load(reader, storages.persistent_load, limits)
    keys = load(reader, no_storage, limits)
    if (not isinstance(keys, list) or not all(type(k) is str for k in keys)  # hash strings only
            or set(keys) != set(storages.records) or len(keys) != len(set(keys))):
        raise NetworkFormatError(f"{path}: the storage key list does not match the storages the object uses")
    offsets, pos = {}, reader.pos  # the storages follow the key list
    for key in keys:
        ref = storages.records[key]
        offsets[key] = pos
        pos += 8 + ref.numel * dtype_itemsize(ref.dtype)
    if pos > size:
        raise NetworkFormatError(f"{path} is truncated: its storages need {format_bytes(pos)}, the file has "
                                 f"{format_bytes(size)}")

    def read_storage(ref: StorageRef) -> bytearray:
        fh.seek(offsets[ref.key])
        count = int.from_bytes(read_exact(fh, 8, f"{path}: storage {show(ref.key)}"), "little", signed=True)
        if count != ref.numel:
            raise NetworkFormatError(f"{path}: storage {show(ref.key)} holds {count} elements, its record says "
                                     f"{ref.numel}")
        return read_exact(fh, ref.numel * dtype_itemsize(ref.dtype), f"{path}: storage {show(ref.key)}")

    return _lazy_tree(tree, path, read_storage, big, storages, limits)


def _lazy_tree(tree: Any, path: str, read_storage: Any, big: bool, storages: _Storages, limits: Limits) -> Any:
    """Replace every :class:`TensorRef` by a :class:`LazyTensor`; refuse cycles and absurd nesting.

    The walk is bounded on its own (the unpickler bounds the tree it builds too): at most ``limits.objects`` visits
    (a shared node is visited at each use), ``limits.name_chars`` characters of dotted names, ``MAX_DEPTH`` levels,
    and the time budget."""
    count = {"visits": 0, "chars": 0}

    def make(ref: TensorRef, name: str) -> LazyTensor:
        def load_tensor() -> np.ndarray:
            raw = storages.cache.get(ref.storage.key)
            if raw is None:
                raw = storages.cache[ref.storage.key] = read_storage(ref.storage)
            return _view(raw, ref, big)

        return LazyTensor(name, ref.shape, ref.dtype, loader=load_tensor,
                          read_nbytes=ref.storage.numel * dtype_itemsize(ref.storage.dtype),
                          strided=not _row_major(ref))

    def visit(name_chars: int) -> None:
        count["visits"] += 1
        count["chars"] += name_chars
        if count["visits"] > limits.objects:
            raise limits.too_many(f"{path}: the object tree has more nodes than")
        if count["chars"] > limits.name_chars:
            raise NetworkFormatError(f"{path}: the dotted names of the object tree exceed {limits.name_chars} "
                                     "characters (one key repeated at many places?)", parameter="max_memory")
        if not count["visits"] & 4095:
            limits.check_time(path)

    def convert(node: Any, name: str, depth: int, active: set[int]) -> Any:
        if isinstance(node, TensorRef):
            return make(node, name or "<root>")
        if depth > MAX_DEPTH:
            raise NetworkFormatError(f"{path}: objects nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, (Mapping, list, tuple)):
            if id(node) in active:
                raise NetworkFormatError(f"{path}: the pickled object contains a cycle")
            active.add(id(node))
            items = node.items() if isinstance(node, Mapping) else enumerate(node)
            out: Any = {}
            for k, v in items:
                if not isinstance(k, (str, int)):
                    continue  # e.g. tuple keys of optimizer states: not addressable by a dotted name
                key = str(k)
                visit(len(name) + 1 + len(key))  # counted before the name is built
                out[key] = convert(v, f"{name}.{key}" if name else key, depth + 1, active)
            active.discard(id(node))
            return out if isinstance(node, Mapping) else list(out.values())
        if isinstance(node, Global):
            return f"<{show(node.path)}>"
        if isinstance(node, StorageRef):
            return f"<storage {show(node.key)}: {node.numel} elements>"
        return node

    visit(0)
    return convert(tree, "", 0, set())


def _row_major(ref: TensorRef) -> bool:
    """The tensor's elements are consecutive in its storage, in C order (axes of length 1 may have any stride)."""
    expected = 1
    for n, st in zip(reversed(ref.shape), reversed(ref.stride), strict=True):
        if n > 1 and st != expected:
            return False
        expected *= n
    return True


def _view(raw: bytearray, ref: TensorRef, big: bool) -> np.ndarray:
    if ref.dtype == BFLOAT16:
        base = bfloat16_to_float32(np.frombuffer(raw, dtype=">u2" if big else "<u2"))
    else:
        dtype = np.dtype(ref.dtype)
        base = np.frombuffer(raw, dtype=dtype.newbyteorder(">") if big and dtype.itemsize > 1 else dtype)
    if not ref.shape:
        return base[ref.offset:ref.offset + 1].reshape(()).copy()
    if _row_major(ref):
        return base[ref.offset:ref.offset + ref.numel].reshape(ref.shape)  # a view, no copy
    strided = np.lib.stride_tricks.as_strided(base[ref.offset:], shape=ref.shape,
                                              strides=[s * base.itemsize for s in ref.stride], writeable=False)
    return np.array(strided)
