"""Run a sweep: claim the cells that are not finished, run them on an executor, write each result as it arrives.

:func:`run_sweep` lists the finished cells of the store and reads their rows once, before any cell runs (skipped:
never rerun, never rewritten; failed ones are rerun only with ``retry_failed``; a result file that cannot be read is
refused with its name before any work, :meth:`margintheory.sweep.store.ResultStore.read`), then keeps the executor's
capacity busy: it claims the next unfinished cell (:meth:`margintheory.sweep.store.Owner.claim`), submits
:func:`margintheory.sweep.cells.run_cell` for it, and writes each outcome to the store the moment it arrives (so a
killed sweep loses at most the cells in flight).  A cell that could not be run -- an expected error inside it, or a
task that failed on the cluster after its retries (a worker that kept dying) -- is written as a failed row with its
one-line error, and the sweep goes on.  Cells claimed by another running sweep are left to it; when nothing else is
left this sweep waits for them (or takes them over if that sweep dies), so that it returns with every cell of its
grid finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from margintheory.errors import InputError
from margintheory.execution.executors import Executor
from margintheory.sweep.cells import CELL_FUNCTIONS, CellFunction, error_row, run_cell, warm_up
from margintheory.sweep.grid import Cell
from margintheory.sweep.store import DEFAULT_LEASE, ERROR, Owner, ResultStore

#: seconds between looks at cells that another sweep is running (grows to POLL_MAX while nothing changes)
POLL = 0.5
POLL_MAX = 5.0


@dataclass
class SweepCounts:
    """Where a sweep stands: ``total`` cells; ``done`` finished (``skipped``: already in the store when it started;
    ``failed``: finished in this run with an error); ``running`` in flight here; ``elsewhere``: run by another
    sweep on the same store."""

    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    running: int = 0
    elsewhere: int = 0


@dataclass
class SweepSummary:
    """The outcome of :func:`run_sweep`: the counts, the rows of the grid's cells (in grid order), and where it
    ran."""

    counts: SweepCounts
    table: pa.Table
    store: Path
    executor: str
    seconds: float
    keys: list[str] = field(default_factory=list)


def in_flight_dropped(n: int) -> str:
    """``"1 in flight was dropped, its claim released"`` / ``"3 in flight were dropped, their claims released"``."""
    return (f"{n} in flight was dropped, its claim released" if n == 1 else
            f"{n} in flight were dropped, their claims released")


def run_sweep(cells: Iterable[Cell], store: ResultStore, executor: Executor, function: CellFunction | None = None,
              *, retry_failed: bool = False, on_progress: Callable[[SweepCounts], None] | None = None,
              lease: float = DEFAULT_LEASE, warm: bool = True) -> SweepSummary:
    """Run every unfinished cell of ``cells`` on ``executor`` into ``store`` (module docstring); ``function`` runs
    one cell (default: the library's function for the cells' command).  ``warm``: first run ``function`` once on
    every worker on the smallest problem (:func:`margintheory.sweep.cells.warm_up`); a function whose cells write
    files of their own (a recipe's run directories) passes ``False``."""
    cells = list(cells)
    commands = {c.command for c in cells}
    if len(commands) > 1:
        raise InputError(f"one sweep runs one command, got {sorted(commands)}")
    if function is None:
        command = next(iter(commands), "verify")
        if command not in CELL_FUNCTIONS:
            raise InputError(f"no library cell function for {command!r}: pass the function that runs one cell")
        function = CELL_FUNCTIONS[command]
    start = time.perf_counter()
    keys = [c.key for c in cells]
    with store.owner(lease) as owner:
        finished = store.finished()
        owner.clear_stale(finished)
        before = store.read([k for k in keys if k in finished])  # read (and checked) once, before any work
        failed = {c for c, v in zip(before["cell"].to_pylist(), before["verdict"].to_pylist(), strict=True)
                  if v == ERROR}
        retry = failed if retry_failed else set()
        pending = [c for c in cells if c.key not in finished or c.key in retry]
        counts = SweepCounts(len(cells), skipped=len(cells) - len(pending), done=len(cells) - len(pending))
        try:
            if pending and warm:
                executor.run_everywhere(warm_up, function, dict(pending[0].params))
            _Loop(store, executor, owner, function, retry, counts, on_progress).run(pending)
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: every finished cell is already in the store
            from margintheory.runtime.process import add_interrupt_note

            add_interrupt_note(exc, f"{counts.done} of {counts.total} cells are finished in {store.path} "
                                    f"({in_flight_dropped(counts.running)})")
            raise
    return SweepSummary(counts, _rows(store, keys, before, failed), store.path, executor.description,
                        time.perf_counter() - start, keys)


def _rows(store: ResultStore, keys: list[str], before: pa.Table, failed: set[str]) -> pa.Table:
    """The rows of ``keys`` in that order: those read before the run that recorded a result (a result is never
    rewritten) and, read now, the others (run by this sweep or another, or failed ones another sweep may have
    retried meanwhile)."""
    kept = before.filter(pa.array([c not in failed for c in before["cell"].to_pylist()], pa.bool_()))
    held = set(kept["cell"].to_pylist())
    table = pa.concat_tables([kept, store.read(dict.fromkeys(k for k in keys if k not in held))])
    where = {c: i for i, c in enumerate(table["cell"].to_pylist())}
    return table.take(pa.array([where[k] for k in keys if k in where], pa.int64()))


class _Loop:
    """The claim / submit / write loop of :func:`run_sweep`."""

    def __init__(self, store: ResultStore, executor: Executor, owner: Owner, function: CellFunction,
                 retry: set[str], counts: SweepCounts, on_progress: Callable[[SweepCounts], None] | None) -> None:
        self.store, self.executor, self.owner, self.function = store, executor, owner, function
        self.retry, self.counts, self.on_progress = retry, counts, on_progress
        self.running: dict[str, Cell] = {}

    def run(self, pending: list[Cell]) -> None:
        self._report()
        poll = POLL
        while pending or self.running:
            pending = self._submit(pending)
            if self.running:
                self._collect(self.executor.next_done())
                poll = POLL
            elif pending:  # every cell left is being run by another sweep: wait for it, or for it to die
                time.sleep(poll)
                poll = min(POLL_MAX, 1.5 * poll)

    def _submit(self, pending: list[Cell]) -> list[Cell]:
        """Claim and submit cells up to the executor's capacity; the cells not submitted (still pending)."""
        left: list[Cell] = []
        elsewhere = 0
        for i, cell in enumerate(pending):
            if len(self.running) >= self.executor.capacity:
                left.extend(pending[i:])
                break
            if self._finished_by_someone(cell):
                continue
            if not self.owner.claim(cell.key):
                left.append(cell)
                elsewhere += 1
                continue
            if self._finished_by_someone(cell):  # finished between the look and the claim
                self.owner.release(cell.key)
                continue
            self.executor.submit(cell.key, run_cell, self.function, cell)
            self.running[cell.key] = cell
        self.counts.running, self.counts.elsewhere = len(self.running), elsewhere
        self._report()
        return left

    def _finished_by_someone(self, cell: Cell) -> bool:
        """The cell got a result file from another sweep (a failed one that is to be retried does not count
        until another sweep has replaced it)."""
        if not self.store.has(cell.key):
            return False
        if cell.key in self.retry and self.store.failed([cell.key]):
            return False
        self.counts.done += 1
        return True

    def _collect(self, outcome) -> None:  # noqa: ANN001 - an executors.Outcome
        cell = self.running.pop(outcome.key)
        row = outcome.value if outcome.ok else error_row(cell, f"{outcome.error} (on {self.executor.description})",
                                                         None)
        self.store.write(row, replace=cell.key in self.retry)
        self.owner.release(cell.key)
        self.counts.done += 1
        self.counts.failed += row["verdict"] == "error"
        self.counts.running = len(self.running)
        self._report()

    def _report(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.counts)
