"""The exact checker of the Delsarte LP width certificates (:mod:`margintheory.solvers.width_delsarte`), pinned so that
a weakened check fails: every refusal of :func:`expand_gram` at its boundary, a difference class that sums to exactly
zero outside ``M_k + {0}`` (accepted) or to one (refused), the class sums on both arithmetic paths against a
brute-force sum in Python integers, the block basis and the block Gram matrices against their definitions, exact
positive definiteness at its margins, and the ratio and bound computed from the matrix.  Small certificates built by
hand (``k = 2`` and ``k = 3``, at most 63 vectors), so the module runs in about a second; with
``tests/test_width_delsarte.py`` it is the test selection of the mutation gate's ``delsarte`` area
(``tools/mutation.sh delsarte``)."""

from __future__ import annotations

import dataclasses
import itertools
import time
from fractions import Fraction

import numpy as np
import pytest

from margintheory.core.phase_measures import unwanted_phase_moments
from margintheory.solvers import width_delsarte as wd
from margintheory.solvers.width_bounds import shipped_delsarte_certificate
from margintheory.solvers.width_delsarte import DelsarteCertificate, check_delsarte_certificate, expand_gram


def _group(k):
    """Every element ``(sign, permutation)`` of ``S_k x {+1, -1}``, by brute force."""
    return [(s, p) for s in (1, -1) for p in itertools.permutations(range(k))]


def _act(g, t):
    sign, perm = g
    return tuple(sign * t[perm[j]] for j in range(len(t)))


def _orbits_of(index, G):
    """The orbit representatives ``(i, j, G[i][j])`` of a full invariant matrix, computed in plain Python."""
    k = len(index[0])
    pos = {t: a for a, t in enumerate(index)}
    seen = set()
    reps = []
    for i in range(len(index)):
        for j in range(len(index)):
            if (i, j) in seen:
                continue
            reps.append((i, j, int(G[i][j])))
            for g in _group(k):
                a, b = pos[_act(g, index[i])], pos[_act(g, index[j])]
                seen |= {(a, b), (b, a)}
    return tuple(reps)


def _box2():
    return wd.symmetric_box(2, 1)  # (-1,-1), (-1,1), (0,0), (1,-1), (1,1)


def _k2_gram(diag0=4, diag=4, centre=1, near=1, far=1, anti=0):
    """An ``S_2 x {+-1}``-invariant matrix on the ``k = 2`` box: ``diag0`` at the origin, ``diag`` elsewhere on the
    diagonal, ``centre`` between the origin and the others, ``near`` between vectors at distance 2, ``far`` between
    ``(1, 1)`` and ``(-1, -1)``, ``anti`` between ``(1, -1)`` and ``(-1, 1)`` (difference ``(2, -2)``: the only
    class outside ``M_2 + {0}``)."""
    index = _box2()
    n = len(index)
    G = [[0] * n for _ in range(n)]
    for a, s in enumerate(index):
        for b, t in enumerate(index):
            if a == b:
                G[a][b] = diag0 if s == (0, 0) else diag
            elif (0, 0) in (s, t):
                G[a][b] = centre
            elif s == tuple(-v for v in t):
                G[a][b] = far if s[0] == s[1] else anti
            else:
                G[a][b] = near
    return index, G


def _k2_cert(denominator=1, **kw):
    index, G = _k2_gram(**kw)
    return DelsarteCertificate(2, tuple(index), _orbits_of(index, G), denominator)


# -- the matrix from its orbits ------------------------------------------------------------------------------------


def test_expand_gram_fills_every_entry_from_its_orbit():
    index, G = _k2_gram(diag0=7, diag=5, centre=2, near=-1, far=3, anti=-2)
    cert = DelsarteCertificate(2, tuple(index), _orbits_of(index, G), 3)
    full, why = expand_gram(cert)
    assert why == "" and full.dtype == np.int64 and full.tolist() == G
    cert3 = shipped_delsarte_certificate(3)
    G3, _ = expand_gram(cert3)
    assert G3.shape == (63, 63) and (G3 == G3.T).all()
    assert all(int(G3[i, j]) == v for i, j, v in cert3.orbits)


