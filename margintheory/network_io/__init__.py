"""Reading and writing network files: ``.npz``, ``.safetensors`` and PyTorch files, through one layer.

Every reader opens regular files only (devices, FIFOs and directories are refused at once, nothing is read from
them), parses the file's headers first, refuses tensors whose declared size exceeds the memory budget before
reading any data, never unpickles (``.npz`` object arrays are refused; PyTorch pickles are interpreted by a
weights-only reader that allows tensors and plain containers only), and reports every defect as one
:class:`~margintheory.errors.NetworkFormatError` (or :class:`~margintheory.errors.RefusedError` for the budget)
that names the file and what is wrong with it.

The format is chosen by the file name's suffix:

* ``.npz``: numpy archive, this package's layout (docs/network-files.md);
* ``.safetensors``: Hugging Face safetensors, the same tensor names as ``.npz``;
* ``.pt``, ``.pth``, ``.bin``, ``.ckpt``, ``.pkl``: ``torch.save`` output (zip or legacy format), read without torch.

Other suffixes are recognised by content.  Only ``.npz`` and ``.safetensors`` are written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from margintheory.errors import InputError, MarginTheoryError, NetworkFormatError
from margintheory.network_io._files import DAMAGED_FILE_ERRORS, damaged, open_regular
from margintheory.network_io._tensors import DEFAULT_MAX_MEMORY, LazyTensor, TensorFile, dtype_name
from margintheory.network_io.names import NameMap, default_names, mapped_uw
from margintheory.network_io.npz import is_zip, scan_npz, write_npz
from margintheory.network_io.safetensors_format import looks_like_safetensors, scan_safetensors, write_safetensors
from margintheory.network_io.torch_format import TORCH_SUFFIXES, scan_torch
from margintheory.network_io.weights_only_pickle import show

__all__ = [
    "DEFAULT_MAX_MEMORY", "FORMAT_VERSION", "META_PREFIX", "LazyTensor", "NameMap", "TensorFile", "file_format",
    "open_tensor_file", "output_format", "read_arrays", "read_network_arrays", "read_stored_arrays", "write_arrays",
]

FORMAT_VERSION = 1
META_PREFIX = "meta__"
WRITABLE = {".npz": "npz", ".safetensors": "safetensors"}
SAFETENSORS_FORMAT = "margintheory.PolyNetwork"


def file_format(path: str | os.PathLike[str], head: bytes = b"") -> str:
    """``'npz'``, ``'safetensors'`` or ``'pytorch'`` from the suffix, else from the first bytes ``head``."""
    suffix = Path(path).suffix.lower()
    if suffix in WRITABLE:
        return WRITABLE[suffix]
    if suffix in TORCH_SUFFIXES:
        return "pytorch"
    if is_zip(head):
        return "zip"  # npz or PyTorch zip: told apart by the members
    if looks_like_safetensors(head):
        return "safetensors"
    if head[:1] == b"\x80":
        return "pytorch"
    if suffix == ".npy" or head[:6] == b"\x93NUMPY":
        raise NetworkFormatError(f"{path}: a .npy file holds one array, and this needs several by name: save them "
                                 "together with numpy.savez(FILE.npz, NAME=array, ...) (or as .safetensors)")
    raise NetworkFormatError(f"{path}: unknown network file type (suffix {suffix or 'none'}; expected .npz, "
                             f".safetensors or a PyTorch file {', '.join(TORCH_SUFFIXES)})")


def output_format(path: str | os.PathLike[str]) -> str:
    """The format written for ``path`` (``'npz'`` or ``'safetensors'``); any other suffix is an :class:`InputError`
    (check output paths with it before long work)."""
    suffix = Path(path).suffix.lower()
    if suffix in WRITABLE:
        return WRITABLE[suffix]
    if suffix in TORCH_SUFFIXES:
        raise InputError(f"{path}: PyTorch files are read, not written; save as .safetensors (torch users load it with "
                         "safetensors.torch.load_file) or .npz")
    raise InputError(f"{path}: network files are written as .npz or .safetensors (got suffix {suffix or 'none'})")


def open_tensor_file(path: str | os.PathLike[str], *, max_memory: int = DEFAULT_MAX_MEMORY,
                     kind: str | None = None, max_seconds: float | None = None) -> TensorFile:
    """Open a network file and parse its headers (no tensor data is read); use as a context manager.

    ``kind`` (``'npz'``, ``'safetensors'`` or ``'pytorch'``) forces the format instead of the suffix; parsing a
    PyTorch pickle stops with a :class:`~margintheory.errors.RefusedError` after ``max_seconds``."""
    name = os.fspath(path)
    fh, size = open_regular(name)
    try:
        head = fh.read(16)
        fh.seek(0)
        kind = kind or file_format(name, head)
        if kind == "zip":
            kind = "pytorch" if _is_torch_zip(fh) else "npz"
        if kind == "npz":
            if not is_zip(head):
                raise NetworkFormatError(f"{name}: not an .npz archive (expected the zip layout written by "
                                         f"numpy.savez){_looks_like(head)}")
            arrays, zf = scan_npz(fh, name)
            return TensorFile(name, "npz", arrays, max_memory, handle=fh, closers=[zf.close])
        if kind == "safetensors":
            tensors, meta = scan_safetensors(fh, name, size)
            return TensorFile(name, "safetensors", tensors, max_memory, metadata=meta, handle=fh)
        tree, closer = scan_torch(fh, name, size, max_memory, max_seconds)
        return TensorFile(name, "pytorch", tree, max_memory, handle=fh, closers=[closer] if closer else [])
    except MarginTheoryError:
        fh.close()
        raise
    except DAMAGED_FILE_ERRORS as exc:
        fh.close()
        raise damaged(name, exc) from None
    except BaseException:
        fh.close()
        raise


def _is_torch_zip(fh: Any) -> bool:
    import zipfile

    try:
        with zipfile.ZipFile(fh) as zf:
            return any(n.endswith("/data.pkl") for n in zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    finally:
        fh.seek(0)


def _looks_like(head: bytes) -> str:
    if looks_like_safetensors(head):
        return "; it looks like a safetensors file: name it .safetensors"
    if head[:1] == b"\x80":
        return "; it looks like a pickle (PyTorch files are read when named .pt/.pth/.bin/.ckpt)"
    if head[:6] == b"\x93NUMPY":
        return "; it is a single .npy array, not an archive"
    return ""


def read_network_arrays(path: str | os.PathLike[str], *, names: NameMap | str | None = None, k: int | None = None,
                        max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None
                        ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``(U, W, metadata)`` of the network in a file (see :mod:`.names` for the layouts and the mapping).

    ``names`` (a :class:`NameMap` or its text ``"U=KEY,W=KEY"``) selects the tensors; ``k`` is needed only when
    ``U`` names one matrix shared by all input positions.  ``metadata`` holds the ``meta__<name>`` arrays.
    ``max_seconds`` bounds the parsing of a PyTorch pickle (``None``: no limit).
    """
    mapping = NameMap.parse(names) if isinstance(names, str) else names
    with open_tensor_file(path, max_memory=max_memory, max_seconds=max_seconds) as tf:
        _check_version(tf)
        U, W = mapped_uw(tf, mapping or default_names(tf), k, shared=mapping is not None)
        meta = {}
        if mapping is None and isinstance(tf.tree, dict):
            metas = [t for n, t in tf.tree.items() if n.startswith(META_PREFIX) and isinstance(t, LazyTensor)]
            meta = {t.name[len(META_PREFIX):]: a for t, a in zip(metas, tf.load(metas), strict=True)}
        return U, W, meta


