"""Cell functions for the sweep tests, importable by dask workers (``tests.sweep_cells``): a cheap result, one that
fails unexpectedly the first time, one that kills its own worker process the first time."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from margintheory.core.checks import VerificationResult, bool_check


def quick_cell(params: dict) -> VerificationResult:
    """A verified result after ``params['sleep']`` seconds (no mathematics: the store and the runner are tested)."""
    time.sleep(params.get("sleep", 0.0))
    result = VerificationResult(f"quick p={params['p']}", task="modular-addition", parameters=dict(params))
    result.add(bool_check("p odd", params["p"] % 2 == 1, exactness="proved"))
    result.fields.update(normalized_margin=1.0 / params["p"], gamma_star=1.0 / params["p"], width=params["p"])
    if "marker" in params:  # each run leaves a trace: the test counts how often each cell ran
        with open(Path(params["marker"]) / f"ran-{params['p']}-{os.getpid()}-{time.monotonic_ns()}", "w"):
            pass
    return result


def _first_time(params: dict) -> bool:
    marker = Path(params["marker"]) / f"first-{params['p']}"
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def fail_once_cell(params: dict) -> VerificationResult:
    """Raises an unexpected error the first time it runs for a given p (the scheduler's retry then succeeds)."""
    if params["p"] == params.get("unlucky") and _first_time(params):
        raise RuntimeError("transient failure")
    return quick_cell(params)


def kill_worker_once_cell(params: dict) -> VerificationResult:
    """SIGKILLs its own worker process the first time it runs for ``p == unlucky`` (mid-cell)."""
    if params["p"] == params.get("unlucky") and _first_time(params):
        os.kill(os.getpid(), signal.SIGKILL)
    return quick_cell(params)


def raising_cell(params: dict) -> VerificationResult:
    """Raises an unexpected error every time (a cell that fails after its retries)."""
    raise RuntimeError(f"this cell always fails (p={params['p']})")
