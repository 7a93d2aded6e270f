"""Exact verification of the phase-measure networks (:mod:`margintheory.core.phase_measures`) for small ``(p, k)``.

A family's neuron at frequency ``zeta`` with atom ``theta = 2 pi r / Q`` and weight ``w`` computes
``w (sum_j cos(2 pi (r_j/Q + zeta a_j/p)))^k cos(2 pi ((r_1+...+r_k)/Q + zeta c/p))``.  With ``N = lcm(p, Q)`` and
``X = omega_N``, every cosine is ``(X^e + X^-e)/2``, so each logit is an element of ``Z[omega_N]`` divided by
``2^(k+1) L`` (``L`` the common denominator of the weights); it is reduced modulo the cyclotomic polynomial
``Phi_N`` (:mod:`margintheory.core.cyclotomic`) and read off as a rational number.  The powers are expanded
term by term (``(2k)^k`` exponent combinations per input), never numerically.  From the exact logits: every point on
the margin, all wrong labels equal (condition C.1), the network function ``(k!/2^k) sum_zeta cos_zeta(a_1+...+a_k-c)``
and the normalized margin against ``gamma*`` (Theorem C.22 of Li et al., arXiv:2402.09469), with the exact norm
``||theta_i||^(k+1) = w_i ((k+1) p/2)^((k+1)/2)`` (each cosine vector has squared norm ``p/2``, checked exactly).
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import sympy as sp

from margintheory.core import theory
from margintheory.core.checks import Check, VerificationResult, bool_check
from margintheory.core.cyclotomic import check_int64_bound, rational_parts
from margintheory.core.phase_measures import PhaseMeasure, exact_moment_check, family_measure, family_size
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.margins import input_grid
from margintheory.errors import InputError, RefusedError
from margintheory.symbolic.exact import (
    cosine_sums_exact,
    equal_positive,
    exact_measurement,
    rational_logits_dft_diagonal,
)

#: refuse when p^(k+1) * N (group-ring integers held) or the expansion work p^k (2k)^k * neurons is larger
MAX_ENTRIES = 30_000_000
MAX_TERMS = 400_000_000


def _exponents(measure: PhaseMeasure, p: int, zeta: int, n: int) -> np.ndarray:
    """``e[a, j, x]``: exponent of ``X = omega_n`` of the angle ``2 pi (r_j/Q + zeta x/p)`` (``j = k`` is the class)."""
    q = measure.denominator
    full = np.concatenate([measure.points, measure.points.sum(axis=1, keepdims=True)], axis=1)
    x = np.arange(p)
    return (full[:, :, None] * (n // q) + zeta * x[None, None, :] * (n // p)) % n


def check_family_size(p: int, k: int, family: str) -> None:
    """Refuse before anything is built (the measure, the frequencies) when the exact check is certainly too large:
    ``N = lcm(p, Q) >= p``, so at least ``p^(k+2)`` integers and ``p^k (2k)^k (p-1)/2 * size`` expansion terms
    (:func:`exact_family_logits` checks the exact counts once the measure exists)."""
    try:
        size = family_size(family, k)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    log_entries = (k + 2) * math.log2(max(p, 2))
    log_terms = k * math.log2(max(p, 2)) + k * math.log2(2 * k) + math.log2(max(p // 2, 1)) + math.log2(size)
    if log_entries > math.log2(MAX_ENTRIES) or log_terms > math.log2(MAX_TERMS):
        raise RefusedError(f"the exact check of the {family} network for p = {p}, k = {k} needs at least "
                           f"2^{log_entries:.0f} integers and 2^{log_terms:.0f} expansion terms; the limits are "
                           f"{MAX_ENTRIES} and {MAX_TERMS}: use the float64 verifier instead")


def exact_family_logits(p: int, measure: PhaseMeasure) -> tuple[np.ndarray, int, bool]:
    """``(numerators (p^k, p), denominator, all rational)`` of the unnormalized family network's logits."""
    k, q = measure.k, measure.denominator
    n = math.lcm(p, q)
    zetas = theory.frequencies(p)
    neurons = len(zetas) * measure.size
    if p ** (k + 1) * n > MAX_ENTRIES or p**k * (2 * k) ** k * neurons > MAX_TERMS:
        raise RefusedError(f"exact family check needs p^(k+1) N = {p ** (k + 1) * n} integers and "
                           f"{p**k * (2 * k) ** k * neurons} expansion terms; limits {MAX_ENTRIES}, {MAX_TERMS}")
    scale = math.lcm(*(w.denominator for w in measure.weights))
    iw = [int(w * scale) for w in measure.weights]
    grid = input_grid(p, k)
    combos = np.array(list(itertools.product(range(2 * k), repeat=k)), dtype=np.int64)  # which +-factor per slot
    check_int64_bound((2 * k) ** k * 2 * max(iw) * neurons, "the exact family logits")
    acc = np.zeros((p**k, p, n), dtype=np.int64)
    rows = np.arange(p**k)
    for z in zetas:
        e = _exponents(measure, p, z, n)
        for a in range(measure.size):
            # the 2k summands X^{+-e_j(a_j)} of 2 u(a); their k-fold products, binned by exponent
            terms = np.concatenate([e[a, j, grid[:, j]][:, None] for j in range(k)], axis=1)
            terms = np.concatenate([terms, -terms], axis=1) % n  # (p^k, 2k)
            power = np.zeros((p**k, n), dtype=np.int64)
            expo = terms[:, combos].sum(axis=2) % n  # (p^k, (2k)^k)
            np.add.at(power, (np.repeat(rows, expo.shape[1]), expo.ravel()), 1)
            for c in range(p):
                ec = int(e[a, k, c])
                acc[:, c] += iw[a] * (np.roll(power, ec, axis=1) + np.roll(power, -ec, axis=1))
    consts, ok = rational_parts(acc)
    return consts, 2 ** (k + 1) * scale, ok


