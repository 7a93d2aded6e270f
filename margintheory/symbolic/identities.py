"""The two identities behind the construction, generated and checked as exact polynomial identities.

* **Sum-to-product** (Lemma C.16, Parts 1-3; docs/theory.md#lemma-c16)::

      2^k k! x_1 ... x_k = sum_{s in {+1,-1}^k} (-1)^((k - sum s)/2) (s_1 x_1 + ... + s_k x_k)^k.

  The terms of ``s`` and ``-s`` coincide (``(-1)^k`` from the power times ``(-1)^(sum s) = (-1)^k`` from the
  sign), so the *half-sum* over ``s_1 = +1`` (``2^(k-1)`` vectors) times 2 gives the same polynomial: that is
  why each product needs ``2^(k-1)`` neurons in the construction (Lemma C.18).
* **Cosine expansion** (equation (C.21); docs/theory.md#cosine-expansion)::

      cos(a_1 + ... + a_n) = sum_{b in {0,1}^n, |b| even} (-1)^[|b| = 2 mod 4] prod_i cos^(1-b_i)(a_i) sin^(b_i)(a_i),

  with ``n = k + 1`` and ``a_{k+1} = -c``: ``2^k`` terms.  The sign rule is ``Re(i^|b|)`` (real part of
  ``prod_j (cos a_j + i sin a_j)``).  Exact check: with ``y_i = exp(2 i a_i)`` both sides times
  ``prod_i exp(i a_i)`` are polynomials in ``y`` (``2 cos a = z + 1/z``, ``2 i sin a = z - 1/z``); a Laurent
  polynomial identity on the torus is an identity of polynomials, which ``sympy.Poly`` decides exactly.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy as sp
from sympy import ZZ
from sympy.polys.rings import ring

from margintheory.errors import InputError
from margintheory.symbolic.derivation import Derivation

MAX_K_SYMBOLIC_EXPANSION = 6
EPS = float(np.finfo(np.float64).eps)


def _validate_k(k: object, k_max: int = 12) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= int(k) <= k_max:
        raise InputError(f"k must be an integer in 1..{k_max}, got {k!r}")
    return int(k)


def variables(k: int, name: str = "x") -> tuple[sp.Symbol, ...]:
    """``x_1 .. x_k`` as real sympy symbols."""
    return sp.symbols(f"{name}_1:{k + 1}", real=True)


# ---------------------------------------------------------------- sum-to-product (Lemma C.16)

def sign_vectors(k: int, half: bool = False) -> list[tuple[int, ...]]:
    """All ``s in {+1,-1}^k`` (``half``: only those with ``s_1 = +1``, the ``2^(k-1)`` neurons of one term)."""
    k = _validate_k(k)
    vecs = list(itertools.product((1, -1), repeat=k))
    return [s for s in vecs if s[0] == 1] if half else vecs


def sum_to_product_sign(s: Sequence[int]) -> int:
    """``(-1)^((k - sum s)/2)``: +1 or -1 (the exponent is the number of ``-1`` entries)."""
    return -1 if sum(1 for v in s if v == -1) % 2 else 1


def sum_to_product_lhs(x: Sequence[sp.Expr]) -> sp.Expr:
    """``2^k k! prod_i x_i``."""
    k = len(x)
    return 2**k * sp.factorial(k) * sp.Mul(*x)


def sum_to_product_rhs(x: Sequence[sp.Expr], half: bool = False) -> sp.Expr:
    """``sum_s (-1)^((k - sum s)/2) (s . x)^k``; ``half``: twice the sum over ``s_1 = +1`` (unexpanded)."""
    k = len(x)
    factor = 2 if half else 1
    return sp.Add(*[factor * sum_to_product_sign(s) * sp.Add(*[sj * xj for sj, xj in zip(s, x, strict=True)]) ** k
                    for s in sign_vectors(k, half)])


def _ring(k: int):
    """sympy's sparse polynomial ring ``ZZ[x_1..x_k]`` (much faster than ``Poly``'s dense representation)."""
    return ring(",".join(f"x_{i + 1}" for i in range(k)), ZZ)


@dataclass(frozen=True)
class SumToProductCheck:
    """Exact outcome of Lemma C.16 Part 3 at one ``k`` (see :func:`check_sum_to_product`)."""

    k: int
    method: str
    full_sum_ok: bool
    half_sum_ok: bool
    mirror_terms_equal: bool
    monomials_per_term: int
    seconds: float

    @property
    def ok(self) -> bool:
        return self.full_sum_ok and self.half_sum_ok and self.mirror_terms_equal


@lru_cache(maxsize=32)
def check_sum_to_product(k: int, method: str = "substitution") -> SumToProductCheck:
    """Exact check of Lemma C.16 Part 3, of the half-sum and of the mirror symmetry ``T(s) = T(-s)``.

    ``method="direct"``: every ``(s . x)^k`` is expanded in ``ZZ[x]`` (cost ``2^k`` expansions).
    ``method="substitution"``: ``P = (x_1 + ... + x_k)^k`` is expanded once in ``ZZ[x]``; the term of ``s`` is
    ``sign(s) P(s_1 x_1, ..., s_k x_k)``, whose coefficient at ``x^e`` is ``sign(s) P_e prod s_i^(e_i)``,
    computed exactly with integer parities.  Both compare with ``2^k k! x_1...x_k`` coefficient by coefficient.
    """
    k = _validate_k(k, 9)  # k = 10 would hold a 92378 x 1024 integer matrix
    start = time.perf_counter()
    R, *x = _ring(k)
    target = 2**k * math.factorial(k) * R.mul(*x) if k > 1 else 2 * x[0]
    halves = sign_vectors(k, half=True)
    if method == "direct":
        full, half, mirror = R(0), R(0), True
        for s in halves:
            minus = tuple(-v for v in s)
            t_plus = sum_to_product_sign(s) * sum((sj * xj for sj, xj in zip(s, x, strict=True)), R(0)) ** k
            t_minus = sum_to_product_sign(minus) * sum((sj * xj for sj, xj in zip(minus, x, strict=True)), R(0)) ** k
            mirror = mirror and t_plus == t_minus
            full += t_plus + t_minus
            half += 2 * t_plus
        size = len(t_plus)
        result = (full == target, half == target, mirror)
    elif method == "substitution":
        poly = sum(x, R(0)) ** k
        exps = np.array(list(poly.keys()), dtype=np.int64)
        coeffs = np.array([int(c) for c in poly.values()], dtype=np.int64)
        vecs = np.array(sign_vectors(k), dtype=np.int64)
        negative = (vecs == -1).astype(np.int64)
        signs = np.array([sum_to_product_sign(s) for s in vecs], dtype=np.int64)
        flips = 1 - 2 * ((exps @ negative.T) % 2)            # prod_i s_i^(e_i), shape (monomials, 2^k)
        terms = coeffs[:, None] * flips * signs[None, :]     # column j = coefficients of the term of s_j
        target_vec = np.array([int(target.coeff(R.from_dict({tuple(e): 1}))) for e in exps], dtype=np.int64)
        first = vecs[:, 0] == 1
        mirror_idx = [sign_vectors(k).index(tuple(-v for v in s)) for s in vecs[first].tolist()]
        mirror = bool(np.array_equal(terms[:, first], terms[:, mirror_idx]))
        size = len(coeffs)
        result = (np.array_equal(terms.sum(axis=1), target_vec),
                  np.array_equal(2 * terms[:, first].sum(axis=1), target_vec), mirror)
    else:
        raise InputError(f"unknown method {method!r}; use 'direct' or 'substitution'")
    return SumToProductCheck(k, method, bool(result[0]), bool(result[1]), bool(result[2]), size,
                             time.perf_counter() - start)


def lemma_c16_parts_as_printed() -> dict[str, sp.Equality]:
    """Parts 1 and 2 of Lemma C.16 with the signs exactly as printed (Parts 1-2), unexpanded."""
    a1, a2, a3 = sp.symbols("a_1 a_2 a_3", real=True)
    part1 = sp.Eq(2**2 * sp.factorial(2) * a1 * a2,
                  (a1 + a2) ** 2 - (a1 - a2) ** 2 - (-a1 + a2) ** 2 + (-a1 - a2) ** 2, evaluate=False)
    part2 = sp.Eq(2**3 * sp.factorial(3) * a1 * a2 * a3,
                  (a1 + a2 + a3) ** 3 - (a1 + a2 - a3) ** 3 - (a1 - a2 + a3) ** 3 - (-a1 + a2 + a3) ** 3
                  + (a1 - a2 - a3) ** 3 + (-a1 + a2 - a3) ** 3 + (-a1 - a2 + a3) ** 3 - (-a1 - a2 - a3) ** 3,
                  evaluate=False)
    return {"Part 1": part1, "Part 2": part2}


def _expand_equal(eq: sp.Equality) -> bool:
    return sp.expand(eq.lhs - eq.rhs) == 0


def sum_to_product_statement(k: int, half: bool = False) -> sp.Equality:
    """The identity for this ``k`` as an unevaluated ``Eq`` (for display)."""
    x = variables(k)
    return sp.Eq(sum_to_product_lhs(x), sum_to_product_rhs(x, half), evaluate=False)


def sum_to_product_derivation(k: int, method: str = "substitution") -> Derivation:
    """Lemma C.16 for this ``k``: the full identity, the mirror symmetry and the half-sum, all exact."""
    k = _validate_k(k, 9)
    d = Derivation(f"Sum-to-product identity (Lemma C.16), k = {k}")
    if k in (2, 3):
        part, eq = list(lemma_c16_parts_as_printed().items())[k - 2]
        d.exact(eq, f"{part} exactly as printed (signs as in the text)", "Lemma C.16, Parts 1-2",
                proof=lambda: _expand_equal(eq), method="sympy expand(lhs - rhs) == 0")
    how = {"substitution": "(x_1+...+x_k)^k expanded in ZZ[x], x_i -> s_i x_i substituted exactly",
           "direct": "every (s.x)^k expanded in ZZ[x]"}[method]
    res = check_sum_to_product(k, method)
    d.exact(sum_to_product_statement(k), f"Part 3 at k = {k}: 2^k = {2 ** k} terms, compared with 2^k k! prod x_i "
            f"on all {res.monomials_per_term} monomials", "Lemma C.16, Part 3",
            proof=lambda: res.full_sum_ok, method=how, scope=f"k = {k}")
    d.exact(sp.Eq(sp.Symbol("T(s)"), sp.Symbol("T(-s)")),
            "the terms of s and -s coincide: (-1)^k from the power, (-1)^(sum s) = (-1)^k from the sign",
            "Lemma C.18 ('symmetric effect')", proof=lambda: res.mirror_terms_equal,
            method=f"all {2 ** (k - 1)} pairs compared coefficient by coefficient", scope=f"k = {k}")
    d.exact(sum_to_product_statement(k, half=True),
            f"half-sum: 2^(k-1) = {2 ** (k - 1)} sign vectors with s_1 = +1, each counted twice",
            "Lemma C.18", proof=lambda: res.half_sum_ok, method=how, scope=f"k = {k}")
    coef = 2 ** (k - 1) * math.factorial(k)
    d.notes.append(f"each neuron of a term carries the coefficient +-2/(2^k k!) = +-1/{coef} "
                   f"(exact check took {res.seconds:.3f} s)")
    return d


# ---------------------------------------------------------------- cosine expansion (C.21)

def sine_patterns(k: int) -> list[tuple[int, ...]]:
    """The ``2^k`` patterns ``b in {0,1}^(k+1)`` with an even number of sines (1 = sine), lexicographic."""
    k = _validate_k(k)
    return [b for b in itertools.product((0, 1), repeat=k + 1) if sum(b) % 2 == 0]


def cosine_expansion_sign(b: Sequence[int]) -> int:
    """The paper's sign rule (C.21): 0 for an odd number of sines, -1 iff the number is 2 mod 4, else +1."""
    n = sum(b)
    if n % 2:
        return 0
    return -1 if n % 4 == 2 else 1


