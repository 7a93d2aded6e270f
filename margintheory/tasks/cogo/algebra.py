"""CoGO's algebra (Tian, arXiv:2410.01779; docs/theory.md#cogo): Fourier coefficients, semi-ring, potentials.

Weights of a quadratic network on ``Z_d`` (Eq. 1-2): node ``j`` has input weights ``w_a, w_b``
and output weights ``v``; in the character basis ``phi_k(g) = exp(2 pi i k g / d)`` ``w_a = sum_k z[a,k,j]
phi_k``, ``w_b = sum_k z[b,k,j] phi_k``, ``v = sum_k z[c,k,j] conj(phi_k)``. A :class:`Z` stores ``z`` as a
complex array ``(3, d, q)`` (``p`` = a, b, c; frequency ``k = 0..d-1``; node ``j``); real weights require the
Hermitian constraint ``z[p, -k] = conj z[p, k]``.

* semi-ring (Def. 5, Theorem 2): ``z1 + z2`` concatenates nodes, ``z1 * z2`` is the per-``(p, k)`` Kronecker
  product;
* monomial potentials (Def. 6, Theorem 1, Eq. 3): ``r[k1,k2,k] = sum_j z[a,k1,j] z[b,k2,j] z[c,k,j]`` and
  ``r_p[k1,k2,k] = sum_j z[p,k1,j] z[p,k2,j] z[c,k,j]`` (the main text's ``z_{c k1 i}`` in Theorem 1 is a typo
  for ``z_{c k i}``, as in Theorem 1's restatement in App. A; the code follows the appendix and the check confirms it);
* Theorem 1: ``loss = d^-1 sum_{k != 0} l_k + (d-1)/d`` with ``l_k = -2 r[k,k,k] + sum_{k1,k2} |r[k1,k2,k]|^2
  + 1/4 |sum_p sum_k' r_p[k',-k',k]|^2 + 1/4 sum_{m != 0} sum_p |sum_k' r_p[k', m-k', k]|^2``, the **mean**
  over the ``d^2`` inputs of ``|| P1perp (o / 2d - e_{a+b}) ||^2`` (the expectation in the proof, App. A; Eq. 1
  writes a sum); it assumes zero-mean input weights (``z[a,0] = z[b,0] = 0``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import logits
from margintheory.errors import InputError

A, B, C = 0, 1, 2


@dataclass(frozen=True)
class Z:
    """CoGO weights ``z[p, k, j]`` (complex, ``(3, d, q)``)."""

    z: np.ndarray

    def __post_init__(self) -> None:
        z = np.asarray(self.z, dtype=np.complex128)
        if z.ndim != 3 or z.shape[0] != 3 or z.shape[1] < 2:
            raise InputError(f"CoGO weights must have shape (3, d, q); got {z.shape}")
        object.__setattr__(self, "z", z)

    @property
    def d(self) -> int:
        return int(self.z.shape[1])

    @property
    def order(self) -> int:
        """``ord(z)``: the number of hidden nodes (Def. 2)."""
        return int(self.z.shape[2])

    def __add__(self, other: Z) -> Z:
        """Ring addition: concatenate the hidden nodes (Def. 5)."""
        return Z(np.concatenate([self.z, other.z], axis=2))

    def __mul__(self, other: Z) -> Z:
        """Ring multiplication: per ``(p, k)`` Kronecker product of the node vectors (Def. 5)."""
        prod = self.z[:, :, :, None] * other.z[:, :, None, :]
        return Z(prod.reshape(3, self.d, -1))

    def scaled(self, alpha: complex) -> Z:
        """Scalar multiplication (Def. 3); ``alpha`` real keeps the Hermitian constraint."""
        return Z(self.z * alpha)

    def hermitian_error(self) -> float:
        """``max |z[p, -k, j] - conj z[p, k, j]|``: zero iff the weights are real."""
        neg = (-np.arange(self.d)) % self.d
        return float(np.abs(self.z[:, neg, :] - np.conj(self.z)).max())


def zero(d: int) -> Z:
    """The empty network (order 0)."""
    return Z(np.zeros((3, d, 0), dtype=complex))


def one(d: int) -> Z:
    """The ring identity ``1``: one node with ``z[p, k] = 1`` for every ``k != 0``."""
    z = np.ones((3, d, 1), dtype=complex)
    z[:, 0, :] = 0
    return Z(z)


def single_frequency(d: int, k: int, abc: np.ndarray) -> Z:
    """Nodes supported on frequency ``+-k`` with values ``abc`` (``(3,)`` or ``(3, q)``) at ``+k``, conjugates
    at ``-k`` (Hermitian).  At ``k = d/2`` (even ``d``) the values must be real."""
    vals = np.asarray(abc, dtype=complex)
    vals = vals[:, None] if vals.ndim == 1 else vals
    if not 0 < k < d:
        raise InputError(f"frequency must be in 1..{d - 1}, got {k}")
    if 2 * k == d and np.abs(vals.imag).max() > 1e-12:
        raise InputError(f"frequency d/2 = {k} needs real values (phi_{k} is real)")
    z = np.zeros((3, d, vals.shape[1]), dtype=complex)
    z[:, k, :] = vals
    z[:, (-k) % d, :] = np.conj(vals) if 2 * k != d else vals.real
    return Z(z)


# -- monomial potentials -------------------------------------------------------------------------------------
def r_abc(z: Z) -> np.ndarray:
    """``r[k1, k2, k] = sum_j z[a,k1,j] z[b,k2,j] z[c,k,j]`` (all ``d^3`` of them)."""
    return np.einsum("xj,yj,zj->xyz", z.z[A], z.z[B], z.z[C], optimize=True)


def r_pp(z: Z, p: int) -> np.ndarray:
    """``r_p[k1, k2, k] = sum_j z[p,k1,j] z[p,k2,j] z[c,k,j]`` for ``p`` in {A, B}."""
    return np.einsum("xj,yj,zj->xyz", z.z[p], z.z[p], z.z[C], optimize=True)


def r_star(z: Z, p: int) -> np.ndarray:
    """``S_p[m, k] = sum_k' r_p[k', m-k', k]`` (the summed ``R_*`` term of Eq. 3)."""
    d = z.d
    zp = z.z[p]
    idx = (np.arange(d)[:, None] - np.arange(d)[None, :]) % d  # idx[m, k'] = m - k'
    conv = np.einsum("kj,mkj->mj", zp, zp[idx])  # sum_k' z[k'] z[m-k']
    return conv @ z.z[C].T


