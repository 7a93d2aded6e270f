"""JAX backend of the exhaustive engine: one jit-compiled chunk kernel, streamed over the inputs' prefixes
(docs/theory.md#margins; :mod:`margintheory.engines.margins` for what is measured and its error bound).

A chunk is ``nb`` consecutive prefixes ``b = (a_1..a_{k-1})`` (``a_1`` most significant, as
:func:`margintheory.engines.margins.input_grid`) with all ``p`` last residues.  The kernel, compiled once per shape:

1. gathers and adds the prefix embeddings, ``S[b] = U[:, 0, a_1(b)] + ... + U[:, k-2, a_{k-1}(b)]`` (the digits are
   computed on the device from the prefix number: no input grid is transferred);
2. forms the activations ``(S[b] + U[:, k-1, a])^k`` and multiplies them by ``W``: the broadcast add and the power
   are one XLA loop fusion writing the chunk's ``(nb p, m)`` GEMM operand once, which the GEMM reads once (checked
   in the compiled CPU program; nothing of size ``p^k x m`` ever exists).  The operand is still written to memory:
   fusing the power into the GEMM's tiles would take a hand-written kernel;
3. per row: the correct logit minus the best wrong one, the spread of the wrong logits, and the label-indexed
   logit sums ``M[y, c]`` (one-hot product, accumulated on the device);
4. returns the chunk's margins; the host copies chunk ``i`` while the device computes chunk ``i + 1``.

Everything is float64 (``jax.enable_x64`` as a thread-local context, :mod:`margintheory.backends.select`).  The
float64 error of every logit is bounded by the same a-priori bound as numpy's: the bound
``(m + 2k + 2) eps sum_i (sum_j max|U|)^k max|W|`` holds for any summation order and any repeated-squaring
power (at most ``k - 1`` roundings) and for fused multiply-adds, which round less, not more.

Several devices of the chosen kind: the prefix axis of every chunk is sharded over a one-axis
``jax.sharding.Mesh`` of all of them (the weights replicated, ``M`` all-reduced by XLA).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.backends.select import Backend, devices, float64, import_jax

#: activation bytes of one chunk on a CPU: the chunk's buffers stay in the last-level cache (measured on a 2-core
#: AMD EPYC share: 8 to 16 MiB within a few per cent of each other, 32 MiB and more twice as slow)
CPU_CHUNK_BYTES = 12 * 2**20
#: at most this fraction of a GPU's memory (``memory_stats()['bytes_limit']``) holds one chunk's buffers
GPU_MEMORY_FRACTION = 0.125
GPU_CHUNK_BYTES = 2**30
#: host memory a JAX pass holds beyond its arrays (runtime and compiler; measured: 140 MB resident-set growth)
RUNTIME_BYTES = 160 * 2**20


@dataclass
class PrefixStatistics:
    """What the chunks of a pass measured: per-row margins and wrong-logit spreads, label sums, chunk size, and
    the number of devices the chunks were sharded over."""

    margins: np.ndarray
    spread: np.ndarray
    label_sums: np.ndarray
    chunk_prefixes: int
    devices: int = 1


def bytes_per_prefix(p: int, m: int) -> int:
    """Device bytes one prefix of a chunk needs (activations and their sum before the power, logits, masks)."""
    return 2 * 8 * p * m + 6 * 8 * p * p


def chunk_prefixes(backend: Backend, p: int, k: int, m: int, max_bytes: int | float) -> int:
    """Prefixes per chunk: the device's share (a cache-sized chunk on a CPU, a fraction of a GPU's memory) and at
    most ``max_bytes``, balanced so the chunks are of equal size, a multiple of the number of devices."""
    devs = devices(backend)
    per = bytes_per_prefix(p, m)
    if backend.device == "gpu":  # each GPU holds its 1/len(devs) of the chunk
        stats = devs[0].memory_stats() or {}
        per_gpu = min(GPU_CHUNK_BYTES, GPU_MEMORY_FRACTION * stats.get("bytes_limit", 8 * GPU_CHUNK_BYTES))
        target = per_gpu * len(devs)
    else:
        target = CPU_CHUNK_BYTES * per / (8 * p * m)
    n_prefix = p ** (k - 1)
    nb = max(1, min(n_prefix, int(min(target, max_bytes) // per)))
    n_chunks = math.ceil(n_prefix / nb)
    nb = math.ceil(n_prefix / n_chunks)
    d = len(devs)
    return d * math.ceil(nb / d)


@functools.lru_cache(maxsize=32)
def _compiled_chunk(k: int, p: int, nb: int, n_prefix: int, has_labels: bool, mesh_devices: tuple | None) -> Any:
    """The jit-compiled kernel for one shape (cached: a pass compiles once, later passes of that shape never)."""
    jax = import_jax()
    import jax.numpy as jnp

    def kernel(Ut, W, b0, labels, M):
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
        classes = jnp.arange(p)
        if has_labels:
            y = jax.lax.dynamic_slice(labels, (b0 * p,), (nb * p,))
        else:
            y = ((digit_sum[:, None] + classes[None, :]) % p).reshape(-1)
        hit = y[:, None] == classes[None, :]
        correct = jnp.sum(jnp.where(hit, L, 0.0), axis=1)
        wrong_max = jnp.max(jnp.where(hit, -jnp.inf, L), axis=1)
        wrong_min = jnp.min(jnp.where(hit, jnp.inf, L), axis=1)
        weight = (hit & jnp.repeat(valid, p)[:, None]).astype(L.dtype)
        return correct - wrong_max, wrong_max - wrong_min, M + weight.T @ L

    if mesh_devices is None:
        return jax.jit(kernel)
    rows, rep = _row_sharding(mesh_devices), _replicated(mesh_devices)
    return jax.jit(kernel, in_shardings=(rep, rep, rep, rep, rep), out_shardings=(rows, rows, rep))


def _mesh(mesh_devices: tuple) -> Any:
    from jax.sharding import Mesh

    return Mesh(np.array(mesh_devices), ("prefixes",))


def _row_sharding(mesh_devices: tuple) -> Any:
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(_mesh(mesh_devices), PartitionSpec("prefixes"))


def _replicated(mesh_devices: tuple) -> Any:
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(_mesh(mesh_devices), PartitionSpec())


@float64
def margins_over_prefixes(backend: Backend, U: np.ndarray, W: np.ndarray, labels: np.ndarray | None, *,
                          max_bytes: int | float, nb: int | None = None,
                          report: Callable[[int, int], None] | None = None) -> PrefixStatistics:
    """Stream all ``p^(k-1)`` prefixes through the chunk kernel on ``backend``'s devices (module docstring).

    ``U`` (m, k, p) and ``W`` (m, p) in float64; ``labels`` one class per input row (default ``sum mod p``);
    ``max_bytes`` bounds a chunk's device buffers; ``nb`` overrides the chunk size (rounded up to a multiple of the
    number of devices); ``report(done, total)`` is called with the prefixes finished after every chunk."""
    jax = import_jax()
    import jax.numpy as jnp

    m, k, p = U.shape
    devs = devices(backend)
    n_prefix, n = p ** (k - 1), p**k
    d = len(devs)
    nb = chunk_prefixes(backend, p, k, m, max_bytes) if nb is None else d * math.ceil(max(1, int(nb)) / d)
    n_chunks = math.ceil(n_prefix / nb)
    mesh_devices = tuple(devs) if d > 1 else None
    place = _replicated(mesh_devices) if mesh_devices is not None else devs[0]
    Ut = jax.device_put(np.ascontiguousarray(U.transpose(1, 2, 0), dtype=np.float64), place)
    Wd = jax.device_put(np.asarray(W, dtype=np.float64), place)
    if labels is not None:
        padded = np.zeros(n_chunks * nb * p, dtype=np.int32)
        padded[:n] = labels
        lab = jax.device_put(padded, place)
    else:
        lab = jax.device_put(np.zeros(1, dtype=np.int32), place)
    M = jax.device_put(jnp.zeros((p, p), dtype=jnp.float64), place)
    kernel = _compiled_chunk(k, p, nb, n_prefix, labels is not None, mesh_devices)
    margins, spread = np.empty(n), np.empty(n)
    pending: tuple[int, Any, Any] | None = None
    for c in range(n_chunks + 1):
        if c < n_chunks:
            g, s, M = kernel(Ut, Wd, jax.device_put(np.int64(c * nb), place), lab, M)
        if pending is not None:  # copy the previous chunk while the device computes this one
            b0, g_prev, s_prev = pending
            rows = slice(b0 * p, min(n_prefix, b0 + nb) * p)
            count = rows.stop - rows.start
            margins[rows] = np.asarray(g_prev)[:count]
            spread[rows] = np.asarray(s_prev)[:count]
            if report is not None:
                report(rows.stop // p, n_prefix)
        pending = (c * nb, g, s) if c < n_chunks else None
    return PrefixStatistics(margins, spread, np.asarray(M), nb, d)
