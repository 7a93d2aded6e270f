"""Compiled kernels of the exhaustive margin engine (numba, ``nogil``), with numpy fallbacks.

* :func:`power_of_sums`: ``A[b*p + a, i] = (S[b, i] + T[a, i]) ** k`` — the activations of a chunk;
* :func:`margin_statistics`: per row the correct logit minus the largest wrong one, the spread of the wrong
  logits, and the running sums ``M[y, c] += L[r, c]`` used for Lemma C.20's multidimensional DFT.

The engine runs one chunk per worker thread: compiled kernels release the GIL and each worker's GEMM runs on
single-threaded BLAS, so no two thread pools spin against each other (measured: the parallel-numba + threaded-BLAS
alternative costs 2-3x the bare GEMM at k=5, p=23, m=5632; this design ~1x).  Without numba the numpy versions
give the same values up to float64 rounding (tested in ``tests/test_margins.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

try:  # pragma: no cover - exercised implicitly when numba is installed
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - every use of ``numba`` is behind HAVE_NUMBA
    HAVE_NUMBA = False


@lru_cache(maxsize=16)
def _numba_power_kernel(k: int) -> Callable:
    @numba.njit(nogil=True, cache=True)
    def kernel(S, T, out):  # pragma: no cover - compiled
        nb, m = S.shape
        p = T.shape[0]
        for b in range(nb):
            for a in range(p):
                r = b * p + a
                for i in range(m):
                    out[r, i] = (S[b, i] + T[a, i]) ** k

    return kernel


def power_of_sums_numpy(S: np.ndarray, T: np.ndarray, k: int, out: np.ndarray) -> np.ndarray:
    """Reference implementation: broadcast add then integer power by repeated squaring, in place."""
    nb, m = S.shape
    p = T.shape[0]
    Z = out.reshape(nb, p, m)
    np.add(S[:, None, :], T[None, :, :], out=Z)
    if k == 1:
        return out
    base = Z.copy()
    result_set = False
    e = k
    while e:
        if e & 1:
            if result_set:
                Z *= base
            else:
                Z[...] = base
                result_set = True
        e >>= 1
        if e:
            base *= base
    return out


def power_of_sums(
    S: np.ndarray, T: np.ndarray, k: int, out: np.ndarray, *, use_numba: bool | None = None
) -> np.ndarray:
    """``out[b*p + a, :] = (S[b, :] + T[a, :]) ** k`` for all ``b, a`` (``out`` has shape ``(nb*p, m)``)."""
    if use_numba is None:
        use_numba = HAVE_NUMBA
    if use_numba and HAVE_NUMBA:
        _numba_power_kernel(int(k))(S, T, out)
        return out
    return power_of_sums_numpy(S, T, k, out)


def margin_statistics_numpy(L: np.ndarray, y: np.ndarray, margins: np.ndarray, spread: np.ndarray,
                            M: np.ndarray) -> None:
    """``margins[r] = L[r, y_r] - max_{c != y_r} L[r, c]``, ``spread[r] = max - min`` of the wrong logits,
    ``M[y_r, :] += L[r, :]`` (``L`` is modified and restored)."""
    rows = np.arange(len(y))
    correct = L[rows, y].copy()
    L[rows, y] = -np.inf
    wrong_max = L.max(axis=1)
    L[rows, y] = np.inf
    wrong_min = L.min(axis=1)
    L[rows, y] = correct
    margins[:] = correct - wrong_max
    spread[:] = wrong_max - wrong_min
    p = M.shape[1]
    flat = (y[:, None] * p + np.arange(p)[None, :]).ravel()
    M += np.bincount(flat, weights=L.ravel(), minlength=M.size).reshape(M.shape)


if HAVE_NUMBA:

    @numba.njit(nogil=True, cache=True)
    def _margin_statistics_numba(L, y, margins, spread, M):  # pragma: no cover - compiled
        n, p = L.shape
        for r in range(n):
            yr = y[r]
            hi = -np.inf
            lo = np.inf
            for c in range(p):
                v = L[r, c]
                M[yr, c] += v
                if c != yr:
                    if v > hi:
                        hi = v
                    if v < lo:
                        lo = v
            margins[r] = L[r, yr] - hi
            spread[r] = hi - lo


def margin_statistics(L: np.ndarray, y: np.ndarray, margins: np.ndarray, spread: np.ndarray, M: np.ndarray, *,
                      use_numba: bool | None = None) -> None:
    """Per-row margin and wrong-logit spread, and the label-indexed logit sums (see the numpy reference)."""
    if use_numba is None:
        use_numba = HAVE_NUMBA
    if use_numba and HAVE_NUMBA:
        _margin_statistics_numba(L, y, margins, spread, M)
    else:
        margin_statistics_numpy(L, y, margins, spread, M)
