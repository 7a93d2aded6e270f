"""Both ends of the max margin of ``(n, k)`` sparse parity (Morwani et al., arXiv:2311.07568, Thm 7.8, App. D.7).

**Upper end ``U``** (every network of any width; docs/theory.md#parity-upper-bound), by weak duality with the uniform
distribution on the ``2^n`` inputs (the task is binary: the only wrong label is ``-y``), reduced to the single-neuron
problem on the relevant coordinates:

1. *weak duality* (``argued``, Lemma 7.6): the margin of a network of norm 1 is at most the average margin, which is
   ``sum_i ||theta_i||^(k+1) F(theta_i / ||theta_i||) <= max_{|theta| = 1} F`` with
   ``F(u, w) = E_x[y(x) (w . b) (u . x)^k]``, ``b = (1, -1)``;
2. *the reduction* (``proved``): ``E_x[x^alpha] = 1`` when every exponent is even and ``0`` otherwise (checked on
   ``{+1, -1}``), so ``E_x[y(x) x^alpha] != 0`` only for ``alpha`` odd on ``S`` and even off ``S``.  The number of such
   ``alpha`` with ``|alpha| = k`` is the coefficient of ``t^k`` in ``(t / (1 - t^2))^k (1 - t^2)^-(n - k)``, computed
   in exact integers; it is 1, the one being ``1_S``, whose multinomial coefficient is ``k!``.  Hence
   ``F = k! (w . b) prod_{j in S} u_j``: the coordinates off ``S`` do not appear;
3. *homogeneity* (``argued``): ``F`` is a form of degree ``k + 1`` in ``(u_S, w)`` alone, so its maximum on the unit
   ball is attained with ``|(u_S, w)| = 1``;
4. *Cauchy-Schwarz in w* (``proved``): ``2 |w|^2 - (w . b)^2 = (w_0 + w_1)^2`` (exact polynomial identity), so
   ``F^2 <= 2 (k!)^2 |w|^2 prod_S u_j^2``;
5. *AM-GM for ``k + 1`` terms* (``proved``, :mod:`margintheory.certificate.am_gm`):
   ``|w|^2 prod_S u_j^2 <= (k + 1)^-(k + 1)`` on the unit sphere;
6. ``U^2 = 2 (k!)^2 (k + 1)^-(k + 1)`` from the constants of steps 2, 4 and 5 (exact rational), ``U`` a rational
   with ``U^2 >= U^2`` (rounded up).

**Lower end ``L``** for the construction of D.7 (``2^(k-1)`` neurons ``u = sigma / sqrt(k+1)`` on ``S``,
``w = prod(sigma) b / sqrt(2(k+1))``, every neuron of norm 1): its margin at ``x`` is ``sqrt 2 (k+1)^-(k+1)/2`` times
the integer ``y(x) sum_sigma prod(sigma) (sigma . x_S)^k``, which depends on ``x_S`` only (the weights vanish off
``S``); :func:`construction_margin_squared` evaluates it on all ``2^k`` patterns in exact integers, so
``L^2 = 2 min^2 / ((k+1)^(k+1) 4^(k-1))`` is exact, and so is "every input on the margin" (all patterns equal).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from functools import lru_cache

import numpy as np

from margintheory.certificate.am_gm import prove_am_gm
from margintheory.certificate.checker import ceil_sqrt
from margintheory.certificate.interval import TaskUpperBound, gamma_below_upper_exact
from margintheory.certificate.upper_bound import ProofStep
from margintheory.core.checks import Check
from margintheory.core.theory import gamma_star_parity, validate_nk

#: exact integer evaluation of the construction up to this k (2^(2k-1) products; int64 holds 2^(k-1) k^k)
MAX_EXACT_CONSTRUCTION_K = 13

PARITY_WEAK_DUALITY = (
    "weak duality (Lemma 7.6): max margin of any network <= max_{|theta| <= 1} F (uniform q on the 2^n inputs)",
    "Lemma 7.6 of Morwani et al. (arXiv:2311.07568): the minimum margin over the inputs is at most their uniform "
    "average, which for a network of norm 1 is sum_i ||theta_i||^(k+1) F(theta_i/||theta_i||) <= max_{|theta|=1} F; "
    "the task is binary (one wrong label -y), so the class weights are trivial")
PARITY_HOMOGENEITY = (
    "homogeneity: max over the unit ball = max over |(u_S, w)| = 1",
    "F depends on (u_S, w) only (step 2) and is a form of degree k+1 >= 2 in them: for |(u_S, w)| = r <= 1, "
    "F <= r^(k+1) max_sphere F <= max(0, max_sphere F)")


def power_series_product(factors: list[list[int]], order: int) -> list[int]:
    """Coefficients ``0..order`` of a product of integer power series (constant term first), exact."""
    out = [1] + [0] * order
    for f in factors:
        new = [0] * (order + 1)
        for i, a in enumerate(out):
            if a:
                for j, b in enumerate(f[: order + 1 - i]):
                    new[i + j] += a * b
        out = new
    return out


def surviving_exponents(n: int, k: int, degree: int | None = None) -> int:
    """The number of exponent vectors ``alpha in N^n`` with ``|alpha| = degree`` (default ``k``), ``alpha_j`` odd for
    ``j in S`` and even off ``S`` (``|S| = k``): the coefficient of ``t^degree`` in
    ``(t + t^3 + ...)^k (1 + t^2 + ...)^(n-k)``."""
    d = k if degree is None else degree
    odd = [i % 2 for i in range(d + 1)]
    even = [1 - i % 2 for i in range(d + 1)]
    return power_series_product([odd] * k + [even] * (n - k), d)[d]


def rademacher_moments(top: int) -> list[Fraction]:
    """``E[x^m]`` for ``x`` uniform on ``{+1, -1}``, ``m = 0..top`` (exact)."""
    return [Fraction(1 + (-1) ** m, 2) for m in range(top + 1)]


def multinomial(alpha: list[int]) -> int:
    """``|alpha|! / prod_j alpha_j!``: the coefficient of ``u^alpha x^alpha`` in ``(u . x)^|alpha|``."""
    return math.factorial(sum(alpha)) // math.prod(math.factorial(a) for a in alpha)


def reduction_step(n: int, k: int) -> tuple[ProofStep, int]:
    """Step 2 of the module docstring, computed; also returns the coefficient of ``prod_S u_j`` (``k!``)."""
    moments = rademacher_moments(k + 1)
    parity_ok = all(moments[m] == (1 if m % 2 == 0 else 0) for m in range(k + 2))
    count = surviving_exponents(n, k)
    coefficient = multinomial([1] * k)  # 1_S: odd (1) on S, even (0) off S, degree k -- so it is the one survivor
    ok = parity_ok and count == 1
    detail = (f"E[x^m] on {{+1,-1}} = 1 for even m, 0 for odd m (m = 0..{k + 1}, exact); exponent vectors of degree "
              f"{k} odd on S and even off S among {n} coordinates: {count} (power-series coefficient, exact "
              f"integers), namely 1_S with multinomial coefficient {coefficient} = {k}!; so "
              f"F(u, w) = {coefficient} (w_0 - w_1) prod_(j in S) u_j")
    return ProofStep("reduction: F(u, w) = k! (w . b) prod_(j in S) u_j (uniform q, exact count of the surviving "
                     "monomials)", "proved", ok, detail), coefficient


def cauchy_schwarz_step() -> ProofStep:
    """Step 4: ``2 |w|^2 - (w . b)^2 = (w_0 + w_1)^2`` as an exact polynomial identity (sympy)."""
    import sympy as sp

    w0, w1 = sp.symbols("w0 w1")
    defect = sp.expand(2 * (w0**2 + w1**2) - (w0 - w1) ** 2 - (w0 + w1) ** 2)
    return ProofStep("Cauchy-Schwarz: (w . b)^2 <= 2 |w|^2 (exact identity)", "proved", defect == 0,
                     f"2 (w0^2 + w1^2) - (w0 - w1)^2 - (w0 + w1)^2 expands to {defect}")


@lru_cache(maxsize=64)
def parity_upper_bound(n: int, k: int) -> TaskUpperBound:
    """``U`` of the module docstring for ``(n, k)``; :class:`~margintheory.errors.SolverError` if a proved step
    fails.  Independent of the closed form (which is compared with it by the callers)."""
    n, k = validate_nk(n, k)
    t0 = time.perf_counter()
    reduction, coefficient = reduction_step(n, k)
    am_gm = prove_am_gm(k + 1)
    U2 = Fraction(2) * coefficient**2 * Fraction(1, (k + 1) ** (k + 1))  # steps 4, 2, 5
    U = ceil_sqrt(U2)
    steps = [ProofStep(PARITY_WEAK_DUALITY[0], "argued", True, PARITY_WEAK_DUALITY[1]), reduction,
             ProofStep(PARITY_HOMOGENEITY[0], "argued", True, PARITY_HOMOGENEITY[1]), cauchy_schwarz_step(), am_gm,
             ProofStep("U^2 = 2 (k!)^2 (k+1)^-(k+1) (exact), U rational >= sqrt(U^2)", "proved", U * U >= U2,
                       f"U^2 = {U2}; U = {U}")]
    ub = TaskUpperBound(
        "parity", U, U2, steps,
        "weak duality (uniform q) + exact reduction to k! (w . b) prod_S u_j + Cauchy-Schwarz + AM-GM (k+1 terms, "
        "exact integer certificate)", upper_algebraic=f"sqrt({U2})",
        details={"single_neuron_form": f"{coefficient} (w_0 - w_1) prod_(j in S) u_j", "relevant_coordinates":
                 f"u_S (k = {k}) and w (2)"}, seconds=time.perf_counter() - t0)
    return ub.require_proved(f"(n, k) = ({n}, {k})")


def construction_margin_squared(k: int) -> tuple[Fraction, int, bool]:
    """``(L^2, patterns, every pattern on the margin)``: the exact squared normalized margin of D.7's construction from
    the integer margins on all ``2^k`` patterns of ``x_S`` (module docstring; ``k <= MAX_EXACT_CONSTRUCTION_K``), the
    number of distinct patterns evaluated (``2^k``), and whether every pattern attains it (then every input is on the
    margin, exactly)."""
    if not 1 <= k <= MAX_EXACT_CONSTRUCTION_K:
        raise ValueError(f"exact construction margin for 1 <= k <= {MAX_EXACT_CONSTRUCTION_K}, got {k}")
    r = np.arange(2**k)[:, None]
    X = 1 - 2 * ((r >> np.arange(k)[None, :]) & 1)  # all patterns of x_S, int64
    t = np.arange(2 ** (k - 1))[:, None]
    sig = np.concatenate([np.ones((len(t), 1), np.int64), 1 - 2 * ((t >> np.arange(k - 1)[None, :]) & 1)], 1)
    sign = np.prod(sig, axis=1)
    y = np.prod(X, axis=1)
    least, most, visited = None, None, 0
    step = max(1, 2**20 // len(sig))
    for r0 in range(0, len(X), step):
        vals = y[r0: r0 + step] * ((X[r0: r0 + step] @ sig.T) ** k @ sign)  # y(x) sum_sigma prod(sigma)(sigma.x)^k
        if vals.dtype.kind != "i":
            raise TypeError(f"the construction's margins must be computed in integers, got {vals.dtype}")
        low, high = int(vals.min()), int(vals.max())
        least = low if least is None else min(least, low)
        most = high if most is None else max(most, high)
        visited += len(vals)
    assert least is not None
    m = 2 ** (k - 1)  # neurons of norm 1: ||theta||^(k+1) = m
    L2 = Fraction(2 * least * abs(least), (k + 1) ** (k + 1) * m * m)
    if visited != len(X):
        raise AssertionError(f"{visited} of {len(X)} patterns evaluated")
    return L2, len(np.unique(X, axis=0)), least == most


def gamma_below_upper_check(k: int, ub: TaskUpperBound) -> Check:
    """The closed form against the computed ``U``: ``gamma*^2 = 2 (k!)^2 (k+1)^-(k+1)`` (Thm 7.8) ``<= U^2``, squares
    compared exactly."""
    g2 = Fraction(2 * math.factorial(k) ** 2, (k + 1) ** (k + 1))
    return gamma_below_upper_exact(gamma_star_parity(k), g2, ub, "closed form gamma* = k! sqrt(2 (k+1)^-(k+1)) <= "
                                                                  "U (Thm 7.8 against the computed U)")