def sign_from_real_part(b: Sequence[int]) -> int:
    """``Re(i^|b|)``: the coefficient of ``prod cos^(1-b) sin^b`` in ``Re prod_j (cos a_j + i sin a_j)``."""
    return int(sp.re(sp.I ** sum(b)))


def cosine_expansion_rhs(angles: Sequence[sp.Expr]) -> sp.Expr:
    """The right-hand side of (C.21) in the given angles (``n = k + 1`` of them), unexpanded."""
    k = len(angles) - 1
    def factor(a: sp.Expr, bi: int) -> sp.Expr:
        return sp.sin(a) if bi else sp.cos(a)

    return sp.Add(*[cosine_expansion_sign(b) * sp.Mul(*[factor(a, bi) for a, bi in zip(angles, b, strict=True)])
                    for b in sine_patterns(k)])


def cosine_expansion_statement(k: int, explicit: bool = True) -> sp.Equality:
    """(C.21) as an ``Eq``; ``explicit=False`` writes the right-hand side as an indexed sum (for large ``k``)."""
    if explicit:
        a = variables(k + 1, "a")
        return sp.Eq(sp.cos(sp.Add(*a)), cosine_expansion_rhs(a), evaluate=False)
    i, t = sp.symbols("i t", integer=True)
    a, b, sign = sp.IndexedBase("a"), sp.IndexedBase("b"), sp.Function("sign")
    factor = sp.cos(a[i]) ** (1 - b[t, i]) * sp.sin(a[i]) ** b[t, i]  # b_t: the t-th pattern with |b_t| even
    rhs = sp.Sum(sign(t) * sp.Product(factor, (i, 1, k + 1)), (t, 1, 2**k))
    return sp.Eq(sp.cos(sp.Sum(a[i], (i, 1, k + 1))), rhs, evaluate=False)


