"""The exactly checked width lower bounds (:mod:`margintheory.solvers.width_bounds`), pinned so that a weakened check
fails: Bareiss positive definiteness against the leading principal minors (a singular matrix is not positive
definite), the zero-sum classes against their definition, each condition of the certificate check, and the bound
that must not stay ``proved`` when its certificate fails.  Small cases only: this module is also the test selection
of the mutation gate's ``width`` area (``tools/mutation.sh width``)."""

from __future__ import annotations

import itertools
import json
import math
import random
import time
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from margintheory.core.phase_measures import unwanted_phase_moments
from margintheory.errors import SolverError
from margintheory.solvers import width_bounds as wb


def _moments(k):
    return {tuple(int(v) for v in m) for m in unwanted_phase_moments(k)}


def _pd_by_leading_minors(a):
    n = len(a)
    return all(sp.Matrix([row[:r] for row in a[:r]]).det() > 0 for r in range(1, n + 1))


# -- positive definiteness (Bareiss) -------------------------------------------------------------------------------


def test_bareiss_agrees_with_sylvesters_criterion_on_random_matrices():
    rng = random.Random(3)
    seen = {True: 0, False: 0}
    for trial in range(80):
        n = 1 + trial % 5
        rank = rng.randint(max(0, n - 2), n)
        B = [[rng.randint(-3, 3) for _ in range(rank)] for _ in range(n)]
        a = [[sum(B[i][t] * B[j][t] for t in range(rank)) for j in range(n)] for i in range(n)]
        if trial % 3 == 0:
            a[n - 1][n - 1] += rng.randint(-2, 2)
        want = _pd_by_leading_minors(a)
        before = [row[:] for row in a]
        assert wb._is_positive_definite(a) == want, a
        assert a == before  # the input is not changed
        seen[want] += 1
    assert min(seen.values()) >= 20


def test_bareiss_rejects_singular_and_accepts_barely_definite_matrices():
    assert not wb._is_positive_definite([[1, 1], [1, 1]])  # singular PSD: a zero minor is not > 0
    assert not wb._is_positive_definite([[0]]) and not wb._is_positive_definite([[-1]])
    assert wb._is_positive_definite([[1]]) and wb._is_positive_definite([])
    assert wb._is_positive_definite([[2, 1, 1], [1, 2, 1], [1, 1, 1]])  # minors 2, 3, 1
    assert not wb._is_positive_definite([[4, 2, 2], [2, 2, 3], [2, 3, 3]])  # negative third minor
    assert not wb._is_positive_definite([[1, 2, 3], [2, 4, 6], [3, 6, 10]])  # zero second minor
    # L L^T with L unit lower triangular and huge entries: determinant 1, every minor 1; exact integer division is
    # needed (floats lose the 1 next to 2^60)
    for x, y, z in ((2**30, 3, 2**30 + 1), (5, 2**31, 2**29), (1, 1, 1)):
        L = [[1, 0, 0], [x, 1, 0], [y, z, 1]]
        A = [[sum(L[i][t] * L[j][t] for t in range(3)) for j in range(3)] for i in range(3)]
        assert wb._is_positive_definite(A)
        A[2][2] -= 1  # now singular
        assert not wb._is_positive_definite(A)


# -- the zero-sum classes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3])
def test_forbidden_difference_classes_are_every_difference_outside_the_moments_and_zero(k):
    index = wb.even_box(k, -2, 1) + [tuple([1] * k)]
    classes = wb.forbidden_difference_classes(k, index)
    allowed = _moments(k) | {(0,) * k}
    want: dict = {}
    for i, j in itertools.product(range(len(index)), repeat=2):
        d = tuple(np.subtract(index[i], index[j]).tolist())
        if d not in allowed:
            want.setdefault(d, []).append((i, j))
    assert classes == want and all(d not in allowed for d in classes)
    assert sum(len(v) for v in classes.values()) + sum(
        1 for i, j in itertools.product(range(len(index)), repeat=2)
        if tuple(a - b for a, b in zip(index[i], index[j], strict=True)) in allowed) == len(index) ** 2
    with pytest.raises(ValueError):
        wb.forbidden_difference_classes(2, [(0, 0), (1, 1, 1)])
    assert wb.difference((3, -1, 0), (1, 1, -2)) == (2, -2, 2)
    for s, t in (((1, 2), (1, 2, 3)), ((1, 2, 3), (1, 2))):
        with pytest.raises(ValueError):
            wb.difference(s, t)


