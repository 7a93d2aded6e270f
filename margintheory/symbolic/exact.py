"""Exact verification of the construction of Lemma C.18 (docs/theory.md#network-function) for small ``(p, k)``.

Every logit of the (unnormalized) construction is an integer combination of products of ``cos`` and ``sin`` of
``2 pi t / p``; it is computed exactly in ``Z[omega_N]``, ``N = lcm(p, 4)`` (:mod:`.cyclotomic`), reduced modulo
the cyclotomic polynomial and read off as a rational number.  The neurons are taken from
:func:`margintheory.core.construction.construction_neuron_specs` (not re-derived here).  From the exact logits:

* the margin ``h``, the wrong-label values, "every point on the margin", "all wrong labels equal" (condition C.1);
* the network function against ``sum_{zeta=1}^{(p-1)/2} cos(2 pi zeta (a_1+...+a_k-c)/p)``, itself computed
  exactly for every residue ``x = a_1+...+a_k-c`` (:func:`per_frequency_cosine_sum_exact`);
* the norm: the construction splits each coefficient evenly over its ``k+1`` vectors (balanced amplitudes,
  ``build_construction``), so ``||theta_i||^(k+1) = |c_i| Q_i^((k+1)/2)`` with ``Q_i`` the exact sum of the squared
  norms of its ``k+1`` unit-amplitude cos/sin vectors (each computed exactly; ``p/2`` for odd ``p``);
* ``normalized margin = h / sum_i ||theta_i||^(k+1)`` compared with ``gamma*`` exactly (both are positive with
  rational squares, so equality of the squares is equality; sympy's difference is also reported);
* each neuron's single-neuron objective ``eta(0) - E_{delta != 0} eta(delta)`` (Def. C.12-C.13) computed exactly
  from its definition, and compared with ``gamma* ||theta_i||^(k+1)`` (Lemma C.15: equality <=> optimal neuron);
* the sum of the neuron objectives against the mean class-weighted margin of the exact logits (Lemma C.5).

The per-frequency sum for *all* odd ``p`` (symbolically, ``p = 2n + 1``) is :func:`per_frequency_sum_derivation`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import reduce

import numpy as np
import sympy as sp

from margintheory.core import theory
from margintheory.core.checks import Check, MarginMeasurement, VerificationResult, bool_check
from margintheory.core.construction import NeuronSpec, construction_neuron_specs
from margintheory.core.cyclotomic import (
    cyclic_mul,
    cyclic_pow,
    field_order,
    rational_parts,
    rational_value,
    twice_cos,
    twice_trig,
)
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.margins import input_grid
from margintheory.errors import RefusedError
from margintheory.runtime import progress
from margintheory.runtime.budget import Estimate, grid_points, require
from margintheory.symbolic.derivation import Derivation

MAX_ENTRIES = 30_000_000  # p^(k+1) * lcm(p, 4) integers held at once (int64): 240 MB


# ---------------------------------------------------------------- the per-frequency cosine sum

def per_frequency_cosine_sum_exact(p: int, x: int) -> sp.Rational:
    """``sum_{zeta=1}^{floor((p-1)/2)} cos(2 pi zeta x / p)`` exactly, in ``Q(omega_N)`` (Lemmas C.17-C.18)."""
    return _cosine_sum_exact(theory.int_at_least("p", p, 3), x)


def cosine_sums_exact(problem: ModularAddition) -> list[sp.Rational]:
    """:func:`per_frequency_cosine_sum_exact` at every residue ``x = 0 .. p-1`` of the problem's ``p``."""
    return [_cosine_sum_exact(problem.p, x) for x in range(problem.p)]


def _cosine_sum_exact(p: int, x: int) -> sp.Rational:
    n = field_order(p)
    total = reduce(np.add, (twice_cos(z * x, p) for z in theory.frequencies(p)), np.zeros(n, dtype=np.int64))
    return rational_value(total) / 2


