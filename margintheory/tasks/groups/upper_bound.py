"""The upper end ``U`` of the max margin of group composition, for every network of any width (Morwani et al.,
arXiv:2311.07568, Lemma 7.6, Lemmas D.11-D.13 with the corrected factor 2; docs/theory.md#group-upper-bound).

**Groups whose irreps are all of real type** (``S_n``).  Weak duality with the uniform distribution on the ``|G|^2``
inputs and wrong-label weights constant on conjugacy classes, ``tau_c = pi_C / |C|`` for ``c`` with ``(ab)^-1 c in
C``; ``pi`` is the class LP's dual (:func:`~margintheory.tasks.groups.margin.solve_class_lp`, HiGHS), rounded to
rationals and *checked exactly*, never trusted:

1. *weak duality* (``argued``, Lemma 7.6): margin <= ``max_{|theta| = 1} Psi_pi`` (single neuron);
2. *exact characters* (``proved``, :mod:`.characters`): the integer table, orthogonal, of real type;
3. *D.11 reduction* (``argued``; its factor is checked on random neurons by :mod:`.fourier_checks`): the square
   terms vanish because ``sum_C pi_C = 1`` (checked exactly), and by Schur orthogonality
   ``Psi = sum_R 2 lam_R tr(alpha_R beta_R gamma_R^T) / d_R^2`` with ``lam_R = 1 - sum_C pi_C chi_R(C) / d_R``;
4. *block maximum* (Lemmas D.12-D.13): in orthonormal coordinates (``alpha = sqrt(d_R/|G|) a``) the block of ``R`` is
   ``2 lam_R d_R^-1/2 |G|^-3/2 tr(a b c^T)``, and ``tr(a b c^T) <= |a| |b| |c|`` (Cauchy-Schwarz twice, ``argued``)
   ``<= 3^-3/2`` on ``|a|^2 + |b|^2 + |c|^2 = 1`` (AM-GM for 3 terms, ``proved``); across blocks the homogeneity
   step of modular addition (``argued``): ``max Psi <= max_R |lam_R| 2 d_R^-1/2 (3|G|)^-3/2 = max_R kappa_R
   |d_R - sum_C pi_C chi_R(C)|``, ``kappa_R = 2 d_R^-3/2 (3|G|)^-3/2``;
5. ``U^2 = max_R kappa_R^2 (d_R - pi . chi_R)^2`` (``proved``: ``kappa_R^2 = 4 / (d_R^3 (3|G|)^3)`` is rational),
   ``U`` a rational with ``U^2 >=`` it.

**Cyclic groups** ``C_n = Z_n``: the task is modular addition with ``k = 2``; ``U`` is its proved upper bound
(:func:`margintheory.certificate.upper_bound.prove_upper_bound`: Lemma C.14's frequency blocks, the irrep blocks of
``Z_n``, and an exactly checked SOS certificate).  At even ``n`` the uniform dual is not tight.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from margintheory.certificate.am_gm import prove_am_gm
from margintheory.certificate.checker import ceil_sqrt
from margintheory.certificate.interval import TaskUpperBound, gamma_below_upper_exact
from margintheory.certificate.upper_bound import ProofStep
from margintheory.core.checks import Check, Exactness
from margintheory.core.groups import FiniteGroup
from margintheory.core.representations import Irrep
from margintheory.tasks.groups.characters import ExactCharacters, exact_character_facts

#: the LP dual is rounded to this dyadic grid before it is checked exactly
DUAL_GRID_BITS = 60

GROUP_WEAK_DUALITY = (
    "weak duality (Lemma 7.6): max margin of any network <= max_{|theta| = 1} Psi_pi (uniform q, class-constant tau)",
    "Lemma 7.6 of Morwani et al. (arXiv:2311.07568): the minimum over (input, wrong label) pairs is at most their "
    "average under q uniform on G x G and tau(c | a, b) = pi_C / |C| for (ab)^-1 c in C, which for a network of "
    "norm 1 is sum_i ||theta_i||^3 Psi_pi(theta_i/||theta_i||) <= max_{|theta| = 1} Psi_pi")
D11 = ("D.11 reduction: Psi_pi = sum_(R != 1) 2 lam_R tr(alpha_R beta_R gamma_R^T) / d_R^2, "
       "lam_R = 1 - sum_C pi_C chi_R(C) / d_R",
       "Lemma D.11 with the cross-term factor 2 of (u(a) + v(b))^2: the square terms u(a)^2 w(.) and v(b)^2 w(.) "
       "average to mean(w) (1 - sum_C pi_C) = 0; the cross term, expanded in the matrix entries of the real "
       "orthogonal irreps (Lemma D.10), keeps by Schur orthogonality only alpha_R beta_R gamma_R of one R, and the "
       "class sums of the diagonal entries give lam_R (Schur's lemma). Checked numerically on random neurons (row "
       "'D.11 on random neurons')")
BLOCK_MAX = ("block maximum (D.12-D.13): tr(a b c^T) <= |a| |b| |c| (Cauchy-Schwarz twice); across irreps "
             "max <= max_R of the block maxima (homogeneity)",
             "tr(a b c^T) = <a b, c> <= |a b|_F |c| <= |a|_F |b|_F |c| (Cauchy-Schwarz, then |xy|_F <= |x|_F |y|_F); "
             "each block is a form of degree 3 in its own coordinates (a, b, c) of squared norm s_R with "
             "sum_R s_R <= 1, so sum_R M_R s_R^(3/2) <= max_R max(0, M_R)")


def rational_dual(pi: np.ndarray) -> list[Fraction]:
    """The float class weights as exact rationals on the grid ``2^-DUAL_GRID_BITS``, negatives set to 0, scaled to
    sum exactly 1 (a probability vector whatever the solver returned; ``ValueError`` if nothing positive is left)."""
    raw = [max(0, int(round(float(x) * 2**DUAL_GRID_BITS))) for x in pi]  # numerators over 2^DUAL_GRID_BITS
    total = sum(raw)
    if total <= 0:
        raise ValueError("the dual class weights have no positive entry")
    return [Fraction(x, total) for x in raw]


def kappa_squared(order: int, d: int) -> Fraction:
    """``kappa_R^2 = 4 / (d^3 (3|G|)^3)``: the squared logit of a unit block per unit of ``d_R - chi_R``."""
    return Fraction(4, d**3 * (3 * order) ** 3)


def dual_bound_squared(table: list[list[int]], order: int, pi: list[Fraction]) -> tuple[Fraction, list[Fraction],
                                                                                       bool]:
    """``(max_R kappa_R^2 (d_R - pi . chi_R)^2, the brackets d_R - pi . chi_R, every bracket >= 0)`` over the
    non-trivial irreps (rows 1..; ``pi`` over the non-trivial classes, columns 1..), exact."""
    brackets: list[Fraction] = []
    values: list[Fraction] = []
    for row in table[1:]:
        b = Fraction(row[0]) - sum(p * c for p, c in zip(pi, row[1:], strict=True))
        brackets.append(b)
        values.append(kappa_squared(order, row[0]) * b * b)
    return max(values), brackets, all(b >= 0 for b in brackets)


#: bits of the ball arithmetic that bounds the brackets of a table with non-integer characters
BALL_BITS = 256


def dual_bound_squared_balls(facts: ExactCharacters, pi: list[Fraction]) -> tuple[Fraction, list[Fraction], bool]:
    """:func:`dual_bound_squared` for a table of cyclotomic integers: each bracket ``d_R - sum_C pi_C chi_R(C)`` is
    formed exactly in ``Q[x] / Phi_N`` and enclosed in a ball (python-flint ``acb`` at ``BALL_BITS`` bits, evaluated at
    ``zeta_N``); returns a rational upper end of ``max_R kappa_R^2 bracket^2``, the brackets' rational lower ends, and
    whether every bracket is ``>= 0`` (the whole ball) and real (its imaginary part's ball contains 0 and is below
    ``2^-200``)."""
    import flint

    cyc = facts.cyclotomic
    assert cyc is not None
    old, flint.ctx.prec = flint.ctx.prec, BALL_BITS
    try:
        zeta = flint.acb(flint.arb(2) / cyc.N).exp_pi_i()  # exp(2 pi i / N)
        phi = flint.fmpq_poly(flint.fmpz_poly.cyclotomic(cyc.N).coeffs())
        best = Fraction(0)
        lows: list[Fraction] = []
        nonneg = True
        for r in range(1, len(facts.table)):
            poly = flint.fmpq_poly([facts.table[r][0]])
            for c, p in enumerate(pi, start=1):
                if p:
                    poly -= flint.fmpq_poly(cyc.poly(r, c).coeffs()) * flint.fmpq(p.numerator, p.denominator)
            poly = poly % phi
            value = sum((flint.acb(flint.arb(flint.fmpq(int(n), int(d)))) * zeta**k
                         for k, (n, d) in enumerate((q.p, q.q) for q in poly.coeffs())), flint.acb(0))
            re, im = value.real, value.imag
            real = bool(im.contains(0)) and bool(abs(im) < flint.arb(2) ** -200)
            lo = _arb_lower(re)
            hi = _arb_upper(abs(re))
            nonneg = nonneg and real and bool(re >= 0)
            lows.append(lo)
            best = max(best, kappa_squared(facts.order, int(facts.table[r][0])) * hi * hi)
    finally:
        flint.ctx.prec = old
    return best, lows, nonneg


def _arb_exact(x) -> Fraction:
    """An exact (dyadic) arb number as a rational."""
    if x == 0:
        return Fraction(0)
    m, e = x.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def _arb_upper(x) -> Fraction:
    """A rational ``>=`` every point of the real ball ``x`` (its midpoint plus its radius, exactly)."""
    if not x.is_finite():
        raise ValueError("a ball of the group bound is not finite")
    return _arb_exact(x.mid()) + _arb_exact(x.rad())


def _arb_lower(x) -> Fraction:
    """A rational ``<=`` every point of the real ball ``x``."""
    if not x.is_finite():
        raise ValueError("a ball of the group bound is not finite")
    return _arb_exact(x.mid()) - _arb_exact(x.rad())


def _dual_steps(facts: ExactCharacters, pi: list[Fraction]) -> tuple[list[ProofStep], Fraction, Fraction]:
    """Steps 2, 5 and the exact dual check; returns them with the bound's square and ``U``."""
    exactness: Exactness
    if facts.integer_table or facts.cyclotomic is None:
        U2, brackets, nonneg = dual_bound_squared(facts.table, facts.order, pi)
        how, exactness = "exact", "proved"
    else:
        U2, brackets, nonneg = dual_bound_squared_balls(facts, pi)
        how = f"brackets exact in Q(zeta_{facts.cyclotomic.N}), enclosed in {BALL_BITS}-bit balls"
        exactness = "certified"
    U = ceil_sqrt(max(U2, Fraction(0)))
    valid = all(p >= 0 for p in pi) and sum(pi) == 1
    support = sum(1 for p in pi if p > 0)
    return [
        ProofStep("character table: exact integers (Murnaghan-Nakayama), orthogonal, every irrep of real type"
                  if facts.cyclotomic is None else
                  f"character table: exact ({facts.method}), orthogonal, every irrep of real type",
                  "proved", facts.holds, facts.summary()),
        ProofStep("checked dual: pi >= 0 and sum_C pi_C = 1 exactly (the LP dual rounded to rationals)", "proved",
                  valid, f"{support} of {len(pi)} classes weighted; grid 2^-{DUAL_GRID_BITS}, scaled to sum 1"),
        ProofStep(f"U^2 = max_R kappa_R^2 (d_R - sum_C pi_C chi_R(C))^2 ({how}), U rational >= sqrt(U^2)", exactness,
                  nonneg and U2 >= 0 and U * U >= U2, f"brackets d_R - pi . chi_R all >= 0: {nonneg} (min "
                  f"{float(min(brackets)):.6g}); U^2 = {float(U2):.17g}; U = {U}"),
    ], U2, U


