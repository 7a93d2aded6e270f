"""The per-frequency reduction of the single-neuron problem, proved for all ``p`` (sympy) and checked exactly per
``(p, k)``: Lemma C.14 of Li, Liang, Shi, Song, Zhou, "Fourier Circuits in Neural Networks and Transformers"
(arXiv:2402.09469) in closed form, and the frequency blocks it leaves (docs/theory.md#lemma-c14,
docs/theory.md#frequency-blocks).

With uniform ``q`` and ``tau`` the class-weighted single-neuron objective of ``theta = (u_1, ..., u_k, w)`` is

    ``F(theta) = E_a[z_a^k (w[y(a)] - E_{c != y(a)} w[c])] = k!/((p-1) p^k) sum_{j != 0} w^(-j) prod_i u_i^(j)``

(DFT ``f^(j) = sum_x f(x) e^(-2 pi i j x / p)``).  The proof for all ``p`` rests on one fact, the orthogonality
of characters ``sum_{x in Z_p} omega^(m x) = p [p | m]`` (proved here by the geometric series), and on coefficient
counting, each step an identity in the symbol ``p`` checked by sympy:

* a multinomial type of ``(u_1[a_1] + ... + u_k[a_k])^k`` that misses ``f >= 1`` positions has coefficient
  ``binom(k; e)/p^k (p/(p-1) #{free sums = t} - p^f/(p-1))`` with ``#{x in Z_p^f : sum x = t} = p^(f-1)``
  (orthogonality), i.e. ``0``;
* the fully mixed type has coefficient ``k!/((p-1) p^k) (p [t = 0] - 1)`` on ``w[c] prod u_i[a_i]``
  (``t = c - sum a_i``), which is the right-hand side's ``k!/((p-1)p^k) sum_{j != 0} omega^(j t)``.

Frequency blocks.  In the orthonormal real Fourier basis (``sqrt(2/p) cos``, ``sqrt(2/p) sin`` of frequency
``1 <= j < p/2``, the constant vector, and for even ``p`` the alternating vector) write each vector's block-``j``
coordinates ``(alpha, beta)`` as ``zeta = alpha - i beta``.  Orthogonality gives ``u^(j) = sqrt(p/2) zeta_j`` and
``u^(-j) = conj(u^(j))``, so the terms ``j`` and ``-j`` pair into a real part:

    ``F = sum_{1 <= j < p/2} c_(p,k) Re(conj(zeta_{w,j}) zeta_{1,j} ... zeta_{k,j})  [+ c'_(p,k) x_w x_1...x_k]``

with ``c_(p,k) = 2 k! (p/2)^((k+1)/2) / ((p-1) p^k)`` and, for even ``p`` (frequency ``p/2``, real coordinates
``x``), ``c'_(p,k) = k! p^((k+1)/2) / ((p-1) p^k)``.  Every block is the same form ``g_k = Re(conj(z_w) prod z_i)``
up to its constant (the nonzero frequencies are permuted by the Galois group of ``Q(omega_p)``; here the change
of variables is explicit), so one SOS certificate bounds them all (:mod:`margintheory.certificate.block_sos`).
"""

from __future__ import annotations

import math

import sympy as sp

from margintheory.core.problems import ModularAddition
from margintheory.symbolic.derivation import Derivation

P, K, F_FREE = sp.symbols("p k f", positive=True, integer=True)
M_INT, T_INT = sp.symbols("m t", integer=True)
_SCOPE = "all p >= 2 (symbol p)"
#: the per-(p, k) exact expansion of Lemma C.14 runs up to this many (multinomial type, monomial) terms ((13, 3):
#: 285610 terms, 3.7 s measured under load average 14 on 2 cores)
MAX_EXACT_WORK = 300_000
_LEMMA = "Lemma C.14 (Li et al., arXiv:2402.09469)"


def block_constant_expr(p: int | sp.Expr = P, k: int | sp.Expr = K) -> sp.Expr:
    """``c_(p,k) = 2 k! (p/2)^((k+1)/2) / ((p-1) p^k)``, the constant of every complex frequency block, as the
    product the proof derives it (``k!/((p-1) p^k)`` of (C.10), times 2 for the pair ``j, -j``, times
    ``sqrt(p/2)^(k+1)`` from ``u^(j) = sqrt(p/2) zeta_j``); ``p``, ``k`` integers or symbols (the default: the
    symbols of :func:`lemma_c14_for_all_p`, whose step proves this expression's square)."""
    p, k = sp.sympify(p), sp.sympify(k)
    return sp.factorial(k) / ((p - 1) * p**k) * 2 * sp.sqrt(p / 2) ** (k + 1)