def per_frequency_sum_derivation(p_max: int | None = 31) -> Derivation:
    """``S(x) = sum_{zeta=1}^{n} cos(2 pi zeta x / p)``, ``p = 2n + 1``: ``n`` if ``p | x``, else ``-1/2``.

    Proved for all odd ``p`` with ``n`` and ``x`` symbols (steps 1-5; step 4 is the one argued fact), and checked
    exactly per ``p`` in ``Q(omega_p)`` for every odd ``p <= p_max`` and every residue ``x`` (``p_max=None``: the
    symbolic steps only, nothing evaluated at a particular ``p``).  The paper
    (proofs of Lemma C.17 and Lemma C.18) states ``0`` for ``x != 0``: the computed value is ``-1/2``.
    """
    n = sp.Symbol("n", integer=True, positive=True)
    x, z = sp.Symbol("x", integer=True), sp.Symbol("zeta", integer=True)
    r, theta = sp.Symbol("r"), sp.Symbol("theta", real=True)
    p = 2 * n + 1
    S = sp.Function("S")(x)
    d = Derivation("Per-frequency cosine sum S(x) = sum_{zeta=1}^{(p-1)/2} cos(2 pi zeta x/p), p = 2n+1 odd")
    d.exact(sp.Eq(2 * sp.cos(z * theta), sp.exp(sp.I * z * theta) + sp.exp(-sp.I * z * theta), evaluate=False),
            "Euler's formula, termwise (r = exp(i theta), theta = 2 pi x / p)", "Lemma C.17 proof (second step)",
            proof=lambda: sp.simplify((2 * sp.cos(z * theta)).rewrite(sp.exp)
                                      - sp.exp(sp.I * z * theta) - sp.exp(-sp.I * z * theta)) == 0,
            scope="all integers zeta, real theta")
    two_sided = sp.Sum(r**z, (z, -n, n))
    d.exact(sp.Eq(1 + sp.Sum(r**z + r**(-z), (z, 1, n)), two_sided),
            "re-indexing zeta -> -zeta: 1 + 2 S(x) is the two-sided geometric sum", "Lemma C.17 proof",
            proof=lambda: _reindexing_holds(r, z, n),
            method="sympy summation of the three geometric sums; both branches (r = 1, r != 1) simplified to 0",
            scope="all n >= 1, all r")
    closed = r**(-n) * (1 - r**p) / (1 - r)
    d.exact(sp.Eq(two_sided, closed), "geometric series for r != 1", "Lemma C.17 proof",
            proof=lambda: sp.simplify(sp.summation(r**z, (z, -n, n)).args[1][0] - closed) == 0,
            method="sympy summation (branch r != 1) minus the closed form simplified to 0", scope="all n >= 1")
    d.exact(sp.Eq(sp.exp(2 * sp.pi * sp.I * x / p) ** p, 1, evaluate=False), "r^p = exp(2 pi i x) = 1 for integer x",
            "Lemma C.17 proof", proof=lambda: sp.simplify(sp.exp(2 * sp.pi * sp.I * x / p) ** p) == 1,
            scope="all integers x, all n")
    d.assumed(sp.Eq(sp.exp(2 * sp.pi * sp.I * x / p), 1), "r = 1 exactly when p divides x", "standard",
              reason="exp(i t) = 1 iff t is in 2 pi Z; not machine-checked")
    d.exact(sp.Eq(S, sp.Piecewise((n, sp.Eq(sp.Mod(x, p), 0)), (sp.Rational(-1, 2), True))),
            "p | x: S = n = (p-1)/2 (sum of n ones); otherwise 1 + 2 S = r^(-n)(1 - r^p)/(1 - r) = 0",
            "Lemma C.17 proof (corrected)",
            proof=lambda: sp.summation(sp.Integer(1), (z, 1, n)) == n and sp.simplify(closed.subs(r**p, 1)) == 0,
            method="sympy: sum of ones = n; closed form with r^p = 1 is 0", scope="all odd p = 2n + 1")
    if p_max is not None:
        _per_p_step(d, x, p_max)
    d.notes.append("The paper (proofs of Lemma C.17, k = 3, and C.18) states S(x) = 0 for x != 0; the computed "
                   "value is -1/2. Its intermediate step sum_{zeta=1}^{p-1} exp(2 pi i zeta x/p)/2 is correct and "
                   "also equals -1/2. The conclusions survive: all wrong labels are equal (C.1) and the "
                   "unnormalized margin is (p-1)/2 - (-1/2) = p/2, not (p-1)/2.")
    return d