@dataclass
class LossTerms:
    """The four sums of Theorem 1 (each already divided by ``d``) and the total loss."""

    fit: float  # -2 sum_k r[k,k,k] / d
    cross: float  # sum_k sum_{k1,k2} |r[k1,k2,k]|^2 / d
    r_n: float  # 1/4 sum_k |sum_p S_p[0,k]|^2 / d
    r_star: float  # 1/4 sum_k sum_{m!=0} sum_p |S_p[m,k]|^2 / d
    constant: float  # (d-1)/d
    imag: float  # |imaginary part| of the total (0 for Hermitian z)

    @property
    def total(self) -> float:
        return self.fit + self.cross + self.r_n + self.r_star + self.constant


def theorem1_loss(z: Z) -> LossTerms:
    """Theorem 1 (Eq. 3) evaluated from the monomial potentials."""
    d = z.d
    ks = np.arange(1, d)
    R = r_abc(z)
    diag = R[ks, ks, ks].sum()
    cross = float((np.abs(R[:, :, ks]) ** 2).sum())
    SA, SB = r_star(z, A), r_star(z, B)
    rn = float((np.abs(SA[0, ks] + SB[0, ks]) ** 2).sum()) / 4
    rs = float((np.abs(SA[1:, :][:, ks]) ** 2).sum() + (np.abs(SB[1:, :][:, ks]) ** 2).sum()) / 4
    return LossTerms(
        float(-2 * diag.real / d), cross / d, rn / d, rs / d, (d - 1) / d, float(abs(diag.imag)) * 2 / d
    )


# -- real networks -------------------------------------------------------------------------------------------
def to_network(z: Z) -> tuple[PolyNetwork, float]:
    """The real network of Eq. 2 as a core :class:`PolyNetwork` (``k = 2``, ``p = d``) and the max imaginary
    part discarded (0 up to rounding for Hermitian ``z``)."""
    d = z.d
    wa = d * np.fft.ifft(z.z[A], axis=0)  # sum_k z[a,k] e^{+2 pi i k g/d}
    wb = d * np.fft.ifft(z.z[B], axis=0)
    v = np.fft.fft(z.z[C], axis=0)  # sum_k z[c,k] e^{-2 pi i k g/d}
    imag = float(max(np.abs(wa.imag).max(), np.abs(wb.imag).max(), np.abs(v.imag).max()))
    U = np.stack([wa.real.T, wb.real.T], axis=1)
    return PolyNetwork(U, v.real.T), imag


def from_network(net: PolyNetwork) -> Z:
    """Inverse of :func:`to_network`: ``z[a,k] = (1/d) sum_g w_a(g) e^{-2 pi i k g/d}``, ``z[c,k] = (1/d)
    sum_g v(g) e^{+2 pi i k g/d}``."""
    if net.k != 2:
        raise InputError(f"CoGO networks are quadratic with two inputs (k = 2); got k = {net.k}")
    d = net.p
    za = np.fft.fft(net.U[:, 0, :], axis=1).T / d
    zb = np.fft.fft(net.U[:, 1, :], axis=1).T / d
    zc = np.fft.ifft(net.W, axis=1).T
    return Z(np.stack([za, zb, zc]))


def forward_loss(net: PolyNetwork) -> float:
    """Eq. 1 by a direct forward pass: mean over all ``d^2`` inputs of ``||P1perp(o/(2d) - e_{a+b})||^2``."""
    d = net.p
    o = logits(net)  # (d^2, d), rows (a, b) with a most significant
    y = np.add.outer(np.arange(d), np.arange(d)).reshape(-1) % d
    t = o / (2 * d)
    t[np.arange(d * d), y] -= 1.0
    t -= t.mean(axis=1, keepdims=True)
    return float(np.mean(np.sum(t**2, axis=1)))
