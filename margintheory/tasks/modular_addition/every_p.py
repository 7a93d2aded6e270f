"""Theorem C.22 for every odd ``p`` at once: ``verify --k K --every-p`` (docs/theory.md#every-p).

Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers" (arXiv:2402.09469), Theorem C.22
(= Theorem 4.9): with uniform class weighting the maximum ``L_(2,k+1)``-normalized margin on ``k``-input modular
addition mod an odd prime ``p`` is ``gamma*(p, k)``, every max-margin network uses only phase-aligned
single-frequency cosines (Lemmas C.6, C.15), and every frequency (Lemma C.20).  The per-``p`` verifier proves this
for one ``p``; here ``p`` is a symbol and every step is either a ``p``-independent exact computation or an identity
in ``p`` proved by sympy (:mod:`margintheory.symbolic.every_p`), or ``argued`` with its reason:

* **lower end** ``L(p)``: the network (Lemma C.18's construction or a family of
  :mod:`margintheory.core.phase_measures`) is one phase measure per frequency, the same for every ``p``; its
  off-diagonal moments vanish and only the wanted one survives (exact, ``Q(omega_Q)``, ``Q`` depends on ``k`` only),
  so ``f(a)[c] = K D(s - c)`` with the Dirichlet kernel ``D`` (docs/theory.md#compact-margin), and the margin, the
  norm, ``L(p) = gamma*(p, k)``, condition C.1, Lemma C.15 for every neuron and Lemma C.20 are identities in ``p``;
* **upper end** ``U(p) = C_(p,k) B_k``: weak duality (Lemma C.6, argued), Lemma C.14 and the block closed form for
  all ``p`` (sympy), homogeneity (argued) and ``max g_k = B_k = (k+1)^-((k+1)/2)`` exactly by the AM-GM certificate
  of :func:`margintheory.certificate.am_gm.block_form_maximum` (no ``p`` in it, no solver), so ``U(p) = gamma*(p,
  k)``; with ``method="sos"`` ``B_k`` is the exact SOS certificate's rational instead, ``U(p) / gamma*(p, k) = B_k
  (k+1)^((k+1)/2)`` is free of ``p`` and within ``1e-9`` of 1 (exact rationals), and the AM-GM row closes the gap;
* **width minimum** (``p`` prime ``> 2k``): the per-frequency lower-bound certificates of
  :mod:`margintheory.solvers.width_bounds` are statements about measures on the torus ``T^k`` (no ``p``); the
  smallest family attains them for every odd ``p``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp

from margintheory.certificate.upper_bound import C14_TERMS, C14_TERMS_REASON
from margintheory.core.checks import Check, VerificationResult, bool_check
from margintheory.core.phase_measures import PhaseMeasure, family_measure, smallest_known_measure
from margintheory.core.problems import ModularAdditionEveryP
from margintheory.engines.fourier_margin import (
    GroupStructure,
    expansion_coefficient,
    family_scale_power,
    group_structure,
    measure_group,
)
from margintheory.errors import InputError
from margintheory.symbolic import every_p as sym

#: details printed under the table of ``verify --every-p`` (the formulas in ``p``)
EVERY_P_FIELDS = ["p_range_text", "gamma_star_formula", "lower_formula", "upper_formula", "max_margin_interval",
                  "width_formula", "width_minimum"]
#: the lower and upper ends agree when ``U / L - 1 <= GAP`` (the per-``p`` verifier's tolerance), decided exactly
GAP = Fraction(1, 10**9)
_WHERE = "docs/theory.md#every-p"
#: the argued steps of the rows (their names; the rows that rest on them name them as premises)
DIRICHLET_ROOT = "Dirichlet: r = 1 iff p | x"


@dataclass(frozen=True)
class NetworkSide:
    """The ``p``-independent facts about the network: its per-frequency measure, the exact moment structure, the
    scale ``sigma^(k+1)``, the weight ``W`` per frequency, ``N_k(-1)`` and the logit scale ``K``."""

    family: str
    measure: PhaseMeasure
    structure: GroupStructure
    scale_power: Fraction
    weight: Fraction
    coefficient: int
    logit_scale: Fraction
    wanted_moment: bool
    seconds: float

    @property
    def per_frequency_weight(self) -> Fraction:
        """``sum_i A_i^(k+1)`` over one frequency's neurons (``sigma^(k+1) W``)."""
        return self.scale_power * self.weight


def argued_row(name: str, reason: str, statement: str) -> Check:
    """A step that is an argument, not a computation: informational, its reason in ``detail``."""
    return Check(name=name, expected="argument", measured="argued", tolerance=None, passed=True, exactness="argued",
                 informational=True, detail=reason, statement=statement)


def network_side(family: str, k: int) -> NetworkSide:
    """The measure of ``family`` at ``k`` and its exact moments (:func:`group_structure`: integer counts reduced
    modulo ``Phi_Q``; no ``p`` is involved), the expansion coefficient ``N_k(-1)`` and ``K = 2 * 2^-(k+1) N_k(-1)
    sigma^(k+1) W`` (the ``eps = +1`` term and its conjugate)."""
    try:
        measure = family_measure(family, k)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    return measure_side(measure, family)