def _per_p_step(d: Derivation, x: sp.Symbol, p_max: int) -> None:
    """The per-``p`` check of :func:`per_frequency_sum_derivation`: exact in ``Q(omega_lcm(p,4))`` for every odd
    ``p <= p_max`` and every residue."""
    odd = [q for q in range(3, p_max + 1, 2)]
    S = sp.Function("S")(x)
    d.exact(sp.Eq(S, sp.Piecewise(((sp.Symbol("p") - 1) / 2, sp.Eq(x, 0)), (sp.Rational(-1, 2), True))),
            f"exact per p in Q(omega_lcm(p,4)) for every residue x, odd p = 3..{p_max}", "Lemma C.17 proof (corrected)",
            proof=lambda: all(per_frequency_cosine_sum_exact(q, t) == (sp.Rational(q - 1, 2) if t == 0
                                                                      else sp.Rational(-1, 2))
                              for q in odd for t in range(q)),
            method="cyclotomic-field arithmetic, reduced modulo Phi_N", scope=f"p in {{3, 5, ..., {p_max}}}")


def _reindexing_holds(r: sp.Symbol, z: sp.Symbol, n: sp.Symbol) -> bool:
    """``1 + sum_1^n r^z + sum_1^n r^-z - sum_-n^n r^z = 0`` in both branches of sympy's closed forms."""
    parts = [sp.summation(r**z, (z, 1, n)), sp.summation(r**(-z), (z, 1, n)), sp.summation(r**z, (z, -n, n))]
    if not all(isinstance(e, sp.Piecewise) and len(e.args) == 2 for e in parts):
        return False
    return all(sp.simplify(1 + parts[0].args[i][0] + parts[1].args[i][0] - parts[2].args[i][0]) == 0
               for i in (0, 1))


# ---------------------------------------------------------------- exact logits of the construction

@dataclass(frozen=True)
class ExactLogits:
    """``logits = numerators / denominator`` exactly; rows in :func:`margintheory.engines.margins.input_grid` order."""

    p: int
    k: int
    numerators: np.ndarray   # (p**k, p) int64
    denominator: int
    all_rational: bool
    neuron_objectives: list[sp.Rational | None]  # exact single-neuron objective per spec (None: irrational)
    seconds: float


def _coefficient_scale(specs: list[NeuronSpec]) -> int:
    """Least common denominator ``L`` of the coefficients (so that ``L * c_i`` are integers)."""
    return reduce(math.lcm, (int(sp.Rational(s.coefficient).q) for s in specs), 1)


def _factor_tables(p: int, zetas: list[int]) -> dict[tuple[int, int, int], np.ndarray]:
    """``2 phi(zeta * sign * x)`` for ``x = 0..p-1`` as ``(p, N)`` integer arrays, keyed ``(zeta, is_sine, sign)``."""
    return {(z, kind, sgn): np.stack([twice_trig(kind, sgn * z * x, p) for x in range(p)])
            for z in zetas for kind in (0, 1) for sgn in (1, -1)}


def _neuron_objective(uk_by_label: np.ndarray, w_table: np.ndarray, p: int, k: int) -> sp.Rational | None:
    """``eta(0) - E_{delta != 0} eta(delta)`` of one neuron with unit-amplitude factors (Def. C.12-C.13).

    ``uk_by_label[y] = sum_{a: a_1+...+a_k = y} (2u(a))^k`` and ``w_table[c] = 2 w(c)``; so
    ``eta(delta) = 2^-(k+1) p^-k sum_y uk_by_label[y] w_table[y - delta]`` and, with ``sum_delta eta(delta)`` fixed,
    the objective is ``p/(p-1) (eta(0) - mean_delta eta(delta))``.
    """
    at_label = cyclic_mul(uk_by_label, w_table).sum(axis=0)
    total = cyclic_mul(uk_by_label.sum(axis=0), w_table.sum(axis=0))
    consts, ok = rational_parts(np.stack([at_label, total]))
    if not ok:
        return None
    eta0, eta_sum = (sp.Integer(int(v)) for v in consts)
    scale = sp.Integer(2) ** (k + 1) * sp.Integer(p) ** k
    return sp.Rational(p, p - 1) * (eta0 - eta_sum / p) / scale


