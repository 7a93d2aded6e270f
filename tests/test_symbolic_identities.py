"""Lemma C.16 (sum-to-product) and (C.21) (cosine expansion): exact checks, random rational points, mutations."""

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core import expansions as construction
from margintheory.errors import InputError
from margintheory.symbolic import identities as idt

rationals = st.fractions(min_value=-10, max_value=10, max_denominator=50)


@pytest.mark.parametrize("k", range(1, 9))
def test_sum_to_product_exact_substitution(k):
    res = idt.check_sum_to_product(k, "substitution")
    assert res.ok and res.monomials_per_term == math.comb(2 * k - 1, k)


@pytest.mark.parametrize("k", range(1, 6))
def test_sum_to_product_exact_direct(k):
    assert idt.check_sum_to_product(k, "direct").ok


def test_parts_as_printed_and_derivation():
    for eq in idt.lemma_c16_parts_as_printed().values():
        assert idt._expand_equal(eq)
    d = idt.sum_to_product_derivation(3)
    assert d.all_passed and d.counts()["proved"] == 4


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6).flatmap(lambda k: st.lists(rationals, min_size=k, max_size=k)), st.booleans())
def test_sum_to_product_at_random_rationals(x, half):
    """Both sides evaluated exactly at random rational points (independent of the polynomial expansion)."""
    k = len(x)
    lhs = 2**k * math.factorial(k) * math.prod(x)
    factor = 2 if half else 1
    rhs = sum(factor * idt.sum_to_product_sign(s) * sum(sj * xj for sj, xj in zip(s, x, strict=True)) ** k
              for s in idt.sign_vectors(k, half))
    assert lhs == rhs


def _unit_point(t: Fraction) -> tuple[Fraction, Fraction]:
    """A rational point (cos a, sin a) on the unit circle (t = tan(a/2))."""
    return (1 - t * t) / (1 + t * t), 2 * t / (1 + t * t)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7).flatmap(lambda k: st.lists(rationals, min_size=k + 1, max_size=k + 1)))
def test_cosine_expansion_at_random_rational_angles(ts):
    """cos(a_1 + ... + a_n) = Re prod (cos a_j + i sin a_j), computed exactly, equals (C.21) at rational points."""
    k = len(ts) - 1
    points = [_unit_point(t) for t in ts]
    re, im = Fraction(1), Fraction(0)
    for c, s in points:
        re, im = re * c - im * s, re * s + im * c
    rhs = sum(idt.cosine_expansion_sign(b) * math.prod(s if bi else c for (c, s), bi in zip(points, b, strict=True))
              for b in idt.sine_patterns(k))
    assert re == rhs


@pytest.mark.parametrize("k", range(1, 7))
def test_cosine_expansion_exact(k):
    assert idt.verify_cosine_expansion_exact(k)
    assert idt.sign_rule_matches_real_part(k)
    assert len(idt.sine_patterns(k)) == 2**k


def test_cosine_expansion_second_route_and_numeric():
    assert all(idt.verify_cosine_expansion_trig(k) for k in (1, 2, 3))
    for k in (7, 9, 12):
        assert idt.cosine_expansion_max_error(k) <= idt.cosine_expansion_tolerance(k)
    d = idt.cosine_expansion_derivation(8)
    assert d.all_passed and d.counts()["float"] == 1


def test_mutated_sign_rule_is_caught(monkeypatch):
    """A wrong sign rule (every term +1) must fail the exact and the numeric checks."""
    monkeypatch.setattr(idt, "cosine_expansion_sign", lambda b: 0 if sum(b) % 2 else 1)
    assert not idt.verify_cosine_expansion_exact(3)
    assert idt.cosine_expansion_max_error(3) > 1e-3
    assert not idt.sign_rule_matches_real_part(3)


def test_mutated_sum_to_product_sign_is_caught(monkeypatch):
    idt.check_sum_to_product.cache_clear()
    monkeypatch.setattr(idt, "sum_to_product_sign", lambda s: 1)
    try:
        assert not idt.check_sum_to_product(3, "substitution").full_sum_ok
        assert not idt.check_sum_to_product(3, "direct").full_sum_ok
    finally:
        idt.check_sum_to_product.cache_clear()


@pytest.mark.parametrize("k", range(1, 6))
def test_agrees_with_the_construction_module(k):
    assert sorted(construction.sum_to_product_terms(k)) == sorted(
        (s, idt.sum_to_product_sign(s)) for s in idt.sign_vectors(k))
    assert sorted(construction.cosine_expansion_terms(k)) == sorted(
        (b, idt.cosine_expansion_sign(b)) for b in idt.sine_patterns(k))
    assert {s for s, _ in construction.half_sum_to_product_terms(k)} == set(idt.sign_vectors(k, half=True))


def test_bad_k():
    for bad in (0, -1, 2.5, True, 13):
        with pytest.raises(InputError):
            idt.sign_vectors(bad)
    with pytest.raises(InputError):
        idt.check_sum_to_product(3, "nonsense")
    assert list(itertools.islice(idt.sign_vectors(2), 1)) == [(1, 1)]
