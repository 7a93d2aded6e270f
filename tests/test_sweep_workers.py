"""Certificate-computing cells in dask *worker processes*: ``sweep verify`` (k = 2 and 3, the certificate on: the
upper bound's SOS solve runs in a child forked by :func:`margintheory.runtime.process.run_isolated`), ``sweep
solve`` and ``sweep train``, on a LocalCluster of process workers (the command's ``--workers``) and on a ``dask
scheduler`` and a ``dask worker`` (with its nanny, as a user starts one) started as subprocesses on 127.0.0.1.

A worker process of either is *daemonic*, and multiprocessing refuses children to a daemonic process: every
certificate-computing cell failed with "daemonic processes are not allowed to have children".  Also here: a cell
that fails in a worker is one line, never a worker's traceback; an unreachable scheduler fails within 10 s; a
``--k`` that no cell could use is refused before any cluster starts; a console script without a ``__main__`` guard
still starts a LocalCluster."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import pytest

from margintheory.cli import main
from tests.test_sweep_cluster import DASK, ROOT, _env, _free_port, _stop

#: the SOS solve of the upper bound (a check that only a cell whose solver child ran can pass)
#: the upper end's row of a verify cell: the exact AM-GM bound on g_k (the default), or the SOS solve (forked in the
#: worker: run_isolated in a daemonic process is tested on its own below)
SOLVED = ("one bound on g_k, all blocks", "one SOS solve, all blocks")


def _isolated_in_daemon(queue) -> None:  # noqa: ANN001 - a multiprocessing queue
    from margintheory.runtime.process import NativeFailure, run_isolated
    from tests.faults.test_round3 import _abort_like_rust

    out = [run_isolated(divmod, 7, 2)]
    try:
        run_isolated(_abort_like_rust)
    except NativeFailure as exc:
        out.append(str(exc))
    queue.put(out)


def test_the_isolated_solve_runs_inside_a_daemonic_process():
    """A dask worker process is daemonic: the child must start there and still contain an abort."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_isolated_in_daemon, args=(queue,), daemon=True)
    proc.start()
    try:
        out = queue.get(timeout=60)
    finally:
        proc.join(30)
    assert out[0] == (3, 1)
    assert "died with SIGABRT" in out[1] and "1919818624" in out[1]


def test_the_isolated_child_dies_with_its_parent(tmp_path):
    """A parent SIGKILLed mid-solve (a dask worker killed by its nanny or by the OOM killer) leaves no child running
    on: the child asked the kernel to kill it with its parent."""
    pidfile = tmp_path / "child"
    code = ("import os, sys, time\nfrom margintheory.runtime.process import run_isolated\n"
            "def solve(path):\n    open(path + '.tmp', 'w').write(str(os.getpid()))\n"
            "    os.rename(path + '.tmp', path)\n    time.sleep(120)\n"
            f"run_isolated(solve, {str(pidfile)!r})\n")
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=_env())
    try:
        deadline = time.monotonic() + 60
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(pidfile.read_text())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the solver's child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie (not yet reaped by init) has ended
    except FileNotFoundError:
        return False


COMMANDS = {
    "verify": ["verify", "--p", "3", "--k", "2,3"],
    "solve": ["solve", "--p", "3", "--k", "2"],
    "train": ["train", "--p", "3", "--k", "2", "--width", "8", "--steps", "20"],
}


def _check_sweep(what: str, code: int, out: str, err: str, store) -> None:  # noqa: ANN001 - a path
    import pandas as pd

    assert "Traceback" not in err and "distributed." not in err, err[-3000:]
    doc = json.loads(out)
    rows = pd.read_parquet(store)
    assert rows["error"].isna().all(), rows["error"].dropna().tolist()
    if what == "train":  # 20 steps do not reach the margin: the cell ran, and its network was analysed
        assert code in (0, 1) and set(rows["verdict"]) <= {"verified", "refuted"} and len(rows) == 1
        return
    assert code == 0 and doc["verdict"] == "verified", doc
    if what == "verify":
        assert len(rows) == 2
        k3 = json.loads(rows.set_index("k").loc[3, "result"])
        solved = [c for c in k3["checks"] if c["name"] in SOLVED]
        assert solved and solved[0]["passed"], [c["name"] for c in k3["checks"]]