def cosine_neuron_objective(p: int, k: int, zeta: int = 1) -> sp.Rational:
    """Exact objective of the neuron ``u_i[a] = cos(2 pi zeta a/p)``, ``w[c] = cos(2 pi zeta c/p)`` (Def. C.12-C.13).

    All phases are 0, so ``theta_u1 + ... + theta_uk = theta_w``: a Lemma C.15 neuron up to the amplitude ``beta``.
    """
    p, k = theory.validate_pk(p, k)
    n = field_order(p)
    grid = input_grid(p, k)
    table = np.stack([twice_cos(zeta * x, p) for x in range(p)])
    uk = cyclic_pow(sum(table[grid[:, j]] for j in range(k)), k)
    by_label = np.zeros((p, n), dtype=np.int64)
    np.add.at(by_label, grid.sum(axis=1) % p, uk)
    obj = _neuron_objective(by_label, table, p, k)
    if obj is None:
        raise ArithmeticError("the objective of a cosine neuron did not reduce to a rational number")
    return obj


#: measured cost of the exact check: bytes per integer held, seconds per (neuron, input) pair (with margin)
EXACT_BYTES_PER_ENTRY = 45
EXACT_SECONDS_PER_NEURON_INPUT = 1.0e-4


def check_exact_size(p: int, k: int, max_entries: int = MAX_ENTRIES) -> int:
    """Refuse sizes beyond ``max_entries`` integers held at once (``p^(k+1) lcm(p, 4)``); returns that count.
    Computed before anything else (``p^(k+1)`` itself is not formed when it is astronomically large)."""
    n = field_order(p)
    entries = grid_points(p, k + 1) * n
    if entries > max_entries:
        shown = f"{entries}" if entries != math.inf else "more than 2^128"
        raise RefusedError(f"exact verification holds p^(k+1) * lcm(p,4) = {shown} integers; the limit is "
                           f"{max_entries}: use the float64 verifier instead")
    return int(entries)


def estimate_exact_check(p: int | ModularAddition, k: int | None = None,
                         max_entries: int = MAX_ENTRIES) -> Estimate:
    """Memory and time of :func:`verify_construction_exact` (after :func:`check_exact_size`) for the problem ``p``
    (or ``ModularAddition(p, k)``)."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    entries = check_exact_size(p, k, max_entries)
    neurons = theory.construction_width_of(p, k)
    return Estimate(f"the exact check of the construction for p = {p}, k = {k}", EXACT_BYTES_PER_ENTRY * entries,
                    EXACT_SECONDS_PER_NEURON_INPUT * neurons * p**k)


def exact_construction_logits(p: int | ModularAddition, k: int | None = None,
                              max_entries: int = MAX_ENTRIES) -> ExactLogits:
    """All ``p^k x p`` logits of the unnormalized construction of the problem ``p`` (or ``ModularAddition(p, k)``),
    exactly (module docstring)."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    n = field_order(p)
    check_exact_size(p, k, max_entries)
    start = time.perf_counter()
    specs = construction_neuron_specs(problem)
    scale = _coefficient_scale(specs)
    grid = input_grid(p, k)
    labels = grid.sum(axis=1) % p
    tables = _factor_tables(p, sorted({s.frequency for s in specs}))
    groups: dict[tuple[int, int], np.ndarray] = {}
    objectives: list[sp.Rational | None] = []
    for done, spec in enumerate(specs, 1):
        progress.report(f"exact logits of {len(specs)} neurons", done, len(specs))
        z, b = spec.frequency, spec.term
        u = sum(sgn * tables[(z, b[j], 1)][grid[:, j]] for j, sgn in enumerate(spec.signs))
        uk = cyclic_pow(np.asarray(u, dtype=np.int64), k)
        by_label = np.zeros((p, n), dtype=np.int64)
        np.add.at(by_label, labels, uk)
        w_table = tables[(z, b[k], -1)]
        obj = _neuron_objective(by_label, w_table, p, k)
        objectives.append(None if obj is None else sp.Rational(spec.coefficient) * obj)
        key = (z, b[k])
        groups[key] = groups.get(key, 0) + int(sp.Rational(spec.coefficient) * scale) * uk
    full = np.zeros((p**k, p, n), dtype=np.int64)
    for (z, kind), acc in groups.items():
        full += cyclic_mul(acc[:, None, :], tables[(z, kind, -1)][None, :, :])
    consts, ok = rational_parts(full)
    return ExactLogits(p, k, consts, 2 ** (k + 1) * scale, ok, objectives, time.perf_counter() - start)