def real_group_upper_bound(G: FiniteGroup, irreps: list[Irrep], pi_float: np.ndarray) -> TaskUpperBound:
    """``U`` of the module docstring for a group of real-type irreps, from the LP's dual ``pi_float``: ``proved`` where
    the character table is integral (``S_n``, ``D_4``, ...), ``certified`` (ball arithmetic) where it is not."""
    t0 = time.perf_counter()
    facts = exact_character_facts(G, irreps)
    pi = rational_dual(pi_float)
    dual_steps, U2, U = _dual_steps(facts, pi)
    steps = [ProofStep(GROUP_WEAK_DUALITY[0], "argued", True, GROUP_WEAK_DUALITY[1]), dual_steps[0], dual_steps[1],
             ProofStep(D11[0], "argued", True, D11[1]), ProofStep(BLOCK_MAX[0], "argued", True, BLOCK_MAX[1]),
             prove_am_gm(3), dual_steps[2]]
    ub = TaskUpperBound(
        "group", U, U2, steps,
        "weak duality (uniform q, class weights pi = the class LP's dual, rounded to rationals and checked exactly) + "
        "Lemma D.11's irrep blocks (factor 2) + Lemmas D.12-D.13 (Cauchy-Schwarz, exact AM-GM) + exact characters",
        upper_algebraic=f"sqrt({U2})",
        details={"dual_class_weights": [str(p) for p in pi], "character_table": facts.text_table(),
                 "class_sizes": facts.sizes, "character_method": facts.method},
        seconds=time.perf_counter() - t0,
        exactness="proved" if facts.integer_table else "certified")
    return ub.require_proved(G.name)


