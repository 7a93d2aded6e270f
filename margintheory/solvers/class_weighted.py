"""The class-weighted single-neuron problem for any weights ``(q, tau)``: a bracket ``[L, U]`` on

    ``Psi(q, tau) = max_{|theta|_2 <= 1} E_{a~q} psi'_tau(theta, a)``

(docs/theory.md#class-weighted-margin and #class-weighted-bracket).  By weak duality -- Lemma C.6 of Li, Liang,
Shi, Song, Zhou, "Fourier Circuits in Neural Networks and Transformers" (arXiv:2402.09469), Lemma 7.6 of Morwani,
Edelman, Oncescu, Zhao, Kakade, "Feature emergence via margin maximization" (arXiv:2311.07568) -- the normalized
margin of every network is at most ``Psi(q, tau)``, for every weighting; the uniform weighting gives ``gamma*``.

The arrays: ``q`` of shape ``(p^k,)`` over the inputs in row-major order of ``(a_1, ..., a_k)``
(:func:`margintheory.engines.margins.input_grid`), non-negative, summing to 1; ``tau`` of shape ``(p^k, p)``, row
``x`` a
distribution over the wrong labels: non-negative, summing to 1, ``tau[x, y(x)] = 0``.  Sums are accepted within
:func:`sum_tolerance` of the dtype they are stored in (:data:`SUM_TOL` for float64); the bracket is for the arrays
exactly as given (their float64 values as exact rationals).

**When the frequency reduction applies** (``proved``).  Write ``y = y(x)`` and ``d = c - y``.  If

    ``q`` is constant (``q[x] = s``) and ``tau[x, y(x) + d] = t(d)`` does not depend on ``x``        (*)

-- decided by comparing the float64 entries exactly, without a tolerance, so that arrays only close to such a form
do not get this path -- then ``(G w)_a = s (K_t w)(y(a))`` with the circulant ``K_t = T I - C(t)``,
``T = sum_d t(d)``, whose columns sum to zero, and the objective is the uniform one composed with ``K_t``:

    ``F_{q,tau}(u, w) = lam F_uniform(u, K_t w)``,   ``lam = s p^k (p - 1) / p``.

``K_t`` acts on frequency ``j`` as multiplication by ``kappa(j) = sum_d t(d) (1 - omega^(j d))``, so Lemma C.14's
blocks (``c_b g_k`` in orthonormal coordinates, :mod:`margintheory.certificate.upper_bound`) become
``lam c_b |kappa_b| g_k`` up to a rotation of ``z_w``, and ``Psi(q, tau) = lam max_b c_b |kappa_b| max g_k``
(for odd ``p``: ``C_{p,k} max_j |kappa(j)|`` of :mod:`margintheory.solvers.fourier_pricing` when ``T = 1``).

* ``U``: the uniform chain's exactly checked SOS bound ``max g_k <= B`` (and its proof of Lemma C.14), a rational
  ``r >= |kappa(j)|^2`` for every ``j`` proved by an exact identity (:func:`kappa_bound`), ``kappa(p/2)`` exact for
  even ``p``, and ``U^2 >= lam^2 c_b^2 |kappa_b|^2 B^2`` compared in exact rationals;
* ``L``: the cosine neuron of the best block (:func:`margintheory.solvers.fourier_pricing.priced_neuron`, or the
  alternating vector for ``j = p/2``), evaluated on the given arrays by the direct sum over all inputs and by the
  DFT form, the smaller value reported (``float``).

Conversely, (*) is what the reduction needs: the coefficient of ``u_1[b_1] ... u_k[b_k]`` in ``F_{q,tau}`` is
``k! (G w)_b``, and in a sum of per-frequency terms ``Re(kappa_j w^(j) conj(u_1^(j) ... u_k^(j)))`` it depends on
``b`` through ``b_1 + ... + b_k`` only; a linear map ``w -> (G w)`` that depends on ``y`` only and is diagonal in
the Fourier basis is a circulant, which (rows of ``tau`` summing to 1) forces ``q`` constant and ``tau`` as in (*).

**Otherwise** (``certified``): :func:`margintheory.solvers.single_neuron.solve_single_neuron` with the pair weights
``lam = q tau`` -- a float SOS relaxation of the objective expanded in its ``(k+1) p`` weights (per frequency block
when the computed cross-frequency mass is negligible, the mass then added; else the generic relaxation), with its
a-posteriori safety margin -- plus a rigorous bound on the float64 rounding of forming ``q tau`` and its row sums.
The generic relaxation is expensive: :func:`estimate` sizes it (:mod:`margintheory.solvers.cost`) before anything
is allocated.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from margintheory.core.problems import ModularAddition, as_problem
from margintheory.engines.margins import input_grid
from margintheory.errors import InputError
from margintheory.runtime.budget import Estimate
from margintheory.solvers.objective import PairWeights
from margintheory.solvers.single_neuron import SingleNeuronBracket

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.certificate.upper_bound import ProofStep, ProvedUpperBound

EPS = float(np.finfo(float).eps)
#: ``q`` and every row of ``tau`` must sum to 1 within this (absolute) tolerance, or within the rounding of a lower
#: precision they are stored in (:func:`sum_tolerance`)
SUM_TOL = 1e-9
#: unit roundoff of the dtypes numpy has no ``finfo`` for (bfloat16: 8 significant bits)
_EPS_BY_NAME = {"bfloat16": 2.0**-7}
METHODS = ("auto", "fourier-exact", "quartic-sos", "eliminated", "fourier-blocks", "generic")
#: ``auto`` runs the branch and bound after ``quartic-sos`` when the latter fails or leaves a wider relative gap
AUTO_GAP = 1e-6
#: relative excess of the rational ``r`` over ``max_j |kappa(j)|^2`` tried first by :func:`kappa_bound`
KAPPA_SLACK = 2.0**-48


@dataclass(frozen=True)
class ClassWeights:
    """Validated weights for ``problem``; ``profile`` is ``t(d)`` (``d = 0..p-1``, ``t(0) = 0``) when the hypothesis
    (*) of the module docstring holds exactly, else ``None``."""

    problem: ModularAddition
    q: np.ndarray
    tau: np.ndarray
    profile: np.ndarray | None
    #: the dtype each array was given (or stored) in, whose rounding the sums were allowed (:func:`sum_tolerance`)
    stored: dict[str, str] = field(default_factory=dict)

    @property
    def translation_invariant(self) -> bool:
        return self.profile is not None

    @property
    def uniform(self) -> bool:
        """(*) with every ``t(d)``, ``d != 0``, the same float: a multiple of the uniform weighting."""
        return self.profile is not None and bool(np.all(self.profile[1:] == self.profile[1]))

    @property
    def labels(self) -> np.ndarray:
        p, k = self.problem.p, self.problem.k
        return input_grid(p, k).sum(axis=1) % p

    def pair_weights(self) -> PairWeights:
        """``lam[x, c] = q[x] tau[x, c]`` in float64 for the relaxations."""
        return PairWeights(self.problem.p, self.problem.k, self.q[:, None] * self.tau)

    @property
    def total(self) -> float:
        """``sum_x q[x] sum_c tau[x, c]`` (1 up to the accepted rounding): weak duality reads
        ``gamma* <= Psi(q, tau) / total`` for weights as given (the objective is linear in them)."""
        return float(np.dot(self.q, self.tau.sum(axis=1)))

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"translation_invariant": self.translation_invariant, "uniform": self.uniform,
                               "q_constant": bool(np.all(self.q == self.q[0])), "total": self.total,
                               "dtypes": dict(self.stored)}
        if self.profile is not None:
            out["tau_profile"] = self.profile
        return out


def sum_tolerance(dtype: Any, terms: int) -> float:
    """How far from 1 the sum of ``terms`` weights stored in ``dtype`` may be: :data:`SUM_TOL`, or
    ``(ceil(log2(terms)) + 1) eps`` for a float type of machine epsilon ``eps`` when that is larger -- rounding each
    weight to the type moves the sum by at most ``eps/2``, and weights normalized in that type (a pairwise sum, as
    numpy's) carry about ``log2(terms) eps`` more.  float32: ``1.2e-7`` per term of the logarithm, so a float32 file
    summing to ``0.99999998`` is accepted; integer arrays sum exactly."""
    name = str(dtype)
    if name in _EPS_BY_NAME:
        eps = _EPS_BY_NAME[name]
    elif np.dtype(dtype).kind == "f":
        eps = float(np.finfo(dtype).eps)
    else:
        return SUM_TOL
    return max(SUM_TOL, (math.ceil(math.log2(max(terms, 2))) + 1) * eps)


def class_weights(p: int | ModularAddition, k: int | None = None, *, q: Any, tau: Any,
                  stored: dict[str, str] | None = None) -> ClassWeights:
    """Validate ``q``, ``tau`` for the problem (module docstring) and decide the hypothesis (*) exactly; a bad array
    is an :class:`InputError` of one line.  Sums are checked within :func:`sum_tolerance` of each array's dtype, or of
    the dtype named in ``stored`` (``{"q": "bfloat16"}``: the dtype a file stores it in, before widening)."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    n = p**k
    dtypes = {"q": str(np.asarray(q).dtype), "tau": str(np.asarray(tau).dtype), **(stored or {})}
    q_tol, tau_tol = sum_tolerance(dtypes["q"], n), sum_tolerance(dtypes["tau"], p)
    qa, ta = _real_array("q", q, (n,)), _real_array("tau", tau, (n, p))
    if np.any(qa < 0) or abs(float(qa.sum()) - 1.0) > q_tol:
        raise InputError(f"q must be non-negative and sum to 1 (within {q_tol:.2g}); its sum is {float(qa.sum())!r}"
                         + (f" and its smallest entry {float(qa.min())!r}" if np.any(qa < 0) else ""))
    y = input_grid(p, k).sum(axis=1) % p
    rows = np.arange(n)
    if np.any(ta < 0):
        raise InputError(f"tau must be non-negative; row {int(np.argwhere(ta < 0)[0, 0])} has a negative entry")
    wrong = np.flatnonzero(ta[rows, y] != 0)
    if wrong.size:
        raise InputError(f"tau[x, y(x)] must be 0 (weights are over the wrong labels); row {int(wrong[0])} gives the "
                         f"true label y = {int(y[wrong[0]])} the weight {float(ta[wrong[0], y[wrong[0]]])!r}")
    sums = ta.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1.0) > tau_tol)
    if off.size:
        raise InputError(f"every row of tau must sum to 1 (within {tau_tol:.2g}); row {int(off[0])} sums to "
                         f"{float(sums[off[0]])!r}")
    shifted = ta[rows[:, None], (y[:, None] + np.arange(p)[None, :]) % p]  # shifted[x, d] = tau[x, y(x) + d]
    invariant = bool(np.all(qa == qa[0]) and np.all(shifted == shifted[0]))
    return ClassWeights(problem, qa, ta, shifted[0].copy() if invariant else None, dtypes)