# ---------------------------------------------------------------- norms and the verdict

def factor_squared_norm(p: int, zeta: int, is_sine: int) -> sp.Rational:
    """``sum_x phi(2 pi zeta x / p)^2`` exactly (``p/2`` for ``2 zeta != 0 mod p``)."""
    table = np.stack([twice_trig(is_sine, zeta * x, p) for x in range(p)])
    return rational_value(cyclic_mul(table, table).sum(axis=0)) / 4


def neuron_norm_powers(specs: list[NeuronSpec], p: int, k: int) -> list[sp.Expr]:
    """``||theta_i||_2^(k+1) = |c_i| Q_i^((k+1)/2)`` with balanced amplitudes (``build_construction``'s split)."""
    cache: dict[tuple[int, int], sp.Rational] = {}

    def sq(z: int, kind: int) -> sp.Rational:
        if (z, kind) not in cache:
            cache[(z, kind)] = factor_squared_norm(p, z, kind)
        return cache[(z, kind)]

    return [abs(sp.Rational(s.coefficient)) * sum(sq(s.frequency, b) for b in s.term) ** sp.Rational(k + 1, 2)
            for s in specs]


def _exact_margin_stats(ex: ExactLogits) -> dict:
    """Margin, wrong-label extremes and the per-point margins from exact integer numerators."""
    F, D = ex.numerators, ex.denominator
    p, k = ex.p, ex.k
    labels = input_grid(p, k).sum(axis=1) % p
    rows = np.arange(F.shape[0])
    correct = F[rows, labels]
    wrong = F.copy()
    wrong[rows, labels] = np.iinfo(np.int64).min
    wmax = wrong.max(axis=1)
    wrong[rows, labels] = np.iinfo(np.int64).max
    wmin = wrong.min(axis=1)
    g = correct - wmax
    h = int(g.min())
    wrong_sum = F.sum(axis=1) - correct
    cw_total = sp.Rational(int(((p - 1) * correct - wrong_sum).sum()), (p - 1) * D)  # sum_a g'(a), tau uniform
    return {"h": sp.Rational(h, D), "all_on_margin": bool(np.all(g == h)), "wrong_equal": bool(np.all(wmax == wmin)),
            "correct_values": sorted({sp.Rational(int(v), D) for v in correct}),
            "wrong_values": sorted({sp.Rational(int(v), D) for v in np.concatenate([wmax, wmin])}),
            "mean_class_weighted": cw_total / F.shape[0]}


