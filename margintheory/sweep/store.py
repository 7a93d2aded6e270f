"""The results store of a sweep: a directory that is a Parquet dataset, one file per finished cell.

Layout of ``DIR``::

    DIR/<cell key>.parquet       one row (the columns of :data:`SCHEMA`), written once, atomically
    DIR/_claims/<cell key>.json  the sweep that is running the cell now (owner token, host, pid)
    DIR/_owners/<token>.json     one per running sweep; its modification time is its heartbeat

``pandas.read_parquet(DIR)``, ``pyarrow.dataset.dataset(DIR)`` and DuckDB's ``read_parquet('DIR/*.parquet')`` read
the results: names starting with ``_`` or ``.`` (claims, owners, temporary files) are not part of the dataset.
Every file has the same schema (:data:`SCHEMA`: fixed column names and types, empty values as nulls).  A ``.parquet``
file that is not one row of that schema for its cell (corrupt, truncated, foreign) is refused with its name
(:class:`~margintheory.errors.InputError`) wherever it is read; moved out of the store, its cell is run again.

Exactly once, whatever is killed when:

* a result file is written to a temporary sibling, fsynced, then hard-linked to its final name, which fails if the
  name exists (:func:`margintheory.runtime.atomic.atomic_create_bytes`): a cell's file is complete or absent, and of two
  writers of one cell the first wins; a rerun lists the finished cells and never rewrites them (a failed cell is
  replaced, atomically, only on request);
* before running a cell a sweep claims it by creating its claim file (same first-wins creation).  A claim is
  *live* while its owner runs: on the same host its process (pid and start time) still exists, on another host its
  heartbeat is younger than the lease.  A claim whose owner died (a killed client) is taken over, so a resumed
  sweep runs the cells the dead one left; a live claim is left alone, so two sweeps on one store share the cells.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from margintheory.errors import InputError
from margintheory.runtime.atomic import atomic_create_bytes, atomic_write_bytes, check_output_dir

#: the columns of every result file, in order
SCHEMA = pa.schema([
    ("cell", pa.string()), ("command", pa.string()), ("task", pa.string()),
    ("p", pa.int64()), ("k", pa.int64()), ("family", pa.string()), ("method", pa.string()),
    ("seed", pa.int64()), ("width", pa.int64()), ("lr", pa.float64()), ("lam", pa.float64()), ("steps", pa.int64()),
    ("verdict", pa.string()), ("exit_code", pa.int64()), ("gamma_star", pa.float64()),
    ("normalized_margin", pa.float64()), ("ratio_to_gamma_star", pa.float64()), ("relative_error", pa.float64()),
    ("exactness", pa.string()), ("seconds", pa.float64()), ("version", pa.string()), ("error", pa.string()),
    ("parameters", pa.string()), ("result", pa.string()), ("host", pa.string()), ("worker", pa.string()),
    ("finished", pa.timestamp("us", tz="UTC")),
])
COLUMNS = tuple(SCHEMA.names)
#: verdict of a cell that could not be run (its one-line reason is in ``error``)
ERROR = "error"
#: a claim from another host is taken over when its owner's heartbeat is older than this (seconds)
DEFAULT_LEASE = 120.0


class ResultStore:
    """The store in ``path`` (created if needed; module docstring)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = check_output_dir(path)
        self.path.mkdir(parents=True, exist_ok=True)
        for sub in ("_claims", "_owners"):
            (self.path / sub).mkdir(exist_ok=True)

    def file(self, key: str) -> Path:
        return self.path / f"{key}.parquet"

    def finished(self) -> set[str]:
        """Keys of every cell with a result file."""
        with os.scandir(self.path) as entries:
            return {e.name[:-8] for e in entries if e.name.endswith(".parquet") and not e.name.startswith((".", "_"))}

    def has(self, key: str) -> bool:
        return self.file(key).exists()

    def failed(self, keys: Iterable[str]) -> set[str]:
        """Those of ``keys`` whose result file records an error."""
        table = self._read([k for k in keys if self.has(k)], ["cell", "verdict"])
        return {c for c, v in zip(table["cell"].to_pylist(), table["verdict"].to_pylist(), strict=True) if v == ERROR}

    def _read(self, keys: list[str], columns: list[str] | None = None) -> pa.Table:
        """The rows of ``keys`` in that order (one small file each; pyarrow.parquet, which loads no pandas)."""
        schema = SCHEMA if columns is None else pa.schema([SCHEMA.field(c) for c in columns])
        if not keys:
            return schema.empty_table()
        return pa.concat_tables([self._read_file(k, schema) for k in keys])

    def _read_file(self, key: str, schema: pa.Schema) -> pa.Table:
        """The row of ``key``; a file that is not one row of this store's schema for that cell (corrupt, truncated,
        foreign, or renamed) is an :class:`~margintheory.errors.InputError` naming it, not a pyarrow traceback."""
        path = self.file(key)
        try:
            table = pq.ParquetFile(path).read(columns=schema.names).cast(schema)
        except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise InputError(f"{path}: not a result file of a sweep store ({_shorten(reason)}); {self._advice}"
                             ) from None
        cells = table["cell"].to_pylist() if "cell" in schema.names else [key]
        if cells != [key]:
            what = f"the row of cell {cells[0]}" if len(cells) == 1 else f"{len(cells)} rows"
            raise InputError(f"{path}: not a result file of a sweep store (it holds {what}, not the one row of cell "
                             f"{key}); {self._advice}")
        return table

    @property
    def _advice(self) -> str:
        return f"move it out of {self.path} (a sweep then runs its cell again)"

    def read(self, keys: Iterable[str] | None = None) -> pa.Table:
        """The rows of ``keys`` (default: every finished cell), in the order of ``keys``."""
        return self._read(sorted(self.finished()) if keys is None else [k for k in keys if self.has(k)])

    def write(self, row: dict[str, Any], *, replace: bool = False) -> bool:
        """Write the cell's row; returns ``False`` (and writes nothing) if the cell already has a result file,
        unless ``replace`` (a failed cell rerun on request: the new row replaces it atomically)."""
        missing = set(COLUMNS) ^ set(row)
        if missing:
            raise InputError(f"a result row must have exactly the store's columns; differs in {sorted(missing)}")
        table = pa.Table.from_pylist([row], schema=SCHEMA)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
        if replace:
            atomic_write_bytes(self.file(row["cell"]), data)
            return True
        return atomic_create_bytes(self.file(row["cell"]), data)

    @contextlib.contextmanager
    def owner(self, lease: float = DEFAULT_LEASE) -> Iterator[Owner]:
        """This process as the owner of the claims it makes, with a heartbeat, until the block ends (then its
        remaining claims are released)."""
        owner = Owner(self.path, lease)
        owner.start()
        try:
            yield owner
        finally:
            owner.stop()


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (``/proc``; ``None`` where unknown): tells a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return start is None or _start_time(pid) in (None, start)


