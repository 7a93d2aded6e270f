"""Atomic outputs (:mod:`margintheory.runtime.atomic`) pinned so that a weakened writer or path check fails: the kind of
every non-regular file named, nothing but a regular file replaced, permissions kept or given from the umask, the
data flushed and synced before the rename, the temporary file removed on error, links followed and kept, paths
refused before the work with one line.  Fast and local (a temporary folder); the test selection of the mutation
gate's ``atomic`` area with ``tests/test_atomic.py`` (``tools/mutation.sh atomic``)."""

from __future__ import annotations

import errno
import os
import re
import socket
import stat
from pathlib import Path

import pytest

from margintheory.errors import InputError
from margintheory.runtime import atomic


def test_kind_names_every_file_type():
    assert atomic.file_kind(stat.S_IFDIR | 0o755) == "a directory"
    assert atomic.file_kind(stat.S_IFCHR | 0o666) == "a character device"
    assert atomic.file_kind(stat.S_IFBLK | 0o660) == "a block device"
    assert atomic.file_kind(stat.S_IFIFO | 0o644) == "a FIFO (named pipe)"
    assert atomic.file_kind(stat.S_IFSOCK | 0o755) == "a socket"
    assert atomic.file_kind(stat.S_IFREG | 0o644) == "a regular file"
    assert atomic.file_kind(stat.S_IFLNK | 0o777) == "not a regular file"


def test_resolve_target_follows_a_link_only(tmp_path):
    real = tmp_path / "real.txt"
    link = tmp_path / "link.txt"
    link.symlink_to(real)  # (dangling: the file does not exist yet)
    assert atomic.resolve_target(link) == real and atomic.resolve_target(str(real)) == real
    assert atomic.resolve_target(tmp_path / "plain") == tmp_path / "plain"
    assert atomic.resolve_target("relative/../x.txt") == Path("relative/../x.txt")  # not a link: unchanged


