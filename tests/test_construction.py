"""The construction of Lemmas C.16-C.18 and its verification for hypothesis-drawn small (p, k)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core import theory
from margintheory.core.construction import build_construction, construction_neuron_specs
from margintheory.core.expansions import cosine_expansion_terms, half_sum_to_product_terms, sum_to_product_terms
from margintheory.engines.margins import logits
from margintheory.tasks.modular_addition.checks import verify_construction, verify_network
from margintheory.testing import moduli_and_inputs, seeds


@given(st.integers(1, 7), seeds())
def test_sum_to_product_identity_numerically(k, seed):
    x = np.random.default_rng(seed).normal(size=k)
    lhs = 2**k * math.factorial(k) * np.prod(x)
    full = sum(sign * np.dot(s, x) ** k for s, sign in sum_to_product_terms(k))
    half = 2 * sum(sign * np.dot(s, x) ** k for s, sign in half_sum_to_product_terms(k))
    assert math.isclose(full, lhs, rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(half, lhs, rel_tol=1e-9, abs_tol=1e-9)


@given(st.integers(1, 7), seeds())
def test_cosine_expansion_numerically(k, seed):
    a = np.random.default_rng(seed).uniform(-4, 4, size=k + 1)
    terms = cosine_expansion_terms(k)
    assert len(terms) == 2**k
    def factor(b_i, v):
        return np.sin(v) if b_i else np.cos(v)

    val = sum(sign * np.prod([factor(b_i, v) for b_i, v in zip(b, a, strict=True)]) for b, sign in terms)
    assert math.isclose(val, math.cos(a.sum()), abs_tol=1e-12)


@settings(max_examples=12, deadline=None)
@given(moduli_and_inputs(max_points=15**3, max_k=3, max_p=15))
def test_construction_verifies(pk):
    p, k = pk
    result = verify_construction(p, k)
    assert result.verdict == "verified", [c for c in result.checks if not c.passed]
    assert result.fields["relative_error"] < 1e-12
    assert result.fields["width"] == theory.construction_width(p, k) == 2 ** (2 * k - 1) * (p - 1) // 2
    assert result.fields["frequencies_covered"] == list(range(1, (p - 1) // 2 + 1))


def test_construction_metadata_and_counts():
    p, k = 7, 3
    net = build_construction(p, k)
    specs = construction_neuron_specs(p, k)
    assert net.m == len(specs) == 96
    per = {(int(f), tuple(t), tuple(s)) for f, t, s in zip(net.metadata["frequency"], net.metadata["term"],
                                                              net.metadata["sign"], strict=True)}
    assert len(per) == net.m  # one neuron per (frequency, term, sign vector)
    assert np.isclose(net.norm(), 1.0)


def test_unnormalized_network_function_is_the_cosine_sum():
    p, k = 5, 2
    L = logits(build_construction(p, k, normalize=False))
    for r, a in enumerate(itertools.product(range(p), repeat=k)):
        for c in range(p):
            x = (sum(a) - c) % p
            expected = sum(math.cos(2 * math.pi * z * x / p) for z in range(1, (p - 1) // 2 + 1))
            assert math.isclose(L[r, c], expected, abs_tol=1e-12)
    # the true value for wrong labels is -1/2, not the 0 stated in the proof of Lemma C.17
    assert math.isclose(L[0, 1], -0.5, abs_tol=1e-12)


def test_even_p_is_not_applicable_but_computed():
    result = verify_construction(8, 2)
    assert result.verdict == "not-applicable"
    assert result.fields["gamma_star"] is None
    assert 0 < result.fields["normalized_margin"]
    assert not result.fields["wrong_logits_equal"]


def test_perturbed_construction_is_refuted():
    net = build_construction(7, 2)
    rng = np.random.default_rng(0)
    bad = net.__class__(net.U + 1e-3 * rng.normal(size=net.U.shape), net.W)
    result = verify_network(bad, 7, 2)
    assert result.verdict == "refuted"
    assert result.fields["normalized_margin"] < theory.gamma_star(7, 2)


def test_dropping_a_frequency_is_refuted():
    net = build_construction(7, 2)
    keep = np.flatnonzero(net.metadata["frequency"] != 2)
    result = verify_network(net.subset(keep), 7, 2)
    assert result.verdict == "refuted"
    assert result.fields["frequencies_covered"] == [1, 3]


@pytest.mark.parametrize("p,k", [(7, 3)])
def test_issue_figure_relative_error(p, k):
    assert verify_construction(p, k).fields["relative_error"] < 1e-10