# -- the certificate check -----------------------------------------------------------------------------------------


def _clique2():
    return wb.clique_certificate(wb.moment_clique(2))


def _with(cert, rows=None, index=None):
    return wb.GramCertificate(cert.k, cert.index if index is None else tuple(index),
                              cert.numerators if rows is None else tuple(tuple(r) for r in rows), cert.denominator)


def _expect(chk, symmetric, zero_sums, pd):
    assert (chk.symmetric, chk.zero_sums, chk.positive_definite) == (symmetric, zero_sums, pd)
    assert chk.passed == (symmetric and zero_sums and pd)


def test_check_of_a_clique_certificate_and_its_ratio():
    cert = _clique2()
    n = len(cert.index)
    assert n == 6 and cert.denominator == 36 and cert.k == 2
    t = time.perf_counter()
    chk = wb.check_gram_certificate(cert)
    assert 0 <= chk.seconds <= time.perf_counter() - t
    _expect(chk, True, True, True)
    assert chk.ratio == Fraction(n**3 + 1, n**2 + 1) and chk.bound == n


def test_each_condition_of_the_check_fails_on_its_own():
    cert = _clique2()
    rows = [list(r) for r in cert.numerators]
    rows[0][1] += 1
    _expect(wb.check_gram_certificate(_with(cert, rows)), False, False, False)
    rows[1][0] += 1  # symmetric again, and index[0] - index[1] is a moment (no zero sum); but two rows are equal
    _expect(wb.check_gram_certificate(_with(cert, rows)), True, True, False)
    ragged = [list(r) for r in cert.numerators]
    ragged[2] = ragged[2][:-1]
    _expect(wb.check_gram_certificate(_with(cert, ragged)), False, False, False)
    _expect(wb.check_gram_certificate(_with(cert, index=cert.index[:-1])), False, False, False)
    # a repeated index vector: every condition but the distinct index holds
    dup = wb.clique_certificate([(0, 0), (-1, -1), (-1, -1)])
    _expect(wb.check_gram_certificate(dup), True, False, True)
    # a difference outside M_k: its class (one entry and its mirror) no longer sums to zero
    _expect(wb.check_gram_certificate(wb.clique_certificate([(0, 0), (1, 0)])), True, False, True)
    # J alone (without I/n^2) is only semidefinite
    n = len(cert.index)
    _expect(wb.check_gram_certificate(_with(cert, [[1] * n for _ in range(n)])), True, True, False)


def test_zero_sums_are_checked_class_by_class():
    """A certificate on vectors with forbidden differences: valid when each class sums to zero, not when one entry of
    a class moves (mirrored, so the matrix stays symmetric and positive definite)."""
    index = [(0, 0), (1, 0), (2, 0)]  # the differences (+-1, 0) are outside M_2, (+-2, 0) are in it
    assert (1, 0) not in _moments(2) and (2, 0) in _moments(2)
    good = wb.GramCertificate(2, tuple(index), ((10, 0, 0), (0, 10, 0), (0, 0, 10)), 10)
    chk = wb.check_gram_certificate(good)
    _expect(chk, True, True, True)
    assert chk.ratio == 1 and chk.bound == 1
    bad = wb.GramCertificate(2, tuple(index), ((10, 1, 0), (1, 10, 0), (0, 0, 10)), 10)
    _expect(wb.check_gram_certificate(bad), True, False, True)
    # entries (0, 1) and (1, 2) are both in the class of (-1, 0): they may cancel
    cancel = wb.GramCertificate(2, tuple(index), ((10, 1, 0), (1, 10, -1), (0, -1, 10)), 10)
    _expect(wb.check_gram_certificate(cancel), True, True, True)