def _check_version(tf: TensorFile) -> None:
    if tf.kind == "safetensors":
        raw = tf.metadata.get("format_version")
        if raw is not None and raw != str(FORMAT_VERSION):
            raise NetworkFormatError(f"{tf.path}: unsupported format_version {raw[:20]!r} (this version reads "
                                     f"{FORMAT_VERSION})")
        return
    v = tf.tree.get("format_version") if isinstance(tf.tree, dict) and tf.kind == "npz" else None
    if v is None:
        return
    if v.shape != () or v.dtype == "bfloat16" or np.dtype(v.dtype).kind not in "iu":
        raise NetworkFormatError(f"{tf.path}: format_version must be a scalar integer, got {v.describe()}")
    (value,) = tf.load([v])
    if int(value) != FORMAT_VERSION:
        raise NetworkFormatError(f"{tf.path}: unsupported format_version {int(value)} (this version reads "
                                 f"{FORMAT_VERSION})")


def read_arrays(path: str | os.PathLike[str], required: tuple[str, ...], optional: tuple[str, ...] = (), *,
                max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None,
                shapes: dict[str, tuple[int, ...]] | None = None, exclusive: bool = False) -> dict[str, np.ndarray]:
    """Top-level arrays of a file by name (``required`` must all be present), read under the memory budget (and
    ``max_seconds`` for parsing a PyTorch pickle).

    ``shapes`` (optional) gives the shape each named array must have; those arrays must also be real numbers
    (float or integer).  ``exclusive``: any other top-level array (but ``format_version``) is refused by name, as
    network files refuse unknown tensors.  All of it is checked on the headers, before any data is read."""
    stored = read_stored_arrays(path, required, optional, max_memory=max_memory, max_seconds=max_seconds,
                                shapes=shapes, exclusive=exclusive)
    return {name: array for name, (array, _) in stored.items()}