def verify_construction_exact(p: int | ModularAddition, k: int | None = None, *,
                              max_entries: int = MAX_ENTRIES, max_memory: int | None = None,
                              max_seconds: float | None = None) -> VerificationResult:
    """The claims of Theorem C.22 on the Lemma C.18 construction for ``ModularAddition(p, k)`` (or the problem
    ``p``), in exact arithmetic (same shape as the float
    :func:`margintheory.tasks.modular_addition.checks.verify_construction`; every check has
    ``exactness="proved"``).  Sizes
    beyond ``max_entries``, ``max_memory`` bytes or
    ``max_seconds`` are refused before anything is built."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    require(estimate_exact_check(problem, max_entries=max_entries), max_memory, max_seconds)
    start = time.perf_counter()
    specs = construction_neuron_specs(problem)
    ex = exact_construction_logits(problem, max_entries=max_entries)
    applicable = problem.applicable
    gamma = problem.gamma_star_exact
    fields: dict = {"p": p, "k": k, "hypothesis": problem.hypothesis, "gamma_star": problem.gamma_star,
                    "gamma_star_note": problem.gamma_star_note,
                    "gamma_star_exact": str(gamma) if gamma is not None else None,
                    "theorem_width": problem.theorem_width, "width": len(specs), "exactness": "proved"}
    result = VerificationResult(f"construction of Lemma C.18 (p={p}, k={k}), exact arithmetic", fields=fields)
    result.task = problem.task
    result.parameters = {**problem.parameters(), "exact": True}
    result.applicable = applicable
    result.add(bool_check("hypothesis: odd prime", problem.hypothesis == "odd-prime",
                          exactness="proved", detail=f"p = {p} is {problem.hypothesis.replace('-', ' ')}",
                          informational=True, statement="hypothesis: p is an odd prime (as the papers assume)"))
    if applicable:
        width = problem.theorem_width
        result.add(Check(name="width (C.18)", expected=width, measured=len(specs), tolerance=None,
                         passed=width == len(specs), exactness="proved",
                         statement="width = 2^(2k-1)(p-1)/2 (Lemma C.18)"))
    result.add(bool_check("logits rational", ex.all_rational,
                          exactness="proved",
                          detail=f"{ex.numerators.size} logits reduced modulo Phi_{field_order(p)}",
                          statement="every logit is a rational number (exact, in Q(omega_N))"))
    norms = neuron_norm_powers(specs, p, k)
    if ex.all_rational:
        stats = _exact_margin_stats(ex)
        _add_function_checks(result, ex, stats)
        _add_margin_checks(result, ex, stats, norms, gamma)
        _add_multidim_dft_check(result, ex)
    else:
        stats = None
        result.notes.append("some logits are irrational: margin checks skipped (the network is not the construction)")
    _add_neuron_checks(result, specs, ex, norms, gamma, stats)
    fields["engine_seconds"] = time.perf_counter() - start
    result.notes.append("exact: logits computed as integer polynomials in omega_N, reduced modulo the cyclotomic "
                        "polynomial Phi_N; norms with the "
                        "balanced split of build_construction; no floating point in any check.")
    if not applicable:
        result.notes.append(f"p = {p} is even: gamma* is not applicable; the exact margin is reported.")
    return result


#: how an exact margin was computed (the lower end ``L`` of the certificate, docs/theory.md#certificate)
EXACT_HOW = "normalized margin of the network, computed exactly in the cyclotomic field"


def exact_measurement(nm: sp.Expr, how: str = EXACT_HOW) -> MarginMeasurement:
    """The typed margin of a network whose every logit was computed exactly: ``proved``, with the exact value;
    ``value`` is its float64 rounding (error at most two units in the last place)."""
    value = float(nm)
    return MarginMeasurement(value=value, error_bound=2 * math.ulp(value), exactness="proved", method="exhaustive",
                             how=how, exact=str(nm))


def _add_function_checks(result: VerificationResult, ex: ExactLogits, stats: dict) -> None:
    """The stated network function ``sum_zeta cos_zeta(a_1+...+a_k-c)`` and the paper's value 0 for wrong labels."""
    p, k = ex.p, ex.k
    S = [_cosine_sum_exact(p, x) for x in range(p)]
    labels = input_grid(p, k).sum(axis=1) % p
    diff = (labels[:, None] - np.arange(p)[None, :]) % p
    expected_num = np.array([int(S[x] * 2) for x in range(p)], dtype=np.int64)[diff]  # 2 S(x) is an integer
    matches = bool(np.array_equal(2 * ex.numerators, expected_num * ex.denominator))
    result.add(bool_check("network function (C.18)", matches,
                          exactness="proved", detail=f"all {ex.numerators.size} logits compared as rationals",
                          statement="network function = sum_zeta cos_zeta(a_1+...+a_k-c) (Lemma C.18)"))
    correct, wrong = stats["correct_values"], stats["wrong_values"]
    n_freq = sp.Integer(len(theory.frequencies(p)))
    result.add(Check(name="correct logit = (p-1)/2", expected=str(n_freq), measured=_fmt(correct),
                     tolerance=None, passed=correct == [n_freq], exactness="proved",
                     detail="exact; expected: the number of frequencies",
                     statement="correct-label logit (unnormalized) = (p-1)/2 (the number of frequencies, sum_zeta "
                               "cos 0; floor((p-1)/2) for even p)"))
    is_wrong = np.arange(p)[None, :] != labels[:, None]
    mean_wrong = sp.Rational(int(ex.numerators[is_wrong].sum()), ex.denominator * int(is_wrong.sum()))
    result.add(Check(name="mean wrong logit", expected=str(-n_freq / (p - 1)), measured=str(mean_wrong),
                     tolerance=None, passed=mean_wrong == -n_freq / (p - 1), exactness="proved",
                     detail=f"exact, over all {int(is_wrong.sum())} wrong-label logits; distinct values: "
                            f"{_fmt(wrong)}; expected -(number of frequencies)/(p-1), from sum_x cos(2 pi zeta x/p) "
                            "= 0",
                     statement="mean wrong-label logit (unnormalized) = mean_{x != 0} sum_zeta cos(2 pi zeta x/p)"))
    result.add(Check(name="paper: wrong logit = 0", expected="0", measured=_fmt(wrong), tolerance=None,
                     passed=wrong == [0], exactness="proved",
                     detail="the paper's claim; the computed value differs" if wrong != [0] else "",
                     informational=True, statement="paper's stated wrong-label value 0 (Lemma C.17/C.18 proofs)"))
    result.fields.update(construction_correct_logit=float(correct[0]) if len(correct) == 1 else None,
                         construction_wrong_logit=float(wrong[0]) if len(wrong) == 1 else None,
                         construction_correct_logit_exact=_fmt(correct), construction_wrong_logit_exact=_fmt(wrong))


