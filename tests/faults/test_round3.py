"""The smaller faults of the third hardening round, each as the user met it: repeated flags, ``--workers`` beyond the
machine, ``train --resume`` on nothing, a full disk, ``solve --min-width`` at even ``p``, an internal defect, and the
address-space limit (``ulimit -v``) that made a native library abort."""

from __future__ import annotations

import resource
import signal
import subprocess

import pytest

from margintheory.cli import main
from tests.faults.helpers import EXE, assert_one_line_error, run_cli


def _one_line(capsys, argv, *words) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(("argv", "words"), [
    (["verify", "--p", "5", "--p", "7", "--k", "2"], ("--p", "more than once", "--p 7")),
    (["verify", "--json", "--json", "--p", "5", "--k", "2"], ("--json", "more than once")),
    (["train", "--p", "5", "--k", "2", "--width", "4", "--lr=0.1", "--lr=0.2"], ("--lr", "0.2")),
    (["sweep", "verify", "--p", "5", "--k", "2", "--k", "3"], ("--k", "more than once")),
])
def test_a_repeated_flag_is_refused_not_silently_overridden(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _one_line(capsys, argv, *words)


def test_parsing_twice_into_fresh_namespaces_is_not_a_repeat():
    from margintheory.cli import build_parser

    parser = build_parser("verify")
    for _ in range(3):
        assert parser.parse_args(["verify", "--p", "5", "--k", "2"]).p == 5


def test_workers_beyond_the_machine_are_refused_before_any_process_starts(capsys, tmp_path, monkeypatch):
    """``sweep verify --workers 100000`` was still starting workers after 120 s (822 MB)."""
    monkeypatch.chdir(tmp_path)
    line = _one_line(capsys, ["sweep", "verify", "--p", "5", "--k", "2", "--workers", "100000"], "100000 worker",
                     "threads per core", "fewer --workers")
    assert not (tmp_path / "sweep_store").exists() or not any((tmp_path / "sweep_store").glob("*.parquet")), line
    _one_line(capsys, ["verify", "--p", "5", "--k", "2", "--workers", "100000"], "fewer --workers")


def test_workers_that_fit_the_cores_but_not_the_memory_are_refused(monkeypatch):
    from margintheory.errors import RefusedError
    from margintheory.execution import executors
    from margintheory.runtime import budget

    monkeypatch.setattr(budget, "machine_memory", lambda: 8.0 * 2**30)
    monkeypatch.setattr(executors, "_cores", lambda: 64)
    executors.check_local_cluster(4, 1, 1.5 * 2**30)  # 4 x (320 MiB + 1.5 GiB) fits 8 GiB
    with pytest.raises(RefusedError, match="at most 4 such workers"):
        executors.check_local_cluster(5, 1, 1.5 * 2**30)


def test_train_resume_on_nothing_is_refused(capsys, tmp_path, monkeypatch):
    """It silently started a fresh run."""
    monkeypatch.chdir(tmp_path)
    _one_line(capsys, ["train", "--p", "5", "--k", "2", "--width", "4", "--out", "nosuch", "--resume"],
              "nosuch does not exist", "drop --resume")
    assert not (tmp_path / "nosuch").exists()
    (tmp_path / "empty").mkdir()
    _one_line(capsys, ["train", "--p", "5", "--k", "2", "--width", "4", "--out", "empty", "--resume"],
              "holds no checkpoint.npz")


def test_a_full_disk_names_the_file_and_leaves_no_empty_run_directory(tmp_path):
    """A write that fails (here ``ulimit -f``: EFBIG, as ENOSPC on a full disk) said only 'File too large', and
    ``train`` left the empty directory it had created."""
    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    run = subprocess.run([EXE, "train", "--p", "5", "--k", "2", "--width", "8", "--steps", "20", "--out", "run",
                          "--no-figures"], cwd=tmp_path, preexec_fn=small_files, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 2 and run.stderr.strip() == "margintheory train: error: run/checkpoint.npz: File too " \
                                                         "large", run.stderr
    assert not (tmp_path / "run").exists() and list(tmp_path.iterdir()) == []


def test_solve_min_width_at_even_p_is_not_applicable(capsys, monkeypatch):
    """It exited 2 ("need odd p") where the theorem's hypothesis failing means not-applicable, with the max margin
    still computed with both legs (column generation's network and dual bound: replaced here by a one-row result,
    column generation at even p takes half a minute; tests/test_solvers_cli.py runs it)."""
    import json

    from margintheory.core.checks import MarginMeasurement, VerificationResult, bool_check

    def network(problem, options):
        result = VerificationResult("network max margin by column generation", fields={"lower_bound": 0.1})
        result.add(bool_check("LP solved", True, exactness="float", statement="the LP was solved"))
        result.set_margin(MarginMeasurement(value=0.1, error_bound=1e-9, exactness="float", method="exhaustive",
                                            how="column generation's network"))
        return result

    monkeypatch.setattr("margintheory.verification.solving._network", network)
    code = main(["solve", "--p", "4", "--k", "2", "--min-width", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["verdict"] == "not-applicable" and doc["exit_code"] == 0
    assert doc["parameters"]["method"].startswith("min-width at even p")
    assert doc["normalized_margin"] > 0 and any("none is known" in n for n in doc["notes"])
    _one_line(capsys, ["solve", "--p", "4", "--k", "2", "--max-width", "5"], "--max-width needs odd p")


def test_an_internal_defect_is_one_line_and_exit_2(capsys, monkeypatch):
    """An exception no check anticipated ended in a traceback and exit 1, which reads as 'refuted'."""
    from margintheory.commands import verify as verify_command

    def broken(args):
        raise ZeroDivisionError("a defect")

    monkeypatch.setattr(verify_command, "run", broken)
    monkeypatch.setattr(verify_command, "add_parser", _with(verify_command.add_parser, broken))
    _one_line(capsys, ["verify", "--p", "5", "--k", "2"], "internal error: ZeroDivisionError: a defect",
              "MARGINTHEORY_TRACEBACK")


def _with(add_parser, func):
    def patched(sub):
        parser = add_parser(sub)
        parser.set_defaults(func=func)
        return parser

    return patched


def test_an_address_space_limit_below_the_estimate_is_refused_up_front(tmp_path):
    """``ulimit -v`` below what the job needs: Clarabel (Rust) aborted with SIGABRT ("memory allocation of
    1919818624 bytes failed", exit 134); the budget now also holds the job to what the process may still map."""
    run = run_cli("solve", "--p", "3", "--k", "8", "--single-neuron", "--max-memory", "64G", cwd=tmp_path,
                  memory=0, timeout=120)  # an address space of 1.5 GiB; the job's estimate is 1.6 GiB
    assert_one_line_error(run, contains=("address-space limit", "ulimit -v", "refused up front"))


def _abort_like_rust(*args):
    """What Rust's allocation-error handler does: a line on file descriptor 2, then ``abort()``."""
    import os

    os.write(2, b"memory allocation of 1919818624 bytes failed\n")
    os.abort()


def test_a_native_allocation_failure_ends_the_child_not_the_command():
    """Clarabel (Rust) aborts the process when an allocation fails: it now solves in a forked child, and the
    parent raises a MemoryError carrying the child's last line."""
    from margintheory.runtime.process import NativeFailure, run_isolated

    assert run_isolated(divmod, 7, 2) == (3, 1)
    with pytest.raises(ZeroDivisionError):
        run_isolated(divmod, 1, 0)
    with pytest.raises(NativeFailure, match=r"died with SIGABRT \(memory allocation of 1919818624 bytes failed\)"):
        run_isolated(_abort_like_rust)


def test_verify_with_an_aborting_solver_is_one_line_and_exit_2(tmp_path):
    """``verify --p 3 --k 9`` under ``ulimit -v 5000000`` died by SIGABRT (exit 134, "memory allocation of
    1919818624 bytes failed"); here the solve is made to abort the same way."""
    code = ("import sys; import margintheory.certificate.block_sos as b; from tests.faults.test_round3 import "
            "_abort_like_rust; b._clarabel_solve = _abort_like_rust; from margintheory.cli import main; "
            "sys.exit(main(['verify', '--p', '5', '--k', '3', '--method', 'sos']))")
    import os
    import sys

    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.getcwd()})
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.returncode == 2 and len(lines) == 1, run.stderr
    assert "out of memory" in lines[0] and "SIGABRT" in lines[0] and "1919818624" in lines[0]


@pytest.mark.filterwarnings("error")
def test_the_isolated_solve_forks_quietly_after_jax_ran_in_this_process():
    """JAX warns at every fork of the process it runs in (its threads): the isolated native solve's fork must say
    nothing (a second line on stderr; under an "error" filter the warning was an exception in JAX's fork hook, which
    failed an unrelated test that ran after a JAX test in the same worker)."""
    import jax.numpy as jnp

    from margintheory.runtime.process import run_isolated

    jnp.zeros(1).block_until_ready()
    assert run_isolated(divmod, 7, 2) == (3, 1)