def test_regular_or_missing(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    assert atomic._regular_or_missing(tmp_path / "none", "shown") is None
    assert atomic._regular_or_missing(f, "shown").st_size == 1
    with pytest.raises(InputError) as exc:
        atomic._regular_or_missing(tmp_path, "shown")
    assert str(exc.value) == "shown: is a directory; output is only written to regular files"
    with pytest.raises(InputError) as exc:
        atomic._regular_or_missing(f / "below", "shown2")
    assert str(exc.value) == "shown2: a component of the path is not a directory"


def _umask(mask: int) -> int:
    return os.umask(mask)


def test_a_new_file_gets_the_umask_and_an_existing_one_keeps_its_mode(tmp_path):
    old = _umask(0o027)
    try:
        atomic.atomic_write_text(tmp_path / "new.txt", "a")
        assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == 0o640
        assert atomic._current_umask() == 0o027 and atomic._current_umask() == 0o027  # read without changing it
    finally:
        _umask(old)
    kept = tmp_path / "kept.txt"
    kept.write_text("old")
    kept.chmod(0o604)
    atomic.atomic_write_bytes(kept, b"new")
    assert kept.read_bytes() == b"new" and stat.S_IMODE(os.stat(kept).st_mode) == 0o604


def test_the_data_is_flushed_and_synced_before_the_rename(tmp_path, monkeypatch):
    target = tmp_path / "out.bin"
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(os.pread(fd, 100, 0))  # what the file holds when it is synced
        real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    atomic.atomic_write_bytes(target, b"payload")
    assert synced == [b"payload"] and target.read_bytes() == b"payload"


def test_the_temporary_sibling_and_its_suffix(tmp_path):
    target = tmp_path / "net.npz"
    with atomic.atomic_open(target, "wb", suffix=".npz") as fh:
        (tmp,) = os.listdir(tmp_path)
        assert tmp.startswith(".net.npz.") and tmp.endswith(".npz.tmp") and not target.exists()
        assert stat.S_IMODE(os.fstat(fh.fileno()).st_mode) == 0o666 & ~atomic._current_umask()
        fh.write(b"x")
    assert os.listdir(tmp_path) == ["net.npz"]
    with atomic.atomic_open(target) as fh:
        (tmp,) = [n for n in os.listdir(tmp_path) if n != "net.npz"]
        assert re.fullmatch(r"\.net\.npz\.[a-z0-9_]{8}\.tmp", tmp), tmp  # no suffix by default
        fh.write("text mode by default")
    assert target.read_text() == "text mode by default"


def test_a_failed_write_removes_the_temporary_file_and_keeps_the_old_one(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic.atomic_open(target) as fh:
        fh.write("half")
        raise RuntimeError
    assert os.listdir(tmp_path) == ["t.txt"] and target.read_text() == "old"
    with pytest.raises(RuntimeError), atomic.atomic_open(target) as fh:  # the temporary file already gone
        for name in os.listdir(tmp_path):
            if name != "t.txt":
                os.unlink(tmp_path / name)
        raise RuntimeError
    assert os.listdir(tmp_path) == ["t.txt"] and target.read_text() == "old"


def test_a_link_is_followed_and_kept(tmp_path):
    real = tmp_path / "data" / "real.txt"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic.atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert sorted(os.listdir(tmp_path / "data")) == ["real.txt"]


def test_missing_folders_are_created_and_non_regular_targets_refused_before_anything(tmp_path):
    deep = tmp_path / "a" / "b" / "c.txt"
    atomic.atomic_write_text(deep, "x")
    assert deep.read_text() == "x"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as exc:
        atomic.atomic_write_text(fifo, "x")
    assert str(exc.value) == f"{fifo}: is a FIFO (named pipe); output is only written to regular files"
    with pytest.raises(InputError, match="is a directory"):
        atomic.atomic_write_text(tmp_path / "a", "x")
    with pytest.raises(InputError, match="is a character device"):
        atomic.atomic_write_text("/dev/null", "x")
    assert sorted(os.listdir(tmp_path)) == ["a", "fifo"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_nearest_existing_ancestor(tmp_path):
    assert atomic._nearest_existing(tmp_path / "x" / "y" / "z") == tmp_path
    assert atomic._nearest_existing(tmp_path) == tmp_path
    assert atomic._nearest_existing(Path("/")) == Path("/")
    rel = atomic._nearest_existing(Path("no-such-folder-here/x"))
    assert rel == Path.cwd() and rel.is_absolute()


def test_check_creatable_in(tmp_path, monkeypatch):
    probes = []
    real_mkstemp, real_mkdtemp = atomic.tempfile.mkstemp, atomic.tempfile.mkdtemp

    def mkstemp(**kwargs):
        probes.append(("file", kwargs))
        return real_mkstemp(**kwargs)

    def mkdtemp(**kwargs):
        probes.append(("folder", kwargs))
        return real_mkdtemp(**kwargs)

    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(atomic.tempfile, "mkdtemp", mkdtemp)
    atomic._check_creatable_in(tmp_path, "s")  # a probe file is made and removed
    atomic._check_creatable_in(tmp_path / "new" / "deeper", "s")  # a probe folder is made and removed
    assert os.listdir(tmp_path) == []
    # the probes are made where the output will go, under a name that says what they are
    assert probes == [("file", {"prefix": ".margintheory-probe.", "dir": tmp_path}),
                      ("folder", {"prefix": ".margintheory-probe.", "dir": tmp_path})]
    monkeypatch.undo()
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(InputError) as exc:
        atomic._check_creatable_in(f / "sub", "shown")
    assert str(exc.value) == f"shown: {f} is not a directory"

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    def refuse_bare(*args, **kwargs):
        raise OSError("no reason given")

    monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse)
    monkeypatch.setattr(atomic.tempfile, "mkdtemp", refuse)
    with pytest.raises(InputError) as exc:
        atomic._check_creatable_in(tmp_path, "shown")
    assert str(exc.value) == f"shown: cannot create files in {tmp_path} (Read-only file system)"
    with pytest.raises(InputError) as exc:
        atomic._check_creatable_in(tmp_path / "missing", "shown")
    assert str(exc.value) == f"shown: cannot create directories in {tmp_path} (Read-only file system)"
    monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse_bare)
    monkeypatch.setattr(atomic.tempfile, "mkdtemp", refuse_bare)
    with pytest.raises(InputError) as exc:
        atomic._check_creatable_in(tmp_path, "shown")
    assert str(exc.value) == f"shown: cannot create files in {tmp_path} (no reason given)"
    with pytest.raises(InputError) as exc:
        atomic._check_creatable_in(tmp_path / "missing", "shown")
    assert str(exc.value) == f"shown: cannot create directories in {tmp_path} (no reason given)"


def test_check_output_file(tmp_path):
    with pytest.raises(InputError) as exc:
        atomic.check_output_file("")
    assert str(exc.value) == "the output path is empty"
    new = tmp_path / "sub" / "new.json"
    assert atomic.check_output_file(new, overwrite=False) == new and not new.parent.exists()
    old = tmp_path / "old.json"
    old.write_text("{}")
    assert atomic.check_output_file(old) == old
    with pytest.raises(InputError) as exc:
        atomic.check_output_file(old, overwrite=False)
    assert str(exc.value) == f"{old} already exists (it is replaced only when overwrite is set)"
    assert exc.value.parameter == "overwrite"
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere" / "x")
    for overwrite in (False, True):  # never written through: it would create nowhere/x (and nowhere) on the way
        with pytest.raises(InputError) as exc:
            atomic.check_output_file(link, overwrite=overwrite)
        assert str(exc.value) == (f"{link}: a symbolic link to {tmp_path / 'nowhere' / 'x'}, which does not exist; "
                                  "not writing through a dangling link (remove the link or name another path)")
    (tmp_path / "dangling_dir").symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="dangling_dir: a symbolic link to .*nowhere, which does not exist"):
        atomic.check_output_dir(tmp_path / "dangling_dir")
    assert not (tmp_path / "nowhere").exists()
    good_link = tmp_path / "good"
    good_link.symlink_to(old)
    assert atomic.check_output_file(good_link) == old
    with pytest.raises(InputError) as exc:  # a directory is refused as such, even with overwrite
        atomic.check_output_file(tmp_path, overwrite=True)
    assert str(exc.value) == f"{tmp_path}: is a directory; output is only written to regular files"
    assert exc.value.parameter is None
    with pytest.raises(InputError, match="is a directory"):
        atomic.check_output_file(tmp_path, overwrite=False)


