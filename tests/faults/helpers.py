"""Running the real ``margintheory`` command in a subprocess under a memory limit and a timeout.

:func:`run_cli` starts the installed console script with ``RLIMIT_AS`` set in the child (so a runaway allocation
fails inside the child instead of exhausting the machine), kills it after ``timeout`` seconds, and reaps it with
``os.wait4`` to read the child's own peak resident memory (``ru_maxrss``).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

EXE = shutil.which("margintheory")
#: resident memory of the interpreter with numpy, scipy, sympy, numba, cvxpy and matplotlib imported (measured
#: 180-350 MB); a job's own allocations come on top of it and must stay within its --max-memory
BASELINE_RSS = 450 * 2**20
#: virtual address space the child may map beyond its budget (libraries, thread stacks, allocator arenas)
ADDRESS_SPACE_SLACK = 1536 * 2**20


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    max_rss: int  # bytes
    seconds: float
    timed_out: bool


def run_cli(*args: str, cwd: str | os.PathLike[str] | None = None, memory: int = 2 * 2**30, timeout: float = 60,
            stdin: int | None = subprocess.DEVNULL, stdout_path: str | None = None,
            stderr_fd: int | None = None, signal_after: float | None = None) -> Run:
    """Run ``margintheory *args``; ``memory`` bounds the child's address space (plus the slack above).

    ``stdout_path`` sends standard output to that path (e.g. ``/dev/full``) instead of a temporary file;
    ``stderr_fd`` to an open descriptor (e.g. a pty); ``signal_after`` sends SIGINT after that many seconds.
    """
    assert EXE is not None, "the console script 'margintheory' is not installed (pip install -e .)"
    limit = memory + ADDRESS_SPACE_SLACK

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        out_target = open(stdout_path, "w") if stdout_path else out  # noqa: SIM115 - closed below
        try:
            t0 = time.perf_counter()
            proc = subprocess.Popen([EXE, *args], cwd=cwd, stdin=stdin, stdout=out_target,
                                    stderr=err if stderr_fd is None else stderr_fd, preexec_fn=limit_memory)
            timed_out = threading.Event()

            def kill() -> None:
                timed_out.set()
                proc.kill()

            timer = threading.Timer(timeout, kill)
            timer.start()
            if signal_after is not None:
                threading.Timer(signal_after, lambda: proc.send_signal(signal.SIGINT)).start()
            _, status, usage = os.wait4(proc.pid, 0)
            timer.cancel()
            proc.returncode = os.waitstatus_to_exitcode(status)
            seconds = time.perf_counter() - t0
        finally:
            if stdout_path:
                out_target.close()
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, out.read(), err.read(), usage.ru_maxrss * 1024, seconds, timed_out.is_set())


def assert_one_line_error(run: Run, code: int = 2, *, contains: str | tuple[str, ...] = ()) -> str:
    """Exit ``code``, no traceback, exactly one non-empty line on stderr (returned)."""
    assert not run.timed_out, f"timed out after {run.seconds:.0f} s"
    assert run.returncode == code, (run.returncode, run.stdout[-500:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr and "Traceback" not in run.stdout, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    for word in (contains,) if isinstance(contains, str) else contains:
        assert word in lines[0], lines[0]
    return lines[0]


def listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and modification time (to show nothing else was touched)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out