def measure_side(measure: PhaseMeasure, family: str) -> NetworkSide:
    """:func:`network_side` for a given measure (``family`` sets the scale ``sigma^(k+1)``)."""
    t0 = time.perf_counter()
    k = measure.k
    group = measure_group(measure, (1,))
    structure = group_structure(group, k, measure.denominator)
    weight = sum(measure.weights, Fraction(0))
    iw_total = int(weight * structure.weight_scale)
    counts = structure.diagonal[-1]  # L mu(-(1, ..., 1), +1): aligned phases put everything at residue 0
    wanted = bool(counts[0] == iw_total and not counts[1:].any())
    coef = expansion_coefficient(k, [-1] * k)
    scale = family_scale_power(family, k)
    K = 2 * Fraction(coef, 2 ** (k + 1)) * scale * weight
    return NetworkSide(family, measure, structure, scale, weight, coef, K, wanted, time.perf_counter() - t0)


def _structure_rows(net: NetworkSide, k: int) -> list[Check]:
    s, mu = net.structure, net.measure
    q = mu.denominator
    return [
        bool_check("moments: f depends on s", not s.failures, exactness="proved",
                   detail=f"{s.checked} moments mu(n, +1), n non-constant, |n|_1 <= {k}, of the {mu.size}-atom measure "
                          f"reduced modulo Phi_{q}; failures: {s.failures}; the measure is the same at every frequency "
                          "and for every p",
                   statement="off-diagonal phase moments vanish (exact, Q(omega_Q), Q depends on k only), so "
                             "f(a)[c] = F(a_1+...+a_k mod p, c) for every p (docs/theory.md#compact-margin)"),
        bool_check("only the wanted moment", s.wanted_only and net.wanted_moment, exactness="proved",
                   detail=f"phases aligned (psi = phi_1+...+phi_k): {s.aligned}; diagonal moments t != -1 vanish: "
                          f"{s.wanted_only}; mu(-1, +1) = W = {net.weight} exactly: {net.wanted_moment}",
                   statement="only the wanted diagonal moment survives, with the frequency's whole weight W"),
        Check(name="expansion N_k(-1) = k!", expected=math.factorial(k), measured=net.coefficient, tolerance=None,
              passed=net.coefficient == math.factorial(k), exactness="proved",
              detail=f"coefficient of z_1^-1...z_k^-1 in (sum_j (z_j + 1/z_j))^k (exact integer convolution); "
                     f"K = 2 * 2^-(k+1) N_k(-1) sigma^(k+1) W = {net.logit_scale}",
              statement="the wanted term's multinomial coefficient, which sets the logit scale K"),
    ]


@lru_cache(maxsize=1)
def _dirichlet_derivation() -> tuple[bool, str]:
    from margintheory.symbolic.exact import per_frequency_sum_derivation

    d = per_frequency_sum_derivation(p_max=None)  # identities in n, x only: nothing evaluated at a particular p
    return d.all_passed, d.summary()


def _dirichlet_rows(net: NetworkSide, lower: sym.LowerEnd) -> list[Check]:
    d0, d1 = sym.dirichlet_kernel_values()
    ok, summary = _dirichlet_derivation()
    values_ok = sp.simplify(d0 - (sym.P - 1) / 2) == 0 and d1 == sp.Rational(-1, 2)
    K = net.logit_scale
    return [
        argued_row(DIRICHLET_ROOT, "exp(i t) = 1 iff t is in 2 pi Z (t = 2 pi x/p); not machine-checked: the "
                   "Dirichlet kernel's derivation takes the branch r != 1 of the geometric series when p does not "
                   "divide x", "r = exp(2 pi i x/p) = 1 exactly when p divides x"),
        Check(name="Dirichlet kernel (all odd p)", expected="(p-1)/2 if p | x, else -1/2",
              measured=f"{sp.sstr(d0)}, {sp.sstr(d1)}", tolerance=None, passed=bool(ok and values_ok),
              exactness="proved",
              detail=f"D(x) = sum_(zeta=1)^((p-1)/2) cos(2 pi zeta x/p): 1 + 2 D(x) = r^-n (1 - r^p)/(1 - r) = 0 at "
                     f"r = exp(2 pi i x/p) != 1 (sympy, p = 2n + 1 a symbol); derivation: {summary} (the argued step: "
                     "exp(2 pi i x/p) = 1 iff p | x, its own row)",
              statement="the Dirichlet kernel D(x) = (p-1)/2 for p | x, -1/2 otherwise, for every odd p",
              premises=[DIRICHLET_ROOT]),
        Check(name="logits = K D(s - c), all p", expected="K D(s - c)",
              measured=f"correct {sp.sstr(lower.correct)}, wrong {sp.sstr(lower.wrong)} (K = {K})", tolerance=None,
              passed=bool(ok and values_ok and not net.structure.failures and net.structure.wanted_only),
              exactness="proved",
              detail="the expansion of the neurons' cosines leaves, at each of the (p-1)/2 frequencies, only the "
                     "wanted moments eps = +-1 (rows above): f(a)[c] = K sum_zeta cos(2 pi zeta (s - c)/p) = "
                     "K D(s - c)",
              statement="f(a)[c] = K D(a_1+...+a_k - c) with the Dirichlet kernel D, for every odd p",
              premises=["moments: f depends on s", "only the wanted moment", "expansion N_k(-1) = k!",
                        "Dirichlet kernel (all odd p)"]),
    ]