def test_ratio_and_bound_of_degenerate_matrices():
    zero = wb.GramCertificate(2, ((0, 0), (-1, -1)), ((0, 0), (0, 0)), 1)
    chk = wb.check_gram_certificate(zero)
    assert chk.ratio == 0 and chk.bound == 0 and not chk.passed
    neg = wb.GramCertificate(2, ((0, 0), (-1, -1)), ((1, -3), (-3, 1)), 1)
    chk = wb.check_gram_certificate(neg)
    assert chk.ratio == Fraction(-4, 2) and chk.bound == 0
    neg_trace = wb.GramCertificate(2, ((0, 0), (-1, -1)), ((-1, 0), (0, -1)), 1)
    assert wb.check_gram_certificate(neg_trace).ratio == 0
    whole = wb.GramCertificate(2, ((0, 0), (-1, -1)), ((2, 1), (1, 2)), 1)  # ratio 6/4: bound 2
    chk = wb.check_gram_certificate(whole)
    assert chk.ratio == Fraction(3, 2) and chk.bound == 2 and chk.passed
    exact = wb.GramCertificate(2, ((0, 0), (-1, -1)), ((1, 0), (0, 1)), 1)  # ratio exactly 1: bound 1
    assert wb.check_gram_certificate(exact).bound == 1
    one = wb.check_gram_certificate(wb.GramCertificate(2, ((0, 0),), ((1,),), 1))  # trace 1
    assert one.ratio == 1 and one.bound == 1 and one.passed
    # a malformed index with an asymmetric matrix: not passed (the zero sums are not even looked at)
    ragged = wb.GramCertificate(2, ((0, 0), (1, 1, 1)), ((1, 2), (0, 1)), 1)
    chk = wb.check_gram_certificate(ragged)
    assert not chk.symmetric and not chk.zero_sums and not chk.passed


def test_gram_certificate_json_round_trip():
    cert = _clique2()
    text = cert.to_json()
    assert json.loads(text) == {"k": 2, "index": [list(v) for v in cert.index], "denominator": 36,
                                "numerators": [list(r) for r in cert.numerators]}
    assert wb.GramCertificate.from_json(text) == cert
    loose = json.dumps({"k": "2", "index": [["0", "0"]], "denominator": "3", "numerators": [["4"]]})
    assert wb.GramCertificate.from_json(loose) == wb.GramCertificate(2, ((0, 0),), ((4,),), 3)


def test_shipped_certificates_are_on_the_documented_index_sets():
    assert wb.shipped_certificate(2) is None and wb.shipped_certificate(5) is None
    c3, c4 = wb.shipped_certificate(3), wb.shipped_certificate(4)
    assert c3.k == 3 and sorted(c3.index) == sorted(wb.even_box(3, -3, 1)) and len(c3.index) == 62
    assert c4.k == 4 and sorted(c4.index) == sorted(wb.even_box(4, -3, 1, 4)) and len(c4.index) == 169
    assert c3.denominator > 0 and len(c3.numerators) == 62


def test_even_box():
    assert wb.even_box(2, -1, 1) == [(-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)]
    assert wb.even_box(2, -3, 1, 1) == [(-1, -1)]
    assert wb.even_box(2, -3, 1, 2) == [(-3, -1), (-2, -2), (-2, 0), (-1, -3), (-1, -1), (-1, 1), (0, -2), (0, 0),
                                        (1, -1)]
    assert wb.even_box(1, 0, 4) == [(0,), (2,), (4,)]
    assert wb.even_box(1, 1, 1) == []


# -- producing candidates (untrusted; checked afterwards) ----------------------------------------------------------


def test_rounding_restores_zero_sums_exactly_and_adds_the_documented_eta():
    index = [(0, 0), (1, 0), (2, 0), (-1, -1)]
    G = np.array([[4.0, 0.3, 0.1, 1.0], [0.3, 4.0, -0.2, 0.5], [0.1, -0.2, 4.0, 0.0], [1.0, 0.5, 0.0, 4.0]])
    G[0, 1] += 1e-3  # slightly asymmetric, as a solver's output may be
    cert = wb.round_gram_certificate(2, index, G, denominator=1000)
    assert cert.denominator == 1000 and cert.index == tuple(index) and cert.k == 2
    chk = wb.check_gram_certificate(cert)
    assert chk.passed
    rows, eta = _rounded_by_hand(index, G, 1000, with_eta=True)
    assert eta == 1  # positive definite already: eta is the safety margin max(1, denominator / 10^7) = 1
    assert [list(r) for r in cert.numerators] == rows
    big = wb.round_gram_certificate(2, index, G * 7.0, denominator=10**9)  # scaled by its trace: same matrix
    assert big.numerators[0][0] - wb.round_gram_certificate(2, index, G, denominator=10**9).numerators[0][0] == 0
    assert wb.round_gram_certificate(2, index, G, denominator=10**9).numerators[3][3] == 250_000_000 + 100


