"""The exhaustive margin engine (docs/theory.md#margins).

For a network ``theta`` it evaluates the logits on **all** ``p^k`` inputs of ``D_p`` and returns
``g(theta, a, y) = f[y] - max_{c != y} f[c]`` for every point, ``h(theta) = min g``, the normalized margin
``h(theta / ||theta||_{2,k+1}) = h(theta) / ||theta||^(k+1)`` (homogeneity), the points on the margin, and
the spread ``max_{c != y} f[c] - min_{c != y} f[c]`` of the wrong-label logits (condition C.1 / 4.8 asks it to be 0).

Streaming: inputs are ordered with ``a_1`` most significant (row ``r`` of :func:`input_grid`).  A chunk is a
block of prefixes ``(a_1..a_{k-1})``; its preactivations are ``S[b] + U[:, k-1, a_k]`` and its activations
``(S[b] + T[a_k])^k`` are formed by one fused kernel and multiplied by ``W`` with one GEMM.  The chunk size is
chosen under the memory budget ``max_memory``.

Backends (:mod:`margintheory.backends`): the chunk kernel runs on the backend the caller names or, by default, the
one selected by :func:`margintheory.backends.select.using` -- numpy with numba kernels (the default; worker threads
over the chunks) or JAX (one jit-compiled kernel, CPU or GPU, several devices through ``jax.sharding``).  Both
compute in float64 and obey the error bound below.

Floating-point error (a-priori, first order, the standard ``gamma_n`` bound of a dot product):
every logit has ``|fl(f) - f| <= (m + 2k + 2) eps sum_i (sum_j max_a |U[i,j,a]|)^k max_c |W[i,c]|``;
a margin (difference of two logits) at most twice that.  This bound is reported and used as the tolerance.
"""

from __future__ import annotations

import math
import operator
import os
import threading
import time
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from margintheory.backends import select as backends
from margintheory.backends.numpy_engine import chunk_statistics
from margintheory.core.network import PolyNetwork
from margintheory.errors import InputError
from margintheory.runtime import progress
from margintheory.runtime.budget import DEFAULT_MAX_MEMORY, Estimate, grid_points, require
from margintheory.runtime.workers import run_workers

EPS = float(np.finfo(np.float64).eps)
# the up-front run-time estimate on a CPU, per worker (one core each, float64): the GEMM ``2 p^k m p`` flops at
# ``_CORE_FLOPS * p / (p + _NARROW_GEMM_P)`` (a product with only ``p`` output columns runs below the core's peak),
# the activations' ``p^k m`` elements and a per-point cost.  Fitted 2026-11-27 on the 2-core AMD EPYC share (32 MiB
# of L3) at (11,5), (17,4), (47,3), (97,3), (23,4), (199,2), (720,2), (31,4), (7,7) (random networks; ``python
# benchmarks/bench_margin_engine.py --calibration``), where one worker takes 1.7-2.0x the time of two, then made
# 1.3x longer: shares of this project's machine have run the engine up to 2.5x slower (8 MiB of L3, 2026-11-25), and
# an estimate that errs long on one kind and short on the other keeps both within 2x.  Measured here the estimate is
# 1.3x-1.9x of the pass (the former fixed 2e10 flop/s for any number of workers was 0.88x-4.9x); on the slower
# share about 0.5x-0.8x (inferred from the factor 2.5, not measured).  Beyond 2 cores the linear scaling is assumed.
_CORE_FLOPS = 3.85e10
_NARROW_GEMM_P = 20.0
_CORE_ELEMENTS = 1.15e9
_CORE_SECONDS_PER_POINT = 5.2e-8
_PASS_SECONDS = 1e-3  # a pass's own start (threads, buffers): 0.9-1.0 ms measured at (5,2), (24,2), (11,3)
# a GPU (float64): a plain, unfused array version ran at 3.6e12 flop/s on one H100 at p=101, k=4 (the developers'
# measurement on a machine with a GPU); the fused kernel is no slower, so these stay conservative
_GPU_FLOPS = 2.0e12
_GPU_ELEMENTS = 3.0e11
_TARGET_CHUNK_BYTES = 5 * 2**19  # activations of one chunk stay in a core's cache