@pytest.mark.parametrize("what", ["solve", "train"])
def test_sweeps_on_a_local_cluster_of_processes(what, tmp_path, capfd):
    store = tmp_path / "store"
    code = main(["sweep", *COMMANDS[what], "--workers", "1", "--store", str(store), "--json"])
    captured = capfd.readouterr()
    _check_sweep(what, code, captured.out, captured.err, store)


def test_sweep_verify_on_a_local_cluster_from_a_console_script_without_a_main_guard(tmp_path):
    """Worker processes are spawned: each first runs the parent's ``__main__`` file again.  A console script with no
    ``if __name__ == "__main__"`` guard (as the one this environment installs) then ran the whole command again in
    the worker ("Nanny failed to start"); the verify sweep itself then failed in the daemonic worker."""
    script = tmp_path / "margintheory"
    script.write_text("import sys\nfrom margintheory.cli import main\nsys.exit(main())\n")
    run = subprocess.run([sys.executable, str(script), "sweep", *COMMANDS["verify"], "--workers", "1", "--store",
                          "store", "--json"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert run.stderr == "", run.stderr[-3000:]
    _check_sweep("verify", run.returncode, run.stdout, run.stderr, tmp_path / "store")


@pytest.fixture(scope="module")
def nanny_cluster(tmp_path_factory):
    """``dask scheduler`` and one ``dask worker`` with its nanny (the worker process is the nanny's daemonic
    child), on 127.0.0.1; stopped at the end."""
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask-logs")
    address = f"tcp://127.0.0.1:{_free_port()}"
    started = []
    try:
        for name, argv in (("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                          "--no-dashboard"]),
                           ("worker", ["worker", address, "--nthreads", "1", "--host", "127.0.0.1",
                                       "--no-dashboard"])):
            with open(logs / f"{name}.log", "w") as log:
                started.append(subprocess.Popen([str(DASK), *argv], cwd=ROOT, env=_env(), stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True))
        with Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=120)
        yield address
    finally:
        for proc in reversed(started):
            _stop(proc)


@pytest.mark.parametrize("what", list(COMMANDS))
def test_sweeps_on_a_scheduler_and_a_worker_started_apart(what, nanny_cluster, tmp_path, capfd):
    store = tmp_path / "store"
    code = main(["sweep", *COMMANDS[what], "--scheduler", nanny_cluster, "--store", str(store), "--json"])
    captured = capfd.readouterr()
    _check_sweep(what, code, captured.out, captured.err, store)


def test_a_cell_failing_in_a_worker_is_one_line_not_a_traceback(capfd, tmp_path):
    """The worker's "Compute Failed" log (a traceback, twice with a retry) stays off the terminal; the failure is
    the cell's row in the store."""
    from margintheory.execution.executors import open_executor
    from margintheory.sweep.grid import grid_cells
    from margintheory.sweep.runner import run_sweep
    from margintheory.sweep.store import ResultStore
    from tests.sweep_cells import raising_cell

    with open_executor(workers=1, retries=1) as executor:
        summary = run_sweep(grid_cells("verify", {"p": [5]}, {"k": 1}), ResultStore(tmp_path / "store"), executor,
                            raising_cell)
    err = capfd.readouterr().err
    assert summary.counts.failed == 1
    assert "this cell always fails" in summary.table.to_pylist()[0]["error"]
    assert "Traceback" not in err and "Compute Failed" not in err, err[-3000:]


def test_an_unreachable_scheduler_fails_within_10_seconds(capfd, tmp_path):
    start = time.monotonic()
    code = main(["sweep", "verify", "--p", "5", "--k", "2", "--scheduler", f"tcp://127.0.0.1:{_free_port()}",
                 "--store", str(tmp_path / "store")])
    took = time.monotonic() - start
    err = capfd.readouterr().err
    assert code == 2 and took < 10, (code, took)
    assert err.count("\n") == 1 and "cannot connect to the dask scheduler" in err, err


def test_a_k_that_no_cell_can_use_is_refused_before_any_cluster_starts(capfd, tmp_path, monkeypatch):
    import margintheory.execution.executors as executors

    def no_cluster(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(executors, "open_executor", no_cluster)
    for argv in (["verify", "--k", "0"], ["solve", "--k", "2,-1"], ["train", "--k", "2", "--width", "0"]):
        code = main(["sweep", *argv, "--p", "5", "--workers", "1", "--store", str(tmp_path / "store")])
        err = capfd.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "must be >= " in err, (argv, err)
    assert not (tmp_path / "store").exists()
