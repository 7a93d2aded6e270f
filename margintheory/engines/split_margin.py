"""One large check split across a cluster: the exhaustive pass over the ``p^k`` inputs as prefix-range tasks,
min-reduced (docs/theory.md#margins).

:func:`split_exhaustive_margin` cuts the ``p^(k-1)`` prefixes ``(a_1..a_{k-1})`` into contiguous ranges, runs
:func:`margintheory.engines.margins.prefix_range_margin` on each (the network is sent to every worker once) and
combines them
with :func:`margintheory.engines.margins.reduce_prefix_margins`: the minimum margin, hence the normalized margin and its
tolerance (:func:`margintheory.engines.margins.normalize_margin`, the single pass's formula: the float64 error bound
is a
bound per logit, the same for every range, so the minimum of the ranges carries the same bound), the largest
wrong-logit spread and the label-indexed logit sums of Lemma C.20.  Workers return O(p^2) numbers per range; no
per-point array is gathered.  The checks' "every point on the margin" count needs the global minimum first: it is 0
without a second pass when the largest margin lies within the band, else a second distributed pass counts the
points above it.

:class:`SplitMarginEngine` plugs this into the checks
(:func:`margintheory.tasks.modular_addition.checks.margin_engine`), so
that
``verify`` on a network or a construction reports the same verdicts and values as the single-process engine.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import (
    DEFAULT_MAX_MEMORY,
    MarginResult,
    PrefixRangeMargin,
    estimate_cost,
    normalize_margin,
    prefix_range_margin,
    reduce_prefix_margins,
)
from margintheory.execution.executors import Executor
from margintheory.runtime import progress
from margintheory.runtime.budget import Estimate, require

#: ranges per worker thread (more ranges balance uneven workers; each costs one task and p^2 numbers)
RANGES_PER_THREAD = 4


def prefix_ranges(prefixes: int, count: int) -> list[tuple[int, int]]:
    """``[0, prefixes)`` cut into ``min(count, prefixes)`` contiguous ranges of sizes differing by at most one."""
    count = max(1, min(int(count), prefixes))
    bounds = [prefixes * i // count for i in range(count + 1)]
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if a < b]


@dataclass
class SplitMarginResult(MarginResult):
    """A :class:`~margintheory.engines.margins.MarginResult` reduced from prefix ranges: the same scalars and logit
    sums,
    no per-point arrays (``margins``, ``wrong_spread`` and ``on_margin`` are empty); :meth:`points_above` counts on
    the workers when it must."""

    max_margin: float = math.nan
    split_wrong_spread: float = math.nan
    ranges: int = 0
    recount: Any = field(default=None, repr=False, compare=False)

    @property
    def points(self) -> int:
        return int(self.p**self.k)

    @property
    def max_wrong_spread(self) -> float:
        return self.split_wrong_spread

    @property
    def fraction_on_margin(self) -> float:
        return (self.points - self.points_above(self.h + 4 * self.logit_error_bound)) / self.points

    def points_above(self, threshold: float) -> int:
        if threshold >= self.max_margin:  # every margin lies in [h, max_margin]: nothing above, no second pass
            return 0
        return int(self.recount(threshold))


def split_exhaustive_margin(net: PolyNetwork, executor: Executor, *, max_memory: int = DEFAULT_MAX_MEMORY,
                            max_seconds: float | None = None, ranges: int | None = None) -> SplitMarginResult:
    """The exhaustive pass over ``net`` run as prefix-range tasks on ``executor`` (module docstring); ``ranges``:
    how many (default :data:`RANGES_PER_THREAD` per worker thread).  ``max_memory`` is each task's budget and
    ``max_seconds`` the limit on the estimated time divided by the executor's parallelism."""
    p, k, m = net.p, net.k, net.m
    est = estimate_cost(p, k, m, max_memory, workers=1)
    threads = executor.parallelism
    require(Estimate(f"the exhaustive check over {p}^{k} points on {threads} worker thread(s)", 0,
                     est.seconds / threads), None, max_seconds)
    cuts = prefix_ranges(p ** (k - 1), ranges or RANGES_PER_THREAD * threads)
    start = time.perf_counter()
    shared = executor.share(net)
    parts = _run_ranges(executor, shared, cuts, None, max_memory, f"exhaustive margin over {p}^{k} points")
    total = reduce_prefix_margins(parts)
    norm, err, normalized, tol = normalize_margin(net, total.h)

    def recount(threshold: float) -> int:
        again = _run_ranges(executor, shared, cuts, threshold, max_memory, f"points above the margin band ({p}^{k})")
        return int(reduce_prefix_margins(again).points_above or 0)

    empty = np.empty(0)
    return SplitMarginResult(p, k, m, norm, empty, empty, total.h, normalized, err, tol, np.empty(0, dtype=bool),
                             total.label_logit_sums, time.perf_counter() - start, 0, max_margin=total.max_margin,
                             split_wrong_spread=total.max_wrong_spread, ranges=len(cuts), recount=recount)


def _run_ranges(executor: Executor, shared: Any, cuts: list[tuple[int, int]], threshold: float | None,
                max_memory: int, what: str) -> list[PrefixRangeMargin]:
    report = progress.current()
    calls = [((shared, a, b), {"threshold": threshold, "max_memory": max_memory}) for a, b in cuts]
    return executor.run_all(prefix_range_margin, calls,
                            None if report is None else lambda done, total: report(what, done, total))


class SplitMarginEngine:
    """The checks' exhaustive pass (:class:`margintheory.tasks.modular_addition.checks.MarginEngine`) split over
    ``executor``."""

    holds_points = False

    def __init__(self, executor: Executor, ranges: int | None = None) -> None:
        self.executor = executor
        self.ranges = ranges

    @property
    def parallelism(self) -> int:
        return self.executor.parallelism

    def __call__(self, net: PolyNetwork, max_memory: int, *, max_seconds: float | None = None) -> SplitMarginResult:
        return split_exhaustive_margin(net, self.executor, max_memory=max_memory, max_seconds=max_seconds,
                                       ranges=self.ranges)