def _margin_rows(net: NetworkSide, k: int, lower: sym.LowerEnd) -> list[Check]:
    gamma = sym.gamma_star_in_p(k)
    positive = bool(lower.margin.is_positive)
    square = sym.cosine_square_sum()
    ident = sym.sympy_identity(lower.normalized, gamma)
    return [
        bool_check("all on margin, C.1 (all p)", positive, exactness="proved",
                   detail=f"every input with label s has margin K (D(0) - D(1)) = {sp.sstr(lower.margin)} > 0, the "
                          f"same for every s; every wrong logit is K D(x != 0) = {sp.sstr(lower.wrong)}",
                   statement="every point on the margin (Lemma C.6) and all wrong logits equal (condition C.1), for "
                             "every odd p", premises=["logits = K D(s - c), all p"]),
        Check(name="norm: sum cos^2 = p/2", expected="p/2", measured=sp.sstr(square), tolerance=None,
              passed=sp.simplify(square - sym.P / 2) == 0, exactness="proved",
              detail=f"geometric series at exp(4 pi i zeta/p) != 1 (0 < 2 zeta < p); sum_i ||theta_i||^(k+1) = "
                     f"{sp.sstr(lower.norm_power)}",
              statement="every cosine vector has squared norm p/2 for every odd p, so ||theta_i||^(k+1) = "
                        "((k+1) p/2)^((k+1)/2) A_i^(k+1)"),
        Check(name="L(p) = gamma*(p, k)", expected=sp.sstr(gamma), measured=sp.sstr(sp.simplify(lower.normalized)),
              tolerance=0.0, passed=ident.holds, exactness="proved", detail=f"{ident.method}",
              statement="the network's normalized margin L(p) = margin / norm^(k+1) equals gamma*(p, k) for every "
                        "odd p (Theorem C.22, claim 1, lower end)",
              premises=["all on margin, C.1 (all p)", "norm: sum cos^2 = p/2"]),
    ]


def _lemma_rows(net: NetworkSide, k: int) -> list[Check]:
    modulus, objective = sym.optimal_neuron_in_p(k)
    value, c14 = sym.lemma_c20_in_p(k, net.logit_scale, net.per_frequency_weight)
    structural = net.structure.aligned
    return [
        bool_check("neurons optimal (C.15, all p)", structural and modulus.holds and objective.holds,
                   exactness="proved",
                   detail=f"every neuron: one frequency, one amplitude A on its k+1 cosines, phases aligned "
                          f"({structural}); |z|^2 = {sp.sstr(modulus.lhs)} ({modulus.method}); "
                          f"C_(p,k) g_k(z)/|theta|^(k+1) = {sp.sstr(sp.simplify(objective.lhs))} = gamma*(p, k) "
                          f"({objective.method})",
                   statement="every neuron attains the single-neuron optimum gamma*(p, k) (Lemma C.15), every odd p",
                   premises=["only the wanted moment", "U: C_(p,k) as C.14 derives"]),
        Check(name="f^(j..,-j) > 0 (C.20, all p)", expected="> 0", measured=sp.sstr(value), tolerance=None,
              passed=bool(value.is_positive) and c14.holds, exactness="proved",
              detail=f"p^k K (D(0) - D(1)) for every j != 0 mod p; equal to Lemma C.14's single-neuron sum "
                     f"k! (p/2)^(k+1) sigma^(k+1) W: {c14.holds} ({c14.method})",
              statement="f^(j,...,j,-j) > 0 for all j != 0 (Lemma C.20) and equal to Lemma C.14's sum, every odd p",
              premises=["logits = K D(s - c), all p"]),
    ]


def _network_facts(net: NetworkSide, k: int) -> list[Check]:
    size = net.measure.size
    rows = [Check(name="width = size (p-1)/2", expected=f"{size} (p-1)/2", measured=f"{size} x (p-1)/2 frequencies",
                  tolerance=None, passed=True, exactness="proved", informational=True,
                  detail=f"{net.measure.description}; Lemma C.18's theorem width is {2 ** (2 * k - 1)} (p-1)/2",
                  statement="width = atoms per frequency x (p-1)/2")]
    if net.family == "lemma-c18":
        wrong = sym.dirichlet_kernel_values()[1] * sp.Rational(net.logit_scale.numerator,
                                                                net.logit_scale.denominator)
        rows.append(Check(name="paper: wrong logit = 0", expected=0, measured=sp.sstr(wrong), tolerance=0.0,
                          passed=wrong == 0, exactness="proved", informational=True,
                          detail="the proofs of Lemmas C.17-C.18 state 0; the value is -1/2 for every odd p "
                                 "(docs/theory.md#findings); the conclusions survive (all wrong logits are equal)",
                          statement="the paper's wrong-label logit of the construction, every odd p"))
    return rows


