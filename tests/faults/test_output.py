"""Standard output: clean at the file-descriptor level for --json, closed pipes end quietly, failed writes are one
line and exit 2 -- for every command."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from margintheory.core.construction import build_construction
from margintheory.runtime.process import EXIT_PIPE
from tests.faults.helpers import EXE, assert_one_line_error, run_cli


@pytest.fixture(scope="module")
def network_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("net") / "net.npz"
    build_construction(5, 2).save(path)
    return path


def test_solve_json_is_valid_json_despite_the_solver_banner(tmp_path):
    """HiGHS prints its banner with C-level writes to fd 1; it must land on stderr, not in the JSON."""
    run = run_cli("solve", "--p", "3", "--k", "2", "--json", cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["verdict"] == "verified"
    assert "HiGHS" not in run.stdout


@pytest.mark.parametrize("args", [("verify", "--p", "5", "--k", "2", "--json"),
                                  ("solve", "--p", "3", "--k", "2", "--single-neuron", "--json")])
def test_json_stdout_is_one_object(args, tmp_path):
    run = run_cli(*args, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    json.loads(run.stdout)


def test_closed_pipe_ends_quietly():
    """``margintheory verify --json | head -c 10``: the reader is gone before the result is written."""
    proc = subprocess.Popen([EXE, "verify", "--p", "5", "--k", "2", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.read(0) == b""
    proc.stdout.close()  # like head -c 10 exiting early
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == EXIT_PIPE
    assert err == "", err  # no traceback, no "Exception ignored", no message at all


@pytest.mark.parametrize("args", [
    ("verify", "--p", "5", "--k", "2"),
    ("verify", "--p", "5", "--k", "2", "--json"),
    ("derive", "identity", "--k", "2"),
    ("solve", "--p", "3", "--k", "2", "--single-neuron"),
    ("analyze", "NET", "--p", "5", "--k", "2", "--no-construction"),
    ("train", "--p", "3", "--k", "2", "--width", "4", "--steps", "2", "--no-figures", "--out", "run"),
    ("--help",),
])
def test_full_stdout_is_one_line_exit_2(args, network_file, tmp_path):
    args = tuple(str(network_file) if a == "NET" else a for a in args)
    run = run_cli(*args, cwd=tmp_path, stdout_path="/dev/full", timeout=120)
    assert_one_line_error(run, contains="cannot write to standard output: No space left on device")


def test_output_is_not_held_back_when_it_works(tmp_path):
    """The redirection of fd 1 is undone: the result reaches the real stdout in order, nothing is duplicated."""
    out = tmp_path / "out.txt"
    run = run_cli("derive", "cosine-sum", cwd=tmp_path, stdout_path=str(out))
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert text.count("cos") > 0 and text == text.strip("\0")
    assert os.path.getsize(out) == len(text.encode())
