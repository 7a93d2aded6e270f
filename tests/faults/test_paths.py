"""Output paths are validated before the work, and only regular files are ever replaced."""

from __future__ import annotations

import os
import stat

import pytest

from margintheory.errors import InputError
from margintheory.runtime.atomic import atomic_write_text, check_output_dir, check_output_file
from tests.faults.helpers import assert_one_line_error, run_cli


def test_solve_out_device_is_refused_and_the_device_survives(tmp_path):
    before = os.stat("/dev/full")
    run = run_cli("solve", "--p", "3", "--k", "2", "--out", "/dev/full", cwd=tmp_path)
    assert_one_line_error(run, contains="regular file")
    after = os.lstat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


@pytest.mark.parametrize(("args", "words"), [
    (("solve", "--p", "5", "--k", "3", "--out", "/proc/x"), "cannot create"),  # used to fail after a 30 s solve
    (("train", "--p", "3", "--k", "2", "--width", "4", "--out", "afile"), "not a directory"),
    (("train", "--p", "3", "--k", "2", "--width", "4", "--out", "/dev/null"), "not a directory"),
    (("analyze", "NET", "--p", "5", "--k", "2", "--plots", "/dev/null"), "not a directory"),
])
def test_bad_output_paths_are_refused_before_the_work(args, words, tmp_path):
    from margintheory.core.construction import build_construction

    build_construction(5, 2).save(tmp_path / "net.npz")
    (tmp_path / "afile").write_text("mine")
    args = tuple(str(tmp_path / "net.npz") if a == "NET" else a for a in args)
    run = run_cli(*args, cwd=tmp_path, timeout=60)
    assert_one_line_error(run, contains=words)
    assert (tmp_path / "afile").read_text() == "mine"
    assert run.seconds < 20, "the path must be checked before the work"


def test_atomic_writer_replaces_only_regular_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        atomic_write_text(fifo, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    (tmp_path / "dir").mkdir()
    with pytest.raises(InputError, match="directory"):
        atomic_write_text(tmp_path / "dir", "x")
    with pytest.raises(InputError, match="device"):
        atomic_write_text("/dev/null", "x")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_atomic_writer_follows_links_and_keeps_permissions(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_path_checks(tmp_path):
    assert check_output_file(tmp_path / "a" / "b.npz") == tmp_path / "a" / "b.npz"
    assert not (tmp_path / "a").exists(), "checking must not create anything"
    with pytest.raises(InputError):
        check_output_file(tmp_path)
    with pytest.raises(InputError, match="cannot create"):
        check_output_file("/proc/margintheory-test")
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="not a directory"):
        check_output_dir(tmp_path / "f")
    with pytest.raises(InputError):
        check_output_file(tmp_path / "f" / "x.npz")
    assert check_output_dir(tmp_path / "new") == tmp_path / "new"
