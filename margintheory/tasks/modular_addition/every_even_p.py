"""The max margin at every even ``p`` at once: ``verify --k K --every-p --even`` (docs/theory.md#even-p-max-margin).

Theorem C.22 of Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers"
(arXiv:2402.09469) -- and Theorem 7.7 of Morwani, Edelman, Oncescu, Zhao, Kakade, "Feature emergence via margin
maximization" (arXiv:2311.07568) at ``k = 2`` -- gives the max margin ``gamma*(p, k)`` for odd ``p``.  At even
``p = 2n`` it is

    ``gamma_even(p, k) = gamma*(p, k) (p-1) r / (1 + (p-2) r)``,   ``r = 2^((k-1)/2)``,

which exceeds ``gamma*(p, k)`` for every ``k >= 2`` (and equals it at ``k = 1``, where ``r = 1``).  This module
states and proves it for a fixed ``k`` and every even ``p >= 4``; every row is an identity in the symbol ``n``
(:mod:`margintheory.symbolic.even_p`), a ``p``-independent exact computation, or ``argued`` with its reason:

* **lower end**: the frequency-weighted network (Lemma C.18's sub-network at each ``0 < j < n`` with budget
  ``2r / (1 + (p-2) r)``, Lemma C.16's ``2^(k-1)`` neurons at ``j = n`` with ``1/(2r)`` of that) has the same margin
  ``gamma_even`` at every wrong label;
* **upper end**: weak duality with the translation-invariant dual ``t`` (1 on odd ``d``, ``2r - 1`` on even ``d``)
  and Lemma C.14's blocks scaled by ``|kappa_t(j)|`` (docs/theory.md#class-weighted-bracket): both block kinds give
  ``rho_k gamma_even`` with the SOS bound ``B_k``, and ``gamma_even`` with AM-GM's ``max g_k``;
* **no invariant dual does better** (informational): ``sum_j kappa_t(j) = p T``.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy as sp

from margintheory.core.checks import Check, VerificationResult, bool_check
from margintheory.core.problems import ModularAdditionEveryP
from margintheory.errors import InputError
from margintheory.symbolic import even_p as sym
from margintheory.tasks.modular_addition import every_p as odd

#: details printed under the table of ``verify --every-p --even``
EVERY_EVEN_P_FIELDS = ["p_range_text", "max_margin_formula", "lower_formula", "upper_formula", "max_margin_interval",
                       "width_formula"]
_WHERE = "docs/theory.md#even-p-max-margin"

INVARIANT_DUAL = ("weak duality with the invariant dual lam(a, c) = t(c - y(a)) / (p^k T)",
                  "Lemma C.6 of Li et al. (arXiv:2402.09469) / Lemma 7.6 of Morwani et al. (arXiv:2311.07568) holds "
                  "for any distribution over (input, wrong label) pairs: the minimum margin is at most the lam-average")
BRACKET = ("blocks scaled by kappa_t: F_lam = ((p-1)/(p T)) sum_b c_b g_k(zeta_w kappa_t(b), zeta_1..zeta_k)",
           "for lam(a, y + d) proportional to t(d) the class-weighted objective is ((p-1)/p) F_uniform(u, K w) with "
           "the circulant K = I - C(t)/T, whose eigenvalue at frequency j is kappa_t(j)/T (docs/theory.md#"
           "class-weighted-bracket); a complex multiplier of z_w rotates the block, so max_(|z|=1) of block j is "
           "|kappa_t(j)| max g_k / T times c_j")
CHARACTERS = ("exp(2 pi i x / q) = 1 iff q | x (x integer): the geometric series (1 - r^q)/(1 - r) applies at every "
              "other x")


def _r_text(k: int) -> str:
    return sp.sstr(sym.true_ratio(k))


def _network_rows(k: int, net: odd.NetworkSide, nw: sym.NetworkSide) -> list[Check]:
    s = net.structure
    return [
        bool_check("moments: cos_j(s - c) (all p)", not s.failures and s.wanted_only and net.wanted_moment,
                   exactness="proved",
                   detail=f"{s.checked} moments of the {net.measure.size}-atom phase measure of Lemma C.18 reduced "
                          f"modulo Phi_{net.measure.denominator}: off-diagonal failures {s.failures}, only the wanted "
                          f"moment W = {net.weight}; N_k(-1) = {net.coefficient} (k! = {math.factorial(k)}); the "
                          f"measure has no p in it, so frequency j's sub-network has logits K cos(2 pi j (s - c)/p), "
                          f"K = {net.logit_scale}",
                   statement="Lemma C.18's sub-network at frequency j has logits K cos(2 pi j (a_1+...+a_k - c)/p), "
                             "for every p (docs/theory.md#compact-margin)"),
        bool_check("real block: C.16 half sum", sym.half_sum_to_product_holds(k), exactness="proved",
                   detail=f"sum_(s: s_1 = +1) sign(s) (s . x)^k = 2^(k-1) k! x_1...x_k expanded by sympy; with "
                          f"x_i = (-1)^(a_i) and amplitude^(k+1) = 2/(2^k k!) the {2 ** (k - 1)} neurons have logits "
                          f"(-1)^(s - c) and cost ((k+1) p)^((k+1)/2) / k!",
                   statement="the frequency-p/2 sub-network has logits (-1)^(a_1+...+a_k - c), every even p"),
        bool_check("character sums (all even p)", sym.character_sums_hold(), exactness="proved",
                   detail=f"sympy, n a symbol: sum_(m<n) exp(2 pi i j m/n) = 0 (0 < j < n), sum_(d<p) omega^(jd) = 0 "
                          f"(p not dividing j), sum over odd d of (-1)^d = -n, over even d != 0 = n - 1, cos pairs "
                          f"j <-> p - j; the argued step: {CHARACTERS}",
                   statement="the character sums of Z_p and Z_n the dual and the network need, for every even p"),
        bool_check("norm: sum cos^2 = p/2", nw.norm_is_half_p, exactness="proved",
                   detail=f"sum_x cos^2(phi + 2 pi j x/p) = {sp.sstr(sym.cosine_square_sum_even())} "
                          "(exp(4 pi i j/p) != 1 for 0 < j < p/2)",
                   statement="every cosine vector of a frequency 0 < j < p/2 has squared norm p/2, every even p"),
        bool_check("per unit cost: C and r C", nw.kc_is_c.holds and nw.kr_is_r_kc.holds, exactness="proved",
                   detail=f"complex frequency: K / ((k+1) p/2)^((k+1)/2) sigma^(k+1) W = {sp.sstr(nw.kc)} = "
                          f"C = gamma*(p, k) (p-1)/p ({nw.kc_is_c.method}); real block: k!/((k+1) p)^((k+1)/2) = "
                          f"r C, r = {_r_text(k)} ({nw.kr_is_r_kc.method})",
                   statement="a unit-cost sub-network's margin at wrong label y + d is C (1 - cos(2 pi j d/p)), "
                             "r C (1 - (-1)^d) at j = p/2"),
        bool_check("budgets: total cost 1", nw.cost_one.holds, exactness="proved",
                   detail=f"s_c = {sp.sstr(nw.s_complex)} on each j < p/2, s_r = s_c/(2r) = {sp.sstr(nw.s_real)} on "
                          f"p/2: (n - 1) s_c + s_r = 1 ({nw.cost_one.method})",
                   statement="the budgets of the frequency-weighted network sum to 1 (||theta||^(k+1) = 1)"),
        Check(name="L: same margin at every d", expected=sp.sstr(nw.margin_even), measured=sp.sstr(nw.margin_odd),
              tolerance=0.0, passed=nw.margins_equal.holds, exactness="proved",
              detail=f"odd d: s_c C (n - 1) + 2 s_r r C; even d != 0: s_c C n (sum_(j<n) cos(2 pi j d/p) = 0 for odd "
                     f"d, -1 for even d); equal ({nw.margins_equal.method})",
              statement="the network's margin is the same at every wrong label (condition C.1), every even p"),
        Check(name="L(p) = gamma_even(p, k)", expected=sp.sstr(sym.gamma_even_in_n(k)),
              measured=sp.sstr(sp.simplify(nw.margin_even)), tolerance=0.0, passed=nw.value.holds,
              exactness="proved", detail=nw.value.method,
              statement="the frequency-weighted network's normalized margin is gamma_even(p, k), every even p"),
        Check(name="width", expected=f"{2 ** (2 * k - 1)} (p/2 - 1) + {2 ** (k - 1)}",
              measured=f"{2 ** (2 * k - 1)} per j < p/2, {2 ** (k - 1)} at p/2", tolerance=None, passed=True,
              exactness="proved", informational=True, detail="Lemma C.18's measure per complex frequency, Lemma "
              "C.16's half sum at p/2", statement="neurons of the frequency-weighted network"),
    ]


@lru_cache(maxsize=1)
def _lemma_c14() -> tuple[bool, str]:
    """Lemma C.14's derivation for all ``p`` (``p``, ``k`` symbols), once per process."""
    from margintheory.symbolic.block_reduction import lemma_c14_for_all_p

    d = lemma_c14_for_all_p()
    return d.all_passed and not any(s.check.kind in ("argued", "float") for s in d.steps), d.summary()


