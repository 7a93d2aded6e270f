"""The max margin of modular addition at every even ``p`` at once: identities in ``p = 2n``
(docs/theory.md#even-p-max-margin).

Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers" (arXiv:2402.09469), Theorem C.22,
and Morwani, Edelman, Oncescu, Zhao, Kakade, "Feature emergence via margin maximization" (arXiv:2311.07568),
Theorem 7.7, assume odd ``p``.  At even ``p = 2n`` the frequency ``n`` is a real block whose constant is ``r`` times
the complex blocks' (``c'_(p,k) / c_(p,k) = r = 2^((k-1)/2)``, docs/theory.md#frequency-blocks), and the max margin is

    ``gamma_even(p, k) = gamma*(p, k) (p-1) r / (1 + (p-2) r)``

(``gamma*`` the odd-``p`` closed form evaluated at ``p``).  For a fixed ``k`` every step is an identity in the symbol
``n`` (sympy; ``r`` an exact algebraic number, ``sqrt(2)^(k-1)``), or ``argued`` with its reason by the caller:

* **the ratio** ``c'/c = r`` from the block constants of Lemma C.14 (:func:`block_ratio`);
* **the dual** ``t(d) = 1`` for odd ``d``, ``2r - 1`` for even ``d != 0`` (``r >= 1``, so ``t >= 0``):
  ``kappa_t(j) = sum_d t(d) (1 - omega^(jd))`` is ``T + t_even`` for ``0 < j < n`` and ``T + n t_odd - (n-1) t_even``
  for ``j = n`` (character sums by the geometric series), and the invariant dual's single-neuron maximum
  ``Psi_b = ((p-1)/p) c_b |kappa_t(b)| max g_k / T`` (docs/theory.md#class-weighted-bracket) is the same for the
  complex and the real blocks and equals ``gamma_even`` (:func:`dual_side`);
* **no invariant dual does better**: ``sum_(j=1)^(p-1) kappa_t(j) = p T`` and ``|kappa_t(j)| = |kappa_t(p-j)|`` give
  ``p <= (2(n-1) + 1/r) m`` for ``m = Psi(t) / C``, ``C = gamma*(p, k) (p-1)/p``; ``C p r / (1 + (p-2) r) =
  gamma_even`` (:func:`optimality`);
* **the network**: Lemma C.18's sub-network of each frequency ``0 < j < n`` (logits ``K cos(2 pi j (s - c)/p)``,
  cost ``((k+1) p/2)^((k+1)/2) sigma^(k+1) W``) with budget ``s_c = 2r / (1 + (p-2) r)`` each, and the ``2^(k-1)``
  neurons of Lemma C.16 at ``j = n`` (logits ``(-1)^(s - c)``, cost ``((k+1) p)^((k+1)/2) / k!``) with budget
  ``s_r = s_c / (2r)``: total cost 1, margin the same at every odd and every even wrong label, equal to
  ``gamma_even`` (:func:`network_side`).

Each function returns :class:`~margintheory.symbolic.every_p.Identity` objects whose ``holds`` is what sympy proved;
the ratio ``r`` used for the dual and the network is a parameter, so a wrong one turns identities false.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from margintheory.core.theory import P_SYM
from margintheory.symbolic.every_p import Identity, _geometric_at_root, gamma_star_in_p

#: ``p = 2n``, ``n >= 2`` a positive integer symbol
N = sp.Symbol("n", integer=True, positive=True)
P_EVEN = 2 * N
_J = sp.Symbol("j", integer=True)
_D = sp.Symbol("d", integer=True)
_M = sp.Symbol("m", integer=True, nonnegative=True)
_WHERE = "docs/theory.md#even-p-max-margin"


def true_ratio(k: int) -> sp.Expr:
    """``r = 2^((k-1)/2)``, exact (``sqrt(2)^(k-1)``)."""
    return sp.sqrt(2) ** (k - 1)


def identity_in_n(lhs: sp.Expr, rhs: sp.Expr) -> Identity:
    """``lhs = rhs`` for every ``n`` (``p = 2n``), proved by ``simplify(lhs - rhs) == 0`` or, for non-zero ``rhs``,
    ``simplify(lhs / rhs) == 1``; ``radsimp`` first, so that ``sqrt(2)`` in denominators cancels."""
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    if sp.simplify(sp.radsimp(lhs - rhs)) == 0:
        return Identity(lhs, rhs, True, "sympy simplify(lhs - rhs) == 0, n a symbol (p = 2n)")
    holds = rhs != 0 and sp.simplify(sp.radsimp(lhs / rhs)) == 1
    return Identity(lhs, rhs, bool(holds), "sympy simplify(lhs / rhs) == 1, n a symbol (p = 2n)")


def gamma_even_in_n(k: int) -> sp.Expr:
    """``gamma_even(2n, k) = gamma*(2n, k) (2n-1) r / (1 + (2n-2) r)`` with the true ``r``."""
    r = true_ratio(k)
    return gamma_star_in_p(k).subs(P_SYM, P_EVEN) * (P_EVEN - 1) * r / (
        1 + (P_EVEN - 2) * r)


def gamma_even(p: int, k: int) -> sp.Expr:
    """``gamma_even(p, k)`` as an exact sympy number (even ``p``)."""
    return sp.radsimp(gamma_even_in_n(k).subs(N, sp.Integer(p) / 2))


def block_constants(k: int) -> tuple[sp.Expr, sp.Expr]:
    """``(c, c')`` at ``p = 2n``: the complex blocks' ``2 k! (p/2)^((k+1)/2) / ((p-1) p^k)``
    (:func:`margintheory.symbolic.block_reduction.block_constant_expr`) and the real block's
    ``k! p^((k+1)/2) / ((p-1) p^k)`` (Lemma C.14's derivation, its last step)."""
    from margintheory.symbolic.block_reduction import block_constant_expr

    p = P_EVEN
    return block_constant_expr(p, k), sp.factorial(k) / ((p - 1) * p**k) * sp.sqrt(p) ** (k + 1)


def block_ratio(k: int, r: sp.Expr) -> Identity:
    """``c' / c = r`` for every even ``p``."""
    c, c_real = block_constants(k)
    return identity_in_n(c_real / c, r)


@lru_cache(maxsize=1)
def character_sums() -> dict[str, sp.Expr]:
    """The character sums the dual and the network need, at ``p = 2n`` (sympy geometric series; the one argued step,
    as in :mod:`margintheory.symbolic.every_p`, is ``exp(2 pi i x / q) = 1`` iff ``q | x``):
    ``even``: ``sum_(m=0)^(n-1) omega^(j 2m)`` for ``0 < j < n`` (``omega^2 = exp(2 pi i/n)``, ``n`` not dividing
    ``j``); ``all``: ``sum_(d=0)^(p-1) omega^(jd)`` for ``p`` not dividing ``j``; ``odd_at_n``, ``even_at_n``:
    ``sum (-1)^d`` over the odd ``d`` and the even ``d != 0`` (``omega^(nd) = (-1)^d``); ``cos_pair``:
    ``cos(2 pi (p - j) d/p) - cos(2 pi j d/p)``, which is 0 (the pairing ``j <-> p - j``)."""
    even = _geometric_at_root(0, N - 1, sp.exp(2 * sp.pi * sp.I * _J / N))
    full = _geometric_at_root(0, P_EVEN - 1, sp.exp(2 * sp.pi * sp.I * _D / P_EVEN))
    odd_at_n = sp.summation((-1) ** (2 * _M + 1), (_M, 0, N - 1))
    even_at_n = sp.summation((-1) ** (2 * _M), (_M, 1, N - 1))
    pair = sp.simplify(sp.cos(2 * sp.pi * (P_EVEN - _J) * _D / P_EVEN) - sp.cos(2 * sp.pi * _J * _D / P_EVEN))
    return {"even": even, "all": full, "odd_at_n": odd_at_n, "even_at_n": even_at_n, "cos_pair": pair}


def character_sums_hold() -> bool:
    """The values :func:`character_sums` must have: ``0, 0, -n, n - 1, 0``."""
    s = character_sums()
    return bool(s["even"] == 0 and s["all"] == 0 and sp.simplify(s["odd_at_n"] + N) == 0
                and sp.simplify(s["even_at_n"] - (N - 1)) == 0 and s["cos_pair"] == 0)


@dataclass(frozen=True)
class DualSide:
    """The two-valued dual ``t`` (``t_odd``, ``t_even``), its total ``T``, ``kappa`` on the complex and the real blocks,
    the single-neuron maxima ``Psi`` of both blocks at ``max g_k = bound``, and the identities."""

    r: sp.Expr
    t_odd: sp.Expr
    t_even: sp.Expr
    total: sp.Expr
    kappa_complex: sp.Expr
    kappa_real: sp.Expr
    psi_complex: sp.Expr
    psi_real: sp.Expr
    blocks_equal: Identity
    value: Identity
    nonnegative: bool


def dual_side(k: int, r: sp.Expr | None = None, bound: sp.Expr | None = None,
              target: sp.Expr | None = None) -> DualSide:
    """The two-valued dual for the ratio ``r`` (default: the true one) and ``max g_k = bound`` (default: AM-GM's
    ``(k+1)^-((k+1)/2)``); ``value`` compares the dual's maximum with ``target`` (default ``gamma_even``)."""
    r = true_ratio(k) if r is None else sp.sympify(r)
    bound = sp.Integer(k + 1) ** sp.Rational(-(k + 1), 2) if bound is None else sp.sympify(bound)
    target = gamma_even_in_n(k) if target is None else target
    s = character_sums()
    t_odd, t_even = sp.Integer(1), 2 * r - 1
    total = N * t_odd + (N - 1) * t_even  # n odd d, n - 1 even d != 0 (t(0) = 0)
    # kappa(j) = T - sum_d t(d) omega^(jd); the odd d carry all - even, the even d != 0 carry even - 1 (d = 0 left out)
    kappa_c = sp.simplify(total - (t_odd * (s["all"] - s["even"]) + t_even * (s["even"] - 1)))
    kappa_r = sp.simplify(total - (t_odd * s["odd_at_n"] + t_even * s["even_at_n"]))
    c, c_real = block_constants(k)
    scale = (P_EVEN - 1) / P_EVEN * bound / total
    psi_c, psi_r = scale * c * kappa_c, scale * c_real * kappa_r
    nonneg = bool(sp.simplify(t_even).is_nonnegative) or bool(sp.N(t_even) >= 0)
    return DualSide(r, t_odd, t_even, total, kappa_c, kappa_r, psi_c, psi_r, identity_in_n(psi_c, psi_r),
                    identity_in_n(psi_c, target), nonneg)


@dataclass(frozen=True)
class Optimality:
    """``sum_j kappa_t(j) = p T`` for every dual (``kappa_sum``), and the bound it gives: ``C m* = gamma_even`` with
    ``m* = p r / (1 + (p-2) r)`` the smallest ``max(max_(j<n) |kappa|, r |kappa(n)|)/T`` allowed by
    ``(2(n-1) + 1/r) m >= p`` (``balance``: that ``m*`` meets it with equality)."""

    kappa_sum: Identity
    balance: Identity
    value: Identity


def optimality(k: int, r: sp.Expr | None = None) -> Optimality:
    """The identities behind "no translation-invariant dual does better" (module docstring)."""
    r = true_ratio(k) if r is None else sp.sympify(r)
    s = character_sums()
    # for d != 0: sum_(j=1)^(p-1) (1 - omega^(jd)) = (p - 1) - (all - 1) = p
    kappa_sum = identity_in_n((P_EVEN - 1) - (s["all"] - 1), P_EVEN)
    m_star = P_EVEN * r / (1 + (P_EVEN - 2) * r)
    balance = identity_in_n((2 * (N - 1) + 1 / r) * m_star, P_EVEN)
    C = gamma_star_in_p(k).subs(P_SYM, P_EVEN) * (P_EVEN - 1) / P_EVEN
    return Optimality(kappa_sum, balance, identity_in_n(C * m_star, gamma_even_in_n(k)))


def half_sum_to_product_holds(k: int) -> bool:
    """Lemma C.16's half sum ``sum_(s: s_1 = +1) sign(s) (s . x)^k = 2^(k-1) k! x_1...x_k`` as a polynomial identity in
    ``x`` (sympy expansion), for the terms :func:`margintheory.core.expansions.half_sum_to_product_terms` gives."""
    from margintheory.core.expansions import half_sum_to_product_terms

    x = sp.symbols(f"x1:{k + 1}")
    total = sum(sign * sp.Add(*[si * xi for si, xi in zip(s, x, strict=True)]) ** k
                for s, sign in half_sum_to_product_terms(k))
    return sp.expand(total - 2 ** (k - 1) * sp.factorial(k) * sp.Mul(*x)) == 0


@lru_cache(maxsize=1)
def cosine_square_sum_even() -> sp.Expr:
    """``sum_(x in Z_p) cos^2(phi + 2 pi j x/p)`` at ``p = 2n``, ``0 < j < n``: ``p/2 + Re(e^(2 i phi) sum_x
    exp(4 pi i j x/p))/2`` with ``exp(4 pi i j/p) = exp(2 pi i j/n) != 1`` (``0 < j < n``): the series vanishes."""
    phi = sp.Symbol("phi", real=True)
    series = _geometric_at_root(0, P_EVEN - 1, sp.exp(2 * sp.pi * sp.I * _J / N))
    return sp.simplify(P_EVEN / 2 + sp.re(sp.exp(2 * sp.I * phi) * series) / 2)


@dataclass(frozen=True)
class NetworkSide:
    """The frequency-weighted network: per unit of cost, the complex frequencies' logit scale ``kc`` and the real
    block's ``kr``; the budgets ``s_c`` (each of the ``n - 1`` complex frequencies) and ``s_r``; the margins at an
    odd and at an even wrong label ``d``; the identities."""

    r: sp.Expr
    kc: sp.Expr
    kr: sp.Expr
    s_complex: sp.Expr
    s_real: sp.Expr
    margin_odd: sp.Expr
    margin_even: sp.Expr
    kc_is_c: Identity
    kr_is_r_kc: Identity
    cost_one: Identity
    margins_equal: Identity
    value: Identity
    norm_is_half_p: bool


def network_side(k: int, logit_scale: Fraction, per_frequency_weight: Fraction,
                 r: sp.Expr | None = None) -> NetworkSide:
    """The network of the module docstring for the ratio ``r`` (default: the true one).  ``logit_scale`` (``K``) and
    ``per_frequency_weight`` (``sigma^(k+1) W``) are the exact, ``p``-independent facts of Lemma C.18's phase measure
    (:func:`margintheory.tasks.modular_addition.every_p.network_side`)."""
    r = true_ratio(k) if r is None else sp.sympify(r)
    K = sp.Rational(logit_scale.numerator, logit_scale.denominator)
    Wt = sp.Rational(per_frequency_weight.numerator, per_frequency_weight.denominator)
    square = cosine_square_sum_even()
    kc = K / (((k + 1) * square) ** sp.Rational(k + 1, 2) * Wt)  # margin per unit cost: K (1 - cos) / cost
    kr = sp.factorial(k) / ((k + 1) * P_EVEN) ** sp.Rational(k + 1, 2)  # logits (-1)^(s-c), cost ((k+1)p)^../k!
    s_c = 2 * r / (1 + (P_EVEN - 2) * r)
    s_r = s_c / (2 * r)
    s = character_sums()
    # 2 sum_(j=1)^(n-1) cos(2 pi j d/p) = all - 1 - (-1)^d (pairing j <-> p - j): 0 for odd d, -1 for even d != 0
    cos_odd = sp.simplify((s["all"] - 1 + 1) / 2)
    cos_even = sp.simplify((s["all"] - 1 - 1) / 2)
    margin_odd = s_c * kc * ((N - 1) - cos_odd) + s_r * kr * 2
    margin_even = s_c * kc * ((N - 1) - cos_even) + s_r * kr * 0
    C = gamma_star_in_p(k).subs(P_SYM, P_EVEN) * (P_EVEN - 1) / P_EVEN
    target = gamma_even_in_n(k)
    return NetworkSide(r, kc, kr, s_c, s_r, margin_odd, margin_even, identity_in_n(kc, C),
                       identity_in_n(kr, true_ratio(k) * kc), identity_in_n((N - 1) * s_c + s_r, 1),
                       identity_in_n(margin_odd, margin_even), identity_in_n(margin_even, target),
                       sp.simplify(square - P_EVEN / 2) == 0)


def network_budgets(p: int, k: int) -> tuple[sp.Expr, sp.Expr]:
    """``(s_c, s_r)`` at a given even ``p``: the budget of each frequency ``0 < j < p/2`` and of ``p/2``."""
    r = true_ratio(k)
    s_c = sp.radsimp(2 * r / (1 + (p - 2) * r))
    return s_c, sp.radsimp(s_c / (2 * r))


def dual_profile(p: int, k: int) -> list[sp.Expr]:
    """The optimal dual at a given even ``p``, normalized to total 1: ``t(d)`` for ``d = 0..p-1``."""
    r = true_ratio(k)
    total = p // 2 + (p // 2 - 1) * (2 * r - 1)
    return [sp.Integer(0)] + [sp.radsimp((1 if d % 2 else 2 * r - 1) / total) for d in range(1, p)]


__all__ = ["N", "P_EVEN", "DualSide", "NetworkSide", "Optimality", "block_constants", "block_ratio",
           "character_sums", "character_sums_hold", "cosine_square_sum_even", "dual_profile", "dual_side",
           "gamma_even", "gamma_even_in_n", "half_sum_to_product_holds", "identity_in_n", "network_budgets",
           "network_side", "optimality", "true_ratio"]
