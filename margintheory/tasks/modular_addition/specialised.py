"""``verify --p P --k K`` as the every-p proof evaluated at ``P`` (docs/theory.md#every-p, "one p from the proof for
every p").

Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers" (arXiv:2402.09469), Theorem C.22.
The proof of :mod:`margintheory.tasks.modular_addition.every_p` has two kinds of steps: exact facts that do not
involve ``p`` (the network's phase moments, ``N_k(-1) = k!``, the AM-GM maximum of the block form), computed once per
``k`` and family, and identities in the symbol ``p`` (the Dirichlet kernel, the margin, the norm, ``L(p) =
gamma*(p, k)``, Lemmas C.15 and C.20).  Substituting ``p = P`` into the identities gives the claims at ``P`` with no
``P x P`` table and no input enumerated, so any odd ``P`` (up to ``10^12`` and beyond) costs what the ``p``-free facts
cost.  Each row says that it is an every-p identity evaluated at ``P``; the upper end is the AM-GM ``U``
(:mod:`margintheory.certificate.maxmin`), attached by the caller as for the per-``p`` path.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from margintheory.core.checks import Check, MarginMeasurement, VerificationResult, bool_check
from margintheory.core.problems import ModularAddition
from margintheory.errors import InputError
from margintheory.symbolic import every_p as sym
from margintheory.tasks.modular_addition import every_p

#: the frequencies covered are listed up to this many (beyond: their number, ``(p-1)/2``)
FREQUENCY_LIST_MAX = 10**5
#: how every row computed here says where it comes from
AT_P = "every-p identity evaluated at p = {p}"


@lru_cache(maxsize=8)
def every_p_facts(family: str, k: int) -> tuple[every_p.NetworkSide, tuple[Check, ...], sym.LowerEnd]:
    """The ``p``-independent facts of the network and the lower end's rows and formulas in ``p`` (once per
    ``(family, k)`` and process)."""
    net = every_p.network_side(family, k)
    rows, lower = every_p.lower_rows(net, k)
    return net, tuple(rows), lower


def _at(expr: sp.Expr, p: int) -> sp.Expr:
    """``expr`` with the symbol ``p`` replaced by ``P`` (exact: no ``nsimplify``, which matches numerically and
    returns ``0`` for a tiny value)."""
    return sp.radsimp(expr.subs(sym.P, p)) if expr.free_symbols else expr


def _exact_square(expr: sp.Expr) -> sp.Rational:
    sq = sp.expand(expr**2)
    if not sq.is_Rational:
        raise InputError(f"the square {sq} is not rational")  # (never for the package's networks)
    return sq


def verify_specialised(problem: ModularAddition, family: str = "lemma-c18") -> VerificationResult:
    """Theorem C.22's claims at ``problem.p`` (odd) for the construction or a family network, from the every-p
    proof (module docstring): the typed margin is exact (``L(P)``), every row ``proved`` or informational."""
    from margintheory.tasks.modular_addition.checks import _add_notes, _base_fields, _hypothesis_check

    p, k = problem.p, problem.k
    if p % 2 == 0:
        raise InputError(f"the every-p proof is for odd p; p = {p} is even")
    start = time.perf_counter()
    net, every_rows, lower = every_p_facts(family, k)
    named = {c.name: c for c in every_rows}
    at = AT_P.format(p=p)
    L, gamma = _at(lower.normalized, p), problem.gamma_star_exact
    if gamma is None:  # (never at odd p: the closed form applies)
        raise InputError(f"no closed form gamma* at p = {p}")
    L2, g2 = _exact_square(L), _exact_square(gamma)
    nf = (p - 1) // 2
    width = net.measure.size * nf
    fields = _base_fields(problem)
    what = "construction of Lemma C.18" if family == "lemma-c18" else f"{family} network"
    result = VerificationResult(f"{what} (p={p}, k={k}), exact, the every-p proof evaluated at p = {p}",
                                fields=fields)
    result.task, result.parameters, result.applicable = problem.task, problem.parameters(), problem.applicable
    if family != "lemma-c18":
        result.parameters = {**result.parameters, "family": family}
    how = (f"{at}: the {net.measure.size}-atom phase measure's unwanted moments vanish exactly (no p), so f(a)[c] = "
           f"K D(s - c) with the Dirichlet kernel; L(p) = {sp.sstr(sp.simplify(lower.normalized))} at p = {p}")
    result.set_margin(MarginMeasurement(value=float(L), error_bound=0.0, exactness="proved", method="fourier",
                                        how=how, exact=str(L)))
    result.add(_hypothesis_check(problem))
    rows = _structure_rows(problem, family, net, named, width, nf, at)
    rows += _margin_rows(named, L, L2, g2, lower, p, at)
    rows += _neuron_rows(named, width, nf, lower, p, k, at)
    rows += _logit_rows(named, lower, p, net.logit_scale, at, family == "lemma-c18")
    if family == "lemma-c18":  # the papers' other statements, as the per-p path reports them (no p x p table)
        from margintheory.tasks.modular_addition.paper_errata import paper_statement_rows

        paper, paper_fields, paper_notes = paper_statement_rows(problem)
        rows += paper
        fields.update(paper_fields)
        result.notes += paper_notes
    for row in rows:
        result.add(row)
    fields.update(_logit_fields(lower, p, net, width, all(c.passed for c in rows if not c.informational)))
    if family != "lemma-c18":
        fields.update(family=family, width_per_frequency=net.measure.size, theorem_width=problem.theorem_width)
    exact_ratio = L2 == g2
    fields.update(width=width, normalized_margin=float(L), normalized_margin_exact=str(L),
                  relative_error=0.0 if exact_ratio else abs(float(L) / float(gamma) - 1),
                  ratio_to_gamma_star=1.0 if exact_ratio else float(L) / float(gamma),
                  lower_value=math.nextafter(float(sp.N(L, 40)), -math.inf), engine_seconds=0.0,
                  specialised_from_every_p=True,
                  frequencies_covered=list(range(1, nf + 1)) if nf <= FREQUENCY_LIST_MAX else nf)
    fields["seconds"] = time.perf_counter() - start
    _add_notes(result, problem)
    result.notes.append(f"{net.measure.description} ({net.measure.source}); lower end: {how}; no input enumerated and "
                        f"no p x p table (docs/theory.md#every-p)")
    return result


def _logit_fields(lower: sym.LowerEnd, p: int, net: every_p.NetworkSide, width: int, ok: bool) -> dict:
    """The per-``p`` result's entries about the logits and the neurons, from the formulas at ``p`` (the logits in
    units of the logit scale ``K``; the normalized ones divided by ``sum_i ||theta_i||^(k+1)``)."""
    K = sp.Rational(net.logit_scale.numerator, net.logit_scale.denominator)
    norm = _at(lower.norm_power, p)
    correct, wrong = _at(lower.correct, p), _at(lower.wrong, p)
    return {"all_on_margin": ok, "wrong_logits_equal": ok, "construction_correct_logit": float(correct / K),
            "construction_wrong_logit": float(wrong / K), "normalized_correct_logit": float(correct / norm),
            "normalized_wrong_logit": float(wrong / norm), "normalized_margin_from_logits": float((correct - wrong)
                                                                                                  / norm),
            "fraction_on_margin": 1.0 if ok else 0.0, "fraction_in_optimal_set": 1.0 if ok else 0.0,
            "fraction_single_frequency": 1.0 if ok else 0.0, "neurons_checked": width, "neurons_in_optimal_set": ok,
            "logit_error_bound": 0.0, "max_phase_residual": 0.0, "max_wrong_spread": 0.0}


def _from(row: Check, at: str) -> str:
    return f"{at}: {row.detail}"


def _structure_rows(problem: ModularAddition, family: str, net: every_p.NetworkSide, named: dict[str, Check],
                    width: int, nf: int, at: str) -> list[Check]:
    size = net.measure.size
    moments, wanted = named["moments: f depends on s"], named["only the wanted moment"]
    rows: list[Check] = []
    if family == "lemma-c18":
        rows.append(Check(name="width (C.18)", expected=problem.theorem_width, measured=width, tolerance=None,
                          passed=problem.theorem_width == width, exactness="proved",
                          detail=f"{size} neurons x {nf} frequencies ({at})",
                          statement="width = 2^(2k-1)(p-1)/2 (Lemma C.18)"))
    else:
        rows.append(bool_check("phase moments vanish", wanted.passed, exactness="proved", detail=_from(wanted, at),
                               statement=f"unwanted phase moments of the {family} measure vanish"))
        rows.append(Check(name="width", expected=width, measured=width, tolerance=None, passed=True,
                          exactness="proved", informational=True,
                          statement=f"width = {size} x (p-1)/2 (theorem's 2^(2k-1)(p-1)/2 = "
                                    f"{2 ** (2 * problem.k - 1) * nf})"))
    rows.append(bool_check("moments: f depends on s", moments.passed, exactness="proved", detail=_from(moments, at),
                           statement="off-diagonal phase moments vanish, so f(a)[c] = F(a_1+...+a_k mod p, c) "
                                     "(docs/theory.md#compact-margin)"))
    return rows


def _margin_rows(named: dict[str, Check], L: sp.Expr, L2: sp.Expr, g2: sp.Expr, lower: sym.LowerEnd, p: int,
                 at: str) -> list[Check]:
    identity, margin = named["L(p) = gamma*(p, k)"], named["all on margin, C.1 (all p)"]
    wrong = _at(lower.wrong, p)
    return [
        bool_check("margin <= gamma* (C.6)", identity.passed and L2 <= g2, tolerance=0.0, exactness="proved",
                   detail=f"{at}: L(p)^2 <= gamma*(p, k)^2 exactly ({L2} vs {g2})",
                   statement="normalized margin <= gamma* (weak duality, Lemma C.6)"),
        Check(name="margin = gamma* (C.22)", expected=float(sp.sqrt(g2)), measured=float(L), tolerance=0.0,
              passed=identity.passed and L2 == g2, exactness="proved",
              detail=f"{at}: L(p) = gamma*(p, k) is an identity in p ({identity.detail}); exact: {L}",
              statement="normalized margin = gamma* (Theorem C.22)"),
        Check(name="all on margin (C.6)", expected=1.0, measured=1.0 if margin.passed else 0.0, tolerance=0.0,
              passed=margin.passed, exactness="proved",
              detail=f"{at}: every input has margin K (D(0) - D(1)) = {_at(lower.margin, p)} > 0",
              statement="every point on the margin (spt q* = D_p, Lemma C.6)"),
        Check(name="wrong logits equal (C.1)", expected=0.0, measured=0.0 if margin.passed else 1.0, tolerance=0.0,
              passed=margin.passed, exactness="proved",
              detail=f"{at}: every wrong logit is K D(x != 0) = {wrong}",
              statement="all wrong-label logits equal (condition C.1)"),
    ]


def _neuron_rows(named: dict[str, Check], width: int, nf: int, lower: sym.LowerEnd, p: int, k: int,
                 at: str) -> list[Check]:
    optimal, c20 = named["neurons optimal (C.15, all p)"], named["f^(j..,-j) > 0 (C.20, all p)"]
    n_ok = width if optimal.passed else 0
    value = sp.Integer(p) ** k * _at(lower.margin, p)  # p^k K (D(0) - D(1)), the every-p row's value at p
    return [
        Check(name="single frequency", expected=width, measured=n_ok, tolerance=None, passed=optimal.passed,
              exactness="proved", informational=True, detail=_from(optimal, at),
              statement="neurons single-frequency (max normalized power = 1)"),
        Check(name="equal amplitudes", expected=width, measured=n_ok, tolerance=None, passed=optimal.passed,
              exactness="proved", informational=True, detail=_from(optimal, at),
              statement="neurons with equal amplitudes ||u_1||=...=||u_k||=||w||"),
        Check(name="phase sum = theta_w", expected=0, measured=0 if optimal.passed else 1, tolerance=None,
              passed=optimal.passed, exactness="proved", detail=_from(optimal, at),
              statement="phase condition theta_u1+...+theta_uk = theta_w (mod 2 pi)"),
        Check(name="optimal neurons (C.15)", expected=width, measured=n_ok, tolerance=None, passed=optimal.passed,
              exactness="proved", detail=_from(optimal, at),
              statement="every neuron in the optimal single-neuron set (Lemma C.15)"),
        Check(name="all frequencies (C.20)", expected=f"1..{nf}", measured=f"1..{nf}" if c20.passed else "missing",
              tolerance=None, passed=c20.passed, exactness="proved",
              detail=f"{at}: the measure sits at every frequency 1..(p-1)/2 and f^(j..,-j) > 0 for every j != 0",
              statement="every frequency 1..(p-1)/2 used (Lemma C.20)"),
        Check(name="f^(j..,-j) > 0 (C.20)", expected="> 0", measured=str(value), tolerance=0.0,
              passed=c20.passed and bool(value.is_positive), exactness="proved",
              detail=_from(c20, at), statement="f^(j,...,j,-j) > 0 for all j != 0 (Lemma C.20)"),
        Check(name="f^(j..,-j) real (C.20)", expected=0, measured=0 if value.is_rational else 1, tolerance=0.0,
              passed=c20.passed and bool(value.is_rational), exactness="proved",
              detail=f"{at}: f^(j..,-j) = p^k K (D(0) - D(1)) = {value}, a rational number",
              statement="Im f^(j,...,j,-j) = 0 for all j != 0 (Lemma C.20: the value is a positive real)"),
        Check(name="f^(j..,-j) by C.14", expected=0, measured=0 if c20.passed else 1, tolerance=0.0,
              passed=c20.passed, exactness="proved",
              detail=f"{at}: p^k K (D(0) - D(1)) equals Lemma C.14's single-neuron sum k! (p/2)^(k+1) sigma^(k+1) W "
                     "as an identity in p (the every-p row 'f^(j..,-j) > 0 (C.20, all p)')",
              statement="f^(j,...,j,-j) from logits = k! sum_i w^(-j) prod u^(j) (Lemma C.14)"),
    ]


def _logit_rows(named: dict[str, Check], lower: sym.LowerEnd, p: int, scale: Fraction, at: str,
                paper_row: bool) -> list[Check]:
    """The logits in units of the logit scale ``K`` (``1`` for Lemma C.18's scale, ``k!/2^k`` for the families)."""
    kernel = named["Dirichlet kernel (all odd p)"]
    K = sp.Rational(scale.numerator, scale.denominator)
    correct, wrong = _at(lower.correct, p) / K, _at(lower.wrong, p) / K
    normalized = _at(lower.normalized, p)
    from_logits = _at((lower.correct - lower.wrong) / lower.norm_power, p)
    rows = [
        bool_check("network function (C.18)", named["logits = K D(s - c), all p"].passed, exactness="proved",
                   detail=_from(named["logits = K D(s - c), all p"], at),
                   statement="network function = sum_zeta cos_zeta(a_1+...+a_k-c) (Lemma C.18)"),
        Check(name="correct logit = (p-1)/2", expected=str(sp.Integer((p - 1) // 2)), measured=str(correct),
              tolerance=0.0, passed=kernel.passed and correct == (p - 1) // 2, exactness="proved",
              detail=_from(kernel, at),
              statement="correct-label logit (unnormalized) = (p-1)/2 (the number of frequencies, sum_zeta cos 0)"),
        Check(name="mean wrong logit", expected="-1/2", measured=str(wrong), tolerance=0.0,
              passed=kernel.passed and wrong == sp.Rational(-1, 2), exactness="proved", detail=_from(kernel, at),
              statement="mean wrong-label logit (unnormalized) = mean_{x != 0} sum_zeta cos(2 pi zeta x/p)"),
        Check(name="paper: wrong logit = 0", expected=0, measured=float(wrong), tolerance=0.0, passed=wrong == 0,
              exactness="proved", informational=True,
              detail=f"{at}: the proofs of Lemmas C.17-C.18 state 0; the value is -1/2 for every odd p",
              statement="paper's stated wrong-label value 0 (Lemmas C.17/C.18)"),
        Check(name="margin from logits", expected=float(normalized), measured=float(from_logits), tolerance=0.0,
              passed=sp.simplify(from_logits - normalized) == 0, exactness="proved", informational=True,
              detail=f"{at}: (K D(0) - K D(1)) / sum_i ||theta_i||^(k+1) = {from_logits}",
              statement="correct - wrong logit (normalized) = measured margin"),
    ]
    return rows if paper_row else [r for r in rows if r.name != "paper: wrong logit = 0"]