def test_output_checks_name_the_path_when_nothing_can_be_created(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(atomic.tempfile, "mkstemp", refuse)
    monkeypatch.setattr(atomic.tempfile, "mkdtemp", refuse)
    with pytest.raises(InputError) as exc:
        atomic.check_output_file(tmp_path / "x.json")
    assert str(exc.value) == f"{tmp_path / 'x.json'}: cannot create files in {tmp_path} (Read-only file system)"
    with pytest.raises(InputError) as exc:
        atomic.check_output_dir(tmp_path / "out")
    assert str(exc.value) == f"{tmp_path / 'out'}: cannot create directories in {tmp_path} (Read-only file system)"


def test_check_output_dir(tmp_path):
    with pytest.raises(InputError) as exc:
        atomic.check_output_dir("")
    assert str(exc.value) == "the output directory is empty"
    assert atomic.check_output_dir(tmp_path) == tmp_path
    missing = tmp_path / "will" / "be"
    assert atomic.check_output_dir(str(missing)) == missing and not (tmp_path / "will").exists()
    f = tmp_path / "f.txt"
    f.write_text("")
    with pytest.raises(InputError) as exc:
        atomic.check_output_dir(f)
    assert str(exc.value) == f"{f}: exists and is a regular file, not a directory"
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        with pytest.raises(InputError) as exc:
            atomic.check_output_dir(sock_path)
        assert str(exc.value) == f"{sock_path}: exists and is a socket, not a directory"


# -- atomic_create_bytes and fsync_directory: the sweep store's writers (first writer wins) ------------------------

def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_create_writes_once_with_umask_permissions_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a" / "b" / "cell.parquet"  # parents are created
    old = os.umask(0o002)  # (leaves the "other" bits visible: 0o666 and 0o667 would differ)
    try:
        assert atomic.atomic_create_bytes(target, b"first") is True
    finally:
        os.umask(old)
    assert target.read_bytes() == b"first" and stat.S_IMODE(target.stat().st_mode) == 0o664
    assert target.stat().st_nlink == 1 and _leftovers(target.parent) == []
    before = target.stat().st_ino
    assert atomic.atomic_create_bytes(target, b"second") is False
    assert target.read_bytes() == b"first" and target.stat().st_ino == before and _leftovers(target.parent) == []


def test_create_refuses_any_existing_name_even_a_dangling_link(tmp_path):
    link = tmp_path / "cell"
    link.symlink_to(tmp_path / "nowhere")
    assert atomic.atomic_create_bytes(link, b"x") is False
    assert link.is_symlink() and not (tmp_path / "nowhere").exists() and _leftovers(tmp_path) == []


def test_create_syncs_the_data_before_the_link_and_the_folder_after(tmp_path, monkeypatch):
    events: list[tuple[str, object]] = []
    real_fsync, real_link = os.fsync, os.link

    def fsync(fd):
        events.append(("fsync-dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync-file", os.fstat(fd).st_size))
        real_fsync(fd)

    def link(src, dst):
        src = Path(src)
        events.append(("link", (src.parent == Path(dst).parent, src.name.startswith(".cell."),
                                src.name.endswith(".tmp"), src.read_bytes())))
        real_link(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    assert atomic.atomic_create_bytes(tmp_path / "cell", b"data!") is True
    assert [e[0] for e in events] == ["fsync-file", "link", "fsync-dir"]
    assert events[0][1] == 5 and events[1][1] == (True, True, True, b"data!")


def test_create_without_hard_links_renames_unless_the_name_exists(tmp_path, monkeypatch):
    def no_link(src, dst):
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(os, "link", no_link)
    synced = []
    monkeypatch.setattr(atomic, "fsync_directory", lambda p: synced.append(Path(p)))
    assert atomic.atomic_create_bytes(tmp_path / "cell", b"one") is True
    assert (tmp_path / "cell").read_bytes() == b"one" and synced == [tmp_path] and _leftovers(tmp_path) == []
    assert atomic.atomic_create_bytes(tmp_path / "cell", b"two") is False
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert atomic.atomic_create_bytes(tmp_path / "dangling", b"three") is False
    assert (tmp_path / "cell").read_bytes() == b"one" and not (tmp_path / "nowhere").exists()
    assert synced == [tmp_path] and _leftovers(tmp_path) == []


def test_create_removes_its_temporary_when_writing_fails(tmp_path, monkeypatch):
    def broken(fd):
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(OSError, match="I/O error"):
        atomic.atomic_create_bytes(tmp_path / "cell", b"x")
    assert list(tmp_path.iterdir()) == []


def test_create_has_one_winner_among_racing_writers(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda i: atomic.atomic_create_bytes(tmp_path / "cell", str(i).encode()), range(16)))
    assert won.count(True) == 1
    assert (tmp_path / "cell").read_bytes() == str(won.index(True)).encode() and _leftovers(tmp_path) == []


def test_fsync_directory_syncs_a_folder_closes_it_and_ignores_what_cannot_be_synced(tmp_path, monkeypatch):
    opened, closed, synced = [], [], []
    real_open, real_close, real_fsync = os.open, os.close, os.fsync

    def op(path, flags, *a):
        fd = real_open(path, flags, *a)
        opened.append((fd, flags))
        return fd

    monkeypatch.setattr(os, "open", op)
    monkeypatch.setattr(os, "close", lambda fd: (closed.append(fd), real_close(fd)))
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(stat.S_ISDIR(os.fstat(fd).st_mode)), real_fsync(fd)))
    atomic.fsync_directory(tmp_path)
    assert len(opened) == 1 and opened[0][1] & os.O_DIRECTORY and not opened[0][1] & (os.O_WRONLY | os.O_RDWR)
    assert synced == [True] and closed == [opened[0][0]]
    atomic.fsync_directory(tmp_path / "missing")  # cannot be opened: ignored
    assert len(opened) == 1 and closed == [opened[0][0]]

    def failing(fd):
        raise OSError(errno.EINVAL, "cannot sync")

    monkeypatch.setattr(os, "fsync", failing)
    atomic.fsync_directory(tmp_path)  # opened, the sync fails: ignored, and the descriptor is still closed
    assert len(opened) == 2 and closed == [opened[0][0], opened[1][0]]


def test_the_writer_itself_refuses_a_dangling_link(tmp_path):
    """atomic_write_bytes (callers that make no up-front check, e.g. PolyNetwork.save) never writes through a link
    whose target does not exist: following it would create the target and its directories."""
    link = tmp_path / "out.bin"
    link.symlink_to(tmp_path / "far" / "x.bin")
    with pytest.raises(InputError, match="which does not exist; not writing through a dangling link"):
        atomic.atomic_write_bytes(link, b"data")
    assert not (tmp_path / "far").exists() and link.is_symlink()
    real = tmp_path / "real.bin"
    real.write_bytes(b"old")
    (tmp_path / "good").symlink_to(real)
    atomic.atomic_write_bytes(tmp_path / "good", b"new")  # a link to a regular file: its target is replaced
    assert real.read_bytes() == b"new" and (tmp_path / "good").is_symlink()
