"""The optimal single-neuron set of Lemma C.15 against an independent computation of the single-neuron objective.

A neuron is in the optimal set exactly when its class-weighted objective (uniform weights, Definitions C.12-C.13)
reaches ``gamma* ||theta_i||^(k+1)``; the Fourier test (single frequency, equal amplitudes, aligned phases) must
agree with that on every family below, including neurons that pass all sub-checks but one.  Dropping a sub-check
(single frequency, equal amplitudes, phase alignment) makes one family disagree.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from margintheory.core.network import PolyNetwork
from margintheory.engines.fourier import neuron_fourier


def gamma_formula(p: int, k: int) -> float:
    return 2 * math.factorial(k) / ((2 * k + 2) ** ((k + 1) / 2) * (p - 1) * p ** ((k - 1) / 2))


def objective_ratio(u: np.ndarray, w: np.ndarray) -> float:
    """Brute force: E_a[f(a)[y] - mean_{c != y} f(a)[c]] / (gamma* ||theta||^(k+1)) for one neuron (u: (k, p))."""
    k, p = u.shape
    total = 0.0
    for a in itertools.product(range(p), repeat=k):
        act = sum(u[j, a[j]] for j in range(k)) ** k
        y = sum(a) % p
        total += act * (w[y] - (w.sum() - w[y]) / (p - 1))
    norm = math.sqrt(float((u**2).sum() + (w**2).sum()))
    return total / p**k / (gamma_formula(p, k) * norm ** (k + 1))


def cosine(p: int, zeta: int, phase: float, amp: float = 1.0) -> np.ndarray:
    return amp * np.cos(phase + 2 * np.pi * zeta * np.arange(p) / p)


def neuron(p: int, k: int, family: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    zeta = int(rng.integers(1, (p - 1) // 2 + 1))
    phases = rng.uniform(-np.pi, np.pi, size=k)
    if family == "optimal":
        return np.array([cosine(p, zeta, t) for t in phases]), cosine(p, zeta, phases.sum())
    if family == "two frequencies, equal norms, aligned":  # fails only the single-frequency sub-check
        other = zeta % ((p - 1) // 2) + 1
        extra = rng.uniform(-np.pi, np.pi, size=k)
        u = np.array([cosine(p, zeta, t) + cosine(p, other, e, 0.3) for t, e in zip(phases, extra, strict=True)])
        return u, cosine(p, zeta, phases.sum()) + cosine(p, other, extra.sum(), 0.3)
    if family == "unequal amplitudes, single frequency, aligned":  # fails only the equal-amplitude sub-check
        amps = np.ones(k + 1)
        amps[int(rng.integers(0, k + 1))] = 1.5
        u = np.array([cosine(p, zeta, t, a) for t, a in zip(phases, amps[:k], strict=True)])
        return u, cosine(p, zeta, phases.sum(), amps[k])
    if family == "misaligned phases":  # fails only the phase sub-check
        return np.array([cosine(p, zeta, t) for t in phases]), cosine(p, zeta, phases.sum() + 0.5)
    raise ValueError(family)


FAMILIES = ["optimal", "two frequencies, equal norms, aligned", "unequal amplitudes, single frequency, aligned",
            "misaligned phases"]


@pytest.mark.parametrize("p,k", [(5, 2), (7, 2), (5, 3)])
@pytest.mark.parametrize("family", FAMILIES)
def test_optimal_set_agrees_with_the_brute_force_objective(p, k, family):
    rng = np.random.default_rng(100 * p + 10 * k + FAMILIES.index(family))
    pairs = [neuron(p, k, family, rng) for _ in range(3)]
    net = PolyNetwork(np.stack([u for u, _ in pairs]), np.stack([w for _, w in pairs]))
    ratios = np.array([objective_ratio(u, w) for u, w in pairs])
    assert np.all(ratios <= 1 + 1e-12)  # Lemma C.15: gamma* bounds every neuron
    optimal = ratios >= 1 - 1e-9
    assert optimal.all() == (family == "optimal") and (optimal.any() == optimal.all())
    nf = neuron_fourier(net)
    assert np.array_equal(nf.in_optimal_set, optimal), (family, ratios)
    # each non-optimal family passes every sub-check but its own
    sub = {"single": nf.single_frequency, "equal": nf.equal_amplitudes, "aligned": nf.phase_aligned}
    failing = {"two frequencies, equal norms, aligned": "single", "misaligned phases": "aligned",
               "unequal amplitudes, single frequency, aligned": "equal"}.get(family)
    for name, values in sub.items():
        assert values.all() == (name != failing), (family, name)