def verify_cosine_expansion_exact(k: int) -> bool:
    """Exact check of (C.21) through ``y_i = exp(2 i a_i)`` (module docstring): a polynomial identity over QQ.

    ``2^n prod z_i cos(sum a) = 2^(n-1) (prod y_i + 1)`` and each term becomes
    ``sign(b) * i^(-|b|) * prod_i (y_i + 1 or y_i - 1)``; ``i^(-|b|)`` is real because ``|b|`` is even.
    """
    k = _validate_k(k)
    n = k + 1
    y = sp.symbols(f"y_1:{n + 1}")
    lhs = sp.Poly(2 ** (n - 1) * (sp.Mul(*y) + 1), *y, domain="QQ")
    rhs = sp.Poly(0, *y, domain="QQ")
    for b in sine_patterns(k):
        unit = sp.I ** (-sum(b))
        if not unit.is_real:
            return False
        factors = [sp.Poly(yi - 1 if bi else yi + 1, *y, domain="QQ") for yi, bi in zip(y, b, strict=True)]
        term = sp.Poly(1, *y, domain="QQ")
        for f in factors:
            term *= f
        rhs += int(cosine_expansion_sign(b) * unit) * term
    return lhs == rhs


def verify_cosine_expansion_trig(k: int) -> bool:
    """Second exact route for small ``k``: sympy's ``expand_trig`` of ``cos(a_1+...+a_n)`` minus (C.21)."""
    eq = cosine_expansion_statement(_validate_k(k, 4))
    return sp.expand(sp.expand_trig(eq.lhs) - eq.rhs) == 0