def _add_margin_checks(result: VerificationResult, ex: ExactLogits, stats: dict, norms: list[sp.Expr],
                       gamma: sp.Expr | None) -> None:
    """Margin = gamma*, every point on the margin, condition C.1."""
    p, k = ex.p, ex.k
    total_norm = sp.nsimplify(sum(norms))
    h = stats["h"]
    nm = sp.nsimplify(h / total_norm)
    fields = result.fields
    result.set_margin(exact_measurement(nm))
    fields.update(margin_exact=str(h), norm_power_exact=str(total_norm), all_on_margin=stats["all_on_margin"],
                  fraction_on_margin=1.0 if stats["all_on_margin"] else None,
                  wrong_logits_equal=stats["wrong_equal"], max_wrong_spread=0.0 if stats["wrong_equal"] else None,
                  normalized_correct_logit=float(stats["correct_values"][0] / total_norm),
                  normalized_wrong_logit=float(stats["wrong_values"][0] / total_norm))
    if gamma is not None:
        equal = equal_positive(nm, gamma)
        rel = sp.simplify((nm - gamma) / gamma)
        fields["relative_error"] = float(rel)
        fields["relative_error_exact"] = str(rel)
        fields["ratio_to_gamma_star"] = float(rel + 1)
        result.add(Check(name="margin = gamma* (C.22)", expected=str(gamma), measured=str(nm), tolerance=0.0,
                         passed=equal, exactness="proved",
                         detail=f"both positive with equal rational squares; (margin - gamma*)/gamma* = {rel}",
                         statement="normalized margin = gamma* (Theorem C.22)"))
    result.add(bool_check("all on margin (C.6)", stats["all_on_margin"],
                          exactness="proved", detail=f"all {p ** k} margins equal h = {h}",
                          statement="every point on the margin (spt q* = D_p, Lemma C.6)"))
    result.add(bool_check("wrong logits equal (C.1)", stats["wrong_equal"], exactness="proved",
    statement="all wrong-label logits equal (condition C.1)"))


def multidim_dft_diagonal(ex: ExactLogits) -> list[sp.Rational | None]:
    """``f^(j, ..., j, -j) = sum_{a, c} f(a, c) omega_p^(-j (a_1 + ... + a_k - c))`` for ``j = 1..p-1``, exactly
    (Lemma C.20); ``None`` where the value is not rational.  Unnormalized logits."""
    return rational_logits_dft_diagonal(ex.p, ex.k, ex.numerators, ex.denominator)


