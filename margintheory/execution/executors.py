"""Where work runs: this process, or a dask.distributed cluster, behind one small interface (:class:`Executor`).

An executor runs tasks ``fn(*args, **kwargs)`` given by a key, keeps at most :attr:`Executor.capacity` of them in
flight (the caller tops up as tasks finish, so that two sweeps on one store share the work), and hands back each
finished task as an :class:`Outcome`: its value, or its exception as one line.

* :class:`InProcessExecutor` runs the tasks one at a time in this process (no cluster; ``--workers 0``).
* :class:`DaskExecutor` submits them to a dask.distributed scheduler as futures (``Client.submit`` with a unique key,
  ``retries`` through the scheduler, ``pure=False``) and collects them with ``distributed.as_completed``; a task
  whose worker dies is rescheduled by the scheduler on another worker.  Large objects are scattered to the workers
  once (:meth:`Executor.share`) and passed to the tasks by reference, never pickled into each task; task functions
  are module-level functions (sent by name, not as closures).
* :func:`open_executor` opens one of them: a running cluster (``scheduler`` address), a LocalCluster of ``workers``
  processes with ``threads`` threads each, or this process (``workers=0``).

Only tasks' *unexpected* exceptions are retried: a task that wants an expected failure recorded without retries
returns it as a value (the sweep's cells do).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from margintheory.errors import ExecutionError, InputError

#: how long to wait for a LocalCluster's workers to start (seconds)
CONNECT_TIMEOUT = 30.0
#: how long to wait for a running scheduler (``--scheduler``) to answer: an address with nobody behind it fails
#: within this (a reachable scheduler answers in milliseconds, a distant one in well under a second)
SCHEDULER_TIMEOUT = 5.0
#: where a LocalCluster's scheduler serves HTTP: any free port of the loopback (never the fixed 8787)
LOOPBACK_ANY_PORT = "127.0.0.1:0"


@dataclass(frozen=True)
class Outcome:
    """A finished task: its ``value``, or ``error`` (one line: exception type and message) if it failed."""

    key: str
    value: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def one_line(exc: BaseException) -> str:
    """``"ValueError: message"`` on one line (the type names the failure when the message alone would not)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Executor(ABC):
    """Runs keyed tasks and returns their outcomes as they finish (module docstring)."""

    #: what runs the tasks, in words ("this process", "LocalCluster: 2 workers x 1 thread", a scheduler address)
    description: str = ""

    @property
    @abstractmethod
    def parallelism(self) -> int:
        """Tasks that can run at the same time (worker threads)."""

    @property
    def capacity(self) -> int:
        """Tasks to keep in flight: enough to keep every worker thread busy while results travel back."""
        return max(2, 2 * self.parallelism)

    @abstractmethod
    def submit(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Start ``fn(*args, **kwargs)``; its :class:`Outcome` carries ``key``."""

    @abstractmethod
    def in_flight(self) -> int:
        """Tasks submitted whose outcome has not been returned yet."""

    @abstractmethod
    def next_done(self) -> Outcome:
        """Block until a task in flight finishes and return its outcome (only call with tasks in flight)."""

    def share(self, obj: Any) -> Any:
        """A handle to ``obj`` that tasks receive as an argument (sent to the workers once)."""
        return obj

    def run_everywhere(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` once in every worker process now (e.g. to import what the tasks need)."""
        fn(*args)

    @abstractmethod
    def close(self) -> None:
        """Cancel what is in flight and let go of the workers."""

    def run_all(self, fn: Callable[..., Any], calls: list[tuple[tuple[Any, ...], dict[str, Any]]],
                report: Callable[[int, int], None] | None = None) -> list[Any]:
        """``[fn(*args, **kwargs) for args, kwargs in calls]`` spread over the workers (in order); a task that
        failed after its retries raises :class:`~margintheory.errors.ExecutionError`."""
        values: dict[int, Any] = {}
        waiting = deque(enumerate(calls))
        tag = uuid.uuid4().hex[:8]
        while waiting or self.in_flight():
            while waiting and self.in_flight() < self.capacity:
                i, (args, kwargs) = waiting.popleft()
                self.submit(f"{getattr(fn, '__name__', 'task')}-{tag}-{i}", fn, *args, **kwargs)
            out = self.next_done()
            if not out.ok:
                self.close()
                raise ExecutionError(f"task {out.key} failed on {self.description}: {out.error}")
            values[int(out.key.rsplit("-", 1)[1])] = out.value
            if report is not None:
                report(len(values), len(calls))
        return [values[i] for i in range(len(calls))]


class InProcessExecutor(Executor):
    """Runs each task in this process, one at a time, when its outcome is asked for; an unexpected exception is
    retried ``retries`` times."""

    description = "this process"

    def __init__(self, retries: int = 0) -> None:
        self.retries = retries
        self._queue: deque[tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = deque()

    @property
    def parallelism(self) -> int:
        return 1

    @property
    def capacity(self) -> int:
        return 1

    def submit(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self._queue.append((key, fn, args, kwargs))

    def in_flight(self) -> int:
        return len(self._queue)

    def next_done(self) -> Outcome:
        key, fn, args, kwargs = self._queue.popleft()
        error: Exception | None = None
        for _ in range(self.retries + 1):
            try:
                return Outcome(key, fn(*args, **kwargs))
            except Exception as exc:  # an unexpected failure of the task: retried, then reported as its outcome
                error = exc
        assert error is not None
        return Outcome(key, error=one_line(error))

    def close(self) -> None:
        self._queue.clear()


class DaskExecutor(Executor):
    """Tasks as dask.distributed futures of ``client`` (module docstring)."""

    def __init__(self, client: Any, *, retries: int = 1, description: str = "") -> None:
        from distributed import as_completed

        self.client = client
        self.retries = retries
        self.description = description or f"dask scheduler {client.scheduler.address}"
        self._done = as_completed(loop=client.loop, with_results=False)
        self._keys: dict[str, str] = {}
        self._threads = (0, -1.0)  # (threads, when counted)

    @property
    def parallelism(self) -> int:
        threads, when = self._threads
        if time.monotonic() - when > 10.0:  # workers come and go (adaptive clusters): recount now and then
            threads = max(1, sum(self.client.nthreads().values()))
            self._threads = (threads, time.monotonic())
        return threads

    def submit(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        future = self.client.submit(fn, *args, key=f"{key}-{uuid.uuid4().hex[:12]}", pure=False,
                                    retries=self.retries, **kwargs)
        self._keys[future.key] = key
        self._done.add(future)

    def in_flight(self) -> int:
        return len(self._keys)

    def next_done(self) -> Outcome:
        future = next(self._done)
        key = self._keys.pop(future.key)
        if future.status == "cancelled":  # not the task's failure: the cluster went away (or cancelled it)
            self.close()
            raise ExecutionError(f"{self.description} cancelled task {key} (the scheduler was lost or shut down); "
                                 "nothing was recorded for the tasks in flight")
        try:
            return Outcome(key, future.result())
        except BaseException as exc:  # the task's exception, or the scheduler's (KilledWorker, cancelled)
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            return Outcome(key, error=one_line(exc))
        finally:
            future.release()

    def share(self, obj: Any) -> Any:
        return self.client.scatter(obj, broadcast=True, hash=False)

    def run_everywhere(self, fn: Callable[..., Any], *args: Any) -> None:
        self.client.run(fn, *args)

    def close(self) -> None:
        pending = list(self._done.futures)
        if pending:
            with contextlib.suppress(Exception):
                self.client.cancel(pending)
        self._done.clear()
        self._keys.clear()


def package_version() -> str:
    """The margintheory version of the process that runs this (checked on every worker of a cluster)."""
    from margintheory._version import __version__

    return __version__


#: a LocalCluster has at most this many worker threads per core of the machine (beyond, they only slow each other)
MAX_THREADS_PER_CORE = 4
#: resident memory of one LocalCluster worker process before it runs anything (the interpreter, dask, numpy and
#: margintheory imported; measured 250-300 MB)
WORKER_BASELINE_BYTES = 320 * 2**20


def check_local_cluster(workers: int, threads: int, worker_memory: float = 0.0) -> None:
    """Refuse, before any process starts, a LocalCluster larger than the machine: more than
    :data:`MAX_THREADS_PER_CORE` threads per core, or ``workers x (WORKER_BASELINE_BYTES + worker_memory)`` above
    the machine's memory (``worker_memory``: what each worker's job may allocate, its memory budget).
    :class:`~margintheory.errors.RefusedError` with ``parameter="workers"``."""
    from margintheory.errors import RefusedError
    from margintheory.runtime.budget import format_bytes, machine_memory

    cores = _cores()
    if workers * threads > MAX_THREADS_PER_CORE * cores:
        raise RefusedError(f"a local cluster of {workers} worker processes x {threads} thread(s) is more than "
                           f"{MAX_THREADS_PER_CORE} threads per core of this machine's {cores} core(s) (at most "
                           f"{MAX_THREADS_PER_CORE * cores // threads} workers)", parameter="workers",
                           estimate=float(workers * threads), limit=float(MAX_THREADS_PER_CORE * cores))
    need, have = workers * (WORKER_BASELINE_BYTES + float(worker_memory)), machine_memory()
    if need > have:
        each = format_bytes(WORKER_BASELINE_BYTES + float(worker_memory))
        raise RefusedError(f"a local cluster of {workers} worker processes needs up to {format_bytes(need)} ({each} "
                           f"each: the interpreter and, for its job, the memory budget), more than this machine's "
                           f"{format_bytes(have)} (at most {max(int(have // (need / workers)), 0)} such workers)",
                           parameter="workers", estimate=need, limit=have)


@contextlib.contextmanager
def open_executor(*, workers: int | None = None, threads: int = 1, scheduler: str | None = None,
                  retries: int = 1, worker_memory: float = 0.0) -> Iterator[Executor]:
    """The executor of a running cluster (``scheduler``: its address, e.g. ``tcp://10.0.0.5:8786``), of a new
    LocalCluster of ``workers`` processes (default: one per core) with ``threads`` threads each, or of this
    process (``workers=0``).  Everything is shut down when the block ends.  A LocalCluster larger than the machine
    (:func:`check_local_cluster`, with ``worker_memory`` per worker) is refused before any process starts."""
    if scheduler and workers is not None:
        raise InputError("give either a scheduler address or a number of local workers, not both")
    if workers is not None and workers < 0 or threads < 1 or retries < 0:
        raise InputError(f"workers must be >= 0, threads >= 1 and retries >= 0 (got {workers}, {threads}, "
                         f"{retries})")
    if not scheduler and workers != 0:
        check_local_cluster(workers if workers is not None else _cores(), threads, worker_memory)
    if workers == 0:
        executor: Executor = InProcessExecutor(retries)
        try:
            yield executor
        finally:
            executor.close()
        return
    with _dask_client(workers, threads, scheduler) as (client, description):
        _check_workers(client, description)
        executor = DaskExecutor(client, retries=retries, description=description)
        try:
            yield executor
        finally:
            executor.close()


@contextlib.contextmanager
def _dask_client(workers: int | None, threads: int, scheduler: str | None) -> Iterator[tuple[Any, str]]:
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ExecutionError(f"cannot connect to the dask scheduler at {scheduler}: {one_line(exc)}") from None
        except Exception as exc:  # something answered, but not a dask scheduler (garbage read as a message header)
            raise ExecutionError(f"cannot connect to the dask scheduler at {scheduler}: what answered there is not a "
                                 f"dask scheduler ({one_line(exc)[:200]})") from None
        with client:
            yield client, f"dask scheduler {scheduler}"
        return
    n = workers if workers is not None else _cores()
    # no dashboard; the scheduler's HTTP server (health routes) still starts, by default on port 8787, with a 4-line
    # "Port 8787 is already in use" warning whenever another dask runs: a free port of the loopback instead.
    # The workers log nothing below CRITICAL: a cell's failure is its row in the store and one line of the command,
    # not a worker's "Compute Failed" traceback on the terminal
    cluster = LocalCluster(n_workers=n, threads_per_worker=threads, processes=True, dashboard_address=None,
                           scheduler_kwargs={"dashboard_address": LOOPBACK_ANY_PORT}, silence_logs=logging.CRITICAL)
    with cluster, Client(cluster, timeout=CONNECT_TIMEOUT) as client:
        yield client, f"LocalCluster: {n} worker process{'es' if n != 1 else ''} x {threads} thread" + (
            "s" if threads != 1 else "")


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _check_workers(client: Any, description: str) -> None:
    """Every worker runs this margintheory version (a worker without it, or with another, is named)."""
    mine = package_version()
    try:
        versions = client.run(package_version)
    except Exception as exc:  # a worker that cannot import margintheory at all
        raise ExecutionError(f"the workers of {description} cannot run margintheory: {one_line(exc)}") from None
    other = {w: v for w, v in versions.items() if v != mine}
    if other:
        worker, version = next(iter(other.items()))
        raise ExecutionError(f"worker {worker} of {description} runs margintheory {version}, this process "
                             f"{mine}: install the same version everywhere")
