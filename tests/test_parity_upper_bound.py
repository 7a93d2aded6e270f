"""The computed upper end ``U`` of sparse parity (Morwani et al. Thm 7.8) and the interval ``[L, U]`` of ``verify``:
an independent search (projected gradient ascent on the sphere, on the objective evaluated over all ``2^n`` inputs)
never exceeds ``U`` and reaches it; the reduction is re-derived by brute force; the relevant-coordinate reduction of
the margins agrees with full enumeration; a tampered interval is rejected."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from margintheory import SparseParity, verify
from margintheory.certificate.interval import interval_gap
from margintheory.certificate.maxmin import LowerBound
from margintheory.core import theory
from margintheory.tasks.parity import checks as parity
from margintheory.tasks.parity import maxmin


def neuron_objective(theta: np.ndarray, X: np.ndarray, y: np.ndarray, k: int) -> tuple[float, np.ndarray]:
    """``F = E_x[y(x) (w . b) (u . x)^k]`` over all ``2^n`` inputs ``X`` (no reduction used) and its gradient."""
    n = X.shape[1]
    u, w = theta[:n], theta[n:]
    z = X @ u
    wb = w[0] - w[1]
    F = float(np.mean(y * wb * z**k))
    gu = (y * wb * k * z ** (k - 1)) @ X / len(X)
    gw = float(np.mean(y * z**k)) * np.array([1.0, -1.0])
    return F, np.concatenate([gu, gw])


def projected_gradient_ascent(n: int, S: np.ndarray, k: int, seed: int, restarts: int = 8,
                              steps: int = 250) -> float:
    """Random restarts of gradient ascent projected back onto the unit sphere after every step."""
    X = parity.parity_inputs(n)
    y = parity.parity_labels(X, S)
    rng = np.random.default_rng(seed)
    best = -math.inf
    for _ in range(restarts):
        theta = rng.normal(size=n + 2)
        theta /= np.linalg.norm(theta)
        for _ in range(steps):
            _, g = neuron_objective(theta, X, y, k)
            theta = theta + 0.3 * g
            theta /= np.linalg.norm(theta)
        best = max(best, neuron_objective(theta, X, y, k)[0])
    return best


@pytest.mark.parametrize(("n", "k", "S"), [(4, 1, [2]), (5, 2, [1, 3]), (6, 3, [0, 2, 5]), (6, 4, [0, 1, 2, 3])])
def test_independent_search_never_exceeds_u_and_reaches_it(n, k, S):
    ub = maxmin.parity_upper_bound(n, k)
    best = projected_gradient_ascent(n, np.array(S), k, seed=n * 10 + k)
    assert best <= ub.upper_float * (1 + 1e-12)
    assert best >= ub.upper_float * (1 - 1e-6)  # the uniform dual is tight: the bound is attained


def test_random_networks_never_exceed_u():
    rng = np.random.default_rng(3)
    n, k = 6, 3
    ub = maxmin.parity_upper_bound(n, k)
    for m in (1, 4, 9):
        for _ in range(5):
            net = parity.ParityNetwork(rng.normal(size=(m, n)), rng.normal(size=(m, 2)), np.array([0, 2, 4]))
            assert parity.margins(net.normalized()).min() <= ub.upper_float


@pytest.mark.parametrize(("n", "k"), [(3, 1), (3, 2), (4, 2), (4, 3), (5, 3)])
def test_reduction_rederived_by_brute_force_over_all_inputs(n, k):
    """E_x[y(x) (u.x)^k] as a polynomial, summed over all 2^n inputs with sympy, is k! prod_S u_j."""
    import sympy as sp

    u = sp.symbols(f"u0:{n}")
    S = list(range(k))
    total = 0
    for x in itertools.product((1, -1), repeat=n):
        total += sp.Mul(*[x[j] for j in S]) * sp.Add(*[ui * xi for ui, xi in zip(u, x, strict=True)]) ** k
    assert sp.expand(total / 2**n - math.factorial(k) * sp.Mul(*[u[j] for j in S])) == 0


@pytest.mark.parametrize(("n", "k"), [(1, 1), (3, 2), (5, 3), (6, 4)])
def test_surviving_exponents_counted_by_enumeration(n, k):
    for degree in (k, k + 2):  # at degree k one survivor (1_S); at k + 2 there are more (the count is not constant)
        brute = sum(1 for a in itertools.product(range(degree + 1), repeat=n) if sum(a) == degree
                    and all(a[j] % 2 == 1 for j in range(k)) and all(a[j] % 2 == 0 for j in range(k, n)))
        series = maxmin.power_series_product([[i % 2 for i in range(degree + 1)]] * k
                                             + [[1 - i % 2 for i in range(degree + 1)]] * (n - k), degree)[degree]
        assert series == brute
    assert maxmin.surviving_exponents(n, k) == 1


@pytest.mark.parametrize(("n", "k"), [(10, 4), (20, 10), (22, 1), (9, 9)])
def test_u_is_the_closed_form_computed_independently(n, k):
    ub = maxmin.parity_upper_bound(n, k)
    assert ub.upper_squared == Fraction(2 * math.factorial(k) ** 2, (k + 1) ** (k + 1))
    assert ub.upper**2 >= ub.upper_squared and ub.upper_float == pytest.approx(theory.gamma_star_parity(k), rel=1e-15)
    assert [s.exactness for s in ub.steps] == ["argued", "proved", "argued", "proved", "proved", "proved"]


def test_reduced_margins_equal_full_enumeration():
    rng = np.random.default_rng(5)
    n = 7
    U = np.zeros((5, n))
    U[:, [0, 3, 4]] = rng.normal(size=(5, 3))  # coordinates 1, 2, 5, 6 unused; S = {0, 6} reads 6 anyway
    net = parity.ParityNetwork(U, rng.normal(size=(5, 2)), np.array([0, 6]))
    red, mult = parity.reduced_network(net)
    assert red.n == 4 and mult == 2**3 and list(parity.relevant_coordinates(net)) == [0, 3, 4, 6]
    X = parity.parity_inputs(n)
    L = parity.parity_logits(net, X)
    y = parity.parity_labels(X, net.S)
    full = np.where(y > 0, L[:, 0] - L[:, 1], L[:, 1] - L[:, 0])
    reduced = parity.margins(net)
    assert full.min() == pytest.approx(reduced.min(), rel=1e-14)
    assert full.mean() == pytest.approx(reduced.mean(), rel=1e-12, abs=1e-15)
    assert sorted(np.round(np.repeat(reduced, mult), 12)) == sorted(np.round(full, 12))


def test_verify_parity_reports_the_interval_and_the_certificate_object():
    res = verify(SparseParity(10, 4))
    assert res.verdict == "verified"
    cert = res.certificate
    assert cert is not None
    for key in ("lower", "upper", "lower_exactness", "upper_exactness", "relative_gap", "steps"):
        assert key in cert
    assert cert["lower_exactness"] == "proved" and cert["upper_exactness"] == "proved"
    assert cert["relative_gap"] == 0.0 and cert["lower"] <= theory.gamma_star_parity(4) <= cert["upper"]
    rows = {c.name: c for c in res.checks}
    assert rows["margin <= U"].expected == cert["upper"]  # compared with the computed U, not the formula
    assert rows["margin = gamma* (Thm 7.8)"].expected == theory.gamma_star_parity(4)
    assert rows["network margin = optimum"].exactness == "proved" and rows["network margin = optimum"].passed
    json.dumps(res.to_dict())


def test_target_size_20_10_with_exact_ends():
    res = verify(SparseParity(20, 10))
    assert res.verdict == "verified" and res.certificate["relative_gap"] == 0.0
    assert res.fields["relevant_coordinates"] == 10


def test_a_network_file_gets_a_float_lower_end():
    net = parity.build_parity_construction(7, 3)
    res = parity.verify_parity(net, construction=False)
    assert res.verdict == "verified" and res.certificate["lower_exactness"] == "float"
    assert 0 <= res.certificate["relative_gap"] <= 1e-9 + res.margin.error_bound / res.margin.value


def test_a_tampered_interval_is_rejected():
    ub = maxmin.parity_upper_bound(6, 3)
    exact_L = LowerBound(0.5, __import__("sympy").sqrt(__import__("sympy").Rational(ub.upper_squared.numerator,
                                                                                         ub.upper_squared.denominator)),
                         "proved", "test")
    assert interval_gap(ub, exact_L, 1e-9)[1]
    import dataclasses

    low = dataclasses.replace(ub, upper_squared=ub.upper_squared * Fraction(99, 100))  # U below L: inconsistent
    assert not interval_gap(low, exact_L, 1e-9)[1]
    float_L = LowerBound(ub.upper_float * 1.01, None, "float", "test")  # a float L above U
    assert not interval_gap(ub, float_L, 1e-9)[1]
    with pytest.raises(Exception, match="below the proved bound"):
        dataclasses.replace(ub, upper=ub.upper * Fraction(999, 1000)).require_proved("tampered")
