"""A certificate's lower end is the margin of the network as given (its float64 weights are exact dyadic rationals,
nothing is rounded), and ``check`` reads what a certificate is: known fields only, no larger than its ``k`` allows,
rationals of any length up to its digit limit."""

from __future__ import annotations

import json
from fractions import Fraction

import flint
import numpy as np
import pytest

from margintheory.certificate import checker
from margintheory.certificate.block_sos import VARIABLES
from margintheory.certificate.maxmin import rational_witness
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork


def _noisy(p: int, k: int, size: float, seed: int = 0) -> PolyNetwork:
    net = build_construction(p, k)
    rng = np.random.default_rng(seed)
    return PolyNetwork(net.U * (1 + size * rng.standard_normal(net.U.shape)),
                       net.W * (1 + size * rng.standard_normal(net.W.shape)))


def _exact_margin(net: PolyNetwork) -> Fraction:
    """The normalized margin ``h / sum_i ||theta_i||^(k+1)`` of the float64 weights, exactly (odd ``k``: the norms
    are rational)."""
    assert net.k % 2 == 1
    U = [[[Fraction(float(x)) for x in r] for r in n] for n in net.U]
    W = [[Fraction(float(x)) for x in r] for r in net.W]
    h, _ = checker.network_margin_bound(net.p, net.k, U, W)
    sq = [sum(x * x for r in U[i] for x in r) + sum(x * x for x in W[i]) for i in range(net.m)]
    return Fraction(h) / sum(s ** ((net.k + 1) // 2) for s in sq)


def test_the_witness_is_the_network_as_given_and_its_lower_end_is_at_most_the_files_margin():
    """A (5, 3) file with 1e-13 noise: claim.lower was the exact margin of a 2^-50-rounded copy, above the file's
    own margin.  Now the witness holds the file's float64 weights exactly (times a power of two), so claim.lower is
    at most the file's exact margin."""
    net = _noisy(5, 3, 1e-13)
    doc, L = rational_witness(net)
    shift = int(doc["weights"].rsplit("2^", 1)[1])
    assert [[[Fraction(x) for x in r] for r in n] for n in doc["U"]] == \
        [[[Fraction(float(x)) * Fraction(2) ** shift for x in r] for r in n] for n in net.U]
    exact = _exact_margin(net)
    assert L.exact is not None and Fraction(str(L.exact)) == exact  # odd k: the norm is exact, so L is the margin
    assert L.value <= float(exact) and exact < Fraction(build_construction(5, 3).p)  # (sanity)
    assert "nothing rounded" in L.how and "2^-" not in L.how


def test_the_witness_is_refused_when_it_would_make_the_file_too_large(monkeypatch):
    from margintheory.certificate import maxmin

    monkeypatch.setattr(maxmin, "WITNESS_MAX_BYTES", 1000)
    assert rational_witness(build_construction(5, 2)) is None


def test_check_refuses_unknown_fields_at_every_level():
    doc = json.loads(open("tests/fixtures/certificates/p3k1.json").read())
    assert checker.check_data(doc).status == "valid"
    for where in ([], ["claim"], ["sos"], ["reduction"], ["solver"]):
        bad = json.loads(json.dumps(doc))
        obj = bad
        for part in where:
            obj = obj[part]
        obj["pad"] = "x" * 100
        out = checker.check_data(bad)
        assert out.status == "unreadable" and out.message.startswith("unknown field 'pad'"), (where, out.message)
    bad = json.loads(json.dumps(doc))
    bad["sos"]["blocks"][0]["pad"] = 1
    assert "in sos.blocks[0]" in checker.check_data(bad).message


def test_a_5000_digit_rational_is_read_and_a_longer_one_named_by_its_length(monkeypatch):
    """It was called "not a rational 'a/b'" (Python's 4300-digit limit of int(str))."""
    big = "7" * 5000
    assert checker.to_fraction(checker.rational(f"{big}/3", "x")) == Fraction(int(flint.fmpz(big)), 3)
    monkeypatch.setattr(checker, "MAX_DIGITS", 4000)
    with pytest.raises(checker.Unreadable, match="a 5000-digit integer, longer than a certificate's numbers"):
        checker.rational(f"1/{big}", "x")
    for text in ("1_0", "0x10", "1.5", "1/ 2", ""):
        with pytest.raises(checker.Unreadable, match="not a rational"):
            checker.rational(text, "x")


def test_the_checkers_copy_of_the_relaxation_sizes_is_the_producers():
    assert checker.RELAXATION_VARIABLES == VARIABLES
    assert checker.WITNESS_MAX_BYTES >= __import__("margintheory.certificate.maxmin", fromlist=["x"]).WITNESS_MAX_BYTES