def _real_array(name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise InputError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.shape != shape:
        raise InputError(f"{name} must have shape {shape} (p^k = {shape[0]} inputs in row-major order of (a_1..a_k)"
                         f"{', p labels' if len(shape) == 2 else ''}), got {arr.shape}")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} has non-finite entries")
    return arr


# -- the translation-invariant case: kappa and its exact bound ----------------------------------------------------


def kappa_values(profile: np.ndarray) -> np.ndarray:
    """``kappa(j) = sum_d t(d) (1 - omega^(j d))``, ``omega = exp(2 pi i / p)``, for ``j = 0..p-1`` (float64)."""
    t = np.asarray(profile, dtype=float)
    p = len(t)
    return float(t.sum()) - p * np.fft.ifft(t)


@dataclass(frozen=True)
class KappaBound:
    """``r >= |kappa(j)|^2`` for every ``j``, proved by ``r I - K^T K = H^T H + C(e)`` (``H`` the circulant of the
    rational vector ``h``, ``C(e)`` the circulant of ``e`` with ``e_0 >= sum_{m != 0} |e_m|``), all exact."""

    r: Fraction
    holds: bool
    diagonal: Fraction  # e_0
    off_diagonal: Fraction  # sum_{m != 0} |e_m|
    tries: int


def _scaled(values: list[Fraction]) -> tuple[list[int], int]:
    """Integers ``n_i`` and ``D`` with ``values[i] = n_i / D`` (``D`` the lcm of the denominators)."""
    den = 1
    for v in values:
        den = den * v.denominator // math.gcd(den, v.denominator)
    return [int(v * den) for v in values], den


