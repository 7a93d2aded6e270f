"""The max-min certificate of ``verify``: the max margin lies in ``[L, U]``.

``L`` is the normalized margin of the checked network (the construction of Lemma C.18 or a given network):
proved when it was computed exactly (``verify --exact``, cyclotomic field), otherwise the float64 value minus its
a-priori error bound.  ``U`` is the proved upper bound of :mod:`margintheory.certificate.upper_bound` (weak
duality with uniform ``q``, ``tau`` + the frequency blocks + an exactly checked SOS certificate), computed for
this ``(p, k)`` and never taken from the closed form.  The closed form ``gamma*`` is a third, independent column:
it is compared with both ends.

References: Li, Liang, Shi, Song, Zhou, "Fourier Circuits in Neural Networks and Transformers" (arXiv:2402.09469),
Lemmas C.6, C.14, C.18 and Theorem C.22; docs/theory.md#certificate and docs/theory.md#frequency-blocks.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from margintheory.certificate.upper_bound import (
    C14_TERMS,
    C14_TERMS_REASON,
    ProvedUpperBound,
    certificate_document,
    floor_float,
    prove_upper_bound,
)
from margintheory.core.checks import Check, Exactness, MarginMethod, VerificationResult, step_name
from margintheory.core.network import PolyNetwork
from margintheory.core.premises import derive_premises
from margintheory.core.problems import ModularAddition

#: the interval is "tight" when (U - L)/L <= GAP_TOL
GAP_TOL = 1e-9
GAP_TOL_EXACT = Fraction(1, 10**9)


@dataclass
class LowerBound:
    """``L``: a float (rounded down) and, when proved, the exact value (rational or the root of a rational)."""

    value: float
    exact: sp.Expr | None
    exactness: Exactness
    how: str
    #: a-priori bound on the float64 error of the measured margin (``value`` is the measured margin minus it)
    error_bound: float = 0.0
    #: ``"fourier"`` (the compact engine, no input enumerated) or ``"exhaustive"`` (all ``p^k`` inputs)
    method: MarginMethod = "exhaustive"

    @property
    def exact_square(self) -> Fraction | None:
        """``L^2`` as a rational when ``L`` is exact and its square is rational (:func:`rational_square`)."""
        return None if self.exact is None else rational_square(self.exact)

    def text(self) -> str:
        """``"a/b"`` or ``"sqrt(a/b)"`` (exact) or the float as an exact binary rational ``"a/b"``."""
        if self.exact is not None:
            if self.exact.is_Rational:
                return str(Fraction(int(self.exact.p), int(self.exact.q)))
            sq = self.exact_square
            if sq is not None and self.exact.is_positive:
                return f"sqrt({sq})"
        return str(Fraction(self.value))

    def rational(self) -> str | None:
        """The exact value as ``"a/b"`` when it is rational (the schema's ``lower_exact``)."""
        if self.exact is not None and self.exact.is_Rational:
            return str(Fraction(int(self.exact.p), int(self.exact.q)))
        return None


def rational_square(expr: sp.Expr) -> Fraction | None:
    """``expr^2`` as a rational, or ``None`` when it is not proved rational.  A square that does not expand to a
    rational is only *guessed* by ``nsimplify`` (which matches numerically: ``(sqrt(30)/180 - sqrt(2)/10^20)^2``
    would be taken for ``1/1080``), so the guess counts only when the difference is exactly zero, i.e. its minimal
    polynomial is ``x`` (exact algebraic arithmetic; a transcendental square is never rational here)."""
    sq = sp.expand(expr**2)
    if not sq.is_Rational:
        guess = sp.nsimplify(sq)
        if not guess.is_Rational:
            return None
        x = sp.Dummy()
        try:
            if sp.minimal_polynomial(sq - guess, x) != x:
                return None
        except (NotImplementedError, sp.polys.polyerrors.NotAlgebraic):
            return None
        sq = guess
    return Fraction(int(sq.p), int(sq.q))


def lower_bound_from(result: VerificationResult) -> LowerBound | None:
    """``L`` from the typed margin of a verification of modular addition (``result.margin``, a
    :class:`~margintheory.core.checks.MarginMeasurement`; ``fields`` are never read): exact when the margin carries its
    exact value, else the float margin minus its error bound.  ``None`` if no margin was measured."""
    m = result.margin
    if m is None:
        return None
    if m.exact is not None:
        expr = sp.sympify(m.exact)
        value = (floor_float(Fraction(int(expr.p), int(expr.q))) if expr.is_Rational else
                 math.nextafter(float(sp.N(expr, 40)), -math.inf))
        return LowerBound(value, expr, "proved", m.how, method=m.method)
    tol = m.error_bound
    value = math.nextafter(float(m.value) - tol, -math.inf)
    what = "rigorous" if m.exactness == "certified" else "a-priori"
    text = f"normalized margin of the network in float64 minus its {what} error bound {tol:.2e}"
    return LowerBound(value, None, m.exactness, f"{text}; {m.how}", tol, method=m.method)


def relative_gap(U: Fraction, L: LowerBound, tol: Fraction | None = None, *,
                 U2: Fraction | None = None) -> tuple[float, bool, bool]:
    """``((U - L)/L, gap <= tol, decided exactly)``; exact when ``L^2`` is rational (squares compared).  ``tol``
    defaults to ``GAP_TOL`` (``1/10^9`` for an exact ``L``, the float ``1e-9`` for a float one).  ``U2``: the exact
    square of the upper end when ``U`` is only a rational ``>=`` it (an algebraic ``U``)."""
    L2 = L.exact_square
    if L2 is not None and L2 > 0:
        if U2 is None:
            U2, gap = U * U, float(U) / math.sqrt(float(L2)) - 1
        else:
            gap = 0.0 if U2 == L2 else math.sqrt(float(U2)) / math.sqrt(float(L2)) - 1
        within = U2 <= (1 + (GAP_TOL_EXACT if tol is None else tol)) ** 2 * L2
        return gap, within, True
    if L.value <= 0:
        return math.inf, False, False
    gap = (float(U) - L.value) / L.value
    # decided in exact rational arithmetic on the float lower bound L.value (itself <= L), so a "within" here is
    # rigorous, not subject to the rounding of the float gap printed beside it
    return gap, U <= (1 + (Fraction(GAP_TOL) if tol is None else tol)) * Fraction(L.value), False


def gap_upper_rational(U: Fraction, L: LowerBound, U2: Fraction | None = None) -> Fraction | None:
    """A rational ``g`` with ``(U - L)/L <= g`` exactly (3 significant digits, rounded up), for the file's claim
    (``U2``: the exact square of an algebraic ``U``)."""
    L2 = L.exact_square if L.exact is not None else Fraction(L.value) ** 2
    if L2 is None or L2 <= 0:
        return None
    ratio2 = (U * U if U2 is None else U2) / L2  # ((U/L))^2
    g = float(math.sqrt(float(ratio2))) - 1
    if g <= 0:
        cand = Fraction(0)
    else:
        e = math.floor(math.log10(g)) - 2
        cand = Fraction(math.ceil(g / 10**e)) * Fraction(10) ** e
    while (1 + cand) ** 2 < ratio2:
        cand = cand * 2 if cand > 0 else Fraction(1, 10**15)
    return cand


def maxmin_checks(ub: ProvedUpperBound, L: LowerBound, gamma_exact: sp.Expr | None, applicable: bool,
                  rtol: float | None, *, exact_hint: bool = True) -> list[Check]:
    """The rows of the verdict: both ends against ``gamma*``, the gap, and the argued steps.  ``exact_hint``: the
    network can be checked with ``--exact`` (the construction or a family, not a network file)."""
    U = ub.upper
    base = max(GAP_TOL, rtol or 0.0)
    # a float L is the measured margin minus its a-priori error bound: the gap cannot be decided more finely than
    # that bound, so it widens the tolerance (as for the row "normalized margin = gamma*"); both terms are stated in
    # the row (docs/commands.md: "the tolerance applied is 1e-9 plus L's relative error bound")
    float_slack = L.error_bound / L.value if L.exactness == "float" and L.value > 0 else 0.0
    tol = base + float_slack
    # the tolerance (the float sum above) is compared in rational arithmetic, exactly: a wider --rtol is decided as
    # exactly as the default 1e-9
    gap, within, exact = relative_gap(U, L, None if tol == GAP_TOL else Fraction(tol), U2=ub.upper_squared)
    g_float = None if gamma_exact is None else float(gamma_exact)
    chain = reduction_checks(ub) + proof_step_checks(ub, only_argued=True)
    upper_premises = [c.name for c in chain]  # U bounds the max margin by the whole chain (its argued links too)
    how = ("AM-GM: max g_k = (k+1)^-((k+1)/2) exactly" if ub.method == "am-gm" else "exact SOS")
    rows: list[Check] = []
    rows.append(Check(name="max margin >= L", expected=g_float, measured=L.value, tolerance=None, passed=True,
                      exactness=L.exactness, detail=f"L = {L.text()}; {L.how}", informational=True,
                      statement="max margin >= L: normalized margin of the checked network"))
    g2 = None if gamma_exact is None else rational_square(gamma_exact)
    if gamma_exact is not None and g2 is not None:
        above = ub.upper_squared >= g2
        ratio = "U = gamma* exactly" if ub.upper_squared == g2 else \
            f"U/gamma* - 1 = {math.sqrt(float(ub.upper_squared / g2)) - 1:.3e}"
        rows.append(Check(name="max margin <= U, gamma* <= U", expected=float(gamma_exact), measured=ub.upper_float,
                          tolerance=0.0, passed=bool(above), exactness="proved",
                          detail=f"U = {ub.upper_text}; {ratio}; squares compared exactly",
                          statement=f"max margin <= U, and gamma* <= U (weak duality + frequency blocks + {how})",
                          premises=upper_premises))
    else:
        rows.append(Check(name="max margin <= U", expected=None, measured=ub.upper_float, tolerance=None, passed=True,
                          exactness="proved", detail=f"U = {ub.upper_text}; no closed form for this p",
                          informational=True,
                          statement=f"max margin <= U (weak duality + frequency blocks + {how})",
                          premises=upper_premises))
    hint = f"; --exact decides {base:g} exactly where it fits" if exact_hint else ""
    bound = (f"{base:g} + {float_slack:.3g} = {tol:.6g} ({base:g} plus the float64 error bound of L, relative to "
             f"L{hint})") if float_slack else (
        f"{base:g} (decided exactly)" if exact and L.exactness == "proved" else f"{base:g}")
    rows.append(Check(name="network margin = optimum", expected=tol, measured=gap, tolerance=tol, passed=bool(within),
                      exactness="proved" if exact and L.exactness == "proved" else
                      "certified" if L.exactness in ("proved", "certified") else "float",
                      detail=f"L = {L.value:.15g} ({L.exactness}), U = {ub.upper_float:.15g} (proved); "
                      f"tolerance {bound}"
                      + ("; the uniform-weight dual is not tight for even p" if not applicable else ""),
                      informational=not applicable, statement=f"network margin = solver optimum: (U - L)/L <= {bound}",
                      premises=[rows[0].name, rows[1].name]))
    return rows + chain


def reduction_checks(ub: ProvedUpperBound) -> list[Check]:
    """How the frequency blocks were justified, as two rows: Lemma C.14 (proved for all ``p`` symbolically; expanded
    exactly in ``Q(omega_p)`` at this ``(p, k)`` when that is cheap -- the row says which was done) and the single SOS
    solve that covers every frequency (each block is ``c_b g_k`` in its own coordinates)."""
    symbolic = next(s for s in ub.steps if s.name.startswith("Lemma C.14 and the block closed form"))
    exact = ub.reduction_check
    if exact.get("ran"):
        how = (f"proved for all p (sympy: {symbolic.detail}) and expanded exactly in Q(omega_{ub.p}) at (p, k) = "
               f"({ub.p}, {ub.k}): {exact['monomials_compared']} monomials compared, "
               f"{'equal' if exact['matches'] else 'DIFFERENT'}")
        measured = "all p (sympy) + exact at (p, k)"
        passed = symbolic.passed and bool(exact["matches"])
    else:
        how = (f"proved for all p (sympy: {symbolic.detail}); the exact expansion at (p, k) = ({ub.p}, {ub.k}) was not "
               f"run: {exact.get('reason', 'not requested')}")
        measured = "all p (sympy); exact at (p, k) not run"
        passed = symbolic.passed
    argued = [] if exact.get("ran") else [argued_c14_terms()]
    nfreq = ub.p // 2  # frequencies 1 <= j <= p/2 (up to their negatives): (p-1)/2 complex blocks, + p/2 if p even
    freqs = ", ".join(f"j in {c['frequencies']}" for c in ub.constants)
    decouple = Check(name="blocks decouple (C.14)", expected="proved", measured=measured, tolerance=None,
                     passed=passed, exactness="proved", detail=how,
                     statement="Lemma C.14: cross-frequency terms vanish, F = sum_j c_j g_k(zeta_j)",
                     premises=[c.name for c in argued])
    if ub.method == "am-gm":
        return argued + [decouple, Check(
            name="one bound on g_k, all blocks", expected=f"{nfreq} frequenc{'ies' if nfreq > 1 else 'y'}",
            measured=f"max g_{ub.k} exact (AM-GM)", tolerance=None, passed=ub.am_gm is not None and ub.am_gm.proved,
            exactness="proved",
            detail=f"{freqs}: each block is c_j g_k(zeta_j) in its own orthonormal coordinates, so the exact maximum "
                   f"max_(|z|=1) g_k = {ub.k + 1}^-({ub.k + 1}/2) (max^2 = {ub.block_bound_squared}; AM-GM "
                   f"certificate, no solver, {ub.am_gm.seconds * 1e3 if ub.am_gm else 0:.1f} ms) bounds them all",
            statement="one exact AM-GM certificate bounds every frequency block (the blocks are the same form g_k)")]
    return argued + [
        decouple,
        Check(name="one SOS solve, all blocks", expected=f"{nfreq} frequenc{'ies' if nfreq > 1 else 'y'}",
              measured=f"1 SOS solve (g_{ub.k})", tolerance=None, passed=True, exactness="proved",
              detail=f"{freqs}: each block is c_j g_k(zeta_j) in its own orthonormal coordinates (the nonzero "
              f"frequencies are "
              f"permuted by the Galois group of Q(omega_p); the change of variables is explicit), so one exact "
              f"certificate max_(|z|=1) g_k <= B = {ub.block_bound} ({ub.solver.get('name')}, status "
              f"{ub.solver.get('status')}, {ub.solver.get('iterations')} iterations) bounds them all",
              statement="one SOS solve bounds every frequency block (Galois-related blocks are the same form g_k)",
              premises=["blocks decouple (C.14)"]),
    ]


def argued_c14_terms() -> Check:
    """The argued half of Lemma C.14's proof for all ``p`` (which terms cancel) as an informational row."""
    return Check(name=C14_TERMS, expected="argument", measured="argued", tolerance=None, passed=True,
                 exactness="argued", informational=True, detail=C14_TERMS_REASON,
                 statement="Lemma C.14's bookkeeping: which terms of the expanded objective survive the sum over "
                           "inputs and labels (the statements sympy's identities are about)")


def proof_step_checks(ub: ProvedUpperBound, *, only_argued: bool = False,
                      include_weak_duality: bool = True) -> list[Check]:
    """The steps of the upper bound as rows: ``argued`` ones informational with their reason, ``proved`` ones
    deciding (every one of them passed, or :func:`prove_upper_bound` would have raised).  Each row names the earlier
    rows of the chain as its premises (a chain: each link uses the ones before it); with every step shown, Lemma
    C.14's proof for all ``p`` rests on its argued bookkeeping (:func:`argued_c14_terms`) unless the objective was
    also expanded exactly at this ``(p, k)``."""
    rows: list[Check] = []
    exact_c14 = bool(ub.reduction_check.get("ran"))
    for s in ub.steps:
        if (only_argued and s.exactness != "argued") or (not include_weak_duality and s.name.startswith("weak")):
            continue
        if not only_argued and not exact_c14 and s.name.startswith("Lemma C.14 and the block closed form"):
            rows.append(argued_c14_terms())
        rows.append(Check(name=step_name(s.name, "U: "), expected="argument" if s.exactness == "argued" else "holds",
                          measured=s.exactness, tolerance=None, passed=s.passed, exactness=s.exactness,
                          detail=s.detail, informational=s.exactness == "argued",
                          statement=f"upper-bound step: {s.name}",
                          premises=[] if only_argued else [c.name for c in rows]))
    return rows


def certificate_field(ub: ProvedUpperBound, L: LowerBound) -> dict[str, Any]:
    """The ``certificate`` object of the JSON result (schema: lower, upper, relative_gap, exactness, exact values,
    steps)."""
    gap, _, _ = relative_gap(ub.upper, L, U2=ub.upper_squared)
    exact_upper = ub.upper_text if "sqrt" not in ub.upper_text else None
    how = ("the AM-GM certificate max_(|z|=1) g_k = (k+1)^-((k+1)/2) (exact, no solver)" if ub.method == "am-gm" else
           "SOS certificate of the block form checked in exact rational arithmetic")
    return {
        "lower": L.value, "upper": ub.upper_float, "relative_gap": gap,
        "lower_exactness": L.exactness, "upper_exactness": "proved",
        "lower_exact": L.rational(), "upper_exact": exact_upper, "upper_algebraic": ub.upper_text,
        "upper_method": ub.method,
        "lower_algebraic": L.text() if L.exact is not None else None,
        "lower_how": L.how,
        "lower_method": L.method,
        "upper_how": f"weak duality (uniform q, tau) + Lemma C.14 frequency blocks + {how}",
        "block_bound": str(ub.block_bound) if ub.method == "sos" else f"sqrt({ub.block_bound_squared})",
        "lemma_c14": {"for_all_p": "proved (sympy)", "exact_at_p_k": ub.reduction_check},
        "frequency_blocks": [{"frequencies": c["frequencies"], "domain": c["domain"],
                              "constant_squared": str(c["constant_squared"])} for c in ub.constants],
        "sos_solves": 1 if ub.method == "sos" else 0,
        "steps": [s.to_dict() for s in ub.steps],
        "solver": {**ub.solver, "kkt": ub.solver.get("kkt")},  # (kkt: null when the solver reported none)
        "seconds": ub.seconds,
    }


def attach_maxmin(result: VerificationResult, problem: ModularAddition, *, max_memory: int,
                  rtol: float | None = None, exact_available: bool, method: str = "am-gm") -> ProvedUpperBound | None:
    """Compute ``U`` for the problem, add the rows and the ``certificate`` object to ``result``
    (``exact_available``: the network is one ``--exact`` can check, the construction or a family; ``method``: how
    the block form is bounded, :func:`prove_upper_bound`)."""
    L = lower_bound_from(result)
    if L is None:
        return None
    ub = prove_upper_bound(problem, max_memory=max_memory, method=method)
    rows = derive_premises(maxmin_checks(ub, L, problem.gamma_star_exact, problem.applicable, rtol,
                                         exact_hint=exact_available))
    for row in rows:
        result.add(row)
    cert = certificate_field(ub, L)
    upper = next(c for c in rows if c.name.startswith("max margin <= U"))
    cert["upper_assumes"] = list(upper.assumes)  # the argued steps U rests on, derived from its row
    result.certificate = cert
    result.fields["max_margin_interval"] = (f"[{L.value:.15g}, {ub.upper_float:.15g}]  (L {L.exactness}, U proved; "
                                            f"gap {cert['relative_gap']:.2e})")
    return ub


#: the largest lower witness written into a certificate file (the checker refuses larger files:
#: ``checker.WITNESS_MAX_BYTES``); a larger network is left out and the lower end is stated, not re-checked
WITNESS_MAX_BYTES = 64 * 2**20


def rational_witness(net: PolyNetwork) -> tuple[dict[str, Any], LowerBound] | None:
    """The network as given, as exact rationals -- its float64 weights are dyadic rationals, so nothing is rounded;
    they are only multiplied by a power of two (exact, and the normalized margin does not change) so that the largest
    is of order 1 -- with the lower bound ``h / S`` that the checker will recompute
    (:func:`checker.network_margin_bound`): the exact normalized margin of the network itself, rounded down only by
    the norm's square roots (even ``k``).  ``None`` when it is too large for the checker or the file, or its margin
    is not positive."""
    from margintheory.certificate import checker

    p, k, m = net.p, net.k, net.m
    if p**k * m * (k + p) > checker.MAX_WITNESS_WORK:
        return None
    top = max(float(np.max(np.abs(net.U))), float(np.max(np.abs(net.W))))
    shift = -math.frexp(top)[1] if top > 0 else 0

    def q(x: float) -> Fraction:
        return Fraction(float(x)) * Fraction(2) ** shift  # exact: a float64 is a dyadic rational

    U = [[[q(x) for x in row] for row in neuron] for neuron in net.U]
    W = [[q(x) for x in row] for row in net.W]
    doc: dict[str, Any] = {"U": [[[str(x) for x in row] for row in neuron] for neuron in U],
                           "W": [[str(x) for x in row] for row in W]}
    if len(json.dumps(doc, separators=(",", ":"))) > WITNESS_MAX_BYTES:
        return None
    h, S = checker.network_margin_bound(p, k, U, W)
    if not h > 0:
        return None
    value = Fraction(h) / S
    doc.update(weights=f"the network's float64 weights exactly, times 2^{shift}", margin=str(h),
               norm_power_at_most=str(S))
    how = (f"exact normalized margin of the included network (the checked network's float64 weights, exact dyadic "
           f"rationals, times 2^{shift}: nothing rounded): margin {float(h):.15g} / norm^(k+1) <= {float(S):.15g}"
           + (" (square roots rounded up)" if k % 2 == 0 else ""))
    return doc, LowerBound(floor_float(value), sp.Rational(value.numerator, value.denominator), "proved", how)


def write_certificate_for(result: VerificationResult, path: str, overwrite: bool, *, max_memory: int,
                          network: PolyNetwork | None = None, problem: ModularAddition | None = None,
                          method: str = "am-gm") -> str | None:
    """Write the certificate file of a modular-addition result that carries the interval ``[L, U]`` (``U`` from the
    cache of :func:`prove_upper_bound`).  The lower end is a rational witness network re-checked by the checker when
    it is small enough (``network``, or the construction of Lemma C.18 when ``None``); else ``L`` of the result
    (its typed margin, :func:`lower_bound_from`).  ``problem`` is the result's: without it (a result of another task)
    there is no interval to write.  Returns ``None`` when written, else why not (a network whose margin is not
    positive: its interval says nothing the file format could state, the checker works with squares of positive
    ends); the reason is also a note of ``result``."""
    from margintheory.core.construction import build_construction
    from margintheory.errors import InputError

    L = lower_bound_from(result)
    if L is None or result.certificate is None or problem is None:
        raise InputError("no max-min interval was computed, so there is no certificate to write")
    if not L.value > 0:
        why = (f"{path} not written: the network's normalized margin L = {L.value:.6g} is not positive, so [L, U] "
               "certifies nothing (a certificate's lower end is a positive margin)")
        result.notes.append(why)
        return why
    ub = prove_upper_bound(problem, max_memory=max_memory, method=method)
    net = network
    if net is None and _witness_fits(problem.p, problem.k, theory_width(problem)):
        net = build_construction(problem)  # never built when the checker would not re-check it anyway
    witness = rational_witness(net) if net is not None else None
    if witness is not None:
        wdoc, L = witness
    doc = certificate_document(ub, L.text(), L.exactness, L.how, gap_upper_rational(ub.upper, L, ub.upper_squared))
    if witness is not None:
        doc["lower_witness"] = wdoc
    write_certificate(path, doc, overwrite)
    result.fields["certificate_file"] = path
    return None


def _witness_fits(p: int, k: int, m: int) -> bool:
    from margintheory.certificate import checker
    from margintheory.runtime.budget import grid_points

    n = grid_points(p, k)
    return n != math.inf and n * m * (k + p) <= checker.MAX_WITNESS_WORK


def theory_width(problem: ModularAddition) -> int:
    """Neurons of Lemma C.18's construction for the problem (``2^(2k-1)`` per frequency)."""
    return 2 ** (2 * problem.k - 1) * len(problem.frequencies)


def write_certificate(path: str, document: dict[str, Any], overwrite: bool) -> None:
    """Atomic write; an existing file is replaced only with ``overwrite`` (and only if it is a regular file)."""
    import json

    from margintheory.runtime.atomic import atomic_write_text

    check_output_path(path, overwrite)
    atomic_write_text(path, json.dumps(document, separators=(",", ":")) + "\n")


def check_output_path(path: str, overwrite: bool) -> None:
    """Refuse a certificate path up front (before any work): not a regular file (whatever ``overwrite`` says),
    existing without ``overwrite``, or in a place where files cannot be created (:func:`check_output_file`)."""
    from margintheory.runtime.atomic import check_output_file

    check_output_file(path, overwrite)