def read_stored_arrays(path: str | os.PathLike[str], required: tuple[str, ...], optional: tuple[str, ...] = (), *,
                       max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None,
                       shapes: dict[str, tuple[int, ...]] | None = None,
                       exclusive: bool = False) -> dict[str, tuple[np.ndarray, str]]:
    """:func:`read_arrays`, each array with the name of the dtype it is stored in (``bfloat16`` arrays are widened to
    float32 on reading: the stored name says how precise their values are)."""
    with open_tensor_file(path, max_memory=max_memory, max_seconds=max_seconds) as tf:
        top = tf.tree if isinstance(tf.tree, dict) else {}
        missing = [n for n in required if not isinstance(top.get(n), LazyTensor)]
        if missing:
            held = ", ".join(show(str(n)) for n in list(top)[:12]) + (", ..." if len(top) > 12 else "")
            raise NetworkFormatError(f"{tf.path}: missing array(s) {missing}; expected {list(required)} "
                                     f"(the file holds: {held or 'nothing'})")
        known = {*required, *optional, "format_version"}
        unknown = [str(n) for n in top if n not in known]
        if exclusive and unknown:
            names = ", ".join(show(n) for n in unknown[:12]) + (", ..." if len(unknown) > 12 else "")
            raise NetworkFormatError(f"{tf.path}: unknown array(s) {names}; expected only {list(required)}"
                                     + (f" and optionally {list(optional)}" if optional else "")
                                     + " (remove the others, or save the arrays you mean under these names)")
        wanted = [top[n] for n in (*required, *optional) if isinstance(top.get(n), LazyTensor)]
        for t in wanted:
            shape = (shapes or {}).get(t.name)
            if shape is None:
                continue
            if t.dtype != "bfloat16" and np.dtype(t.dtype).kind not in "fiu":
                raise NetworkFormatError(f"{tf.path}: array {t.name} must hold real numbers, got {t.describe()}")
            if tuple(t.shape) != tuple(shape):
                raise NetworkFormatError(f"{tf.path}: array {t.name} must have shape {tuple(shape)}, got "
                                         f"{tuple(t.shape)}")
        return {t.name: (a, dtype_name(t.dtype)) for t, a in zip(wanted, tf.load(wanted), strict=True)}


def write_arrays(path: str | os.PathLike[str], arrays: dict[str, np.ndarray], *, kind: str | None = None) -> None:
    """Write ``arrays`` atomically as ``.npz`` or ``.safetensors`` (by suffix); a format version is recorded."""
    from margintheory.runtime.atomic import atomic_write_bytes

    kind = kind or output_format(path)
    if kind == "safetensors":
        data = write_safetensors(arrays, {"format": SAFETENSORS_FORMAT, "format_version": str(FORMAT_VERSION)})
    else:
        data = write_npz({**arrays, "format_version": np.array(FORMAT_VERSION)})
    atomic_write_bytes(path, data)
