"""Lemma C.14 (docs/theory.md#lemma-c14) exactly, for symbolic weight vectors and small ``(p, k)``.

The single-neuron class-weighted objective (Def. C.12-C.13, uniform ``tau``)::

    eta(delta) = E_a[(u_1[a_1] + ... + u_k[a_k])^k w[a_1 + ... + a_k - delta]],
    objective  = eta(0) - E_{delta != 0} eta(delta)

is expanded, with the ``k p + p`` weights ``u_i[a]``, ``w[c]`` as independent symbols, into a polynomial with
rational coefficients, one multinomial type ``e = (e_1..e_k)`` (``sum e = k``) at a time.  The right-hand side
``k!/((p-1) p^k) sum_{j != 0} w^(-j) prod_i u_i^(j)`` is expanded with the DFT computed in ``Q(omega_p)``
(integer vectors over the powers of ``omega_p``, reduced modulo the cyclotomic polynomial ``Phi_p``; the sum over
``j`` is done in the field, its closed form is not used).  Both are compared coefficient by coefficient.

Why monomials vanish: a type with some ``e_i = 0`` does not involve ``a_i``; summing over ``a_i`` turns
``w[a_1 + ... + a_k - delta]`` into ``sum_x w[x]``, so that term of ``eta(delta)`` does not depend on ``delta`` and
cancels in ``eta(0) - E_{delta != 0} eta(delta)``.  Only the fully mixed type ``e = (1, ..., 1)`` (multinomial
coefficient ``k!``) survives.  Both facts are checked exactly (every coefficient of every type).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import partial

import numpy as np
import sympy as sp

from margintheory.core.cyclotomic import rational_parts
from margintheory.core.problems import ModularAddition
from margintheory.core.theory import int_at_least
from margintheory.engines.margins import input_grid
from margintheory.errors import InputError, RefusedError
from margintheory.runtime.budget import grid_points
from margintheory.symbolic.derivation import Derivation

MAX_TERMS = 60_000  # p^(k+1) monomials of the fully mixed type
MAX_WORK = 1_000_000  # multinomial types x p^(k+1): exact rational updates (about 10 s)

Monomial = tuple[tuple[int, int], ...]  # sorted (variable index, power)


def validate_fourier_pk(p: object, k: object) -> tuple[int, int]:
    """``p >= 2`` and ``k >= 1`` integers with ``p^(k+1) <= MAX_TERMS`` monomials and at most :data:`MAX_WORK`
    exact updates (``C(2k-1, k)`` multinomial types times ``p^(k+1)``), else :class:`RefusedError` -- decided from
    the sizes alone, before any power of ``p`` is formed."""
    p, k = int_at_least("p", p, 2), int_at_least("k", k, 1)
    refuse_large_expansion(p, k)
    return p, k


def _within_limits(p: int, k: int) -> bool:
    terms = p ** (k + 1)
    return terms <= MAX_TERMS and math.comb(2 * k - 1, k) * terms <= MAX_WORK


def largest_p_within_limits(k: int) -> int:
    """The largest ``p >= 2`` that both limits allow at this ``k`` (1 when none), for the refusal's examples."""
    p = 1
    while _within_limits(p + 1, k):
        p += 1
    return p


def _limit_examples() -> str:
    shown = [(k, largest_p_within_limits(k)) for k in range(2, 8)]
    return "largest p allowed: " + ", ".join(f"{p} at k = {k}" for k, p in shown if p >= 2)


def refuse_large_expansion(p: int, k: int) -> None:
    """:class:`RefusedError` beyond :data:`MAX_TERMS` monomials or :data:`MAX_WORK` exact updates (validated
    integers; decided from the sizes alone)."""
    terms = grid_points(p, k + 1)
    if terms > MAX_TERMS:
        shown = terms if terms != math.inf else "more than 2^128"
        raise RefusedError(f"the exact Fourier reduction expands p^(k+1) = {shown} monomials; the limit is "
                           f"{MAX_TERMS} ({_limit_examples()})")
    work = math.comb(2 * k - 1, k) * int(terms)
    if work > MAX_WORK:
        raise RefusedError(f"the exact Fourier reduction makes C(2k-1, k) p^(k+1) = {work} exact rational updates; "
                           f"the limit is {MAX_WORK} ({_limit_examples()})")


def _u(i: int, a: int, p: int) -> int:
    return i * p + a


def _w(c: int, p: int, k: int) -> int:
    return k * p + c


def _monomial(factors: list[tuple[int, int]]) -> Monomial:
    out: dict[int, int] = defaultdict(int)
    for var, power in factors:
        if power:
            out[var] += power
    return tuple(sorted(out.items()))


