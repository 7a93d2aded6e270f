"""The true max margin of modular addition at even ``p``, computed for one ``p``: both ends, from the optimal
translation-invariant dual of a linear program -- the per-``p`` cross-check of the theorem
``gamma_even(p, k) = gamma*(p, k) (p-1) r / (1 + (p-2) r)`` (:mod:`margintheory.symbolic.even_p`), and the writer of
the certificate file of that theorem (:func:`write_even_p_certificate`).

At even ``p`` the closed form ``gamma*`` of Theorem C.22 (Li, Liang, Shi, Song, Zhou, "Fourier Circuits in Neural
Networks and Transformers", arXiv:2402.09469) does not hold: the real frequency block ``j = p/2`` has the larger
constant (``c'/c = 2^((k-1)/2)``, docs/theory.md#frequency-blocks), so the uniform weighting is not an optimal dual
and the uniform chain's ``U`` is not attained.  This module computes the max margin of one ``p`` without the theorem
(docs/theory.md#even-p-max-margin):

* **Why an invariant dual suffices.**  ``Z_p^k`` acts on neurons (``u_i -> u_i(. - t_i)``,
  ``w -> w(. - t_1 - ... - t_k)``) and on the pairs ``(a, c)``; the pairs with the same ``d = c - y(a)`` form one
  orbit.  ``lam -> max_{|theta| = 1} E_lam[phi_theta]`` is convex and invariant, so averaging an optimal dual over
  the group gives one of the form ``lam(a, c) = t(c - y(a)) / p^k`` with the same value, and by the minimax theorem
  (the network max-margin problem is a linear program over measures on the unit sphere, Lemma C.5 = Lemma 7.5)
  the best such ``t`` gives exactly the max margin.  For such a dual the single-neuron maximum is the closed form
  of docs/theory.md#class-weighted-bracket: ``U(t) = ((p-1)/(p T)) max_b c_b |kappa_t(b)| max g_k`` with
  ``kappa_t(j) = sum_d t(d) (1 - omega^(j d))``, ``T = sum_d t(d)``.
* **The two finite problems.**  With ``C_j = c_j max g_k (p-1)/p`` the aligned single-frequency neurons have
  orbit margin profiles ``C_j (1 - cos(2 pi j d / p))`` (``d = 1..p-1``); the linear program
  ``max gamma s.t. sum_j s_j C_j (1 - cos(2 pi j d/p)) >= gamma, s >= 0, sum s = 1`` over the ``p/2`` frequencies
  (:func:`optimal_frequency_weights`, HiGHS) gives the weights ``s`` of a network and, as its dual, a profile
  ``t``; symmetrised (``t(d) = t(p - d)``, so that ``kappa_t`` is real and the restriction to aligned phases loses
  nothing) ``t`` is the optimal invariant dual.
* ``U`` (``proved``): for the float64 profile ``t`` taken as exact rationals, the uniform chain's Lemma C.14 and SOS
  certificate ``max g_k <= B``, an exact identity proving ``r >= |kappa_t(j)|^2`` for every ``j``
  (:func:`margintheory.solvers.class_weighted.kappa_bound`), ``kappa_t(p/2)`` exact, and
  ``U^2 >= ((p-1)/(p T))^2 c_b^2 K_b B^2`` compared in exact rationals
  (:func:`margintheory.solvers.class_weighted.blocks_upper_bound`).  Nothing rests on the LP's optimality: ``U``
  is valid for whatever ``t`` it returned.
* ``L``: the network ``sum_j s_j N_j^-1 f_j`` where ``f_j`` is Lemma C.18's sub-network of frequency ``j < p/2``
  (network function ``cos_j(a_1 + ... + a_k - c)``) or, for ``j = p/2``, the ``2^(k-1)`` neurons of Lemma C.16's
  sum-to-product identity with ``x_i = (-1)^(a_i)`` (network function ``(-1)^(a_1 + ... + a_k - c)``), and ``N_j``
  the sub-network's ``||theta||_(2,k+1)^(k+1)``.  Its margin is recomputed over every pair: exactly (a rational
  witness on the grid ``2^-50``, ``proved``) when that is cheap, else by the exhaustive engine minus its a-priori
  float64 error bound.

Where the closed form does not hold the verdict stays ``not-applicable``; the rows say so, and the gap row decides
the exit code (``(U - L)/L <= 1e-6``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from margintheory.core.checks import Check, VerificationResult
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition
from margintheory.errors import InputError
from margintheory.runtime.budget import Estimate

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.certificate.maxmin import LowerBound
    from margintheory.certificate.upper_bound import ProofStep, ProvedUpperBound
    from margintheory.solvers.class_weighted import KappaBound

#: the gap the even-p leg must reach for its row to pass
EVEN_P_GAP_TOL = 1e-6
#: the exact margin of the witness network is computed when p^k m (k + p) is at most this (about a second)
EXACT_WITNESS_WORK = 400_000


def frequency_constants(p: int, k: int) -> np.ndarray:
    """``C_j`` for ``j = 1..p/2``: the uniform single-neuron optimum of block ``j`` times ``(p-1)/p`` --
    ``C_j = 2 k! p^-(k+1) (p/(2k+2))^((k+1)/2)`` for ``j < p/2`` (:func:`fourier_pricing.pricing_constant`) and
    ``2^((k-1)/2)`` times that for the real block ``j = p/2``."""
    from margintheory.solvers.fourier_pricing import pricing_constant

    c = np.full(p // 2, pricing_constant(p, k))
    c[-1] *= 2 ** ((k - 1) / 2)
    return c


def frequency_profiles(p: int, k: int) -> np.ndarray:
    """``A[d-1, j-1] = C_j (1 - cos(2 pi j d / p))``: the orbit margin profile of the aligned unit-cost network of
    frequency ``j`` at the wrong label ``y + d`` (``d = 1..p-1``, ``j = 1..p/2``)."""
    d = np.arange(1, p)[:, None]
    j = np.arange(1, p // 2 + 1)[None, :]
    return frequency_constants(p, k)[None, :] * (1.0 - np.cos(2.0 * np.pi * ((j * d) % p) / p))


def optimal_frequency_weights(p: int, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``(s, profile, value)``: the LP of the module docstring solved by HiGHS -- the frequency weights ``s``
    (``j = 1..p/2``), the symmetrised dual ``t`` as a float64 profile over ``d = 0..p-1`` (``t(0) = 0``,
    ``t(d) = t(p-d)`` exactly) and the LP value."""
    from margintheory.solvers.column_generation import max_min_lp

    A = frequency_profiles(p, k)
    s, dual, _, _ = max_min_lp(A)
    sym = np.zeros(p)
    for d in range(1, p):
        sym[d] = 0.5 * (dual[d - 1] + dual[p - d - 1])  # the same float for d and p - d
    return s, sym, float((A @ s).min())