def _autocorrelation(v: list[int]) -> list[int]:
    """``A_m = sum_x v_x v_{x+m mod p}`` (exact integers)."""
    p = len(v)
    return [sum(v[x] * v[(x + m) % p] for x in range(p)) for m in range(p)]


def kappa_bound(profile: np.ndarray) -> KappaBound:
    """A rational ``r`` slightly above ``max_j |kappa(j)|^2`` and its exact proof (:class:`KappaBound`).

    ``K_t = T I - C(t)`` is the circulant with first column ``g(v) = T [v = 0] - t(v)``, so ``K^T K`` is the
    circulant of the autocorrelation ``a`` of ``g``, with eigenvalues ``|kappa(j)|^2``.  ``h`` is the float inverse
    DFT of ``sqrt(r - sigma - |kappa(j)|^2)`` (a square root of the circulant ``r I - K^T K - sigma I``) rounded to
    a dyadic grid; ``e = r [m = 0] - a - autocorrelation(h)`` is computed exactly, and a diagonally dominant ``C(e)``
    (Gershgorin) makes ``r I - K^T K`` a sum of two positive semidefinite matrices.  The slack ``sigma`` absorbs the
    float errors; if the exact check fails, ``r`` is raised and the certificate rebuilt (every try is exact).
    """
    power = np.abs(kappa_values(np.asarray(profile, dtype=float))) ** 2
    top = float(power.max())
    slack = KAPPA_SLACK
    for tries in range(1, 8):
        r = Fraction(top * (1.0 + 2.0 * slack)) if top > 0 else Fraction(1, 2**60)
        diag, off = circulant_certificate(profile, r, slack)
        if diag >= off:
            return KappaBound(r, True, diag, off, tries)
        slack *= 16.0
    return KappaBound(r, False, diag, off, tries)


def circulant_certificate(profile: np.ndarray, r: Fraction, slack: float) -> tuple[Fraction, Fraction]:
    """``(e_0, sum_{m != 0} |e_m|)`` of the exact remainder ``e = r [m = 0] - a - autocorrelation(h)`` for the
    candidate ``r`` (:func:`kappa_bound`); ``e_0 >= sum |e_m|`` proves ``|kappa(j)|^2 <= r`` for every ``j``."""
    t = [Fraction(float(x)) for x in profile]
    p = len(t)
    total = sum(t, Fraction(0))
    g_int, g_den = _scaled([(total if v == 0 else Fraction(0)) - t[v] for v in range(p)])
    a_int = _autocorrelation(g_int)  # a = a_int / g_den^2
    power = np.abs(kappa_values(np.asarray(profile, dtype=float))) ** 2
    lam = np.maximum(float(r) * (1.0 - slack) - power, 0.0)
    h = np.fft.ifft(np.sqrt(lam)).real  # sqrt(lam) is even in j, so h is real and symmetric
    bits = 60 - math.frexp(float(np.abs(h).max()) or 1.0)[1]
    h_int = [int(round(float(x) * 2.0**bits)) for x in h]  # h = h_int / 2^bits
    A_int = _autocorrelation(h_int)
    den = (g_den**2) * (4**bits) * r.denominator
    e = [(r.numerator * (g_den**2) * (4**bits) if m == 0 else 0) - a_int[m] * (4**bits) * r.denominator
         - A_int[m] * (g_den**2) * r.denominator for m in range(p)]
    return Fraction(e[0], den), Fraction(sum(abs(x) for x in e[1:]), den)