def _upper_rows(k: int, up: odd.UpperSide, dual: sym.DualSide, dual_sos: sym.DualSide,
                ratio: Any) -> list[Check]:
    from margintheory.certificate.upper_bound import HOMOGENEITY

    c14_ok, c14_summary = _lemma_c14()
    rho = up.end.rho
    r2 = up.rho_squared
    within = up.rho_matches and Fraction(1) <= r2 <= (1 + odd.GAP) ** 2
    rho_f = math.sqrt(float(r2))
    return [
        odd.argued_row("U: invariant dual", INVARIANT_DUAL[1], f"upper-bound step: {INVARIANT_DUAL[0]}"),
        bool_check("U: C.14 blocks, all p", c14_ok, exactness="proved", detail=f"sympy, p a symbol: {c14_summary}",
                   statement="Lemma C.14 and the block closed form for every p; at even p the blocks 0 < j < p/2 "
                             "are complex with constant c, the block p/2 is real with constant c'"),
        bool_check("U: c'/c = r (all even p)", ratio.holds, exactness="proved",
                   detail=f"c'/c = {sp.sstr(sp.simplify(ratio.lhs))}, r = {_r_text(k)} ({ratio.method})",
                   statement="the real block's constant is r = 2^((k-1)/2) times the complex blocks'"),
        odd.argued_row("U: blocks scaled by kappa_t", BRACKET[1], f"upper-bound step: {BRACKET[0]}"),
        odd.argued_row("U: homogeneity", HOMOGENEITY[1], f"upper-bound step: {HOMOGENEITY[0]}"),
        Check(name="U: SOS max g_k <= B_k", expected="holds", measured="proved", tolerance=None, passed=True,
              exactness="proved",
              detail=f"B_k = {up.block_bound} ({float(up.block_bound):.15g}); exact polynomial identity and exact "
                     f"LDL^T; solver {up.solver.get('name')} {up.solver.get('status')}; no p in g_k",
              statement="SOS certificate: max_(|z|=1) g_k <= B_k, exact and p-independent"),
        bool_check("dual t >= 0, two-valued", dual.nonnegative, exactness="proved",
                   detail=f"t(d) = {dual.t_odd} (odd d), {sp.sstr(dual.t_even)} = 2r - 1 (even d != 0), t(0) = 0; "
                          f"T = {sp.sstr(sp.expand(dual.total))}",
                   statement="the dual is a distribution over the wrong labels (r >= 1)"),
        Check(name="kappa_t: complex, real", expected="T + t_even, T + n t_odd - (n-1) t_even",
              measured=f"{sp.sstr(sp.expand(dual.kappa_complex))}, {sp.sstr(sp.expand(dual.kappa_real))}",
              tolerance=None, passed=bool(sp.simplify(dual.kappa_complex - dual.total - dual.t_even) == 0
                                          and sp.simplify(dual.kappa_real - 2 * sym.N * dual.t_odd) == 0),
              exactness="proved",
              detail="kappa_t(j) = T - sum_d t(d) omega^(jd) from the character sums: every 0 < j < p/2 gives "
                     "T + t_even, j = p/2 gives T + n t_odd - (n - 1) t_even = 2 n t_odd",
              statement="kappa_t on the complex blocks and on the real block, every even p"),
        Check(name="U: both blocks equal", expected=sp.sstr(sp.simplify(dual.psi_real)),
              measured=sp.sstr(sp.simplify(dual.psi_complex)), tolerance=0.0, passed=dual.blocks_equal.holds,
              exactness="proved",
              detail=f"((p-1)/(p T)) c kappa_c max g_k = ((p-1)/(p T)) c' kappa_r max g_k ({dual.blocks_equal.method})",
              statement="the dual equalizes the complex and the real blocks (the ratio 2r - 1 is what does it)"),
        Check(name="U(p) = rho_k gamma_even", expected=f"rho_k = {sp.sstr(rho)}",
              measured=sp.sstr(sp.simplify(dual_sos.psi_complex / sym.gamma_even_in_n(k))), tolerance=None,
              passed=dual_sos.value.holds and dual_sos.blocks_equal.holds and up.rho_matches, exactness="proved",
              detail=f"with max g_k <= B_k: U(p) = rho_k gamma_even(p, k) ({dual_sos.value.method}); rho_k^2 = "
                     f"B_k^2 (k+1)^(k+1) = {r2} (exact)",
              statement="the dual's upper bound U(p) is rho_k gamma_even(p, k), rho_k free of p"),
        Check(name="max margin in [L, U], all p", expected=float(odd.GAP), measured=rho_f - 1,
              tolerance=float(odd.GAP), passed=bool(within), exactness="proved",
              detail=f"1 <= rho_k^2 <= (1 + {odd.GAP})^2 in exact rationals: L(p) = gamma_even(p, k) <= max margin "
                     f"<= U(p) = rho_k gamma_even(p, k), rho_k - 1 = {rho_f - 1:.3e}, for every even p",
              statement="network margin = optimum for every even p: (U(p) - L(p))/L(p) = rho_k - 1 <= 1e-9"),
        _am_gm_row(k),
        bool_check("L = U = gamma_even(p, k)", dual.value.holds and dual.blocks_equal.holds, exactness="proved",
                   detail=f"at max g_k = (k+1)^-((k+1)/2) the dual's value is gamma_even(p, k) ({dual.value.method}), "
                          "the network's margin too (row 'L(p) = gamma_even(p, k)')",
                   statement="max margin = gamma_even(p, k) = gamma*(p, k) (p-1) r/(1 + (p-2) r), every even p >= 4"),
    ]