def invariant_dual_upper(ub: ProvedUpperBound, profile: np.ndarray) -> tuple[Fraction, list[ProofStep], KappaBound]:
    """``U`` for the invariant dual ``lam(a, c) = t(c - y(a)) / (p^k T)`` and the proof steps that replace the
    uniform chain's weak-duality and last steps (module docstring)."""
    from margintheory.certificate.upper_bound import ProofStep
    from margintheory.solvers.class_weighted import blocks_upper_bound

    p = ub.p
    t = [Fraction(float(x)) for x in profile]
    total = sum(t, Fraction(0))
    if total <= 0 or t[0] != 0 or any(x < 0 for x in t):
        raise InputError("an invariant dual profile is t(d) >= 0 over d = 0..p-1 with t(0) = 0 and a positive sum")
    U, need, kb = blocks_upper_bound(ub, profile, Fraction(p - 1, p) / total)
    steps = [
        ProofStep("weak duality with the invariant dual lam(a, c) = t(c - y(a)) / (p^k T)", "argued", True,
                  "Lemma C.6 of Li et al. (arXiv:2402.09469) / Lemma 7.6 of Morwani et al. (arXiv:2311.07568) for "
                  "any distribution over (input, wrong label) pairs; this one has q = p^-k and tau(a, y + d) = t(d)/T, "
                  "so F_(q,tau)(u, w) = ((p-1)/p) F_uniform(u, K w), K = I - C(t)/T "
                  f"(docs/theory.md#class-weighted-bracket); T = {float(total):.17g}"),
        ProofStep("|kappa_t(j)|^2 <= r for every frequency j", "proved", kb.holds,
                  f"r = {float(kb.r):.17g}; exact identity r I - K_t^T K_t = H^T H + C(e), C(e) diagonally dominant: "
                  f"e_0 = {float(kb.diagonal):.3e} >= sum |e_m| = {float(kb.off_diagonal):.3e}"),
        ProofStep("U >= (p-1)/(p T) c_b |kappa_t(b)| B for every frequency block (exact rationals, squares compared)",
                  "proved", all(U * U >= v for v in need), f"U = {U}"),
    ]
    return U, steps, kb


