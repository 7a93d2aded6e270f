"""Training runs are never overwritten without being asked, and never written by two processes at once."""

from __future__ import annotations

import fcntl
import os

import pytest

from margintheory.errors import InputError
from margintheory.training.rundir import claim_run_dir, locked_run_dir, previous_run
from tests.faults.helpers import assert_one_line_error, run_cli

TRAIN = ("train", "--p", "3", "--k", "2", "--width", "4", "--steps", "3", "--no-figures", "--out", "run")


def test_a_finished_run_is_not_overwritten(tmp_path):
    first = run_cli(*TRAIN, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    saved = (tmp_path / "run" / "network.npz").read_bytes()
    again = run_cli(*TRAIN[:-3], "--seed", "1", "--no-figures", "--out", "run", cwd=tmp_path)
    assert_one_line_error(again, contains=("finished run", "--overwrite", "--resume"))
    assert (tmp_path / "run" / "network.npz").read_bytes() == saved
    over = run_cli(*TRAIN[:-3], "--seed", "1", "--no-figures", "--out", "run", "--overwrite", cwd=tmp_path)
    assert over.returncode == 0, over.stderr
    assert (tmp_path / "run" / "network.npz").read_bytes() != saved


def test_a_locked_run_directory_is_refused(tmp_path):
    """While another process holds the run directory, a second run refuses at once (and loses nothing)."""
    out = tmp_path / "run"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        run = run_cli(*TRAIN, cwd=tmp_path)
        assert_one_line_error(run, contains="locked")
        assert list(out.iterdir()) == []
    finally:
        os.close(fd)


def test_lock_is_exclusive_and_released(tmp_path):
    with locked_run_dir(tmp_path / "r") as out:
        with pytest.raises(InputError, match="locked"), locked_run_dir(out):
            pass
    with locked_run_dir(tmp_path / "r"):
        pass  # released when the first block ended


def test_claim_rules(tmp_path):
    out = tmp_path
    claim_run_dir(out, resume=False, overwrite=False)  # empty: fine
    (out / "checkpoint.npz").write_bytes(b"x")
    assert previous_run(out) == "the files of a previous run (checkpoint.npz unreadable)"
    with pytest.raises(InputError):
        claim_run_dir(out, resume=False, overwrite=False)
    claim_run_dir(out, resume=True, overwrite=False)
    assert (out / "checkpoint.npz").exists()
    (out / "notes.txt").write_text("the user's own file")
    claim_run_dir(out, resume=False, overwrite=True)
    assert not (out / "checkpoint.npz").exists() and (out / "notes.txt").exists()
    with pytest.raises(InputError):
        claim_run_dir(out, resume=True, overwrite=True)


def test_the_checkpoint_says_how_far_a_run_is_when_history_json_is_older(tmp_path):
    """history.json is written when a session ends; a later session stopped mid-way leaves only the checkpoint
    ahead of it.  The refusal to start over the directory describes the checkpoint (it said 'a finished run (3
    steps)' of a run at step 5 of 6)."""
    from margintheory.training.trainer import TrainConfig, train

    assert run_cli(*TRAIN, cwd=tmp_path).returncode == 0
    assert previous_run(tmp_path / "run") == "a finished run (3 steps)"
    cfg = TrainConfig(p=3, k=2, width=4, steps=6)
    train(cfg, checkpoint=tmp_path / "run" / "checkpoint.npz", resume=True, stop_after=2)
    assert previous_run(tmp_path / "run") == "an unfinished run (stopped after 5 of 6 steps)"
    again = run_cli(*TRAIN, cwd=tmp_path)
    assert_one_line_error(again, contains=("stopped after 5 of 6 steps", "--resume"))


def test_a_run_never_removes_or_writes_through_anything_but_a_regular_file(tmp_path):
    """--overwrite unlinked a FIFO in the run directory, and a dangling link there was written through (creating
    its target's directories wherever it pointed): both are refused before any work, and left as they were."""
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "history.csv")
    run = run_cli(*TRAIN[:-1], str(fifo_dir), "--overwrite", cwd=tmp_path)
    assert_one_line_error(run, contains=("history.csv", "FIFO"))
    assert (fifo_dir / "history.csv").is_fifo() and not (fifo_dir / "network.npz").exists()
    link_dir = tmp_path / "link"
    link_dir.mkdir()
    far = tmp_path / "elsewhere" / "deep" / "x.npz"
    (link_dir / "network.npz").symlink_to(far)
    for extra in ((), ("--resume",)):
        run = run_cli(*TRAIN[:-1], str(link_dir), *extra, cwd=tmp_path)
        assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert not (tmp_path / "elsewhere").exists()


def test_the_atomic_writer_refuses_a_dangling_link_itself(tmp_path):
    """PolyNetwork.save (no up-front check of its own) went through a dangling link and created its target."""
    from margintheory.core.construction import build_construction

    (tmp_path / "net.npz").symlink_to(tmp_path / "far" / "away" / "t.npz")
    with pytest.raises(InputError, match="dangling link"):
        build_construction(3, 2).save(tmp_path / "net.npz")
    assert not (tmp_path / "far").exists()