def input_grid(p: int, k: int) -> np.ndarray:
    """All ``p^k`` inputs as rows of base-``p`` digits, ``a_1`` most significant: shape ``(p**k, k)``."""
    n = p**k
    r = np.arange(n, dtype=np.int64)
    digits = np.empty((n, k), dtype=np.int64)
    for j in range(k - 1, -1, -1):
        digits[:, j] = r % p
        r //= p
    return digits


def sum_labels(p: int, k: int) -> np.ndarray:
    """The modular-addition labels ``(a_1 + ... + a_k) mod p`` in :func:`input_grid` order."""
    return input_grid(p, k).sum(axis=1) % p


def logits(net: PolyNetwork, inputs: np.ndarray | None = None) -> np.ndarray:
    """``f(theta, a)`` for the given inputs (rows of ``k`` residues) or all of them: shape ``(n, p)``.

    Direct evaluation (no streaming): use for small sizes and as the reference in tests.
    """
    X = input_grid(net.p, net.k) if inputs is None else np.asarray(inputs, dtype=np.int64)
    if X.ndim != 2 or X.shape[1] != net.k:
        raise InputError(f"inputs must have shape (n, {net.k}); got {X.shape}")
    if X.size and (X.min() < 0 or X.max() >= net.p):
        raise InputError(f"inputs must be residues in 0..{net.p - 1}")
    Z = np.zeros((X.shape[0], net.m))
    for j in range(net.k):
        Z += net.U[:, j, X[:, j]].T
    return (Z**net.k) @ net.W


def class_weighted_margins(logit: np.ndarray, labels: np.ndarray, tau: np.ndarray | None = None) -> np.ndarray:
    """``g'(a, y) = f[y] - sum_{c != y} tau[a, c] f[c]`` (docs/theory.md#margins); uniform ``tau = 1/(p-1)`` by default.

    ``tau`` (if given) has the shape of ``logit``; its entries at the correct labels are ignored.
    """
    n, p = logit.shape
    rows = np.arange(n)
    correct = logit[rows, labels]
    if tau is None:
        return correct - (logit.sum(axis=1) - correct) / (p - 1)
    t = np.array(tau, dtype=np.float64, copy=True)
    t[rows, labels] = 0.0
    return correct - np.einsum("nc,nc->n", t, logit)


def power_sum_error_bound(inner_terms: int, k: int, inner_abs: np.ndarray, out_abs: np.ndarray) -> float:
    """A-priori absolute bound on the float64 error of every logit ``sum_i (x_i1 + ... + x_iT)^k w_i``.

    First-order ``gamma_n`` bound (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Sec. 3.1):
    ``(T + k + m + 2) eps sum_i A_i^k B_i`` with ``T`` = ``inner_terms`` summed inside each power, ``A_i`` =
    ``inner_abs[i]`` >= the sum of their absolute values, ``B_i`` = ``out_abs[i]`` >= every ``|w_i[c]|`` and ``m``
    neurons.  The one bound of every polynomial network here (modular addition: ``T = k``; sparse parity: ``T = n``).
    """
    m = len(inner_abs)
    return float((inner_terms + k + m + 2) * EPS * np.sum(inner_abs**k * out_abs))


def logit_error_bound(net: PolyNetwork) -> float:
    """:func:`power_sum_error_bound` of a modular-addition network: ``(m + 2k + 2) eps sum_i (sum_j max|U_ij|)^k
    max|W_i|`` (module docstring)."""
    return power_sum_error_bound(net.k, net.k, np.abs(net.U).max(axis=2).sum(axis=1), np.abs(net.W).max(axis=1))