class Owner:
    """The claims of one running sweep (see :meth:`ResultStore.owner`)."""

    def __init__(self, path: Path, lease: float) -> None:
        self.path, self.lease = path, lease
        self.token = uuid.uuid4().hex
        self.identity = {"token": self.token, "host": socket.gethostname(), "pid": os.getpid(),
                         "start": _start_time(os.getpid())}
        self.held: set[str] = set()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    @property
    def _owner_file(self) -> Path:
        return self.path / "_owners" / f"{self.token}.json"

    def _claim_file(self, key: str) -> Path:
        return self.path / "_claims" / f"{key}.json"

    def start(self) -> None:
        atomic_create_bytes(self._owner_file, json.dumps(self.identity).encode())
        self._remove_abandoned_temporaries()
        self._beat = threading.Thread(target=self._heartbeat, name="margintheory-sweep-heartbeat", daemon=True)
        self._beat.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.lease / 4):
            try:
                os.utime(self._owner_file)
            except FileNotFoundError:  # removed by a sweep that took this one for dead (it was suspended)
                with contextlib.suppress(OSError):
                    atomic_create_bytes(self._owner_file, json.dumps(self.identity).encode())
            except OSError:
                pass

    def _remove_abandoned_temporaries(self) -> None:
        """Temporary files older than the lease were left by a writer that was killed (a write takes
        milliseconds); readers ignore them, this removes them."""
        limit = time.time() - self.lease
        for folder in (self.path, self.path / "_claims"):
            for tmp in folder.glob(".*.tmp"):
                with contextlib.suppress(OSError):
                    if tmp.stat().st_mtime < limit:
                        tmp.unlink()

    def stop(self) -> None:
        self._stop.set()
        for key in list(self.held):
            self.release(key)
        with contextlib.suppress(OSError):
            self._owner_file.unlink()

    def claim(self, key: str) -> bool:
        """Claim the cell ``key``: ``True`` if this owner holds it now (created, or taken over from a dead owner),
        ``False`` if a live owner holds it."""
        data = json.dumps({**self.identity, "claimed": time.time()}).encode()
        path = self._claim_file(key)
        for _ in range(3):
            if os.path.lexists(path) and not self._take_over(key):
                return False
            if atomic_create_bytes(path, data):
                self.held.add(key)
                return True
        return False

    def clear_stale(self, finished: set[str]) -> None:
        """Remove the claims of dead owners on cells that have a result (an owner killed between writing a result
        and releasing its claim leaves one)."""
        for path in (self.path / "_claims").glob("*.json"):
            if path.stem in finished:
                self._take_over(path.stem)

    def release(self, key: str) -> None:
        """Give up the claim of ``key`` (after writing its result, or when the sweep ends)."""
        self.held.discard(key)
        path = self._claim_file(key)
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text()).get("token") == self.token:
                path.unlink()

    def live(self, claim: dict[str, Any]) -> bool:
        """Whether the owner of ``claim`` is still running (module docstring)."""
        if claim.get("token") == self.token:
            return True
        if claim.get("host") == self.identity["host"]:
            return _alive(int(claim.get("pid", -1)), claim.get("start"))
        try:
            beat = (self.path / "_owners" / f"{claim.get('token')}.json").stat().st_mtime
        except OSError:
            return False
        return time.time() - beat < self.lease

    def _take_over(self, key: str) -> bool:
        """Remove the claim of ``key`` if its owner is dead; ``True`` if it was removed (then claim again)."""
        path = self._claim_file(key)
        try:
            claim = json.loads(path.read_text())
        except FileNotFoundError:
            return True  # released meanwhile
        except (OSError, ValueError):
            claim = {}
        if self.live(claim):
            return False
        moved = path.with_name(f".{key}.{self.token}.stale")
        try:
            os.rename(path, moved)  # of several sweeps taking it over, one moves it
        except FileNotFoundError:
            return True
        try:
            if json.loads(moved.read_text()).get("token") != claim.get("token"):  # a fresh claim was moved: put back
                with contextlib.suppress(FileExistsError):
                    os.link(moved, path)
                return False
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                moved.unlink()
        with contextlib.suppress(OSError):
            (self.path / "_owners" / f"{claim.get('token')}.json").unlink()  # its owner is dead
        return True
