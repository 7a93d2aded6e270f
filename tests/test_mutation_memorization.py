"""Morwani et al. App. D.4's memorizing network (:mod:`margintheory.tasks.modular_addition.memorization`): its table
decided from the weights at every ``p``, its margin from its outputs, against wrong networks (labels ``a b``, half the
pairs, a wrong sign) and the neuron-by-neuron table.  Small cases only: this module is also the test selection of the
mutation gate's ``memorization`` area (``tools/mutation.sh memorization``)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from margintheory.core import theory
from margintheory.engines.margins import exhaustive_margin
from margintheory.tasks.modular_addition import memorization as mem

# ---------------------------------------------------------------- Morwani et al. App. D.4

@pytest.mark.parametrize("p", [5, 7])
def test_memorizing_network_logits_and_margin_against_the_engine(p: int) -> None:
    net = mem.memorization_network(p)
    dense = net.dense()
    assert dense.m == 2 * p * p
    s = np.add.outer(np.arange(p), np.arange(p)) % p
    assert np.array_equal(mem.logits_times_four(net), 4 * (np.arange(p)[None, None, :] == s[:, :, None]))
    measured = exhaustive_margin(dense.normalized()).normalized_margin
    exact = 1 / mem.norm_cubed(net)
    assert measured == pytest.approx(float(exact), rel=1e-12)
    rows, fields = mem.memorization_checks(p)
    assert all(c.passed for c in rows)
    ratio = sp.nsimplify(fields["memorization_margin_balanced"] / theory.gamma_star(p, 2))
    assert float(ratio) == pytest.approx(float(sp.sqrt(2) * (p - 1) / p**sp.Rational(3, 2)), rel=1e-12)


def test_memorizing_network_balanced_rescaling_is_measured_by_the_engine() -> None:
    p = 5
    dense = mem.memorization_network(p).dense()
    s, t = 4 ** (-1 / 3), 4 ** (-1 / 3) * 4  # ||s u|| = ||s v|| = ||t w|| with s^2 t = 1
    from margintheory.core.network import PolyNetwork

    balanced = PolyNetwork(dense.U * s, dense.W * t)
    measured = exhaustive_margin(balanced.normalized()).normalized_margin
    assert measured == pytest.approx(float(1 / mem.norm_cubed(mem.memorization_network(p), balanced=True)),
                                     rel=1e-12)


def test_a_wrong_memorizing_network_is_caught() -> None:
    net = mem.memorization_network(5)
    bad = mem.MemorizationNetwork(5, net.a, net.b, net.c, net.sv, np.ones_like(net.sw))  # w' with the wrong sign
    rows = {c.name: c for c in mem.memorization_checks(5, bad)[0]}
    assert not rows["D.4: f = 1[c = a+b]"].passed and rows["D.4: f = 1[c = a+b]"].measured > 0


def _product_labels(p: int) -> mem.MemorizationNetwork:
    """App. D.4's network for the table a * b mod p instead of a + b."""
    net = mem.memorization_network(p)
    return mem.MemorizationNetwork(p, net.a, net.b, (net.a * net.b) % p, net.sv, net.sw)