def _side_rows(k: int, opt: sym.Optimality) -> list[Check]:
    g_odd = odd.sym.gamma_star_in_p(k).subs(sym.P_SYM, sym.P_EVEN)
    r = sym.true_ratio(k)
    excess = sym.identity_in_n(sym.gamma_even_in_n(k) / g_odd - 1, (r - 1) / (1 + (sym.P_EVEN - 2) * r))
    above = bool(r > 1)
    return [
        bool_check("no invariant dual does better", opt.kappa_sum.holds and opt.balance.holds and opt.value.holds,
                   exactness="argued", informational=True,
                   detail="sum_(j=1)^(p-1) kappa_t(j) = p T (identity) and |kappa_t(j)| = |kappa_t(p-j)| (t real) give "
                          "p <= sum_j |kappa_t(j)|/T <= (2(n-1) + 1/r) m for m = max(max_(j<n) |kappa_t(j)|, "
                          "r |kappa_t(n)|)/T (triangle inequality, argued); m* = p r/(1 + (p-2) r) meets it with "
                          f"equality and C m* = gamma_even ({opt.value.method})",
                   statement="every translation-invariant dual has Psi(t) >= gamma_even(p, k): the two-valued dual "
                             "is optimal among them"),
        Check(name="gamma* formula (even p)", expected="gamma_even / gamma* - 1 = (r-1)/(1 + (p-2) r)",
              measured=sp.sstr(sp.simplify(excess.lhs)), tolerance=None, passed=excess.holds, exactness="proved",
              informational=True,
              detail=f"Theorem C.22's formula at even p is {'below' if above else 'equal to'} the max margin "
                     f"(r = {_r_text(k)} {'> 1' if above else '= 1'}): {excess.method}",
              statement="Theorem C.22 / Theorem 7.7's formula is not the max margin at even p (k >= 2)"),
    ]