def lower_rows(net: NetworkSide, k: int) -> tuple[list[Check], sym.LowerEnd]:
    """The lower end's rows: the network's moments, the Dirichlet-kernel form, margin, norm, ``L(p) = gamma*``, the
    lemmas, the width."""
    lower = sym.lower_end_in_p(k, net.logit_scale, net.per_frequency_weight)
    rows = (_structure_rows(net, k) + _dirichlet_rows(net, lower) + _margin_rows(net, k, lower)
            + _lemma_rows(net, k) + _network_facts(net, k))
    return rows, lower


# ---------------------------------------------------------------- the upper end

@dataclass(frozen=True)
class UpperSide:
    """``U(p) = C_(p,k) B_k``: the SOS bound ``B_k`` (exact, no ``p``), the symbolic proof of Lemma C.14, the
    constant's agreement with it, ``rho_k = U / gamma*`` and ``rho_k^2`` as an exact rational."""

    k: int
    block_bound: Fraction
    solver: dict[str, Any]
    lemma_c14: tuple[bool, str]
    end: sym.UpperEnd
    constant: sym.Identity
    rho_squared: Fraction
    seconds: float
    method: str = "sos"
    am_gm: Any = None  # the AM-GM certificate (margintheory.certificate.am_gm.BlockFormMaximum) with method "am-gm"

    @property
    def block_bound_text(self) -> str:
        """``B_k`` exactly: the rational of the SOS certificate, or AM-GM's ``(k+1)^-((k+1)/2)`` as sympy prints it."""
        if self.method == "am-gm":
            return sp.sstr(sp.Integer(self.k + 1) ** sp.Rational(-(self.k + 1), 2))
        return str(self.block_bound)

    @property
    def rho_matches(self) -> bool:
        """sympy's ``rho`` (from ``C_(p,k) B / gamma*``) squares to the exact ``B^2 (k+1)^(k+1)``."""
        r2 = sp.Rational(self.rho_squared.numerator, self.rho_squared.denominator)
        return bool(self.end.rho_free_of_p and sp.simplify(self.end.rho**2 - r2) == 0)


@lru_cache(maxsize=1)
def _lemma_c14() -> tuple[bool, str]:
    """Lemma C.14's derivation (``p`` and ``k`` symbols: the same proof for every ``k``), run once per process."""
    from margintheory.symbolic.block_reduction import lemma_c14_for_all_p

    d = lemma_c14_for_all_p()
    return d.all_passed and not any(s.check.kind in ("argued", "float") for s in d.steps), d.summary()


def upper_side(k: int, *, max_memory: int, time_limit: float | None = None, method: str = "am-gm") -> UpperSide:
    """The ``p``-independent bound on ``g_k`` and the identities in ``p`` of the upper end: ``method="am-gm"`` the
    exact maximum ``(k+1)^-((k+1)/2)`` (AM-GM certificate, no solver), ``"sos"`` the SOS certificate."""
    from margintheory.certificate.upper_bound import block_form_certificate

    t0 = time.perf_counter()
    if method == "am-gm":
        from margintheory.certificate.am_gm import block_form_maximum

        am = block_form_maximum(k)
        exact = sp.Integer(k + 1) ** sp.Rational(-(k + 1), 2)
        end = sym.upper_end_in_p(k, exact)
        info = {"name": "AM-GM (no solver)", "status": "proved" if am.proved else "failed",
                "seconds": am.seconds}
        return UpperSide(k, am.bound, info, _lemma_c14(), end, sym.block_constant_matches_lemma_c14(k),
                         am.bound_squared * (k + 1) ** (k + 1), time.perf_counter() - t0, "am-gm", am)
    cert, info = block_form_certificate(k, max_memory=max_memory, time_limit=time_limit)
    B = cert.bound
    end = sym.upper_end_in_p(k, B)
    return UpperSide(k, B, dict(info), _lemma_c14(), end, sym.block_constant_matches_lemma_c14(k),
                     B * B * (k + 1) ** (k + 1), time.perf_counter() - t0)


