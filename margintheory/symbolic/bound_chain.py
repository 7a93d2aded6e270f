"""The bound chain of Lemma C.15 (docs/theory.md#lemma-c15), ``p`` and ``k`` symbols: the closed form of ``gamma*``.

Steps and how each is established (``Derivation`` labels):

1. Lemma C.14 reduces the objective to ``k!/((p-1)p^k) sum_{j != 0} w^(-j) prod u_i^(j)``: exact, *per instance*
   (:mod:`.fourier_reduction`, ``p in {3, 5}``, ``k in {1, 2, 3}``); the general statement is the lemma.
2. Pairing ``j`` with ``-j`` (real vectors, odd ``p``): ``z + conj(z) = 2|z| cos(arg z)``: exact (sympy); the
   resulting formula is also tested numerically (numpy FFT) on random vectors.
3. Phase alignment ``cos <= 1``: an **inequality, argued**, checked numerically on random inputs.
4. Plancherel ``sum_j |u^(j)|^2 = p ||u||^2``: exact per ``p`` in ``Q(omega_p)`` for odd ``p <= 31``; the budget
   ``sum_{j=1}^{(p-1)/2} z(j) <= p/2`` follows (argued, numerically checked).
5. Quadratic-mean / geometric-mean ``|w| prod |u_i| <= (z/(k+1))^((k+1)/2)``: an **inequality, argued**,
   checked numerically; its equality case is exact (sympy, symbolic ``k``).
6. Concentration ``sum_j z_j^q <= (sum_j z_j)^q`` for ``q = (k+1)/2 >= 1``: an **inequality, argued**, checked
   numerically; the text justifies it by ``||z||_2 <= ||z||_1``, which is the ``k = 3`` case only.
7. Simplification to ``2 k! / ((2k+2)^((k+1)/2) (p-1) p^((k-1)/2))`` and equality with
   :func:`margintheory.core.theory.gamma_star_symbolic`, the ``k = 2`` form (Morwani et al. Thm 7.7) and the ``k =
   3`` form (Lemma C.11): exact (sympy, symbolic ``p, k``).
8. Attainment by ``u_i = beta cos(theta_i + 2 pi zeta a/p)``, ``beta = sqrt(2/((k+1)p))``: exact (symbolic), and,
   for a given ``(p, k)``, the optimal neuron's objective computed exactly from Definition C.12 equals ``gamma*``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from margintheory.core import theory
from margintheory.core.cyclotomic import rational_parts
from margintheory.errors import InputError
from margintheory.symbolic.derivation import Derivation
from margintheory.symbolic.exact import cosine_neuron_objective
from margintheory.symbolic.fourier_reduction import check_fourier_reduction

NUMERIC_SEED = 0
NUMERIC_TRIALS = 200
EQUALITY_RTOL = 1e-10
INEQUALITY_SLACK = 1e-12


def _random_instance(rng: np.random.Generator) -> tuple[int, int, np.ndarray, np.ndarray]:
    """A random odd ``p`` in 3..31, ``k`` in 1..5, real ``u`` (k x p) and ``w`` (p) scaled to total norm 1."""
    p = int(rng.choice(np.arange(3, 32, 2)))
    k = int(rng.integers(1, 6))
    u, w = rng.standard_normal((k, p)), rng.standard_normal(p)
    scale = math.sqrt(float((u**2).sum() + (w**2).sum()))
    return p, k, u / scale, w / scale


def _objective_direct(u: np.ndarray, w: np.ndarray) -> float:
    """``eta(0) - E_{delta != 0} eta(delta)`` from Definition C.12, in float64 (small p, k)."""
    k, p = u.shape
    grid = np.indices((p,) * k).reshape(k, -1)
    act = sum(u[i, grid[i]] for i in range(k)) ** k
    s = grid.sum(axis=0) % p
    eta = np.array([np.mean(act * w[(s - d) % p]) for d in range(p)])
    return float(eta[0] - eta[1:].mean())


def _fourier_terms(u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per frequency ``j = 1..(p-1)/2``: ``|w^(j)|``, ``prod_i |u_i^(j)|``, and the phase ``sum theta_ui - theta_w``."""
    p = w.shape[0]
    U, W = np.fft.fft(u, axis=1), np.fft.fft(w)
    js = np.arange(1, (p - 1) // 2 + 1)
    phase = np.angle(U[:, js]).sum(axis=0) - np.angle(W[js])
    return np.abs(W[js]), np.abs(U[:, js]).prod(axis=0), phase


def pairing_error(trials: int = 60, seed: int = NUMERIC_SEED) -> float:
    """Max relative gap between the objective (Def. C.12) and ``2k!/((p-1)p^k) sum |w||u| cos(phase)``."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(trials):
        p, k, u, w = _random_instance(rng)
        if p ** k > 20_000:
            continue
        aw, au, phase = _fourier_terms(u, w)
        formula = 2 * math.factorial(k) / ((p - 1) * p**k) * float((aw * au * np.cos(phase)).sum())
        direct = _objective_direct(u, w)
        scale = 2 * math.factorial(k) / ((p - 1) * p**k) * float((aw * au).sum()) + 1e-300
        worst = max(worst, abs(formula - direct) / scale)
    return worst


def _max_violation(check, trials: int = NUMERIC_TRIALS, seed: int = NUMERIC_SEED) -> float:
    """Largest relative violation ``max(lhs - rhs, 0) / max(|rhs|, tiny)`` of an inequality over random instances."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(trials):
        lhs, rhs = check(*_random_instance(rng), rng)
        worst = max(worst, max(lhs - rhs, 0.0) / max(abs(rhs), 1e-300))
    return worst


def _phase_alignment(p, k, u, w, rng):
    aw, au, phase = _fourier_terms(u, w)
    return float((aw * au * np.cos(phase)).sum()), float((aw * au).sum())


def _budget(p, k, u, w, rng):
    U, W = np.fft.fft(u, axis=1), np.fft.fft(w)
    z = (np.abs(U) ** 2).sum(axis=0) + np.abs(W) ** 2
    return float(z[1:(p - 1) // 2 + 1].sum()), p / 2


def _qm_gm(p, k, u, w, rng):
    x = np.abs(rng.standard_normal(k + 1)) * rng.uniform(0.1, 10)
    return float(x.prod()), float(((x**2).sum() / (k + 1)) ** ((k + 1) / 2))


def _concentration(p, k, u, w, rng):
    z = np.abs(rng.standard_normal((p - 1) // 2)) * rng.uniform(0.1, 10)
    q = (k + 1) / 2
    return float((z**q).sum()), float(z.sum() ** q)


def plancherel_exact(p: int) -> bool:
    """Exact: ``sum_j |u^(j)|^2 = p sum_a u[a]^2`` for symbolic ``u`` (coefficient of ``u_a u_b`` is
    ``sum_j omega^(j(b-a))`` computed in ``Q(omega_p)``, must equal ``p [a = b]``)."""
    a, b = np.indices((p, p)).reshape(2, -1)
    vec = np.zeros((a.size, p), dtype=np.int64)
    for j in range(p):
        np.add.at(vec, (np.arange(a.size), (j * (b - a)) % p), 1)
    consts, rational = rational_parts(vec)
    return rational and bool(np.array_equal(consts, np.where(a == b, p, 0)))


def _validate_optional(p: int | None, k: int | None) -> None:
    if k is not None:
        theory.validate_pk(3, k)
        if k > 12:
            raise InputError(f"k must be <= 12 for the derivation, got {k}")
    if p is not None:
        theory.validate_pk(p, 1)
        if p % 2 == 0:
            raise InputError(f"Lemma C.15 is stated for odd p; got p = {p}")


def gamma_star_derivation(k: int | None = None, p: int | None = None) -> Derivation:
    """Lemma C.15 as a derivation with ``p``, ``k`` symbols; optionally specialised to the given ``k`` / ``p``."""
    _validate_optional(p, k)
    P, K = theory.P_SYM, theory.K_SYM
    j, i = sp.symbols("j i", integer=True)
    z, q = sp.Function("z"), (K + 1) / sp.Integer(2)
    aw, au = sp.Function("|what|"), sp.Function("|uhat|")
    d = Derivation("Maximum single-neuron margin gamma* (Lemma C.15)"
                   + (f", k = {k}" if k is not None else "") + (f", p = {p}" if p is not None else ""))
    _reduction_steps(d, P, K, j, i, aw, au)
    _inequality_steps(d, P, K, j, z, q, aw, au)
    _closed_form_steps(d, P, K)
    _attainment_steps(d, P, K, k, p)
    return d


def _reduction_steps(d, P, K, j, i, aw, au) -> None:
    inst = [(pp, kk) for pp in (3, 5) for kk in (1, 2, 3)]
    what, uhat = sp.Function("what"), sp.Function("uhat_i")
    d.exact(sp.Eq(sp.Symbol("objective"), sp.factorial(K) / ((P - 1) * P**K)
                  * sp.Sum(what(-j) * sp.Product(uhat(j), (i, 1, K)), (j, 1, P - 1))),
            "Fourier reduction: only the fully mixed monomial survives", "Lemma C.14",
            proof=lambda: all(check_fourier_reduction(pp, kk).matches for pp, kk in inst),
            method="both sides expanded exactly in symbolic weights (fourier_reduction)",
            scope="instances p in {3, 5}, k in {1, 2, 3}; the general case is the lemma's proof")
    R, phi = sp.Symbol("R", positive=True), sp.Symbol("phi", real=True)
    d.exact(sp.Eq(R * sp.exp(sp.I * phi) + R * sp.exp(-sp.I * phi), 2 * R * sp.cos(phi), evaluate=False),
            "pairing j with -j: u^(-j) = conj(u^(j)) for real u, so each pair is z + conj(z) = 2|z| cos(arg z)",
            "Lemma C.15 (C.11)-(C.12)",
            proof=lambda: sp.simplify((R * sp.exp(sp.I * phi) + R * sp.exp(-sp.I * phi)).rewrite(sp.cos)
                                      - 2 * R * sp.cos(phi)) == 0, scope="all R >= 0, real phi")
    theta = sp.Function("Theta")
    d.numeric(sp.Eq(sp.Symbol("objective"), 2 * sp.factorial(K) / ((P - 1) * P**K)
                    * sp.Sum(aw(j) * au(j) * sp.cos(theta(j)), (j, 1, (P - 1) / 2))),
              "the paired form (Theta(j) = sum_i theta_ui(j) - theta_w(j)) against Definition C.12",
              "Lemma C.15, (C.13)", max_error=pairing_error, tolerance=EQUALITY_RTOL,
              method="float64, numpy FFT vs direct evaluation, 60 random (p, k, u, w), seed 0, relative error",
              scope="random odd p in 3..31, k in 1..5")


def _inequality_steps(d, P, K, j, z, q, aw, au) -> None:
    theta = sp.Function("Theta")
    d.numeric(sp.Le(sp.Sum(aw(j) * au(j) * sp.cos(theta(j)), (j, 1, (P - 1) / 2)),
                    sp.Sum(aw(j) * au(j), (j, 1, (P - 1) / 2))),
              "phase alignment: cos <= 1, equality iff theta_u1 + ... + theta_uk = theta_w (INEQUALITY: a written "
              "argument, checked in float)",
              "Lemma C.15 (C.13)-(C.14)", max_error=lambda: _max_violation(_phase_alignment),
              tolerance=INEQUALITY_SLACK, method=f"{NUMERIC_TRIALS} random instances, seed 0, relative violation",
              scope="random odd p in 3..31, k in 1..5")
    jj, a = sp.symbols("j a", integer=True)
    d.exact(sp.Eq(sp.Sum(au(jj) ** 2, (jj, 0, P - 1)), P * sp.Sum(sp.Function("u")(a) ** 2, (a, 0, P - 1))),
            "Plancherel",
            "Lemma C.15 (Plancherel)", proof=lambda: all(plancherel_exact(pp) for pp in range(3, 32, 2)),
            method="coefficients of u_a u_b computed in Q(omega_p), reduced modulo Phi_p",
            scope="odd p = 3..31 (per p); standard for all p")
    d.numeric(sp.Le(sp.Sum(z(j), (j, 1, (P - 1) / 2)), P / 2),
              "budget: z(j) = sum_i |u_i^(j)|^2 + |w^(j)|^2, symmetric in j, total p ||theta||^2 <= p (a written "
              "argument, checked in float)",
              "Lemma C.15 (norm budget)", max_error=lambda: _max_violation(_budget), tolerance=INEQUALITY_SLACK,
              method=f"{NUMERIC_TRIALS} random unit-norm instances, seed 0", scope="random odd p in 3..31, k in 1..5")
    d.numeric(sp.Le(aw(j) * au(j), (z(j) / (K + 1)) ** q),
              "quadratic mean >= geometric mean of the k+1 magnitudes (INEQUALITY: a written argument, checked in "
              "float)", "Lemma C.15 (C.15)",
              max_error=lambda: _max_violation(_qm_gm), tolerance=INEQUALITY_SLACK,
              method=f"{NUMERIC_TRIALS} random non-negative vectors, seed 0", scope="k in 1..5")
    t = sp.Symbol("t", positive=True)
    zt = sp.Symbol("z", positive=True)
    d.exact(sp.Eq(t ** (K + 1), (zt / (K + 1)) ** q, evaluate=False),
            "equality case: all k+1 magnitudes equal to t, so z = (k+1) t^2", "Lemma C.15 (C.15), equality",
            proof=lambda: sp.simplify(((K + 1) * t**2 / (K + 1)) ** q - t ** (K + 1)) == 0,
            method="sympy: substitute z = (k+1) t^2, simplify the difference to 0", scope="all k, t > 0")
    d.numeric(sp.Le(sp.Sum(z(j) ** q, (j, 1, (P - 1) / 2)), sp.Sum(z(j), (j, 1, (P - 1) / 2)) ** q),
              "concentration: x -> x^q is superadditive for q = (k+1)/2 >= 1 (INEQUALITY: a written argument, "
              "checked in float; the text cites "
              "||z||_2 <= ||z||_1, which is the k = 3 case only)", "Lemma C.15 (last inequality)",
              max_error=lambda: _max_violation(_concentration), tolerance=INEQUALITY_SLACK,
              method=f"{NUMERIC_TRIALS} random non-negative vectors, seed 0", scope="k in 1..5")


def _closed_form_steps(d, P, K) -> None:
    chain = 2 * sp.factorial(K) / ((P - 1) * P**K) * (1 / (K + 1)) ** ((K + 1) / sp.Integer(2)) \
        * (P / 2) ** ((K + 1) / sp.Integer(2))
    closed = theory.gamma_star_symbolic()
    d.exact(sp.Eq(sp.Symbol("gamma*"), chain, evaluate=False), "the chain at its bound: budget p/2 on one "
            "frequency, equal magnitudes, aligned phases", "Lemma C.15 (bound)",
            proof=lambda: sp.simplify(chain / closed) == 1, method="sympy simplify(chain / closed form) == 1",
            scope="all p, k (symbols)")
    d.exact(sp.Eq(sp.Symbol("gamma*"), closed, evaluate=False), "simplified (Theorem C.22 / Lemma C.15 statement)",
            "Lemma C.15 (statement)", proof=lambda: sp.simplify(chain - closed) == 0, scope="all p, k (symbols)")
    d.exact(sp.Eq(sp.Symbol("gamma*(p, k=2)"), theory.gamma_star_k2_form(P), evaluate=False), "k = 2 special form",
            "Morwani et al. Thm 7.7", proof=lambda: sp.simplify(closed.subs(K, 2) - theory.gamma_star_k2_form(P))
            == 0, scope="all p (symbol)")
    d.exact(sp.Eq(sp.Symbol("gamma*(p, k=3)"), theory.gamma_star_k3_form(P), evaluate=False), "k = 3 special form",
            "Lemma C.11", proof=lambda: sp.simplify(closed.subs(K, 3) - theory.gamma_star_k3_form(P)) == 0,
            scope="all p (symbol)")


def _attainment_steps(d, P, K, k: int | None, p: int | None) -> None:
    closed = theory.gamma_star_symbolic()
    beta = sp.sqrt(2 / ((K + 1) * P))
    amp = beta * P / 2
    d.exact(sp.Eq(sp.Symbol("z(zeta)"), P / 2, evaluate=False),
            "beta = sqrt(2/((k+1)p)): |u_i^(+-zeta)| = |w^(+-zeta)| = beta p/2, so z(zeta) = (k+1)(beta p/2)^2 = p/2 "
            "(budget tight) and the QM-GM equality case holds", "Lemma C.15 (C.16)",
            proof=lambda: sp.simplify((K + 1) * amp**2 - P / 2) == 0, method="sympy simplify((k+1)(beta p/2)^2 - p/2)",
            scope="all p, k (symbols)")
    value = 2 * sp.factorial(K) / ((P - 1) * P**K) * amp ** (K + 1)
    d.exact(sp.Eq(value, closed, evaluate=False), "the optimal neuron attains the bound", "Lemma C.15 (attainment)",
            proof=lambda: sp.simplify(value / closed) == 1, scope="all p, k (symbols)")
    if k is not None:
        at_k = sp.simplify(closed.subs(K, k))
        d.exact(sp.Eq(sp.Symbol("gamma*"), at_k, evaluate=False), f"at k = {k}", "Lemma C.15",
                proof=lambda: sp.simplify(at_k - closed.subs(K, k)) == 0, scope=f"k = {k}, all p")
    if p is not None:
        at_p = sp.simplify(closed.subs(P, p)) if k is None else theory.gamma_star_exact(p, k)
        d.exact(sp.Eq(sp.Symbol("gamma*"), at_p, evaluate=False), f"at p = {p}" + (f", k = {k}" if k else ""),
                "Lemma C.15", proof=lambda: sp.simplify(at_p - closed.subs({P: p} | ({K: k} if k else {}))) == 0,
                scope=f"p = {p}" + (f", k = {k}" if k else ""))
    if p is not None and k is not None and p ** k <= 200_000:
        obj = cosine_neuron_objective(p, k)
        gamma = theory.gamma_star_exact(p, k)
        b = sp.sqrt(sp.Rational(2, (k + 1) * p))
        d.exact(sp.Eq(sp.Symbol("objective(beta cos, ..., beta cos)"), sp.nsimplify(b ** (k + 1) * obj)),
                f"the optimal neuron u_i = w = beta cos(2 pi a/p) evaluated from Definition C.12 in exact arithmetic "
                f"equals gamma* = {gamma}", "Lemma C.15 + Def. C.12",
                proof=lambda: sp.simplify(b ** (k + 1) * obj - gamma) == 0,
                method="cyclotomic-field evaluation of eta(delta) over all p^k inputs", scope=f"p = {p}, k = {k}")
        d.notes.append(f"gamma*({p}, {k}) = {gamma} = {float(gamma):.15g}")
