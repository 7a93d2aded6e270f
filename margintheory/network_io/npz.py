"""``.npz`` archives (numpy's zip of ``.npy`` arrays), read header first and never unpickled.

The zip directory and each member's ``.npy`` header (at most 10 000 bytes, parsed by numpy's own header
parser) are read first; object and structured dtypes are refused (an object array is a pickle); a member whose
declared uncompressed size is smaller than its header's shape requires is reported as truncated.  Data is then
decompressed only up to the declared size of the tensors actually used, after the memory-budget check of
:meth:`~margintheory.network_io._tensors.TensorFile.load` (a zip bomb declares its true size and is refused
before any decompression).
"""

from __future__ import annotations

import io
import zipfile
from typing import IO, BinaryIO

import numpy as np
import numpy.lib.format as npformat

from margintheory.errors import NetworkFormatError
from margintheory.network_io._files import read_exact
from margintheory.network_io._tensors import LazyTensor

MAX_HEADER = 10_000
#: members of an archive read (a network file holds a few arrays; 200 000 empty members took 13 s and 485 MB to scan)
MAX_MEMBERS = 10_000
ALLOWED_KINDS = "biufcUS"  # bool, integers, floats, complex, fixed-width strings: never objects or structs


def is_zip(head: bytes) -> bool:
    return head[:4] in (b"PK\x03\x04", b"PK\x05\x06")


def _read_header(member: IO[bytes], where: str) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    try:
        version = npformat.read_magic(member)
        if version == (1, 0):
            shape, fortran, dtype = npformat.read_array_header_1_0(member, max_header_size=MAX_HEADER)
        elif version == (2, 0):
            shape, fortran, dtype = npformat.read_array_header_2_0(member, max_header_size=MAX_HEADER)
        else:
            raise NetworkFormatError(f"{where}: .npy format version {version[0]}.{version[1]} is not supported")
    except NetworkFormatError:
        raise
    except (ValueError, TypeError, SyntaxError, EOFError, OverflowError, zipfile.BadZipFile) as exc:
        raise NetworkFormatError(f"{where}: not a valid .npy header ({_short(exc)})") from None
    if dtype.hasobject:
        raise NetworkFormatError(f"{where}: holds Python objects (dtype {dtype}); pickled data is never loaded")
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise NetworkFormatError(f"{where}: unsupported dtype {dtype} (expected a plain numeric array)")
    if any(not isinstance(n, int) or n < 0 for n in shape):
        raise NetworkFormatError(f"{where}: invalid shape {shape}")
    return tuple(int(n) for n in shape), bool(fortran), dtype, int(member.tell())


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]


def scan_npz(fh: BinaryIO, path: str) -> tuple[dict[str, LazyTensor], zipfile.ZipFile]:
    """The arrays of an ``.npz`` archive, from its zip directory and ``.npy`` headers only."""
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise NetworkFormatError(f"{path}: not a readable .npz archive ({_short(exc)})") from None
    try:
        if len(zf.infolist()) > MAX_MEMBERS:
            raise NetworkFormatError(f"{path}: the archive has {len(zf.infolist())} members; a network file is read "
                                     f"with at most {MAX_MEMBERS} (save the network's arrays alone)")
        arrays = {}
        for info in zf.infolist():
            if info.is_dir():
                continue
            where = f"{path}: array {info.filename!r}"
            if not info.filename.endswith(".npy"):
                raise NetworkFormatError(f"{where} is not an .npy member (an .npz holds only .npy arrays)")
            if info.flag_bits & 0x1:
                raise NetworkFormatError(f"{where} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise NetworkFormatError(f"{where} uses zip compression method {info.compress_type}; numpy writes "
                                         "stored or deflated members only")
            try:
                with zf.open(info) as member:
                    shape, fortran, dtype, header_len = _read_header(member, where)
            except NetworkFormatError:
                raise
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
                raise NetworkFormatError(f"{where}: damaged archive member ({_short(exc)})") from None
            name = info.filename[:-4]
            tensor = LazyTensor(name, shape, dtype, loader=_loader(zf, info, header_len, shape, dtype, fortran, where),
                                strided=fortran and len(shape) > 1)
            if info.file_size < header_len + tensor.nbytes:
                raise NetworkFormatError(
                    f"{where} is truncated: its header declares shape {shape} {dtype} ({tensor.nbytes} bytes) but the "
                    f"member holds {max(0, info.file_size - header_len)} bytes of data"
                )
            arrays[name] = tensor
        return arrays, zf
    except BaseException:
        zf.close()
        raise


def _loader(zf: zipfile.ZipFile, info: zipfile.ZipInfo, header_len: int, shape: tuple[int, ...], dtype: np.dtype,
            fortran: bool, where: str):
    def load() -> np.ndarray:
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        try:
            with zf.open(info) as member:
                read_exact(member, header_len, where)
                raw = read_exact(member, nbytes, where)
        except NetworkFormatError:
            raise
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:  # CRC mismatch, bad deflate stream
            raise NetworkFormatError(f"{where}: damaged archive member ({_short(exc)})") from None
        arr = np.frombuffer(raw, dtype=dtype)
        return arr.reshape(shape[::-1]).T if fortran else arr.reshape(shape)

    return load


def write_npz(arrays: dict[str, np.ndarray]) -> bytes:
    """The bytes of a compressed ``.npz`` holding ``arrays`` (no pickles: object arrays are refused)."""
    for name, arr in arrays.items():
        if np.asarray(arr).dtype.hasobject:
            raise NetworkFormatError(f"array {name!r} holds Python objects and cannot be saved without pickling")
    buf = io.BytesIO()
    np.savez_compressed(buf, allow_pickle=False, **arrays)
    return buf.getvalue()
