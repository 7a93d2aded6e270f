"""The exhaustive margin engine (docs/theory.md#margins).

For a network ``theta`` it evaluates the logits on **all** ``p^k`` inputs of ``D_p`` and returns
``g(theta, a, y) = f[y] - max_{c != y} f[c]`` for every point, ``h(theta) = min g``, the normalized margin
``h(theta / ||theta||_{2,k+1}) = h(theta) / ||theta||^(k+1)`` (homogeneity), the points on the margin, and
the spread ``max_{c != y} f[c] - min_{c != y} f[c]`` of the wrong-label logits (condition C.1 / 4.8 asks it to be 0).

Streaming: inputs are ordered with ``a_1`` most significant (row ``r`` of :func:`input_grid`).  A chunk is a
block of prefixes ``(a_1..a_{k-1})``; its preactivations are ``S[b] + U[:, k-1, a_k]`` and its activations
``(S[b] + T[a_k])^k`` are formed by one fused kernel (:mod:`margintheory._kernels`) and multiplied by ``W`` with
one BLAS GEMM.  The chunk size is chosen under the memory budget ``max_memory``.

Floating-point error (a-priori, first order, the standard ``gamma_n`` bound of a dot product):
every logit has ``|fl(f) - f| <= (m + 2k + 2) eps sum_i (sum_j max_a |U[i,j,a]|)^k max_c |W[i,c]|``;
a margin (difference of two logits) at most twice that.  This bound is reported and used as the tolerance.
"""

from __future__ import annotations

import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from margintheory import progress
from margintheory._kernels import margin_statistics, power_of_sums
from margintheory.budget import DEFAULT_MAX_MEMORY, Estimate, grid_points, require
from margintheory.errors import InputError
from margintheory.network import PolyNetwork

EPS = float(np.finfo(np.float64).eps)
# conservative throughput used only for the up-front run-time estimate (2 cores, float64)
_ESTIMATE_FLOPS = 2.0e10
_ESTIMATE_ELEMENTS = 3.0e9
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


def logit_error_bound(net: PolyNetwork) -> float:
    """A-priori absolute bound on the float64 error of every logit (module docstring)."""
    zabs = np.abs(net.U).max(axis=2).sum(axis=1)
    wabs = np.abs(net.W).max(axis=1)
    return float((net.m + 2 * net.k + 2) * EPS * np.sum(zabs**net.k * wabs))


@dataclass(frozen=True)
class CostEstimate:
    """Up-front estimate of the engine's memory and run time for ``(p, k, m)``."""

    points: int | float  # ``inf`` beyond 2^128 (see :func:`margintheory.budget.grid_points`)
    fixed_bytes: int | float
    chunk_bytes: int
    prefixes_per_chunk: int
    seconds: float

    @property
    def total_bytes(self) -> int | float:
        return self.fixed_bytes + self.chunk_bytes


