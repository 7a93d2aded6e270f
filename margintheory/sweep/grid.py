"""A sweep's grid: the cells (one run of ``verify``, ``solve`` or ``train`` each) of a product of parameter lists.

A :class:`Cell` is a command and its parameters; its :attr:`Cell.key` is deterministic (a readable prefix and a hash
of the command and the parameters that decide its result), so a rerun, a resumed run or a second sweep on the same
store names the same cell the same way.  The budget (``max_memory``, ``max_seconds``, ``solve``'s ``time_limit``)
travels with the cell but is not part of its identity: a cell refused or stopped under one budget is the same cell
rerun under another (``--retry-failed`` replaces its failed row).  Parameters are JSON values with finite numbers
(``nan`` and ``inf`` have no JSON form and cannot name a cell: :func:`grid_cells` refuses them).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from margintheory.errors import InputError

COMMANDS = ("verify", "solve", "train")
#: refuse grids larger than this up front (a typo such as --p 3:10000000 should not fill the disk with claims)
MAX_CELLS = 200_000
#: short names of parameters in a cell's label and key
_SHORT = {"seed": "s", "width": "w", "lr": "lr", "lambda": "lam", "family": "", "method": ""}


@dataclass(frozen=True)
class Cell:
    """One run: ``command`` with ``params`` (what decides the result) under ``budget`` (what may refuse it)."""

    command: str
    params: Mapping[str, Any]
    budget: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """``verify-p7-k3-1a2b3c4d5e6f``: command, p, k and 12 hex digits of the SHA-256 of the parameters."""
        text = json.dumps({"command": self.command, **self.params}, sort_keys=True, allow_nan=False)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        return f"{self.command}-p{self.params.get('p')}-k{self.params.get('k')}-{digest}"

    @property
    def label(self) -> str:
        """``p=7 k=3 s=0 w=32`` (the parameters that vary in sweeps, short)."""
        parts = [f"p={self.params.get('p')}", f"k={self.params.get('k')}"]
        for name, short in _SHORT.items():
            value = self.params.get(name)
            if value is not None and value != "lemma-c18":
                parts.append(f"{short}={value}" if short else str(value))
        return " ".join(parts)


def odd_values(values: Iterable[int]) -> list[int]:
    """The odd ones."""
    return [v for v in values if v % 2]


#: below this largest value, :func:`prime_values` sieves; above it, it divides each value by trial
_SIEVE_LIMIT = 10**8


def prime_values(values: Iterable[int]) -> list[int]:
    """The primes among ``values``, in their order: a sieve of Eratosthenes up to the largest value when that is
    below ``10^8`` (a long range), trial division otherwise (a few large moduli)."""
    values = list(values)
    top = max(values, default=0)
    if len(values) > 64 and top < _SIEVE_LIMIT:
        import numpy as np

        sieve = np.ones(top + 1, dtype=bool)
        sieve[:2] = False
        for d in range(2, math.isqrt(top) + 1):
            if sieve[d]:
                sieve[d * d::d] = False
        return [v for v in values if v >= 2 and bool(sieve[v])]
    return [v for v in values if v >= 2 and all(v % d for d in range(2, math.isqrt(v) + 1))]


def grid_cells(command: str, axes: Mapping[str, Sequence[Any]], fixed: Mapping[str, Any] | None = None,
               budget: Mapping[str, Any] | None = None) -> list[Cell]:
    """The cells of the product of ``axes`` (the first axis varies slowest), each with the ``fixed`` parameters
    and the ``budget``; repeated combinations are listed once.  Nothing is validated here beyond what a key needs
    (JSON values, finite numbers): every cell is validated by the library function that runs it (a bad cell is
    recorded with its error)."""
    if command not in COMMANDS:
        raise InputError(f"command must be one of {', '.join(COMMANDS)}, got {command!r}")
    names = list(axes)
    sizes = [len(axes[n]) for n in names]
    if any(s == 0 for s in sizes):
        empty = [n for n, s in zip(names, sizes, strict=True) if s == 0]
        raise InputError(f"the grid is empty: no value of {', '.join(empty)} (after the filters)")
    if math.prod(sizes) > MAX_CELLS:
        raise InputError(f"the grid has {math.prod(sizes)} cells, more than {MAX_CELLS}: split it into several "
                         "sweeps on the same store")
    cells: dict[str, Cell] = {}
    for combo in itertools.product(*(axes[n] for n in names)):
        cell = Cell(command, {**dict(zip(names, combo, strict=True)), **(fixed or {})}, dict(budget or {}))
        try:
            key = cell.key
        except (TypeError, ValueError):  # a non-finite float (json allow_nan=False), or a value JSON cannot hold
            raise InputError(f"a cell's parameters must be JSON values with finite numbers, got {dict(cell.params)}"
                             ) from None
        cells.setdefault(key, cell)
    return list(cells.values())
