"""The polynomial network of the papers (docs/theory.md#network) and its file formats.

``f(a)[c] = sum_i (U[i,0,a_1] + ... + U[i,k-1,a_k])^k * W[i,c]``,
``||theta_i||_2`` = Euclidean norm of the concatenation ``(U[i,0], ..., U[i,k-1], W[i])``,
``||theta||_{2,k+1} = (sum_i ||theta_i||_2^(k+1))^(1/(k+1))``.  The network is (k+1)-homogeneous.

File layout (``.npz`` or ``.safetensors``, documented in docs/network-files.md, format version 1; read and written
through :mod:`margintheory.network_io`, which also reads PyTorch files):

* ``U``: float array of shape ``(m, k, p)``; ``U[i, j]`` is neuron i's embedding of input position j.
* ``W``: float array of shape ``(m, p)``; ``W[i, c]`` is neuron i's output weight for class c.
* ``format_version``: optional int scalar, 1 (in ``.safetensors``: the ``__metadata__`` entry ``format_version``).
* ``meta__<name>``: optional per-neuron metadata, arrays whose first axis has length ``m``
  (the construction stores ``meta__frequency``, ``meta__term`` and ``meta__sign``).

The activation degree equals ``k``, the number of inputs (the papers' setting); ``p`` is read off the shapes.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from margintheory.errors import NetworkFormatError

FORMAT_VERSION = 1  # the file format version (margintheory.network_io.FORMAT_VERSION)


@dataclass(frozen=True)
class PolyNetwork:
    """Weights ``U`` (m x k x p) and ``W`` (m x p), float64, validated on construction.

    ``metadata`` maps a name to an array with first axis ``m`` (per-neuron information such as the frequency).
    """

    U: np.ndarray
    W: np.ndarray
    metadata: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        U = _as_float_array(self.U, "U")
        W = _as_float_array(self.W, "W")
        if U.ndim != 3:
            raise NetworkFormatError(f"U must have shape (m, k, p); got {U.ndim} dimensions {U.shape}")
        if W.ndim != 2:
            raise NetworkFormatError(f"W must have shape (m, p); got {W.ndim} dimensions {W.shape}")
        m, k, p = U.shape
        if W.shape != (m, p):
            raise NetworkFormatError(f"W has shape {W.shape} but U {U.shape} requires W of shape {(m, p)}")
        if m < 1 or k < 1 or p < 2:
            raise NetworkFormatError(f"empty or degenerate network: m={m}, k={k}, p={p}")
        meta = {}
        for name, arr in dict(self.metadata).items():
            arr = np.asarray(arr)
            if arr.ndim == 0 or arr.shape[0] != m:
                raise NetworkFormatError(f"metadata {name!r} must have first axis m={m}, got shape {arr.shape}")
            meta[str(name)] = arr
        object.__setattr__(self, "U", U)
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "metadata", meta)

    # -- shape -----------------------------------------------------------------------------------
    @property
    def m(self) -> int:
        """Number of neurons."""
        return int(self.U.shape[0])

    @property
    def k(self) -> int:
        """Number of inputs, which is also the activation degree."""
        return int(self.U.shape[1])

    @property
    def p(self) -> int:
        """Modulus (size of each input alphabet and number of classes)."""
        return int(self.U.shape[2])

    # -- norms -----------------------------------------------------------------------------------
    def max_abs(self) -> float:
        """The largest weight magnitude ``max(|U|, |W|)``: the scale every norm is computed relative to."""
        return float(max(np.abs(self.U).max(), np.abs(self.W).max()))

    def _binary_exponent(self) -> int:
        """``e`` with ``max |theta| = f 2^e``, ``0.5 <= f < 1`` (0 for the zero network)."""
        return math.frexp(self.max_abs())[1]

    def neuron_norms(self) -> np.ndarray:
        """``||theta_i||_2`` for every neuron: the norm of ``(u_{i,1}, ..., u_{i,k}, w_i)``.

        Computed on the weights scaled by the power of two ``2^-e`` that brings the largest magnitude into
        ``[0.5, 1)`` and scaled back: exact rescalings, so the result is the same to the last bit as without them,
        but squares of weights near the ends of the float64 range (``1e200``, ``1e-200``) neither overflow nor
        underflow.
        """
        e = self._binary_exponent()
        U, W = np.ldexp(self.U, -e), np.ldexp(self.W, -e)
        sq = np.einsum("ijc,ijc->i", U, U) + np.einsum("ic,ic->i", W, W)
        return np.ldexp(np.sqrt(sq), e)

    def norm(self) -> float:
        """``||theta||_{2,k+1} = (sum_i ||theta_i||_2^(k+1))^(1/(k+1))``, computed relative to the largest neuron
        norm (no overflow or underflow of the ``(k+1)``-th powers); ``inf`` if the norm itself exceeds float64."""
        r = self.neuron_norms()
        top = float(r.max())
        if top == 0.0 or not math.isfinite(top):
            return top
        q = self.k + 1
        return top * float(np.sum((r / top) ** q)) ** (1.0 / q)

    def scaled(self, alpha: float) -> PolyNetwork:
        """``alpha * theta`` (every weight multiplied by ``alpha``)."""
        return PolyNetwork(self.U * alpha, self.W * alpha, self.metadata)

    def normalized(self) -> PolyNetwork:
        """``theta / ||theta||_{2,k+1}``; raises for the zero network.

        Scale-invariant: the weights are first scaled by the power of two that brings their largest magnitude into
        ``[0.5, 1)`` (exact), so ``1e200 theta`` and ``1e-200 theta`` give the normalized network of ``theta``
        without overflow or underflow, and networks of ordinary scale the same bits as a plain division.
        """
        if self.max_abs() == 0.0:
            raise NetworkFormatError("the zero network cannot be normalized")
        e = self._binary_exponent()
        unit = PolyNetwork(np.ldexp(self.U, -e), np.ldexp(self.W, -e), self.metadata)
        return unit.scaled(1.0 / unit.norm())

    def subset(self, index: np.ndarray | list[int]) -> PolyNetwork:
        """The network made of the selected neurons (metadata kept)."""
        idx = np.asarray(index)
        return PolyNetwork(self.U[idx], self.W[idx], {n: a[idx] for n, a in self.metadata.items()})

    def permuted(self, perm: np.ndarray) -> PolyNetwork:
        """The same network with its neurons reordered."""
        return self.subset(np.asarray(perm))

    @staticmethod
    def concatenate(networks: list[PolyNetwork]) -> PolyNetwork:
        """Neurons of several networks side by side (the 'sum' of partial solutions); metadata kept if common."""
        if not networks:
            raise NetworkFormatError("nothing to concatenate")
        names = set.intersection(*(set(n.metadata) for n in networks))
        return PolyNetwork(
            np.concatenate([n.U for n in networks]),
            np.concatenate([n.W for n in networks]),
            {name: np.concatenate([n.metadata[name] for n in networks]) for name in names},
        )

    # -- I/O -------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the documented layout atomically (temporary file + rename): ``.npz`` or ``.safetensors`` by suffix.

        Any other suffix is an :class:`~margintheory.errors.InputError` (PyTorch files are read, never written).
        """
        from margintheory.network_io import META_PREFIX, write_arrays

        write_arrays(path, {"U": self.U, "W": self.W, **{META_PREFIX + n: a for n, a in self.metadata.items()}})

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, names: str | None = None, k: int | None = None,
             max_memory: int | None = None, max_seconds: float | None = None) -> PolyNetwork:
        """Read a network from ``.npz``, ``.safetensors`` or a PyTorch file (read without torch, weights only).

        ``names`` maps other tensor names and layouts (``"U=KEY,W=KEY"``, see :mod:`margintheory.network_io.names`);
        ``k`` is needed only when ``U`` names one matrix shared by all inputs.  Headers are read first: a file whose
        tensors exceed ``max_memory`` (default 2 GiB) is refused before any data is read; parsing a PyTorch pickle
        stops after ``max_seconds`` (``None``: no limit).  Any defect raises
        :class:`NetworkFormatError` (or :class:`~margintheory.errors.RefusedError`) with one line naming the file.
        """
        from margintheory.network_io import DEFAULT_MAX_MEMORY, read_network_arrays

        U, W, meta = read_network_arrays(path, names=names, k=k, max_memory=max_memory or DEFAULT_MAX_MEMORY,
                                         max_seconds=max_seconds)
        try:
            return cls(U, W, meta)
        except NetworkFormatError as exc:
            raise NetworkFormatError(f"{path}: {exc}") from None


def _as_float_array(x: object, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise NetworkFormatError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise NetworkFormatError(f"{name} contains {bad} non-finite value(s) (NaN or inf)")
    return arr