def exponent_types(k: int) -> list[tuple[int, ...]]:
    """All ``e in N^k`` with ``sum e = k`` (the multinomial types of ``(u_1 + ... + u_k)^k``)."""
    return list(_compositions(k, k))


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """``e in N^parts`` with ``sum e = total`` in lexicographic order (``C(total+parts-1, parts-1)`` of them,
    generated directly rather than filtered out of all ``(total+1)^parts`` tuples)."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def objective_by_type(p: int, k: int) -> dict[tuple[int, ...], dict[Monomial, Fraction]]:
    """``eta(0) - E_{delta != 0} eta(delta)`` split by multinomial type, from Definition C.12 (exact rationals)."""
    return _objective_by_type(*validate_fourier_pk(p, k))


def _objective_by_type(p: int, k: int) -> dict[tuple[int, ...], dict[Monomial, Fraction]]:
    grid = input_grid(p, k)
    out: dict[tuple[int, ...], dict[Monomial, Fraction]] = {}
    for e in exponent_types(k):
        multinomial = Fraction(math.factorial(k), math.prod(math.factorial(x) for x in e))
        poly: dict[Monomial, Fraction] = defaultdict(Fraction)
        for a in grid.tolist():
            s = sum(a) % p
            u_part = [(_u(i, ai, p), ei) for i, (ai, ei) in enumerate(zip(a, e, strict=True))]
            for delta in range(p):
                weight = Fraction(1) if delta == 0 else Fraction(-1, p - 1)
                mono = _monomial(u_part + [(_w((s - delta) % p, p, k), 1)])
                poly[mono] += multinomial * weight / p**k
        out[e] = {m: c for m, c in poly.items() if c != 0}
    return out


def fourier_side(p: int, k: int) -> dict[Monomial, Fraction]:
    """``k!/((p-1) p^k) sum_{j != 0} w^(-j) prod_i u_i^(j)`` expanded, the DFT taken in ``Q(omega_p)``.

    ``w^(-j) = sum_c w[c] omega^(j c)`` and ``u_i^(j) = sum_a u_i[a] omega^(-j a)``; the monomial
    ``w[c] prod u_i[a_i]`` collects ``sum_{j != 0} omega^(j (c - a_1 - ... - a_k))``, built as an integer vector over
    the powers of ``omega`` and reduced modulo ``Phi_p`` (it must come out rational).
    """
    return _fourier_side(*validate_fourier_pk(p, k))


def _fourier_side(p: int, k: int) -> dict[Monomial, Fraction]:
    tuples = input_grid(p, k + 1)  # rows (a_1..a_k, c)
    t = (tuples[:, k] - tuples[:, :k].sum(axis=1)) % p
    vec = np.zeros((len(tuples), p), dtype=np.int64)
    for j in range(1, p):
        np.add.at(vec, (np.arange(len(tuples)), (j * t) % p), 1)
    consts, rational = rational_parts(vec)
    if not rational:
        raise ArithmeticError("sum_{j != 0} omega^(j t) did not reduce to a rational number")
    scale = Fraction(math.factorial(k), (p - 1) * p**k)
    out = {}
    for row, value in zip(tuples.tolist(), consts.tolist(), strict=True):
        if value:
            factors = [(_u(i, ai, p), 1) for i, ai in enumerate(row[:k])] + [(_w(row[k], p, k), 1)]
            out[_monomial(factors)] = scale * value
    return out


@dataclass(frozen=True)
class TypeReport:
    """One multinomial type ``e``: its coefficient, how many monomials survive, and why it vanishes (or not)."""

    exponents: tuple[int, ...]
    multinomial: int
    surviving_monomials: int
    vanishes: bool
    reason: str


@dataclass(frozen=True)
class FourierReduction:
    """Outcome of the exact check of Lemma C.14 at one ``(p, k)``."""

    p: int
    k: int
    types: list[TypeReport]
    monomials_compared: int
    matches: bool
    seconds: float

    @property
    def only_fully_mixed_survives(self) -> bool:
        return all(t.vanishes == (min(t.exponents) == 0) for t in self.types)


def check_fourier_reduction(p: int | ModularAddition, k: int | None = None) -> FourierReduction:
    """Expand both sides of Lemma C.14 and compare them exactly; classify every multinomial type.

    ``p`` is an integer ``>= 2`` with ``k`` (validated here) or a :class:`~margintheory.core.problems.ModularAddition`
    (validated when it was made); either way the sizes are refused up front beyond :data:`MAX_TERMS`."""
    start = time.perf_counter()
    if isinstance(p, ModularAddition):
        problem = p
        if k is not None and k != problem.k:
            raise InputError(f"k = {k} given with a problem that has k = {problem.k}")
        p, k = problem.p, problem.k
        refuse_large_expansion(p, k)
    else:
        p, k = validate_fourier_pk(p, k)
    by_type = _objective_by_type(p, k)
    rhs = _fourier_side(p, k)
    lhs: dict[Monomial, Fraction] = defaultdict(Fraction)
    types = []
    for e, poly in by_type.items():
        for m, c in poly.items():
            lhs[m] += c
        missing = [i + 1 for i, x in enumerate(e) if x == 0]
        reason = (f"a_{missing[0]} is free: summing it turns w[a_1+...+a_k-delta] into sum_x w[x], "
                  "independent of delta, which cancels" if missing else
                  "fully mixed: the only type that survives (Lemma C.14)")
        types.append(TypeReport(e, math.factorial(k) // math.prod(math.factorial(x) for x in e), len(poly),
                                not poly, reason))
    lhs = {m: c for m, c in lhs.items() if c != 0}
    keys = set(lhs) | set(rhs)
    matches = all(lhs.get(m, 0) == rhs.get(m, 0) for m in keys)
    return FourierReduction(p, k, types, len(keys), matches, time.perf_counter() - start)


def lemma_c14_statement(p: int, k: int) -> sp.Equality:
    """``eta(0) - 1/(p-1) sum_{delta != 0} eta(delta) = k!/((p-1)p^k) sum_{j != 0} w^(-j) prod_i u_i^(j)``."""
    eta, what = sp.Function("eta"), sp.Function("what")
    delta, j = sp.symbols("delta j", integer=True)
    uhats = [sp.Function(f"uhat_{i + 1}") for i in range(k)]
    lhs = eta(0) - sp.Sum(eta(delta), (delta, 1, p - 1)) / (p - 1)
    rhs = sp.Rational(math.factorial(k), (p - 1) * p**k) * sp.Sum(what(-j) * sp.Mul(*[u(j) for u in uhats]),
                                                                  (j, 1, p - 1))
    return sp.Eq(lhs, rhs, evaluate=False)


def _type_vanishes(t: TypeReport) -> bool:
    """No monomial of this exponent type survives ``eta(0) - E_delta eta(delta)``."""
    return t.surviving_monomials == 0


def _type_fully_mixed(t: TypeReport, k: int) -> bool:
    """The surviving type is the fully mixed monomial, with multinomial coefficient ``k!``."""
    return t.multinomial == math.factorial(k) and min(t.exponents) == 1


def fourier_derivation(p: int, k: int) -> Derivation:
    """Lemma C.14 at ``(p, k)`` as a derivation: (C.9), the vanishing types, and the exact identity."""
    res = check_fourier_reduction(p, k)
    P, eta0, rest = sp.symbols("p eta_0 T", positive=True)
    d = Derivation(f"Fourier reduction of the single-neuron objective (Lemma C.14), p = {p}, k = {k}")
    c9 = sp.Eq(eta0 - rest / (P - 1), P / (P - 1) * (eta0 - (eta0 + rest) / P), evaluate=False)
    d.exact(c9, "with T = sum_{delta != 0} eta(delta), eta(0) - T/(p-1) = p/(p-1) (eta(0) - E_delta eta)",
            "Lemma C.14, (C.9)", scope="all p")
    d.exact(sp.Eq(1 + 1 / (P - 1), P / (P - 1), evaluate=False), "the scalar identity behind (C.9); the text prints "
            "'1 - 1/(p-1) = p/(p-1)', which is false (1 - 1/(p-1) - p/(p-1) = -2/(p-1))",
            "Lemma C.14, (C.9) (corrected)", scope="all p")
    for t in res.types:
        e_str = ",".join(map(str, t.exponents))
        label = sp.Symbol(f"objective part of type ({e_str})")
        if t.vanishes:
            d.exact(sp.Eq(label, 0), t.reason, "Lemma C.14 (proof)", proof=partial(_type_vanishes, t),
                    method="all coefficients of this type computed exactly from Def. C.12 (Fractions)",
                    scope=f"p = {p}, k = {k}")
        else:
            d.exact(sp.Eq(sp.Symbol(f"multinomial coefficient of type ({e_str})"), t.multinomial),
                    f"{t.reason}; {t.surviving_monomials} monomials", "Lemma C.14 (proof)",
                    proof=partial(_type_fully_mixed, t, k),
                    method="multinomial coefficient computed", scope=f"p = {p}, k = {k}")
    d.exact(lemma_c14_statement(p, k),
            f"both sides expanded in the {k * p + p} weights; the DFT computed in Q(omega_{p}) and reduced modulo "
            f"Phi_{p}; {res.monomials_compared} monomials compared", "Lemma C.14, (C.10)",
            proof=lambda: res.matches, method="exact rational coefficients, coefficient by coefficient",
            scope=f"p = {p}, k = {k}")
    d.notes.append(f"exact check took {res.seconds:.2f} s")
    return d
