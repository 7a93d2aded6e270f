"""Fourier tools (docs/theory.md#lemma-c14).  DFT convention ``f^(j) = sum_x f(x) exp(-2 pi i j x / p)`` (numpy FFT).

* per weight vector: spectrum, one-sided power (``+j`` and ``-j`` folded), dominant frequency, max normalized power;
* per neuron: the common frequency, amplitudes and phases of ``v[x] = A cos(phi + 2 pi zeta x / p)``
  (``v^(zeta) = (p A / 2) e^{i phi}``), and the residual of ``phi_u1 + ... + phi_uk = phi_w (mod 2 pi)``;
* the optimal single-neuron set of Lemma C.15: single frequency, equal amplitudes, aligned phases;
* frequency coverage and Lemma C.20's ``f^(j,...,j,-j)`` from single-neuron DFTs (Lemma C.14's fully mixed term);
* :func:`fourier_summary`: the statistics a training run records per step (Li et al. Fig. 4.2, Morwani et al.
  Fig. 7.4): mean max normalized power of the neurons' vectors, its norm-weighted mean, frequencies covered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from margintheory.core.network import PolyNetwork

DEFAULT_SPARSITY_TOL = 1e-8


def dft(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """``x^(j) = sum_t x[t] exp(-2 pi i j t / p)`` along ``axis`` (numpy's FFT convention)."""
    return np.fft.fft(np.asarray(x, dtype=np.float64), axis=axis)


def one_sided_power(v: np.ndarray) -> np.ndarray:
    """Power per frequency ``0..floor(p/2)`` with ``+j`` and ``-j`` folded: ``|v^(j)|^2 + |v^(-j)|^2`` for ``0<j<p/2``.

    Works along the last axis; by Parseval the entries sum to ``p * ||v||^2``.
    """
    F = dft(v)
    P = np.abs(F) ** 2
    p = P.shape[-1]
    half = p // 2
    out = P[..., : half + 1].copy()
    j = np.arange(1, (p - 1) // 2 + 1)
    out[..., j] += P[..., p - j]
    return out


def max_normalized_power(v: np.ndarray) -> np.ndarray:
    """``max_j P(j) / sum_j P(j)`` with the one-sided power ``P`` (1 = a single frequency; 0 for the zero vector)."""
    P = one_sided_power(v)
    tot = P.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(tot > 0, P.max(axis=-1) / np.where(tot > 0, tot, 1.0), 0.0)
    return r


def dominant_frequency(v: np.ndarray) -> np.ndarray:
    """The frequency in ``0..floor(p/2)`` carrying the most one-sided power."""
    return np.argmax(one_sided_power(v), axis=-1)


def wrap_angle(x: np.ndarray) -> np.ndarray:
    """Reduce angles to ``(-pi, pi]``."""
    y = np.mod(np.asarray(x) + math.pi, 2 * math.pi) - math.pi
    return np.where(y == -math.pi, math.pi, y)


@dataclass
class NeuronFourier:
    """Per-neuron Fourier description; vectors are ordered ``u_1, ..., u_k, w`` (axis 1 of the arrays)."""

    p: int
    k: int
    frequency: np.ndarray  # (m,) dominant frequency of the whole neuron (power summed over its k+1 vectors)
    vector_frequency: np.ndarray  # (m, k+1) dominant frequency of each vector
    max_power: np.ndarray  # (m, k+1) max normalized power of each vector
    amplitudes: np.ndarray  # (m, k+1) amplitude A of the component at the neuron's frequency
    phases: np.ndarray  # (m, k+1) phase phi of that component
    norms: np.ndarray  # (m, k+1) Euclidean norm of each vector
    phase_residual: np.ndarray  # (m,) wrap(phi_u1 + ... + phi_uk - phi_w)
    tolerance: float

    @property
    def single_frequency(self) -> np.ndarray:
        """Every vector of the neuron has (within tolerance) all its power at the neuron's nonzero frequency."""
        same = np.all(self.vector_frequency == self.frequency[:, None], axis=1)
        sparse = np.all(self.max_power >= 1.0 - self.tolerance, axis=1)
        nonzero = (self.frequency > 0) & (2 * self.frequency != self.p)
        return same & sparse & nonzero

    @property
    def equal_amplitudes(self) -> np.ndarray:
        """``||u_1|| = ... = ||u_k|| = ||w||`` within the relative tolerance (Lemma C.15's AM-GM equality case)."""
        top = self.norms.max(axis=1)
        return (top > 0) & (self.norms.max(axis=1) - self.norms.min(axis=1) <= self.tolerance * np.maximum(top, 1e-300))

    @property
    def phase_aligned(self) -> np.ndarray:
        """``|phi_u1 + ... + phi_uk - phi_w| <= tolerance`` (mod 2 pi), the sign condition of Lemma C.15."""
        return np.abs(self.phase_residual) <= math.sqrt(self.tolerance) * 2 * math.pi

    @property
    def in_optimal_set(self) -> np.ndarray:
        """Single frequency, equal amplitudes and aligned phases: the maximizers of the single-neuron problem."""
        return self.single_frequency & self.equal_amplitudes & self.phase_aligned


def neuron_fourier(net: PolyNetwork, tolerance: float = DEFAULT_SPARSITY_TOL) -> NeuronFourier:
    """Fourier description of every neuron of ``net`` (vectors ``u_1..u_k, w``).

    Phases: ``u_j[a] = A cos(phi_j + 2 pi zeta a / p)`` and ``w[c] = A cos(phi_w + 2 pi zeta c / p)`` with the neuron's
    frequency ``zeta``; then ``f(a)[c]`` contains ``cos(phi_1+...+phi_k - phi_w + 2 pi zeta (a_1+...+a_k - c)/p)``,
    which favours the correct label exactly when the residual ``phi_1+...+phi_k - phi_w`` is 0 (Lemma C.15).
    The phase tolerance is ``2 pi sqrt(tolerance)`` because the phase of a vector with relative leakage ``t`` in its
    power is perturbed by ``O(sqrt(t))``.
    """
    p, k = net.p, net.k
    V = np.concatenate([net.U, net.W[:, None, :]], axis=1)  # (m, k+1, p)
    F = dft(V)
    P1 = one_sided_power(V)
    freq = np.argmax(P1.sum(axis=1), axis=-1)
    vfreq = np.argmax(P1, axis=-1)
    tot = P1.sum(axis=-1)
    maxp = np.where(tot > 0, P1.max(axis=-1) / np.where(tot > 0, tot, 1.0), 0.0)
    comp = np.take_along_axis(F, freq[:, None, None].repeat(k + 1, axis=1), axis=-1)[..., 0]
    amps = 2.0 * np.abs(comp) / p
    phases = np.angle(comp)
    resid = wrap_angle(phases[:, :k].sum(axis=1) - phases[:, k])
    norms = np.linalg.norm(V, axis=-1)
    return NeuronFourier(p, k, freq, vfreq, maxp, amps, phases, norms, resid, tolerance)


def frequency_histogram(net: PolyNetwork) -> np.ndarray:
    """Number of neurons whose dominant frequency is ``j``, for ``j = 0..floor(p/2)``."""
    nf = neuron_fourier(net)
    return np.bincount(nf.frequency, minlength=net.p // 2 + 1)


def multidim_dft_theory(net: PolyNetwork) -> np.ndarray:
    """``f^(j,...,j,-j)`` for ``j = 0..p-1`` via single-neuron DFTs (Lemmas C.14 and C.20).

    For ``j != 0`` only the fully mixed monomial of ``(u_1[a_1]+...+u_k[a_k])^k`` survives the sum over inputs, so
    ``f^(j,...,j,-j) = k! sum_i w_i^(-j) prod_l u_{i,l}^(j)`` (with ``w^(-j)`` from ``e^{+2 pi i j c/p}``).
    The exhaustive engine computes the same quantity directly from the logits
    (:meth:`margintheory.engines.margins.MarginResult.multidim_dft`); agreement of the two is a check of Lemma C.14.
    The ``j = 0`` entry returned here is not given by this formula and is set to NaN.
    """
    Fu = dft(net.U)  # (m, k, p)
    Fw = dft(net.W)  # (m, p)
    p = net.p
    j = np.arange(p)
    val = math.factorial(net.k) * np.sum(Fw[:, (-j) % p] * np.prod(Fu, axis=1), axis=0)
    val = val.astype(complex)
    val[0] = np.nan
    return val


#: a neuron is *sparse* when every one of its vectors has at least this max normalized power (``frequencies_covered``)
SPARSE_THRESHOLD = 0.9


@dataclass(frozen=True)
class FourierSummary:
    """Fourier statistics of the neurons (:func:`fourier_summary`)."""

    mean_max_power: float
    weighted_max_power: float
    frequencies_covered: int
    neuron_max_power: np.ndarray  # (m,) mean over the neuron's k+1 vectors
    dominant_frequency: np.ndarray  # (m,) frequency with most one-sided power summed over the neuron's vectors


def fourier_summary(U: np.ndarray, W: np.ndarray) -> FourierSummary:
    """One-sided spectra of ``u_1..u_k, w`` of every neuron (``U`` ``(m, k, p)``, ``W`` ``(m, p)``):

    * ``mean_max_power``: mean over neurons and their ``k+1`` vectors of ``max_j P(j) / sum_j P(j)``;
    * ``weighted_max_power``: the neuron's mean weighted by ``||theta_i||^(k+1)`` (its share of the norm budget;
      tiny, unused neurons do not count);
    * ``frequencies_covered``: frequencies ``1..(p-1)/2`` that are the dominant frequency of a *sparse* neuron
      (every vector's max power ``>= SPARSE_THRESHOLD``)."""
    V = np.concatenate([U, W[:, None, :]], axis=1)
    P = one_sided_power(V)  # (m, k+1, floor(p/2)+1)
    tot = P.sum(axis=-1)
    vec_max = np.where(tot > 0, P.max(axis=-1) / np.where(tot > 0, tot, 1.0), 0.0)
    dom = np.argmax(P.sum(axis=1), axis=-1)
    weights = tot.sum(axis=1) ** ((U.shape[1] + 1) / 2.0)  # (p ||theta_i||^2)^((k+1)/2) by Parseval
    neuron_max = vec_max.mean(axis=1)
    weighted = float(np.sum(weights * neuron_max) / weights.sum()) if weights.sum() > 0 else 0.0
    sparse = np.all(vec_max >= SPARSE_THRESHOLD, axis=1) & (dom > 0)
    p = U.shape[2]
    covered = len(set(dom[sparse].tolist()) & set(range(1, (p - 1) // 2 + 1)))
    return FourierSummary(float(vec_max.mean()), weighted, covered, neuron_max, dom)