def test_expand_gram_refuses_a_malformed_index_or_denominator():
    cert = _k2_cert()
    reason = "index vectors must be distinct, of length k, and the denominator positive"
    assert expand_gram(dataclasses.replace(cert, index=())) == (None, reason)
    assert expand_gram(dataclasses.replace(cert, index=cert.index[:-1] + (cert.index[0],))) == (None, reason)
    assert expand_gram(dataclasses.replace(cert, index=tuple(t + (0,) for t in cert.index))) == (None, reason)
    assert expand_gram(dataclasses.replace(cert, denominator=0)) == (None, reason)
    assert expand_gram(dataclasses.replace(cert, denominator=-1)) == (None, reason)
    assert expand_gram(dataclasses.replace(cert, denominator=1))[1] == ""
    not_closed = dataclasses.replace(cert, index=((0, 0), (1, 1), (-1, -1), (1, -1), (-1, 3)))
    assert expand_gram(not_closed) == (None, "index is not closed under coordinate permutations and negation")


def test_expand_gram_numerator_limit_on_both_sides():
    cert = _k2_cert()
    n = len(cert.index)
    limit = wd._INT64_HEADROOM // (64 * n * n)
    orbits = list(cert.orbits)
    for value, ok in ((limit, True), (-limit, True), (limit + 1, False), (-limit - 1, False)):
        orbits[0] = (*orbits[0][:2], value)
        G, why = expand_gram(dataclasses.replace(cert, orbits=tuple(orbits)))
        assert (G is not None) == ok
        assert why == ("" if ok else "no orbit values, or numerators too large for the exact int64 path")
        if ok:
            i, j = orbits[0][:2]
            assert int(G[i, j]) == value
    assert expand_gram(dataclasses.replace(cert, orbits=()))[1] == \
        "no orbit values, or numerators too large for the exact int64 path"
    # n = 11 (k = 1, 0 and +-1..+-5): the one size up to 20000 where the limit 2^56 / n^2 as a float rounds up to the
    # next integer, so the limit must be the integer quotient
    index = tuple((v,) for v in range(-5, 6))
    zero = [[0] * 11 for _ in range(11)]
    small = DelsarteCertificate(1, index, _orbits_of(index, zero), 1)
    limit = wd._INT64_HEADROOM // (64 * 11 * 11)
    assert limit + 1 <= wd._INT64_HEADROOM / (64 * 11 * 11)
    for value, ok in ((limit, True), (limit + 1, False)):
        orbits = [small.orbits[0][:2] + (value,), *small.orbits[1:]]
        assert (expand_gram(dataclasses.replace(small, orbits=tuple(orbits)))[0] is not None) == ok


def test_expand_gram_refuses_representatives_out_of_range_overlapping_or_missing():
    cert = _k2_cert()
    n = len(cert.index)
    out = "orbit representative out of range"
    for extra in ((n, 0, 0), (0, n, 0), (-1, 0, 0), (0, -1, 0)):
        assert expand_gram(dataclasses.replace(cert, orbits=cert.orbits + (extra,))) == (None, out)
    last = (n - 1, n - 1, 4)  # in range, but its orbit is stored already
    overlap = "two stored orbits overlap (the same matrix entry gets two values)"
    assert expand_gram(dataclasses.replace(cert, orbits=cert.orbits + (last,))) == (None, overlap)
    i, j, v = next(o for o in cert.orbits if o[0] != o[1])
    assert expand_gram(dataclasses.replace(cert, orbits=cert.orbits + ((j, i, v),))) == (None, overlap)
    # an orbit whose transpose is another orbit's entry (the transpose is filled too)
    for drop in range(len(cert.orbits)):
        a, b, _ = cert.orbits[drop]
        rest = cert.orbits[:drop] + cert.orbits[drop + 1:]
        G, why = expand_gram(dataclasses.replace(cert, orbits=rest))
        size = len({(x, y) for x in range(n) for y in range(n)
                    if {x, y} == {a, b} or _same_orbit(cert.index, (x, y), (a, b))})
        assert G is None and why == f"{size} matrix entries are in no stored orbit"


