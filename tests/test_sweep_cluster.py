"""A real cluster on 127.0.0.1: ``dask scheduler`` and two ``dask worker`` processes (without nannies: a killed
worker stays dead) started as subprocesses on a free port and stopped at the end.  A sweep client (a subprocess) is
SIGKILLed mid-sweep and a second one resumes: every cell is in the store exactly once and the first client's files
are untouched.  A worker SIGKILLed mid-cell: the scheduler reruns the cell elsewhere and it is written once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from margintheory.execution.executors import open_executor
from margintheory.sweep.grid import grid_cells
from margintheory.sweep.runner import run_sweep
from margintheory.sweep.store import ResultStore
from tests.sweep_cells import kill_worker_once_cell

ROOT = Path(__file__).resolve().parent.parent
DASK = Path(sys.executable).parent / "dask"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _stop(proc: subprocess.Popen) -> None:
    """End a process group this test started (SIGTERM, then SIGKILL after 10 s)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask-logs")
    address = f"tcp://127.0.0.1:{_free_port()}"
    started = []
    try:
        worker = ["worker", address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard", "--no-nanny"]
        for name, argv in (("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                          "--no-dashboard"]), ("worker-1", worker), ("worker-2", worker)):
            with open(logs / f"{name}.log", "w") as log:
                started.append(subprocess.Popen([str(DASK), *argv], cwd=ROOT, env=_env(), stdout=log,
                                                stderr=subprocess.STDOUT, start_new_session=True))
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in reversed(started):
            _stop(proc)


def _files(store: Path) -> dict[str, tuple[int, int]]:
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in store.glob("*.parquet")}


def test_a_client_killed_mid_sweep_resumes_with_every_cell_exactly_once(scheduler, tmp_path, capsys):
    """The killed client is a subprocess; the resuming one runs in this process (another pid on the same host)."""
    import pandas as pd

    from margintheory.cli import main

    store = tmp_path / "store"
    argv = ["sweep", "verify", "--p", "3:41", "--odd", "--k", "2", "--no-certificate", "--store", str(store),
            "--scheduler", scheduler, "--json"]
    first = subprocess.Popen([sys.executable, "-m", "margintheory.cli", *argv], cwd=tmp_path, env=_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(store.glob("*.parquet")) and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    before = _files(store)
    claims = list((store / "_claims").glob("*.json"))
    assert 1 <= len(before) < 20, f"the kill must land mid-sweep: {first.stderr.read().decode()[-2000:]}"
    assert claims, "the killed client leaves the claims of its cells in flight"
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["checks"]) == 20 and doc["verdict"] == "verified"
    after = _files(store)
    assert len(after) == 20 and all(after[name] == before[name] for name in before)  # not rewritten
    df = pd.read_parquet(store)
    assert len(df) == 20 and df["cell"].is_unique and set(df["verdict"]) == {"verified"}
    assert not list((store / "_claims").glob("*.json"))  # the dead client's claims were taken over and released


def test_a_worker_killed_mid_cell_is_rescheduled_and_the_cell_written_once(scheduler, tmp_path):
    marker = tmp_path / "marker"
    marker.mkdir()
    cells = grid_cells("verify", {"p": [5, 7, 9, 11]}, {"k": 1, "unlucky": 7, "marker": str(marker)})
    store = ResultStore(tmp_path / "store")
    with open_executor(scheduler=scheduler, retries=0) as executor:
        summary = run_sweep(cells, store, executor, kill_worker_once_cell)
    assert (marker / "first-7").exists(), "the unlucky cell killed its worker"
    assert summary.counts.failed == 0 and [r["verdict"] for r in summary.table.to_pylist()] == ["verified"] * 4
    assert len(list(marker.glob("ran-7-*"))) == 1 and len(list(store.path.glob("*.parquet"))) == 4