# -- the bracket ------------------------------------------------------------------------------------------------------


def objective_on_arrays(weights: ClassWeights, theta: np.ndarray) -> float:
    """``E_{a~q} psi'_tau`` of one neuron ``theta = (u_1, ..., u_k, w)`` (shape ``(k+1, p)``) by the direct sum
    over all inputs: ``sum_x q[x] z_x^k (rho_x w[y(x)] - (tau w)_x)``, ``rho_x = sum_c tau[x, c]``."""
    p, k = weights.problem.p, weights.problem.k
    theta = np.asarray(theta, dtype=float)
    a = input_grid(p, k)
    z = theta[np.arange(k)[None, :], a].sum(axis=1)
    w = theta[k]
    v = weights.tau.sum(axis=1) * w[weights.labels] - weights.tau @ w
    return float(np.dot(weights.q * z**k, v))


def objective_by_dft(weights: ClassWeights, theta: np.ndarray) -> float:
    """Under (*): ``F = (s k! / p) Re sum_{j != 0} conj(kappa(j)) conj(w^(j)) u_1^(j) ... u_k^(j)`` (numpy FFT,
    ``f^(j) = sum_x f(x) exp(-2 pi i j x / p)``)."""
    assert weights.profile is not None
    p, k = weights.problem.p, weights.problem.k
    hat = np.fft.fft(np.asarray(theta, dtype=float), axis=1)
    kap = kappa_values(weights.profile)
    terms = np.conj(kap[1:]) * np.conj(hat[k, 1:]) * np.prod(hat[:k, 1:], axis=0)
    return float(weights.q[0] * math.factorial(k) / p * terms.sum().real)


