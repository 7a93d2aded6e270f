"""The per-frequency width problem: positive measures on the phase torus with vanishing unwanted moments.

Every neuron of a max-margin network is in the optimal single-neuron set (weak duality with the uniform dual,
Lemma C.6 of Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers", arXiv:2402.09469),
i.e. (Lemma C.15) at one frequency ``zeta`` it is, up to its scale,

    ``u_j[x] = cos(theta_j + 2 pi zeta x / p)``,  ``w[c] = cos(theta_1 + ... + theta_k + 2 pi zeta c / p)``.

A neuron is thus a point ``theta`` of the torus ``T^k`` (one per frequency) and a network at frequency ``zeta`` is a
positive measure ``mu = sum_a w_a delta_{theta_a}``.  Expanding ``(sum_j cos(.))^k cos(.)`` into exponentials, the
term with exponents ``n`` on the inputs (``|n|_1 <= k``, ``|n|_1 = k mod 2``) and ``eps = +-1`` on the class carries
the factor ``mu^(m) = sum_a w_a exp(i m . theta_a)`` with ``m = n + eps (1, ..., 1)``; only ``m = 0`` (the fully mixed
term ``k!/2^k cos(zeta(a_1 + ... + a_k - c))``, Lemma C.14) is wanted.  So the network is max-margin iff for every
frequency ``mu_zeta != 0`` and ``mu_zeta^(m) = 0`` for every *unwanted moment* ``m`` (:func:`unwanted_phase_moments`),
and the fewest neurons per frequency is the smallest support of such a measure.  Sufficiency holds for every odd
``p`` (the unwanted terms vanish identically); necessity needs ``p`` prime and ``p > 2k`` (no aliasing between the
patterns ``(zeta n, eps zeta) mod p``).  Derivation: docs/theory.md ("smaller networks").

This module holds the measures (exact phases ``2 pi r / Q`` with ``r`` integer, rational weights), their exact moment
check, and the families: the construction of Lemma C.18 in this language (``2^(2k-1)`` atoms on ``(Z_4)^k``), the
cyclic lattice family (``2 * 3^(k-1)`` atoms, every ``k >= 2``) and the parity design (``(k+1) 2^(k-1)`` atoms,
every ``k >= 3``; 16, 40 and 96 for ``k = 3, 4, 5``, the proved minima).  Each family's general-``k`` proof is a
written argument (:mod:`margintheory.symbolic.lattice_family`, :mod:`margintheory.symbolic.parity_design`); every
instance ``k <= 8`` is checked exactly.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

FAMILIES = ("lemma-c18", "cyclic-lattice", "parity-design", "smallest-known")


# ---------------------------------------------------------------- the unwanted moments

def l1_ball(k: int, radius: int) -> np.ndarray:
    """All ``n in Z^k`` with ``|n|_1 <= radius`` (int64, shape ``(count, k)``)."""
    rows = np.zeros((1, 0), dtype=np.int64)
    left = np.array([radius], dtype=np.int64)
    for _ in range(k):
        parts, rests = [], []
        for v in range(-radius, radius + 1):
            ok = left >= abs(v)
            if np.any(ok):
                parts.append(np.concatenate([rows[ok], np.full((int(ok.sum()), 1), v, dtype=np.int64)], axis=1))
                rests.append(left[ok] - abs(v))
        rows, left = np.concatenate(parts), np.concatenate(rests)
    return rows


@lru_cache(maxsize=16)
def unwanted_phase_moments(k: int) -> np.ndarray:
    """The set ``M_k = {n + eps (1,...,1) : |n|_1 <= k, |n|_1 = k mod 2, eps = +-1} minus {0}``, sorted, read-only.

    ``mu^(m) = 0`` for every ``m`` in ``M_k`` is the per-frequency max-margin condition (module docstring).
    ``M_k = -M_k``; every ``m`` has an even coordinate sum.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    ball = l1_ball(k, k)
    n = ball[(np.abs(ball).sum(axis=1) - k) % 2 == 0]
    m = np.concatenate([n + 1, n - 1])
    m = np.unique(m[np.any(m != 0, axis=1)], axis=0)
    m.setflags(write=False)
    return m


# ---------------------------------------------------------------- measures