def cosine_expansion_tolerance(k: int) -> float:
    """A-priori float64 error bound of evaluating both sides at angles in [-pi, pi] (2^k products of k+1 factors)."""
    return 16.0 * (2**k * (k + 2) + (k + 1) ** 2 * math.pi) * EPS


def cosine_expansion_max_error(k: int, samples: int = 200, seed: int = 0) -> float:
    """Largest ``|cos(sum a) - (C.21)|`` over ``samples`` seeded random angle vectors in [-pi, pi]^(k+1)."""
    k = _validate_k(k, 14)  # 2^k x (k+1) x samples booleans in memory
    rng = np.random.default_rng(seed)
    angles = rng.uniform(-math.pi, math.pi, size=(samples, k + 1))
    patterns = np.array(sine_patterns(k), dtype=bool)
    signs = np.array([cosine_expansion_sign(b) for b in patterns], dtype=float)
    c, s = np.cos(angles), np.sin(angles)
    factors = np.where(patterns[None, :, :], s[:, None, :], c[:, None, :])
    rhs = (signs[None, :] * factors.prod(axis=2)).sum(axis=1)
    return float(np.max(np.abs(np.cos(angles.sum(axis=1)) - rhs)))


def sign_rule_matches_real_part(k: int) -> bool:
    """Exact: the paper's sign rule equals ``Re(i^|b|)`` for every ``b in {0,1}^(k+1)`` (odd ``|b|``: both 0)."""
    k = _validate_k(k, 14)
    return all(cosine_expansion_sign(b) == sign_from_real_part(b)
               for b in itertools.product((0, 1), repeat=k + 1))


