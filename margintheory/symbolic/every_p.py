"""Theorem C.22 for every odd ``p`` at once: the identities in the symbol ``p`` behind ``verify --every-p``
(docs/theory.md#every-p).

Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers" (arXiv:2402.09469), Theorem C.22:
for ``k`` inputs and every odd prime ``p`` the maximum ``L_(2,k+1)``-normalized margin is ``gamma*(p, k)``.  For a
fixed ``k`` every quantity of the max-min certificate is a closed form in ``p`` once two ``p``-independent facts are
in hand -- the per-frequency phase measure's moments (proved in ``Q(omega_Q)``, ``Q`` depending on ``k`` only) and the
sum-of-squares bound ``B_k`` of the block form ``g_k`` (no ``p`` in it).  This module derives the closed forms with
sympy, ``p`` a symbol:

* **the network function**: when only the wanted phase moment survives, ``f(a)[c] = K D(s - c)`` with
  ``s = a_1 + ... + a_k`` and the Dirichlet kernel ``D(x) = sum_{zeta=1}^{(p-1)/2} cos(2 pi zeta x / p)``, which is
  ``(p-1)/2`` for ``p | x`` and ``-1/2`` otherwise (:func:`dirichlet_kernel_values`: ``1 + 2 D(x)`` is the two-sided
  geometric series ``r^-n (1 - r^p)/(1 - r)`` at ``r = exp(2 pi i x/p)``, ``r^p = 1``);
* **the norm**: ``sum_x cos^2(phi + 2 pi zeta x / p) = p/2`` for odd ``p`` (:func:`cosine_square_sum`;
  ``2 zeta != 0 mod p``);
* **the lower end** ``L(p) = K (D(0) - D(1)) / ((p-1)/2 ((k+1) p/2)^((k+1)/2) sigma^(k+1) W)``
  (:func:`lower_end_in_p`) and ``L(p) = gamma*(p, k)``;
* **the upper end** ``U(p) = C_(p,k) B_k`` with ``C_(p,k)`` the block constant Lemma C.14 derives
  (:func:`margintheory.symbolic.block_reduction.block_constant_expr`) and ``U(p) / gamma*(p, k) = B_k (k+1)^((k+1)/2)``,
  free of ``p`` (:func:`upper_end_in_p`);
* **Lemma C.20**: ``f^(j, ..., j, -j) = p^k K (D(0) - D(1)) > 0``, equal to Lemma C.14's single-neuron sum
  ``k! (p/2)^(k+1) sigma^(k+1) W`` (:func:`lemma_c20_in_p`);
* **Lemma C.15**: a phase-aligned single-frequency cosine neuron has block coordinates ``A sqrt(p/2) e^(i phi)`` and
  normalized objective ``C_(p,k) (k+1)^-((k+1)/2) = gamma*(p, k)`` (:func:`optimal_neuron_in_p`).

Every function returns :class:`Identity` objects whose ``holds`` is what sympy proved; nothing is evaluated at a
particular ``p``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from margintheory.core import theory

#: the modulus, a positive integer symbol (the same symbol as :data:`margintheory.core.theory.P_SYM`)
P = theory.P_SYM
_N = sp.Symbol("n", integer=True, positive=True)  # p = 2n + 1
_X = sp.Symbol("x", integer=True)
_ZETA = sp.Symbol("zeta", integer=True, positive=True)
_PHI = sp.Symbol("phi", real=True)


@dataclass(frozen=True)
class Identity:
    """``lhs = rhs`` for every odd ``p`` (``p`` the symbol :data:`P`); ``holds``: sympy proved it; ``method``: how."""

    lhs: sp.Expr
    rhs: sp.Expr
    holds: bool
    method: str

    def text(self) -> str:
        return f"{sp.sstr(self.lhs)} = {sp.sstr(self.rhs)}"


def sympy_identity(lhs: sp.Expr, rhs: sp.Expr) -> Identity:
    """``lhs = rhs`` proved by ``simplify(lhs - rhs) == 0`` or, for non-zero ``rhs``, ``simplify(lhs / rhs) == 1``
    (radicals in ``p`` simplify more reliably as a quotient); sympy answers ``0`` / ``1`` only when it proved it."""
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    if sp.simplify(lhs - rhs) == 0:
        return Identity(lhs, rhs, True, "sympy simplify(lhs - rhs) == 0, p a symbol")
    holds = rhs != 0 and sp.simplify(lhs / rhs) == 1
    return Identity(lhs, rhs, bool(holds), "sympy simplify(lhs / rhs) == 1, p a symbol")


def _geometric_at_root(low: sp.Expr, high: sp.Expr, root: sp.Expr) -> sp.Expr:
    """``sum_{x=low}^{high} r^x`` (sympy summation, the branch ``r != 1``) simplified at ``r = root``."""
    r, x = sp.Symbol("r"), sp.Symbol("x_sum", integer=True)
    series = sp.summation(r**x, (x, low, high))
    generic = series.args[-1][0] if isinstance(series, sp.Piecewise) else series
    return sp.simplify(generic.subs(r, root))


@lru_cache(maxsize=1)
def dirichlet_kernel_values() -> tuple[sp.Expr, sp.Expr]:
    """``(D(0), D(x))`` for ``p | x`` and ``p`` not dividing ``x``, as expressions in :data:`P`, derived by sympy:
    ``D(0)`` is a sum of ``(p-1)/2`` ones, and for ``r = exp(2 pi i x/p) != 1`` (``p`` not dividing ``x``)
    ``1 + 2 D(x) = sum_{zeta=-n}^{n} r^zeta`` is a geometric series that vanishes (``r^p = exp(2 pi i x) = 1``);
    the full derivation with its re-indexing step is :func:`margintheory.symbolic.exact.per_frequency_sum_derivation`.
    """
    p = 2 * _N + 1
    ones = sp.summation(sp.Integer(1), (_ZETA, 1, _N))
    two_sided = _geometric_at_root(-_N, _N, sp.exp(2 * sp.pi * sp.I * _X / p))
    half = (P - 1) / 2
    return sp.simplify(ones.subs(_N, half)), sp.simplify(((two_sided - 1) / 2).subs(_N, half))


@lru_cache(maxsize=1)
def cosine_square_sum() -> sp.Expr:
    """``sum_{x in Z_p} cos^2(phi + 2 pi zeta x / p)`` for odd ``p`` and ``1 <= zeta <= (p-1)/2``, in :data:`P`:
    ``cos^2 y = (1 + cos 2y)/2`` and ``sum_x cos(2 phi + 4 pi zeta x/p) = Re(e^(2 i phi) sum_x r^x)`` with
    ``r = exp(4 pi i zeta / p) != 1`` (``0 < 2 zeta < p``), a geometric series that vanishes (``r^p = 1``)."""
    y = sp.Symbol("y", real=True)
    if sp.simplify(sp.cos(y) ** 2 - (1 + sp.cos(2 * y)) / 2) != 0:  # pragma: no cover - sympy's trigonometry
        raise ArithmeticError("cos^2 y = (1 + cos 2y)/2 not confirmed")
    series = _geometric_at_root(0, P - 1, sp.exp(4 * sp.pi * sp.I * _ZETA / P))
    return sp.simplify(P / 2 + sp.re(sp.exp(2 * sp.I * _PHI) * series) / 2)


@dataclass(frozen=True)
class LowerEnd:
    """The construction's margin as closed forms in :data:`P` (module docstring): the correct and wrong logits, the
    margin ``h``, ``sum_i ||theta_i||^(k+1)`` and ``L = h / norm``."""

    correct: sp.Expr
    wrong: sp.Expr
    margin: sp.Expr
    norm_power: sp.Expr
    normalized: sp.Expr


def lower_end_in_p(k: int, logit_scale: Fraction, weight: Fraction) -> LowerEnd:
    """``L(p)`` of a network whose logits are ``logit_scale * D(s - c)`` and whose neurons have
    ``sum A_i^(k+1) = weight`` per frequency (``sigma^(k+1) W``), at each of the ``(p-1)/2`` frequencies."""
    d0, d1 = dirichlet_kernel_values()
    K = sp.Rational(logit_scale.numerator, logit_scale.denominator)
    Wt = sp.Rational(weight.numerator, weight.denominator)
    freqs = sp.summation(sp.Integer(1), (_ZETA, 1, (P - 1) / 2))
    norm_power = freqs * ((k + 1) * cosine_square_sum()) ** sp.Rational(k + 1, 2) * Wt
    margin = sp.simplify(K * (d0 - d1))
    return LowerEnd(K * d0, K * d1, margin, norm_power, margin / norm_power)


def gamma_star_in_p(k: int) -> sp.Expr:
    """``gamma*(p, k)`` of Lemma C.15 / Theorem C.22 with ``p`` the symbol :data:`P` (the expected column)."""
    return theory.gamma_star_symbolic().subs(theory.K_SYM, k)


@dataclass(frozen=True)
class UpperEnd:
    """``U(p) = C_(p,k) B`` and its ratio ``rho = U / gamma*`` (``rho_free_of_p``: sympy found no ``p`` in it)."""

    constant: sp.Expr
    upper: sp.Expr
    rho: sp.Expr
    rho_free_of_p: bool


def upper_end_in_p(k: int, block_bound: Fraction | sp.Expr) -> UpperEnd:
    """``U(p) = C_(p,k) B_k`` with the block constant Lemma C.14 derives, and ``U(p) / gamma*(p, k)`` simplified
    (``B_k`` a rational, or an exact sympy number such as AM-GM's ``(k+1)^-((k+1)/2)``)."""
    from margintheory.symbolic.block_reduction import block_constant_expr

    c = block_constant_expr(P, k)
    B = (sp.Rational(block_bound.numerator, block_bound.denominator) if isinstance(block_bound, Fraction)
         else sp.sympify(block_bound))
    rho = sp.simplify(c * B / gamma_star_in_p(k))
    return UpperEnd(c, c * B, rho, P not in rho.free_symbols)


def block_constant_matches_lemma_c14(k: int) -> Identity:
    """``C_(p,k)^2`` equals the square Lemma C.14's derivation proves (``(2 k!/((p-1)p^k))^2 (p/2)^(k+1)``)."""
    from margintheory.symbolic.block_reduction import block_constant_expr

    proved = (2 * sp.factorial(k) / ((P - 1) * P**k)) ** 2 * (P / 2) ** (k + 1)
    return sympy_identity(block_constant_expr(P, k) ** 2, proved)


def optimal_neuron_in_p(k: int) -> tuple[Identity, Identity]:
    """Lemma C.15 for the neurons of the construction, every odd ``p``: a cosine ``A cos(phi + 2 pi zeta x/p)`` has
    DFT ``A p e^(i phi) / 2`` at ``zeta`` (the other exponential sums to 0), so block coordinate ``z = A sqrt(p/2)
    e^(i phi)``; with aligned phases ``g_k(z) = |z|^(k+1)`` and ``||theta||^2 = (k+1) |z|^2``.  Returns (the block
    coordinate's modulus squared ``= A^2 p / 2``, the normalized objective ``C_(p,k) g_k / ||theta||^(k+1) =
    gamma*(p, k)``)."""
    from margintheory.symbolic.block_reduction import block_constant_expr

    A = sp.Symbol("A", positive=True)
    other = _geometric_at_root(0, P - 1, sp.exp(-4 * sp.pi * sp.I * _ZETA / P))
    dft = A / 2 * (P * sp.exp(sp.I * _PHI) + sp.exp(-sp.I * _PHI) * other)
    z2 = sp.simplify(dft * sp.conjugate(dft) / (P / 2))
    modulus = sympy_identity(z2, A**2 * P / 2)
    ratio = sp.sqrt(z2) ** (k + 1) / ((k + 1) * z2) ** sp.Rational(k + 1, 2)
    return modulus, sympy_identity(block_constant_expr(P, k) * ratio, gamma_star_in_p(k))


def lemma_c20_in_p(k: int, logit_scale: Fraction, weight: Fraction) -> tuple[sp.Expr, Identity]:
    """``f^(j, ..., j, -j)`` for ``j != 0`` from the logits ``K D(s - c)``: ``p^(k-1) sum_(s,c) F(s, c)
    omega^(-j(s-c)) = p^k K sum_x D(x) omega^(-jx) = p^k K (D(0) - D(1))`` (``sum_(x != 0) omega^(-jx) = -1``), and
    its identity with Lemma C.14's single-neuron sum ``k! (p/2)^(k+1) sigma^(k+1) W``."""
    d0, d1 = dirichlet_kernel_values()
    K = sp.Rational(logit_scale.numerator, logit_scale.denominator)
    Wt = sp.Rational(weight.numerator, weight.denominator)
    others = _geometric_at_root(0, P - 1, sp.exp(-2 * sp.pi * sp.I * _X / P)) - 1  # x != 0, p not dividing j
    value = sp.simplify(P**k * K * (d0 + d1 * others))
    return value, sympy_identity(value, sp.factorial(k) * (P / 2) ** (k + 1) * Wt)
