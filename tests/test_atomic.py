"""Atomic outputs (temporary sibling + rename), tested by behaviour: an existing file is replaced, never rewritten
in place; a failed or interrupted write leaves the previous file intact and no temporary file behind."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from margintheory.core.network import PolyNetwork
from margintheory.runtime import atomic
from margintheory.training.checkpoint import load_checkpoint, save_checkpoint
from margintheory.training.trainer import TrainConfig, fresh_state


def _state(seed: int = 0):
    return fresh_state(TrainConfig(p=5, k=2, width=4, steps=10, seed=seed))


def _only(folder) -> list[str]:
    return sorted(os.listdir(folder))


def test_existing_file_is_replaced_not_rewritten(tmp_path):
    """The rename gives the path a new inode; a reader holding the old file keeps reading the old bytes."""
    target = tmp_path / "out.txt"  # the folder exists already
    atomic.atomic_write_text(target, "old contents\n")
    before = os.stat(target).st_ino
    with open(target) as reader:
        atomic.atomic_write_text(target, "new\n")
        assert reader.read() == "old contents\n"
    assert target.read_text() == "new\n" and os.stat(target).st_ino != before
    assert _only(tmp_path) == ["out.txt"]


def test_checkpoint_into_an_existing_folder_is_atomic(tmp_path):
    path = tmp_path / "checkpoint.npz"
    save_checkpoint(path, _state(0))
    first = os.stat(path).st_ino
    save_checkpoint(path, _state(1))
    assert os.stat(path).st_ino != first
    assert np.array_equal(load_checkpoint(path).U, _state(1).U)
    assert _only(tmp_path) == ["checkpoint.npz"]


def test_checkpoint_creates_missing_folders(tmp_path):
    path = tmp_path / "a" / "b" / "checkpoint.npz"
    save_checkpoint(path, _state(2))
    assert np.array_equal(load_checkpoint(path).W, _state(2).W)


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_a_failed_write_keeps_the_previous_checkpoint(tmp_path, monkeypatch, where):
    """A full disk at the last moment (fsync or rename fails): the old checkpoint is intact and loadable."""
    path = tmp_path / "checkpoint.npz"
    save_checkpoint(path, _state(0))
    old = path.read_bytes()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, where, full)
    with pytest.raises(OSError):
        save_checkpoint(path, _state(1))
    monkeypatch.undo()
    assert path.read_bytes() == old and np.array_equal(load_checkpoint(path).U, _state(0).U)
    assert _only(tmp_path) == ["checkpoint.npz"]


def test_an_exception_while_writing_leaves_nothing_behind(tmp_path):
    target = tmp_path / "table.csv"
    atomic.atomic_write_text(target, "a,b\n1,2\n")
    with pytest.raises(KeyboardInterrupt), atomic.atomic_open(target, "w") as fh:
        fh.write("half a ")
        raise KeyboardInterrupt
    assert target.read_text() == "a,b\n1,2\n" and _only(tmp_path) == ["table.csv"]


def test_network_save_is_atomic_and_respects_the_umask(tmp_path):
    target = tmp_path / "net.npz"
    net = PolyNetwork(np.ones((2, 2, 3)), np.ones((2, 3)))
    old = os.umask(0o027)
    try:
        net.save(target)
    finally:
        os.umask(old)
    assert (os.stat(target).st_mode & 0o777) == 0o640
    inode = os.stat(target).st_ino
    net.scaled(2.0).save(target)
    assert os.stat(target).st_ino != inode and PolyNetwork.load(target).U[0, 0, 0] == 2.0
    assert _only(tmp_path) == ["net.npz"]


def test_a_fifo_swapped_in_while_writing_is_not_replaced(tmp_path):
    """The target is checked again just before the rename: a FIFO put in its place meanwhile is refused and kept
    (``os.replace`` would swap it for a regular file), and the temporary file is removed."""
    import stat

    from margintheory.errors import InputError

    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(InputError, match="FIFO") as info:
        with atomic.atomic_open(target) as fh:
            fh.write("new\n")
            target.unlink()
            os.mkfifo(target)
    assert str(info.value).startswith(f"{target}: is ")  # the refusal names the path given
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert _only(tmp_path) == ["out.txt"]
