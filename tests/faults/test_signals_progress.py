"""Ctrl-C at any moment (start-up included) is one line, exit 130; progress is drawn on stderr only when stderr is a
terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess

import pytest

from margintheory.runtime import progress
from tests.faults.helpers import EXE, assert_one_line_error, run_cli


@pytest.mark.parametrize("delay", [0.8, 2.0])
def test_ctrl_c_during_start_up_is_one_line(delay, tmp_path):
    """During the imports of numpy, sympy, numba (about 1 s) or the work (the exhaustive engine at (47,4), tens of
    seconds, so the signal always finds it running).  The interpreter's own start-up before
    the package is reached (20-50 ms idle, longer on a loaded machine) cannot be covered by any Python program, so
    the first delay stays clear of it."""
    run = run_cli("verify", "--p", "47", "--k", "4", "--exhaustive", "--force", cwd=tmp_path, signal_after=delay)
    assert_one_line_error(run, code=130, contains="interrupted")
    # the engine's worker threads stop after the chunk in hand (a chunk is a fraction of a second), not after the
    # whole pass (about 25 s here): the executor's shutdown used to wait for every remaining chunk
    assert run.seconds < delay + 6, run.seconds


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path):
    run = run_cli("verify", "--p", "11", "--k", "3", "--json", cwd=tmp_path)
    assert run.returncode == 0 and run.stderr == "", run.stderr


def test_progress_on_a_terminal_and_stdout_untouched():
    master, slave = pty.openpty()
    proc = subprocess.Popen([EXE, "verify", "--p", "11", "--k", "3", "--json", "--exhaustive"], stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read()
    assert proc.wait(timeout=60) == 0
    assert b"exhaustive margin" in seen
    assert out.startswith(b"{") and b"exhaustive margin" not in out


def test_report_without_callback_is_a_no_op_and_with_one_reaches_it():
    progress.report("nothing listens", 1, 2)
    got = []
    with progress.reporting(lambda what, done, total: got.append((what, done, total))):
        progress.report("work", 1, 2)
    progress.report("after", 1, 2)
    assert got == [("work", 1, 2)]


def _reports(fn) -> list[tuple[str, float, float | None]]:
    got: list[tuple[str, float, float | None]] = []
    with progress.reporting(lambda what, done, total: got.append((what, done, total))):
        fn()
    return got


def test_long_stages_report_progress():
    """The stages that used to be silent on a terminal: building the construction (p = 3, k = 9: 13 s), the proved
    upper bound (its SOS solve), the certificate checker's exact steps, CoGO's checks (d = 64: 35 s)."""
    import json

    from margintheory.certificate import checker, upper_bound
    from margintheory.core.construction import build_construction
    from margintheory.tasks.cogo import constructions as cogo_constructions
    from margintheory.tasks.cogo import lemma1_checks as cogo_lemma1_checks

    got = _reports(lambda: build_construction(5, 2))
    assert got[0][:2] == ("building the construction", 0) and got[-1] == ("building the construction", 16, 16)
    upper_bound._prove_upper_bound.cache_clear()
    ub_reports = _reports(lambda: upper_bound.prove_upper_bound(5, 2))
    assert [done for what, done, _ in ub_reports if what.startswith("proved upper bound")] == [0, 1, 2, 3, 4]
    doc = upper_bound.certificate_document(upper_bound.prove_upper_bound(5, 2), None, "float", "", None)
    assert {what for what, _, _ in _reports(lambda: checker.check_data(json.loads(json.dumps(doc))))} == {
        "exact polynomial identity", "exact LDL^T of the Gram blocks"}
    con = cogo_constructions.build_memorization(5)
    assert _reports(lambda: cogo_lemma1_checks.construction_checks(con))[-1][1:] == (4, 4)


SWALLOWING_START_UP = """
import os, signal, sys, traceback
from margintheory import cli
real = cli.build_parser
def build_parser(*args, **kwargs):
    try:  # Ctrl-C while compiled code imports something, and that code prints the error and carries on
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(100000))
    except KeyboardInterrupt:
        traceback.print_exc()
    return real(*args, **kwargs)
cli.build_parser = build_parser
sys.exit(cli.main(["schema"]))
"""


def test_ctrl_c_during_start_up_ends_at_once_even_if_swallowed():
    """Seen under load: the traceback of a KeyboardInterrupt raised in an import was printed and the command then
    ran to the end with status 0.  During start-up Ctrl-C now ends the process itself: one line, status 130."""
    import sys

    run = subprocess.run([sys.executable, "-c", SWALLOWING_START_UP], capture_output=True, text=True, timeout=60)
    assert run.returncode == 130, (run.returncode, run.stderr)
    assert run.stderr.strip() == "margintheory: interrupted" and run.stdout == "", run.stderr