def _require_fits(k: int, max_memory: int, max_seconds: float | None) -> None:
    from margintheory.certificate.block_sos import require_memory
    from margintheory.engines.fourier_margin import estimate_compact_family
    from margintheory.runtime.budget import require

    require_memory(k, max_memory)
    require(estimate_compact_family(3, k, "lemma-c18"), max_memory, max_seconds)


def verify_every_even_p(problem: ModularAdditionEveryP, *, family: str = "lemma-c18", max_memory: int = 2 * 2**30,
                        max_seconds: float | None = None) -> VerificationResult:
    """The max margin ``gamma_even(p, k)`` for ``problem.k`` and every even ``p >= 4`` (module docstring)."""
    if not isinstance(problem, ModularAdditionEveryP) or not problem.even:
        raise InputError(f"verify_every_even_p takes ModularAdditionEveryP(k, even=True), got {problem!r}")
    if family != "lemma-c18":
        raise InputError("the every-even-p proof uses Lemma C.18's sub-networks and Lemma C.16's real block; other "
                         "families are not supported there")
    k = problem.k
    _require_fits(k, max_memory, max_seconds)
    t0 = time.perf_counter()
    net = odd.network_side("lemma-c18", k)
    nw = sym.network_side(k, net.logit_scale, net.per_frequency_weight)
    # the SOS bound B_k: the dual's rows state U(p) = rho_k gamma_even with it (rho_k = 1 at AM-GM's exact max g_k,
    # the row "AM-GM: max g_k exact")
    up = odd.upper_side(k, max_memory=max_memory, time_limit=max_seconds, method="sos")
    B = sp.Rational(up.block_bound.numerator, up.block_bound.denominator)
    dual = sym.dual_side(k)
    dual_sos = sym.dual_side(k, bound=B, target=up.end.rho * sym.gamma_even_in_n(k))
    ratio = sym.block_ratio(k, sym.true_ratio(k))
    opt = sym.optimality(k)
    res = VerificationResult(f"The max margin at every even p >= 4 (k = {k}): gamma_even(p, k), identities in p = 2n",
                             task=problem.task, parameters={**problem.parameters(), "family": family})
    r = problem.p_range
    res.add(Check(name="p range", expected="even p >= 4", measured="every even p >= 4 (p = 2n, n a symbol)",
                  tolerance=None, passed=True, exactness="proved", informational=True,
                  detail=f"claims: {r['claims']}", statement="the range of p for which the claims below are proved"))
    for row in _network_rows(k, net, nw) + _upper_rows(k, up, dual, dual_sos, ratio) + _side_rows(k, opt):
        res.add(row)
    res.fields.update(_fields(problem, nw, up))
    res.fields["seconds"] = time.perf_counter() - t0
    res.certificate = _certificate(problem, up)
    res.notes.append(f"every row is an identity in the symbol n (p = 2n), a p-independent exact computation or an "
                     f"argument with its reason ({_WHERE})")
    return res