def _upper_chain_rows(up: UpperSide) -> list[Check]:
    from margintheory.certificate.upper_bound import HOMOGENEITY, WEAK_DUALITY

    c14_ok, c14_summary = up.lemma_c14
    return [
        argued_row("U: weak duality (C.6)", WEAK_DUALITY[1], f"upper-bound step: {WEAK_DUALITY[0]}"),
        argued_row(C14_TERMS, C14_TERMS_REASON, "Lemma C.14's bookkeeping: which terms of the expanded objective "
                   "survive the sum over inputs and labels (the statements sympy's identities are about)"),
        bool_check("U: C.14 blocks, all p", c14_ok, exactness="proved",
                   detail=f"sympy, p a symbol, checks the arithmetic of each step (e.g. p^f/p = p^(f-1), "
                          f"A + conj A = 2 Re A): {c14_summary}; which terms cancel is the argued row "
                          f"'{C14_TERMS}'",
                   statement="Lemma C.14 and the block closed form F = sum_j C_(p,k) g_k(zeta_j) for every p; for odd "
                             "p all (p-1)/2 blocks are complex with the one constant C_(p,k)",
                   premises=[C14_TERMS]),
        bool_check("U: C_(p,k) as C.14 derives", up.constant.holds, exactness="proved",
                   detail=f"C_(p,k) = {sp.sstr(up.end.constant)}; its square = the square proved in Lemma C.14's "
                          f"derivation ({up.constant.method})",
                   statement="the block constant C_(p,k) = 2 k! (p/2)^((k+1)/2) / ((p-1) p^k) used for U(p)",
                   premises=["U: C.14 blocks, all p"]),
        argued_row("U: homogeneity", HOMOGENEITY[1], f"upper-bound step: {HOMOGENEITY[0]}"),
        _block_bound_row(up),
    ]


def _block_bound_row(up: UpperSide) -> Check:
    """The ``p``-independent bound on ``g_k``: AM-GM's exact maximum, or the SOS certificate."""
    if up.method == "am-gm":
        am = up.am_gm
        return Check(name="U: AM-GM max g_k exact", expected=f"max^2 = {Fraction(1, (up.k + 1) ** (up.k + 1))}",
                     measured=f"max^2 = {am.bound_squared}", tolerance=None, passed=bool(am.proved),
                     exactness="proved",
                     detail=f"{am.detail}; {am.seconds * 1e3:.1f} ms, no solver; the form g_k = Re(conj(z_w) "
                            "z_1...z_k) has no p in it",
                     statement="AM-GM certificate: max_(|z|=1) g_k = (k+1)^-((k+1)/2), exact and p-independent")
    return Check(name="U: SOS max g_k <= B_k", expected="holds", measured="proved", tolerance=None, passed=True,
              exactness="proved",
              detail=f"B_k = {up.block_bound} ({float(up.block_bound):.15g}); {up.solver.get('gram_blocks')} Gram "
                     f"blocks (largest {up.solver.get('largest_block')}), exact polynomial identity and exact LDL^T; "
                     f"solver {up.solver.get('name')} {up.solver.get('status')}; the form "
                     "g_k = Re(conj(z_w) z_1...z_k) "
                     "has no p in it",
              statement="SOS certificate: max_(|z|=1) g_k <= B_k, exact and p-independent")


def _upper_rows(up: UpperSide, lower: sym.LowerEnd) -> list[Check]:
    k, gamma = up.k, sym.gamma_star_in_p(up.k)
    r2 = up.rho_squared
    derived = sp.expand(up.end.rho**2)  # U(p)/gamma*(p, k) squared as sympy derived it from C_(p,k) B_k
    d2 = Fraction(int(derived.p), int(derived.q)) if up.end.rho_free_of_p and derived.is_Rational else None
    within = d2 is not None and Fraction(1) <= d2 <= (1 + GAP) ** 2
    exact = sym.sympy_identity(up.end.constant * sp.Integer(k + 1) ** sp.Rational(-(k + 1), 2), gamma)
    at_l = sym.sympy_identity(lower.normalized, gamma)
    rho_f = math.sqrt(float(d2 if d2 is not None else r2))
    if up.am_gm is not None:
        am = up.am_gm
    else:
        from margintheory.certificate.am_gm import block_form_maximum

        am = block_form_maximum(k)
    return _upper_chain_rows(up) + [
        Check(name="U(p) = rho_k gamma*(p, k)", expected="free of p", measured=f"rho_k = {sp.sstr(up.end.rho)}",
              tolerance=None, passed=up.rho_matches, exactness="proved",
              detail=f"U(p) = C_(p,k) B_k and U(p)/gamma*(p, k) simplified by sympy: no p left; rho_k^2 = "
                     f"B_k^2 (k+1)^(k+1) = {r2} (exact)",
              statement="U(p) = C_(p,k) B_k is rho_k gamma*(p, k) with rho_k independent of p",
              premises=["U: C_(p,k) as C.14 derives", _block_bound_row(up).name]),
        Check(name="max margin in [L, U], all p", expected=float(GAP), measured=rho_f - 1, tolerance=float(GAP),
              passed=bool(within), exactness="proved",
              detail=f"1 <= rho_k^2 <= (1 + {GAP})^2 compared in exact rationals, rho_k = U(p)/gamma*(p, k) as "
                     f"derived from C_(p,k) B_k: L(p) = gamma*(p, k) <= max margin <= U(p) = rho_k gamma*(p, k), "
                     f"rho_k - 1 = {rho_f - 1:.3e}, for every odd p",
              statement="network margin = optimum for every odd p: (U(p) - L(p))/L(p) = rho_k - 1 <= 1e-9",
              premises=["L(p) = gamma*(p, k)", "U: weak duality (C.6)", "U: C.14 blocks, all p", "U: homogeneity",
                        "U(p) = rho_k gamma*(p, k)"]),
        bool_check("AM-GM: max g_k exact", am.proved, exactness="proved",
                   detail=f"|g_k(z)| <= |z_w| |z_1|...|z_k| <= ((|z|^2)/(k+1))^((k+1)/2) (AM-GM of the k+1 squared "
                          f"moduli), attained by the aligned equal-modulus point: the exact certificate {am.detail}"
                          + ("" if up.method == "am-gm" else
                             f"; consistent with the SOS bound: B_k (k+1)^((k+1)/2) - 1 = {rho_f - 1:.3e} >= 0"),
                   statement="max_(|z|=1) g_k = (k+1)^-((k+1)/2) (Lemma C.15's quadratic-mean / geometric-mean "
                             "step), an exact certificate"),
        bool_check("L = U = gamma*(p, k)", exact.holds and at_l.holds and r2 >= 1 and am.proved, exactness="proved",
                   detail=f"C_(p,k) (k+1)^-((k+1)/2) = gamma*(p, k) ({exact.method}) and L(p) = gamma*(p, k) "
                          f"({at_l.method}): with AM-GM's max g_k the two ends coincide for every odd p",
                   statement="L(p) = U(p) = gamma*(p, k), an identity in p (the upper end at the exact max of g_k)",
                   premises=["AM-GM: max g_k exact", "max margin in [L, U], all p", "U: C_(p,k) as C.14 derives"]),
    ]


