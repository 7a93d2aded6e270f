"""Fused elementwise kernel of the margin engine: ``A[b*p + a, i] = (S[b, i] + T[a, i]) ** k``.

This is the only non-BLAS work of the exhaustive engine.  It is compiled with numba when numba is importable
(one compiled kernel per degree ``k``, parallel over rows) and otherwise falls back to in-place numpy, which
gives identical values up to float64 rounding (tested in ``tests/test_margins.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np

try:  # pragma: no cover - exercised implicitly when numba is installed
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    numba = None
    HAVE_NUMBA = False


@lru_cache(maxsize=16)
def _numba_kernel(k: int) -> Callable:
    @numba.njit(parallel=True, fastmath=False, cache=True)
    def kernel(S, T, out):  # pragma: no cover - compiled
        nb, m = S.shape
        p = T.shape[0]
        for r in numba.prange(nb * p):
            b = r // p
            a = r - b * p
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
        _numba_kernel(int(k))(S, T, out)
        return out
    return power_of_sums_numpy(S, T, k, out)