def cyclic_upper_bound(n: int, max_memory: int) -> TaskUpperBound:
    """``U`` for ``C_n`` = modular addition's proved bound at ``(p, k) = (n, 2)`` (module docstring).  At even ``n``
    the uniform dual's bound is not attained (``C_8``: 0.62 above the max margin), so ``U`` is the optimal
    translation-invariant dual's, proved (:func:`margintheory.solvers.even_p.even_p_max_margin`,
    docs/theory.md#even-p-max-margin): the true max margin, within ``1e-6`` of a network that attains it."""
    from margintheory.certificate.upper_bound import prove_upper_bound
    from margintheory.core.problems import ModularAddition

    if n % 2 == 0:
        from margintheory.solvers.even_p import even_p_max_margin

        res = even_p_max_margin(ModularAddition(n, 2), max_memory=max_memory)
        return TaskUpperBound(
            "group", res.upper, None, list(res.steps),
            f"C_{n} = Z_{n}, n even: modular addition's true max margin at (p, k) = ({n}, 2): weak duality with the "
            "optimal translation-invariant dual tau(c - y), its frequency blocks bounded by the SOS certificate "
            "checked in exact rational arithmetic (the uniform dual is not tight at even n)",
            details={"block_bound": str(res.ub.block_bound), "sos_solver": res.ub.solver,
                     "lower_of_the_true_max_margin": float(res.lower.value)},
            seconds=res.seconds)
    ub = prove_upper_bound(ModularAddition(n, 2), max_memory=max_memory)
    return TaskUpperBound(
        "group", ub.upper, None, list(ub.steps),
        f"C_{n} = Z_{n}: modular addition's proved bound at (p, k) = ({n}, 2): weak duality (uniform q, tau) + "
        "Lemma C.14 frequency blocks (the irrep blocks of Z_n) + SOS certificate checked in exact rational arithmetic",
        details={"block_bound": str(ub.block_bound), "sos_solver": ub.solver}, seconds=ub.seconds)


