"""Exact character tables of ``S_n`` (Murnaghan-Nakayama) and the exact facts the group upper bound rests on
(Morwani et al., arXiv:2311.07568, App. D.8; docs/theory.md#group-upper-bound).

The float representations of :mod:`margintheory.core.representations` build the networks; the upper end ``U`` needs
the characters only, and those of ``S_n`` are integers given by the Murnaghan-Nakayama rule: ``chi^lam(mu)`` is the
signed sum over the ways of removing rim hooks of lengths ``mu_1, mu_2, ...`` from ``lam`` (sign ``(-1)^height``).
On beta-numbers (``lam_i + l - i``) removing a rim hook of length ``r`` moves one bead from ``b`` to an empty
``b - r``, with sign ``(-1)^(beads strictly between)``.  :func:`exact_character_table` computes the table in the
package's order (irreps by :func:`~margintheory.core.representations.partitions`, classes by
:meth:`~margintheory.core.groups.FiniteGroup.conjugacy_classes`, each class's cycle type read off its representative)
and :func:`exact_character_facts` checks in integers: row orthogonality ``sum_C |C| chi_R(C) chi_R'(C) = |G|
delta``, as many rows as classes, ``chi_R(e) = d_R``, Frobenius-Schur indicators ``(1/|G|) sum_g chi_R(g^2) = 1``
(every irrep of real type, Theorem 7.9's setting) from the group table's squares, and agreement with the traces of the
computed orthogonal representations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from margintheory.core.groups import FiniteGroup
from margintheory.core.representations import Irrep, character_table, partitions

#: the float characters (traces of the computed representations) must round to the exact table within this
TRACE_TOL = 1e-9


@lru_cache(maxsize=4096)
def _mn(beta: tuple[int, ...], mu: tuple[int, ...]) -> int:
    if not mu:
        return 1
    r, rest = mu[0], mu[1:]
    beads = set(beta)
    total = 0
    for b in beta:
        if b - r >= 0 and b - r not in beads:
            between = sum(1 for c in beta if b - r < c < b)
            moved = tuple(sorted((beads - {b}) | {b - r}))
            total += (-1) ** between * _mn(moved, rest)
    return total


def murnaghan_nakayama(lam: tuple[int, ...], mu: tuple[int, ...]) -> int:
    """``chi^lam`` at a permutation of cycle type ``mu`` (both partitions of the same ``n``), exact."""
    if sum(lam) != sum(mu):
        raise ValueError(f"partitions of different sizes: {lam}, {mu}")
    ell = len(lam)
    beta = tuple(sorted(lam[i] + ell - 1 - i for i in range(ell)))
    return _mn(beta, tuple(mu))  # the rule holds for the hooks removed in any order of the parts of mu


def cycle_type(perm: list[int]) -> tuple[int, ...]:
    """The cycle lengths of a permutation (image tuple), decreasing, fixed points included."""
    seen, out = set(), []
    for s in range(len(perm)):
        if s not in seen:
            length, x = 0, s
            while x not in seen:
                seen.add(x)
                x = perm[x]
                length += 1
            out.append(length)
    return tuple(sorted(out, reverse=True))


def exact_character_table(G: FiniteGroup) -> list[list[int]]:
    """``X[R][C]`` in integers for ``S_n`` (module docstring); ``ValueError`` for a group that is not ``S_n``."""
    if G.permutations is None:
        raise ValueError(f"exact characters are computed for the symmetric groups; {G.name} is not one")
    n = G.permutations.shape[1]
    types = [cycle_type(G.permutations[int(c[0])].tolist()) for c in G.conjugacy_classes()]
    return [[murnaghan_nakayama(lam, mu) for mu in types] for lam in partitions(n)]


@dataclass
class ExactCharacters:
    """The exact table with its sizes and the integer checks of the module docstring."""

    table: list[list[int]]
    sizes: list[int]
    order: int
    orthogonal: bool
    square: bool
    dims_match: bool
    real_type: bool
    indicators: list[Fraction]
    trace_error: float

    @property
    def holds(self) -> bool:
        return self.orthogonal and self.square and self.dims_match and self.real_type and self.trace_error <= TRACE_TOL

    def summary(self) -> str:
        indicators = sorted({str(i) for i in self.indicators})
        return (f"{len(self.table)} irreps x {len(self.sizes)} classes (Murnaghan-Nakayama, integers); row "
                f"orthogonality sum_C |C| chi chi' = |G| delta {'exact' if self.orthogonal else 'FAILS'}; chi(e) = d_R "
                f"{'yes' if self.dims_match else 'NO'}; Frobenius-Schur indicators {indicators} "
                f"(1 = real type); max |trace of the computed representation - chi| = {self.trace_error:.2e} "
                f"(tolerance {TRACE_TOL:g})")


def frobenius_schur_exact(G: FiniteGroup, table: list[list[int]], sizes: list[int]) -> list[Fraction]:
    """``(1/|G|) sum_C |C| chi_R(class of g_C^2)`` for every row, exact (a table that is not a character table may
    give a non-integer)."""
    cls = G.class_index()
    square_class = [int(cls[G.mul[int(c[0]), int(c[0])]]) for c in G.conjugacy_classes()]
    return [Fraction(sum(size * row[square_class[j]] for j, size in enumerate(sizes)), G.order) for row in table]


def exact_character_facts(G: FiniteGroup, irreps: list[Irrep]) -> ExactCharacters:
    """The exact table of ``G`` (``S_n``) and the checks of the module docstring against ``irreps``."""
    table = exact_character_table(G)
    sizes = [len(c) for c in G.conjugacy_classes()]
    K = len(table)
    gram = [[sum(sizes[c] * table[r][c] * table[s][c] for c in range(K)) for s in range(K)] for r in range(K)]
    orthogonal = all(gram[r][s] == (G.order if r == s else 0) for r in range(K) for s in range(K))
    indicators = frobenius_schur_exact(G, table, sizes)
    dims_match = len(irreps) == K and all(table[r][0] == R.dim for r, R in enumerate(irreps))
    trace_error = (float(np.abs(character_table(G, irreps) - np.array(table)).max())
                   if len(irreps) == K else math.inf)
    return ExactCharacters(table, sizes, G.order, orthogonal, K == len(sizes), dims_match,
                           all(i == 1 for i in indicators), indicators, trace_error)