def _squared_norms_exact(measure: PhaseMeasure, p: int) -> set[sp.Rational]:
    """``sum_x cos(2 pi (r/Q + zeta x/p))^2`` for every phase and frequency used, exactly."""
    q = measure.denominator
    n = math.lcm(p, q)
    out = set()
    for z in theory.frequencies(p):
        e = _exponents(measure, p, z, n)
        for r in np.unique(e[:, :, 0].ravel()):
            vec = np.zeros(n, dtype=np.int64)
            for x in range(p):  # (X^t + X^-t)^2 = X^2t + 2 + X^-2t
                t = (int(r) + z * x * (n // p)) % n
                vec[(2 * t) % n] += 1
                vec[(-2 * t) % n] += 1
                vec[0] += 2
            const, ok = rational_parts(vec[None])
            out.add(sp.Rational(int(const[0]), 4) if ok else sp.nan)
    return out


def verify_family_exact(p: int | ModularAddition, k: int | None = None, family: str = "smallest-known"
                        ) -> VerificationResult:
    """The claims of Theorem C.22 on a family network (:func:`margintheory.core.construction.build_construction`) for
    ``ModularAddition(p, k)`` (or the problem ``p``), every check in exact arithmetic."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    check_family_size(p, k, family)
    start = time.perf_counter()
    measure = family_measure(family, k)
    applicable = p % 2 == 1
    gamma = problem.gamma_star_exact
    width = measure.size * len(theory.frequencies(p))
    fields: dict = {"p": p, "k": k, "family": family, "hypothesis": problem.hypothesis,
                    "gamma_star": float(gamma) if gamma is not None else None,
                    "gamma_star_note": problem.gamma_star_note,
                    "gamma_star_exact": str(gamma) if gamma is not None else None,
                    "theorem_width": problem.theorem_width,
                    "width": width, "width_per_frequency": measure.size, "exactness": "proved",
                    "relative_error": None}
    res = VerificationResult(f"{family} network (p={p}, k={k}), exact arithmetic", fields=fields)
    res.applicable = applicable
    res.task = problem.task
    res.parameters = {**problem.parameters(), "exact": True, "family": family}
    res.add(bool_check("hypothesis: odd prime", problem.hypothesis == "odd-prime",
                       exactness="proved", detail=f"p = {p} is {problem.hypothesis.replace('-', ' ')}",
                       informational=True, statement="hypothesis: p is an odd prime (as the papers assume)"))
    moments = exact_moment_check(measure)
    res.add(bool_check("phase moments vanish",
                       moments.passed, exactness="proved", detail=f"failures: {moments.failures}",
                       statement=f"unwanted phase moments vanish ({moments.checked} moments, {moments.method})"))
    res.add(Check(name="width", expected=f"{measure.size} x {len(theory.frequencies(p))}", measured=width,
                  tolerance=None, passed=True, exactness="proved", informational=True,
                  statement="width = neurons per frequency x (p-1)/2"))
    num, den, ok = exact_family_logits(p, measure)
    res.add(bool_check("logits rational", ok, exactness="proved",
                       detail=f"{num.size} logits reduced modulo Phi_{math.lcm(p, measure.denominator)}",
                       statement="every logit is a rational number (exact, in Q(omega_N))"))
    sq = _squared_norms_exact(measure, p)
    res.add(Check(name="equal amplitudes", expected=str(sp.Rational(p, 2)),
                  measured=", ".join(str(v) for v in sorted(sq, key=str)), tolerance=None,
                  passed=sq == {sp.Rational(p, 2)}, exactness="proved",
                  statement="every cosine vector has squared norm p/2"))
    if ok:
        _margin_checks(res, problem, num, den, gamma)
    else:
        res.notes.append("some logits are irrational: margin checks skipped")
    fields["seconds"] = time.perf_counter() - start
    res.notes.append(f"measure: {measure.description} ({measure.source})")
    return res


def _margin_checks(res: VerificationResult, problem: ModularAddition, num: np.ndarray, den: int,
                   gamma: sp.Expr) -> None:
    p, k = problem.p, problem.k
    labels = input_grid(p, k).sum(axis=1) % p
    diff = (labels[:, None] - np.arange(p)[None, :]) % p
    cos_sum = cosine_sums_exact(problem)
    coef = sp.Rational(math.factorial(k), 2**k)
    target = {d: coef * cos_sum[d] for d in range(p)}
    matches = all(sp.Rational(int(num[a, c]), den) == target[int(diff[a, c])]
                  for a in range(num.shape[0]) for c in range(p))
    res.add(bool_check("network function", matches, exactness="proved",
                       detail=f"all {num.size} logits compared as rationals",
                       statement="network function = (k!/2^k) sum_zeta cos_zeta(a_1+...+a_k-c)"))
    rows = np.arange(num.shape[0])
    correct = num[rows, labels]
    wrong = np.where(np.arange(p)[None, :] == labels[:, None], np.iinfo(np.int64).min, num)
    wmax = wrong.max(axis=1)
    wrong_min = np.where(np.arange(p)[None, :] == labels[:, None], np.iinfo(np.int64).max, num).min(axis=1)
    margins = correct - wmax
    h = sp.Rational(int(margins.min()), den)
    on_margin = bool(np.all(margins == margins.min()))
    res.add(bool_check("all on margin", on_margin, exactness="proved", statement="every point on the margin"))
    res.add(bool_check("wrong logits equal (C.1)", bool(np.all(wmax == wrong_min)),
                       exactness="proved", statement="all wrong-label logits equal (condition C.1)"))
    n_freq = len(theory.frequencies(p))
    norm_power = n_freq * (sp.Rational((k + 1) * p, 2)) ** sp.Rational(k + 1, 2)
    nm = sp.nsimplify(h / norm_power)
    res.set_margin(exact_measurement(nm))
    res.fields.update(margin_exact=str(h), all_on_margin=on_margin)
    if gamma is not None:
        equal = equal_positive(nm, gamma)
        rel = sp.simplify((nm - gamma) / gamma)
        res.fields.update(relative_error=float(rel), relative_error_exact=str(rel), ratio_to_gamma_star=float(rel + 1))
        res.add(Check(name="margin = gamma* (C.22)", expected=str(gamma), measured=str(nm), tolerance=0.0,
                      passed=equal, exactness="proved",
                      detail="norm^(k+1) = (p-1)/2 * ((k+1) p/2)^((k+1)/2) (weights sum to 1 per frequency, every "
                             f"vector's squared norm p/2); (margin - gamma*)/gamma* = {rel}",
                      statement="normalized margin = gamma* (Theorem C.22)"))
    values = rational_logits_dft_diagonal(p, k, num, den)
    distinct = sorted({v for v in values if v is not None})
    covered = all(v is not None and v > 0 for v in values)
    res.add(Check(name="f^(j..,-j) > 0 (C.20)", expected="> 0", measured=", ".join(str(v) for v in distinct),
                  tolerance=None, passed=covered, exactness="proved",
                  detail="multidimensional DFT of the unnormalized logits, computed in Q(omega_N) for j = 1..p-1; "
                         "by Lemma C.20 every frequency is then used",
                  statement="f^(j,...,j,-j) > 0 for all j != 0 (Lemma C.20)"))
    # Lemma C.20: f^(j,...,j,-j) != 0 needs a neuron of frequency |j| (read off the logits, not the construction)
    res.fields["frequencies_covered"] = sorted({min(j, p - j) for j, v in enumerate(values, start=1) if v})