# ---------------------------------------------------------------- the width minimum

REDUCTION = ("for p prime > 2k a max-margin network's neurons at each frequency form a positive measure on T^k with "
             "vanishing unwanted moments: every neuron is a phase-aligned single-frequency cosine (Lemmas C.6 and "
             "C.15), every frequency is used (Lemma C.20), and the logit table F(a) + gamma* 1[c = y(a)] (Lemma C.20, "
             "step 2) has no Fourier mass at the patterns (zeta n, eps zeta) mod p of the unwanted terms, which are "
             "distinct for distinct (zeta, n, eps): eps zeta = eps' zeta' forces zeta' = zeta (both in "
             "1..(p-1)/2), then p | zeta (n_j - n'_j) with p prime forces p | n_j - n'_j, and |n_j - n'_j| <= 2k < p. "
             "The smallest such measure is a question about T^k alone: no p enters the certificates below")


@dataclass(frozen=True)
class WidthMinimum:
    """Neurons per frequency: the proved lower bound (``None`` when its certificate failed), the smallest family and
    whether its moments were proved; ``closed`` when the two meet."""

    k: int
    bound: int | None
    method: str
    assumes: str
    found: int
    found_name: str
    found_proved: bool
    seconds: float

    @property
    def closed(self) -> bool:
        return self.bound is not None and self.found_proved and self.bound == self.found

    def text(self) -> str:
        if self.closed:
            return (f"exactly {self.found} (p-1)/2 neurons for every prime p > {2 * self.k} ({self.found} per "
                    f"frequency: the proved lower bound, attained by the {self.found_name} network)")
        low = "?" if self.bound is None else self.bound
        return f"{low} (p-1)/2 <= minimum <= {self.found} (p-1)/2 for every prime p > {2 * self.k} (open)"


def width_minimum(k: int, net: NetworkSide) -> WidthMinimum:
    """The shipped lower-bound certificate for ``k`` re-checked exactly and the smallest family's moments (reusing
    ``net`` when it is that family)."""
    from margintheory.errors import SolverError
    from margintheory.solvers.width_bounds import width_lower_bound

    t0 = time.perf_counter()
    try:
        wlb = width_lower_bound(k)
        bound, method, assumes = wlb.per_frequency, wlb.description, wlb.assumes
    except SolverError as exc:
        bound, method, assumes = None, f"the certificate failed its exact check: {exc}", ""
    smallest = smallest_known_measure(k)
    same = net.measure.name == smallest.name and np.array_equal(net.measure.points, smallest.points)
    side = net if same else measure_side(smallest, smallest.name)
    proved = not side.structure.failures and side.structure.wanted_only and side.wanted_moment
    return WidthMinimum(k, bound, method, assumes, smallest.size, smallest.name, proved, time.perf_counter() - t0)


