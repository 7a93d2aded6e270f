"""The Delsarte LP bound on the neurons per frequency: the exact checker, the shipped certificates (k = 3..6), and
checks that a tampered or weakened certificate is rejected."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from margintheory.core.phase_measures import parity_design_measure, unwanted_phase_moments
from margintheory.solvers.width_bounds import shipped_delsarte_certificate, width_lower_bound
from margintheory.solvers.width_delsarte import (
    DelsarteCertificate,
    _orbit_data,
    check_delsarte_certificate,
    delsarte_sdp,
    difference_class_sums,
    exactly_positive_definite,
    expand_gram,
    parity_classes,
    round_delsarte_certificate,
    symmetric_box,
)


def _allowed(k):
    return {tuple(int(v) for v in m) for m in unwanted_phase_moments(k)} | {(0,) * k}


# ---------------------------------------------------------------- the exact positive-definiteness test

def test_exact_positive_definiteness_accepts_and_refuses():
    hilbert = np.array([[int(2520 * 2520 // (i + j + 1)) for j in range(6)] for i in range(6)], dtype=np.int64)
    assert exactly_positive_definite(hilbert)  # PD, condition number ~1e7
    assert exactly_positive_definite(np.eye(3, dtype=np.int64))
    assert not exactly_positive_definite(np.ones((4, 4), dtype=np.int64))  # PSD, singular
    assert not exactly_positive_definite(np.array([[2, 3], [3, 2]], dtype=np.int64))  # indefinite
    assert not exactly_positive_definite(np.array([[2, 1], [0, 2]], dtype=np.int64))  # not symmetric
    # PD by a hair: [[n, n-1], [n-1, n-1]] has determinant n - 1 > 0 and smallest eigenvalue ~ 1/4
    n = 10**6
    assert exactly_positive_definite(np.array([[n, n - 1], [n - 1, n - 1]], dtype=np.int64))
    assert not exactly_positive_definite(np.array([[n - 1, n - 1], [n - 1, n - 1]], dtype=np.int64))


# ---------------------------------------------------------------- the shipped certificates

@pytest.mark.parametrize("k, bound", [(3, 16), (4, 40)])
def test_shipped_certificates_prove_their_bounds(k, bound):
    cert = shipped_delsarte_certificate(k)
    chk = check_delsarte_certificate(cert)
    assert chk.passed, chk.reason
    assert chk.bound == bound and bound - 1 < chk.ratio <= bound
    assert sum(chk.blocks) == len(cert.index)
    # a bound above a measure that exists would be a contradiction: the ratio never exceeds the parity design
    assert chk.ratio <= parity_design_measure(k).size


def test_the_k5_minimum_is_96():
    """The k = 5 certificate (1131 vectors) proves 96 neurons per frequency; the parity design has 96.
    (:func:`width_lower_bound` re-checks the shipped certificate exactly, once per process.)"""
    lb = width_lower_bound(5)
    assert lb.per_frequency == 96 == parity_design_measure(5).size and lb.exactness == "proved"
    assert "Delsarte LP" in lb.method and lb.total(11) == 96 * 5
    ratio = Fraction(lb.ratio.split()[0])
    assert 95 < ratio < 96
    cert = shipped_delsarte_certificate(5)
    assert len(cert.index) == 1131 and cert.k == 5


def test_the_k6_bound_is_222():
    """k = 6: 222 <= neurons per frequency <= 224 (the parity design); the ratio stays below the design's size and
    below the number of parity classes its index set meets (224: all of them)."""
    lb = width_lower_bound(6)
    assert lb.per_frequency == 222 and "Delsarte LP" in lb.method and "4989 vectors" in lb.method
    assert 221 < Fraction(lb.ratio.split()[0]) <= 222 < parity_design_measure(6).size == 224
    assert parity_classes(6, shipped_delsarte_certificate(6).index) == 224


@pytest.mark.parametrize("k, radius, norm2, classes",
                         [(3, 1, None, 10), (3, 2, 4, 12), (3, 2, 6, 15), (4, 1, None, 24)])
def test_an_index_set_proves_at_most_its_parity_classes(k, radius, norm2, classes):
    """The SDP optimum over an index set never exceeds the number of classes of the index modulo L_k (the parity
    design's group; docs/theory.md#delsarte-classes), and reaches it on these small sets -- an index set missing a
    class cannot prove (k+1) 2^(k-1)."""
    index = symmetric_box(k, radius, norm2)
    assert parity_classes(k, index) == classes
    _, _, value, status = delsarte_sdp(k, index)
    assert status == "optimal" and value <= classes + 1e-6
    assert value >= classes - 1e-3 or (k, radius) == (4, 1)


@pytest.mark.parametrize("k", [3, 4, 5])
def test_shipped_ratios_are_within_the_parity_classes(k):
    cert = shipped_delsarte_certificate(k)
    G, _ = expand_gram(cert)  # the ratio 1^T G 1 / trace G (the full check is in the tests above)
    assert Fraction(int(G.sum()), int(np.trace(G))) <= parity_classes(k, cert.index) == parity_design_measure(k).size


def test_k5_certificate_with_one_diagonal_orbit_lowered_is_rejected():
    """Tampering the shipped k = 5 certificate: the smallest diagonal orbit value pushed far below the others
    breaks positive definiteness, and the check says so (not a silent pass with another ratio)."""
    cert = shipped_delsarte_certificate(5)
    orbits = list(cert.orbits)
    a = min(range(len(orbits)), key=lambda q: (orbits[q][0] != orbits[q][1], orbits[q][2]))
    i, j, v = orbits[a]
    orbits[a] = (i, j, -v)
    chk = check_delsarte_certificate(dataclasses.replace(cert, orbits=tuple(orbits)))
    assert chk.complete and chk.symmetric and not chk.positive_definite and not chk.passed


# ---------------------------------------------------------------- what the certificate means

def test_certificate_function_is_nonnegative_and_bounds_the_design():
    """F = v* G v >= 0 at random points; its Fourier coefficients are <= 0 off M_k + {0}; and for the 16-atom
    design the double sum sum_ab w_a w_b F(theta_a - theta_b) is <= trace(G): the three facts the bound rests on,
    checked in floating point on the shipped k = 3 certificate."""
    cert = shipped_delsarte_certificate(3)
    G, _ = expand_gram(cert)
    Gf = G.astype(float) / cert.denominator
    T = np.array(cert.index)
    rng = np.random.default_rng(0)
    V = np.exp(1j * rng.uniform(0, 2 * np.pi, (2000, 3)) @ T.T)
    assert np.einsum("ns,st,nt->n", V.conj(), Gf, V).real.min() > 0
    d, sums = difference_class_sums(3, cert.index, G)
    off = np.array([tuple(int(v) for v in x) not in _allowed(3) for x in d])
    assert off.any() and (sums[off] <= 0).all() and (sums[off] < 0).any()
    mu = parity_design_measure(3)
    diff = (mu.angles()[:, None, :] - mu.angles()[None, :, :]).reshape(-1, 3)
    Vd = np.exp(1j * diff @ T.T)
    double_sum = np.einsum("ns,st,nt->n", Vd.conj(), Gf, Vd).real.sum() / mu.size**2
    assert double_sum <= np.trace(Gf) * (1 + 1e-9)
    assert Gf.sum() / np.trace(Gf) <= mu.size


# ---------------------------------------------------------------- tampered certificates

def _k3():
    return shipped_delsarte_certificate(3)


def _with(cert, a, value):
    orbits = list(cert.orbits)
    i, j, _ = orbits[a]
    orbits[a] = (i, j, value)
    return dataclasses.replace(cert, orbits=tuple(orbits))


def test_raising_an_off_class_entry_breaks_the_signs():
    cert = _k3()
    allowed = _allowed(3)
    a = next(q for q, (i, j, _) in enumerate(cert.orbits)
             if tuple(x - y for x, y in zip(cert.index[i], cert.index[j], strict=True)) not in allowed)
    chk = check_delsarte_certificate(_with(cert, a, 10**3 * cert.denominator))
    assert chk.complete and chk.symmetric and not chk.signs and not chk.passed and "sums to > 0" in chk.reason


def test_negative_diagonal_breaks_positive_definiteness():
    cert = _k3()
    a = next(q for q, (i, j, _) in enumerate(cert.orbits) if i == j)
    chk = check_delsarte_certificate(_with(cert, a, -1))
    assert chk.signs and not chk.positive_definite and not chk.passed


def test_missing_overlapping_and_out_of_range_orbits_are_refused():
    cert = _k3()
    missing = check_delsarte_certificate(dataclasses.replace(cert, orbits=cert.orbits[1:]))
    assert not missing.complete and "no stored orbit" in missing.reason
    i, j, v = cert.orbits[5]
    doubled = check_delsarte_certificate(dataclasses.replace(cert, orbits=cert.orbits + ((j, i, v + 1),)))
    assert not doubled.complete and "overlap" in doubled.reason
    bad = check_delsarte_certificate(dataclasses.replace(cert, orbits=cert.orbits + ((len(cert.index), 0, 1),)))
    assert not bad.passed
    huge = check_delsarte_certificate(_with(cert, 0, 2**62))
    assert not huge.passed and "too large" in huge.reason


def test_index_not_closed_under_the_group_is_refused():
    cert = _k3()
    index = list(cert.index)
    index[-1] = (9, 9, 0)  # a vector whose images are not in the index
    chk = check_delsarte_certificate(dataclasses.replace(cert, index=tuple(index)))
    assert not chk.complete and "not closed" in chk.reason


def test_diagonal_shift_keeps_validity_and_lowers_the_ratio_exactly():
    """Adding c I keeps every condition and changes the ratio to (S + n c) / (t + n c): the ratio is computed from
    the matrix, not read from anywhere."""
    cert = _k3()
    base = check_delsarte_certificate(cert)
    c = cert.denominator
    orbits = tuple((i, j, v + c) if i == j else (i, j, v) for i, j, v in cert.orbits)
    chk = check_delsarte_certificate(dataclasses.replace(cert, orbits=orbits))
    G, _ = expand_gram(cert)
    n = len(cert.index)
    assert chk.passed and chk.ratio == Fraction(int(G.sum()) + n * c, int(np.trace(G)) + n * c) < base.ratio


def test_rounding_reproduces_a_certificate_from_floating_point_values():
    """The rounding step (:func:`round_delsarte_certificate`) fed the shipped k = 3 values in floating point (what
    an SDP solver returns) gives a certificate that passes the exact check with the same bound; JSON round trip."""
    cert = _k3()
    index = list(cert.index)
    data = _orbit_data(3, index)
    G, _ = expand_gram(cert)
    x = np.bincount(data["orb"].ravel(), weights=G.ravel().astype(float)) / data["sizes"]
    again = round_delsarte_certificate(3, index, data, x * 1.7, denominator=10**8)
    chk = check_delsarte_certificate(again)
    assert chk.passed and chk.bound == 16 and again.denominator == 10**8
    assert DelsarteCertificate.from_json(again.to_json()) == again


def test_class_sums_float_and_integer_paths_agree():
    """The exact float path (sums below 2^53) and the int64 sort path give the same classes and sums; the entries
    scaled by 2^40 force the second path."""
    cert = _k3()
    G, _ = expand_gram(cert)
    d1, s1 = difference_class_sums(3, cert.index, G)
    d2, s2 = difference_class_sums(3, cert.index, G * 2**40)
    o1, o2 = np.lexsort(d1.T[::-1]), np.lexsort(d2.T[::-1])
    assert np.array_equal(d1[o1], d2[o2]) and np.array_equal(s1[o1] * 2**40, s2[o2])
    T = np.array(cert.index)
    brute = {}
    for i, s in enumerate(T):
        for j, t in enumerate(T):
            brute[tuple(int(v) for v in s - t)] = brute.get(tuple(int(v) for v in s - t), 0) + int(G[i, j])
    assert {tuple(int(v) for v in x): int(y) for x, y in zip(d1, s1, strict=True)} == brute


def test_character_basis_verification_catches_a_wrong_basis():
    """The block reduction verifies its basis (eigenvectors of the 2-group with the block's character, disjoint
    supports, n columns); a sign flipped inside one column, or a block filed under another character, fails."""
    from margintheory.solvers.width_delsarte import _character_columns, character_basis_is_valid

    cert = _k3()
    n = len(cert.index)
    blocks, gens = _character_columns(cert.index)
    assert character_basis_is_valid(blocks, gens, n)
    P, S = blocks[1]
    a = int(np.flatnonzero((S != 0).sum(1) > 1)[0])
    flipped = S.copy()
    flipped[a, 0] *= -1
    assert not character_basis_is_valid([blocks[0], (P, flipped), *blocks[2:]], gens, n)
    assert not character_basis_is_valid([(P, S), *blocks[1:]], gens, n)
    assert not character_basis_is_valid(blocks[1:], gens, n)


def test_the_checker_refuses_a_wrong_block_basis(monkeypatch):
    """The exact check relies on its own basis verification.  Make ``G`` indefinite (diagonal lowered just past
    its smallest eigenvalue: one character block goes negative), then hand the checker a "basis" in which that
    block is replaced by a copy of a positive one: every block it would test is positive definite, so a checker
    that skipped the verification would accept an indefinite matrix; this one refuses."""
    import margintheory.solvers.width_delsarte as wd

    cert = _k3()
    G, _ = expand_gram(cert)
    shift = int(np.ceil(np.linalg.eigvalsh(G.astype(float))[0] * 1.001))
    lowered = dataclasses.replace(cert, orbits=tuple((i, j, v - shift) if i == j else (i, j, v)
                                                     for i, j, v in cert.orbits))
    assert not check_delsarte_certificate(lowered).positive_definite  # indefinite: refused with the true basis
    blocks, gens = wd._character_columns(cert.index)
    Gl, _ = expand_gram(lowered)
    bad = [c for c, (P, S) in enumerate(blocks) if np.linalg.eigvalsh(wd._block_gram(Gl, P, S))[0] < 0]
    good = next(c for c in range(len(blocks)) if c not in bad)
    swapped = [blocks[good] if c in bad else b for c, b in enumerate(blocks)]
    assert all(np.linalg.eigvalsh(wd._block_gram(Gl, P, S))[0] > 0 for P, S in swapped)
    monkeypatch.setattr(wd, "_character_columns", lambda index: (swapped, gens))
    chk = check_delsarte_certificate(lowered)
    assert chk.signs and not chk.positive_definite and not chk.passed


def test_the_memory_estimate_knows_every_shipped_certificate():
    """The estimate of the width lower bound's check counts the vectors of each shipped certificate (a certificate
    regenerated with another index set must update the table, or the estimate would be off)."""
    from margintheory.solvers import width_bounds as wb

    assert set(wb.SHIPPED_DELSARTE_VECTORS) == set(wb.SHIPPED_DELSARTE)
    for k, n in wb.SHIPPED_DELSARTE_VECTORS.items():
        assert len(shipped_delsarte_certificate(k).index) == n
    assert wb.estimate_width_lower_bound_bytes(6) > 150 * 2**20 > wb.estimate_width_lower_bound_bytes(5)
    assert wb.estimate_width_lower_bound_bytes(9) == 2 * 2**20  # nothing shipped: the pointwise bound only