def cosine_expansion_derivation(k: int) -> Derivation:
    """(C.21) for this ``k``: sign rule, term count, and the identity (exact for k <= 6, numeric beyond)."""
    k = _validate_k(k, 12)
    d = Derivation(f"Cosine expansion (C.21), k = {k}: cos(a_1 + ... + a_{k + 1}) with a_{k + 1} = -c")
    b = sp.Symbol("b")
    d.exact(sp.Eq(sp.Symbol("sign(b)"), sp.re(sp.I ** b)),
            "sign rule: 0 for odd |b|, -1 iff |b| = 2 mod 4, equals Re(i^|b|) of prod (cos a_j + i sin a_j)",
            "(C.21)", proof=lambda: sign_rule_matches_real_part(k),
            method=f"all 2^{k + 1} patterns b compared", scope=f"k = {k}")
    d.exact(sp.Eq(sp.Symbol("terms"), 2**k), "number of patterns with an even number of sines",
            "Lemma C.18 ('2^k non-zero terms')", proof=lambda: len(sine_patterns(k)) == 2**k,
            method="enumerated", scope=f"k = {k}")
    stmt = cosine_expansion_statement(k, explicit=k <= MAX_K_SYMBOLIC_EXPANSION)
    if k <= MAX_K_SYMBOLIC_EXPANSION:
        d.exact(stmt, "the expansion as an identity of trigonometric polynomials", "(C.21)",
                proof=lambda: verify_cosine_expansion_exact(k),
                method="substitution y_j = exp(2 i a_j); sympy.Poly identity over QQ", scope=f"k = {k}")
    else:
        tol = cosine_expansion_tolerance(k)
        d.numeric(stmt, "the expansion (b_t: the 2^k patterns with an even number of sines, sign(t) their sign) at "
                  "200 random angle vectors (seed 0)", "(C.21)",
                  max_error=lambda: cosine_expansion_max_error(k), tolerance=tol,
                  method="float64 at seeded random angles in [-pi, pi]", scope=f"k = {k}")
    d.exact(sp.Eq(sp.Symbol("neurons per frequency"), 2 ** (2 * k - 1)),
            f"2^k terms x 2^(k-1) neurons per term (half-sum of Lemma C.16) = {2 ** (2 * k - 1)}",
            "Lemma C.18",
            proof=lambda: len(sine_patterns(k)) * len(sign_vectors(min(k, 12), half=True)) == 2 ** (2 * k - 1),
            method="product of the enumerated counts", scope=f"k = {k}")
    return d