def _rounded_by_hand(index, G, denominator, with_eta=False):
    """The rounding of :func:`round_gram_certificate` in exact integers (object arrays), step by step (and the
    diagonal shift ``eta`` it added, with ``with_eta``)."""
    A = np.array([[int(np.rint(x)) for x in row] for row in np.asarray(G) / np.trace(G) * denominator], dtype=object)
    A = (A + A.T) // 2
    for d, lst in wb.forbidden_difference_classes(2, index).items():
        if d > tuple(-v for v in d):
            s = sum(A[i, j] for i, j in lst)
            A[lst[0]] -= s
            A[lst[0][::-1]] -= s
    lam = float(np.linalg.eigvalsh(np.array(A, dtype=float)).min())
    eta = math.ceil(max(0.0, -lam) * 1.5) + max(1, denominator // 10**7)
    rows = [[int(A[i, j]) + (eta if i == j else 0) for j in range(len(index))] for i in range(len(index))]
    return (rows, eta) if with_eta else rows


def test_rounding_is_exact_integer_arithmetic_even_for_huge_denominators():
    """Negative odd sums in the symmetrisation (floor division), zero sums restored and eta added on integers beyond
    2^53 (floats would round them), eta's margin denominator // 10^7 for a denominator that is not a multiple."""
    index = [(0, 0), (1, 0), (2, 0), (-1, -1)]
    G = np.array([[4.0, -0.3, 0.1, 1.0], [-0.3, 4.0, -0.2, 0.5], [0.1, -0.2, 4.0, 0.0], [1.0, 0.5, 0.0, 4.0]])
    G[0, 1] -= 1e-3  # asymmetric by a negative amount
    for den in (2 * 10**19 + 7, 10**18 + 25 * 10**6 + 7, 25 * 10**6, 999):  # (sums beyond 64-bit integers first)
        cert = wb.round_gram_certificate(2, index, G, denominator=den)
        assert [list(r) for r in cert.numerators] == _rounded_by_hand(index, G, den), den
        assert wb.check_gram_certificate(cert).passed


def test_rounding_lifts_a_negative_eigenvalue_by_one_and_a_half_times_it():
    index = [(0, 0), (-1, -1)]  # the difference is a moment: no zero sums
    G = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3, -1 (times 1000/2 after normalising)
    cert = wb.round_gram_certificate(2, index, G, denominator=1000)
    eta = math.ceil(500 * 1.5) + 1
    assert cert.numerators == ((500 + eta, 1000), (1000, 500 + eta))
    assert wb.check_gram_certificate(cert).passed


def test_sdp_certificates_for_k2_pass_the_exact_check():
    """SCS with its tight settings (eps 1e-7) comes within 1e-5 of the optimum 5 on this index set; Clarabel (the
    default) on a smaller one proves 4."""
    cert = wb.solve_gram_certificate(2, wb.even_box(2, -2, 1), solver="SCS", denominator=10**7)
    chk = wb.check_gram_certificate(cert)
    assert chk.passed and chk.bound == 5 and 5 - Fraction(1, 10**5) < chk.ratio <= 5
    assert cert.denominator == 10**7 and cert.index == tuple(wb.even_box(2, -2, 1))
    cert = wb.solve_gram_certificate(2, wb.even_box(2, -1, 1))
    chk = wb.check_gram_certificate(cert)
    assert chk.passed and chk.bound == 4 and 4 - Fraction(1, 10**5) < chk.ratio <= 4 and cert.denominator == 10**9


def test_an_sdp_that_does_not_reach_optimal_raises(monkeypatch):
    import cvxpy as cp

    def unsolved(self, *args, **kwargs):
        self._status = "infeasible"

    monkeypatch.setattr(cp.Problem, "solve", unsolved)
    with pytest.raises(SolverError, match="width certificate SDP: status 'infeasible'"):
        wb.solve_gram_certificate(2, wb.even_box(2, -1, 1))
    monkeypatch.undo()
    real_solve = cp.Problem.solve

    def inaccurate(self, *args, **kwargs):  # a solution is there, but not optimal
        real_solve(self, *args, **kwargs)
        self._status = "optimal_inaccurate"

    monkeypatch.setattr(cp.Problem, "solve", inaccurate)
    with pytest.raises(SolverError, match="status 'optimal_inaccurate'"):
        wb.solve_gram_certificate(2, wb.even_box(2, -1, 1))


# -- cliques -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k,size", [(1, 2), (2, 6)])
def test_moment_clique_is_a_largest_clique_containing_zero(k, size):
    S = wb.moment_clique(k)
    M = _moments(k)
    assert len(S) == size and S[0] == (0,) * k and len(set(S)) == size
    assert all(tuple(a - b for a, b in zip(s, t, strict=True)) in M for s in S for t in S if s != t)
    # the first largest clique found in the (deterministic) search order, not a later one of the same size
    assert S == {1: [(0,), (-2,)], 2: [(0, 0), (-1, -1), (-2, -2), (-3, -1), (-2, 0), (-1, 1)]}[k]
    # no larger one: no vector of M is adjacent to every member (the largest clique is also maximal)
    assert not any(all(tuple(a - b for a, b in zip(m, s, strict=True)) in M for s in S) for m in M if m not in S)


def test_moment_clique_stops_at_its_time_limit():
    assert wb.moment_clique(2, time_limit=0.0) == [(0, 0)]  # nothing found in no time: only the vector 0
    assert wb.moment_clique(2, time_limit=60.0) == wb.moment_clique(2)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_even_subset_clique(k):
    S = wb.even_subset_clique(k)
    M = _moments(k)
    assert len(S) == len(set(S)) == 2 ** (k - 1) and all(set(v) <= {0, 1} and sum(v) % 2 == 0 for v in S)
    assert all(tuple(a - b for a, b in zip(s, t, strict=True)) in M for s in S for t in S if s != t)


def test_clique_certificate_is_j_plus_i_over_n_squared():
    S = [(0, 0), (-1, -1), (-2, -2)]
    cert = wb.clique_certificate(S)
    assert cert == wb.GramCertificate(2, tuple(S), ((10, 9, 9), (9, 10, 9), (9, 9, 10)), 9)
    chk = wb.check_gram_certificate(cert)
    assert chk.ratio == Fraction(28, 10) and chk.bound == 3 and chk.passed


def test_known_cliques():
    c4, c5 = wb.known_clique(4), wb.known_clique(5)
    assert len(c4) == 36 and len(c5) == 77 and wb.known_clique(6) is None and wb.known_clique(3) is None
    assert all(type(v) is tuple and all(type(x) is int for x in v) for v in c4)
    assert c4[0] == (0, 0, 0, 0) and len(c5[3]) == 5


# -- the bound and its verdict -------------------------------------------------------------------------------------


def test_best_bound_from_a_clique():
    lb = wb.best_width_lower_bound(2)
    assert (lb.k, lb.per_frequency, lb.exactness) == (2, 6, "proved")
    assert lb.method == "clique of 6 moment vectors (moment-matrix rank bound), checked exactly"
    assert lb.ratio == "217/37 ~ 5.864865" and lb.seconds >= 0
    assert wb.best_width_lower_bound(1).per_frequency == 2
    assert wb.width_lower_bound(2) == wb.width_lower_bound(2)


def test_best_bound_prefers_the_shipped_certificate_and_fails_when_it_does(monkeypatch):
    monkeypatch.setattr(wb, "shipped_delsarte_certificate", lambda k: None)  # the pointwise bound alone
    small = wb.clique_certificate(wb.even_subset_clique(3))
    monkeypatch.setattr(wb, "shipped_certificate", lambda k: small if k == 3 else None)
    lb = wb.best_width_lower_bound(3)
    assert lb.per_frequency == 4 and lb.exactness == "proved"
    assert lb.method == "Delsarte certificate (positive definite Gram matrix, shipped, re-checked exactly)"
    bad = wb.GramCertificate(3, small.index, tuple(tuple(-x for x in r) for r in small.numerators), small.denominator)
    monkeypatch.setattr(wb, "shipped_certificate", lambda k: bad)
    with pytest.raises(SolverError, match="width lower bound for k=3: the certificate failed its exact check"):
        wb.best_width_lower_bound(3)


def test_best_bound_searches_cliques_up_to_k3_and_uses_the_larger_known_one_beyond(monkeypatch):
    searched = []

    def search(k, time_limit=None):
        searched.append(k)
        return wb.even_subset_clique(k)

    monkeypatch.setattr(wb, "moment_clique", search)
    monkeypatch.setattr(wb, "shipped_delsarte_certificate", lambda k: None)  # the pointwise bound alone
    monkeypatch.setattr(wb, "shipped_certificate", lambda k: None)
    assert wb.best_width_lower_bound(3).per_frequency == 4 and searched == [3]
    assert wb.best_width_lower_bound(6).per_frequency == 32 and searched == [3]  # no known clique: 2^(k-1)
    real_known = wb.known_clique
    monkeypatch.setattr(wb, "known_clique", lambda k: [(0,) * k, (-1,) * 2 + (0,) * (k - 2)])
    assert wb.best_width_lower_bound(4).per_frequency == 8  # the even-subset clique is the larger one here
    monkeypatch.setattr(wb, "known_clique", real_known)
    t = time.perf_counter()
    lb = wb.best_width_lower_bound(4)  # the known clique: larger, though lexicographically smaller
    assert lb.per_frequency == 36 and searched == [3] and 0 <= lb.seconds <= time.perf_counter() - t


def test_the_bound_applies_to_primes_above_2k_only():
    lb = wb.WidthLowerBound(3, 16, "proved", "m", "r", 0.0)
    assert [p for p in range(2, 30) if lb.applies_to(p)] == [7, 11, 13, 17, 19, 23, 29]
    assert lb.total(7) == 48 and lb.total(11) == 80 and lb.total(5) is None and lb.total(9) is None
    assert type(lb.total(7)) is int
    lb2 = wb.WidthLowerBound(2, 6, "proved", "m", "r", 0.0)
    assert lb2.applies_to(5) and not lb2.applies_to(4) and not lb2.applies_to(3)
    assert not wb.WidthLowerBound(1, 2, "proved", "m", "r", 0.0).applies_to(2)  # p = 2k = 2 is prime, not > 2k


def test_large_matrices_take_the_fast_path_and_agree_with_the_elimination(monkeypatch):
    """From FAST_POSITIVE_DEFINITE_ORDER on, an exact L L^T + E identity is tried first; it must never accept what
    the elimination refuses (singular, indefinite), and must agree with it on positive definite matrices."""
    rng = np.random.default_rng(7)
    n = wb.FAST_POSITIVE_DEFINITE_ORDER + 5
    B = rng.integers(-9, 10, size=(n, n))
    pd = (B @ B.T + np.eye(n, dtype=np.int64)).tolist()
    singular = (B[:, : n - 1] @ B[:, : n - 1].T).tolist()  # rank n - 1
    indefinite = [row[:] for row in pd]
    indefinite[n - 1][n - 1] = -1
    calls = []
    real = wb.exactly_positive_definite
    monkeypatch.setattr(wb, "exactly_positive_definite", lambda C: calls.append(len(C)) or real(C))
    assert wb._is_positive_definite(pd) and calls == [n]
    assert not wb._is_positive_definite(singular) and not wb._is_positive_definite(indefinite)
    small = [row[:5] for row in pd[:5]]
    calls.clear()
    assert wb._is_positive_definite(small) and calls == []  # small matrices: the elimination alone
    monkeypatch.setattr(wb, "exactly_positive_definite", lambda C: False)  # the hint proves nothing: still decided
    assert wb._is_positive_definite(pd) and not wb._is_positive_definite(singular)


def test_the_fast_path_starts_exactly_at_its_order(monkeypatch):
    """The exact identity is tried from FAST_POSITIVE_DEFINITE_ORDER on (order 25 included), never below it."""
    calls = []
    real = wb.exactly_positive_definite
    monkeypatch.setattr(wb, "exactly_positive_definite", lambda C: calls.append(len(C)) or real(C))
    n = wb.FAST_POSITIVE_DEFINITE_ORDER
    at = [[2 if r == c else (1 if abs(r - c) == 1 else 0) for c in range(n)] for r in range(n)]  # PD tridiagonal
    assert wb._is_positive_definite(at) and calls == [n]
    calls.clear()
    below = [row[: n - 1] for row in at[: n - 1]]
    assert wb._is_positive_definite(below) and calls == []


# -- the Delsarte LP bound and the better of the two -----------------------------------------------------------------


def test_shipped_delsarte_certificates_are_read_for_their_k_only():
    from margintheory.solvers.width_delsarte import SHIPPED_INDEX, symmetric_box

    cert = wb.shipped_delsarte_certificate(3)
    assert cert is not None and cert.k == 3 and cert.denominator > 0
    assert sorted(cert.index) == symmetric_box(3, *SHIPPED_INDEX[3])
    assert wb.shipped_delsarte_certificate(2) is None and wb.shipped_delsarte_certificate(7) is None


def test_linear_programming_bound_checks_the_shipped_certificate(monkeypatch):
    from margintheory.solvers.width_delsarte import check_delsarte_certificate

    cert = wb.shipped_delsarte_certificate(3)
    bound, method, ratio = wb._linear_programming_bound(3)
    assert bound == 16 and ratio == check_delsarte_certificate(cert).ratio and 15 < ratio <= 16
    assert method == (f"Delsarte LP certificate ({len(cert.index)} vectors, S_k x {{+1,-1}}-invariant Gram matrix, "
                      "shipped, re-checked exactly)")
    assert wb._linear_programming_bound(2) is None
    i, j, v = next(o for o in cert.orbits if o[0] == o[1])
    bad = type(cert)(cert.k, cert.index, tuple((a, b, -w if (a, b) == (i, j) else w) for a, b, w in cert.orbits),
                     cert.denominator)
    monkeypatch.setattr(wb, "shipped_delsarte_certificate", lambda k: bad)
    with pytest.raises(SolverError, match=r"width lower bound for k=3: the Delsarte LP certificate failed its exact "
                                          r"check \(a character block is not proved positive definite\)"):
        wb._linear_programming_bound(3)


def test_best_bound_takes_the_larger_and_the_pointwise_one_on_a_tie(monkeypatch):
    lp_bound, lp_method, lp_ratio = wb._linear_programming_bound(3)
    for pointwise, winner in ((15, "lp"), (16, "pointwise"), (17, "pointwise")):
        monkeypatch.setattr(wb, "_pointwise_bound", lambda k, b=pointwise: (b, "pointwise method", Fraction(b)))
        lb = wb.best_width_lower_bound(3)
        if winner == "lp":
            assert (lb.per_frequency, lb.method) == (lp_bound, lp_method)
            assert lb.ratio == f"{lp_ratio.numerator}/{lp_ratio.denominator} ~ {float(lp_ratio):.6f}"
        else:
            assert (lb.per_frequency, lb.method, lb.ratio) == (pointwise, "pointwise method",
                                                               f"{pointwise}/1 ~ {pointwise:.6f}")


def test_the_k3_clique_search_is_deterministic_and_keeps_the_first_largest():
    """The search returns the first largest clique in its order (reproducible certificates): at k = 3 several
    cliques of 15 tie, and keeping a later one would change the shipped result (0.8 s)."""
    clique = wb.moment_clique(3)
    assert clique == [(0, 0, 0), (-1, -1, 0), (-1, 0, -1), (-2, -1, -1), (-1, -2, -1), (-1, -1, -2), (0, -1, -1),
                      (-2, -2, -2), (-3, -2, -1), (-1, 0, 1), (-2, -3, -1), (-2, -2, 0), (0, -1, 1), (-2, 0, 0),
                      (-1, 1, 0)]
    assert wb.check_gram_certificate(wb.clique_certificate(clique)).bound == 15
