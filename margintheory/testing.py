"""Hypothesis strategies for property-based tests of the max-margin theory (install ``margintheory[testing]``).

Only this module needs hypothesis (https://hypothesis.readthedocs.io); ``import margintheory`` works without it.
The package's own test suite draws its examples from here.

Strategies
----------
* :func:`odd_moduli` - odd ``p`` (optionally primes only), the papers' moduli.
* :func:`moduli_and_inputs` - ``(p, k)`` with ``p`` odd and ``p**k`` within a budget of points, so that an
  exhaustive check over all ``p^k`` inputs stays fast.
* :func:`networks` - random dense :class:`~margintheory.core.network.PolyNetwork` s (any weights).
* :func:`optimal_neurons` - one-neuron networks from the optimal single-neuron set of Lemma C.15 (Li, Liang, Shi,
  Song, Zhou, "Fourier circuits in neural networks", arXiv:2402.09469): a single frequency ``zeta``, equal
  amplitudes ``beta = sqrt(2/((k+1)p))`` and phases with ``theta_u1 + ... + theta_uk = theta_w``.
* :func:`perturbed_constructions` - the construction of Lemma C.18 plus a perturbation of controlled relative size.
* :func:`group_elements` - elements (indices) of a finite group of :mod:`margintheory.core.groups` (a group or
  its name).

Importing the module also registers :func:`networks` for ``st.from_type(PolyNetwork)``.

Seeds and shrinking: the random arrays are drawn from ``numpy.random.default_rng(seed)`` with the seed drawn by
hypothesis, so a failing example is replayed exactly from hypothesis's database; hypothesis shrinks ``p``, ``k``,
``m``, the perturbation size and the seed (not the individual weights) and prints the shrunk network itself.

Example 1 - the normalized margin is scale invariant (the network is ``(k+1)``-homogeneous):

    import math
    from hypothesis import given, settings, strategies as st
    from margintheory.engines.margins import exhaustive_margin
    from margintheory.testing import networks

    @settings(max_examples=20, deadline=None)
    @given(networks(max_p=7, max_k=3, max_m=4), st.floats(1e-3, 1e3))
    def test_normalized_margin_is_scale_invariant(net, alpha):
        a = exhaustive_margin(net)
        b = exhaustive_margin(net.scaled(alpha))
        assert math.isclose(a.normalized_margin, b.normalized_margin,
                            rel_tol=0, abs_tol=a.normalized_tolerance + b.normalized_tolerance)

    test_normalized_margin_is_scale_invariant()

Example 2 - no perturbation of the construction beats ``gamma*`` (the upper leg of the theorem, weak duality):

    from hypothesis import given, settings
    from margintheory import gamma_star
    from margintheory.engines.margins import exhaustive_margin
    from margintheory.testing import perturbed_constructions

    @settings(max_examples=20, deadline=None)
    @given(perturbed_constructions(5, 2, max_relative=1e-2))
    def test_perturbations_never_beat_gamma_star(case):
        res = exhaustive_margin(case.network)
        assert res.normalized_margin <= gamma_star(5, 2) + res.normalized_tolerance

    test_perturbations_never_beat_gamma_star()

Both examples are executed by the package's test suite (``tests/test_testing.py``), so they stay correct.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised only without hypothesis
    raise ImportError("margintheory.testing needs hypothesis: pip install 'margintheory[testing]'") from exc

from margintheory.core.network import PolyNetwork
from margintheory.core.theory import is_prime, optimal_neuron_beta

if TYPE_CHECKING:
    from margintheory.core.groups import FiniteGroup

__all__ = [
    "Perturbation", "group_elements", "moduli_and_inputs", "networks", "odd_moduli", "optimal_neurons",
    "perturbed_constructions", "seeds",
]


def seeds() -> st.SearchStrategy[int]:
    """Seeds for ``numpy.random.default_rng``."""
    return st.integers(0, 2**32 - 1)


def odd_moduli(min_value: int = 3, max_value: int = 31, *, primes_only: bool = False) -> st.SearchStrategy[int]:
    """Odd ``p`` in ``[min_value, max_value]`` (odd primes only with ``primes_only``)."""
    values = [p for p in range(max(3, min_value), max_value + 1, 1) if p % 2 and (not primes_only or is_prime(p))]
    if not values:
        raise ValueError(f"no odd modulus in [{min_value}, {max_value}]")
    return st.sampled_from(values)


def moduli_and_inputs(*, max_points: int = 4096, min_k: int = 1, max_k: int = 5, max_p: int = 31,
                      primes_only: bool = False) -> st.SearchStrategy[tuple[int, int]]:
    """``(p, k)`` with ``p`` odd, ``min_k <= k <= max_k`` and ``p**k <= max_points`` (the exhaustive check's size)."""
    pairs = [(p, k) for k in range(min_k, max_k + 1) for p in range(3, max_p + 1, 2)
             if p**k <= max_points and (not primes_only or is_prime(p))]
    if not pairs:
        raise ValueError("no (p, k) fits the budget")
    return st.sampled_from(pairs)


@st.composite
def networks(draw: st.DrawFn, p: int | None = None, k: int | None = None, *, min_m: int = 1, max_m: int = 6,
             max_p: int = 7, max_k: int = 3, scale: float = 1.0) -> PolyNetwork:
    """A dense network with standard-normal weights times ``scale`` (``p`` in ``3..max_p``, ``k`` in ``1..max_k``,
    ``m`` in ``min_m..max_m`` unless ``p`` / ``k`` are given)."""
    p = draw(st.integers(3, max_p)) if p is None else p
    k = draw(st.integers(1, max_k)) if k is None else k
    m = draw(st.integers(min_m, max_m))
    rng = np.random.default_rng(draw(seeds()))
    return PolyNetwork(scale * rng.normal(size=(m, k, p)), scale * rng.normal(size=(m, p)))


@st.composite
def optimal_neurons(draw: st.DrawFn, p: int, k: int) -> PolyNetwork:
    """A unit-norm one-neuron network in the optimal single-neuron set (Lemma C.15): frequency ``zeta`` in
    ``1..(p-1)/2``, ``u_j[a] = beta cos(2 pi zeta a/p + theta_j)``, ``w[c] = beta cos(2 pi zeta c/p + theta_w)`` with
    ``theta_w = theta_1 + ... + theta_k`` and ``beta = sqrt(2/((k+1)p))``; ``p`` odd."""
    if p % 2 == 0 or p < 3:
        raise ValueError(f"optimal neurons are defined for odd p >= 3, got {p}")
    zeta = draw(st.integers(1, (p - 1) // 2))
    thetas = [draw(st.floats(0.0, 2 * math.pi, allow_nan=False, exclude_max=True)) for _ in range(k)]
    beta = optimal_neuron_beta(p, k)
    x = 2 * math.pi * zeta * np.arange(p) / p
    U = np.stack([beta * np.cos(x + t) for t in thetas])[None]
    W = beta * np.cos(x + sum(thetas))[None]
    return PolyNetwork(U, W, {"frequency": np.array([zeta])})


@dataclass(frozen=True)
class Perturbation:
    """``network = base + relative_size * ||base||_F * direction`` with a unit (Frobenius) random ``direction``."""

    network: PolyNetwork
    base: PolyNetwork
    relative_size: float


@st.composite
def perturbed_constructions(draw: st.DrawFn, p: int, k: int, *, min_relative: float = 0.0,
                            max_relative: float = 1e-3, family: str = "lemma-c18") -> Perturbation:
    """The unit-norm construction of Lemma C.18 for ``(p, k)`` (or another max-margin ``family`` of
    :func:`~margintheory.core.construction.build_construction`, e.g. ``"smallest-known"``) plus a random perturbation
    whose Frobenius norm is ``relative_size`` (drawn in ``[min_relative, max_relative]``) times the construction's
    (up to float64 rounding of the sum: relative sizes below about ``1e-15`` are not resolved)."""
    from margintheory.core.construction import build_construction

    base = build_construction(p, k, family=family)
    eps = draw(st.floats(min_relative, max_relative, allow_nan=False, allow_subnormal=False))
    rng = np.random.default_rng(draw(seeds()))
    dU, dW = rng.normal(size=base.U.shape), rng.normal(size=base.W.shape)
    size = math.sqrt(float(np.sum(base.U**2) + np.sum(base.W**2)))
    unit = math.sqrt(float(np.sum(dU**2) + np.sum(dW**2)))
    f = eps * size / unit
    return Perturbation(PolyNetwork(base.U + f * dU, base.W + f * dW, base.metadata), base, eps)


# ``st.from_type(PolyNetwork)`` (and ``@given(net=...)`` with type inference) draws from :func:`networks`.
st.register_type_strategy(PolyNetwork, networks())


def group_elements(group: FiniteGroup | str) -> st.SearchStrategy[int]:
    """Element indices ``0..|G|-1`` of a :class:`~margintheory.core.groups.FiniteGroup`, or of the group a name
    such as ``"S4"`` or ``"C7"`` denotes (:func:`~margintheory.core.groups.parse_group`); 0 is the identity, and
    ``group.mul[a, b]`` is the index of the product."""
    if isinstance(group, str):
        from margintheory.core.groups import parse_group

        group = parse_group(group)
    return st.integers(0, group.order - 1)
