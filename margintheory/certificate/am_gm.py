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

from margintheory.certificate.upper_bound import ProofStep


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