@dataclass(frozen=True)
class CostEstimate:
    """Up-front estimate of the engine's memory and run time for ``(p, k, m)``."""

    points: int | float  # ``inf`` beyond 2^128 (see :func:`margintheory.runtime.budget.grid_points`)
    fixed_bytes: int | float
    chunk_bytes: int
    prefixes_per_chunk: int
    seconds: float

    @property
    def total_bytes(self) -> int | float:
        return self.fixed_bytes + self.chunk_bytes


def estimate_cost(p: int, k: int, m: int, max_memory: int = DEFAULT_MAX_MEMORY, *, workers: int = 1,
                  backend: backends.Backend | None = None) -> CostEstimate:
    """Memory layout and a conservative run-time estimate; the chunk is sized to fit ``max_memory``.

    Computed from ``(p, k, m)`` alone (``p^k`` beyond ``2^128`` counts as infinite), before anything is allocated,
    for ``backend`` (default: the selected one, :func:`margintheory.backends.select.current`): on the jax backend
    the host also holds the JAX runtime, and a GPU's chunks live in the GPU's memory, not the host's.
    """
    choice = backend or backends.current()
    n = grid_points(p, k)
    fixed = n * (8 + 8 + 1) + 8 * m * (k + 1) * p * 2  # margins, spreads, on-margin flags; the weights
    one = 8 * p * m + 8 * m + 8 * 3 * p * p  # one worker's buffers per prefix: activations, prefix sums, logits
    per_prefix, target = workers * one, max(1, _TARGET_CHUNK_BYTES // one)
    if choice.name == "jax":
        from margintheory.backends import jax_engine

        fixed += jax_engine.RUNTIME_BYTES
        # a CPU: each worker's sub-chunk, cache-sized; a GPU: its outputs copied back
        per_prefix = workers * jax_engine.bytes_per_prefix(p, m) if choice.device == "cpu" else 16 * p
        target = (max(1, jax_engine.cpu_chunk_bytes(jax_engine.LAST_LEVEL_CACHE, workers) // (8 * p * m))
                  if choice.device == "cpu" else p ** (k - 1))
    free = max_memory - fixed
    if free < per_prefix:
        return CostEstimate(n, fixed, per_prefix, 0, math.inf)
    prefixes = max(1, min(int(free // per_prefix), target, p ** (k - 1)))
    chunk_bytes = int(prefixes * per_prefix)
    if choice.name == "jax" and choice.device == "cpu":  # the calls in flight: a sub-chunk's buffers and outputs each
        nsub = jax_engine.sub_chunks_per_call(choice, p, k, m, prefixes, free, workers)
        chunk_bytes = jax_engine.call_bytes(p, m, prefixes, nsub, workers)
    if choice.device == "gpu":
        seconds = 2.0 * n * m * p / _GPU_FLOPS + n * m / _GPU_ELEMENTS
    else:
        gemm_rate = _CORE_FLOPS * p / (p + _NARROW_GEMM_P)
        seconds = (2.0 * n * m * p / gemm_rate + n * m / _CORE_ELEMENTS + n * _CORE_SECONDS_PER_POINT) / workers
        seconds += _PASS_SECONDS
    return CostEstimate(n, fixed, chunk_bytes, int(prefixes), seconds)


def engine_bytes_per_point() -> int:
    """Memory the engine and the checks built on it hold per input point (margins, spreads, flags, per-point
    checks), calibrated against the peak resident size of
    :func:`margintheory.tasks.modular_addition.checks.verify_network`
    (``benchmarks/bench_estimates.py``)."""
    return 36


def check_feasible(est: CostEstimate, max_memory: int | None, max_seconds: float | None) -> None:
    """Refuse work that cannot be streamed within the budget or would take too long
    (:class:`~margintheory.errors.RefusedError` with ``parameter`` ``"max_memory"`` or ``"max_seconds"``)."""
    what = f"the exhaustive check over {est.points} points"
    if est.prefixes_per_chunk == 0:
        require(Estimate(what, est.fixed_bytes + est.chunk_bytes), max_memory, None)
    require(Estimate(what, est.total_bytes, est.seconds), None, max_seconds)


@dataclass
class MarginResult:
    """Everything the exhaustive pass measured (unnormalized logits; see ``normalized_*`` for the unit-norm view)."""

    p: int
    k: int
    m: int
    norm: float
    margins: np.ndarray
    wrong_spread: np.ndarray
    h: float
    normalized_margin: float
    logit_error_bound: float
    normalized_tolerance: float
    on_margin: np.ndarray
    label_logit_sums: np.ndarray
    seconds: float
    chunk_prefixes: int
    backend: str = "numpy (cpu)"

    @property
    def fraction_on_margin(self) -> float:
        return float(np.mean(self.on_margin))

    @property
    def max_wrong_spread(self) -> float:
        return float(self.wrong_spread.max())

    @property
    def points(self) -> int:
        """Number of inputs measured (``p^k``)."""
        return int(self.margins.size)

    def points_above(self, threshold: float) -> int:
        """How many inputs have a margin above ``threshold`` (off the margin band that ends there)."""
        return int(np.count_nonzero(self.margins > threshold))

    @property
    def normalization(self) -> float:
        """``||theta||^(k+1)``: dividing a logit of ``theta`` by it gives the logit of ``theta/||theta||``."""
        return self.norm ** (self.k + 1)

    def multidim_dft(self) -> np.ndarray:
        """``f^(j, ..., j, -j)`` for ``j = 0..p-1`` (Lemma C.20) from the exhaustively computed logits.

        ``sum_a sum_c f(a)[c] e^{-2 pi i j (a_1+...+a_k - c)/p}`` = ``sum_{s,c} M[s,c] e^{-2 pi i j (s - c)/p}``
        where ``M[s, c]`` sums the logits of class ``c`` over the inputs with ``a_1+...+a_k = s (mod p)``;
        ``M`` is accumulated during the exhaustive pass, so this costs ``O(p^2)`` and no extra memory.
        Only meaningful for modular-addition labels (``M`` is indexed by the label).
        """
        full = np.fft.fft2(self.label_logit_sums)  # full[j1, j2] = sum M[s,c] e^{-2pi i (j1 s + j2 c)/p}
        j = np.arange(self.p)
        return full[j, (-j) % self.p]


def exhaustive_margin(net: PolyNetwork, max_memory: int = DEFAULT_MAX_MEMORY, *, labels: np.ndarray | None = None,
                      max_seconds: float | None = None, use_numba: bool | None = None,
                      chunk_prefixes: int | None = None, workers: int | None = None,
                      backend: backends.Backend | str | None = None) -> MarginResult:
    """Stream the logits over all ``p^k`` inputs and measure the margin (module docstring).

    ``labels``: optional class per input row of :func:`input_grid` (default ``sum mod p``); ``label_logit_sums``
    is then indexed by that label.  ``chunk_prefixes`` overrides the automatic chunk size and ``workers`` the
    number of worker threads (tests use both to check that neither changes the result).  ``backend``: ``"numpy"``,
    ``"jax"`` or a :class:`~margintheory.backends.select.Backend` (default: the selected one).
    """
    p, k, m = net.p, net.k, net.m
    n = p**k
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n,) or labels.dtype.kind not in "iu" or labels.min() < 0 or labels.max() >= p:
            raise InputError(f"labels must be {n} integers in 0..{p - 1}")
    choice = backends.resolve(backend)
    n_workers = worker_count(workers)
    est = estimate_cost(p, k, m, max_memory, workers=n_workers, backend=choice)
    check_feasible(est, max_memory, max_seconds)
    if choice.name == "jax":
        return _jax_pass(net, labels, choice, max_memory - est.fixed_bytes, chunk_prefixes, n_workers)
    nb = est.prefixes_per_chunk if chunk_prefixes is None else max(1, int(chunk_prefixes))
    t0 = time.perf_counter()
    stream = _ChunkStream(net, labels, nb, use_numba, progress.current())
    chunks = list(range(0, stream.n_prefix, nb))
    n_workers = max(1, min(n_workers, len(chunks)))
    sums = [np.zeros((p, p)) for _ in range(n_workers)]
    with threadpool_limits(limits=1, user_api="blas"):
        run_workers(lambda i: stream.run(chunks[i::n_workers], sums[i]), n_workers, stream.cancelled)
    seconds = time.perf_counter() - t0
    return _finish(net, stream.margins, stream.spread, np.sum(sums, axis=0), seconds, nb, choice)


def _jax_pass(net: PolyNetwork, labels: np.ndarray | None, choice: backends.Backend, free_bytes: int | float,
              chunk_prefixes: int | None, workers: int) -> MarginResult:
    """The pass on the JAX backend (:mod:`margintheory.backends.jax_engine`, imported only here); on a CPU the
    chunks' buffers count against the memory budget and ``workers`` threads dispatch the calls, on a GPU the
    device's memory sizes the chunk."""
    from margintheory.backends import jax_engine

    report, what, t0 = progress.current(), f"exhaustive margin over {net.p}^{net.k} points", time.perf_counter()
    stats = jax_engine.margins_over_prefixes(
        choice, net.U, net.W, labels, max_bytes=free_bytes if choice.device == "cpu" else math.inf,
        nb=chunk_prefixes, workers=workers,
        report=None if report is None else (lambda done, total: report(what, done, total)))
    seconds = time.perf_counter() - t0
    res = _finish(net, stats.margins, stats.spread, stats.label_sums, seconds, stats.chunk_prefixes, choice)
    if stats.devices > 1:
        res.backend = f"{choice.name} ({choice.device}, {stats.devices} devices)"
    return res


def worker_count(workers: int | None) -> int:
    """Worker threads: the cores this process may use (each runs the compiled kernel + a 1-thread GEMM)."""
    if workers is not None:
        return max(1, int(workers))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class _ChunkStream:
    """The per-chunk work of :func:`exhaustive_margin`; ``run`` processes a list of chunks with its own buffers.

    Chunks write disjoint slices of ``margins`` and ``spread``; each worker accumulates its own label sums.
    """

    def __init__(self, net: PolyNetwork, labels: np.ndarray | None, nb: int, use_numba: bool | None,
                 report: progress.ProgressCallback | None = None) -> None:
        p, k = net.p, net.k
        self.net, self.labels, self.nb, self.use_numba = net, labels, nb, use_numba
        self.report, self.done, self.what = report, 0, f"exhaustive margin over {p}^{k} points"
        self.lock = threading.Lock()
        #: set when the pass is abandoned (Ctrl-C in the main thread, another worker's error): workers return
        #: after the chunk in hand, so the executor's shutdown waits for one chunk, not for the whole pass
        self.cancelled = threading.Event()
        self.n_prefix = p ** (k - 1)
        self.margins = np.empty(p**k)
        self.spread = np.empty(p**k)
        self.T = np.ascontiguousarray(net.U[:, k - 1, :].T)  # (p, m): last coordinate's contribution
        self.prefix_U = [np.ascontiguousarray(net.U[:, j, :].T) for j in range(k - 1)]
        self.digits = input_grid(p, k - 1) if k > 1 else np.zeros((1, 0), dtype=np.int64)
        self.prefix_sums = self.digits.sum(axis=1)

    def run(self, chunk_starts: list[int], M: np.ndarray) -> None:
        net, nb = self.net, self.nb
        p, k, m = net.p, net.k, net.m
        A_buf = np.empty((nb * p, m))
        L_buf = np.empty((nb * p, p))
        last = np.arange(p)
        for b0 in chunk_starts:
            if self.cancelled.is_set():
                return
            b1 = min(self.n_prefix, b0 + nb)
            rows = (b1 - b0) * p
            S = np.zeros((b1 - b0, m))
            for j in range(k - 1):
                S += self.prefix_U[j][self.digits[b0:b1, j]]
            A, L = A_buf[:rows], L_buf[:rows]
            if self.labels is None:
                y = ((self.prefix_sums[b0:b1, None] + last[None, :]) % p).reshape(-1)
            else:
                y = self.labels[b0 * p : b1 * p]
            rs = slice(b0 * p, b1 * p)
            chunk_statistics(S, self.T, net.W, k, y, self.margins[rs], self.spread[rs], M, A, L,
                             use_numba=self.use_numba)
            if self.report is not None:
                with self.lock:
                    self.done += b1 - b0
                    done = self.done
                self.report(self.what, done, self.n_prefix)


def _finish(net: PolyNetwork, margins: np.ndarray, spread: np.ndarray, M: np.ndarray, seconds: float,
            nb: int, choice: backends.Backend) -> MarginResult:
    k = net.k
    h = float(margins.min())
    norm, err, normalized, tol = normalize_margin(net, h)
    on_margin = margins <= h + 4 * err
    return MarginResult(net.p, k, net.m, norm, margins, spread, h, normalized, err, tol, on_margin, M, seconds, nb,
                        choice.label)


def norm_power_relative_error(k: int, m: int, p: int) -> float:
    """A-priori bound on the relative error of ``||theta||^(k+1)`` computed in float64 for width ``m``:
    ``(k+1)(m + (k+1)p + 2) eps`` (first order)."""
    return (k + 1) * (m + (k + 1) * p + 2) * EPS


def normalize_margin(net: PolyNetwork, h: float) -> tuple[float, float, float, float]:
    """``(norm, logit error bound, h / norm^(k+1), its tolerance)`` for the minimum margin ``h`` of ``net``: one
    formula for the single pass and for a pass split into prefix ranges (:func:`reduce_prefix_margins`)."""
    k = net.k
    norm = net.norm()
    err = logit_error_bound(net)
    scale = norm ** (k + 1)
    # margin error <= 2 err; norm^(k+1) has relative error <= norm_power_relative_error (first order)
    norm_rel = norm_power_relative_error(k, net.m, net.p)
    if scale > 0:
        normalized = h / scale
        return norm, err, normalized, 2 * err / scale + norm_rel * abs(normalized)
    return norm, err, 0.0, 0.0  # the zero network (or norm^(k+1) underflowing): every logit is exactly 0


# --- One prefix range of the exhaustive pass, and the min-reduction of ranges (a pass split across processes) ---


@dataclass(frozen=True)
class PrefixRangeMargin:
    """The exhaustive pass over the inputs whose prefix ``(a_1..a_{k-1})`` has index ``start <= b < stop`` (row
    ``b`` of ``input_grid(p, k - 1)``; these are the rows ``b p .. b p + p - 1`` of :func:`input_grid`), reduced to
    what the checks need: the smallest and largest margin, the largest wrong-logit spread, the label-indexed logit
    sums (Lemma C.20) and, when a threshold was given, the number of margins above it.  O(p^2) numbers whatever the
    range's size; :func:`reduce_prefix_margins` combines ranges."""

    p: int
    k: int
    start: int
    stop: int
    h: float
    max_margin: float
    max_wrong_spread: float
    label_logit_sums: np.ndarray
    threshold: float | None = None
    points_above: int | None = None

    @property
    def points(self) -> int:
        return (self.stop - self.start) * self.p


def prefix_range_margin(net: PolyNetwork, start: int, stop: int, *, threshold: float | None = None,
                        max_memory: int = DEFAULT_MAX_MEMORY, use_numba: bool | None = None) -> PrefixRangeMargin:
    """:func:`exhaustive_margin` restricted to the prefixes ``start <= b < stop`` (one thread; the same kernels, so
    every margin is the single pass's value up to the float64 bound :func:`logit_error_bound`); streamed in chunks
    sized to ``max_memory``.  Only modular-addition labels ``(a_1 + ... + a_k) mod p``."""
    p, k, m = net.p, net.k, net.m
    try:
        start, stop = operator.index(start), operator.index(stop)
    except TypeError:
        raise InputError(f"prefix range bounds must be integers, got {start!r}, {stop!r}") from None
    if not 0 <= start < stop <= p ** (k - 1):
        raise InputError(f"prefix range [{start}, {stop}) is not inside [0, {p ** (k - 1)})")
    weights = 8 * m * (k + 1) * p * 2
    one = 8 * p * m + 8 * m + 8 * 3 * p * p + 16 * p  # per prefix: activations, sums, logits, margins, spreads
    if max_memory - weights < one:
        require(Estimate(f"a prefix range of the exhaustive check over {p}^{k} points", weights + one), max_memory,
                None)
    nb = max(1, min(int((max_memory - weights) // one), max(1, _TARGET_CHUNK_BYTES // one), stop - start))
    T = np.ascontiguousarray(net.U[:, k - 1, :].T)
    prefix_U = [np.ascontiguousarray(net.U[:, j, :].T) for j in range(k - 1)]
    M = np.zeros((p, p))
    margins, spread = np.empty(nb * p), np.empty(nb * p)
    A_buf, L_buf = np.empty((nb * p, m)), np.empty((nb * p, p))
    lo, hi, wide, above = math.inf, -math.inf, -math.inf, 0
    for b0 in range(start, stop, nb):
        b1 = min(stop, b0 + nb)
        rows = (b1 - b0) * p
        digits = _prefix_digits(p, k, b0, b1)
        S = np.zeros((b1 - b0, m))
        for j in range(k - 1):
            S += prefix_U[j][digits[:, j]]
        y = ((digits.sum(axis=1)[:, None] + np.arange(p)[None, :]) % p).reshape(-1)
        chunk_statistics(S, T, net.W, k, y, margins[:rows], spread[:rows], M, A_buf[:rows], L_buf[:rows],
                         use_numba=use_numba)
        lo, hi = min(lo, float(margins[:rows].min())), max(hi, float(margins[:rows].max()))
        wide = max(wide, float(spread[:rows].max()))
        if threshold is not None:
            above += int(np.count_nonzero(margins[:rows] > threshold))
    return PrefixRangeMargin(p, k, start, stop, lo, hi, wide, M, threshold, above if threshold is not None else None)


def _prefix_digits(p: int, k: int, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop-1`` of ``input_grid(p, k - 1)`` without building the whole grid."""
    r = np.arange(start, stop, dtype=np.int64)
    digits = np.empty((stop - start, max(k - 1, 0)), dtype=np.int64)
    for j in range(k - 2, -1, -1):
        digits[:, j] = r % p
        r //= p
    return digits


def reduce_prefix_margins(parts: list[PrefixRangeMargin]) -> PrefixRangeMargin:
    """Min-reduce prefix ranges that tile one contiguous range (refused otherwise: a missing or repeated range would
    change the minimum silently): min of the minima, max of the maxima and spreads, sum of the logit sums and of
    the counts above the threshold (all ranges must have been counted against the same threshold)."""
    if not parts:
        raise InputError("no prefix ranges to reduce")
    ordered = sorted(parts, key=lambda r: r.start)
    first = ordered[0]
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.start != a.stop or (b.p, b.k) != (a.p, a.k):
            raise InputError(f"prefix ranges do not tile: [{a.start}, {a.stop}) then [{b.start}, {b.stop})")
    if len({r.threshold for r in ordered}) != 1:
        raise InputError("prefix ranges were counted against different thresholds")
    counts = [r.points_above for r in ordered]
    return PrefixRangeMargin(
        first.p, first.k, first.start, ordered[-1].stop, min(r.h for r in ordered),
        max(r.max_margin for r in ordered), max(r.max_wrong_spread for r in ordered),
        np.sum([r.label_logit_sums for r in ordered], axis=0), first.threshold,
        None if first.threshold is None else int(sum(c or 0 for c in counts)))
