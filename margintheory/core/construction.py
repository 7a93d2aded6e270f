"""The max-margin construction of Lemmas C.16-C.18 of Li et al., Fourier circuits (docs/theory.md#construction).

Per frequency ``zeta`` the target ``cos_zeta(a_1 + ... + a_k - c)`` is expanded (C.21) into ``2^k`` products of
``k+1`` single-frequency factors; each product ``prod_j x_j`` of the ``k`` input factors is rewritten by the
sum-to-product identity (Lemma C.16) as ``(1/(2^k k!)) sum_s eps(s) (s . x)^k``, and ``s``, ``-s`` give the same
neuron, so ``2^(k-1)`` neurons per term, ``2^(2k-1)`` per frequency, ``2^(2k-1) (p-1)/2`` in all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from margintheory.core.expansions import cosine_expansion_terms, half_sum_to_product_terms
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.core.theory import frequencies
from margintheory.runtime import progress


@dataclass(frozen=True)
class NeuronSpec:
    """One construction neuron, exactly: ``coefficient * (sum_j signs[j] phi_{term[j]}(a_j))^k * phi_{term[k]}(-c)``.

    ``phi_0 = cos_zeta``, ``phi_1 = sin_zeta`` with ``cos_zeta(x) = cos(2 pi zeta x / p)``; ``signs[0] == +1``.
    """

    frequency: int
    term: tuple[int, ...]
    signs: tuple[int, ...]
    coefficient: sp.Rational


def construction_neuron_specs(p: int | ModularAddition, k: int | None = None) -> list[NeuronSpec]:
    """All ``2^(2k-1) (p-1)/2`` neurons (Lemma C.18): frequency x cosine-expansion term x half sign vector.

    ``p`` is a :class:`~margintheory.core.problems.ModularAddition` or an integer (with ``k``; validated here)."""
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    base = sp.Rational(2, 2**k * math.factorial(k))  # 1/(2^(k-1) k!) from the half-sum identity
    return [
        NeuronSpec(zeta, b, s, base * sign_b * sign_s)
        for zeta in frequencies(p)
        for b, sign_b in cosine_expansion_terms(k)
        for s, sign_s in half_sum_to_product_terms(k)
    ]


def _phi(kind: int, zeta: int, p: int, x: np.ndarray) -> np.ndarray:
    angle = 2.0 * np.pi * ((zeta * x) % p) / p  # reduce mod p first: exact argument, smaller rounding
    return np.sin(angle) if kind else np.cos(angle)


def build_construction(p: int | ModularAddition, k: int | None = None, *, normalize: bool = True,
                       family: str = "lemma-c18") -> PolyNetwork:
    """The network of Lemma C.18 as float64 weights, with per-neuron metadata ``frequency``, ``term``, ``sign``.

    ``p`` is a :class:`~margintheory.core.problems.ModularAddition` (validated when it was made) or an
    integer with ``k``.

    ``family`` other than ``"lemma-c18"`` builds a smaller max-margin network from a per-frequency phase measure of
    :mod:`margintheory.core.phase_measures` (``"cyclic-lattice"``: ``2 * 3^(k-1)`` neurons per frequency;
    ``"smallest-known"``): see :func:`build_phase_measure_network`.

    Each neuron's coefficient ``c`` is split evenly over its ``k+1`` vectors (``|c|^(1/(k+1))`` each, the sign on
    ``w``): by homogeneity the neuron function is unchanged and the vectors get equal norms, as the optimal
    single-neuron set requires (Lemma C.15).  With ``normalize`` the network is scaled to ``||theta||_{2,k+1} = 1``.
    Intended network function (before normalization): ``f(a)[c] = sum_zeta cos_zeta(a_1 + ... + a_k - c)``.
    """
    problem = as_problem(p, k)
    p, k = problem.p, problem.k
    if family != "lemma-c18":
        from margintheory.core.phase_measures import family_measure

        return build_phase_measure_network(p, family_measure(family, k), normalize=normalize)
    specs = construction_neuron_specs(problem)
    x = np.arange(p)
    U = np.empty((len(specs), k, p))
    W = np.empty((len(specs), p))
    phi = {(kind, z): _phi(kind, z, p, x) for z in frequencies(p) for kind in (0, 1)}  # one table per (kind, zeta)
    coefficient = {c: float(c) for c in {spec.coefficient for spec in specs}}  # two values: +-1/(2^(k-1) k!)
    step = max(1, len(specs) // 100)
    for i, spec in enumerate(specs):
        if i % step == 0:
            progress.report("building the construction", i, len(specs))
        c = coefficient[spec.coefficient]
        amp = abs(c) ** (1.0 / (k + 1))
        for j in range(k):
            U[i, j] = spec.signs[j] * amp * phi[spec.term[j], spec.frequency]
        W[i] = math.copysign(amp, c) * phi[spec.term[k], spec.frequency][(-x) % p]
    progress.report("building the construction", len(specs), len(specs))
    meta: dict[str, np.ndarray] = {
        "frequency": np.array([s.frequency for s in specs], dtype=np.int64),
        "term": np.array([s.term for s in specs], dtype=np.int8),
        "sign": np.array([s.signs for s in specs], dtype=np.int8),
    }
    net = PolyNetwork(U, W, meta)
    return net.normalized() if normalize else net


def build_phase_measure_network(p: int, measure, *, normalize: bool = True) -> PolyNetwork:
    """One neuron per frequency ``zeta = 1..(p-1)/2`` and atom ``(theta, w)`` of the measure (``PhaseMeasure``):
    ``u_j[x] = A cos(theta_j + 2 pi zeta x/p)``, ``w[c] = A cos(theta_1 + ... + theta_k + 2 pi zeta c/p)``,
    ``A = w^(1/(k+1))`` (equal amplitudes, Lemma C.15).  Every angle is reduced exactly as an integer fraction of
    ``2 pi`` before the cosine.  Network function (unnormalized): ``(k!/2^k) sum_zeta cos_zeta(a_1+...+a_k-c)`` when
    the measure's unwanted moments vanish (:mod:`margintheory.core.phase_measures`).  Metadata (the exact description,
    saved with the network): ``frequency``, ``phase`` (numerators over ``phase_denominator``), ``measure_weight``
    and its exact ``measure_weight_numerator`` / ``measure_weight_denominator``."""
    k, q = measure.k, measure.denominator
    x = np.arange(p)
    zetas = frequencies(p)
    n = measure.size
    amp = measure.float_weights() ** (1.0 / (k + 1))
    full = np.concatenate([measure.points, measure.points.sum(axis=1, keepdims=True)], axis=1)  # (n, k+1)
    U = np.empty((len(zetas) * n, k, p))
    W = np.empty((len(zetas) * n, p))
    for i, z in enumerate(zetas):
        # angle = 2 pi (r/q + z x/p) = 2 pi ((r p + z x q) mod (p q)) / (p q)
        num = (full[:, :, None] * p + z * x[None, None, :] * q) % (p * q)
        vals = amp[:, None, None] * np.cos(2.0 * np.pi * num / (p * q))
        U[i * n:(i + 1) * n] = vals[:, :k]
        W[i * n:(i + 1) * n] = vals[:, k]
    meta = {"frequency": np.repeat(np.array(zetas, dtype=np.int64), n),
            "phase": np.tile(measure.points, (len(zetas), 1)),
            "phase_denominator": np.full(len(zetas) * n, q, dtype=np.int64),
            "measure_weight": np.tile(measure.float_weights(), len(zetas)),
            "measure_weight_numerator": np.tile(np.array([w.numerator for w in measure.weights], dtype=np.int64),
                                                len(zetas)),
            "measure_weight_denominator": np.tile(np.array([w.denominator for w in measure.weights],
                                                           dtype=np.int64), len(zetas))}
    net = PolyNetwork(U, W, meta)
    return net.normalized() if normalize else net