@dataclass(frozen=True)
class PhaseMeasure:
    """``mu = sum_a weights[a] delta_{2 pi points[a] / denominator}`` on ``T^k`` (weights positive, summing to 1).

    ``cyclic_generator`` (optional) records that ``points = t g mod denominator`` for ``t = 0..denominator-1``
    (uniform weights): the measure is the Haar measure of a cyclic subgroup and its moments are known in closed form.
    """

    k: int
    denominator: int
    points: np.ndarray
    weights: tuple[Fraction, ...]
    name: str
    description: str
    cyclic_generator: tuple[int, ...] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        pts = np.asarray(self.points, dtype=np.int64) % self.denominator
        if pts.ndim != 2 or pts.shape[1] != self.k or len(pts) != len(self.weights):
            raise ValueError("points must be (n, k) with one weight each")
        if any(w <= 0 for w in self.weights) or sum(self.weights) != 1:
            raise ValueError("weights must be positive rationals summing to 1")
        if len({tuple(r) for r in pts}) != len(pts):
            raise ValueError("atoms must be distinct")
        pts.setflags(write=False)
        object.__setattr__(self, "points", pts)

    @property
    def size(self) -> int:
        """Number of atoms = neurons per frequency."""
        return len(self.points)

    def angles(self) -> np.ndarray:
        """Phases in radians, ``(n, k)``."""
        return 2 * np.pi * self.points / self.denominator

    def float_weights(self) -> np.ndarray:
        return np.array([float(w) for w in self.weights])

    def moments(self, m: np.ndarray) -> np.ndarray:
        """``mu^(m)`` in floating point for the rows of ``m``."""
        ang = 2 * np.pi * ((np.asarray(m) @ self.points.T) % self.denominator) / self.denominator
        return np.exp(1j * ang) @ self.float_weights()


@dataclass(frozen=True)
class MomentCheck:
    """Exact verdict on ``mu^(m) = 0`` for every unwanted ``m`` (``failures``: up to 10 offending ``m``)."""

    passed: bool
    checked: int
    method: str
    failures: list[tuple[int, ...]]
    seconds: float


def exact_moment_check(measure: PhaseMeasure) -> MomentCheck:
    """Decide ``mu^(m) = 0`` for every ``m`` in ``M_k`` without floating point.

    Cyclic subgroups: ``mu^(m) = 1`` if ``N | m.g`` and ``0`` otherwise (geometric series of an ``N``-th root of
    unity), an integer test.  Otherwise ``mu^(m) = sum_r c_r omega_Q^r`` with integer counts ``c`` (weights times
    their common denominator); it vanishes iff ``c`` reduces to zero modulo the cyclotomic polynomial ``Phi_Q``.
    """
    from margintheory.core.cyclotomic import reduce_mod_cyclotomic

    t0 = time.perf_counter()
    M = unwanted_phase_moments(measure.k)
    Q = measure.denominator
    if measure.cyclic_generator is not None:
        g = np.array(measure.cyclic_generator, dtype=np.int64)
        expected = {tuple(int(v) for v in (t * g) % Q) for t in range(Q)}
        if expected != {tuple(int(v) for v in r) for r in measure.points} or len(set(measure.weights)) != 1:
            return MomentCheck(False, 0, "cyclic subgroup: the atoms are not {t g mod N} with equal weights", [],
                               time.perf_counter() - t0)
        bad = M[(M @ g) % Q == 0]
        shown = tuple(int(v) for v in g)
        return MomentCheck(len(bad) == 0, len(M), f"integer test N = {Q} does not divide m.g, g = {shown}",
                           [tuple(int(v) for v in b) for b in bad[:10]], time.perf_counter() - t0)
    scale = math.lcm(*(w.denominator for w in measure.weights))
    iw = np.array([int(w * scale) for w in measure.weights], dtype=np.int64)
    fails: list[tuple[int, ...]] = []
    for chunk in range(0, len(M), 4096):
        part = M[chunk:chunk + 4096]
        res = (part @ measure.points.T) % Q
        counts = np.zeros((len(part), Q), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(len(part)), res.shape[1]), res.ravel()), np.tile(iw, len(part)))
        nonzero = np.any(reduce_mod_cyclotomic(counts) != 0, axis=1)
        fails += [tuple(int(v) for v in r) for r in part[nonzero]]
    return MomentCheck(not fails, len(M), f"integer counts reduced modulo Phi_{Q}", fails[:10],
                       time.perf_counter() - t0)


# ---------------------------------------------------------------- families

