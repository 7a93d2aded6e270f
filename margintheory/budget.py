"""Budgets: the memory and time a job may use, and the up-front refusal of jobs whose estimate exceeds them.

Every entry point that allocates in proportion to ``(p, k, m)`` first builds an :class:`Estimate` from those
numbers alone (nothing is allocated to make it) and passes it to :func:`require`, which raises
:class:`~margintheory.errors.RefusedError` naming the estimate and the budget.  The estimates are conservative
(calibrated against ``tracemalloc`` peaks of the real code paths); the budget bounds the memory a job allocates on
top of the interpreter and the imported libraries (about 250 MB, see the README's "Failure behaviour").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from margintheory.errors import RefusedError

DEFAULT_MAX_MEMORY = 2 * 2**30
DEFAULT_MAX_SECONDS = 900.0
#: conservative throughput of this code on one core (float64 flops per second), used only for time estimates
FLOPS_PER_SECOND = 2.0e10


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``; astronomically large sizes in powers of ten (``'1.2e+21 bytes'``)."""
    if not math.isfinite(n) or n >= 2**70:
        return f"{float(n):.3g} bytes"
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            return f"{value:.0f} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def format_seconds(s: float) -> str:
    """``42.0`` -> ``'42 s'``, ``7200`` -> ``'2.0 h'``, beyond a year in years (powers of ten when huge)."""
    if not math.isfinite(s):
        return "forever"
    if s < 120:
        return f"{s:.0f} s" if s >= 1 else f"{s:.2g} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    if s < 2 * 365 * 86400:
        return f"{s / 86400:.0f} days"
    return f"{s / (365 * 86400):.3g} years"


def _to_float(x: int | float) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf


def grid_points(p: int, k: int) -> int | float:
    """``p^k`` as an int, or ``inf`` when it exceeds ``2^128`` (no job of that size can run; computing the exact
    power of a huge ``k`` would itself take unbounded time and memory)."""
    if p <= 1:
        return 1
    return p**k if k * math.log2(p) <= 128 else math.inf


@dataclass(frozen=True)
class Estimate:
    """What a job will need: ``bytes`` of memory at its peak and ``seconds`` of run time (``None``: negligible or
    not estimated).  ``what`` names the job in a sentence ("the exhaustive check over 9006001 points")."""

    what: str
    bytes: float
    seconds: float | None = None

    def plus(self, other: Estimate, what: str | None = None) -> Estimate:
        """Both jobs, one after the other in time, their memory held together (a safe upper bound)."""
        secs = None if self.seconds is None and other.seconds is None else (self.seconds or 0.0) + (
            other.seconds or 0.0)
        return Estimate(what or self.what, self.bytes + other.bytes, secs)


def require(est: Estimate, max_memory: float | None, max_seconds: float | None, *,
            time_parameter: str = "max_seconds") -> Estimate:
    """Raise :class:`RefusedError` if ``est`` exceeds ``max_memory`` bytes or ``max_seconds`` (``None``: no limit).

    Memory is checked first: a job that cannot fit is refused whatever its run time.  The error's ``parameter`` is
    ``"max_memory"`` or ``time_parameter`` (the name of the caller's time budget).
    """
    need = _to_float(est.bytes)
    if max_memory is not None and need == math.inf:
        raise RefusedError(f"{est.what} is beyond any memory budget (more than 2^100 numbers to hold)",
                           parameter=None, estimate=need, limit=float(max_memory))  # no budget lifts it
    if max_memory is not None and need > max_memory:
        raise RefusedError(f"{est.what} needs an estimated {format_bytes(need)} of memory, more than the memory "
                           f"budget max_memory = {format_bytes(max_memory)}", parameter="max_memory", estimate=need,
                           limit=float(max_memory))
    if max_seconds is not None and est.seconds is not None and est.seconds > max_seconds:
        raise RefusedError(f"{est.what} would take an estimated {format_seconds(est.seconds)}, more than the time "
                           f"limit {time_parameter} = {format_seconds(max_seconds)}", parameter=time_parameter,
                           estimate=est.seconds, limit=float(max_seconds))
    return est


def validate_budget(max_memory: float | None, max_seconds: float | None) -> None:
    """Budgets must be positive numbers (``None`` = unlimited); anything else is an input error."""
    from margintheory.errors import InputError

    if max_memory is not None and not (isinstance(max_memory, int | float) and max_memory > 0):
        raise InputError(f"the memory budget must be a positive number of bytes, got {max_memory!r}")
    if max_seconds is not None and not (isinstance(max_seconds, int | float) and max_seconds > 0
                                        and math.isfinite(max_seconds)):
        raise InputError(f"the time limit must be a positive number of seconds, got {max_seconds!r}")