def _fields(problem: ModularAdditionEveryP, nw: sym.NetworkSide, up: odd.UpperSide) -> dict[str, Any]:
    k = problem.k
    gap = math.sqrt(float(up.rho_squared)) - 1
    g = sym.gamma_even_in_n(k)
    return {
        "k": k, "family": "lemma-c18", "p_range": problem.p_range,
        "p_range_text": problem.p_range["claims"],
        "gamma_star": None, "normalized_margin": None, "width": None,
        "gamma_star_note": f"at even p the max margin is gamma_even(p, {k}), not Theorem C.22's gamma*(p, {k}): a "
                           "function of p, so no single value (details.max_margin_formula)",
        "max_margin_formula": f"gamma_even(p, {k}) = gamma*(p, {k}) (p-1) r/(1 + (p-2) r), r = {_r_text(k)}; "
                              f"p = 2n: {sp.sstr(sp.simplify(g))}",
        "lower_formula": f"L(p) = {sp.sstr(sp.simplify(nw.margin_even))} (budgets s_c = {sp.sstr(nw.s_complex)}, "
                         f"s_r = {sp.sstr(nw.s_real)})",
        "upper_formula": f"U(p) = rho_k gamma_even(p, {k}), rho_k = {sp.sstr(up.end.rho)} (dual t = 1 on odd d, "
                         f"2r - 1 on even d)",
        "max_margin_interval": f"[gamma_even(p, {k}), rho_k gamma_even(p, {k})] for every even p >= 4, rho_k - 1 = "
                               f"{gap:.2e} (L proved, U proved); = gamma_even(p, {k}) exactly with AM-GM",
        "width_formula": f"{2 ** (2 * k - 1)} (p/2 - 1) + {2 ** (k - 1)}",
        "rho": sp.sstr(up.end.rho), "rho_squared": str(up.rho_squared), "relative_gap": gap,
        "block_bound": str(up.block_bound),
        "steps": [{"name": INVARIANT_DUAL[0], "exactness": "argued", "passed": True, "reason": INVARIANT_DUAL[1]},
                  {"name": BRACKET[0], "exactness": "argued", "passed": True, "reason": BRACKET[1]}],
    }


