"""Closed forms (docs/theory.md): the general gamma* reduces to the k=2 and k=3 forms quoted in the papers."""

import math

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from margintheory.core import theory
from margintheory.errors import InputError


def test_general_formula_reduces_to_k2_form_symbolically():
    p = theory.P_SYM
    general = theory.gamma_star_symbolic().subs(theory.K_SYM, 2)
    assert sp.simplify(general - theory.gamma_star_k2_form(p)) == 0


def test_general_formula_reduces_to_k3_form_symbolically():
    p = theory.P_SYM
    general = theory.gamma_star_symbolic().subs(theory.K_SYM, 3)
    assert sp.simplify(general - theory.gamma_star_k3_form(p)) == 0


@given(st.integers(3, 400), st.integers(1, 8))
def test_float_and_exact_agree(p, k):
    exact = float(theory.gamma_star_exact(p, k))
    assert math.isclose(theory.gamma_star(p, k), exact, rel_tol=1e-13)


def test_exact_values():
    assert theory.gamma_star_exact(7, 3) == sp.Rational(1, 224)
    assert theory.gamma_star_exact(5, 2) == sp.sqrt(sp.Rational(2, 27)) / (sp.sqrt(5) * 4)


@pytest.mark.parametrize("p,k,m", [(97, 3, 1536), (47, 4, 2944), (23, 5, 5632), (7, 2, 24)])
def test_width_matches_paper_experiment_sizes(p, k, m):
    assert theory.construction_width(p, k) == m


@pytest.mark.parametrize("p,k", [(2, 2), (1, 1), (5, 0), (5.0, 2), ("5", 2), (True, 2)])
def test_bad_pk_rejected(p, k):
    with pytest.raises(InputError):
        theory.validate_pk(p, k)


def test_hypothesis_status():
    assert theory.hypothesis_status(7) == "odd-prime"
    assert theory.hypothesis_status(9) == "odd-composite"
    assert theory.hypothesis_status(8) == "even"