def _best_block_neuron(weights: ClassWeights) -> tuple[np.ndarray, int]:
    """The unit neuron of the block with the largest ``c_b |kappa_b|`` and its frequency."""
    from margintheory.solvers.fourier_pricing import priced_neuron
    from margintheory.solvers.single_neuron import embed_real_block_point

    assert weights.profile is not None
    p, k = weights.problem.p, weights.problem.k
    kap = kappa_values(weights.profile)
    j = int(np.argmax(np.abs(kap[1:(p - 1) // 2 + 1]))) + 1 if p >= 3 else 0
    best = priced_neuron(p, k, j, float(np.angle(kap[j])), np.zeros(k)) if j else None
    if p % 2 == 0:  # the real block's constant is 2^((k-1)/2) times the complex blocks'
        real = embed_real_block_point(np.full(k + 1, (k + 1) ** -0.5), p)
        if best is None or 2 ** ((k - 1) / 2) * abs(kap[p // 2]) > abs(kap[j]):
            return real, p // 2
    assert best is not None
    return best, j


def blocks_upper_bound(ub: ProvedUpperBound, profile: np.ndarray, scale: Fraction
                       ) -> tuple[Fraction, list[Fraction], KappaBound]:
    """``(U, needs, kappa bound)`` with ``U^2 >= need_b = scale^2 c_b^2 K_b B^2`` for every frequency block ``b`` of
    the proved chain ``ub`` (``c_b^2`` its rational constant, ``B`` its SOS bound), where ``K_b = r >=
    |kappa(j)|^2`` (:func:`kappa_bound`, an exact identity) for the complex blocks and ``K_b = kappa(p/2)^2 =
    (2 sum_{d odd} t(d))^2`` exactly for the real block of even ``p``; ``profile`` is ``t(d)``, ``d = 0..p-1``
    (float64 entries taken as exact rationals, ``t(0) = 0``).  Everything is compared in exact rationals."""
    from margintheory.certificate.checker import ceil_sqrt

    kb = kappa_bound(profile)
    t = [Fraction(float(x)) for x in profile]
    real = (2 * sum(t[1::2], Fraction(0))) ** 2  # kappa(p/2)^2 = (sum_d t(d) (1 - (-1)^d))^2, exact
    B = ub.block_bound
    need = [c["constant_squared"] * scale**2 * (kb.r if c["domain"] == "complex" else real) * B * B
            for c in ub.constants]
    U = max(ceil_sqrt(v) for v in need) if need else Fraction(0)
    return U, need, kb


def uniform_reduction(profile: np.ndarray, p: int, k: int, s: Fraction, lam: Fraction) -> tuple[bool, str]:
    """The step ``F_(q,tau)(u, w) = lam F_uniform(u, K_t w)`` of the translation-invariant bracket
    (docs/theory.md#class-weighted-bracket), computed in exact rationals: under the hypothesis (an exact comparison of
    the arrays, the step before it) ``v_x = rho_x w[y(x)] - (tau w)_x = T w[y(x)] - sum_d t(d) w[y(x) + d] =
    (K_t w)(y(x))`` for ``K_t = T I - C(t)``, ``T = sum_d t(d)``; the uniform objective is ``F_uniform(u, v) = p^-k
    sum_x z_x^k (p v[y] - sum_c v[c])/(p-1)`` (Lemma C.14's derivation, uniform ``tau``), so it remains to check that
    ``K_t`` has zero column sums (``sum_c (K_t w)(c) = 0`` for every ``w``), ``t(0) = 0``, and that
    ``lam p / ((p-1) p^k) = s``.  Returns ``(holds, detail)``."""
    t = [Fraction(float(x)) for x in profile]
    T = sum(t, Fraction(0))
    columns = [sum(((T if c == y else 0) - t[(c - y) % p] for y in range(p)), Fraction(0)) for c in range(p)]
    zero_columns = all(v == 0 for v in columns)
    normalised = lam * Fraction(p, (p - 1) * p**k) == s
    detail = (f"exact rationals: K_t = T I - C(t), T = {T}; column sums of K_t all 0: {zero_columns}; t(0) = {t[0]}; "
              f"lam p/((p-1) p^k) = s = {s}: {normalised}; with the hypothesis v_x = (K_t w)(y(x)), and "
              "F_uniform(u, v) = p^-k sum_x z_x^k (p v[y] - sum v)/(p-1) with sum v = 0 (Lemma C.14's uniform-tau "
              "step), F = s sum_x z_x^k (K_t w)(y(x)) = lam F_uniform(u, K_t w)")
    return zero_columns and normalised and t[0] == 0, detail


def _weighted_upper(ub: ProvedUpperBound, weights: ClassWeights) -> tuple[Fraction, list[ProofStep], KappaBound]:
    """``U`` with ``U^2 >= lam^2 c_b^2 K_b B^2`` for every block (``K_b = r``, or ``kappa(p/2)^2`` for the real
    block) and the proof steps that replace the uniform chain's last one."""
    from margintheory.certificate.upper_bound import ProofStep

    assert weights.profile is not None
    p, k = weights.problem.p, weights.problem.k
    scale = Fraction(float(weights.q[0])) * p**k * Fraction(p - 1, p)
    U, need, kb = blocks_upper_bound(ub, weights.profile, scale)
    steps = [
        ProofStep("weights translation-invariant: q constant, tau[x, y(x) + d] = t(d) for every x, d", "proved", True,
                  f"exact comparison of the {p**k} x {p} float64 entries (no tolerance); s = q[x] = "
                  f"{float(weights.q[0])!r}"),
        ProofStep("F_(q,tau)(u, w) = lam F_uniform(u, K_t w), K_t circulant", "proved",
                  *uniform_reduction(weights.profile, p, k, Fraction(float(weights.q[0])), scale)),
        ProofStep("|kappa(j)|^2 <= r for every frequency j", "proved", kb.holds,
                  f"r = {kb.r} ({float(kb.r):.15g}); exact identity r I - K_t^T K_t = H^T H + C(e), C(e) diagonally "
                  f"dominant: e_0 = {float(kb.diagonal):.3e} >= sum |e_m| = {float(kb.off_diagonal):.3e}"),
        ProofStep("U >= lam c_b |kappa_b| B for every frequency block (exact rationals, squares compared)", "proved",
                  all(U * U >= v for v in need), f"U = {U}; lam = {float(scale):.17g}"),
    ]
    return U, steps, kb


def _invariant_bracket(weights: ClassWeights, max_memory: int, time_limit: float | None) -> SingleNeuronBracket:
    from margintheory.certificate.upper_bound import ceil_float, prove_upper_bound
    from margintheory.errors import SolverError
    from margintheory.solvers.local import LocalMaxima

    problem = weights.problem
    p, k = problem.p, problem.k
    t0 = time.perf_counter()
    theta, freq = _best_block_neuron(weights)
    by_dft, direct = objective_by_dft(weights, theta), objective_on_arrays(weights, theta)
    lower = min(by_dft, direct)
    ub = prove_upper_bound(problem, max_memory=max_memory, time_limit=time_limit)
    U, steps, kb = _weighted_upper(ub, weights)
    chain = [s for s in ub.steps if not s.name.startswith("U >= c_b B")] + steps
    weighted = replace(ub, upper=U, steps=chain, seconds=ub.seconds + time.perf_counter() - t0)
    if not weighted.proved:
        failed = next(s.name for s in chain if not s.passed)
        raise SolverError(f"class-weighted upper bound for (p, k) = ({p}, {k}): step failed: {failed}")
    local = LocalMaxima(lower, theta.ravel(), np.array([lower]), theta.ravel()[None, :], 0, None,
                        time.perf_counter() - t0)
    out = SingleNeuronBracket(p, k, lower, ceil_float(U), True, "fourier-exact", theta, local)
    out.block_frequencies = list(range(1, p // 2 + 1))
    out.cross_frequency_l1 = 0.0
    out.proved_upper = weighted
    kap = np.abs(kappa_values(weights.profile if weights.profile is not None else np.zeros(p)))
    out.weights = {**weights.describe(), "kappa_abs": kap[1:p // 2 + 1], "best_frequency": freq, "r": str(kb.r),
                   "lower_by_dft": by_dft, "lower_by_direct_sum": direct}
    out.certification = (f"proved: U = {U} from the translation-invariant reduction F_(q,tau) = lam F_unif(u, K_t w) "
                         f"(lam = s p^k (p-1)/p, |kappa(j)|^2 <= r = {float(kb.r):.15g} by an exact identity), Lemma "
                         f"C.14's blocks and the SOS certificate max g_k <= B checked in exact rational arithmetic; "
                         f"lower: the cosine neuron of frequency {freq} (min of the DFT form and the direct sum)")
    out.seconds = time.perf_counter() - t0
    return out


def weights_rounding_bound(weights: ClassWeights) -> float:
    """A bound on ``|F_exact(theta) - F_float(theta)|`` over unit ``theta``, where ``F_float`` uses the float64
    signed matrix of ``lam = q tau``: each entry of ``q tau`` is rounded once (``eps/2`` relative) and each row sum
    accumulates at most ``p eps`` relative, so ``sum |Delta G| <= (p + 1) eps sum lam``; with ``|z_a| <= sqrt(k)``
    and ``|w_c| <= 1`` on the unit ball the objective moves by at most ``k^(k/2) sum |Delta G|``."""
    p, k = weights.problem.p, weights.problem.k
    total = float(np.dot(weights.q, weights.tau.sum(axis=1)))
    return (p + 1) * EPS * k ** (k / 2) * total * (1 + 4 * EPS)


def _relaxation_bracket(weights: ClassWeights, method: str, n_starts: int, seed: int | None, solver: str,
                        time_limit: float | None, max_memory: int) -> SingleNeuronBracket:
    from margintheory.solvers.single_neuron import solve_single_neuron

    b = solve_single_neuron(weights.problem, weights=weights.pair_weights(), method=method, n_starts=n_starts,
                            seed=seed, solver=solver, time_limit=time_limit, max_memory=max_memory)
    slack = weights_rounding_bound(weights)
    b.upper = b.upper + slack
    b.lower = min(b.lower, objective_on_arrays(weights, b.maximiser))  # the neuron's value on the arrays as given
    b.weights = {**weights.describe(), "rounding_of_q_tau": slack}
    b.certification += f"; + {slack:.2e} for the float64 rounding of q tau (weights_rounding_bound)"
    return b


def _eliminated_bracket(weights: ClassWeights, n_starts: int, seed: int | None, time_limit: float | None
                        ) -> SingleNeuronBracket:
    """``w`` eliminated and the branch and bound of :mod:`margintheory.solvers.weighted_bnb` (``certified``): ``U =
    c_k f_upper`` plus the float64 rounding of ``q tau``; ``L`` the best unit neuron's objective on the arrays."""
    from margintheory.solvers.local import LocalMaxima
    from margintheory.solvers.weighted_bnb import c_k, solve_eliminated

    p, k = weights.problem.p, weights.problem.k
    G = weights.pair_weights().signed_matrix()
    res = solve_eliminated(G, p, k, n_starts=n_starts, seed=seed, time_limit=time_limit)
    theta = res.theta
    lower = objective_on_arrays(weights, theta)
    slack = weights_rounding_bound(weights)
    upper = c_k(k) * res.upper * (1 + 4 * EPS) + slack
    local = LocalMaxima(lower, theta.ravel(), np.array([lower]), theta.ravel()[None, :], 0, None, res.seconds)
    out = SingleNeuronBracket(p, k, lower, upper, True, "eliminated", theta, local)
    out.coefficient_error = slack
    out.weights = {**weights.describe(), "rounding_of_q_tau": slack, "eliminated": res.summary()}
    b = res.bnb
    out.certification = (f"certified: w eliminated (max over w is |M(u)|, M(u) = G^T z^k), branch and bound over the "
                         f"{res.reduction.factors}-dimensional cones with rigorous eigenvalue bounds (Weyl + Bauer-"
                         f"Fike, float64 a-priori rounding): f* <= {res.upper:.17g} ({b.cells_closed} cells closed, "
                         f"{b.cells_open} open, {b.vertex_evaluations} vertex evaluations, {b.stopped}); U = c_k f + "
                         f"{slack:.2e} (rounding of q tau); lower: the unit neuron of the best u, evaluated on the "
                         "arrays by the direct sum")
    out.seconds = res.seconds
    return out


def eliminated_applies(weights: ClassWeights) -> bool:
    """Whether ``auto`` takes the eliminated branch and bound (:func:`margintheory.solvers.weighted_bnb.applies`:
    ``k = 2`` with at most 9 labels used, or ``k = 3`` with few inputs carrying weight)."""
    from margintheory.solvers.weighted_bnb import applies, reduce_weights

    p, k = weights.problem.p, weights.problem.k
    if k not in (2, 3):
        return False
    try:
        return applies(reduce_weights(weights.pair_weights().signed_matrix(), p, k))
    except InputError:
        return False


def quartic_sos_size(weights: ClassWeights) -> int | None:
    """The number of variables of the quartic form of :mod:`margintheory.solvers.quartic_sos` (``None`` for
    ``k`` other than 2 and 3, or when the weights carry no mass)."""
    from margintheory.solvers.quartic_sos import form_size

    p, k = weights.problem.p, weights.problem.k
    G = weights.pair_weights().signed_matrix()
    if k not in (2, 3) or not np.any(G):
        return None
    return form_size(G, p, k)


def _quartic_bracket(weights: ClassWeights, n_starts: int, seed: int | None, time_limit: float | None
                     ) -> SingleNeuronBracket:
    """The first-level SOS certificate of the quartic form (:mod:`margintheory.solvers.quartic_sos`): ``U``
    ``proved`` (exact rationals, for the arrays as given); ``L`` the best unit neuron's objective on the arrays."""
    from margintheory.certificate.upper_bound import ceil_float
    from margintheory.solvers.local import LocalMaxima
    from margintheory.solvers.quartic_sos import solve_quartic_sos
    from margintheory.solvers.weighted_bnb import reduce_weights, unit_neuron

    p, k = weights.problem.p, weights.problem.k
    G = weights.pair_weights().signed_matrix()
    res = solve_quartic_sos(weights.q, weights.tau, weights.labels, G, p, k, n_starts=n_starts, seed=seed,
                            time_limit=time_limit)
    theta = unit_neuron(reduce_weights(G, p, k), res.u)
    lower = objective_on_arrays(weights, theta)
    local = LocalMaxima(lower, theta.ravel(), np.array([lower]), theta.ravel()[None, :], 0, None,
                        res.seconds["total"])
    out = SingleNeuronBracket(p, k, lower, ceil_float(res.upper), True, "quartic-sos", theta, local)
    out.exact_upper = res.upper
    summary = res.summary()
    out.weights = {**weights.describe(), "quartic_sos": summary}
    out.solver_info = {"name": "SCS (first-level SOS of a quartic form) + exact rounding", "status":
                       summary["scs_status"], "time": res.seconds["total"], "gram_size": summary["gram_size"],
                       "variables": summary["variables"], "iterations": summary["scs_iterations"]}
    form = "|M(u)|^2 (w eliminated, Psi^2 <= 4 gamma / 27)" if k == 2 else "F(u, w) itself (Psi <= gamma)"
    out.certification = (f"proved: gamma |x|^4 - f = m^T P m for the quartic form f = {form} in {summary['variables']}"
                         f" variables, checked in exact integers (the identity coefficient by coefficient; P = L L^T "
                         f"+ eta I + E with |E|_F <= eta); gamma = {float(res.certificate.gamma):.17g}, U = "
                         f"{float(res.upper):.17g} (SCS {summary['scs_status']} in {summary['scs_iterations']} "
                         f"iterations, shift {res.certificate.delta:.1e}); the weights taken exactly from the float64 "
                         "arrays; lower: the unit neuron of the best u, evaluated on the arrays by the direct sum")
    out.seconds = res.seconds["total"]
    return out


def auto_method(weights: ClassWeights, max_memory: float = 2 * 2**30) -> str:
    """The method ``auto`` takes: ``fourier-exact`` under (*); else ``quartic-sos`` for ``k = 2, 3`` when its
    estimate fits ``max_memory``; else ``eliminated`` where the branch and bound applies; else ``auto`` (the
    relaxation :func:`~margintheory.solvers.single_neuron.solve_single_neuron` chooses)."""
    if weights.translation_invariant:
        return "fourier-exact"
    n = quartic_sos_size(weights)
    if n is not None and estimate(weights, method="quartic-sos").bytes <= max_memory:
        from margintheory.solvers.quartic_sos import MAX_VARIABLES

        if n <= MAX_VARIABLES:
            return "quartic-sos"
    return "eliminated" if eliminated_applies(weights) else "auto"


def class_weighted_single_neuron(p: int | ModularAddition, k: int | None = None, *, q: Any, tau: Any,
                                 method: str = "auto", n_starts: int = 16, seed: int | None = 0,
                                 solver: str = "CLARABEL", time_limit: float | None = None,
                                 max_memory: int = 2 * 2**30, stored: dict[str, str] | None = None
                                 ) -> SingleNeuronBracket:
    """Bracket ``Psi(q, tau)``, the class-weighted single-neuron optimum (module docstring;
    docs/theory.md#class-weighted-margin), for the problem ``p`` (a
    :class:`~margintheory.core.problems.ModularAddition`,
    or an integer with ``k``) and the arrays ``q`` (shape ``(p^k,)``) and ``tau`` (shape ``(p^k, p)``).

    ``method="auto"`` (:func:`auto_method`): ``fourier-exact`` (``proved``) when the weights are
    translation-invariant (hypothesis (*), checked exactly), else ``quartic-sos`` (``proved``; followed by the
    ``eliminated`` branch and bound when it fails or leaves a gap above :data:`AUTO_GAP` and the branch and bound
    applies, the narrower bracket kept), else ``eliminated`` (``certified``), else the ``certified`` relaxation
    (``fourier-blocks`` or ``generic`` as :func:`~margintheory.solvers.single_neuron.solve_single_neuron`
    decides); naming a method runs it on any weights it applies to (to compare them).  Weak duality (Lemma C.6 of
    Li et al., arXiv:2402.09469): every network's normalized margin is at most the upper end.  Refuses up front
    beyond ``max_memory`` (:func:`estimate`).  ``stored``: the dtypes the arrays were stored in, for their sums'
    tolerance (:func:`class_weights`).
    """
    weights = class_weights(p, k, q=q, tau=tau, stored=stored)
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {METHODS}")
    chosen = auto_method(weights, max_memory) if method == "auto" else method
    if chosen == "eliminated" and not eliminated_applies(weights):
        raise InputError("the eliminated branch and bound needs k = 2 (at most 9 labels used) or k = 3 with few "
                         "inputs carrying weight (at most 8 dimensions in all)")
    if chosen == "quartic-sos" and quartic_sos_size(weights) is None:
        raise InputError("the quartic SOS bound needs k = 2 or k = 3")
    if chosen == "fourier-exact" and not weights.translation_invariant:
        raise InputError("the fourier-exact bracket needs translation-invariant weights: q constant and "
                         "tau[x, y(x) + d] depending on d only (exactly)")
    from margintheory.runtime.budget import require

    require(estimate(weights, method=chosen, solver=solver, max_memory=max_memory), max_memory, time_limit,
            time_parameter="time_limit")
    # the branch and bound after quartic-sos only where it applies and fits the budget by itself (not counted
    # in the estimate above: the two run one after the other, and the second only when the first falls short)
    fallback = (method == "auto" and chosen == "quartic-sos" and eliminated_applies(weights)
                and estimate(weights, method="eliminated").bytes <= max_memory)
    if chosen == "fourier-exact":
        return _invariant_bracket(weights, max_memory, time_limit)
    if chosen == "quartic-sos":
        return _quartic_then_eliminated(weights, n_starts, seed, time_limit, fallback)
    if chosen == "eliminated":
        return _eliminated_bracket(weights, n_starts, seed, time_limit)
    return _relaxation_bracket(weights, chosen, n_starts, seed, solver, time_limit, max_memory)


def _quartic_then_eliminated(weights: ClassWeights, n_starts: int, seed: int | None, time_limit: float | None,
                             fallback: bool) -> SingleNeuronBracket:
    """``quartic-sos``; with ``fallback``, the branch and bound too when it fails or leaves a gap above
    :data:`AUTO_GAP`, and the narrower of the two brackets.  ``time_limit`` covers both: the branch and bound gets
    what the SOS bound left (none left: the SOS bracket, or its failure, stands)."""
    from margintheory.errors import SolverError

    t0 = time.perf_counter()

    def left() -> float | None:
        return None if time_limit is None else time_limit - (time.perf_counter() - t0)

    try:
        b = _quartic_bracket(weights, n_starts, seed, time_limit)
    except SolverError as exc:
        rest = left()
        if not fallback or (rest is not None and rest <= 0):
            raise
        e = _eliminated_bracket(weights, n_starts, seed, rest)
        e.certification += f"; auto: quartic-sos failed first ({exc})"
        return e
    rest = left()
    if fallback and not b.relative_gap <= AUTO_GAP and (rest is None or rest > 0):
        e = _eliminated_bracket(weights, n_starts, seed, rest)
        if e.relative_gap < b.relative_gap:
            e.certification += f"; auto: quartic-sos left the relative gap {b.relative_gap:.2e}"
            return e
    return b


def estimate(weights: ClassWeights, *, method: str = "auto", solver: str = "CLARABEL",
             max_memory: float = 2 * 2**30) -> Estimate:
    """Memory and time of :func:`class_weighted_single_neuron` before anything is allocated (``auto`` resolved by
    :func:`auto_method` for ``max_memory``): the proved path is the uniform path's estimate plus a few
    ``(p^k, p)`` arrays; ``quartic-sos`` by :func:`margintheory.solvers.quartic_sos.estimate_bytes` (and, for
    ``quartic-sos+eliminated``, the branch and bound run after it: the larger memory); a relaxation is sized by
    :func:`margintheory.solvers.cost.single_neuron_estimate` (``auto`` without a cheaper path may end in the generic
    relaxation in ``(k+1) p`` variables, so it is sized as that)."""
    from margintheory.solvers.cost import single_neuron_estimate

    p, k = weights.problem.p, weights.problem.k
    arrays = 8.0 * p**k * (p + 4) * 3
    if method == "auto" and not weights.translation_invariant:
        method = auto_method(weights, max_memory)
        method = "generic" if method == "auto" else method
    if method == "quartic-sos":
        from margintheory.solvers.quartic_sos import estimate_bytes, estimate_seconds

        n = quartic_sos_size(weights) or 0
        return Estimate(f"the class-weighted single-neuron bracket for p = {p}, k = {k} (the first-level SOS bound of "
                        f"a quartic form in {n} variables)", estimate_bytes(n) + arrays, estimate_seconds(n))
    if method == "eliminated":
        return _eliminated_estimate(weights, arrays)
    if method == "fourier-exact" or (method == "auto" and weights.translation_invariant):
        est = single_neuron_estimate(p, k, solver=solver, method="fourier-exact")
    else:
        est = single_neuron_estimate(p, k, solver=solver, method=method)
    what = f"the class-weighted single-neuron bracket for p = {p}, k = {k}"
    return Estimate(what, est.bytes + arrays, est.seconds)


def _eliminated_estimate(weights: ClassWeights, arrays: float) -> Estimate:
    from margintheory.solvers.weighted_bnb import estimate_bytes

    p, k = weights.problem.p, weights.problem.k
    rows = np.any(weights.q[:, None] * weights.tau != 0, axis=1)
    used = int(np.count_nonzero(np.any(weights.tau[rows] != 0, axis=0) | np.isin(np.arange(p), weights.labels[
        rows])))
    return Estimate(f"the class-weighted single-neuron bracket for p = {p}, k = {k} (w eliminated, branch and "
                    "bound)", estimate_bytes(p, k, int(rows.sum()), used) + arrays, None)