def block_constant(p: int, k: int) -> sp.Expr:
    """``c_(p,k)`` as an exact sympy number (irrational for even ``k``)."""
    return block_constant_expr(sp.Integer(p), sp.Integer(k))


def _orthogonality_holds() -> bool:
    """``sum_{x=0}^{p-1} r^x`` with ``r = exp(2 pi i m / p) != 1`` is ``(1 - r^p)/(1 - r) = 0`` since ``r^p = 1``."""
    r, x = sp.symbols("r x")
    series = sp.summation(r**x, (x, 0, P - 1))  # Piecewise((p, Eq(r, 1)), ((1 - r**p)/(1 - r), True))
    generic = series.args[-1][0] if isinstance(series, sp.Piecewise) else series
    unit = sp.exp(2 * sp.pi * sp.I * M_INT / P)
    at_root = sp.simplify(generic.subs(r, unit))
    trivial = series.args[0][0] if isinstance(series, sp.Piecewise) else None
    return at_root == 0 and trivial == P


def lemma_c14_for_all_p(k: int | None = None) -> Derivation:
    """The symbolic proof of Lemma C.14 and of the block closed form, every step an identity in the symbol ``p``
    (and ``k`` where it appears as a symbol) checked by sympy; ``k`` only fills in the title."""
    title = "Lemma C.14 and the frequency blocks, for all p" + ("" if k is None else f" (used at k = {k})")
    d = Derivation(title)
    omega_sum = sp.Function("S")(M_INT)
    d.exact(sp.Eq(omega_sum, sp.Piecewise((P, sp.Eq(sp.Mod(M_INT, P), 0)), (0, True)), evaluate=False),
            "orthogonality of characters: S(m) = sum_{x in Z_p} exp(2 pi i m x/p) is a geometric series "
            "(1 - r^p)/(1 - r) with r^p = exp(2 pi i m) = 1 when r != 1", _LEMMA, proof=_orthogonality_holds,
            method="sympy summation + simplify at r = exp(2 pi i m/p)", scope=_SCOPE)
    wy, S = sp.symbols("w_y S")
    d.exact(sp.Eq(wy - (S - wy) / (P - 1), (P * wy - S) / (P - 1), evaluate=False),
            "uniform tau: w[y] - E_{c != y} w[c] = (p w[y] - S)/(p-1), S = sum_c w[c]", _LEMMA, scope=_SCOPE)
    count = sp.Symbol("N_f")
    d.exact(sp.Eq(count, P ** (F_FREE - 1), evaluate=False),
            "#{x in Z_p^f : x_1+...+x_f = t} = (1/p) sum_j S(j)^f omega^(-j t) = p^f/p: only j = 0 survives",
            _LEMMA, proof=lambda: sp.simplify(P**F_FREE / P - P ** (F_FREE - 1)) == 0,
            method="orthogonality, then sympy simplify", scope=_SCOPE + ", f >= 1")
    d.exact(sp.Eq(P / (P - 1) * P ** (F_FREE - 1) - P**F_FREE / (P - 1), 0, evaluate=False),
            "a multinomial type missing f >= 1 positions: summing the free a_i gives p/(p-1) p^(f-1) - p^f/(p-1) "
            "times its coefficient, i.e. 0 (cross-frequency and lower types vanish identically)", _LEMMA,
            scope=_SCOPE + ", f >= 1")
    t_zero = sp.Rational(1, 1)
    lhs_c = lambda ind: sp.factorial(K) / P**K * (P * ind - 1) / (P - 1)  # noqa: E731
    rhs_c = lambda ind: sp.factorial(K) / ((P - 1) * P**K) * (P * ind - 1)  # noqa: E731
    d.exact(sp.Eq(lhs_c(t_zero), rhs_c(t_zero), evaluate=False),
            "fully mixed type, t = c - sum a_i = 0: k!/p^k (p/(p-1) - 1/(p-1)) = k!/((p-1)p^k) sum_{j != 0} 1",
            _LEMMA, scope=_SCOPE + ", all k")
    d.exact(sp.Eq(lhs_c(0), rhs_c(0), evaluate=False),
            "fully mixed type, t != 0: -k!/((p-1)p^k) = k!/((p-1)p^k) sum_{j != 0} omega^(j t) = k!/((p-1)p^k)(0 - 1)",
            _LEMMA, scope=_SCOPE + ", all k")
    al, be = sp.symbols("alpha beta", real=True)
    d.exact(sp.Eq(sp.sqrt(2 / P) * (al * P / 2 + be * (-sp.I * P / 2)), sp.sqrt(P / 2) * (al - sp.I * be),
                  evaluate=False),
            "DFT of a block coordinate: sum_x cos(2 pi j' x/p) omega^(-j x) = (p/2)[j' = j], "
            "sum_x sin(2 pi j' x/p) omega^(-j x) = -(i p/2)[j' = j] for 1 <= j, j' < p/2 (orthogonality; "
            "j' = -j mod p is impossible there), so u^(j) = sqrt(p/2) (alpha_j - i beta_j)", _LEMMA, scope=_SCOPE)
    d.exact(sp.Eq(sp.Rational(2, 1) / P * (P / 2), 1, evaluate=False),
            "the real Fourier basis is orthonormal: sum_x (sqrt(2/p) cos)^2 = (2/p)(p/2) (orthogonality), so "
            "|theta| = |Fourier coordinates|", _LEMMA, scope=_SCOPE)
    ar, ai = sp.symbols("a_r a_i", real=True)
    A = ar + sp.I * ai
    d.exact(sp.Eq(A + sp.conjugate(A), 2 * sp.re(A), evaluate=False),
            "real vectors: u^(-j) = conj(u^(j)), so the terms j and p - j pair into 2 Re(conj(w^(j)) prod u_i^(j))",
            _LEMMA, scope="all complex A")
    c_expr = block_constant_expr()
    d.exact(sp.Eq(c_expr**2, (2 * sp.factorial(K) / ((P - 1) * P**K)) ** 2 * (P / 2) ** (K + 1), evaluate=False),
            "block j (1 <= j < p/2) equals c_(p,k) Re(conj(zeta_w) prod zeta_i) with c_(p,k) = "
            "2 k! (p/2)^((k+1)/2)/((p-1)p^k); its square is rational", _LEMMA, scope=_SCOPE + ", all k")
    c_real = sp.factorial(K) / ((P - 1) * P**K) * sp.sqrt(P) ** (K + 1)
    d.exact(sp.Eq(c_real**2, (sp.factorial(K) / ((P - 1) * P**K)) ** 2 * P ** (K + 1), evaluate=False),
            "even p, block p/2: u^(p/2) = sqrt(p) x for the unit alternating vector, the term is its own partner: "
            "c'_(p,k) x_w x_1...x_k with c'_(p,k) = k! p^((k+1)/2)/((p-1)p^k), g_k restricted to real z",
            _LEMMA, scope="all even p, all k")
    return d


