"""The claims of Theorem C.22 (Li, Liang, Shi, Song, Zhou, "Fourier circuits", arXiv:2402.09469) checked without
enumerating the ``p^k`` inputs, on a single-frequency cosine network (docs/theory.md#compact-margin).

The margin, the points on it, condition C.1, the network function and Lemma C.20's ``f^(j,...,j,-j)`` all come
from the table ``F(s, c)`` of :mod:`margintheory.engines.fourier_margin`, valid once the network's off-diagonal
phase moments are proved to vanish (exactly, in ``Q(omega_Q)``).  The construction and the family networks are
checked as the exact networks they are (``proved`` where the margin is exact); a network file is checked through
the exact network it rounds (``certified``: rigorous bounds for the rounding), and is refused the shortcut -- the
caller then runs the exhaustive engine -- when it is not within float64 rounding of one.  Every row says which
computation decided it; nothing is copied from the closed form (``gamma*`` is only the expected column).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import sympy as sp

from margintheory.core import theory
from margintheory.core.checks import Check, Exactness, MarginMeasurement, bool_check
from margintheory.core.margin_claims import ClaimDecision, claim_tolerance, margin_equals, within_of_margin
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition
from margintheory.engines.fourier_margin import (
    EPS,
    ROUNDING_TOLERANCE,
    CompactMargin,
    CosineNetwork,
    check_structure,
    compact_margin,
    construction_cosine_network,
    estimate_compact,
    expansion_coefficient,
    network_fourier_margin,
)
from margintheory.runtime.budget import require
from margintheory.tasks.modular_addition.paper_errata import wrong_logit_statement

#: what the exhaustive engine says in ``lower_how``
EXHAUSTIVE_HOW = ("exhaustive: the logits of all {p}^{k} inputs evaluated in float64; L = the measured normalized "
                  "margin minus its a-priori error bound")
# ---------------------------------------------------------------- rows

def _margin_rows(cm: CompactMargin, problem: ModularAddition, rtol: float | None) -> tuple[list[Check], dict]:
    """Normalized margin vs ``gamma*``, every point on the margin, condition C.1 -- from ``F``, each decided from the
    compact engine's enclosure (the exact network's value plus or minus the file's certified distance to it) against
    the claim of :mod:`margintheory.core.margin_claims`; a claim it cannot decide is named in
    ``undecided_claims`` (``verify --network`` then hands the file to the exhaustive engine)."""
    how = cm.exactness
    nm, tol = cm.normalized_margin, cm.normalized_tolerance
    fields: dict = {"logit_error_bound": cm.logit_error}  # the margin's own entries: compact_measurement
    checks: list[Check] = []
    decisions = []
    gamma, gamma_exact = problem.gamma_star, problem.gamma_star_exact
    reference = gamma if gamma is not None else abs(nm)
    equal_exactly = False
    if gamma is not None and gamma_exact is not None:
        if cm.normalized_margin_exact is not None:
            diff = sp.nsimplify(cm.normalized_margin_exact**2 - gamma_exact**2)
            below, equal_exactly, t = bool(diff <= 0), bool(diff == 0), 0.0
            lo, hi = (gamma, gamma) if equal_exactly else (nm - 4 * EPS * gamma, nm + 4 * EPS * gamma)
        else:
            t = tol + 4 * EPS * gamma
            below = nm <= gamma + t
            lo, hi = cm.normalized_lower - 4 * EPS * gamma, cm.normalized_upper + 4 * EPS * gamma
        checks.append(bool_check("margin <= gamma* (C.6)", below, tolerance=t / gamma, exactness=how,
                                 detail=f"margin/gamma* = {nm / gamma:.15g}",
                                 statement="normalized margin <= gamma* (weak duality, Lemma C.6)"))
        decisions.append(claim_row("margin = gamma* (C.22)", gamma, nm, margin_equals(lo, hi, gamma, rtol),
                                   "normalized margin = gamma* (Theorem C.22)", relative_to=gamma, exactness=how,
                                   detail=f"relative error {abs(nm - gamma) / gamma:.3e}" + (
                                       f"; exact: {cm.normalized_margin_exact} = {gamma_exact}" if equal_exactly
                                       else "")))
        fields["relative_error"] = 0.0 if equal_exactly else abs(nm - gamma) / gamma
        fields["ratio_to_gamma_star"] = 1.0 if equal_exactly else nm / gamma
    scale, err = cm.normalization, cm.logit_error
    raw = cm.details.get("norm_factor_bound", 0.0) if cm.details else 0.0  # a file's norm within 1 +- grow
    grow = float(raw) if isinstance(raw, int | float) else 0.0
    down, up = (1 - grow) * (1 - 4 * EPS), (1 + grow) * (1 + 4 * EPS)  # the file's norm^(k+1) / scale
    t_logit = claim_tolerance(reference, rtol) * scale
    on = cm.label_margins <= cm.h + t_logit
    per_label = f"each of the {cm.p} values of s = a_1+...+a_k stands for {cm.p}^{cm.k - 1} inputs"
    gap = float(cm.label_margins.max() - cm.h)
    decisions.append(claim_row("all on margin (C.6)", 1.0, float(on.mean()), within_of_margin(
        (gap - 4 * err) / (scale * up), (gap + 4 * err) / (scale * down), reference, rtol,
        "largest gap to the margin (normalized)"), "every point on the margin (spt q* = D_p, Lemma C.6)",
        relative_to=reference, exactness=how, detail=f"from F(s, c): {per_label}; {int((~on).sum())} labels off"))
    spread = float(cm.wrong_spread.max())
    decisions.append(claim_row("wrong logits equal (C.1)", 0.0, spread / scale, within_of_margin(
        (spread - 2 * err) / (scale * up), (spread + 2 * err) / (scale * down), reference, rtol,
        "largest wrong-logit spread (normalized)"), "all wrong-label logits equal (condition C.1)",
        relative_to=reference, exactness=how, detail="max over s of (max - min) wrong logit F(s, c), normalized"))
    checks += [c for c, _ in decisions]
    fields.update(all_on_margin=decisions[-2][1].passed, fraction_on_margin=float(on.mean()),
                  wrong_logits_equal=decisions[-1][1].passed, max_wrong_spread=spread / scale,
                  undecided_claims=undecided_names(decisions))
    return checks, fields


def claim_row(name: str, expected: object, measured: object, decision: ClaimDecision, statement: str, *,
              relative_to: float, detail: str = "", exactness: Exactness = "float") -> tuple[Check, ClaimDecision]:
    """The row of one margin claim decided from an enclosure (:mod:`margintheory.core.margin_claims`): its tolerance
    is the claim's ``T`` relative to ``relative_to`` (absolute when that is 0); an undecided claim fails and is
    informational (the result's ``undecided_claims`` names it, and the verdict is ``undecided``)."""
    text = f"{detail}; {decision.text}" if detail else decision.text
    undecided = decision.decision == "undecided"
    tolerance = decision.tolerance / relative_to if relative_to else decision.tolerance  # a zero margin: absolute
    return Check(name=name, expected=expected, measured=measured, tolerance=tolerance,
                 passed=decision.passed, exactness=exactness, detail=text, informational=undecided,
                 statement=statement), decision


def undecided_names(decisions: list[tuple[Check, ClaimDecision]]) -> list[str]:
    """The names of the claims whose enclosure straddles their tolerance."""
    return [c.name for c, d in decisions if d.decision == "undecided"]


def structure_row(cm: CompactMargin) -> Check:
    """The hypothesis of the compact lemma, proved: every off-diagonal phase moment vanishes."""
    s, net = cm.structure, cm.network
    return bool_check("moments: f depends on s", s.passed, exactness="proved",
                      detail=f"{s.checked} moments mu_zeta(n, +1), n non-constant, |n|_1 <= k, over "
                             f"{len(net.groups)} frequency group(s), reduced modulo Phi_{net.denominator} "
                             f"({s.seconds:.2f} s)",
                      statement="off-diagonal phase moments vanish, so f(a)[c] = F(a_1+...+a_k mod p, c) "
                                "(docs/theory.md#compact-margin)")


def _dft_rows(cm: CompactMargin, net_formula: np.ndarray | None, rtol: float | None) -> tuple[list[Check], dict]:
    """Lemma C.20 from ``F``: ``f^(j,...,j,-j) > 0`` for ``j != 0``, and its agreement with Lemma C.14's
    single-neuron formula (``net_formula``; the exact network's own when ``None``)."""
    exact = _exact_dft(cm)
    if exact is not None:
        value, neuron_value = exact
        direct = np.full(cm.p - 1, float(value) / cm.normalization)
        rows = [Check(name="f^(j..,-j) > 0 (C.20)", expected="> 0", measured=float(direct.min()), tolerance=0.0,
                      passed=value > 0, exactness="proved",
                      detail=f"every j != 0: p^k K (S(0) - S(x != 0)) = {value} (exact; sum_x omega^(jx) = 0)",
                      statement="f^(j,...,j,-j) > 0 for all j != 0 (Lemma C.20)"),
                Check(name="f^(j..,-j) real (C.20)", expected=0.0, measured=0.0, tolerance=0.0, passed=True,
                      exactness="proved", detail=f"every j != 0: the rational {value} (exact)",
                      statement="Im f^(j,...,j,-j) = 0 for all j != 0 (Lemma C.20: the value is a positive real)"),
                Check(name="f^(j..,-j) by C.14", expected=0.0, measured=float(value - neuron_value), tolerance=0.0,
                      passed=value == neuron_value, exactness="proved",
                      detail=f"k! (p/2)^(k+1) sigma^(k+1) W_zeta = {neuron_value} from the neurons' phases (exact)",
                      statement="f^(j,...,j,-j) from logits = k! sum_i w^(-j) prod u^(j) (Lemma C.14)")]
        return rows, {"multidim_dft_min_real": float(direct.min()), "multidim_dft": [complex(v) for v in direct]}
    direct = cm.multidim_dft()[1:] / cm.normalization
    formula = (net_formula[1:] if net_formula is not None else direct) / cm.normalization
    scale = float(np.max(np.abs(direct))) if direct.size else 0.0
    tol = max(cm.p**cm.k * cm.p * cm.logit_error / cm.normalization * 4 + 64 * EPS * scale, (rtol or 0.0) * scale)
    min_real, max_imag = float(direct.real.min()), float(np.abs(direct.imag).max())
    agree = float(np.max(np.abs(direct - formula)))
    rows = [*dft_sign_rows(min_real, max_imag, tol, scale, "from F(s, c) by a 2-D FFT"),
            Check(name="f^(j..,-j) by C.14", expected=0.0, measured=agree, tolerance=tol,
                  passed=bool(agree <= tol + 1e-12 * scale), exactness="float",
                  detail="max abs difference over j != 0" + ("" if net_formula is not None else " (no neuron formula)"),
                  statement="f^(j,...,j,-j) from logits = k! sum_i w^(-j) prod u^(j) (Lemma C.14)")]
    return rows, {"multidim_dft_min_real": min_real, "multidim_dft": [complex(z) for z in direct]}


def dft_sign_rows(min_real: float, max_imag: float, tol: float, scale: float, how: str) -> list[Check]:
    """Lemma C.20's ``f^(j,...,j,-j) > 0``: real (``max |imag|`` within ``tol``) and positive (``min real > tol``),
    as two rows so that the table shows the number that decides each."""
    return [
        Check(name="f^(j..,-j) > 0 (C.20)", expected="> 0", measured=min_real, tolerance=tol,
              passed=bool(min_real > tol), exactness="float", detail=how,
              statement="Re f^(j,...,j,-j) > 0 for all j != 0 (Lemma C.20)"),
        Check(name="f^(j..,-j) real (C.20)", expected=0.0, measured=max_imag, tolerance=tol + 1e-9 * scale,
              passed=bool(max_imag <= tol + 1e-9 * scale), exactness="float", detail="max |imag| over j != 0",
              statement="Im f^(j,...,j,-j) = 0 for all j != 0 (Lemma C.20: the value is a positive real)"),
    ]


def _exact_dft(cm: CompactMargin) -> tuple[Fraction, Fraction] | None:
    """Exact ``f^(j,...,j,-j)`` (``j != 0``) of an exact network whose ``S`` takes one value off zero, from the
    logits (``p^k K (S(0) - S(1))``) and from the neurons (``k! (p/2)^(k+1) sigma^(k+1) W``); ``None`` otherwise."""
    S, net = cm.cosine_sum, cm.network
    if S is None or cm.exactness != "proved" or len(set(S[1:])) != 1:
        return None
    weights = net.frequency_weights()
    if sorted(weights) != theory.frequencies(cm.p) or len(set(weights.values())) != 1:
        return None
    k, p = cm.k, cm.p
    W = next(iter(weights.values()))
    K = Fraction(math.factorial(k), 2**k) * net.scale_power * W
    from_logits = p**k * K * (S[0] - S[1])
    from_neurons = math.factorial(k) * Fraction(p, 2) ** (k + 1) * net.scale_power * W
    return from_logits, from_neurons


def exact_neuron_rows(cm: CompactMargin) -> tuple[list[Check], dict]:
    """Lemma C.15's optimal set and Lemma C.20's coverage on an exact network: each neuron is defined as one
    cosine with one amplitude (so single-frequency and equal amplitudes hold by definition, frequencies checked
    in ``1 <= zeta < p``, ``2 zeta != 0``); the phase sum is an integer check; coverage from the frequencies."""
    net, struct = cm.network, cm.structure
    aligned = [g.aligned for g in struct.groups]
    covered = sorted(z for z, w in net.frequency_weights().items() if w > 0 and 2 * z < net.p)
    wanted = theory.frequencies(net.p)
    by_def = (f"exact network ({net.source}): each neuron is A cos(2 pi (r/Q + zeta x/p)) on all its k+1 vectors, "
              f"Q = {net.denominator}")
    rows = [
        # these two hold by the exact network's representation (one frequency and one amplitude per neuron; a
        # frequency outside 1 <= zeta < p, 2 zeta != 0 is refused when it is built): reported, not tested here
        Check(name="single frequency", expected=net.width, measured=net.width, tolerance=None, passed=True,
              exactness="proved", detail=by_def + "; holds by the representation (2 zeta != 0 mod p checked when "
              "the exact network is built)", informational=True,
              statement="neurons single-frequency (max normalized power = 1)"),
        Check(name="equal amplitudes", expected=net.width, measured=net.width, tolerance=None, passed=True,
              exactness="proved", detail=by_def + "; holds by the representation", informational=True,
              statement="neurons with equal amplitudes ||u_1||=...=||u_k||=||w||"),
        Check(name="phase sum = theta_w", expected=0, measured=sum(not a for a in aligned), tolerance=None,
              passed=all(aligned), exactness="proved",
              detail="r_w = r_1 + ... + r_k (mod Q) checked on every atom (integers)",
              statement="phase condition theta_u1+...+theta_uk = theta_w (mod 2 pi)"),
        Check(name="optimal neurons (C.15)", expected=net.width, measured=net.width if all(aligned) else 0,
              tolerance=None, passed=all(aligned), exactness="proved",
              detail="single frequency, equal amplitudes and aligned phases (above)",
              statement="every neuron in the optimal single-neuron set (Lemma C.15)"),
        Check(name="all frequencies (C.20)", expected=wanted, measured=covered, tolerance=None,
              passed=covered == wanted, exactness="proved", statement="every frequency 1..(p-1)/2 used (Lemma C.20)"),
    ]
    fields = {"neurons_in_optimal_set": all(aligned), "fraction_in_optimal_set": float(all(aligned)),
              "fraction_single_frequency": 1.0, "frequencies_covered": covered, "max_phase_residual": 0.0,
              "neurons_checked": net.width}
    return rows, fields


def _logit_rows(cm: CompactMargin, target: Fraction) -> tuple[list[Check], dict]:
    """Lemma C.18's network function ``f = target * sum_zeta cos_zeta(a_1+...+a_k-c)`` (``target = 1`` for the
    construction, ``k!/2^k`` for a family) from the exact ``F = K S(s - c)``."""
    S, net, p, k = cm.cosine_sum, cm.network, cm.p, cm.k
    if S is None or cm.exactness != "proved":
        return [], {}
    weights = net.frequency_weights()
    K = Fraction(math.factorial(k), 2**k) * net.scale_power * next(iter(weights.values()))
    correct, wrong = K * S[0] / target, K * sum(S[1:], Fraction(0)) / (p - 1) / target
    n_freq = Fraction(len(theory.frequencies(p)))
    whose = "construction" if target == 1 else "family"
    rows = [
        Check(name="network function (C.18)", expected=str(target), measured=str(K), tolerance=None,
              passed=K == target, exactness="proved",
              detail=f"F(s, c) = K S(s - c) with S(x) = sum_zeta cos(2 pi zeta x/p) exact in Q(omega_{p}) and "
              f"K = (k!/2^k) sigma^(k+1) W from the wanted moment; expected {target} (the {whose}'s scale)",
              statement="network function = sum_zeta cos_zeta(a_1+...+a_k-c) (Lemma C.18)" if target == 1 else
              "network function = (k!/2^k) sum_zeta cos_zeta(a_1+...+a_k-c) (the family's scale)"),
        Check(name="correct logit = (p-1)/2", expected=str(n_freq), measured=str(correct), tolerance=0.0,
              passed=correct == n_freq, exactness="proved", detail="exact; expected: the number of frequencies",
              statement="correct-label logit (unnormalized) "
              "= (p-1)/2 (the number of frequencies, sum_zeta cos 0)"),
        Check(name="mean wrong logit", expected=str(-n_freq / (p - 1)), measured=str(wrong), tolerance=0.0,
              passed=wrong == -n_freq / (p - 1), exactness="proved",
              detail="exact; expected -(number of frequencies)/(p-1), from sum_x cos(2 pi zeta x/p) = 0",
              statement="mean wrong-label logit (unnormalized) = mean_{x != 0} sum_zeta cos(2 pi zeta x/p)"),
    ]
    if target == 1:  # the paper's statement is about its construction, not the families
        rows.append(Check(name="paper: wrong logit = 0", expected=0.0, measured=float(wrong), tolerance=0.0,
                          passed=wrong == 0, exactness="proved",
                          detail="the paper's claim; the computed value differs" if wrong != 0 else "",
                          informational=True, statement=wrong_logit_statement(cm.k)))
    from_logits = float((correct - wrong) * target) / cm.normalization
    rows.append(Check(name="margin from logits", expected=cm.normalized_margin, measured=from_logits,
                      tolerance=4 * EPS,
                      passed=abs(from_logits - cm.normalized_margin) <= 4 * EPS * cm.normalized_margin,
                      exactness="float", informational=True,
                      detail="(correct - wrong) / ||theta||^(k+1) in float64 from the exact values; a float "
                      "restatement of the exact logit rows above and of the margin, which decide",
                      statement="correct - wrong logit (normalized) = measured margin"))
    fields = {"construction_correct_logit": float(correct), "construction_wrong_logit": float(wrong),
              "normalized_correct_logit": float(correct * target) / cm.normalization,
              "normalized_wrong_logit": float(wrong * target) / cm.normalization,
              "normalized_margin_from_logits": from_logits}
    return rows, fields


# ---------------------------------------------------------------- the result's rows

def construction_rows(cm: CompactMargin, problem: ModularAddition, family: str) -> tuple[list[Check], dict]:
    """Every row of the construction's (or a family network's) check, from the exact network."""
    nf = len(theory.frequencies(problem.p))
    per = cm.width // max(nf, 1)
    rows: list[Check] = []
    if family == "lemma-c18":
        expected = problem.theorem_width
        rows.append(Check(name="width (C.18)", expected=expected, measured=cm.width, tolerance=None,
                          passed=expected == cm.width, exactness="proved",
                          detail=f"{per} neurons x {nf} frequencies in the exact network",
                          informational=expected is None, statement="width = 2^(2k-1)(p-1)/2 (Lemma C.18)"))
    else:
        rows.append(bool_check("phase moments vanish", cm.structure.wanted_only, exactness="proved",
                               detail=f"every unwanted moment of M_k: the off-diagonal ones ({cm.structure.checked}) "
                                      "and the diagonal ones, exactly",
                               statement=f"unwanted phase moments of the {family} measure vanish"))
        rows.append(Check(name="width", expected=per * nf, measured=cm.width, tolerance=None, passed=True,
                          exactness="proved", informational=True,
                          statement=f"width = {per} x (p-1)/2 (theorem's 2^(2k-1)(p-1)/2 = "
                                    f"{2 ** (2 * problem.k - 1) * nf})"))
    rows.append(structure_row(cm))
    fields: dict = {"width": cm.width}
    target = Fraction(1) if family == "lemma-c18" else Fraction(math.factorial(problem.k), 2**problem.k)
    for part in (_margin_rows(cm, problem, None), exact_neuron_rows(cm), _dft_rows(cm, None, None),
                 _logit_rows(cm, target)):
        rows += part[0]
        fields.update(part[1])
    if family != "lemma-c18":
        fields.update(family=family, width_per_frequency=per, theorem_width=problem.theorem_width)
    fields.update(lower_fields(cm))
    return rows, fields


def network_rows(cm: CompactMargin, problem: ModularAddition, net_formula: np.ndarray, rtol: float | None,
                 neuron_part: tuple[list[Check], dict]) -> tuple[list[Check], dict]:
    """The rows of a network file checked through the exact network it rounds; ``neuron_part``: the per-neuron
    Fourier rows, measured by the caller on the file's weights."""
    d = cm.details
    rec = bool_check("rounds exact cosine net", True, exactness="certified",
                     detail=f"every weight within {d.get('max_relative_deviation', 0.0):.1e} of its neuron's "
                            f"amplitude of an exact single-frequency cosine network (Q = {cm.network.denominator}; "
                            f"bound allowed {ROUNDING_TOLERANCE:.1e}); logits move by <= "
                            f"{d.get('perturbation_bound', 0.0):.2e}",
                     statement="the network is an exact single-frequency cosine network up to float64 rounding "
                               "(rigorous bound; docs/theory.md#compact-margin)")
    rows = [rec, structure_row(cm)]
    fields: dict = {}
    for part in (_margin_rows(cm, problem, rtol), neuron_part, _dft_rows(cm, net_formula, rtol)):
        rows += part[0]
        fields.update(part[1])
    fields.update(lower_fields(cm))
    fields["exact_description_margin"] = d.get("exact_description_margin")
    fields["normalized_margin_interval"] = d.get("normalized_margin_interval")
    return rows, fields


def lower_fields(cm: CompactMargin) -> dict:
    """The compact engine's rigorous lower value and time (the margin itself: :func:`compact_measurement`)."""
    return {"lower_value": cm.normalized_lower, "engine_seconds": cm.seconds}


def compact_measurement(cm: CompactMargin) -> MarginMeasurement:
    """The typed margin of a network checked without enumerating inputs (what
    :func:`margintheory.certificate.maxmin.lower_bound_from` builds ``L`` from): ``proved`` with its exact value when
    the exact network's margin is exact, else ``certified`` with the compact engine's rigorous error bound."""
    exact = cm.normalized_margin_exact
    return MarginMeasurement(value=float(cm.normalized_margin), error_bound=float(cm.normalized_tolerance),
                             exactness="proved" if exact is not None else "certified", method="fourier", how=cm.how,
                             exact=None if exact is None else str(exact))


def compact_construction(problem: ModularAddition, family: str) -> CompactMargin | None:
    """The exact construction's compact margin, or ``None`` if its moments do not qualify (never for the
    package's families; then the exhaustive engine runs)."""
    net = construction_cosine_network(problem, family)
    structure = check_structure(net)
    if not structure.passed:
        return None
    return compact_margin(net, structure)


def compact_network(net: PolyNetwork, max_memory: int, max_seconds: float | None) -> tuple[CompactMargin | None, str]:
    """The compact margin of a network file, or ``(None, reason)``; refused up front when matching the file would
    exceed the budget (the exhaustive engine then makes its own estimate)."""
    from margintheory.errors import RefusedError

    try:
        require(estimate_compact(net.p, net.k, 1.0, 4, "matching the network to an exact cosine network",
                                 network_weights=float(net.U.size + net.W.size)), max_memory, max_seconds)
    except RefusedError as exc:
        return None, f"the compact check does not fit the budget ({exc})"
    t0 = time.perf_counter()
    cm, why = network_fourier_margin(net, max_memory=max_memory, max_seconds=max_seconds)
    if cm is not None:
        cm.seconds = time.perf_counter() - t0
    return cm, why


def exhaustive_measurement(p: int, k: int, value: float, error_bound: float, why: str = "") -> MarginMeasurement:
    """The typed margin of a network whose every input was evaluated in float64: ``value`` with its a-priori error
    bound; ``why`` says why the exhaustive engine ran (the Fourier shortcut refused, or requested)."""
    return MarginMeasurement(value=float(value), error_bound=float(error_bound), exactness="float",
                             method="exhaustive", how=EXHAUSTIVE_HOW.format(p=p, k=k) + (f"; {why}" if why else ""))


def describe(net: CosineNetwork) -> str:
    """One line: the exact network's groups, denominator and scale."""
    return (f"{net.width} neurons in {len(net.groups)} frequency group(s), phases over Q = {net.denominator}, "
            f"sigma^(k+1) = {net.scale_power}; N_k(1,...,1) = {expansion_coefficient(net.k, [1] * net.k)}")
