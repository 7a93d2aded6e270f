"""Exact cyclotomic arithmetic against floating-point evaluation of the same elements."""

import cmath
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.core.cyclotomic import (
    cyclic_mul,
    field_order,
    rational_value,
    reduce_mod_cyclotomic,
    reduction_matrix,
    twice_cos,
    twice_sin,
)


def evaluate(v: np.ndarray, basis_len: int | None = None) -> complex:
    n = v.shape[-1] if basis_len is None else basis_len
    w = cmath.exp(2j * math.pi / n)
    return sum(int(c) * w**t for t, c in enumerate(v))


def test_reduction_matrix_preserves_values():
    for n in (3, 4, 12, 20, 28, 36, 44):
        R = reduction_matrix(n)
        for t in range(n):
            assert abs(evaluate(R[t], n) - cmath.exp(2j * math.pi * t / n)) < 1e-9


def test_trig_encodings():
    for p in (3, 5, 7, 9):
        for t in range(p):
            assert abs(evaluate(twice_cos(t, p)) - 2 * math.cos(2 * math.pi * t / p)) < 1e-12
            assert abs(evaluate(twice_sin(t, p)) - 2 * math.sin(2 * math.pi * t / p)) < 1e-12
    assert field_order(7) == 28 and field_order(12) == 12


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([3, 5, 7, 11]), st.lists(st.integers(-5, 5), min_size=44, max_size=44),
       st.lists(st.integers(-5, 5), min_size=44, max_size=44))
def test_products_and_reduction_agree_with_complex_numbers(p, a, b):
    n = field_order(p)
    va, vb = np.array(a[:n], dtype=np.int64), np.array(b[:n], dtype=np.int64)
    prod = cyclic_mul(va, vb)
    assert abs(evaluate(prod) - evaluate(va) * evaluate(vb)) < 1e-8 * (1 + abs(evaluate(prod)))
    red = reduce_mod_cyclotomic(prod)
    assert abs(evaluate(red, n) - evaluate(prod)) < 1e-8 * (1 + abs(evaluate(prod)))


def test_rational_value_detects_irrational():
    p = 7
    square_sum = cyclic_mul(twice_cos(1, p), twice_cos(1, p)) + cyclic_mul(twice_sin(1, p), twice_sin(1, p))
    assert rational_value(square_sum) == 4
    try:
        rational_value(twice_cos(1, p))
    except ValueError:
        pass
    else:
        raise AssertionError("2 cos(2 pi/7) is irrational")