def _same_orbit(index, xy, ab):
    x, y = (index[q] for q in xy)
    a, b = (index[q] for q in ab)
    return any((_act(g, a), _act(g, b)) in ((x, y), (y, x)) for g in _group(len(a)))


def test_group_closure_is_the_whole_group_and_refuses_an_open_index():
    for k, index in ((2, _box2()), (3, wd.symmetric_box(3, 1))):
        acts = wd.group_closure(index)
        expected = {tuple(index.index(_act(g, t)) for t in index) for g in _group(k)}
        assert {tuple(int(v) for v in row) for row in acts} == expected and len(acts) == len(expected)
    assert wd.group_closure([(0, 0), (1, 2)]) is None
    assert wd.group_closure([(0, 0), (1, 2), (-1, -2)]) is None  # closed under negation, not under the swap
    acts1 = wd.group_closure([(0,), (1,), (-1,)])  # k = 1: negation only
    assert sorted(map(tuple, acts1.tolist())) == [(0, 1, 2), (0, 2, 1)]


def test_group_actions_positions_and_refusal():
    index = [(0, 2), (2, 0), (0, -2), (-2, 0), (1, 1), (-1, -1)]
    rows = wd.group_actions(index, [(-1, (0, 1)), (1, (1, 0))])
    assert rows.tolist() == [[2, 3, 0, 1, 5, 4], [1, 0, 3, 2, 4, 5]]
    assert wd.group_actions(index[:-1], [(-1, (0, 1))]) is None
    assert wd._codes(np.array([[0, 2], [-2, 1]]), -2, 5).tolist() == [2 * 5 + 4, 0 * 5 + 3]


# -- the difference classes ----------------------------------------------------------------------------------------


def _brute_class_sums(index, G):
    out = {}
    for a, s in enumerate(index):
        for b, t in enumerate(index):
            d = tuple(x - y for x, y in zip(s, t, strict=True))
            out[d] = out.get(d, 0) + int(G[a][b])
    return out


@pytest.mark.parametrize("scale, offset", [(1, 0), (2**44, 1), (-(2**44), 3)])
def test_class_sums_are_exact_on_both_paths(scale, offset):
    """Small entries take the float path, entries near ``2^44`` (times ``n^2`` beyond ``2^52``) the integer path;
    the odd offsets would be lost by float sums of that size."""
    index = wd.symmetric_box(2, 2)
    rng = np.random.default_rng(1)
    n = len(index)
    G = rng.integers(-50, 50, size=(n, n)) * scale + offset
    d, sums = wd.difference_class_sums(2, tuple(index), G)
    got = {tuple(int(v) for v in x): int(y) for x, y in zip(d, sums, strict=True)}
    assert got == _brute_class_sums(index, G.tolist()) and len(d) == len(got)
    assert sums.dtype == np.int64 and d.dtype == np.int64