def _width_rows(wm: WidthMinimum) -> list[Check]:
    k = wm.k
    closed_text = "the minimum is closed" if wm.closed else "the bracket is open for this k"
    return [
        argued_row("width min: reduction (p>2k)", wm.assumes if k == 1 else REDUCTION,
                   "the fewest neurons of a max-margin network is (p-1)/2 times the smallest support of a positive "
                   "measure on T^k with vanishing unwanted moments, for every prime p > 2k"),
        Check(name="width min: lower bound", expected=f">= {wm.bound}", measured=wm.bound, tolerance=None,
              passed=wm.bound is not None, exactness="proved",
              detail=f"{wm.method}; a statement about measures on T^k, the same for every p",
              statement="at least this many neurons per frequency (exactly checked certificate, p-independent)"),
        Check(name="width min: attained", expected="moments vanish", measured=f"{wm.found} atoms ({wm.found_name})",
              tolerance=None, passed=wm.found_proved, exactness="proved",
              detail="the smallest family's off-diagonal and unwanted diagonal moments vanish exactly (Q(omega_Q)), so "
                     "its network is max-margin for every odd p (rows above, same argument)",
              statement="a max-margin network with this many neurons per frequency exists for every odd p",
              premises=["L = U = gamma*(p, k)"]),
        Check(name="min width = N (p-1)/2", expected=wm.bound, measured=wm.found, tolerance=None,
              passed=wm.closed if k in CLOSED_K else True, exactness="proved", informational=k not in CLOSED_K,
              detail=f"{wm.text()}; {closed_text}",
              statement=f"the smallest max-margin width for every prime p > 2k (k = {k})",
              premises=["width min: reduction (p>2k)", "width min: lower bound", "width min: attained"]),
    ]


#: the k whose width minimum the shipped certificates close (a failure there turns the row red)
CLOSED_K = frozenset({1, 2, 3, 4, 5})


# ---------------------------------------------------------------- the verdict

def _require_fits(k: int, family: str, max_memory: int, max_seconds: float | None, *, sos: bool = True) -> None:
    """Refuse up front (nothing allocated): the SOS relaxation's memory, and the moment check of the network and of
    the smallest family (their estimates at p = 3: the p x p table is negligible, the moments dominate)."""
    from margintheory.certificate.block_sos import require_memory
    from margintheory.engines.fourier_margin import estimate_compact_family
    from margintheory.runtime.budget import Estimate, require
    from margintheory.solvers.width_bounds import estimate_width_lower_bound_bytes

    if sos:
        require_memory(k, max_memory)
    est = estimate_compact_family(3, k, family).plus(estimate_compact_family(3, k, "smallest-known")).plus(
        Estimate("the width certificate's exact check", estimate_width_lower_bound_bytes(k)),
        f"the every-p proof for k = {k} (the moments of the {family} network and of the smallest family, the width "
        "certificate)")
    require(est, max_memory, max_seconds)


def verify_every_p(problem: ModularAdditionEveryP, *, family: str = "lemma-c18", max_memory: int = 2 * 2**30,
                   max_seconds: float | None = None, method: str = "am-gm") -> VerificationResult:
    """Theorem C.22's claims for ``problem.k`` and every odd ``p >= 3`` (module docstring): the rows, the formulas in
    ``p`` (``details``), the range (``details.p_range``) and the ``certificate`` object (ends divided by
    ``gamma*(p, k)``)."""
    if not isinstance(problem, ModularAdditionEveryP):
        raise InputError(f"verify_every_p takes a ModularAdditionEveryP problem, got {problem!r}")
    k = problem.k
    _require_fits(k, family, max_memory, max_seconds, sos=method == "sos")
    t0 = time.perf_counter()
    net = network_side(family, k)
    rows, lower = lower_rows(net, k)
    up = upper_side(k, max_memory=max_memory, time_limit=max_seconds, method=method)
    wm = width_minimum(k, net)
    name = "the construction of Lemma C.18" if family == "lemma-c18" else f"the {family} network"
    res = VerificationResult(f"Theorem C.22 for every odd p >= 3 (k = {k}), {name}: identities in p",
                             task=problem.task, parameters={**problem.parameters(), "family": family,
                                                            **({"upper_method": method} if method != "am-gm" else {})})
    res.add(_range_row(problem))
    for row in rows + _upper_rows(up, lower) + _width_rows(wm):
        res.add(row)
    res.fields.update(_fields(problem, net, lower, up, wm))
    res.fields["seconds"] = time.perf_counter() - t0
    res.fields["seconds_by_part"] = {"network": net.seconds, "upper": up.seconds, "width": wm.seconds}
    res.certificate = certificate_object(problem, net, lower, up)
    res.notes.append(f"measure: {net.measure.description} ({net.measure.source}); every row is an identity in the "
                     f"symbol p or a p-independent exact computation ({_WHERE})")
    return res


def _range_row(problem: ModularAdditionEveryP) -> Check:
    r = problem.p_range
    return Check(name="p range", expected="odd p >= 3", measured="every odd p >= 3 (p a symbol)", tolerance=None,
                 passed=True, exactness="proved", informational=True,
                 detail=f"claims: {r['claims']}; the theorem's hypothesis ({r['theorem_hypothesis']}) is contained; "
                        f"width minimum: {r['width_minimum']}",
                 statement="the range of p for which the claims below are proved")


