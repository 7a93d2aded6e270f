"""Finite groups as multiplication tables (Morwani et al. Sec. 7.6, App. D.8; docs/theory.md#finite-groups).

A :class:`FiniteGroup` stores its elements as indices ``0..|G|-1`` with the identity at index 0, the table
``mul[a, b] = index of a*b``, the inverses and the conjugacy classes ``C(a) = {g a g^-1}`` (computed from the
table, not assumed).  Element order (documented, used by network files of the ``group`` task):

* ``S_n``: permutations of ``0..n-1`` as image tuples in lexicographic order (identity first); the product is
  composition ``(a*b)(x) = a(b(x))``.
* ``C_n``: residues ``0..n-1``; the product is addition mod ``n``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import numpy as np

from margintheory.errors import InputError

MAX_SYMMETRIC_DEGREE = 6
MAX_CYCLIC_ORDER = 400


@dataclass(frozen=True)
class FiniteGroup:
    """A finite group given by its multiplication table (identity = element 0)."""

    name: str
    mul: np.ndarray
    labels: list[str] = field(default_factory=list)
    permutations: np.ndarray | None = None  # (|G|, n) image tuples for S_n

    @property
    def order(self) -> int:
        return int(self.mul.shape[0])

    def inverses(self) -> np.ndarray:
        """``inv[a]`` with ``a * inv[a] = e``."""
        return np.argmax(self.mul == 0, axis=1)

    def conjugacy_classes(self) -> list[np.ndarray]:
        """Orbits of ``a -> g a g^-1``, the identity class first, then by (size, smallest element)."""
        inv = self.inverses()
        c = self.mul[self.mul, inv[:, None]]  # c[g, a] = (g a) g^-1
        seen = np.zeros(self.order, dtype=bool)
        classes = []
        for a in range(self.order):
            if not seen[a]:
                orbit = np.unique(c[:, a])
                seen[orbit] = True
                classes.append(orbit)
        classes.sort(key=lambda cl: (cl[0] != 0, len(cl), int(cl[0])))
        return classes

    def class_index(self) -> np.ndarray:
        """``cls[a]`` = index of the conjugacy class of ``a`` in :meth:`conjugacy_classes` order."""
        out = np.empty(self.order, dtype=np.int64)
        for i, cl in enumerate(self.conjugacy_classes()):
            out[cl] = i
        return out

    def product_labels(self) -> np.ndarray:
        """Class index of ``a*b`` for every row ``(a, b)`` of ``input_grid(|G|, 2)`` (``a`` most significant)."""
        return self.mul.reshape(-1).astype(np.int64)

    def check_axioms(self) -> dict[str, bool]:
        """Closure (a Latin square), identity at 0, associativity (exhaustive), inverses."""
        n = self.order
        rows_ok = all(len(set(r)) == n for r in self.mul.tolist())
        cols_ok = all(len(set(c)) == n for c in self.mul.T.tolist())
        ident = bool(
            np.array_equal(self.mul[0], np.arange(n)) and np.array_equal(self.mul[:, 0], np.arange(n))
        )
        # (ab)c == a(bc) for all triples, vectorized
        left = self.mul[self.mul[:, :, None], np.arange(n)[None, None, :]]  # mul[mul[a,b], c]
        right = self.mul[np.arange(n)[:, None, None], self.mul[None, :, :]]  # mul[a, mul[b,c]]
        return {
            "latin square": rows_ok and cols_ok,
            "identity": ident,
            "associative": bool(np.array_equal(left, right)),
        }


def symmetric_group(n: int) -> FiniteGroup:
    """``S_n`` with elements in lexicographic order of their image tuples; ``(a*b)(x) = a(b(x))``."""
    if not 2 <= n <= MAX_SYMMETRIC_DEGREE:
        raise InputError(f"S_n is supported for 2 <= n <= {MAX_SYMMETRIC_DEGREE}, got n={n}")
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)
    weights = n ** np.arange(n - 1, -1, -1, dtype=np.int64)
    codes = perms @ weights  # increasing, since the order is lexicographic
    prod = perms[:, None, :][np.arange(len(perms))[:, None, None], 0, perms[None, :, :]]  # a[b[x]]
    mul = np.searchsorted(codes, prod @ weights).astype(np.int64)
    labels = [cycle_notation(p) for p in perms.tolist()]
    return FiniteGroup(f"S{n}", mul, labels, perms)


def cyclic_group(n: int) -> FiniteGroup:
    """``C_n = Z_n`` with element ``j`` = residue ``j``; the product is addition mod ``n``.

    ``C_2`` is ``S_2`` (residue ``j`` is the permutation ``x -> x + j mod 2``) and carries those permutations: its
    two irreps (trivial and sign) are of real type, so it is checked on the real-type path (Theorem 7.9, the exact
    character table by Murnaghan-Nakayama), as ``S2`` is; every other ``C_n`` has complex-type irreps."""
    if not 2 <= n <= MAX_CYCLIC_ORDER:
        raise InputError(f"C_n is supported for 2 <= n <= {MAX_CYCLIC_ORDER}, got n={n}")
    r = np.arange(n)
    perms = np.array([[0, 1], [1, 0]], dtype=np.int64) if n == 2 else None
    return FiniteGroup(f"C{n}", (r[:, None] + r[None, :]) % n, [str(j) for j in range(n)], perms)


def cycle_notation(perm: list[int]) -> str:
    """``(0 1)(2 3)`` style label of a permutation given by its image tuple; ``e`` for the identity."""
    seen, out = set(), []
    for s in range(len(perm)):
        if s in seen:
            continue
        cyc, x = [], s
        while x not in seen:
            seen.add(x)
            cyc.append(x)
            x = perm[x]
        if len(cyc) > 1:
            out.append("(" + " ".join(map(str, cyc)) + ")")
    return "".join(out) or "e"


def parse_group(name: str) -> FiniteGroup:
    """``S3``/``S_4``/``s5`` -> symmetric group, ``C7``/``Z7``/``C_7`` -> cyclic group; else
    :class:`InputError`."""
    m = re.fullmatch(r"\s*([SsCcZz])_?(\d+)\s*", str(name))
    if not m:
        raise InputError(f"unknown group {name!r}: use S3..S{MAX_SYMMETRIC_DEGREE} or C<n> (e.g. S4, C7)")
    kind, n = m.group(1).upper(), int(m.group(2))
    return symmetric_group(n) if kind == "S" else cyclic_group(n)
