"""SIGTERM and SIGHUP (what ``timeout``, SLURM, container runtimes and a closed terminal send) end a long command as
Ctrl-C does: the state is written atomically, one line says what was kept and how to resume, exit ``128 + signum``.
Each command runs as a real subprocess; the signal is sent once the command is past start-up and working (the run
directory exists, the solver library is loaded), so that it lands in the work, not in the imports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults.helpers import EXE, Run, assert_one_line_error


def _terminate_when(args: list[str], cwd: Path, ready: Callable[[int], bool], *, signum: int = signal.SIGTERM,
                    settle: float = 0.5, timeout: float = 120) -> Run:
    """Start ``margintheory *args``, wait until ``ready(pid)`` (polled), ``settle`` seconds more, send ``signum``."""
    t0 = time.perf_counter()
    with open(cwd / "out.txt", "w+") as out, open(cwd / "err.txt", "w+") as err:
        proc = subprocess.Popen([EXE, *args], cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            while not ready(proc.pid):
                assert proc.poll() is None, "the command ended before the signal: " + (cwd / "err.txt").read_text()
                assert time.perf_counter() - t0 < timeout, "the command never became ready"
                time.sleep(0.05)
            time.sleep(settle)
            proc.send_signal(signum)
            code = proc.wait(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        err.seek(0)
        return Run(code, out.read(), err.read(), 0, time.perf_counter() - t0, False)


def _mapped(name: str) -> Callable[[int], bool]:
    """The process has loaded a shared library whose path contains ``name`` (its solver is about to run)."""
    def ready(pid: int) -> bool:
        try:
            return name in Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            return False

    return ready


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _training(run_dir: Path) -> Callable[[int], bool]:
    """In the training loop: the run directory exists and the process has since used a second of CPU (the set-up
    between the two is milliseconds; counted in CPU time, not wall time, so a loaded machine does not matter)."""
    since: list[float] = []

    def ready(pid: int) -> bool:
        if not run_dir.is_dir():
            return False
        if not since:
            since.append(_cpu_seconds(pid))
        return _cpu_seconds(pid) - since[0] >= 1.0

    return ready


def _leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".tmp" in p.name or p.name.startswith("."))


def test_train_saves_the_current_step_and_says_how_to_resume(tmp_path):
    """It exited 143 without a word and kept only its last periodic checkpoint (step 8000 of a run that had gone
    further).  (SIGHUP takes the same path: test_sighup_is_handled_as_sigterm_and_once.)"""
    signum = signal.SIGTERM
    args = ["train", "--p", "5", "--k", "2", "--width", "8", "--steps", "2000000", "--checkpoint-every", "1000000",
            "--out", "run", "--no-figures"]
    run = _terminate_when(args, tmp_path, _training(tmp_path / "run"), signum=signum)
    name = signal.Signals(signum).name
    line = assert_one_line_error(run, code=128 + signum, contains=(f"terminated by {name}", "saved in", "--resume"))
    step = int(line.split("; step ")[1].split(" of ")[0])
    from margintheory.training.checkpoint import checkpoint_progress

    assert 0 < step < 1_000_000 and checkpoint_progress(tmp_path / "run" / "checkpoint.npz") == (step, 2_000_000)
    assert _leftovers(tmp_path / "run") == []
    resumed = subprocess.run([EXE, *args[:8], str(step + 20), *args[9:], "--resume"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((tmp_path / "run" / "history.json").read_text())["history"][-1]["step"] == step + 20


def test_sweep_keeps_every_finished_cell_and_releases_its_claims(tmp_path):
    args = ["sweep", "verify", "--p", "3:99:2", "--k", "2:3", "--workers", "0", "--store", "store",
            "--no-certificate"]
    run = _terminate_when(args, tmp_path, lambda pid: len(list((tmp_path / "store").glob("*.parquet"))) >= 2)
    line = assert_one_line_error(run, code=143, contains=("terminated by SIGTERM", "cells are finished in store",
                                                          "rerun the same command"))
    done = int(line.split("; ")[1].split(" of ")[0])
    assert len(list((tmp_path / "store").glob("*.parquet"))) == done >= 2
    assert list((tmp_path / "store" / "_claims").iterdir()) == [] and _leftovers(tmp_path / "store") == []


def test_verify_certificate_leaves_no_half_written_file(tmp_path):
    run = _terminate_when(["verify", "--p", "5", "--k", "6", "--method", "sos", "--certificate", "c.json"], tmp_path,
                          _mapped("clarabel"))
    assert_one_line_error(run, code=143, contains=("terminated by SIGTERM", "rerun the same command"))
    assert not (tmp_path / "c.json").exists() and _leftovers(tmp_path) == []


def test_solve_leaves_no_half_written_network(tmp_path):
    run = _terminate_when(["solve", "--p", "7", "--k", "3", "--out", "n.npz"], tmp_path, _mapped("highs"))
    assert_one_line_error(run, code=143, contains=("terminated by SIGTERM", "rerun the same command"))
    assert not (tmp_path / "n.npz").exists() and _leftovers(tmp_path) == []


def test_termination_during_start_up_is_one_line(tmp_path):
    """Before the command runs (imports), SIGTERM ends the process at once with one line, as Ctrl-C does."""
    run = _terminate_when(["verify", "--p", "5", "--k", "2"], tmp_path, lambda pid: True, settle=0.4)
    assert run.returncode == 143 or run.returncode == 0, run.stderr  # (a fast machine may finish first)
    if run.returncode == 143:
        assert_one_line_error(run, code=143, contains="terminated by SIGTERM")


def test_sighup_is_handled_as_sigterm_and_once():
    """SIGHUP raises the same ``Terminated`` (exit 129); a second signal while the state is saved is ignored."""
    from margintheory.runtime.process import (
        Terminated,
        interrupt_exit_status,
        raise_on_termination,
        received_termination,
        restore_handlers,
    )

    previous = raise_on_termination()
    try:
        with pytest.raises(Terminated) as caught:
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(1)  # (the handler runs at the next bytecode)
        assert interrupt_exit_status(caught.value) == 129 and received_termination().signum == signal.SIGHUP
        os.kill(os.getpid(), signal.SIGTERM)  # ignored: the first signal's save is under way
        time.sleep(0.1)
    finally:
        restore_handlers(previous)


def test_the_resume_notes_are_plain_library_text():
    """The notes the library adds name no flag (the command adds the flag): trainer and sweep runner."""
    from margintheory.runtime.process import Terminated, interrupt_exit_status, interrupt_message

    exc = Terminated(signal.SIGTERM)
    assert interrupt_exit_status(exc) == 143 and interrupt_exit_status(KeyboardInterrupt()) == 130
    assert interrupt_message(exc).startswith("terminated by SIGTERM; no output file")
    exc.add_note("step 5 of 9 saved in x")
    assert interrupt_message(exc) == "terminated by SIGTERM; step 5 of 9 saved in x"