def estimate_cost(p: int, k: int, m: int, max_memory: int = DEFAULT_MAX_MEMORY, *, workers: int = 1) -> CostEstimate:
    """Memory layout and a conservative run-time estimate; the chunk is sized to fit ``max_memory``.

    Computed from ``(p, k, m)`` alone (``p^k`` beyond ``2^128`` counts as infinite), before anything is allocated.
    """
    n = grid_points(p, k)
    fixed = n * (8 + 8 + 1) + 8 * m * (k + 1) * p * 2  # margins, spreads, on-margin flags; the weights
    one = 8 * p * m + 8 * m + 8 * 3 * p * p  # one worker's buffers per prefix: activations, prefix sums, logits
    per_prefix = workers * one
    free = max_memory - fixed
    if free < per_prefix:
        return CostEstimate(n, fixed, per_prefix, 0, math.inf)
    prefixes = max(1, min(int(free // per_prefix), max(1, _TARGET_CHUNK_BYTES // one), p ** (k - 1)))
    seconds = 2.0 * n * m * p / _ESTIMATE_FLOPS + n * m / _ESTIMATE_ELEMENTS
    return CostEstimate(n, fixed, int(prefixes * per_prefix), int(prefixes), seconds)


def engine_bytes_per_point() -> int:
    """Memory the engine and the checks built on it hold per input point (margins, spreads, flags, per-point
    checks), calibrated against the peak resident size of :func:`margintheory.verification.verify_network`
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

    @property
    def fraction_on_margin(self) -> float:
        return float(np.mean(self.on_margin))

    @property
    def max_wrong_spread(self) -> float:
        return float(self.wrong_spread.max())

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
                      chunk_prefixes: int | None = None, workers: int | None = None) -> MarginResult:
    """Stream the logits over all ``p^k`` inputs and measure the margin (module docstring).

    ``labels``: optional class per input row of :func:`input_grid` (default ``sum mod p``); ``label_logit_sums``
    is then indexed by that label.  ``chunk_prefixes`` overrides the automatic chunk size and ``workers`` the
    number of worker threads (tests use both to check that neither changes the result).
    """
    p, k, m = net.p, net.k, net.m
    n = p**k
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape != (n,) or labels.dtype.kind not in "iu" or labels.min() < 0 or labels.max() >= p:
            raise InputError(f"labels must be {n} integers in 0..{p - 1}")
    n_workers = worker_count(workers)
    est = estimate_cost(p, k, m, max_memory, workers=n_workers)
    check_feasible(est, max_memory, max_seconds)
    nb = est.prefixes_per_chunk if chunk_prefixes is None else max(1, int(chunk_prefixes))
    t0 = time.perf_counter()
    stream = _ChunkStream(net, labels, nb, use_numba, progress.current())
    chunks = list(range(0, stream.n_prefix, nb))
    n_workers = max(1, min(n_workers, len(chunks)))
    sums = [np.zeros((p, p)) for _ in range(n_workers)]
    if n_workers == 1:
        stream.run(chunks, sums[0])
    else:
        with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(n_workers) as pool:
            jobs = [pool.submit(stream.run, chunks[i::n_workers], sums[i]) for i in range(n_workers)]
            for job in jobs:
                job.result()
    seconds = time.perf_counter() - t0
    return _finish(net, stream.margins, stream.spread, np.sum(sums, axis=0), seconds, nb)


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
            b1 = min(self.n_prefix, b0 + nb)
            rows = (b1 - b0) * p
            S = np.zeros((b1 - b0, m))
            for j in range(k - 1):
                S += self.prefix_U[j][self.digits[b0:b1, j]]
            A = A_buf[:rows]
            power_of_sums(S, self.T, k, A, use_numba=self.use_numba)
            L = np.matmul(A, net.W, out=L_buf[:rows])
            if self.labels is None:
                y = ((self.prefix_sums[b0:b1, None] + last[None, :]) % p).reshape(-1)
            else:
                y = self.labels[b0 * p : b1 * p]
            rs = slice(b0 * p, b1 * p)
            margin_statistics(L, y, self.margins[rs], self.spread[rs], M, use_numba=self.use_numba)
            if self.report is not None:
                with self.lock:
                    self.done += b1 - b0
                    done = self.done
                self.report(self.what, done, self.n_prefix)


def _finish(net: PolyNetwork, margins: np.ndarray, spread: np.ndarray, M: np.ndarray, seconds: float,
            nb: int) -> MarginResult:
    k = net.k
    norm = net.norm()
    err = logit_error_bound(net)
    h = float(margins.min())
    scale = norm ** (k + 1) if norm > 0 else 1.0
    normalized = h / scale
    # margin error <= 2 err; norm^(k+1) has relative error <= (k+1)(m + (k+1)p + 2) eps (first order)
    norm_rel = (k + 1) * (net.m + (k + 1) * net.p + 2) * EPS
    tol = 2 * err / scale + norm_rel * abs(normalized)
    on_margin = margins <= h + 4 * err
    return MarginResult(net.p, k, net.m, norm, margins, spread, h, normalized, err, tol, on_margin, M, seconds, nb)
