"""Opening network files: regular files only, never blocking, and reads that never exceed what a file holds.

A device (``/dev/zero``, ``/dev/urandom``), a FIFO, a socket or a directory is refused as soon as it is opened
(``O_NONBLOCK`` makes opening a FIFO return at once; ``fstat`` then tells what the path is), so nothing is read
from it and nothing hangs.  Reads go through :func:`read_exact`, which fills a buffer of the size a header
declared and reports a truncated file instead of blocking or over-allocating.
"""

from __future__ import annotations

import os
import stat
import struct
import zipfile
import zlib
from typing import IO, BinaryIO

from margintheory.errors import NetworkFormatError
from margintheory.runtime.atomic import file_kind

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows has no FIFOs to guard against
    fcntl = None  # type: ignore[assignment]

CHUNK = 1 << 22

#: What the standard library's zip / deflate / struct code raises on damaged input.  The readers turn these into one
#: :class:`NetworkFormatError` line naming the file (the fuzzer in the test suite checks that nothing else escapes).
DAMAGED_FILE_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, struct.error, ValueError, OverflowError,
                       NotImplementedError, RuntimeError, KeyError, IndexError, UnicodeDecodeError, OSError)


def damaged(path: str, exc: BaseException) -> NetworkFormatError:
    """One line for a file the standard library could not parse."""
    text = (str(exc).splitlines() or [""])[0][:160] or type(exc).__name__
    return NetworkFormatError(f"{path}: damaged or malformed file ({text})")

def open_regular(path: str | os.PathLike[str]) -> tuple[BinaryIO, int]:
    """Open ``path`` for binary reading if it is a regular file (symbolic links followed); returns ``(file, size)``.

    Raises :class:`NetworkFormatError` with one line for a missing file, a permission problem or any file that is
    not regular (devices, FIFOs, sockets, directories), without reading from it.
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except FileNotFoundError:
        if os.path.islink(name):
            raise NetworkFormatError(f"{name}: a symbolic link to {os.readlink(name)}, which does not exist") from None
        raise NetworkFormatError(f"{name}: no such file") from None
    except PermissionError:
        raise NetworkFormatError(f"{name}: permission denied") from None
    except OSError as exc:
        raise NetworkFormatError(f"{name}: cannot open ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NetworkFormatError(f"{name}: is {file_kind(st.st_mode)}, not a regular file; only regular files "
                                     "are read")
        if fcntl is not None:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~getattr(os, "O_NONBLOCK", 0))
        return os.fdopen(fd, "rb"), int(st.st_size)
    except BaseException:
        os.close(fd)
        raise


def read_exact(fh: IO[bytes], n: int, what: str) -> bytearray:
    """Exactly ``n`` bytes from ``fh`` (in chunks, into one buffer); a short read is reported as truncation."""
    buf = bytearray(n)
    view = memoryview(buf)
    pos = 0
    while pos < n:
        got = fh.readinto(view[pos:pos + CHUNK])  # type: ignore[attr-defined]
        if not got:
            raise NetworkFormatError(f"{what} is truncated: {pos} of {n} bytes present")
        pos += got
    return buf