def _certificate(problem: ModularAdditionEveryP, up: odd.UpperSide) -> dict[str, Any]:
    """Both ends divided by ``gamma_even(p, k)`` (numbers independent of ``p``)."""
    from margintheory.certificate.checker import ceil_sqrt
    from margintheory.certificate.upper_bound import ceil_float

    rho_up = ceil_float(ceil_sqrt(up.rho_squared))
    k = problem.k
    rho = up.end.rho
    return {
        "lower": 1.0, "upper": rho_up, "relative_gap": rho_up - 1.0,
        "scale": f"gamma_even(p, {k}) = {sp.sstr(sp.simplify(sym.gamma_even_in_n(k)))} (p = 2n): lower and upper are "
                 "L(p)/gamma_even and U(p)/gamma_even, the same for every even p",
        "p_range": problem.p_range, "lower_exactness": "proved", "upper_exactness": "proved",
        "lower_exact": "1", "upper_exact": str(Fraction(int(rho.p), int(rho.q))) if rho.is_Rational else None,
        "upper_algebraic": sp.sstr(rho), "lower_method": "fourier",
        "lower_how": "identity in n: the frequency-weighted network (Lemma C.18 sub-networks, budget 2r/(1 + (p-2) r) "
                     "each, Lemma C.16's real block with 1/(2r) of it) has margin gamma_even at every wrong label",
        "upper_how": "weak duality with the invariant dual t = 1 (odd d), 2r - 1 (even d) + Lemma C.14 blocks scaled "
                     "by kappa_t + the exact SOS certificate of g_k (no p in it)",
        "block_bound": str(up.block_bound),
        "steps": [{"name": INVARIANT_DUAL[0], "exactness": "argued", "passed": True, "reason": INVARIANT_DUAL[1]},
                  {"name": BRACKET[0], "exactness": "argued", "passed": True, "reason": BRACKET[1]}],
    }


# ---------------------------------------------------------------- one even p: the theorem specialised

#: ``verify --p P --k K`` at even ``P`` also runs the per-``p`` linear program and its proved ``[L, U]``
#: (:mod:`margintheory.solvers.even_p`) as a cross-check of the closed form up to this ``P`` (and within the budgets)
LP_CROSS_CHECK_MAX_P = 64


@lru_cache(maxsize=16)
def _theorem(k: int, max_memory: int) -> VerificationResult:
    """The every-even-``p`` proof for ``k`` (a few seconds), once per process."""
    return verify_every_even_p(ModularAdditionEveryP(k, even=True), max_memory=max_memory)


def _round(value: sp.Expr, up: bool) -> float:
    """A float64 below (``up=False``) or above the exact algebraic ``value`` (50 significant digits, then one ulp)."""
    approx = float(sp.N(value, 50))
    return math.nextafter(math.nextafter(approx, math.inf if up else -math.inf), math.inf if up else -math.inf)


