"""Tensors described by a file's header and read only on demand, under a memory budget.

Every reader (``.npz``, ``.safetensors``, PyTorch) first produces :class:`LazyTensor` objects from the file's
headers alone (name, shape, dtype); :meth:`TensorFile.load` then checks that the selected tensors fit the memory
budget (their raw bytes plus the float64 copy the network keeps) *before* reading any data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from margintheory.errors import MarginTheoryError, NetworkFormatError
from margintheory.network_io._files import DAMAGED_FILE_ERRORS, damaged
from margintheory.runtime.budget import format_bytes, memory_refusal

BFLOAT16 = "bfloat16"  # numpy has no bfloat16: stored as uint16, widened to float32 on reading

#: Default memory budget for reading a network file (the exhaustive engine's default budget).
DEFAULT_MAX_MEMORY = 2 * 2**30


def dtype_itemsize(dtype: np.dtype | str) -> int:
    return 2 if dtype == BFLOAT16 else np.dtype(dtype).itemsize


def dtype_name(dtype: np.dtype | str) -> str:
    return BFLOAT16 if dtype == BFLOAT16 else str(np.dtype(dtype))


@dataclass(frozen=True)
class LazyTensor:
    """A tensor known from a header: ``name``, ``shape``, ``dtype``; ``loader()`` reads its data from the file."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype | str
    loader: Callable[[], np.ndarray] = field(repr=False, compare=False)
    read_nbytes: int | None = None  # bytes read to produce it when more than its own (a view into a larger storage)
    strided: bool = False  # stored in another order (Fortran, a transposed view): reading it makes a copy

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * dtype_itemsize(self.dtype)

    def describe(self) -> str:
        """``name (shape) dtype``; a name longer than 120 characters is shortened in the middle."""
        name = self.name if len(self.name) <= 120 else f"{self.name[:80]}...{self.name[-30:]}"
        return f"{name} {tuple(self.shape)} {dtype_name(self.dtype)}"


def bfloat16_to_float32(raw: np.ndarray) -> np.ndarray:
    """Widen bfloat16 bit patterns (uint16) to float32 exactly (bfloat16 is the upper half of a float32)."""
    return (raw.astype(np.uint32) << 16).view(np.float32)


@dataclass
class TensorFile:
    """An open network file: ``tree`` (nested dicts / lists whose leaves are :class:`LazyTensor` or plain values),
    ``metadata`` (string pairs stored by the format), ``kind`` (``'npz'``, ``'safetensors'``, ``'pytorch'``)."""

    path: str
    kind: str
    tree: Any
    max_memory: int
    metadata: dict[str, str] = field(default_factory=dict)
    handle: BinaryIO | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in reversed(self.closers):
            close()
        if self.handle is not None:
            self.handle.close()

    def __enter__(self) -> TensorFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def flat(self) -> dict[str, Any]:
        """Every leaf by its dotted name (``model.embed.weight``; list items by index)."""
        return dict(iter_leaves(self.tree))

    def tensors(self) -> dict[str, LazyTensor]:
        return {k: v for k, v in self.flat().items() if isinstance(v, LazyTensor)}

    def load(self, tensors: Sequence[LazyTensor], extra: int = 0) -> list[np.ndarray]:
        """Read the given tensors after checking that they fit ``max_memory`` (raw bytes, plus a float64 copy of
        those stored otherwise, plus ``extra`` bytes the caller will build from them)."""
        need = extra + sum(max(t.nbytes, t.read_nbytes or 0) + _conversion_bytes(t) for t in tensors)
        if need > self.max_memory:
            big = max(tensors, key=lambda t: max(t.nbytes, t.read_nbytes or 0))
            raise memory_refusal(f"{self.path}: reading {', '.join(t.describe() for t in tensors)} (largest: "
                                 f"{big.name}, {format_bytes(big.nbytes)} as stored)", need, self.max_memory)
        out = []
        for t in tensors:
            try:
                arr = t.loader()
            except MarginTheoryError:
                raise
            except DAMAGED_FILE_ERRORS as exc:
                raise damaged(self.path, exc) from None
            if arr.shape != tuple(t.shape):  # a reader bug, never the file's fault
                raise NetworkFormatError(f"{self.path}: tensor {t.name} read with shape {arr.shape}, header {t.shape}")
            out.append(arr)
        return out


def _conversion_bytes(t: LazyTensor) -> int:
    """Bytes of the float64 copy made from a tensor (none when it is stored as native float64)."""
    native = t.dtype != BFLOAT16 and np.dtype(t.dtype) == np.dtype(np.float64)
    return 8 * t.numel * (int(not native) + int(t.strided))


def iter_leaves(tree: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted name, leaf)`` pairs of a nested mapping / list structure."""
    if isinstance(tree, Mapping):
        for key, value in tree.items():
            yield from iter_leaves(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(tree, (list, tuple)) and not isinstance(tree, LazyTensor):
        for i, value in enumerate(tree):
            yield from iter_leaves(value, f"{prefix}.{i}" if prefix else str(i))
    else:
        yield prefix, tree