def exact_reduction_check(problem: ModularAddition) -> dict[str, object]:
    """Lemma C.14 at this ``(p, k)`` exactly in ``Q(omega_p)`` (both sides expanded in the ``kp + p`` weights) when
    that is cheap (at most :data:`MAX_EXACT_WORK` type-monomial terms, a few seconds); else reported as skipped."""
    from margintheory.symbolic.fourier_reduction import MAX_TERMS, check_fourier_reduction

    p, k = problem.p, problem.k
    work = math.comb(2 * k - 1, k) * p ** (k + 1)  # multinomial types x (inputs, labels) expanded with Fractions
    if p ** (k + 1) > MAX_TERMS or work > MAX_EXACT_WORK:
        return {"ran": False, "reason": f"the exact expansion ({work} type-monomial terms) exceeds {MAX_EXACT_WORK}; "
                                        "the reduction rests on the proof for all p"}
    res = check_fourier_reduction(problem)
    return {"ran": True, "matches": res.matches and res.only_fully_mixed_survives,
            "monomials_compared": res.monomials_compared, "seconds": res.seconds}


def block_polynomial(p: int, k: int) -> tuple[sp.Expr, list[sp.Symbol]]:
    """The frequency-``j`` block (``1 <= j < p/2``) in the real coordinates ``(alpha_i, beta_i)`` of
    :func:`margintheory.solvers.symmetry.real_fourier_blocks` (``u = alpha sqrt(2/p) cos + beta sqrt(2/p) sin``):
    ``c_(p,k) Re((alpha_w + i beta_w) prod_i (alpha_i - i beta_i))``, expanded with exact coefficients."""
    names = [f"{v}_{i}" for i in list(range(1, k + 1)) + ["w"] for v in ("alpha", "beta")]
    syms = list(sp.symbols(" ".join(names), real=True))
    zetas = [syms[2 * i] - sp.I * syms[2 * i + 1] for i in range(k + 1)]
    prod = sp.conjugate(zetas[-1]) * sp.Mul(*zetas[:-1])
    poly = sp.expand(block_constant(p, k) * sp.re(sp.expand(prod)))
    return poly, syms