def lemma_c18_measure(k: int) -> PhaseMeasure:
    """The construction of Lemma C.18 at one frequency, as a phase measure on ``(Z_4)^k`` with ``2^(2k-1)`` atoms.

    Neuron ``coefficient (sum_j s_j phi_{b_j}(a_j))^k phi_{b_w}(-c)`` with ``phi_0 = cos``, ``phi_1 = sin``:
    ``sin x = cos(x - pi/2)``, ``-1 = e^{i pi}`` give ``theta_j = (2 [s_j = -1] - b_j) pi / 2``; the class phase is
    checked to equal ``theta_1 + ... + theta_k`` (mod ``2 pi``, up to the sign absorbed by the coefficient).
    """
    from margintheory.core.expansions import cosine_expansion_terms, half_sum_to_product_terms

    pts, wts = [], []
    for b, sign_b in cosine_expansion_terms(k):
        for s, sign_s in half_sum_to_product_terms(k):
            theta = [(2 * (sj < 0) - bj) % 4 for sj, bj in zip(s, b[:k], strict=True)]
            # phi_{b_w}(-c): cos(-x) = cos(x), sin(-x) = cos(x + pi/2); a negative coefficient adds pi
            theta_w = (b[k] + 2 * (sign_b * sign_s < 0)) % 4
            if (sum(theta) - theta_w) % 4:
                raise ArithmeticError("Lemma C.18 neuron violates theta_w = theta_1 + ... + theta_k")
            pts.append(theta)
            wts.append(Fraction(1, 2 ** (2 * k - 1)))
    return PhaseMeasure(k, 4, np.array(pts), tuple(wts), "lemma-c18",
                        f"2^(2k-1) = {2 ** (2 * k - 1)} atoms on (Z_4)^k",
                        source="Li et al., Fourier circuits, arXiv:2402.09469, Lemma C.18")


def cyclic_lattice_generator(k: int) -> tuple[int, tuple[int, ...]]:
    """``N = 2 * 3^(k-1)`` and ``g = (1, 3, ..., 3^(k-2), -2 * 3^(k-2)) mod N`` (``k >= 2``)."""
    if k < 2:
        raise ValueError("the cyclic lattice family needs k >= 2")
    n = 2 * 3 ** (k - 1)
    return n, tuple(3**j for j in range(k - 1)) + ((-2 * 3 ** (k - 2)) % n,)


def cyclic_lattice_measure(k: int) -> PhaseMeasure:
    """Uniform measure on the cyclic subgroup ``{2 pi t g / N : t in Z_N}`` of :func:`cyclic_lattice_generator`:
    ``2 * 3^(k-1)`` atoms per frequency, fewer than Lemma C.18's ``2^(2k-1)`` for every ``k >= 2``.

    Why it works (for every ``k``; exact integer check in :func:`exact_moment_check`): ``mu^(m) = [N | m.g]`` and
    ``N`` divides no ``m.g``, ``m`` in ``M_k`` -- in ``Z_2 x Z_{3^(k-1)}`` the generators are ``(1, 3^(j-1))``,
    ``j < k``, and ``(0, 3^(k-2))``; the 2-part forces ``n_k`` odd, and the 3-part is a base-3 representation whose
    digit weight (at least the balanced-ternary weight ``k - 1`` of the target) with the parity ``|n|_1 = k mod 2``
    leaves only ``n = -eps (1, ..., 1)``.  Proof for every ``k``: :mod:`margintheory.symbolic.lattice_family`.
    """
    n, g = cyclic_lattice_generator(k)
    pts = (np.arange(n)[:, None] * np.array(g)[None, :]) % n
    return PhaseMeasure(k, n, pts, tuple([Fraction(1, n)] * n), "cyclic-lattice",
                        f"uniform on the cyclic subgroup generated by 2 pi g / N, N = 2*3^(k-1) = {n}, g = {g}",
                        cyclic_generator=g, source="this package (search over cyclic phase lattices)")


def parity_design_points(k: int) -> np.ndarray:
    """``{t (1, ..., 1) + (k+1) h : t = 0..k, h in {0,1}^k with h_1 + h_2 + h_3 even}`` in ``(Z_{2(k+1)})^k``:
    ``(k+1) 2^(k-1)`` points (``k >= 3``)."""
    if k < 3:
        raise ValueError("the parity design needs k >= 3")
    half = [h for h in itertools.product((0, 1), repeat=k) if (h[0] + h[1] + h[2]) % 2 == 0]
    q = 2 * (k + 1)
    return np.array([[(t + (k + 1) * hj) % q for hj in h] for t in range(k + 1) for h in half], dtype=np.int64)