def real_block_network(p: int, k: int) -> PolyNetwork:
    """The ``2^(k-1)`` neurons of Lemma C.16 with ``x_i = (-1)^(a_i)``: network function
    ``(-1)^(a_1 + ... + a_k - c)`` (``p`` even; unnormalized, the coefficient split evenly over the vectors)."""
    from margintheory.core.expansions import half_sum_to_product_terms

    alt = (-1.0) ** np.arange(p)
    base = 2.0 / (2**k * math.factorial(k))
    terms = list(half_sum_to_product_terms(k))
    U = np.empty((len(terms), k, p))
    W = np.empty((len(terms), p))
    for i, (signs, sign) in enumerate(terms):
        amp = base ** (1.0 / (k + 1))
        U[i] = amp * np.array(signs, dtype=float)[:, None] * alt[None, :]
        W[i] = math.copysign(amp, sign) * alt
    return PolyNetwork(U, W, {"frequency": np.full(len(terms), p // 2, dtype=np.int64)})


def frequency_weighted_network(problem: ModularAddition, s: np.ndarray) -> PolyNetwork:
    """``sum_j s_j N_j^-1 f_j`` (module docstring): Lemma C.18's sub-networks for ``j < p/2`` and
    :func:`real_block_network` for ``j = p/2``, each scaled to carry norm ``s_j``; ``||theta||^(k+1) = sum s``."""
    from margintheory.core.construction import build_construction

    p, k = problem.p, problem.k
    full = build_construction(problem, normalize=False)
    parts = [(full.U[full.metadata["frequency"] == j], full.W[full.metadata["frequency"] == j])
             for j in range(1, p // 2)]
    real = real_block_network(p, k)
    parts.append((real.U, real.W))
    Us, Ws, freq = [], [], []
    for j, ((Uj, Wj), sj) in enumerate(zip(parts, s, strict=True), start=1):
        if sj <= 0:
            continue
        cost = float(np.sum((np.sum(Uj**2, axis=(1, 2)) + np.sum(Wj**2, axis=1)) ** ((k + 1) / 2)))
        alpha = (float(sj) / cost) ** (1.0 / (k + 1))
        Us.append(alpha * Uj)
        Ws.append(alpha * Wj)
        freq.append(np.full(len(Uj), j, dtype=np.int64))
    return PolyNetwork(np.concatenate(Us), np.concatenate(Ws), {"frequency": np.concatenate(freq)})


def width_of(p: int, k: int) -> int:
    """Neurons of :func:`frequency_weighted_network` when every frequency carries weight."""
    return 2 ** (2 * k - 1) * (p // 2 - 1) + 2 ** (k - 1)


def witness_work(p: int, k: int) -> int:
    """The exact margin's work ``p^k m (k + p)`` for the network of width :func:`width_of`."""
    return p**k * width_of(p, k) * (k + p)


def estimate_even_p(problem: ModularAddition, max_memory: int) -> Estimate:
    """Memory and time of :func:`even_p_max_margin` before anything is allocated: the network (weights and the
    construction it is cut from), the exhaustive margin pass (:func:`margintheory.engines.margins.estimate_cost`)
    or the exact witness (a few hundred bytes per rational and ``1.2e-5 s`` per unit of :func:`witness_work`,
    measured), and the LP (``(p-1) x p/2``, negligible).  The uniform chain's SOS solve is sized by its own
    estimate (:func:`margintheory.certificate.block_sos.require_memory`)."""
    from margintheory.engines.margins import estimate_cost

    p, k = problem.p, problem.k
    m = width_of(p, k)
    weights = 3 * 8.0 * (m + 2 ** (2 * k - 1) * p) * (k + 1) * p
    if witness_work(p, k) <= EXACT_WITNESS_WORK:
        bytes_, seconds = weights + 400.0 * (m * (k + 1) * p + p**k * (p + m)), 1.2e-5 * witness_work(p, k)
    else:
        cost = estimate_cost(p, k, m, max_memory)
        bytes_, seconds = weights + float(cost.total_bytes), cost.seconds
    return Estimate(f"the true max margin at even p = {p}, k = {k} (network of {m} neurons)", bytes_, seconds + 1.0)


@dataclass
class EvenPMaxMargin:
    """Both ends of the true max margin at even ``p`` (module docstring)."""

    problem: ModularAddition
    lower: LowerBound
    upper: Fraction
    steps: list[ProofStep]
    kappa: KappaBound
    frequency_weights: np.ndarray  # s_j, j = 1..p/2
    profile: np.ndarray  # t(d), d = 0..p-1
    lp_value: float
    network: PolyNetwork
    ub: ProvedUpperBound
    seconds: float
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def upper_float(self) -> float:
        from margintheory.certificate.upper_bound import ceil_float

        return ceil_float(self.upper)

    @property
    def proved(self) -> bool:
        return all(s.passed for s in self.steps)

    def gap(self) -> tuple[float, bool, bool]:
        """``((U - L)/L, gap <= EVEN_P_GAP_TOL, decided exactly)`` (:func:`maxmin.relative_gap`)."""
        from margintheory.certificate.maxmin import relative_gap

        return relative_gap(self.upper, self.lower, Fraction(EVEN_P_GAP_TOL))


def network_lower_bound(net: PolyNetwork, max_memory: int) -> LowerBound:
    """``L`` of ``net``: the exact normalized margin of its float64 weights (:func:`maxmin.rational_witness`,
    ``proved``) when :func:`witness_work` is small, else the exhaustive engine's margin minus its a-priori float64
    error bound (``float``)."""
    from margintheory.certificate.maxmin import LowerBound, rational_witness
    from margintheory.engines.margins import exhaustive_margin

    if net.p**net.k * net.m * (net.k + net.p) <= EXACT_WITNESS_WORK:
        witness = rational_witness(net)
        if witness is not None:
            return witness[1]
    mr = exhaustive_margin(net, max_memory)
    tol = float(mr.normalized_tolerance)
    return LowerBound(math.nextafter(float(mr.normalized_margin) - tol, -math.inf), None, "float",
                      f"normalized margin of the frequency-weighted network over all {net.p**net.k} inputs in float64 "
                      f"minus its a-priori error bound {tol:.2e}", tol, method="exhaustive")


def even_p_max_margin(problem: ModularAddition, *, max_memory: int) -> EvenPMaxMargin:
    """Both ends of the max margin at even ``p`` (module docstring); refused up front beyond ``max_memory``."""
    from margintheory.certificate.upper_bound import prove_upper_bound
    from margintheory.runtime.budget import require

    p, k = problem.p, problem.k
    if p % 2:
        raise InputError(f"the invariant-dual leg is for even p; p = {p} is odd (the closed form applies there)")
    require(estimate_even_p(problem, max_memory), max_memory, None)
    t0 = time.perf_counter()
    s, profile, value = optimal_frequency_weights(p, k)
    ub = prove_upper_bound(problem, max_memory=max_memory)
    U, steps, kb = invariant_dual_upper(ub, profile)
    net = frequency_weighted_network(problem, s)
    L = network_lower_bound(net, max_memory)
    chain = [st for st in ub.steps if not st.name.startswith(("U >= c_b B", "weak duality"))]
    return EvenPMaxMargin(problem, L, U, steps[:1] + chain + steps[1:], kb, s, profile, value, net, ub,
                          time.perf_counter() - t0)


def closed_form_max_margin(p: int, k: int) -> Any:
    """The max margin at even ``p``, a theorem (docs/theory.md#even-p-max-margin, proved for every even ``p`` by
    :mod:`margintheory.symbolic.even_p`), as an exact sympy number:
    ``2 k! r / ((2k+2)^((k+1)/2) p^((k-1)/2) (1 + (p-2) r))``, ``r = 2^((k-1)/2)`` -- ``gamma*(p, k)`` times
    ``(p-1) r / (1 + (p-2) r)``; ``3 / (8 p (2p - 3))`` for ``k = 3`` and
    ``2 / (3 sqrt(3p) (1 + (p-2) sqrt 2))`` for ``k = 2``."""
    from margintheory.symbolic.even_p import gamma_even

    return gamma_even(p, k)


def _within(L: LowerBound, U: Fraction, value: Any) -> bool:
    """``L <= value <= U`` decided by sympy's exact comparison of the algebraic number with the rationals."""
    import sympy as sp

    low = sp.Rational(L.text()) if L.exact is None else L.exact
    return bool(sp.simplify(value - low) >= 0) and bool(sp.simplify(sp.Rational(U.numerator, U.denominator) - value)
                                                         >= 0)


def even_p_checks(res: EvenPMaxMargin, checked: LowerBound | None) -> list[Check]:
    """The rows of the even-``p`` leg: both ends, the gap (deciding), the checked network against ``U``, the closed
    form of Theorem C.22 (which does not hold), and the closed form ``gamma_even`` (a theorem) as a cross-check."""
    from margintheory.core.theory import gamma_star_of

    p, k = res.problem.p, res.problem.k
    L, U = res.lower, res.upper
    gap, within, exact = res.gap()
    odd_formula = gamma_star_of(p, k)
    conj = closed_form_max_margin(p, k)
    rows = [
        Check(name="max margin >= L (network)", expected=None, measured=L.value, tolerance=None, passed=True,
              exactness=L.exactness, informational=True,
              detail=f"L = {L.text()}; the frequency-weighted network ({res.network.m} neurons, weights s_j = "
              f"{np.round(res.frequency_weights, 9).tolist()} on j = 1..{p // 2}); {L.how}",
              statement="max margin >= L: normalized margin of the network of the optimal frequency weights"),
        Check(name="max margin <= U (invariant)", expected="holds", measured=res.upper_float, tolerance=None,
              passed=res.proved, exactness="proved",
              detail=f"U = {U}; t(d) = {np.round(res.profile[1:], 12).tolist()} (d = 1..{p - 1}); LP value "
              f"{res.lp_value:.15g}", statement="max margin <= U: weak duality with the optimal translation-"
              "invariant dual t(c - y), its single-neuron maximum proved per frequency block"),
        Check(name="true max margin: gap", expected=EVEN_P_GAP_TOL, measured=gap, tolerance=EVEN_P_GAP_TOL,
              passed=bool(within), exactness="proved" if exact and L.exactness == "proved" else
              "certified" if L.exactness in ("proved", "certified") else "float",
              detail=f"(U - L)/L = {gap:.3e} <= {EVEN_P_GAP_TOL:g}, decided in exact rationals on L's "
              f"{'exact value' if exact else 'float lower bound'}",
              statement=f"the true max margin is known to (U - L)/L <= {EVEN_P_GAP_TOL:g}"),
    ]
    if checked is not None:
        rows.append(Check(name="checked network <= U", expected=res.upper_float, measured=checked.value,
                          tolerance=0.0, passed=Fraction(checked.value) <= U, exactness="proved",
                          detail=f"the checked network's margin {checked.value:.15g} is at most U (exact "
                          f"comparison); {checked.value / float(U):.6f} of the max margin",
                          statement="the checked network's margin does not exceed the proved U"))
    rows += [
        Check(name="gamma* formula (even p)", expected=odd_formula, measured=float(U), tolerance=None,
              passed=True, exactness="float", informational=True,
              detail=f"Theorem C.22's formula at p = {p} gives {odd_formula:.15g}; the max margin is in "
              f"[{L.value:.15g}, {res.upper_float:.15g}], {L.value / odd_formula - 1:.4%} above it",
              statement="Theorem C.22 assumes odd p: at even p its formula is not the max margin"),
        Check(name="closed form in [L, U]", expected=float(conj), measured=L.value, tolerance=None,
              passed=_within(L, U, conj), exactness="proved",
              detail=f"gamma_even = gamma*(p, k) (p-1) r / (1 + (p-2) r), r = 2^((k-1)/2): {conj} = "
              f"{float(conj):.15g}; L <= it <= U checked exactly (docs/theory.md#even-p-max-margin)",
              statement="the theorem's closed form lies in this p's linear-program bracket [L, U] (a cross-check of "
                        "two independent computations)"),
    ]
    return rows


def even_p_certificate(res: EvenPMaxMargin) -> dict[str, Any]:
    """The ``certificate`` object of the JSON result (the schema's two-sided bound) for the true max margin."""
    gap, _, _ = res.gap()
    L = res.lower
    conj = closed_form_max_margin(res.problem.p, res.problem.k)
    return {
        "lower": L.value, "upper": res.upper_float, "relative_gap": gap,
        "lower_exactness": L.exactness, "upper_exactness": "proved" if res.proved else "float",
        "lower_exact": L.rational(), "upper_exact": str(res.upper),
        "lower_algebraic": L.text() if L.exact is not None else None,
        "lower_how": L.how, "lower_method": L.method,
        "upper_how": "weak duality with the optimal translation-invariant dual lam(a, c) = t(c - y(a)) / (p^k T) + "
                     "Lemma C.14 frequency blocks scaled by |kappa_t(j)| (exact identity) + SOS certificate of the "
                     "block form checked in exact rational arithmetic",
        "of": "the true max margin (even p: the closed form of Theorem C.22 does not hold)",
        "dual_profile": [str(Fraction(float(x))) for x in res.profile],
        "frequency_weights": [float(x) for x in res.frequency_weights],
        "lp_value": res.lp_value, "kappa_bound": str(res.kappa.r), "block_bound": str(res.ub.block_bound),
        "closed_form": {"formula": "gamma*(p, k) (p-1) r / (1 + (p-2) r), r = 2^((k-1)/2)", "value": str(conj),
                        "float": float(conj)},
        "steps": [s.to_dict() for s in res.steps],
        "seconds": res.seconds,
    }


def attach_even_p(result: VerificationResult, problem: ModularAddition, *, max_memory: int) -> EvenPMaxMargin:
    """Compute both ends of the true max margin at even ``p`` and add the rows and the ``certificate`` object to
    ``result`` (the checked network's own margin, if any, is compared with ``U``)."""
    from dataclasses import replace

    from margintheory.certificate.maxmin import lower_bound_from, proof_step_checks, reduction_checks

    res = even_p_max_margin(problem, max_memory=max_memory)
    for row in even_p_checks(res, lower_bound_from(result)):
        result.add(row)
    for row in reduction_checks(res.ub) + proof_step_checks(replace(res.ub, steps=res.steps), only_argued=True):
        result.add(row)
    cert = even_p_certificate(res)
    result.certificate = cert
    result.fields["max_margin_interval"] = (f"[{res.lower.value:.15g}, {res.upper_float:.15g}]  (true max margin; L "
                                            f"{res.lower.exactness}, U proved; gap {cert['relative_gap']:.2e})")
    result.notes.append(f"p = {problem.p} is even: the closed form of Theorem C.22 does not hold, so the verdict is "
                        "not-applicable; the true max margin is bracketed by the best network found (L) and the "
                        "optimal translation-invariant dual (U), the gap row decides the exit code")
    return res


def recheck_even_p_certificate(cert: dict[str, Any], ub: ProvedUpperBound) -> list[str]:
    """Re-check a ``certificate`` object of :func:`even_p_certificate` against the proved uniform chain ``ub`` of its
    ``(p, k)``: the dual profile (exact rationals, ``t(0) = 0``, ``t >= 0``, positive sum) is re-read, the bound on
    ``|kappa_t|^2`` re-proved, ``upper_exact^2 >= need_b`` re-compared for every block and ``lower <= upper``.  Returns
    the reasons for rejection (empty: accepted)."""
    from margintheory.solvers.class_weighted import blocks_upper_bound, kappa_bound

    try:
        t = [Fraction(x) for x in cert["dual_profile"]]
        upper = Fraction(cert["upper_exact"])
        lower = float(cert["lower"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        return [f"unreadable certificate: {exc}"]
    if len(t) != ub.p or t[0] != 0 or any(x < 0 for x in t) or sum(t) <= 0:
        return [f"the dual profile must be p = {ub.p} rationals t(d) >= 0 with t(0) = 0 and a positive sum"]
    profile = np.array([float(x) for x in t])
    if any(Fraction(float(x)) != y for x, y in zip(profile, t, strict=True)):
        return ["the dual profile is not made of float64 values (the exact kappa identity is for those)"]
    reasons = []
    if not kappa_bound(profile).holds:
        reasons.append("the bound r >= |kappa_t(j)|^2 could not be proved")
    _, need, _ = blocks_upper_bound(ub, profile, Fraction(ub.p - 1, ub.p) / sum(t, Fraction(0)))
    if not all(upper * upper >= v for v in need):
        reasons.append(f"upper = {upper} is below the bound the dual profile proves")
    if not Fraction(lower) <= upper:
        reasons.append(f"lower = {lower!r} exceeds upper = {upper}")
    return reasons


def sqrt2_pair(value: Any) -> list[str]:
    """An exact sympy number of ``Q(sqrt 2)`` as the checker's ``["a/b", "c/d"]`` (``a/b + (c/d) sqrt(2)``);
    :class:`ValueError` when it is not in that field."""
    import sympy as sp

    e = sp.expand(sp.radsimp(sp.sympify(value)))
    b = e.coeff(sp.sqrt(2))
    a = sp.expand(e - b * sp.sqrt(2))
    if not (a.is_Rational and b.is_Rational):
        raise ValueError(f"{value} is not in Q(sqrt 2)")
    return [str(Fraction(int(a.p), int(a.q))), str(Fraction(int(b.p), int(b.q)))]


def even_p_file_section(p: int, k: int) -> dict[str, Any]:
    """The ``even_p`` section of the certificate file (:mod:`margintheory.certificate.checker`): the ratio ``r``, the
    two-valued dual, the network's budgets and ``gamma_even^2``, exact in ``Q(sqrt 2)``
    (docs/theory.md#even-p-max-margin)."""
    from margintheory.symbolic.even_p import gamma_even, network_budgets, true_ratio

    r = true_ratio(k)
    s_c, s_r = network_budgets(p, k)
    return {"statement": f"at even p the max margin is gamma_even(p, k) = gamma*(p, k) (p-1) r/(1 + (p-2) r), "
                         f"r = 2^((k-1)/2): the invariant dual t (odd d: dual.odd, even d != 0: dual.even) proves "
                         f"claim.upper with the SOS bound, and the network with budgets network.complex on each "
                         f"frequency 0 < j < {p // 2}, network.real on {p // 2} attains the closed form",
            "ratio": sqrt2_pair(r), "dual": {"odd": ["1", "0"], "even": sqrt2_pair(2 * r - 1)},
            "network": {"complex": sqrt2_pair(s_c), "real": sqrt2_pair(s_r)},
            "max_margin_squared": sqrt2_pair(gamma_even(p, k) ** 2)}


def _upper_rational(section: dict[str, Any], ub: ProvedUpperBound) -> Fraction:
    """A short dyadic ``U`` with ``U^2`` at least every block's bound of the section's dual (checked exactly by the
    checker's own arithmetic, raised until it holds)."""
    from margintheory.certificate import checker

    sec = checker._parse_even_p(section, ub.p)
    assert sec is not None
    n = ub.p // 2
    consts = {x["domain"]: x["constant_squared"] for x in checker.block_constants_squared(ub.p, ub.k)}
    total = checker.q2_add(checker.q2_mul(checker.q2(n), sec["t_odd"]), checker.q2_mul(checker.q2(n - 1),
                                                                                          sec["t_even"]))
    kappa = [checker.q2_add(total, sec["t_even"]),
             checker.q2_sub(checker.q2_add(total, checker.q2_mul(checker.q2(n), sec["t_odd"])),
                            checker.q2_mul(checker.q2(n - 1), sec["t_even"]))]
    assert ub.sos is not None, "the even-p certificate rests on the SOS bound of g_k"
    bound = Fraction(ub.sos.gamma) / Fraction(ub.sos.scale)
    need = [checker.q2_mul(checker.q2(Fraction(ub.p - 1, ub.p) ** 2 * cb2 * bound * bound),
                           checker.q2_div(checker.q2_mul(kp, kp), checker.q2_mul(total, total)))
            for cb2, kp in zip((consts["complex"], consts["real"]), kappa, strict=True)]
    top = max(float(v[0]) + float(v[1]) * math.sqrt(2) for v in need)
    U = checker.ceil_sqrt(Fraction(top) * (1 + Fraction(1, 2**40)))
    while any(checker.q2_sign(checker.q2_sub(checker.q2(U * U), v)) < 0 for v in need):
        U *= 1 + Fraction(1, 2**40)
    return U


def even_p_certificate_document(problem: ModularAddition, *, max_memory: int) -> dict[str, Any]:
    """The certificate file of the true max margin at even ``p``: the uniform chain's SOS certificate and block
    constants, the ``even_p`` section (:func:`even_p_file_section`), ``claim.upper`` the dual's bound and the
    frequency-weighted network with the closed form's budgets as the lower witness (when the checker can re-check
    it; else the closed form rounded down, stated)."""
    from margintheory.certificate.maxmin import LowerBound, gap_upper_rational, rational_witness
    from margintheory.certificate.upper_bound import certificate_document, prove_upper_bound
    from margintheory.symbolic.even_p import gamma_even, network_budgets

    p, k = problem.p, problem.k
    if p % 2:
        raise InputError(f"the even-p certificate is for even p; p = {p} is odd")
    ub = prove_upper_bound(problem, max_memory=max_memory)
    section = even_p_file_section(p, k)
    U = _upper_rational(section, ub)
    s_c, s_r = network_budgets(p, k)
    witness = None
    from margintheory.certificate import checker

    if witness_work(p, k) <= checker.MAX_WITNESS_WORK:  # else the checker would refuse to re-check it
        net = frequency_weighted_network(problem, np.array([float(s_c)] * (p // 2 - 1) + [float(s_r)]))
        witness = rational_witness(net)
    if witness is not None:
        wdoc, L = witness
    else:
        g = float(gamma_even(p, k))
        L = LowerBound(math.nextafter(g * (1 - 1e-12), 0.0), None, "proved", "the closed form gamma_even(p, k) "
                       "rounded down (the network is too large for the checker to re-check)", 0.0)
    doc = certificate_document(replace_upper(ub, U), L.text(), L.exactness, L.how, gap_upper_rational(U, L))
    doc["statement"] = (f"every one-hidden-layer network f(a)[c] = sum_i (u_i1[a_1]+...+u_ik[a_k])^k w_i[c] of any "
                        f"width on modular addition mod {p} with {k} inputs has L_(2,k+1)-normalized margin <= upper "
                        f"(the invariant dual of even_p); lower is the normalized margin of an explicit network; the "
                        f"max margin is the closed form of even_p")
    doc["even_p"] = section
    if witness is not None:
        doc["lower_witness"] = wdoc
    return doc


def replace_upper(ub: ProvedUpperBound, U: Fraction) -> ProvedUpperBound:
    """``ub`` with the claimed upper end ``U`` (the even-p dual's) in place of the uniform chain's."""
    from dataclasses import replace

    return replace(ub, upper=U)


def write_even_p_certificate(result: VerificationResult, path: str, overwrite: bool, *, max_memory: int,
                             problem: ModularAddition) -> str | None:
    """Write :func:`even_p_certificate_document` to ``path`` (``margintheory check`` re-checks it); ``None`` when
    written (as :func:`margintheory.certificate.maxmin.write_certificate_for`)."""
    from margintheory.certificate.maxmin import write_certificate

    write_certificate(path, even_p_certificate_document(problem, max_memory=max_memory), overwrite)
    result.fields["certificate_file"] = path
    return None
