"""The numpy backend's chunk kernel of the exhaustive engine: numba-compiled power and statistics (numpy fallbacks)
around one BLAS GEMM (docs/theory.md#margins).

A chunk is a block of input prefixes ``b`` with all ``p`` last residues ``a``: activations
``A[b*p + a, :] = (S[b, :] + T[a, :])^k``, logits ``L = A W``, and per row the margin
``L[r, y_r] - max_{c != y_r} L[r, c]``, the spread of the wrong logits and the label-indexed sums ``M[y, c]``.
The kernels themselves are :mod:`margintheory.backends.kernels` (``nogil`` numba, run by the engine's worker threads).
"""

from __future__ import annotations

import numpy as np

from margintheory.backends.kernels import HAVE_NUMBA, margin_statistics, power_of_sums

__all__ = ["HAVE_NUMBA", "chunk_statistics", "margin_statistics", "power_of_sums"]


def chunk_statistics(S: np.ndarray, T: np.ndarray, W: np.ndarray, k: int, y: np.ndarray, margins: np.ndarray,
                     spread: np.ndarray, M: np.ndarray, A: np.ndarray, L: np.ndarray, *,
                     use_numba: bool | None = None) -> None:
    """One chunk: ``A = (S + T)^k`` (rows ``b*p + a``), ``L = A W`` and the statistics written into ``margins``,
    ``spread`` (per row) and accumulated into ``M``; ``A`` and ``L`` are the caller's buffers of the chunk's rows."""
    power_of_sums(S, T, k, A, use_numba=use_numba)
    np.matmul(A, W, out=L)
    margin_statistics(L, y, margins, spread, M, use_numba=use_numba)
