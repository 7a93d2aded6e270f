"""Static typing: mypy (strict Optional) on the package, and the bugs it found, pinned by behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from margintheory.errors import InputError
from margintheory.solvers.width import greedy_prune
from margintheory.symbolic.fourier_reduction import validate_fourier_pk
from margintheory.theory import validate_pk
from margintheory.training.figures import _num


def test_greedy_prune_needs_a_target_or_a_width():
    # with neither, the loop compared the LP value with None (TypeError) as soon as two columns remained
    A = np.array([[1.0, 0.5, 0.2], [0.3, 1.0, 0.4]])
    with pytest.raises(InputError, match="target margin or a maximum width"):
        greedy_prune(A)
    cols, s, _ = greedy_prune(A, max_width=1)
    assert len(cols) == 1 and s.shape == (1,)


@pytest.mark.parametrize("p, k", [(7, 3), (sp.Integer(7), sp.Integer(3))])
def test_validate_pk_accepts_integers(p, k):
    assert validate_pk(p, k) == (int(p), int(k))
    assert all(type(v) is int for v in validate_pk(p, k))


@pytest.mark.parametrize("p, k", [(True, 3), (7.0, 3), ("7", 3), (7, 0), (2, 1), (sp.Rational(7, 2), 3)])
def test_validate_pk_rejects_non_integers_and_small_values(p, k):
    with pytest.raises(InputError):
        validate_pk(p, k)


def test_validate_fourier_pk_returns_ints():
    assert validate_fourier_pk(3, 2) == (3, 2)
    with pytest.raises(InputError):
        validate_fourier_pk(3, True)


def test_history_values_as_floats():
    assert math.isnan(_num(None))
    assert _num("inf") == math.inf and _num(np.float32(0.5)) == 0.5 and _num(3) == 3.0
    with pytest.raises(TypeError):
        _num([1.0])