def test_class_sums_at_the_float_threshold():
    """At the float path's limit (``max |G| n^2`` just below ``2^52``, and at it) the sums are exact."""
    index = _box2()
    n = len(index)
    for top in (2**52 // (n * n) - 1, 2**52 // (n * n), 2**52 // (n * n) + 1):
        G = np.full((n, n), top, dtype=np.int64)
        G[0, 1] = G[1, 0] = top - 1
        d, sums = wd.difference_class_sums(2, tuple(index), G)
        got = {tuple(int(v) for v in x): int(y) for x, y in zip(d, sums, strict=True)}
        assert got == _brute_class_sums(index, G.tolist())


# -- the check: each condition ------------------------------------------------------------------------------------


def test_a_valid_small_certificate_and_its_ratio():
    cert = _k2_cert(diag0=4, diag=4, centre=1, near=1, far=1, anti=0, denominator=7)
    chk = check_delsarte_certificate(cert)
    assert chk.passed and chk.complete and chk.symmetric and chk.signs and chk.positive_definite
    assert chk.reason == "" and chk.seconds >= 0
    G = np.array(_k2_gram()[1])
    assert chk.ratio == Fraction(int(G.sum()), int(np.trace(G))) == Fraction(38, 20)
    assert chk.bound == 2 and sum(chk.blocks) == 5 and len(chk.blocks) == 4


def test_a_class_outside_the_moments_may_sum_to_zero_but_not_to_one():
    zero = check_delsarte_certificate(_k2_cert(anti=0))
    assert zero.passed
    negative = check_delsarte_certificate(_k2_cert(anti=-1))
    assert negative.passed
    one = check_delsarte_certificate(_k2_cert(anti=1))
    assert not one.passed and one.complete and one.symmetric and not one.signs and not one.positive_definite
    # both classes (2, -2) and (-2, 2) sum to 1 (G is symmetric); the first in the order of the classes is named
    assert one.reason == "difference class (-2, 2) (outside M_k + 0) sums to > 0"
    assert one.ratio == 0 and one.bound == 0 and one.blocks == ()
    # a class inside M_k + {0} is free: a large positive value there is accepted
    assert check_delsarte_certificate(_k2_cert(far=3, diag=8, diag0=8)).passed


def test_each_failure_sets_only_the_flags_before_it():
    bad_index = check_delsarte_certificate(dataclasses.replace(_k2_cert(), denominator=0))
    assert (bad_index.complete, bad_index.symmetric, bad_index.signs, bad_index.positive_definite) == (False,) * 4
    assert bad_index.reason.startswith("index vectors must be distinct") and bad_index.bound == 0
    assert bad_index.ratio == 0 and bad_index.blocks == () and bad_index.seconds >= 0
    indefinite = check_delsarte_certificate(_k2_cert(diag0=1, diag=1, centre=3))
    assert (indefinite.complete, indefinite.symmetric, indefinite.signs) == (True, True, True)
    assert not indefinite.positive_definite and not indefinite.passed
    assert indefinite.reason == "a character block is not proved positive definite"
    assert indefinite.bound > 0  # the ratio is still reported, the check is not passed


def test_an_asymmetric_matrix_is_refused(monkeypatch):
    """``expand_gram`` always gives a symmetric matrix; the check does not rely on it."""
    cert = _k2_cert()
    G, _ = expand_gram(cert)
    G = G.copy()
    G[0, 1] += 1
    monkeypatch.setattr(wd, "expand_gram", lambda c: (G, ""))
    chk = check_delsarte_certificate(cert)
    assert chk.complete and not chk.symmetric and not chk.signs and not chk.positive_definite
    assert chk.reason == "G is not symmetric"


def test_a_matrix_that_does_not_commute_with_the_2_group_is_refused(monkeypatch):
    cert = _k2_cert()
    G, _ = expand_gram(cert)
    G = G.copy()
    i, j = cert.index.index((1, 1)), cert.index.index((-1, 1))
    G[i, i] += 1  # symmetric, signs unchanged, positive definite, but no longer invariant under the swap
    assert np.linalg.eigvalsh(G.astype(float))[0] > 0 and j != i
    monkeypatch.setattr(wd, "expand_gram", lambda c: (G, ""))
    chk = check_delsarte_certificate(cert)
    assert (chk.complete, chk.symmetric, chk.signs, chk.positive_definite) == (True, True, True, False)
    assert chk.reason == "G does not commute with the 2-subgroup" and chk.bound == 0 and chk.ratio == 0
    assert chk.blocks == ()


def test_ratio_and_bound_of_degenerate_traces(monkeypatch):
    """A zero trace gives ratio 0 and bound 0 (no division); an integral ratio is its own bound."""
    cert = _k2_cert()
    zero = np.zeros((5, 5), dtype=np.int64)
    chk = wd._check_invariant_blocks(cert, zero, 0.0)
    assert chk.ratio == 0 and chk.bound == 0 and not chk.positive_definite
    eye = np.eye(5, dtype=np.int64) * 3
    chk = wd._check_invariant_blocks(cert, eye, 0.0)
    assert chk.passed and chk.ratio == 1 and chk.bound == 1 and chk.blocks == (3, 1, 0, 1)  # one character is empty
    neg = -eye  # a negative trace: no ratio
    chk = wd._check_invariant_blocks(cert, neg, 0.0)
    assert chk.ratio == 0 and chk.bound == 0 and not chk.positive_definite
    two = np.eye(5, dtype=np.int64) + 1  # J + I: ratio (25 + 5) / 10 = 3
    chk = wd._check_invariant_blocks(cert, two, 0.0)
    assert chk.passed and chk.ratio == 3 and chk.bound == 3
    three = 2 * np.eye(5, dtype=np.int64) + 1  # J + 2 I: ratio 35 / 15 = 7/3, rounded up
    chk = wd._check_invariant_blocks(cert, three, 0.0)
    assert chk.passed and chk.ratio == Fraction(7, 3) and chk.bound == 3


# -- the block reduction ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k, radius", [(2, 1), (2, 2), (3, 1), (4, 1)])
def test_character_columns_are_an_orthogonal_eigenbasis(k, radius):
    index = wd.symmetric_box(k, radius)
    n = len(index)
    blocks, gens = wd._character_columns(index)
    assert wd.character_basis_is_valid(blocks, gens, n)
    r = len(gens)
    assert r == 1 + k // 2 and len(blocks) == 2**r
    # the generators: negation and the disjoint transpositions (0 1), (2 3), ...
    expected = [(-1, tuple(range(k)))] + [(1, tuple(q ^ 1 if q < 2 * (k // 2) and q // 2 == c else q
                                                 for q in range(k))) for c in range(k // 2)]
    for g, (sign, perm) in zip(gens, expected, strict=True):
        assert [index[int(x)] for x in g] == [_act((sign, perm), t) for t in index]
    cols = []
    for chi, (P, S) in enumerate(blocks):
        for row_p, row_s in zip(P, S, strict=True):
            u = np.zeros(n, dtype=np.int64)
            np.add.at(u, row_p, row_s)
            assert np.abs(u).max() > 0 and set(np.unique(row_s).tolist()) <= {-1, 0, 1}
            for c, g in enumerate(gens):
                moved = np.zeros(n, dtype=np.int64)
                moved[g] = u
                assert np.array_equal(moved, -u if (chi >> c) & 1 else u)
            cols.append(u)
    B = np.array(cols)
    assert B.shape == (n, n) and np.count_nonzero(B @ B.T - np.diag(np.diag(B @ B.T))) == 0


def test_character_columns_refuse_an_index_not_closed_under_the_2_group():
    with pytest.raises(ValueError, match=r"^index is not closed under negation and the transpositions$"):
        wd._character_columns([(0, 0), (1, 1)])


def test_block_gram_is_b_transpose_g_b_on_both_paths():
    index = wd.symmetric_box(2, 2)
    blocks, _ = wd._character_columns(index)
    rng = np.random.default_rng(5)
    n = len(index)
    A = rng.integers(-9, 10, size=(n, n))
    for G in (A + A.T, (A + A.T) * 2**45 + 1):  # the float path, then the int64 gathers
        for P, S in blocks:
            B = np.zeros((n, len(P)), dtype=object)
            for c, (row_p, row_s) in enumerate(zip(P, S, strict=True)):
                for q, s in zip(row_p, row_s, strict=True):
                    B[q, c] += int(s)
            want = B.T @ G.astype(object) @ B
            got = wd._block_gram(G, P, S)
            assert got.dtype == np.int64 and got.tolist() == want.tolist()
            assert wd._block_gram(G, P, S, G.astype(float)).tolist() == want.tolist()
    empty = wd._block_gram(A, np.zeros((0, 4), dtype=np.int64), np.zeros((0, 4), dtype=np.int64))
    assert empty.shape == (0, 0) and empty.dtype == np.int64


def test_block_gram_at_the_float_threshold():
    index = _box2()
    blocks, _ = wd._character_columns(index)
    n = len(index)
    for P, S in blocks:
        h = P.shape[1]
        for top in (2**52 // (h * h * n) - 1, 2**52 // (h * h * n), 2**52 // (h * h * n) + 1):
            G = np.full((n, n), top, dtype=np.int64)
            G[np.arange(n), np.arange(n)] = top - 1
            B = np.zeros((n, len(P)), dtype=object)
            for c, (row_p, row_s) in enumerate(zip(P, S, strict=True)):
                for q, s in zip(row_p, row_s, strict=True):
                    B[q, c] += int(s)
            assert wd._block_gram(G, P, S).tolist() == (B.T @ G.astype(object) @ B).tolist()


def test_basis_verification_refuses_each_defect():
    index = _box2()
    n = len(index)
    blocks, gens = wd._character_columns(index)
    assert wd.character_basis_is_valid(blocks, gens, n)
    assert not wd.character_basis_is_valid(blocks, gens, n + 1)
    assert not wd.character_basis_is_valid(blocks, gens, n - 1)
    # a zero column (all signs 0) in a block
    P, S = blocks[0]
    zero = [(P, np.zeros_like(S)), *blocks[1:]]
    assert not wd.character_basis_is_valid(zero, gens, n)
    # two columns of one block sharing a position
    P0, S0 = blocks[0]
    if len(P0) > 1:
        shared = P0.copy()
        shared[1] = shared[0]
        assert not wd.character_basis_is_valid([(shared, S0), *blocks[1:]], gens, n)
    # every block moved to the next character
    rolled = blocks[1:] + blocks[:1]
    assert not wd.character_basis_is_valid(rolled, gens, n)
    # the right supports with the wrong sign pattern under one generator only
    for chi, (P, S) in enumerate(blocks):
        multi = np.flatnonzero((S != 0).sum(1) > 1)
        if len(multi):
            flipped = S.copy()
            flipped[multi[0], 1] *= -1
            assert not wd.character_basis_is_valid(blocks[:chi] + [(P, flipped)] + blocks[chi + 1:], gens, n)


# -- exact positive definiteness ----------------------------------------------------------------------------------


def test_exactly_positive_definite_edge_cases():
    assert wd.exactly_positive_definite(np.zeros((0, 0), dtype=np.int64))
    assert wd.exactly_positive_definite(np.array([[1]]))
    assert not wd.exactly_positive_definite(np.array([[0]]))
    assert not wd.exactly_positive_definite(np.array([[-1]]))
    assert wd.exactly_positive_definite(np.array([[2, -1], [-1, 2]]))
    assert not wd.exactly_positive_definite(np.array([[1, 1], [1, 1]]))
    assert not wd.exactly_positive_definite(np.array([[1, 2], [2, 1]]))
    assert not wd.exactly_positive_definite(np.array([[2, 1], [1, 2]]) - np.array([[0, 1], [0, 0]]))


@pytest.mark.parametrize("m", [2, 5, 12])
def test_exactly_positive_definite_on_nearly_singular_matrices(m):
    """``B B^T + I`` for an integer ``B`` of rank ``m - 1`` with large entries: positive definite, the smallest
    eigenvalue ~1 against entries ~10^8 (a hint with too few bits of scale does not prove it); minus ``I`` it is
    singular and refused."""
    rng = np.random.default_rng(m)
    B = rng.integers(-10**4, 10**4, size=(m, m - 1))
    C = B @ B.T
    assert wd.exactly_positive_definite(C + np.eye(m, dtype=np.int64))
    assert not wd.exactly_positive_definite(C)
    assert not wd.exactly_positive_definite(C - np.eye(m, dtype=np.int64))


def test_exactly_positive_definite_with_entries_beyond_int64():
    big = 10**20
    C = np.array([[big, big // 3], [big // 3, big]], dtype=object)
    assert wd.exactly_positive_definite(C)
    # positive definite, but singular to float64: "not proved", never a wrong "proved"
    assert not wd.exactly_positive_definite(np.array([[big, big - 1], [big - 1, big]], dtype=object))
    assert not wd.exactly_positive_definite(np.array([[big, big], [big, big]], dtype=object))


def test_a_shipped_certificate_tampered_in_one_off_diagonal_orbit():
    """k = 3: every off-diagonal orbit scaled up until positive definiteness fails is refused with that reason."""
    cert = shipped_delsarte_certificate(3)
    allowed = {tuple(int(v) for v in m) for m in unwanted_phase_moments(3)}
    a = next(q for q, (i, j, _) in enumerate(cert.orbits)
             if i != j and tuple(x - y for x, y in zip(cert.index[i], cert.index[j], strict=True)) in allowed)
    orbits = list(cert.orbits)
    i, j, v = orbits[a]
    orbits[a] = (i, j, 10 * cert.denominator)
    chk = check_delsarte_certificate(dataclasses.replace(cert, orbits=tuple(orbits)))
    assert chk.signs and not chk.positive_definite


def test_ratio_of_a_unit_trace_and_of_a_negative_total():
    cert = _k2_cert()
    origin = cert.index.index((0, 0))
    unit = np.zeros((5, 5), dtype=np.int64)
    unit[origin, origin] = 1  # trace 1 (invariant: the origin is fixed by the group)
    chk = wd._check_invariant_blocks(cert, unit, time.perf_counter())
    assert chk.ratio == 1 and chk.bound == 1 and not chk.positive_definite
    negative = np.eye(5, dtype=np.int64) * 2 - 1  # diagonal 1, off-diagonal -1: total 5 - 20 = -15, trace 5
    chk = wd._check_invariant_blocks(cert, negative, time.perf_counter())
    assert chk.ratio == -3 and chk.bound == 0


def test_every_outcome_reports_the_seconds_it_took(monkeypatch):
    outcomes = [check_delsarte_certificate(_k2_cert()), check_delsarte_certificate(_k2_cert(anti=1)),
                check_delsarte_certificate(dataclasses.replace(_k2_cert(), denominator=0))]
    cert = _k2_cert()
    G, _ = expand_gram(cert)
    G = G.copy()
    G[cert.index.index((1, 1)), cert.index.index((1, 1))] += 1
    monkeypatch.setattr(wd, "expand_gram", lambda c: (G, ""))
    outcomes.append(check_delsarte_certificate(cert))  # not invariant under the 2-group
    assert [c.reason[:20] for c in outcomes] == ["", "difference class (-2", "index vectors must b",
                                                 "G does not commute w"]
    for chk in outcomes:
        assert isinstance(chk.seconds, float) and 0 <= chk.seconds < 60


def test_exactly_positive_definite_scales_its_hint_by_the_smallest_eigenvalue():
    """``[[1, 1000], [1000, 10^6 + 1]]``: determinant 1, smallest eigenvalue ~10^-6, so the integer hint needs ~37
    bits of scale; a hint at unit scale would not prove it."""
    C = np.array([[1, 1000], [1000, 10**6 + 1]])
    assert wd.exactly_positive_definite(C)
    assert not wd.exactly_positive_definite(C - np.array([[0, 0], [0, 1]]))  # determinant 0


def test_class_sums_of_large_odd_entries_stay_exact():
    """Entries ``2^51 + 1``: a float sum of five of them is already inexact (beyond ``2^53``), so these sums must
    take the integer path (the diagonal class has five entries here)."""
    index = _box2()
    G = np.full((5, 5), 2**51 + 1, dtype=np.int64)
    d, sums = wd.difference_class_sums(2, tuple(index), G)
    got = {tuple(int(v) for v in x): int(y) for x, y in zip(d, sums, strict=True)}
    assert got == _brute_class_sums(index, G.tolist()) and got[(0, 0)] == 5 * (2**51 + 1)


def test_block_gram_of_entries_whose_block_sums_pass_2_to_53():
    """One orbit of four vectors, ``(+-2, 0), (0, +-2)`` (``n = 4``, blocks of ``h = 4`` images), entries between
    ``2^49`` and ``2^50`` of random parity: ``max |G| n`` is below ``2^52`` but the trivial block sums 16 entries,
    beyond ``2^53``, where a float sum rounds; every block must equal ``B^T G B`` in Python integers."""
    index = [(2, 0), (-2, 0), (0, 2), (0, -2)]
    blocks, _ = wd._character_columns(index)
    n = len(index)
    rng = np.random.default_rng(11)
    for _ in range(3):
        U = np.triu(rng.integers(2**49, 2**50, size=(n, n)))
        G = U + np.triu(U, 1).T
        for P, S in blocks:
            B = np.zeros((n, len(P)), dtype=object)
            for c, (row_p, row_s) in enumerate(zip(P, S, strict=True)):
                for q, sg in zip(row_p, row_s, strict=True):
                    B[q, c] += int(sg)
            assert wd._block_gram(G, P, S).tolist() == (B.T @ G.astype(object) @ B).tolist()
        assert int(wd._block_gram(G, *blocks[0]).sum()) == int(G.astype(object).sum())  # the trivial block


def test_basis_verification_refuses_a_zero_column_beside_live_ones():
    index = wd.symmetric_box(2, 2)
    n = len(index)
    blocks, gens = wd._character_columns(index)
    chi = next(c for c, (P, _) in enumerate(blocks) if len(P) > 1)
    P, S = blocks[chi]
    S = S.copy()
    S[0] = 0  # one column dropped to zero; n columns still, every other check holds
    assert not wd.character_basis_is_valid(blocks[:chi] + [(P, S)] + blocks[chi + 1:], gens, n)


def test_a_hint_that_leaves_the_remainder_only_weakly_dominant_proves_nothing(monkeypatch):
    """Soundness does not rest on the float hint: for the singular ``J = [[1, 1], [1, 1]]`` and a hint whose rows are
    equal, ``2^(2s) J - L L^T`` is a multiple of ``J`` -- diagonally dominant with equality, which proves nothing."""
    monkeypatch.setattr(np.linalg, "eigvalsh", lambda a: np.array([1.0, 2.0]))
    monkeypatch.setattr(np.linalg, "cholesky", lambda a: np.array([[0.5, 0.0], [0.5, 0.0]]))
    assert not wd.exactly_positive_definite(np.array([[1, 1], [1, 1]]))
    for hint in ([[1.0, 0.0], [0.0, 1.0]], [[0.7, 0.0], [0.7, 0.1]], [[3.0, 0.0], [-2.0, 1.0]]):
        monkeypatch.setattr(np.linalg, "cholesky", lambda a, h=hint: np.array(h))
        assert not wd.exactly_positive_definite(np.array([[1, 1], [1, 1]]))  # singular: never proved
        assert not wd.exactly_positive_definite(np.array([[1, 2], [2, 1]]))  # indefinite: never proved


def test_a_hint_beyond_int64_takes_python_integers():
    """Order 20 with a ``[[10^15, 10^7], [10^7, 1]]`` corner (condition ~10^15): the hint is scaled by ``2^40``
    and its largest entry (~3.5e19) does not fit int64; it is rounded in Python integers (an int64 cast would wrap
    and the identity would prove nothing)."""
    C = np.eye(20, dtype=object)
    C[0, 0], C[0, 1], C[1, 0] = 10**15, 10**7, 10**7
    assert wd.exactly_positive_definite(C)
    C[1, 1] = 0  # the corner has determinant -10^14: indefinite
    assert not wd.exactly_positive_definite(C)
