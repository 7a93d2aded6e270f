"""Progress of long computations, reported to a callback the caller supplies (the command line draws it on stderr).

Library code calls :func:`report` at natural steps (a chunk of the exhaustive pass, a round of column generation,
a neuron of the exact check); without a callback installed by :func:`reporting` that is a no-op costing one
context-variable lookup.  The callback receives ``(what, done, total)``; it must be thread-safe (the exhaustive
engine reports from its worker threads) and cheap.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

ProgressCallback = Callable[[str, float, "float | None"], None]

_CURRENT: contextvars.ContextVar[ProgressCallback | None] = contextvars.ContextVar("margintheory_progress",
                                                                                  default=None)


@contextlib.contextmanager
def reporting(callback: ProgressCallback | None) -> Iterator[None]:
    """Send the :func:`report` calls made inside the block (in this context) to ``callback``."""
    token = _CURRENT.set(callback)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> ProgressCallback | None:
    """The installed callback (read it in the calling thread and hand it to worker threads)."""
    return _CURRENT.get()


def report(what: str, done: float, total: float | None = None) -> None:
    """Report that ``done`` of ``total`` units of ``what`` are finished (no-op without a callback)."""
    callback = _CURRENT.get()
    if callback is not None:
        callback(what, done, total)