def closed_form_at(p: int, k: int, *, max_memory: int) -> dict[str, Any]:
    """``gamma_even(p, k)`` and ``rho_k gamma_even(p, k)`` at an even ``p``, with the proof they specialise: the
    every-even-``p`` result for ``k`` (``proved`` when all its rows pass)."""
    if p % 2 or p < 4:
        raise InputError(f"the even-p closed form is for even p >= 4, got p = {p}")
    thm = _theorem(k, max_memory)
    g = sym.gamma_even(p, k)
    rho2 = Fraction(thm.fields["rho_squared"])
    rho = sp.sqrt(sp.Rational(rho2.numerator, rho2.denominator))
    s_c, s_r = sym.network_budgets(p, k)
    # the measured ends: the frequency-weighted network's margin (its smaller one, odd or even d) and the two-valued
    # dual's value (at AM-GM's max g_k), each evaluated at n = p/2 from its own expression, not from gamma_even
    net = odd.network_side("lemma-c18", k)
    nw = sym.network_side(k, net.logit_scale, net.per_frequency_weight)
    margins = [m.subs(sym.N, p // 2) for m in (nw.margin_odd, nw.margin_even)]
    upper = sym.dual_side(k).psi_complex.subs(sym.N, p // 2)
    agree = all(sp.simplify(sp.radsimp(v - g)) == 0 for v in (*margins, upper))
    return {"exact": g, "upper_exact": rho * g, "lower": min(_round(m, False) for m in margins),
            "upper": _round(rho * upper, True),
            "rho_squared": rho2, "ends_equal_gamma_even": agree,
            "proved": thm.exit_code == 0 and all(c.passed for c in thm.checks) and agree,
            "theorem": thm, "budgets": (s_c, s_r), "dual": sym.dual_profile(p, k) if p <= 64 else None}


def closed_form_rows(problem: Any, *, max_memory: int) -> tuple[list[Check], dict[str, Any]]:
    """The rows and the ``certificate`` object of the max margin at the even ``p`` of ``problem`` (a
    :class:`~margintheory.core.problems.ModularAddition`): the theorem of :func:`verify_every_even_p` at ``n = p/2``."""
    from margintheory.core.theory import gamma_star_exact_of

    p, k = problem.p, problem.k
    cf = closed_form_at(p, k, max_memory=max_memory)
    g, gu = cf["exact"], cf["upper_exact"]
    rho_f = math.sqrt(float(cf["rho_squared"]))
    odd_formula = gamma_star_exact_of(p, k)
    ratio = sp.radsimp(g / odd_formula)
    r = sym.true_ratio(k)
    proved = cf["proved"]
    rows = [
        Check(name="max margin = gamma_even", expected=sp.sstr(g), measured=cf["lower"], tolerance=None,
              passed=proved, exactness="proved",
              detail=f"gamma_even({p}, {k}) = gamma*(p, k) (p-1) r/(1 + (p-2) r), r = {sp.sstr(r)}: {sp.sstr(g)} = "
                     f"{float(sp.N(g, 20)):.15g}; the theorem for every even p (verify --k {k} --every-p --even: "
                     f"{len(cf['theorem'].checks)} rows, {'all pass' if proved else 'NOT all pass'}) at n = {p // 2}",
              statement="the max margin at this even p is gamma_even(p, k) (L = U with AM-GM's max g_k)"),
        Check(name="L = gamma_even (network)", expected=sp.sstr(g), measured=cf["lower"], tolerance=None,
              passed=proved, exactness="proved",
              detail=f"frequency-weighted network: budget {sp.sstr(cf['budgets'][0])} on each j = 1..{p // 2 - 1}, "
                     f"{sp.sstr(cf['budgets'][1])} on j = {p // 2}; measured: its margin at odd and even wrong labels "
                     f"(identities in n) evaluated at n = {p // 2}, equal to gamma_even exactly: "
                     f"{cf['ends_equal_gamma_even']}",
              statement="max margin >= gamma_even(p, k): a network attains it"),
        Check(name="U = rho_k gamma_even (dual)", expected=sp.sstr(gu), measured=cf["upper"], tolerance=None,
              passed=proved, exactness="proved",
              detail=f"the two-valued dual t = 1 (odd d), 2r - 1 (even d) with the SOS bound B_k: rho_k - 1 = "
                     f"{rho_f - 1:.3e} (exact rationals); U = gamma_even with AM-GM's max g_k",
              statement="max margin <= rho_k gamma_even(p, k), proved (SOS), = gamma_even with AM-GM"),
        Check(name="gamma* formula (even p)", expected=sp.sstr(odd_formula), measured=float(sp.N(odd_formula, 20)),
              tolerance=None, passed=True, exactness="proved", informational=True,
              detail=f"Theorem C.22's formula at p = {p}: {float(sp.N(odd_formula, 20)):.15g}; the max margin is "
                     f"{sp.sstr(ratio)} = {float(sp.N(ratio, 20)):.9f} times it",
              statement="Theorem C.22 assumes odd p: at even p its formula is not the max margin (k >= 2)"),
    ]
    cert = {
        "lower": cf["lower"], "upper": cf["upper"], "relative_gap": rho_f - 1,
        "lower_exactness": "proved" if proved else "float", "upper_exactness": "proved" if proved else "float",
        "lower_exact": None, "upper_exact": None,
        "lower_algebraic": sp.sstr(g), "upper_algebraic": sp.sstr(gu),
        "max_margin_exact": sp.sstr(g),
        "lower_method": "fourier",
        "lower_how": "the frequency-weighted network's margin, an identity in p = 2n specialised at n = p/2 "
                     "(docs/theory.md#even-p-max-margin)",
        "upper_how": "weak duality with the two-valued invariant dual (1 on odd d, 2r - 1 on even d), Lemma C.14's "
                     "blocks scaled by kappa_t, the exact SOS bound B_k; an identity in p = 2n specialised",
        "of": "the true max margin (even p: the closed form of Theorem C.22 does not hold)",
        "closed_form": {"formula": "gamma*(p, k) (p-1) r / (1 + (p-2) r), r = 2^((k-1)/2)", "value": sp.sstr(g),
                        "float": float(sp.N(g, 20)), "rho_squared": str(cf["rho_squared"])},
        "steps": [{"name": INVARIANT_DUAL[0], "exactness": "argued", "passed": True, "reason": INVARIANT_DUAL[1]},
                  {"name": BRACKET[0], "exactness": "argued", "passed": True, "reason": BRACKET[1]}],
    }
    if cf["dual"] is not None:
        cert["dual_profile_exact"] = [sp.sstr(x) for x in cf["dual"]]
    return rows, cert


def attach_closed_form(result: VerificationResult, problem: Any, *, max_memory: int) -> None:
    """Add the closed-form rows to ``result`` and make its ``certificate`` the closed form's (a per-``p`` LP
    certificate already there is kept under ``per_p_lp``)."""
    from margintheory.certificate.maxmin import lower_bound_from

    rows, cert = closed_form_rows(problem, max_memory=max_memory)
    present = {c.name for c in result.checks}
    checked = lower_bound_from(result)
    if checked is not None and "checked network <= U" not in present:  # (the per-p leg compares it when it ran)
        upper = cert["upper"]
        rows.append(Check(name="checked network <= U", expected=upper, measured=checked.value, tolerance=0.0,
                          passed=checked.value <= upper, exactness="proved",
                          detail=f"the checked network's margin {checked.value:.15g} is at most U = rho_k gamma_even "
                                 f"(rounded up); {checked.value / cert['closed_form']['float']:.6f} of the max margin",
                          statement="the checked network's margin does not exceed the proved U"))
    for row in rows:
        if row.name not in present:  # the per-p leg's comparison with Theorem C.22's formula is already there
            result.add(row)
    if result.certificate is not None:
        cert["per_p_lp"] = result.certificate
    result.certificate = cert
    result.fields["max_margin_exact"] = cert["max_margin_exact"]
    result.fields["max_margin_interval"] = (
        f"= {cert['max_margin_exact']} = {cert['closed_form']['float']:.15g}  (true max margin, closed form at even "
        f"p; proved bracket [{cert['lower']:.15g}, {cert['upper']:.15g}])")


def _am_gm_row(k: int) -> Check:
    """``max_(|z|=1) g_k = (k+1)^-((k+1)/2)``, by the exact AM-GM certificate
    (:func:`margintheory.certificate.am_gm.block_form_maximum`: a modulus identity and a chain of two-variable steps,
    all rational; no solver)."""
    from margintheory.certificate.am_gm import block_form_maximum

    am = block_form_maximum(k)
    return bool_check("AM-GM: max g_k exact", am.proved, exactness="proved",
                      detail=f"|g_k(z)| <= |z_w| |z_1|...|z_k| <= (|z|^2/(k+1))^((k+1)/2) (AM-GM of the k+1 squared "
                             f"moduli), attained by the aligned equal-modulus point: the exact certificate {am.detail}",
                      statement="max_(|z|=1) g_k = (k+1)^-((k+1)/2) (Lemma C.15's quadratic-mean / geometric-mean "
                                "step), an exact certificate")