def _fields(problem: ModularAdditionEveryP, net: NetworkSide, lower: sym.LowerEnd, up: UpperSide,
            wm: WidthMinimum) -> dict[str, Any]:
    k, gamma = problem.k, sym.gamma_star_in_p(problem.k)
    gap = math.sqrt(float(up.rho_squared)) - 1
    r = problem.p_range
    return {
        "k": k, "family": net.family, "p_range": r,
        "p_range_text": f"{r['claims']}; width minimum: {r['width_minimum']}",
        "gamma_star": None, "normalized_margin": None, "width": None,
        "gamma_star_note": f"gamma*(p, {k}) = {sp.sstr(gamma)} for every odd p >= 3 (Theorem C.22): a function of "
                           "p, so no single value (details.gamma_star_formula)",
        "gamma_star_formula": sp.sstr(gamma),
        "lower_formula": f"L(p) = {sp.sstr(sp.simplify(lower.normalized))}",
        "upper_formula": f"U(p) = C_(p,k) B_k = ({sp.sstr(up.end.constant)}) * {up.block_bound_text} = "
                         f"rho_k gamma*(p, k), rho_k = {sp.sstr(up.end.rho)}",
        "rho": sp.sstr(up.end.rho), "rho_squared": str(up.rho_squared), "relative_gap": gap,
        "max_margin_interval": (f"= gamma*(p, {k}) exactly for every odd p >= 3 (L proved, U proved: the AM-GM "
                                "certificate of max g_k)" if up.rho_squared == 1 else
                                f"[gamma*(p, {k}), rho_k gamma*(p, {k})] for every odd p >= 3, rho_k - 1 = "
                                f"{gap:.2e} (L proved, U proved); = gamma*(p, {k}) exactly with AM-GM (proved)"),
        "width_formula": f"{net.measure.size} (p-1)/2", "width_per_frequency": net.measure.size,
        "width_minimum": wm.text(),
        "width_minimum_detail": {"per_frequency_lower_bound": wm.bound, "per_frequency_found": wm.found,
                                 "found_by": wm.found_name, "closed": wm.closed, "method": wm.method,
                                 "range": r["width_minimum"]},
        "logit_scale": str(net.logit_scale), "phase_denominator": net.measure.denominator,
        "moments_checked": net.structure.checked, "block_bound": up.block_bound_text, "solver": up.solver,
        "upper_method": up.method,
        "network_function": f"f(a)[c] = {net.logit_scale} D(a_1+...+a_k - c), D(x) = sum_(zeta=1)^((p-1)/2) "
                            "cos(2 pi zeta x/p)",
    }


def certificate_object(problem: ModularAdditionEveryP, net: NetworkSide, lower: sym.LowerEnd,
                       up: UpperSide) -> dict[str, Any]:
    """The schema's ``certificate`` object for all ``p``: both ends divided by ``gamma*(p, k)`` (``lower`` = 1,
    ``upper`` = ``rho_k`` rounded up), which makes them numbers independent of ``p``; the formulas themselves are in
    ``lower_formula`` / ``upper_formula``."""
    from margintheory.certificate.checker import ceil_sqrt
    from margintheory.certificate.upper_bound import ceil_float

    rho = up.end.rho
    rho_rational = str(Fraction(int(rho.p), int(rho.q))) if rho.is_Rational else None
    rho_up = ceil_float(ceil_sqrt(up.rho_squared))  # >= rho_k
    return {
        "lower": 1.0, "upper": rho_up, "relative_gap": rho_up - 1.0,
        "scale": f"gamma*(p, {problem.k}) = {sp.sstr(sym.gamma_star_in_p(problem.k))}: lower and upper are "
                 "L(p)/gamma*(p, k) and U(p)/gamma*(p, k), the same for every odd p",
        "p_range": problem.p_range,
        "lower_exactness": "proved", "upper_exactness": "proved",
        "lower_exact": "1", "upper_exact": rho_rational, "upper_algebraic": sp.sstr(rho),
        "lower_method": "fourier",
        "lower_how": f"identity in p: the {net.measure.size}-atom phase measure's off-diagonal moments vanish exactly "
                     f"in Q(omega_{net.measure.denominator}) (no p), so f(a)[c] = K D(s - c) with the Dirichlet "
                     "kernel; margin, norm and L(p) = gamma*(p, k) simplified by sympy with p a symbol",
        "lower_formula": f"L(p) = {sp.sstr(sp.simplify(lower.normalized))}",
        "upper_formula": f"U(p) = C_(p,k) B_k, C_(p,k) = {sp.sstr(up.end.constant)}, B_k = {up.block_bound_text}",
        "upper_how": "weak duality (uniform q, tau) + Lemma C.14 frequency blocks proved for all p by sympy + the "
                     + ("exact AM-GM certificate max g_k = (k+1)^-((k+1)/2) of the block form g_k (no p in it, no "
                        "solver)" if up.method == "am-gm" else
                        "exact SOS certificate of the block form g_k (no p in it)"),
        "block_bound": up.block_bound_text,
        "lemma_c14": {"for_all_p": f"proved (sympy), assuming the row {C14_TERMS!r}", "summary": up.lemma_c14[1]},
        "sos_solves": 1 if up.method == "sos" else 0,
        "steps": [{"name": c.statement or c.name, "exactness": c.exactness, "passed": c.passed, "reason": c.detail}
                  for c in _upper_chain_rows(up)],
        "solver": up.solver,
        "seconds": up.seconds,
    }

