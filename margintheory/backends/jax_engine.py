"""JAX backend of the exhaustive engine: one jit-compiled kernel, streamed over the inputs' prefixes
(docs/theory.md#margins; :mod:`margintheory.engines.margins` for what is measured and its error bound).

A *sub-chunk* is ``nb`` consecutive prefixes ``b = (a_1..a_{k-1})`` (``a_1`` most significant, as
:func:`margintheory.engines.margins.input_grid`) with all ``p`` last residues; one kernel call runs ``nsub``
consecutive sub-chunks in a ``jax.lax.scan`` (one dispatch per call, the sub-chunk's buffers reused from one step to
the next).  For each sub-chunk the kernel, compiled once per shape:

1. gathers and adds the prefix embeddings, ``S[b] = U[:, 0, a_1(b)] + ... + U[:, k-2, a_{k-1}(b)]`` (the digits are
   computed on the device from the prefix number: no input grid is transferred);
2. forms the activations ``(S[b] + U[:, k-1, a])^k`` and multiplies them by ``W``: the broadcast add and the power
   are one XLA loop fusion writing the sub-chunk's ``(nb p, m)`` GEMM operand once, which the GEMM reads once
   (nothing of size ``p^k x m`` ever exists).  On a CPU the sub-chunk is sized so that this operand stays in the
   last-level cache (:data:`CPU_CHUNK_BYTES`); fusing the power into the GEMM's tiles would take a hand-written
   kernel;
3. per row: the correct logit (a gather) minus the best wrong one, the spread of the wrong logits, and the
   label-indexed logit sums ``M[y, c]`` (on a CPU a segment sum, padding rows going to a discarded segment; on a GPU
   a one-hot GEMM, whose order of summation does not change from run to run as an atomic scatter-add's does);
4. the call returns its sub-chunks' margins; the host copies call ``i`` while the device computes call ``i + 1``.

On a CPU, one thread per core dispatches calls (every ``workers``-th), each with its own label sums, as the numpy
engine's workers do (:func:`margins_over_prefixes`).

Everything is float64 (``jax.enable_x64`` as a thread-local context, :mod:`margintheory.backends.select`).  The
float64 error of every logit is bounded by the same a-priori bound as numpy's: the bound
``(m + 2k + 2) eps sum_i (sum_j max|U|)^k max|W|`` holds for any summation order and any repeated-squaring
power (at most ``k - 1`` roundings) and for fused multiply-adds, which round less, not more.  ``M`` is a float sum
over ``p^(k-1)`` rows per entry, in an order that differs from numpy's: it feeds the float-labelled Lemma C.20
check, which compares with a tolerance that covers any order.

Several devices of the chosen kind: the prefix axis of every sub-chunk is sharded over a one-axis
``jax.sharding.Mesh`` of all of them (the weights replicated, ``M`` all-reduced by XLA).
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.backends.select import Backend, devices, float64, import_jax
from margintheory.runtime.workers import run_workers


def last_level_cache_bytes(sysfs: str = "/sys/devices/system/cpu/cpu0/cache") -> int | None:
    """The size of CPU 0's highest-level unified cache from Linux's sysfs (``index*/level``, ``type``, ``size``
    such as ``32768K``), or ``None`` where it cannot be read."""
    from pathlib import Path

    best: tuple[int, int] | None = None
    try:
        for entry in Path(sysfs).glob("index*"):
            if (entry / "type").read_text().strip() not in ("Unified", "Data"):
                continue
            level = int((entry / "level").read_text())
            text = (entry / "size").read_text().strip().upper()
            scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
            size = int(text.rstrip("KMG")) * scale
            if best is None or level > best[0]:
                best = (level, size)
    except (OSError, ValueError):
        return None
    return None if best is None else best[1]


def cpu_chunk_bytes(cache: int | None, workers: int = 1) -> int:
    """Activation bytes of one sub-chunk on a CPU: a quarter of the last-level cache shared by the ``workers``
    sub-chunks in flight, within 1 to 8 MiB (2 MiB in all when the cache size is unknown), so the GEMM operands stay
    in that cache.  Measured with ``benchmarks/bench_backends.py`` at (47,3), (17,4), (11,5), one worker: on a
    2-core AMD EPYC share with 8 MiB of L3, 1 to 4 MiB were within a few per cent of each other, 0.5 MiB up to 1.8x
    slower (the sub-chunk's ops are too small to share out) and 12 MiB 1.0-1.2x; on one with 32 MiB of L3, 8 MiB
    was fastest (2 MiB 1.2-1.3x slower, 16 MiB 1.1-1.2x, 32 MiB 1.5-4x).  Two workers there: 2 or 4 MiB each
    (within 5 % of each other), 8 MiB each 5-15 % slower."""
    workers = max(1, int(workers))
    if cache is None:
        return max(2**20, 2 * 2**20 // workers)
    return int(min(8 * 2**20, max(2**20, cache // (4 * workers))))


LAST_LEVEL_CACHE = last_level_cache_bytes()
CPU_CHUNK_BYTES = cpu_chunk_bytes(LAST_LEVEL_CACHE)
#: activation bytes one kernel call covers on a CPU (its sub-chunks, run by ``lax.scan``): few dispatches, and a
#: call's outputs (``16 p`` bytes per prefix) stay small
CPU_CALL_BYTES = 48 * 2**20
#: at most this fraction of a GPU's memory (``memory_stats()['bytes_limit']``) holds one chunk's buffers
GPU_MEMORY_FRACTION = 0.125
GPU_CHUNK_BYTES = 2**30
#: host memory a JAX pass holds beyond its arrays: importing jax, its runtime and compiling the kernel (measured by
#: ``benchmarks/bench_estimates.py`` from a process that had not imported jax: 205-228 MiB of resident-set growth,
#: arrays included, at (47,3), (97,3), (23,4) with jax 0.10.2)
RUNTIME_BYTES = 200 * 2**20


@dataclass
class PrefixStatistics:
    """What the kernel calls measured: per-row margins and wrong-logit spreads, label sums, the sub-chunk size
    (prefixes), sub-chunks per call, the number of devices the sub-chunks were sharded over and of dispatching
    threads."""

    margins: np.ndarray
    spread: np.ndarray
    label_sums: np.ndarray
    chunk_prefixes: int
    sub_chunks: int = 1
    devices: int = 1
    workers: int = 1


def bytes_per_prefix(p: int, m: int) -> int:
    """Device bytes one prefix of a sub-chunk needs (activations and their sum before the power, logits, masks)."""
    return 2 * 8 * p * m + 6 * 8 * p * p


def output_bytes_per_prefix(p: int) -> int:
    """Bytes one prefix of a call returns and the host keeps while the next call runs (margins and spreads of the
    call in flight and of the one being copied)."""
    return 2 * 2 * 8 * p


def call_bytes(p: int, m: int, nb: int, nsub: int, workers: int = 1) -> int:
    """Device bytes of the calls in flight: each of the ``workers``' one sub-chunk's buffers (the scan reuses them)
    and its call's outputs."""
    return workers * (nb * bytes_per_prefix(p, m) + nb * nsub * output_bytes_per_prefix(p))


def chunk_prefixes(backend: Backend, p: int, k: int, m: int, max_bytes: int | float, workers: int = 1) -> int:
    """Prefixes per sub-chunk: the device's share (a cache-sized sub-chunk on a CPU, one per worker, a fraction of a
    GPU's memory) and at most ``max_bytes`` for all workers, balanced so the sub-chunks are of equal size, a multiple
    of the number of devices."""
    devs = devices(backend)
    per = bytes_per_prefix(p, m)
    if backend.device == "gpu":  # each GPU holds its 1/len(devs) of the chunk
        stats = devs[0].memory_stats() or {}
        per_gpu = min(GPU_CHUNK_BYTES, GPU_MEMORY_FRACTION * stats.get("bytes_limit", 8 * GPU_CHUNK_BYTES))
        target = per_gpu * len(devs)
    else:
        target = cpu_chunk_bytes(LAST_LEVEL_CACHE, workers) * per / (8 * p * m)
    n_prefix = p ** (k - 1)
    nb = max(1, min(n_prefix, int(min(target, max_bytes / max(1, workers)) // per)))
    n_chunks = math.ceil(n_prefix / nb)
    nb = math.ceil(n_prefix / n_chunks)
    d = len(devs)
    return d * math.ceil(nb / d)


def sub_chunks_per_call(backend: Backend, p: int, k: int, m: int, nb: int, max_bytes: int | float,
                        workers: int = 1) -> int:
    """Sub-chunks of ``nb`` prefixes per kernel call: a GPU runs one (its sub-chunk is already large); a CPU as many
    as :data:`CPU_CALL_BYTES` of activations, within ``max_bytes`` (for the ``workers``' calls in flight together)
    and the prefixes there are, balanced so the calls are of equal size."""
    n_sub = math.ceil(p ** (k - 1) / nb)
    if backend.device == "gpu":
        return 1
    fit = (max_bytes / max(1, workers) - nb * bytes_per_prefix(p, m)) // (nb * output_bytes_per_prefix(p))
    nsub = int(max(1, min(n_sub, CPU_CALL_BYTES // (8 * p * m * nb), fit)))
    return math.ceil(n_sub / math.ceil(n_sub / nsub))


@functools.lru_cache(maxsize=32)
def _compiled_chunk(k: int, p: int, nb: int, nsub: int, n_prefix: int, has_labels: bool,
                    mesh_devices: tuple | None, one_hot_sums: bool = False) -> Any:
    """The jit-compiled kernel for one shape (cached: a pass compiles once, later passes of that shape never).

    ``one_hot_sums``: the label sums as a one-hot GEMM (GPUs) instead of a segment sum (CPUs: 6x cheaper there)."""
    jax = import_jax()
    import jax.numpy as jnp

    classes = jnp.arange(p)

    def sub_chunk(Ut, W, b0, labels):
        b = b0 + jnp.arange(nb, dtype=jnp.int64)
        valid = b < n_prefix
        b = jnp.where(valid, b, 0)
        if mesh_devices is not None:
            b = jax.lax.with_sharding_constraint(b, _row_sharding(mesh_devices))
        S = jnp.zeros((nb, Ut.shape[2]), dtype=Ut.dtype)
        digit_sum = jnp.zeros(nb, dtype=jnp.int64)
        for j in range(k - 1):
            digit = (b // p ** (k - 2 - j)) % p
            S = S + Ut[j][digit]
            digit_sum = digit_sum + digit
        A = jax.lax.integer_pow(S[:, None, :] + Ut[k - 1][None, :, :], k).reshape(nb * p, -1)
        L = A @ W
        if has_labels:
            y = jax.lax.dynamic_slice(labels, (b0 * p,), (nb * p,))
        else:
            y = ((digit_sum[:, None] + classes[None, :]) % p).reshape(-1)
        hit = y[:, None] == classes[None, :]
        correct = jnp.take_along_axis(L, y[:, None], axis=1)[:, 0]
        wrong_max = jnp.max(jnp.where(hit, -jnp.inf, L), axis=1)
        wrong_min = jnp.min(jnp.where(hit, jnp.inf, L), axis=1)
        if one_hot_sums:  # a GEMM: deterministic on a GPU, where a scatter-add's order is not
            sums = (hit & jnp.repeat(valid, p)[:, None]).astype(L.dtype).T @ L
        else:
            segment = jnp.where(jnp.repeat(valid, p), y, p)  # padding rows: segment p, discarded
            sums = jax.ops.segment_sum(L, segment, num_segments=p + 1)[:p]
        return correct - wrong_max, wrong_max - wrong_min, sums

    def kernel(Ut, W, b0, labels, M):
        def step(M, i):
            g, s, sums = sub_chunk(Ut, W, b0 + i * nb, labels)
            return M + sums, (g, s)

        M, (g, s) = jax.lax.scan(step, M, jnp.arange(nsub, dtype=jnp.int64))
        return g, s, M

    if mesh_devices is None:
        return jax.jit(kernel)
    rows, rep = _row_sharding(mesh_devices, 2), _replicated(mesh_devices)
    return jax.jit(kernel, in_shardings=(rep, rep, rep, rep, rep), out_shardings=(rows, rows, rep))


def _mesh(mesh_devices: tuple) -> Any:
    from jax.sharding import Mesh

    return Mesh(np.array(mesh_devices), ("prefixes",))


def _row_sharding(mesh_devices: tuple, ndim: int = 1) -> Any:
    """The prefix (row) axis, the last of ``ndim``, split over the devices."""
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(_mesh(mesh_devices), PartitionSpec(*([None] * (ndim - 1)), "prefixes"))


def _replicated(mesh_devices: tuple) -> Any:
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(_mesh(mesh_devices), PartitionSpec())


@float64
def margins_over_prefixes(backend: Backend, U: np.ndarray, W: np.ndarray, labels: np.ndarray | None, *,
                          max_bytes: int | float, nb: int | None = None, nsub: int | None = None,
                          one_hot_sums: bool | None = None, workers: int = 1,
                          report: Callable[[int, int], None] | None = None) -> PrefixStatistics:
    """Stream all ``p^(k-1)`` prefixes through the kernel on ``backend``'s devices (module docstring).

    ``U`` (m, k, p) and ``W`` (m, p) in float64; ``labels`` one class per input row (default ``sum mod p``);
    ``max_bytes`` bounds the device buffers of the calls in flight; ``nb`` overrides the sub-chunk size (rounded up
    to a multiple of the number of devices) and ``nsub`` the sub-chunks per call; ``one_hot_sums`` overrides how the
    label sums are formed (default: a one-hot GEMM on a GPU, a segment sum on a CPU; the tests run both on the CPU);
    ``workers``: on one CPU device, this many threads each dispatch every ``workers``-th call and keep their own label
    sums (added in worker order at the end), as the numpy engine's workers do: measured 10-13 % faster than one
    dispatching thread on 2 cores, with cache-sized sub-chunks per worker (:func:`cpu_chunk_bytes`); a GPU, and
    several devices, take one.  ``report(done, total)`` is called with the prefixes finished after every call."""
    jax = import_jax()

    m, k, p = U.shape
    devs = devices(backend)
    n_prefix, n = p ** (k - 1), p**k
    d = len(devs)
    workers = max(1, int(workers)) if backend.device == "cpu" and d == 1 else 1
    nb = chunk_prefixes(backend, p, k, m, max_bytes, workers) if nb is None else d * math.ceil(max(1, int(nb)) / d)
    if nsub is None:
        nsub = sub_chunks_per_call(backend, p, k, m, nb, max_bytes, workers)
    nsub = max(1, int(nsub))
    per_call = nb * nsub
    n_calls = math.ceil(n_prefix / per_call)
    workers = min(workers, n_calls)
    mesh_devices = tuple(devs) if d > 1 else None
    place = _replicated(mesh_devices) if mesh_devices is not None else devs[0]
    Ut = jax.device_put(np.ascontiguousarray(U.transpose(1, 2, 0), dtype=np.float64), place)
    Wd = jax.device_put(np.asarray(W, dtype=np.float64), place)
    if labels is not None:
        padded = np.zeros(n_calls * per_call * p, dtype=np.int32)
        padded[:n] = labels
        lab = jax.device_put(padded, place)
    else:
        lab = jax.device_put(np.zeros(1, dtype=np.int32), place)
    one_hot = backend.device == "gpu" if one_hot_sums is None else one_hot_sums
    kernel = _compiled_chunk(k, p, nb, nsub, n_prefix, labels is not None, mesh_devices, one_hot)
    calls = _CallStream(kernel, Ut, Wd, lab, place, p, n_prefix, per_call, n_calls, workers, report)
    sums = run_workers(calls.run, workers, calls.cancelled)
    label_sums = np.sum([np.asarray(M) for M in sums], axis=0)  # in worker order
    return PrefixStatistics(calls.margins, calls.spread, label_sums, nb, nsub, d, workers)


class _CallStream:
    """The kernel calls of :func:`margins_over_prefixes`: ``run(worker)`` dispatches every ``workers``-th call and
    copies each call's rows to the host while its next call runs; calls write disjoint rows of ``margins`` and
    ``spread``, and each worker keeps its own label sums on the device."""

    def __init__(self, kernel: Any, Ut: Any, Wd: Any, labels: Any, place: Any, p: int, n_prefix: int, per_call: int,
                 n_calls: int, workers: int, report: Callable[[int, int], None] | None) -> None:
        self.kernel, self.Ut, self.Wd, self.labels, self.place, self.p = kernel, Ut, Wd, labels, place, p
        self.n_prefix, self.per_call, self.n_calls = n_prefix, per_call, n_calls
        self.workers, self.report = workers, report
        self.margins, self.spread = np.empty(p * n_prefix), np.empty(p * n_prefix)
        self.lock, self.done = threading.Lock(), 0
        #: set when the pass is abandoned (another worker's error, Ctrl-C in the caller): workers return after the
        #: call in hand (:func:`margintheory.runtime.workers.run_workers`)
        self.cancelled = threading.Event()

    def copy_back(self, b0: int, g: Any, s: Any) -> None:
        p = self.p
        rows = slice(b0 * p, min(self.n_prefix, b0 + self.per_call) * p)
        count = rows.stop - rows.start
        self.margins[rows] = np.asarray(g).reshape(-1)[:count]
        self.spread[rows] = np.asarray(s).reshape(-1)[:count]
        with self.lock:  # the callback inside: the workers' reports arrive in increasing order
            self.done += count // p
            if self.report is not None:
                self.report(self.done, self.n_prefix)

    @float64  # 64-bit types are a thread-local setting: each worker thread enables them for itself
    def run(self, worker: int) -> Any:
        jax = import_jax()
        import jax.numpy as jnp

        M = jax.device_put(jnp.zeros((self.p, self.p), dtype=jnp.float64), self.place)
        pending: tuple[int, Any, Any] | None = None
        for c in range(worker, self.n_calls, self.workers):
            if self.cancelled.is_set():
                return M
            b0 = c * self.per_call
            g, s, M = self.kernel(self.Ut, self.Wd, jax.device_put(np.int64(b0), self.place), self.labels, M)
            if pending is not None:
                self.copy_back(*pending)
            pending = (b0, g, s)
        if pending is not None:
            self.copy_back(*pending)
        return M