def rational_logits_dft_diagonal(p: int, k: int, numerators: np.ndarray, denominator: int
                                 ) -> list[sp.Rational | None]:
    """:func:`multidim_dft_diagonal` of the rational logits ``numerators / denominator`` (shape ``(p^k, p)``, rows
    in :func:`input_grid` order)."""
    n = field_order(p)
    e = n // p
    labels = input_grid(p, k).sum(axis=1) % p
    x = (labels[:, None] - np.arange(p)[None, :]) % p
    by_x = np.zeros(p, dtype=np.int64)
    np.add.at(by_x, x.ravel(), numerators.ravel())
    out = []
    for j in range(1, p):
        vec = np.zeros(n, dtype=np.int64)
        np.add.at(vec, (-e * j * np.arange(p)) % n, by_x)
        const, ok = rational_parts(vec)
        out.append(sp.Rational(int(const), denominator) if ok else None)
    return out


def _add_multidim_dft_check(result: VerificationResult, ex: ExactLogits) -> None:
    values = multidim_dft_diagonal(ex)
    ok = all(v is not None and v > 0 for v in values)
    distinct = sorted({v for v in values if v is not None})
    result.add(Check(name="f^(j..,-j) > 0 (C.20)", expected="> 0", measured=_fmt(distinct), tolerance=None, passed=ok,
                     exactness="proved",
                     detail="multidimensional DFT of the unnormalized logits, computed in Q(omega_N) for j = 1..p-1",
                     statement="f^(j,...,j,-j) > 0 for all j != 0 (Lemma C.20)"))
    result.fields["multidim_dft_exact"] = [str(v) for v in values]


def _add_neuron_checks(result: VerificationResult, specs: list[NeuronSpec], ex: ExactLogits, norms: list[sp.Expr],
                       gamma: sp.Expr | None, stats: dict | None) -> None:
    """Equal amplitudes, Lemma C.15 optimality of every neuron, Lemma C.5 consistency, Lemma C.20 coverage."""
    p = ex.p
    sq_norms = {factor_squared_norm(p, z, kind) for z in {s.frequency for s in specs} for kind in (0, 1)}
    result.add(Check(name="equal amplitudes", expected=str(sp.Rational(p, 2)), measured=_fmt(sorted(sq_norms)),
                     tolerance=None, passed=sq_norms == {sp.Rational(p, 2)}, exactness="proved",
                     statement="every cos/sin factor has squared norm p/2 (equal amplitudes)"))
    objectives = ex.neuron_objectives
    if gamma is not None:
        optimal = [obj is not None and equal_positive(obj, gamma * nrm) for obj, nrm in zip(objectives, norms,
                                                                                             strict=True)]
        result.add(Check(name="optimal neurons (C.15)", expected=len(specs), measured=sum(optimal), tolerance=None,
                         passed=all(optimal), exactness="proved",
                         detail="objective eta(0) - E_{delta != 0} eta(delta) = gamma* "
                         "||theta_i||^(k+1), computed from Definition C.12-C.13",
                         statement="every neuron in the optimal single-neuron set (Lemma C.15)"))
        result.fields["neurons_in_optimal_set"] = all(optimal)
        result.fields["fraction_in_optimal_set"] = sum(optimal) / len(specs)
    known = [obj for obj in objectives if obj is not None]
    if stats is not None and len(known) == len(objectives):
        total = sum(known)
        result.add(Check(name="neuron objectives (C.5)", expected=str(stats["mean_class_weighted"]),
                         measured=str(total), tolerance=None, passed=total == stats["mean_class_weighted"],
                         exactness="proved",
                         statement="sum of neuron objectives = mean class-weighted margin of the logits (Lemma C.5)"))
    covered = sorted({s.frequency for s in specs})
    wanted = theory.frequencies(p)
    result.fields["frequencies_covered"] = covered
    result.add(Check(name="all frequencies (C.20)", expected=wanted, measured=covered, tolerance=None,
                     passed=covered == wanted, exactness="proved",
                     statement="every frequency 1..(p-1)/2 used (Lemma C.20)"))


def equal_positive(a: sp.Expr, b: sp.Expr) -> bool:
    """Exact ``a == b`` for positive algebraic numbers: compare rational squares, else ``simplify(a - b) == 0``."""
    a, b = sp.nsimplify(a), sp.nsimplify(b)
    if not (a.is_positive and b.is_positive):
        return False
    a2, b2 = sp.expand(a**2), sp.expand(b**2)
    if a2.is_Rational and b2.is_Rational:
        return a2 == b2
    return sp.simplify(a - b) == 0


def _fmt(values: list) -> str:
    return ", ".join(str(v) for v in values)