def _half_pairs(p: int) -> mem.MemorizationNetwork:
    """App. D.4's network with every other neuron pair removed (half the inputs uncovered)."""
    net = mem.memorization_network(p)
    keep = (np.arange(net.width) // 2) % 2 == 0
    return mem.MemorizationNetwork(p, net.a[keep], net.b[keep], net.c[keep], net.sv[keep], net.sw[keep])


@pytest.mark.parametrize("p", [7, 67])
def test_memorizing_network_with_product_labels_fails_at_every_p(p: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mem, "DENSE_P_MAX", 0)  # the structural count alone decides (as above p = 61)
    rows, _ = mem.memorization_checks(p, _product_labels(p))
    row = {c.name: c for c in rows}["D.4: f = 1[c = a+b]"]
    # every input with a b != a + b mod p puts its 4 at a wrong class and misses its own: 2 points each
    agree = sum((a * b - a - b) % p == 0 for a in range(p) for b in range(p))
    assert not row.passed and row.measured == 2 * (p * p - agree)


def test_memorizing_network_with_half_its_pairs_fails_and_has_margin_zero() -> None:
    p = 67
    rows, fields = mem.memorization_checks(p, _half_pairs(p))
    row = {c.name: c for c in rows}
    f = row["D.4: f = 1[c = a+b]"]
    assert not f.passed and f.measured == p * p // 2  # the uncovered inputs
    assert fields["memorization_margin_printed"] == 0.0 and fields["memorization_margin_balanced"] == 0.0
    assert not row["D.4: width 2p^2"].passed


@pytest.mark.parametrize("seed", range(6))
def test_structural_table_count_and_margin_equal_the_dense_table(seed: int) -> None:
    """Random networks of App. D.4's shape (random pairs, classes and signs, so R, C != 0 and overlapping point terms):
    the exact count of wrong points and the margin from the structure equal those of the neuron-by-neuron table."""
    rng = np.random.default_rng(seed)
    p, n = 5, int(rng.integers(1, 80))
    net = mem.MemorizationNetwork(p, rng.integers(0, p, n), rng.integers(0, p, n), rng.integers(0, p, n),
                                  rng.choice([-2, -1, 1, 2], n), rng.choice([-3, -1, 1, 3], n))  # |sv|, |sw| != 1 too
    if seed == 0:
        net = mem.memorization_network(p)
    F = mem.logits_times_four(net)
    s = np.add.outer(np.arange(p), np.arange(p)) % p
    T = 4 * (np.arange(p)[None, None, :] == s[:, :, None])
    st = mem.output_structure(net)
    assert mem.table_mismatches(st).mismatches == int(np.count_nonzero(F != T))
    right = np.take_along_axis(F, s[:, :, None], axis=2)[:, :, 0]
    others = np.where(np.arange(p)[None, None, :] == s[:, :, None], np.iinfo(np.int64).min, F)
    assert mem.output_margin_times_four(st, net) == int((right - others.max(axis=2)).min())
    point_only = mem.OutputStructure(p, 0 * st.R, 0 * st.C, st.keys, st.values)  # the sparse route alone
    P = np.zeros(p**3, dtype=np.int64)
    P[st.keys] = st.values
    P = P.reshape(p, p, p)
    rightp = np.take_along_axis(P, s[:, :, None], axis=2)[:, :, 0]
    othersp = np.where(np.arange(p)[None, None, :] == s[:, :, None], np.iinfo(np.int64).min, P)
    assert mem.output_margin_times_four(point_only, net) == int((rightp - othersp.max(axis=2)).min())
    assert mem.table_mismatches(point_only).mismatches == int(np.count_nonzero(P != T))




def _dense_wrong_points(net: mem.MemorizationNetwork) -> int:
    p = net.p
    s = np.add.outer(np.arange(p), np.arange(p)) % p
    return int(np.count_nonzero(mem.logits_times_four(net) != 4 * (np.arange(p)[None, None, :] == s[:, :, None])))


@pytest.mark.parametrize("only", ["R", "C"])
def test_a_class_where_only_the_row_or_the_column_term_is_non_zero_is_counted(only: str) -> None:
    """Two neurons at class 0 with opposite sw: sharing the input a cancels R there (only C is non-zero), sharing b
    cancels C (only R is); the wrong points of that class are counted all the same."""
    p = 5
    a, b = ([1, 1], [2, 3]) if only == "C" else ([2, 3], [1, 1])
    net = mem.MemorizationNetwork(p, np.array(a), np.array(b), np.array([0, 0]), np.array([1, 1]), np.array([1, -1]))
    st = mem.output_structure(net)
    assert (st.R.any(), st.C.any()) == ((False, True) if only == "C" else (True, False))
    assert mem.table_mismatches(st).mismatches == _dense_wrong_points(net)


def test_the_table_rows_counts_of_covered_and_wrongly_classed_inputs() -> None:
    p = 7
    agree = sum((a * b - a - b) % p == 0 for a in range(p) for b in range(p))
    cmp = mem.table_mismatches(mem.output_structure(_product_labels(p)))
    assert (cmp.covered, cmp.right_class, cmp.wrong_class) == (p * p, agree, p * p - agree)
    half = mem.table_mismatches(mem.output_structure(_half_pairs(p)))
    assert (half.covered, half.right_class, half.wrong_class) == ((p * p + 1) // 2, (p * p + 1) // 2, 0)


@pytest.mark.parametrize("stored", [4, 3])
def test_margin_from_point_terms_counts_the_unstored_wrong_classes_as_zero(stored: int) -> None:
    """Every input has 4 at its class and -2 at ``stored`` of the p - 1 = 4 wrong classes: with all four stored the
    largest wrong logit is -2 (margin 6), with one unstored it is 0 (margin 4)."""
    p = 5
    keys, values = [], []
    for i in range(p):
        for j in range(p):
            s = (i + j) % p
            keys.append((i * p + j) * p + s)
            values.append(4)
            wrong = [k for k in range(p) if k != s][:stored]
            keys += [(i * p + j) * p + k for k in wrong]
            values += [-2] * stored
    order = np.argsort(keys)
    st = mem.OutputStructure(p, np.zeros((p, p), dtype=np.int64), np.zeros((p, p), dtype=np.int64),
                             np.array(keys)[order], np.array(values)[order])
    assert mem.output_margin_times_four(st, mem.memorization_network(p)) == (6 if stored == p - 1 else 4)


def test_margin_of_a_network_with_row_terms_is_computed_up_to_dense_p_max(monkeypatch: pytest.MonkeyPatch) -> None:
    p = 5
    net = mem.memorization_network(p)
    bad = mem.MemorizationNetwork(p, net.a, net.b, net.c, net.sv, np.ones_like(net.sw))  # R, C != 0
    monkeypatch.setattr(mem, "DENSE_P_MAX", p)
    assert mem.output_margin_times_four(mem.output_structure(bad), bad) is not None
    monkeypatch.setattr(mem, "DENSE_P_MAX", p - 1)
    assert mem.output_margin_times_four(mem.output_structure(bad), bad) is None


def test_norm_cubed_sums_every_kind_of_neuron() -> None:
    """Neurons with different |v|, |w|: the sum over their kinds, against a direct sum per neuron."""
    p = 3
    net = mem.MemorizationNetwork(p, np.array([0, 1, 2]), np.array([0, 1, 2]), np.array([0, 1, 2]),
                                  np.array([1, 2, -3]), np.array([1, -2, 4]))
    kinds = list(zip([1, 2, -3], [1, -2, 4], strict=True))
    direct = sum((1 + sv**2 + sp.Rational(sw**2, 16)) ** sp.Rational(3, 2) for sv, sw in kinds)
    assert sp.simplify(mem.norm_cubed(net) - direct) == 0
    balanced = sum((3 * sp.Rational(sv**2 * sw**2, 16) ** sp.Rational(1, 3)) ** sp.Rational(3, 2)
                   for sv, sw in kinds)
    assert sp.simplify(mem.norm_cubed(net, balanced=True) - balanced) == 0


def test_the_neuron_by_neuron_table_decides_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to DENSE_P_MAX the whole table is a second, independent computation: a structural count that missed the
    wrong labels would not pass the row."""
    monkeypatch.setattr(mem, "table_mismatches", lambda st: mem.TableComparison(0, st.p**2, st.p**2, 0))
    rows = {c.name: c for c in mem.memorization_checks(7, _product_labels(7))[0]}
    assert not rows["D.4: f = 1[c = a+b]"].passed and "points differ" in rows["D.4: f = 1[c = a+b]"].detail


def test_the_margin_rows_compare_with_gamma_star() -> None:
    p = 7
    rows = {c.name: c for c in mem.memorization_checks(p)[0]}
    gamma = float(theory.gamma_star_exact_of(p, 2))
    for tag in ("as printed", "balanced"):
        row = rows[f"D.4 margin ({tag})"]
        assert row.informational and row.passed and row.expected == pytest.approx(gamma, rel=1e-15)
        assert 0 < row.measured < gamma and "gamma*" in row.detail


def test_the_whole_table_is_also_computed_at_dense_p_max(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mem, "DENSE_P_MAX", 7)
    row = mem.memorization_checks(7)[0][0]
    assert row.passed and "neuron by neuron on the whole 7^3 table: 0 points differ" in row.detail


def test_margin_rows_when_the_margin_is_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    p = 5
    net = mem.memorization_network(p)
    bad = mem.MemorizationNetwork(p, net.a, net.b, net.c, net.sv, np.ones_like(net.sw))  # R, C != 0
    monkeypatch.setattr(mem, "DENSE_P_MAX", 3)
    rows, fields = mem.memorization_checks(p, bad)
    named = {c.name: c for c in rows}
    for tag in ("as printed", "balanced"):
        row = named[f"D.4 margin ({tag})"]
        assert row.measured is None and not row.passed and row.informational and "not computed" in row.detail
        assert row.expected == pytest.approx(float(theory.gamma_star_exact_of(p, 2)), rel=1e-15)
        assert fields[f"memorization_margin_{'balanced' if tag == 'balanced' else 'printed'}"] is None
    assert not named["D.4: f = 1[c = a+b]"].passed and named["D.4: Fourier-dense"].passed


def test_a_margin_above_gamma_star_fails_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mem, "norm_cubed", lambda net, balanced=False: sp.Rational(1, 10**6))
    rows = {c.name: c for c in mem.memorization_checks(7)[0]}
    assert not rows["D.4 margin (as printed)"].passed and not rows["D.4 margin (balanced)"].passed


def test_even_p_has_no_gamma_star_to_compare() -> None:
    rows = {c.name: c for c in mem.memorization_checks(4)[0]}
    row = rows["D.4 margin (balanced)"]
    assert row.expected is None and row.passed and "gamma*" not in row.detail
    assert rows["D.4: f = 1[c = a+b]"].passed