def parity_design_measure(k: int) -> PhaseMeasure:
    """Equal weights on :func:`parity_design_points`: ``(k+1) 2^(k-1)`` neurons per frequency -- 16, 40, 96, 224,
    512 for ``k = 3..7`` (the cyclic lattice: 18, 54, 162, 486, 1458; Lemma C.18: 32, 128, 512, 2048, 8192), within
    a factor ``k + 1`` of the lower bound ``2^(k-1)`` and equal to the proved minimum for ``k = 3`` (16),
    ``k = 4`` (40) and ``k = 5`` (96, :mod:`margintheory.solvers.width_delsarte`).  Found by a search over unions
    of diagonal shifts ``t (1,...,1) + (Q/2) H`` of subspaces ``H`` of ``F_2^k``; its moments are checked exactly
    per ``k`` (:func:`exact_moment_check`; ``k <= 8`` in the tests and benchmarks).  ``k = 3`` is the 16-atom
    design.

    Why it works for every ``k >= 3`` (a written proof, ``argued`` for general ``k``; each ``k <= 8`` is checked
    exactly): the atoms are the product set ``{0..k} x H``, so ``mu^(m)`` is a diagonal character sum (zero unless
    ``2k+2`` divides the even sum ``m_1 + ... + m_k``) times a character sum over ``H`` (zero unless
    ``m mod 2`` is ``0`` or ``e_1 + e_2 + e_3``), and no unwanted ``m`` escapes both.  The proof and its
    step-by-step checks: :mod:`margintheory.symbolic.parity_design`."""
    pts = parity_design_points(k)
    n = len(pts)
    return PhaseMeasure(k, 2 * (k + 1), pts, tuple([Fraction(1, n)] * n), "parity-design",
                        f"{n} equal-weight atoms t(1,...,1) + (k+1)h on (Z_{2 * (k + 1)})^k, t = 0..k, h in {{0,1}}^k "
                        "with h_1 + h_2 + h_3 even (not a subgroup)",
                        source="this package (search over diagonal shifts of subspaces on phase lattices)")


def design16_measure() -> PhaseMeasure:
    """The 16-atom equal-weight design for ``k = 3`` (:func:`parity_design_measure` at ``k = 3``): the smallest
    support for ``k = 3`` (16 is also a lower bound, :mod:`margintheory.solvers.width_bounds`).  A 16-atom
    support was first found by the mixed-integer search on ``(Z_8)^3``
    (:func:`margintheory.solvers.width.search_phase_measure`); the weights are the unique solution on this support
    (:func:`margintheory.solvers.width.exact_weights_on_support`)."""
    return parity_design_measure(3)


def smallest_known_measure(k: int) -> PhaseMeasure:
    """The smallest measure this package knows for ``k``: Lemma C.18's for ``k = 1`` (2 atoms), the cyclic lattice
    for ``k = 2`` (6), the parity design for ``k >= 3`` (``(k+1) 2^(k-1)``)."""
    if k == 1:
        return lemma_c18_measure(1)
    if k == 2:
        return cyclic_lattice_measure(2)
    return parity_design_measure(k)


def family_measure(family: str, k: int) -> PhaseMeasure:
    """The per-frequency measure of a named family (:data:`FAMILIES`)."""
    if family == "lemma-c18":
        return lemma_c18_measure(k)
    if family == "cyclic-lattice":
        return cyclic_lattice_measure(k)
    if family == "parity-design":
        return parity_design_measure(k)
    if family == "smallest-known":
        return smallest_known_measure(k)
    raise ValueError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")


#: the smallest ``k`` at which each family of :data:`FAMILIES` exists (the cyclic lattice's generator needs two
#: coordinates, the parity design three: :func:`cyclic_lattice_generator`, :func:`parity_design_points`)
FAMILY_MIN_K = {"lemma-c18": 1, "cyclic-lattice": 2, "parity-design": 3, "smallest-known": 1}


def family_absent_reason(family: str, k: int) -> str | None:
    """Why the family does not exist at ``k`` (``"the parity design needs k >= 3"``), or ``None`` where it does.
    A sweep over families and ``k`` records such a pair as ``not-applicable`` instead of failing on it."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    least = FAMILY_MIN_K[family]
    return None if k >= least else f"the {family} family needs k >= {least}, not k = {k}"


def family_size(family: str, k: int) -> int | float:
    """Atoms per frequency of :func:`family_measure` from ``k`` alone, without building the measure (``inf`` for
    ``k > 128``: no such network can be built); for the up-front size checks."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    if k > 128:
        return math.inf
    if family == "smallest-known":
        family = {1: "lemma-c18", 2: "cyclic-lattice"}.get(k, "parity-design")
    if family == "cyclic-lattice":
        cyclic_lattice_generator(k)  # k >= 2
        return 2 * 3 ** (k - 1)
    if family == "parity-design":
        if k < 3:
            raise ValueError("the parity design needs k >= 3")
        return (k + 1) * 2 ** (k - 1)
    return theorem_width_per_frequency(k)


def theorem_width_per_frequency(k: int) -> int:
    """``2^(2k-1)`` (Lemma C.18)."""
    return 2 ** (2 * k - 1)
