"""Lemma C.14 exactly: the symbolic expansion, random rational weight vectors, and numpy's FFT."""

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from margintheory.errors import InputError, RefusedError
from margintheory.symbolic import fourier_reduction as fr

# Lemma C.14 needs neither primality nor oddness: composite and even p are included
CASES = [(2, 1), (3, 1), (3, 2), (5, 2), (5, 3), (3, 3), (7, 2), (4, 2), (6, 2), (9, 2)]


@pytest.mark.parametrize("p,k", CASES)
def test_lemma_c14_exact(p, k):
    res = fr.check_fourier_reduction(p, k)
    assert res.matches and res.only_fully_mixed_survives
    surviving = [t for t in res.types if not t.vanishes]
    assert [t.exponents for t in surviving] == [(1,) * k] and surviving[0].multinomial == math.factorial(k)


def _evaluate(poly, values):
    return sum(c * math.prod(values[v] ** e for v, e in mono) for mono, c in poly.items())


def _objective_definition(u, w, p, k):
    """Definition C.12-C.13 with exact Fractions, written independently of the module."""
    eta = []
    for delta in range(p):
        total = Fraction(0)
        for a in np.ndindex(*(p,) * k):
            total += sum(u[i][a[i]] for i in range(k)) ** k * w[(sum(a) - delta) % p]
        eta.append(total / p**k)
    return eta[0] - sum(eta[1:]) / (p - 1)


fractions = st.fractions(min_value=-3, max_value=3, max_denominator=9)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([(3, 1), (3, 2), (5, 2), (3, 3)]), st.data())
def test_random_rational_vectors(pk, data):
    p, k = pk
    u = [data.draw(st.lists(fractions, min_size=p, max_size=p)) for _ in range(k)]
    w = data.draw(st.lists(fractions, min_size=p, max_size=p))
    values = [x for row in u for x in row] + list(w)
    direct = _objective_definition(u, w, p, k)
    assert _evaluate(fr.fourier_side(p, k), values) == direct
    lhs = sum(_evaluate(poly, values) for poly in fr.objective_by_type(p, k).values())
    assert lhs == direct
    # and numpy's FFT (float, DFT convention f^(j) = sum f(x) e^{-2 pi i j x/p})
    U, W = np.fft.fft(np.array(u, dtype=float), axis=1), np.fft.fft(np.array(w, dtype=float))
    js = np.arange(1, p)
    fft_value = math.factorial(k) / ((p - 1) * p**k) * (W[(-js) % p] * U[:, js].prod(axis=0)).sum()
    assert abs(fft_value.imag) < 1e-9
    assert abs(fft_value.real - float(direct)) <= 1e-9 * (1 + abs(float(direct)))


def test_derivation_and_limits():
    d = fr.fourier_derivation(5, 3)
    assert d.all_passed and d.counts()["failed"] == 0
    with pytest.raises(RefusedError):
        fr.validate_fourier_pk(50, 3)
    with pytest.raises(InputError):
        fr.validate_fourier_pk(1, 2)


def test_the_refusal_names_the_largest_sizes_allowed_and_they_are():
    """The refusal's examples are the limits' own: each named ``p`` is accepted and ``p + 1`` refused (they once
    said ``p <= 5`` at ``k = 3``, where 15 is accepted)."""
    with pytest.raises(RefusedError) as info:
        fr.validate_fourier_pk(13, 20)
    named = re.findall(r"(\d+) at k = (\d+)", str(info.value))
    assert ("15", "3") in named and len(named) >= 4
    for p, k in ((int(p), int(k)) for p, k in named):
        assert fr.validate_fourier_pk(p, k) == (p, k)
        with pytest.raises(RefusedError):
            fr.validate_fourier_pk(p + 1, k)
