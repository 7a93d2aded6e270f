"""Lemma C.15's bound chain: symbolic closed form, numeric inequality checks, instances."""

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core import theory
from margintheory.errors import InputError
from margintheory.symbolic import bound_chain as bc


def test_symbolic_chain_all_checked():
    d = bc.gamma_star_derivation()
    c = d.counts()
    assert d.all_passed and c["failed"] == 0 and c["argued"] == 0
    assert c["float"] == 5  # the argued inequalities and the paired form are checked in floating point
    ineq = [s for s in d.steps if "INEQUALITY" in s.justification]
    assert len(ineq) == 3 and all(s.check.kind == "float" and s.check.tolerance for s in ineq)


def test_instance_includes_exact_attainment():
    d = bc.gamma_star_derivation(k=3, p=7)
    assert d.all_passed
    last = d.steps[-1]
    assert last.check.kind == "proved" and "p = 7, k = 3" in last.check.scope
    assert str(theory.gamma_star_exact(7, 3)) in last.justification


def test_numeric_helpers_small():
    assert bc.pairing_error(trials=10) < bc.EQUALITY_RTOL
    for fn in (bc._phase_alignment, bc._budget, bc._qm_gm, bc._concentration):
        assert bc._max_violation(fn, trials=30) <= bc.INEQUALITY_SLACK
    assert all(bc.plancherel_exact(p) for p in (3, 5, 7, 9))


def test_violation_detector_can_fail():
    assert bc._max_violation(lambda p, k, u, w, rng: (2.0, 1.0), trials=3) == pytest.approx(1.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 50).map(lambda n: 2 * n + 1), st.integers(1, 6))
def test_chain_value_equals_closed_form(p, k):
    chain = sp.Integer(2) * sp.factorial(k) / ((p - 1) * sp.Integer(p) ** k) \
        * (sp.Rational(p, 2 * (k + 1))) ** sp.Rational(k + 1, 2)
    assert sp.simplify(chain - theory.gamma_star_exact(p, k)) == 0


def test_bad_input():
    with pytest.raises(InputError):
        bc.gamma_star_derivation(p=4)
    with pytest.raises(InputError):
        bc.gamma_star_derivation(k=0)


nonneg = st.fractions(min_value=0, max_value=20, max_denominator=30)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6).flatmap(lambda k: st.lists(nonneg, min_size=k + 1, max_size=k + 1)))
def test_qm_gm_exact_at_random_rationals(x):
    """(C.15) squared, exactly: (prod x_i)^2 <= (sum x_i^2 / (k+1))^(k+1), equality when all x_i are equal."""
    import math

    n = len(x)
    lhs, rhs = math.prod(x) ** 2, (sum(v * v for v in x) / n) ** n
    assert lhs <= rhs
    assert (lhs == rhs) == (len(set(x)) == 1 or (lhs == 0 and rhs == 0))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.lists(nonneg, min_size=1, max_size=8))
def test_concentration_exact_at_random_rationals(k, z):
    """sum z_j^q <= (sum z_j)^q for q = (k+1)/2 >= 1, compared exactly (sympy), equality iff one z_j is non-zero."""
    q = sp.Rational(k + 1, 2)
    zs = [sp.Rational(v.numerator, v.denominator) for v in z]
    lhs, rhs = sum(v**q for v in zs), sum(zs) ** q
    assert sp.simplify(rhs - lhs) >= 0
    if sum(1 for v in zs if v != 0) <= 1:
        assert sp.simplify(rhs - lhs) == 0
