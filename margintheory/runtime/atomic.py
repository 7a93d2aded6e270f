"""File output: atomic writes that only ever replace a regular file, and output paths checked before the work.

* :func:`atomic_open` writes a temporary sibling of the target and renames it onto the target (``os.replace``), so
  a reader sees the old file or the new one, never a half-written one.  It refuses to replace anything that is not
  a regular file (a device such as ``/dev/full``, a FIFO, a socket, a directory): ``os.replace`` would otherwise
  swap the device node for a regular file.  A symbolic link is followed: the file it points to is replaced and the
  link kept.  An existing file keeps its permission bits; a new one gets ``0666 & ~umask``.
* :func:`check_output_file` / :func:`check_output_dir` validate a path before any work starts (a command must not
  compute for an hour and then fail to save).  Both raise :class:`~margintheory.errors.InputError` with one line.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from margintheory.errors import InputError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISREG, "a regular file"),
)


def file_kind(mode: int) -> str:
    """A readable name for a file type (``st_mode``): the one naming used by every message about a path."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def resolve_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` must replace: ``path`` itself, or what a symbolic link at ``path`` points to."""
    p = Path(path)
    return Path(os.path.realpath(p)) if p.is_symlink() else p


def _regular_or_missing(target: Path, shown: str | os.PathLike[str]) -> os.stat_result | None:
    """``stat`` of ``target`` if it is a regular file, ``None`` if it does not exist; anything else is refused."""
    try:
        st = target.stat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise InputError(f"{shown}: a component of the path is not a directory") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{shown}: is {file_kind(st.st_mode)}; output is only written to regular files")
    return st


def _atomic_open(path: str | os.PathLike[str], mode: str = "w", suffix: str = "") -> Iterator[IO]:
    """Open a temporary sibling of ``path``; on success it is renamed onto ``path``, on error it is removed.

    ``suffix`` is appended to the temporary name (``numpy.savez`` insists on a ``.npz`` ending).  Raises
    :class:`InputError` when ``path`` exists and is not a regular file (module docstring).
    """
    _refuse_dangling_link(path)  # (also when the caller did not check the path first: PolyNetwork.save, a run dir)
    target = resolve_target(path)
    old = _regular_or_missing(target, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix + ".tmp", dir=target.parent)
    try:
        # mkstemp creates 0600: keep the replaced file's permissions, or give a new file the usual ones
        os.chmod(tmp, stat.S_IMODE(old.st_mode) if old is not None else 0o666 & ~_current_umask())
        with os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _regular_or_missing(target, path)  # still nothing but a regular file there (it may have changed meanwhile)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if exc.filename is None or exc.filename == tmp:  # (a write to the temporary file: name the file written)
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc
        raise
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


#: :func:`_atomic_open` as a context manager (defined apart so that the mutation gate reaches the generator)
atomic_open = contextlib.contextmanager(_atomic_open)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path) as fh:  # (text mode, the default)
        fh.write(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def _refuse_dangling_link(path: str | os.PathLike[str]) -> None:
    """A symbolic link whose target does not exist is refused, as GNU ``cp`` refuses to write through one: following
    it would create the target (and its missing directories) wherever the link points."""
    if os.path.islink(path) and not os.path.exists(path):
        raise InputError(f"{path}: a symbolic link to {os.readlink(path)}, which does not exist; not writing through "
                         "a dangling link (remove the link or name another path)")


def _nearest_existing(path: Path) -> Path:
    p = path.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_creatable_in(directory: Path, shown: str | os.PathLike[str]) -> None:
    """``directory`` (or, if missing, its nearest existing ancestor) must be a directory we can create files in."""
    base = _nearest_existing(directory)
    if not base.is_dir():
        raise InputError(f"{shown}: {base} is not a directory")
    if base != directory.absolute():  # the missing directories will be created: try creating one in the ancestor
        try:  # the only reliable test (read-only file systems, /proc, ACLs, root's permissions)
            os.rmdir(tempfile.mkdtemp(prefix=".margintheory-probe.", dir=base))
        except OSError as exc:
            raise InputError(f"{shown}: cannot create directories in {base} ({exc.strerror or exc})") from None
        return
    try:  # the only reliable test (read-only file systems, /proc, ACLs): create and remove a file there
        fd, probe = tempfile.mkstemp(prefix=".margintheory-probe.", dir=base)
    except OSError as exc:
        raise InputError(f"{shown}: cannot create files in {base} ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(path: str | os.PathLike[str], overwrite: bool = True) -> Path:
    """Before the work: ``path`` can be written by :func:`atomic_open` (a regular file or nothing, in a directory
    where files can be created) and, unless ``overwrite``, does not exist yet.  Returns the file that will be
    replaced (links followed).

    The kind of file is checked first: a device, FIFO or directory is never replaced, so it is refused as such
    whatever ``overwrite`` says (advising to overwrite it would be wrong)."""
    if str(path) == "":
        raise InputError("the output path is empty")
    _refuse_dangling_link(path)
    target = resolve_target(path)
    existing = _regular_or_missing(target, path)
    _check_creatable_in(target.parent, path)
    if not overwrite and existing is not None:  # (a dangling link was refused above)
        raise InputError(f"{path} already exists (it is replaced only when overwrite is set)", parameter="overwrite")
    return target


def check_output_dir(path: str | os.PathLike[str]) -> Path:
    """Before the work: ``path`` is a directory where files can be created, or can be created as one."""
    if str(path) == "":
        raise InputError("the output directory is empty")
    _refuse_dangling_link(path)
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{path}: exists and is {file_kind(p.stat().st_mode)}, not a directory")
    _check_creatable_in(p, path)
    return p


def atomic_create_bytes(path: str | os.PathLike[str], data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically **unless ``path`` exists**; returns whether it was written.

    The data go to a temporary sibling (fsynced), which is then hard-linked to ``path``: the link fails if ``path``
    exists, so of several processes writing the same path the first wins and the others leave its file untouched
    (``os.replace`` would let the last one win).  The directory is fsynced after the link.  On a file system without
    hard links the temporary file is renamed onto ``path`` if it does not exist yet (a narrow race remains there).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
        except OSError:  # no hard links here (some network and FUSE file systems)
            if os.path.lexists(target):
                return False
            os.rename(tmp, target)
        fsync_directory(target.parent)
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def fsync_directory(path: str | os.PathLike[str]) -> None:
    """Make a rename or link in ``path`` durable (ignored where directories cannot be opened or synced)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
