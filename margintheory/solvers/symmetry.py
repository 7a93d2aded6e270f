"""The cyclic symmetry of the single-neuron problem: the real Fourier basis of ``R^p`` and the reduction of
``max_{|x| <= 1} F`` to single-frequency blocks (Lemmas C.14-C.15, docs/theory.md#lemma-c14).

Every one of the ``k + 1`` vectors is written in the orthonormal real Fourier basis (block ``j``: the constant
vector for ``j = 0``; ``sqrt(2/p) cos(2 pi j x/p), sqrt(2/p) sin(2 pi j x/p)`` for ``1 <= j < p/2``; the alternating
vector for ``j = p/2``, ``p`` even).  Lemma C.14 says that for uniform weights the objective only couples the same
frequency across the ``k + 1`` vectors.  Here that is **not assumed**: the objective is expanded in these
coordinates and split as ``F(y) = sum_j F_j(y_j) + R(y)``, where ``F_j`` collects the monomials in block ``j``
alone and ``R`` everything else (cross-frequency monomials).  ``R``'s coefficients are computed, not dropped.

Argument (elementary, not solver-certified): ``F_j`` is a form of degree ``k + 1``, so ``F_j(y_j) <= M_j |y_j|^(k+1)``
with ``M_j = max_{|y_j| = 1} F_j``; for ``|y| <= 1`` and ``k + 1 >= 2``,
``sum_j |y_j|^(k+1) <= (sum_j |y_j|^2)^((k+1)/2) <= 1``, and ``|R(y)| <= sum |coefficients of R|``.  Hence

    ``max_{|x| <= 1} F <= max(0, max_j M_j) + |R|_1``,

and each ``M_j`` is bounded above by a certified SOS relaxation (:mod:`margintheory.solvers.sos`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from margintheory.solvers.objective import SingleNeuronObjective
from margintheory.solvers.polynomial import Polynomial


@dataclass(frozen=True)
class FourierBlock:
    """Frequency ``j`` and its orthonormal real basis ``(p, d)``, ``d`` in ``{1, 2}``."""

    frequency: int
    basis: np.ndarray


def real_fourier_blocks(p: int) -> list[FourierBlock]:
    """The orthonormal real Fourier basis of ``R^p`` grouped by frequency ``0 .. floor(p/2)``."""
    x = np.arange(p)
    blocks = [FourierBlock(0, np.full((p, 1), 1.0 / np.sqrt(p)))]
    for j in range(1, (p - 1) // 2 + 1):
        ang = 2 * np.pi * j * x / p
        blocks.append(FourierBlock(j, np.sqrt(2.0 / p) * np.stack([np.cos(ang), np.sin(ang)], axis=1)))
    if p % 2 == 0:
        blocks.append(FourierBlock(p // 2, ((-1.0) ** x / np.sqrt(p))[:, None]))
    return blocks


@dataclass(frozen=True)
class BlockSplit:
    """``F = sum_j F_j + R`` in Fourier coordinates (module docstring)."""

    blocks: list[FourierBlock]
    block_polys: list[Polynomial]  # F_j in the variables (y_{1,j}, ..., y_{k,j}, y_{w,j})
    remainder_l1: float  # sum |coefficients of R|
    total_l1: float  # sum |coefficients of F|


def split_by_frequency(obj: SingleNeuronObjective) -> BlockSplit:
    """Expand ``F`` in the real Fourier coordinates of every vector and split it by frequency block."""
    blocks = real_fourier_blocks(obj.p)
    R = np.concatenate([b.basis for b in blocks], axis=1)  # orthogonal p x p
    full = obj.restricted_polynomial(R)
    sizes = [b.basis.shape[1] for b in blocks]
    owner = np.repeat(np.arange(len(blocks)), sizes)  # block of each Fourier coordinate
    var_block = np.tile(owner, obj.k + 1)  # variable layout (vector i, coordinate)
    used = full.exps > 0
    block_of_term = np.where(used, var_block[None, :], -1)
    lo = np.where(used, block_of_term, len(blocks)).min(axis=1)
    hi = block_of_term.max(axis=1)
    pure = lo == hi
    polys = []
    for j in range(len(blocks)):
        sel = pure & (lo == j)
        cols = np.flatnonzero(var_block == j)
        polys.append(Polynomial(full.exps[sel][:, cols], full.coeffs[sel]))
    return BlockSplit(blocks, polys, float(np.abs(full.coeffs[~pure]).sum()), float(np.abs(full.coeffs).sum()))