def cyclic_gamma_check(n: int, ub: TaskUpperBound) -> Check | None:
    """``gamma*(n, 2) <= U`` (odd ``n``), squares compared exactly; ``None`` at even ``n`` (no closed form)."""
    if n % 2 == 0:
        return None
    from margintheory.core.theory import gamma_star

    g2 = Fraction(16, 216 * (n - 1) ** 2 * n)  # (2 * 2! / (6^(3/2) (n-1) n^(1/2)))^2, Theorem C.22 at k = 2
    return gamma_below_upper_exact(gamma_star(n, 2), g2, ub, f"gamma*({n}, 2) of modular addition <= U (Thm C.22 "
                                                             "against the computed U)")


def formula_below_upper_check(dims: list[int], order: int, ub: TaskUpperBound) -> Check:
    """Theorem 7.9's closed form ``2 / (3 sqrt(3|G|) sum_(R != 1) d_R^2.5) <= U``, decided in ball arithmetic
    (python-flint ``arb``, 256 bits): ``27 |G| U^2 (sum d^2.5)^2 >= 4``."""
    import flint

    old, flint.ctx.prec = flint.ctx.prec, 256
    try:
        s = sum(flint.arb(int(d)) ** 2 * flint.arb(int(d)).sqrt() for d in dims[1:])
        U = ub.upper
        lhs = flint.arb(27 * order) * flint.arb(U.numerator) ** 2 / flint.arb(U.denominator) ** 2 * s * s
        holds = bool(lhs >= 4)  # true only when the whole ball is >= 4: a ball that straddles 4 fails
        shown = lhs.str(20)
    finally:
        flint.ctx.prec = old
    formula = 2 / (3 * math.sqrt(3 * order) * sum(d**2.5 for d in dims[1:]))
    return Check(name="gamma* <= U", expected=formula, measured=ub.upper_float, tolerance=0.0, passed=holds,
                 exactness="proved",
                 detail=f"27 |G| U^2 (sum d^2.5)^2 = {shown} vs 4 (ball arithmetic, 256 bits); "
                        f"U/gamma* - 1 = {ub.upper_float / formula - 1:.3e}",
                 statement="closed form of Thm 7.9, 2/(3 sqrt(3|G|) sum d_R^2.5) <= U (against the computed U)")
