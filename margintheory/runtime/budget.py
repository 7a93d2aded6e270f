"""Budgets: the memory and time a job may use, and the up-front refusal of jobs whose estimate exceeds them.

Every entry point that allocates in proportion to ``(p, k, m)`` first builds an :class:`Estimate` from those
numbers alone (nothing is allocated to make it) and passes it to :func:`require`, which raises
:class:`~margintheory.errors.RefusedError` naming the estimate and the budget.  The estimates are conservative
(calibrated against ``tracemalloc`` peaks of the real code paths); the budget bounds the memory a job allocates on
top of the interpreter and the imported libraries (about 250 MB, see docs/failures.md).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from margintheory.errors import RefusedError

DEFAULT_MAX_MEMORY = 2 * 2**30
DEFAULT_MAX_SECONDS = 900.0
#: run times beyond this are refused as impractical rather than with advice to raise the time limit
CENTURY = 100 * 365.25 * 86400
#: conservative throughput of this code on one core (float64 flops per second), used only for time estimates
FLOPS_PER_SECOND = 2.0e10


def format_bytes(n: float, digits: int = 1) -> str:
    """``1536`` -> ``'1.5 KiB'``; astronomically large sizes in powers of ten (``'1.2e+21 bytes'``), sizes beyond
    floating point as powers of two (a file may declare a 2000-bit size)."""
    if isinstance(n, int) and n.bit_length() > 1000:
        return f"~2^{n.bit_length() - 1} bytes"
    if not math.isfinite(n) or n >= 2**70:
        return f"{float(n):.3g} bytes"
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            return f"{value:.0f} bytes" if unit == "bytes" else f"{value:.{digits}f} {unit}"
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


#: no machine holds more memory than this (1 PiB); also the limit used when this machine's memory cannot be read
ANY_MACHINE_MEMORY = float(2**50)


def _read_number(path: str, prefix: str = "", scale: int = 1) -> float | None:
    """The number on the line of ``path`` starting with ``prefix`` (``None`` if absent or unreadable)."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(prefix):
                    return float(line[len(prefix):].split()[0]) * scale
    except (OSError, ValueError, IndexError):
        return None
    return None


def machine_memory() -> float:
    """Bytes of memory this process could ever use: physical memory plus swap, or the cgroup's limit if smaller
    (a container); :data:`ANY_MACHINE_MEMORY` when none of these can be read."""
    try:
        ram = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return ANY_MACHINE_MEMORY
    total = ram + (_read_number("/proc/meminfo", "SwapTotal:", 1024) or 0.0)
    cgroup = _read_number("/sys/fs/cgroup/memory.max") or _read_number(
        "/sys/fs/cgroup/memory/memory.limit_in_bytes")
    if cgroup is not None and cgroup > 0:
        total = min(total, cgroup)
    return min(total, ANY_MACHINE_MEMORY)


def _address_space_limit() -> float | None:
    """The soft ``RLIMIT_AS`` (``ulimit -v``) in bytes, ``None`` when unlimited or unknown."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, ValueError, OSError):  # pragma: no cover - not on a POSIX system
        return None
    return None if soft == resource.RLIM_INFINITY else float(soft)


def address_space_left() -> float | None:
    """Bytes this process can still map under its address-space limit (``ulimit -v``: the limit minus the current
    virtual size), ``None`` when there is no such limit.  Past it, ``malloc`` fails: Python raises MemoryError, but a
    compiled library written in Rust (Clarabel) aborts the process, so the budgets check this too."""
    limit = _address_space_limit()
    if limit is None:
        return None
    size = _read_number("/proc/self/status", "VmSize:", 1024)
    return None if size is None else limit - size


def memory_refusal(subject: str, need: float, max_memory: float, *, at_least: bool = False) -> RefusedError:
    """The error for ``subject`` needing ``need`` bytes, more than ``max_memory``.

    When no budget could allow it on this machine (``need`` exceeds :func:`machine_memory`) the message says so and
    names no parameter; otherwise it names the budget (``parameter="max_memory"``) that would allow it.
    """
    digits = 1
    while digits < 4 and format_bytes(need, digits) == format_bytes(max_memory, digits):
        digits += 1  # "needs 2.0 GiB, more than 2.0 GiB" reads as a contradiction: show the difference
    size = f"{'at least' if at_least else 'an estimated'} {format_bytes(need, digits)} of memory"
    machine = machine_memory()
    if need > machine:
        where = ("more than any computer has" if machine >= ANY_MACHINE_MEMORY else
                 f"more than this machine has ({format_bytes(machine)} of memory and swap in all)")
        return RefusedError(f"{subject} needs {size}, {where}", parameter=None, estimate=need,
                            limit=float(max_memory))
    left = address_space_left()
    if left is not None and need > left:  # a larger budget cannot help: the process may not map that much
        return address_space_refusal(subject, need, left)
    return RefusedError(f"{subject} needs {size}, more than the memory budget max_memory = "
                        f"{format_bytes(max_memory, digits)}", parameter="max_memory", estimate=need,
                        limit=float(max_memory))


def address_space_refusal(subject: str, need: float, left: float) -> RefusedError:
    """The error for ``subject`` needing ``need`` bytes where the address-space limit (``ulimit -v``,
    ``RLIMIT_AS``) leaves only ``left``: no memory budget can lift it (``parameter=None``); the limit must."""
    return RefusedError(f"{subject} needs an estimated {format_bytes(need)} of memory, more than this process may "
                        f"still map ({format_bytes(max(left, 0.0))}: its address-space limit, ulimit -v, is "
                        f"{format_bytes(_address_space_limit() or 0.0)}; a larger memory budget cannot help, raise "
                        "the limit): a native library would abort when an allocation fails, so the job is refused "
                        "up front", parameter=None, estimate=need, limit=max(left, 0.0))


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
    ``"max_memory"`` or ``time_parameter`` (the name of the caller's time budget), or ``None`` when no budget
    would help: sizes beyond this machine's memory (:func:`memory_refusal`), or run times beyond a century.
    """
    need = _to_float(est.bytes)
    if max_memory is not None and need == math.inf:
        raise RefusedError(f"{est.what} is beyond any memory budget (more than 2^100 numbers to hold)",
                           parameter=None, estimate=need, limit=float(max_memory))  # no budget lifts it
    if max_memory is not None and need > max_memory:
        raise memory_refusal(est.what, need, max_memory)
    left = address_space_left()
    if max_memory is not None and left is not None and need > left:
        raise address_space_refusal(est.what, need, left)
    if max_seconds is not None and est.seconds is not None and est.seconds > max(max_seconds, CENTURY):
        raise RefusedError(f"{est.what} would take an estimated {format_seconds(est.seconds)}: beyond any practical "
                           "time limit", parameter=None, estimate=est.seconds, limit=float(max_seconds))
    if max_seconds is not None and est.seconds is not None and est.seconds > max_seconds:
        raise RefusedError(f"{est.what} would take an estimated {format_seconds(est.seconds)}, more than the time "
                           f"limit {time_parameter} = {format_seconds(max_seconds)}", parameter=time_parameter,
                           estimate=est.seconds, limit=float(max_seconds))
    return est

