"""Exact character tables (Murnaghan-Nakayama for ``S_n``; cyclotomic integers for any group) and the exact facts
the group upper bound rests on (Morwani et al., "Feature emergence via margin maximization", arXiv:2311.07568,
App. D.8; docs/theory.md#group-upper-bound).

**Any finite group.**  A character value ``chi_R(g)`` is the sum of the eigenvalues of ``R(g)``, each an
``ord(g)``-th root of unity.  :func:`cyclotomic_character_table` reads them off the computed orthogonal matrices
(``exp(2 pi i e / m)``, each rounded to the nearest root, the rounding error reported and bounded), so every value is
an exact element ``sum_e c_e zeta_N^e`` of ``Z[zeta_N]``, ``N`` the group's exponent; the checks below are then done
exactly in ``Z[x] / Phi_N(x)`` (python-flint): row orthogonality ``sum_C |C| chi_R(C) conj(chi_S(C)) = |G| delta``,
``chi_R(e) = d_R``, the Frobenius-Schur indicators.  Where every value is a rational integer the table is the
integer table below and the upper bound is decided in rationals; otherwise (``A_5``'s golden ratio, ``D_n``'s ``2
cos(2 pi j / n)``) its brackets are evaluated in ball arithmetic.

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
from functools import cached_property, lru_cache

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
    if G.permutations is None or G.family != "symmetric":
        raise ValueError(f"exact characters are computed for the symmetric groups; {G.name} is not one")
    n = G.permutations.shape[1]
    types = [cycle_type(G.permutations[int(c[0])].tolist()) for c in G.conjugacy_classes()]
    return [[murnaghan_nakayama(lam, mu) for mu in types] for lam in partitions(n)]


#: a computed eigenvalue must lie this close to the root of unity it is rounded to
ROOT_TOL = 1e-6


@dataclass(frozen=True)
class CyclotomicTable:
    """Character values as exact elements of ``Z[zeta_N]``: ``exponents[R][C]`` is the multiset of ``e`` (mod ``N``)
    with ``chi_R(C) = sum_e zeta_N^e``; ``rounding_error`` the largest distance of a computed eigenvalue from its
    root."""

    N: int
    exponents: list[list[tuple[int, ...]]]
    rounding_error: float

    @cached_property
    def phi(self):  # noqa: ANN201 - a python-flint fmpz_poly
        """The cyclotomic polynomial ``Phi_N`` (made once per table)."""
        import flint

        return flint.fmpz_poly.cyclotomic(self.N)

    def poly(self, r: int, c: int, conjugate: bool = False):  # noqa: ANN201 - a python-flint fmpz_poly
        """``chi_R(C)`` (or its complex conjugate) as an ``fmpz_poly`` reduced mod ``Phi_N``."""
        import flint

        coeffs = [0] * self.N
        for e in self.exponents[r][c]:
            coeffs[(-e if conjugate else e) % self.N] += 1
        return flint.fmpz_poly(coeffs) % self.phi

    def integer(self, r: int, c: int) -> int | None:
        """The value if it is a rational integer (its reduced polynomial is constant), else ``None``."""
        p = self.poly(r, c)
        return int(p[0]) if p.degree() <= 0 else None

    def text(self, r: int, c: int) -> str:
        """The exact value, written with ``cos`` (a real value) or ``zeta_N`` powers."""
        v = self.integer(r, c)
        if v is not None:
            return str(v)
        counts: dict[int, int] = {}
        for e in self.exponents[r][c]:
            counts[e % self.N] = counts.get(e % self.N, 0) + 1
        real = all(counts.get(e, 0) == counts.get((-e) % self.N, 0) for e in counts)
        terms = []
        for e in sorted(counts):
            k = counts[e]
            if real:
                if e == 0:
                    terms.append(str(k))
                elif 2 * e == self.N:
                    terms.append(f"-{k}")
                elif e < self.N - e:
                    terms.append(f"{2 * k}cos(2pi*{e}/{self.N})")
            else:
                terms.append(f"{k}z^{e}" if k > 1 else f"z^{e}")
        return " + ".join(terms).replace("+ -", "- ") + ("" if real else f" (z = exp(2pi i/{self.N}))")


def cyclotomic_character_table(G: FiniteGroup, irreps: list[Irrep]) -> CyclotomicTable:
    """The exact character table of the module docstring from the eigenvalues of ``R(g_C)`` at one representative
    ``g_C`` per conjugacy class."""
    N = G.exponent()
    orders = G.element_orders()
    reps = [int(c[0]) for c in G.conjugacy_classes()]
    table: list[list[tuple[int, ...]]] = []
    err = 0.0
    for R in irreps:
        row = []
        for g in reps:
            m = int(orders[g])
            lam = np.linalg.eigvals(R.mats[g])
            e = np.round(np.angle(lam) * m / (2 * np.pi)).astype(np.int64) % m
            err = max(err, float(np.abs(lam - np.exp(2j * np.pi * e / m)).max()))
            row.append(tuple(sorted(int(x) * (N // m) % N for x in e)))
        table.append(row)
    return CyclotomicTable(N, table, err)


@dataclass
class ExactCharacters:
    """The exact table with its sizes and the integer checks of the module docstring."""

    table: list[list[int]]  # (a cyclotomic table holds None where a value is not a rational integer)
    sizes: list[int]
    order: int
    orthogonal: bool
    square: bool
    dims_match: bool
    real_type: bool
    indicators: list[Fraction]
    trace_error: float
    cyclotomic: CyclotomicTable | None = None  # any group other than S_n (``table`` holds None where not an integer)
    method: str = "Murnaghan-Nakayama, integers"

    @property
    def integer_table(self) -> bool:
        """Every value a rational integer (then the bound is decided in rationals)."""
        return all(v is not None for row in self.table for v in row)

    @property
    def holds(self) -> bool:
        rounding = self.cyclotomic is None or self.cyclotomic.rounding_error <= ROOT_TOL
        return (self.orthogonal and self.square and self.dims_match and self.real_type and rounding
                and self.trace_error <= TRACE_TOL)

    def text_table(self) -> list[list[int | str]]:
        """The table with non-integer values written exactly as text (:meth:`CyclotomicTable.text`)."""
        if self.cyclotomic is None:
            return [list(row) for row in self.table]
        return [[v if v is not None else self.cyclotomic.text(r, c) for c, v in enumerate(row)]
                for r, row in enumerate(self.table)]

    def summary(self) -> str:
        indicators = sorted({str(i) for i in self.indicators})
        rounding = ("" if self.cyclotomic is None else
                    f"; eigenvalues within {self.cyclotomic.rounding_error:.1e} of their roots of unity (tolerance "
                    f"{ROOT_TOL:g})")
        return (f"{len(self.table)} irreps x {len(self.sizes)} classes ({self.method}){rounding}; row "
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
    """The exact table of ``G`` and the checks of the module docstring against ``irreps`` (Murnaghan-Nakayama for
    ``S_n``, :func:`cyclotomic_character_facts` for every other group)."""
    if G.family != "symmetric" or G.permutations is None:
        return cyclotomic_character_facts(G, irreps)
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


def cyclotomic_character_facts(G: FiniteGroup, irreps: list[Irrep]) -> ExactCharacters:
    """The checks of :func:`exact_character_facts`, exactly in ``Z[zeta_N] = Z[x] / Phi_N`` (module docstring)."""
    import flint

    cyc = cyclotomic_character_table(G, irreps)
    classes = G.conjugacy_classes()
    sizes = [len(c) for c in classes]
    K = len(irreps)
    P = [[cyc.poly(r, c) for c in range(len(sizes))] for r in range(K)]
    Pbar = [[cyc.poly(r, c, conjugate=True) for c in range(len(sizes))] for r in range(K)]
    phi = cyc.phi
    cls = G.class_index()
    square_class = [int(cls[G.mul[int(c[0]), int(c[0])]]) for c in classes]
    indicators: list[Fraction] = []
    for r in range(K):
        total = flint.fmpz_poly(0)
        for c, size in enumerate(sizes):
            total += size * P[r][square_class[c]]
        total = total % phi
        indicators.append(Fraction(int(total[0]), G.order) if total.degree() <= 0 else Fraction(-10**9))
    # <chi_R, chi_R> is 1, 2 or 4 for a real irrep of real, complex or quaternionic type (indicator 1, 0, -2)
    norm = {Fraction(1): 1, Fraction(0): 2, Fraction(-2): 4}
    orthogonal = all(i in norm for i in indicators)
    for r in range(K):
        for t in range(r, K):
            total = flint.fmpz_poly(0)
            for c, size in enumerate(sizes):
                total += size * P[r][c] * Pbar[t][c]
            total = total % phi
            if total != flint.fmpz_poly(G.order * norm.get(indicators[r], 0) if r == t else 0):
                orthogonal = False
    table = [[cyc.integer(r, c) for c in range(len(sizes))] for r in range(K)]
    dims_match = all(table[r][0] == R.dim for r, R in enumerate(irreps))
    float_table = np.array([[complex(sum(np.exp(2j * np.pi * e / cyc.N) for e in cyc.exponents[r][c])).real
                             for c in range(len(sizes))] for r in range(K)])
    trace_error = float(np.abs(character_table(G, irreps) - float_table).max())
    return ExactCharacters(table, sizes, G.order, orthogonal, K == len(sizes), dims_match,  # type: ignore[arg-type]
                           all(i == 1 for i in indicators), indicators, trace_error, cyc,
                           f"cyclotomic integers in Z[zeta_{cyc.N}], exact in Z[x]/Phi_{cyc.N}")
