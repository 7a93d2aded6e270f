"""Worker threads that stop together: the exhaustive engines (numpy and JAX) split a pass over threads this way.

Each worker runs ``work(i)`` and checks a shared ``threading.Event`` between its units of work (chunks, kernel
calls).  The first failure of any worker, or a Ctrl-C in the calling thread (``KeyboardInterrupt`` wherever it lands
after the pool exists, between two submissions included), sets the event: the other workers return after the unit
in hand, so the pool's shutdown waits for one unit, not for their whole share, and the error is raised at once
rather than after the workers submitted before the failing one have finished.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")


def run_workers(work: Callable[[int], T], workers: int, cancelled: threading.Event) -> list[T]:
    """``[work(0), ..., work(workers - 1)]``, each in its own thread (in the calling one when ``workers`` is 1);
    ``cancelled`` is set when any of them fails or the caller is interrupted, and the failure is re-raised."""
    if workers <= 1:
        return [work(0)]
    with ThreadPoolExecutor(workers) as pool:
        try:
            jobs = [pool.submit(work, i) for i in range(workers)]
            for job in wait(jobs, return_when=FIRST_EXCEPTION).done:  # a failed worker's error at once
                job.result()
            return [job.result() for job in jobs]
        except BaseException:
            cancelled.set()
            raise
