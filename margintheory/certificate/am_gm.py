"""The inequality of arithmetic and geometric means for ``N`` terms, proved by exact integer computation.

Used by the upper ends ``U`` of sparse parity and of finite groups (docs/theory.md#parity-upper-bound and
docs/theory.md#group-upper-bound): the maximum of ``prod_i a_i`` over ``a >= 0`` with ``sum_i a_i = 1`` is
``N^-N`` (for parity ``N = k + 1`` squares ``|w|^2, u_1^2, ..., u_k^2``; for groups ``N = 3`` Frobenius norms).

Proof by induction on ``M = 2..N``: with ``A`` the mean of ``a_1..a_(M-1)`` and ``a = a_M``, the induction hypothesis
gives ``prod_(i<=M) a_i <= A^(M-1) a``, and the two-variable step ``A^(M-1) a <= (((M-1) A + a) / M)^M`` is, after
dividing by ``A^M`` (``A = 0`` is trivial) and writing ``t = a / A >= 0``, the inequality ``p_M(t) >= 0`` for

    p_M(t) = (M - 1 + t)^M - M^M t.

:func:`step_quotient` divides ``p_M`` by ``(t - 1)^2`` in exact integers (both remainders must vanish: ``t = 1`` is a
double root) and :func:`prove_am_gm` checks that every coefficient of the quotient ``q_M`` is ``>= 0``, so that
``p_M(t) = (t - 1)^2 q_M(t) >= 0`` for every ``t >= 0``.  Each step is a finite computation; the induction that
chains them is the only argument, and it is written out in the step's detail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from margintheory.certificate.steps import ProofStep


def step_polynomial(M: int) -> list[int]:
    """Coefficients (constant term first) of ``p_M(t) = (M - 1 + t)^M - M^M t``."""
    if M < 2:
        raise ValueError(f"the AM-GM step needs M >= 2, got {M}")
    coeffs = [math.comb(M, j) * (M - 1) ** (M - j) for j in range(M + 1)]
    coeffs[1] -= M**M
    return coeffs


def _divide_by_t_minus_1(coeffs: list[int]) -> tuple[list[int], int]:
    """Synthetic division by ``t - 1``: (quotient, remainder), constant term first, exact integers."""
    high = coeffs[::-1]
    out = [high[0]]
    for c in high[1:]:
        out.append(c + out[-1])
    remainder = out.pop()
    return out[::-1], remainder


def step_quotient(M: int) -> tuple[list[int], tuple[int, int]]:
    """``q_M`` with ``p_M = (t - 1)^2 q_M`` and the two remainders of the divisions (both ``0`` when ``t = 1`` is a
    double root of ``p_M``)."""
    q1, r1 = _divide_by_t_minus_1(step_polynomial(M))
    q2, r2 = _divide_by_t_minus_1(q1)
    return q2, (r1, r2)


def am_gm_step_holds(M: int) -> tuple[bool, str]:
    """Whether ``p_M = (t - 1)^2 q_M`` with every coefficient of ``q_M`` ``>= 0`` (exact), and a one-line account."""
    q, remainders = step_quotient(M)
    ok = remainders == (0, 0) and all(c >= 0 for c in q)
    return ok, f"M = {M}: remainders {remainders}, min coefficient of q_M {min(q)}"


AM_GM_NAME = "AM-GM: prod_(i<=N) a_i <= (sum_i a_i / N)^N for a >= 0"


def prove_am_gm(N: int) -> ProofStep:
    """The step of the module docstring for ``N`` terms (``N = 1`` is an equality): ``proved`` when every
    induction step ``M = 2..N`` is checked exactly."""
    results = [am_gm_step_holds(M) for M in range(2, N + 1)]
    ok = all(r[0] for r in results)
    failed = [r[1] for r in results if not r[0]]
    detail = (f"N = {N}: by induction on M = 2..{N}, prod_(i<=M) a_i <= A^(M-1) a_M <= (((M-1)A + a_M)/M)^M with A the "
              f"mean of the first M-1 terms; each step is p_M(t) = (M-1+t)^M - M^M t = (t-1)^2 q_M(t) >= 0 for "
              f"t = a_M/A >= 0, checked in exact integers: {len(results)} quotients q_M, every coefficient >= 0"
              + ("" if ok else f"; FAILED: {failed[0]}"))
    return ProofStep(f"{AM_GM_NAME}, N = {N}", "proved", ok, detail)


# -- the exact maximum of the block form g_k (the upper end of modular addition with uniform weights) --------------

BLOCK_FORM_MAXIMUM_NAME = "AM-GM certificate: max_{|z|=1} g_k = (k+1)^-((k+1)/2) (exact, no solver)"


@dataclass(frozen=True)
class BlockFormMaximum:
    """``max_{|z| = 1} g_k = (k+1)^-((k+1)/2)`` for ``g_k = Re(conj(z_w) z_1...z_k)`` on ``C^(k+1)``, exactly.

    With ``n = k + 1`` and ``t_i = |z_i|^2``: ``g_k^2 <= |conj(z_w) z_1...z_k|^2 = t_1...t_n`` (``|Re w| <= |w|``),
    and ``t_1...t_n <= ((t_1+...+t_n)/n)^n = n^-n`` on the unit sphere by the inequality of arithmetic and geometric
    means, proved by the chain of two-variable identities ``p_M(t) = (t - 1)^2 q_M(t)`` of :func:`step_quotient`
    (``M = 2..n``); the aligned equal-modulus point ``z_i = n^(-1/2)`` attains it.  Hurwitz's proof of AM-GM by
    such identities: A. Hurwitz, "Ueber den Vergleich des arithmetischen und des geometrischen Mittels", J. reine
    angew. Math. 108 (1891) 266-268.  The maximum is irrational when ``n`` is odd and not a square, so the
    statement is about its square ``bound_squared = n^-n``, a rational; :func:`exact_sqrt` gives the maximum itself
    when it is rational.  Re-checked by :func:`margintheory.certificate.checker.check_am_gm`."""

    k: int
    bound_squared: Fraction
    quotients: tuple[tuple[int, ...], ...]
    proved: bool
    detail: str
    seconds: float

    @property
    def bound(self) -> Fraction:
        """A rational ``>= max g_k``: the maximum itself when rational, else rounded up (relative ``2^-64``)."""
        return upper_sqrt(self.bound_squared)

    def to_json(self) -> dict[str, Any]:
        """The ``am_gm`` section of a certificate file (format of :mod:`margintheory.certificate.checker`)."""
        return {"k": self.k, "form": "g_k = Re(conj(z_w) z_1 ... z_k) on C^(k+1)",
                "statement": "max_{|z|=1} g_k = sqrt(bound_squared) = (k+1)^-((k+1)/2)",
                "bound_squared": str(self.bound_squared),
                "modulus": "g_k^2 + (Im conj(z_w) z_1...z_k)^2 = |z_w|^2 |z_1|^2 ... |z_k|^2",
                "steps": [{"M": M, "quotient": [str(c) for c in q]} for M, q in
                          zip(range(2, self.k + 2), self.quotients, strict=True)],
                "maximiser": "z_1 = ... = z_k = z_w = (k+1)^(-1/2)"}


def exact_sqrt(v: Fraction) -> Fraction | None:
    """``sqrt(v)`` when it is rational (numerator and denominator perfect squares), else ``None``."""
    if v < 0:
        return None
    a, b = math.isqrt(v.numerator), math.isqrt(v.denominator)
    return Fraction(a, b) if a * a == v.numerator and b * b == v.denominator else None


def upper_sqrt(v: Fraction) -> Fraction:
    """A rational ``>= sqrt(v)``: exact when rational, else the dyadic ceiling of relative excess ``< 2^-64``."""
    from margintheory.certificate.checker import ceil_sqrt

    r = exact_sqrt(v)
    return r if r is not None else ceil_sqrt(v)


def algebraic_text(v: Fraction) -> str:
    """``sqrt(v)`` written exactly: ``"a/b"`` when rational, else ``"sqrt(a/b)"`` (the certificate's format)."""
    r = exact_sqrt(v)
    return str(r) if r is not None else f"sqrt({v})"


def block_form_maximum(k: int, *, bound_squared: Fraction | None = None) -> BlockFormMaximum:
    """The certificate of :class:`BlockFormMaximum` for ``k``, checked exactly here and by the independent checker
    (``bound_squared``: the square claimed, ``(k+1)^-(k+1)`` by default; any other is not ``proved``)."""
    import time

    from margintheory.certificate import checker

    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= checker.MAX_AM_GM_TERMS - 1:
        raise ValueError(f"k must be an integer in 1..{checker.MAX_AM_GM_TERMS - 1}, got {k!r}")
    t0 = time.perf_counter()
    n = k + 1
    claimed = Fraction(1, n**n) if bound_squared is None else Fraction(bound_squared)
    quotients, own = [], []
    for M in range(2, n + 1):
        q, remainders = step_quotient(M)
        quotients.append(tuple(q))
        own.append(remainders == (0, 0) and all(c >= 0 for c in q))
    failure = checker.check_am_gm(k, claimed, [(M, [Fraction(c) for c in q])
                                               for M, q in zip(range(2, n + 1), quotients, strict=True)])
    ok = all(own) and failure is None
    detail = (f"k = {k}: g_k^2 <= |z_w|^2 |z_1|^2...|z_k|^2 (exact identity with (Im conj(z_w) z_1...z_k)^2) <= "
              f"(|z|^2/{n})^{n} by AM-GM: {n - 1} two-variable steps (M - 1 + t)^M - M^M t = (t - 1)^2 q_M(t), "
              f"every q_M with coefficients >= 0 (exact integers); attained at z_i = {n}^(-1/2): max g_k^2 = "
              f"{claimed}" + ("" if failure is None else f"; FAILED: {failure[0]}: {failure[1]}"))
    return BlockFormMaximum(k, claimed, tuple(quotients), ok, detail, time.perf_counter() - t0)
