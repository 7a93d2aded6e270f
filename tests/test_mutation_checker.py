"""The independent certificate checker (``margintheory check``), pinned so that a weakened checker fails.

Every test here reads fixed certificate files (``tests/fixtures/certificates``, made by ``make_certificates.py``) or
builds inputs by hand, never the producer, and compares the checker with an oracle written differently (sympy
expansions, principal minors, the theorem's closed form).  They are also the test selection of the mutation gate's
``checker`` area (``tools/mutation.sh checker``), so the module must stay fast (about a second).

What each group would catch: a Gram block that is indefinite in any position, the last included; an upper bound
that covers one frequency block but not every one; a lower bound the witness network does not attain, or one that
exceeds the upper bound; a relative gap claimed smaller than it is; a file over the size limit read in full; a
boundary (``<`` for ``<=``) moved in any of the exact comparisons.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import sys
from fractions import Fraction
from pathlib import Path

import flint
import pytest
import sympy as sp

from margintheory.certificate import checker
from margintheory.certificate.checker import Unreadable
from margintheory.runtime import progress

F = Fraction
FIXTURES = Path(__file__).parent / "fixtures" / "certificates"
_TEXT = {name: (FIXTURES / f"{name}.json").read_text() for name in ("p3k1", "p3k3", "p4k2", "p5k2")}

PSD_FAILURE = "Gram matrices positive semidefinite (exact LDL^T)"
UPPER_FAILURE = "upper bound U >= c gamma/scale for every block"
WITNESS_FAILURE = "lower bound: exact margin of the included network"
GAP_FAILURE = "relative gap (U - L)/L <= claimed"


def cert(name: str) -> dict:
    """A fresh copy of a committed certificate (tests may change it)."""
    return json.loads(_TEXT[name])


def failed(doc: dict) -> tuple[str, str]:
    """``(step name, detail)`` of the failed step of an invalid certificate."""
    out = checker.check_data(doc)
    assert out.status == "invalid", out.message
    last = out.steps[-1]
    assert last.passed is False and last.exactness == "proved" and (out.p, out.k) == (doc["p"], doc["k"])
    assert out.message == f"step failed: {last.name}: {last.detail}"
    return last.name, last.detail


def unreadable(doc: object) -> str:
    out = checker.check_data(doc)
    assert out.status == "unreadable" and out.steps == [] and out.exit_code == 2, out.message
    return out.message


def minimal(p: int = 5, k: int = 2, **sos: object) -> dict:
    """The smallest document ``parse`` reads: no Gram blocks, no multiplier, no constants."""
    base = {"k": k, "homogeneous": k % 2 == 1, "half_degree": (k + 2) // 2 if k % 2 == 0 else (k + 1) // 2,
            "blocks": [], "multiplier": [], "scale": "1", "gamma": "1"}
    base.update(sos)
    return {"format": checker.FORMAT, "version": 1, "p": p, "k": k, "claim": {"upper": "1"},
            "reduction": {"p": p, "k": k, "blocks": []}, "sos": base}


# -- exact rationals -----------------------------------------------------------------------------------------------


def test_rational_reads_integers_and_fractions_exactly_and_nothing_else():
    for text, value in (("3/4", F(3, 4)), (" -6/8 ", F(-3, 4)), ("7", F(7)), (7, F(7)), ("0", F(0)), ("5/", F(5))):
        got = checker.rational(text, "x")
        assert isinstance(got, flint.fmpq) and checker.to_fraction(got) == value
    for bad, message in ((True, "x: expected a rational 'a/b', got True"), (1.5, "x: expected a rational 'a/b', "
                         "got 1.5"), (None, "x: expected a rational 'a/b', got None"),
                         ("1.5", "x: not a rational 'a/b': '1.5'"), ("a/b", "x: not a rational 'a/b': 'a/b'"),
                         ("3/0", "x: denominator must be positive in '3/0'"),
                         ("3/-4", "x: denominator must be positive in '3/-4'")):
        with pytest.raises(Unreadable) as exc:
            checker.rational(bad, "x")
        assert str(exc.value) == message


def test_rational_falls_back_to_fractions_without_flint(monkeypatch):
    monkeypatch.setattr(checker, "_fmpq", None)
    got = checker.rational("-3/6", "x")
    assert type(got) is Fraction and got == F(-1, 2)
    assert checker._fast(F(1, 3)) == F(1, 3) and type(checker._fast(F(1, 3))) is Fraction
    assert type(checker._like(flint.fmpq(1), F(1, 2))) is Fraction


def test_rational_type_conversions():
    q = flint.fmpq(-3, 4)
    assert checker.to_fraction(q) == F(-3, 4) and type(checker.to_fraction(q)) is Fraction
    assert checker.to_fraction(F(5, 7)) == F(5, 7)
    assert type(checker._fast(F(1, 3))) is flint.fmpq and checker._fast(F(1, 3)) == flint.fmpq(1, 3)
    assert type(checker._fast(3)) is int and checker._fast(q) is q
    assert type(checker._like(F(1), F(1, 2))) is Fraction
    like = checker._like(flint.fmpq(1), F(-1, 2))
    assert type(like) is flint.fmpq and like == flint.fmpq(-1, 2)


def test_positive_algebraic_square():
    assert checker.positive_algebraic_square("3/4", "x") == F(9, 16)
    assert checker.positive_algebraic_square(" sqrt(2/9) ", "x") == F(2, 9)
    assert checker.positive_algebraic_square("0", "x") == 0
    assert checker.positive_algebraic_square("sqrt(0)", "x") == 0
    for bad, message in ((F(1, 2), "x: expected 'a/b' or 'sqrt(a/b)', got Fraction(1, 2)"),
                         ("-1/2", "x: must be non-negative"), ("sqrt(-1/2)", "x: square root of a negative number"),
                         ("sqrt(1/2", "x: not a rational 'a/b': 'sqrt(1/2'"),
                         ("sqrt(1/x)", "x: not a rational 'a/b': '1/x'")):
        with pytest.raises(Unreadable) as exc:
            checker.positive_algebraic_square(bad, "x")
        assert str(exc.value) == message


# -- the polynomials rebuilt from (p, k), against sympy ------------------------------------------------------------


def _sympy_coefficients(expr: sp.Expr, z: list, w: list) -> dict[tuple[int, ...], Fraction]:
    poly = sp.Poly(sp.expand(expr), *z, *w)
    return {tuple(m): F(int(c.p), int(c.q)) for m, c in poly.terms() if c != 0}


def _variables(n: int) -> tuple[list, list]:
    return list(sp.symbols(f"z0:{n}")), list(sp.symbols(f"w0:{n}"))  # w_i stands for conj(z_i)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_block_form_is_the_real_part_of_conj_zw_times_z1_to_zk(k):
    z, w = _variables(k + 1)
    g = (w[k] * sp.Mul(*z[:k]) + z[k] * sp.Mul(*w[:k])) / 2
    assert checker.block_form(k) == _sympy_coefficients(g, z, w)


@pytest.mark.parametrize("n,h", [(1, 1), (2, 2), (3, 2), (2, 3)])
def test_norm_power_is_the_expanded_power_of_the_squared_norm(n, h):
    z, w = _variables(n)
    assert checker.norm_power(n, h) == _sympy_coefficients(sum(a * b for a, b in zip(z, w, strict=True)) ** h, z, w)
    assert checker.norm_power(n, 0) == {(0,) * (2 * n): 1}


def test_conj_times():
    # conj(z_1 conj(z_2)^2) * (z_2 conj(z_1)) = conj(z_1) z_2^2 z_2 conj(z_1) = z_2^3 conj(z_1)^2
    assert checker.conj_times((1, 0, 0, 2), (0, 1, 1, 0)) == (0, 3, 2, 0)
    assert checker.conj_times((2, 1, 3, 0, 0, 5), (0, 4, 0, 1, 1, 1)) == (0, 4, 5, 3, 2, 4)


def _random_sos_data(rng: random.Random, k: int, homogeneous: bool, h: int):
    n = k + 1
    monos = [m for m in itertools.product(range(3), repeat=2 * n) if sum(m) <= h + 1]
    blocks = []
    for _ in range(rng.randint(1, 3)):
        size = rng.randint(1, 3)
        basis = [rng.choice(monos) for _ in range(size)]
        gram = [[F(0)] * size for _ in range(size)]
        for r in range(size):
            for s in range(r, size):
                gram[r][s] = gram[s][r] = F(rng.randint(-3, 3), rng.randint(1, 3)) * rng.randint(0, 1)
        blocks.append((basis, [[flint.fmpq(x.numerator, x.denominator) for x in row] for row in gram]))
    multiplier = [] if homogeneous else [(rng.choice(monos), flint.fmpq(rng.randint(-4, 4), rng.randint(1, 4)))
                                         for _ in range(rng.randint(1, 4))]
    return blocks, multiplier


@pytest.mark.parametrize("seed", range(6))
def test_identity_defect_is_lhs_minus_rhs_expanded_by_sympy(seed):
    """``SOS + lambda (1 - |z|^2) - (gamma N - scale g_k)`` for random (not valid) data, coefficient by
    coefficient, against sympy's expansion of the same polynomial."""
    rng = random.Random(seed)
    k = 1 + seed % 3
    homogeneous = seed % 2 == 0
    h = rng.randint(1, 3)
    blocks, multiplier = _random_sos_data(rng, k, homogeneous, h)
    scale, gamma = flint.fmpq(rng.randint(1, 5), 3), flint.fmpq(rng.randint(-5, 5), 7)
    if seed % 3 == 1:  # Fractions throughout (as the producer passes them): the constants follow their type
        scale, gamma = checker.to_fraction(scale), checker.to_fraction(gamma)
        blocks = [(b, [[checker.to_fraction(x) for x in row] for row in g]) for b, g in blocks]
        multiplier = [(m, checker.to_fraction(c)) for m, c in multiplier]
    n = k + 1
    z, w = _variables(n)

    def mono(m):
        return sp.Mul(*[v**e for v, e in zip(z + w, m, strict=True)])

    def q(x):
        x = checker.to_fraction(x)
        return sp.Rational(x.numerator, x.denominator)

    sos = sum(q(g[r][s]) * mono(checker.conj_times(b[r], b[s])) for b, g in blocks for r in range(len(b))
              for s in range(len(b)))
    norm2 = sum(a * c for a, c in zip(z, w, strict=True))
    lam = sum(q(c) * mono(m) for m, c in multiplier)
    N = norm2**h if homogeneous else 1
    g_k = (w[k] * sp.Mul(*z[:k]) + z[k] * sp.Mul(*w[:k])) / 2
    want = _sympy_coefficients(sos + lam * (1 - norm2) - (q(gamma) * N - q(scale) * g_k), z, w)
    got = checker.identity_defect(k, homogeneous, h, scale, gamma, blocks, multiplier)
    assert {m: checker.to_fraction(c) for m, c in got.items()} == want
    assert all(c != 0 for c in got.values())


def test_block_constants_squared_are_those_of_the_closed_form_gamma_star():
    """The complex block's ``c^2 max(g_k)^2`` is ``gamma*^2`` of the theorem (max g_k = (k+1)^(-(k+1)/2) on the unit
    sphere); for even ``p`` the real block's constant is ``2^(k-1)`` times larger; ``p = 2`` has only the real one."""
    def gamma_star_squared(p, k):  # 2 k! / ((2k+2)^((k+1)/2) (p-1) p^((k-1)/2)), squared
        return F(4 * math.factorial(k) ** 2, (2 * k + 2) ** (k + 1) * (p - 1) ** 2 * p ** (k - 1))

    for p, k in ((3, 1), (5, 2), (7, 3), (4, 2), (6, 3), (8, 1)):
        blocks = checker.block_constants_squared(p, k)
        complex_block = blocks[0]
        assert complex_block["frequencies"] == f"1..{(p - 1) // 2}" and complex_block["domain"] == "complex"
        assert complex_block["constant_squared"] / (k + 1) ** (k + 1) == gamma_star_squared(p, k)
        if p % 2:
            assert len(blocks) == 1
        else:
            assert blocks[1]["frequencies"] == str(p // 2) and blocks[1]["domain"] == "real" and len(blocks) == 2
            assert blocks[1]["constant_squared"] == 2 ** (k - 1) * complex_block["constant_squared"]
    assert [b["frequencies"] for b in checker.block_constants_squared(9, 2)] == ["1..4"]
    assert checker.block_constants_squared(2, 3) == [{"frequencies": "1", "domain": "real",
                                                      "constant_squared": F(6, 1 * 8) ** 2 * 16}]


# -- exact positive semidefiniteness -------------------------------------------------------------------------------


def _psd_by_principal_minors(a: list[list[Fraction]]) -> bool:
    n = len(a)
    return all(sp.Matrix([[a[i][j] for j in idx] for i in idx]).det() >= 0
               for r in range(1, n + 1) for idx in itertools.combinations(range(n), r))


def test_ldl_agrees_with_the_principal_minors_on_random_matrices():
    """Symmetric matrices of every kind: PSD of every rank (``B B^T``), and the same minus a small multiple of
    ``e_i e_i^T`` (singular ones then turn indefinite); compared with Sylvester's criterion for semidefiniteness
    (every principal minor ``>= 0``)."""
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for trial in range(60):
        n = 2 + trial % 3
        rank = rng.randint(0, n)
        B = [[F(rng.randint(-2, 2)) for _ in range(rank)] for _ in range(n)]
        a = [[sum((B[i][t] * B[j][t] for t in range(rank)), F(0)) for j in range(n)] for i in range(n)]
        if trial % 2:
            i = rng.randrange(n)
            a[i][i] -= F(1, rng.randint(1, 4))
        want = _psd_by_principal_minors(a)
        ok, why = checker.ldl_psd(a)
        assert ok == want, (a, why)
        assert (why == "") == ok
        seen[want] += 1
    assert min(seen.values()) >= 15


def test_ldl_rejects_singular_and_indefinite_matrices_and_names_the_row():
    assert checker.ldl_psd([[F(2), F(1)], [F(1), F(1)]]) == (True, "")
    assert checker.ldl_psd([[F(1), F(1)], [F(1), F(1)]]) == (True, "")  # singular PSD
    assert checker.ldl_psd([[F(0), F(0)], [F(0), F(0)]]) == (True, "")
    assert checker.ldl_psd([]) == (True, "")
    assert checker.ldl_psd([[F(1), F(2)], [F(2), F(1)]]) == (False, "negative pivot -3 at row 1")
    assert checker.ldl_psd([[F(-1, 2)]]) == (False, "negative pivot -1/2 at row 0")
    assert checker.ldl_psd([[F(0), F(1)], [F(1), F(0)]]) == (False, "zero pivot with a non-zero row at 0")
    # the pivot of row 1 becomes zero after eliminating row 0 while its row does not: indefinite
    assert checker.ldl_psd([[F(1), F(1), F(0)], [F(1), F(1), F(1)], [F(0), F(1), F(1)]]) == (
        False, "zero pivot with a non-zero row at 1")
    # eliminating with the wrong sign or skipping a column would leave a negative pivot unseen
    assert checker.ldl_psd([[F(4), F(2), F(2)], [F(2), F(2), F(3)], [F(2), F(3), F(3)]]) == (
        False, "negative pivot -2 at row 2")
    assert checker.ldl_psd([[F(1), F(0), F(1)], [F(0), F(1), F(1)], [F(1), F(1), F(2)]]) == (True, "")  # singular
    # a zero in the pivot row does not end the elimination of the rows below it
    assert checker.ldl_psd([[F(1), F(0), F(2)], [F(0), F(1), F(0)], [F(2), F(0), F(1)]]) == (
        False, "negative pivot -3 at row 2")


# -- ceil_sqrt and the witness network -----------------------------------------------------------------------------


def test_ceil_sqrt_is_an_upper_bound_within_its_relative_excess_and_exact_on_squares():
    for v in (F(2), F(1, 3), F(10**30 + 7), F(1, 10**40 + 3), F(7, 10**25), F(355, 113)):
        for bits in (8, 64):
            r = checker.ceil_sqrt(v, bits)
            assert r * r >= v
            assert (r * (1 - F(1, 2**bits))) ** 2 < v  # relative excess below 2^-bits
            assert r.denominator & (r.denominator - 1) == 0  # dyadic
            # short numbers: the denominator is at most 2^(bits + max(0, (L(den) - L(num)) // 2 + 2))
            lengths = v.denominator.bit_length() - v.numerator.bit_length()
            assert r.denominator <= 2 ** (bits + max(0, lengths // 2 + 2))
        assert checker.ceil_sqrt(v) == checker.ceil_sqrt(v, 64)
    for root in (F(7, 2), F(2), F(1, 2**20), F(3, 2**70), F(2**70 + 1, 1)):
        assert checker.ceil_sqrt(root * root) == root
    assert checker.ceil_sqrt(F(0)) == 0
    with pytest.raises(ValueError, match=r"^ceil_sqrt of a negative number -1/10+$"):
        checker.ceil_sqrt(F(-1, 10**30))


def _margin_oracle(p, k, U, W):
    """The exact unnormalized margin with numpy-free Fractions, input by input, written as a double loop over
    labels."""
    worst = None
    for a in itertools.product(range(p), repeat=k):
        y = sum(a) % p
        f = [sum((sum((U[i][j][a[j]] for j in range(k)), F(0)) ** k * W[i][c] for i in range(len(U))), F(0))
             for c in range(p)]
        for c in range(p):
            if c != y:
                worst = f[y] - f[c] if worst is None else min(worst, f[y] - f[c])
    return worst


@pytest.mark.parametrize("p,k,m", [(3, 1, 2), (4, 2, 3), (3, 3, 2), (2, 2, 1), (5, 2, 2), (2, 4, 2), (2, 5, 1)])
def test_network_margin_bound_is_the_exact_margin_and_an_upper_bound_on_the_norm(p, k, m):
    rng = random.Random(p * 100 + k * 10 + m)
    U = [[[F(rng.randint(-4, 4), rng.randint(1, 3)) for _ in range(p)] for _ in range(k)] for _ in range(m)]
    W = [[F(rng.randint(-4, 4), rng.randint(1, 3)) for _ in range(p)] for _ in range(m)]
    h, S = checker.network_margin_bound(p, k, U, W)
    assert h == _margin_oracle(p, k, U, W)
    sq = [sum(x * x for row in U[i] for x in row) + sum(x * x for x in W[i]) for i in range(m)]
    if k % 2:
        assert S == sum(s ** ((k + 1) // 2) for s in sq)
    else:  # S >= sum_i sq_i^((k+1)/2), tight to the rounding of the square roots
        assert S == sum(s ** (k // 2) * checker.ceil_sqrt(s) for s in sq)
        assert all(checker.ceil_sqrt(s) ** 2 >= s for s in sq)
    flq = [[[flint.fmpq(x.numerator, x.denominator) for x in r] for r in u] for u in U]
    hq, Sq = checker.network_margin_bound(p, k, flq, [[flint.fmpq(x.numerator, x.denominator) for x in r] for r in W])
    assert checker.to_fraction(hq) == h and Sq == S


# -- reading a certificate -----------------------------------------------------------------------------------------


def test_parse_reads_every_field():
    c = checker.parse(cert("p4k2"))
    d = cert("p4k2")
    assert (c["p"], c["k"], c["homogeneous"], c["half_degree"]) == (4, 2, False, 2)
    assert checker.to_fraction(c["scale"]) == F(d["sos"]["scale"]) and type(c["scale"]) is flint.fmpq
    assert checker.to_fraction(c["gamma"]) == F(d["sos"]["gamma"])
    assert c["upper"] == F(d["claim"]["upper"]) and c["lower_squared"] == F(d["claim"]["lower"]) ** 2
    assert c["gap"] == F(443, 500) and c["lower_how"] == d["claim"]["lower_how"]
    assert [b for b, _ in c["blocks"]] == [[tuple(m) for m in b["basis"]] for b in d["sos"]["blocks"]]
    assert [[[checker.to_fraction(x) for x in r] for r in g] for _, g in c["blocks"]] == [
        [[F(x) for x in r] for r in b["gram"]] for b in d["sos"]["blocks"]]
    assert [(m, checker.to_fraction(x)) for m, x in c["multiplier"]] == [(tuple(m), F(x)) for m, x in
                                                                         d["sos"]["multiplier"]]
    assert c["constants"] == [{"frequencies": "1..1", "domain": "complex", "constant_squared": F(1, 18)},
                              {"frequencies": "2", "domain": "real", "constant_squared": F(1, 9)}]
    assert [s["name"] for s in c["argued"]] == [s["name"] for s in d["reduction"]["steps"] if s["exactness"] ==
                                                "argued"] and len(c["argued"]) == 2
    U, W = c["witness"]
    assert len(U) == len(W) == 8 and checker.to_fraction(U[0][1][2]) == F(d["lower_witness"]["U"][0][1][2])
    assert checker.to_fraction(W[7][3]) == F(d["lower_witness"]["W"][7][3])
    bare = minimal()
    c = checker.parse(bare)
    assert (c["lower_squared"], c["gap"], c["witness"], c["lower_how"], c["argued"]) == (None, None, None, "", [])
    bare["claim"].update(lower=None, relative_gap_at_most=None)
    bare["reduction"]["steps"] = ["not a step", {"name": "a", "exactness": "proved"}, {"exactness": "argued"}]
    c = checker.parse(bare)
    assert (c["lower_squared"], c["gap"], c["argued"]) == (None, None, [{"exactness": "argued"}])


@pytest.mark.parametrize("change,message", [
    (lambda d: d.clear() or d.update(x=1), "not a margintheory certificate (format None)"),
    (lambda d: d.update(format="other"), "not a margintheory certificate (format 'other')"),
    (lambda d: d.update(version=2), "certificate version 2 is not supported (this checker reads version 1)"),
    (lambda d: d.update(version="1"), "certificate version '1' is not supported (this checker reads version 1)"),
    (lambda d: d.pop("p"), "missing field certificate.p"),
    (lambda d: d.update(p=True), "field certificate.p has the wrong type (bool)"),
    (lambda d: d.update(k=2.0), "field certificate.k has the wrong type (float)"),
    (lambda d: d.update(p=1), "(p, k) = (1, 2) out of range"),
    (lambda d: d.update(p=10**9 + 1), "(p, k) = (1000000001, 2) out of range"),
    (lambda d: d.update(k=0), "(p, k) = (5, 0) out of range"),
    (lambda d: d.update(k=65), "(p, k) = (5, 65) out of range"),
    (lambda d: d.update(claim=[]), "field certificate.claim has the wrong type (list)"),
    (lambda d: d.pop("reduction"), "missing field certificate.reduction"),
    (lambda d: d.pop("sos"), "missing field certificate.sos"),
    (lambda d: d["sos"].pop("multiplier"), "missing field sos.multiplier"),
    (lambda d: d["reduction"].pop("blocks"), "missing field reduction.blocks"),
    (lambda d: d["reduction"].update(p=7), "the reduction section is for (p, k) = (7, 2), but the certificate claims "
                                           "(5, 2)"),
    (lambda d: d["reduction"].pop("k"), "the reduction section is for (p, k) = (5, None), but the certificate claims "
                                        "(5, 2)"),
    (lambda d: d["sos"].update(k=3), "the sos section is for (p, k) = (5, 3), but the certificate claims (5, 2)"),
    (lambda d: d["sos"].update(p=3), "the sos section is for (p, k) = (3, 2), but the certificate claims (5, 2)"),
    (lambda d: d["sos"].update(homogeneous=1), "field sos.homogeneous has the wrong type (int)"),
    (lambda d: d["sos"].update(half_degree=0), "sos.half_degree out of range"),
    (lambda d: d["sos"].update(half_degree=65), "sos.half_degree out of range"),
    (lambda d: d["sos"].update(half_degree="2"), "field sos.half_degree has the wrong type (str)"),
    (lambda d: d["sos"].update(blocks={}), "field sos.blocks has the wrong type (dict)"),
    (lambda d: d["sos"].update(blocks=[{"gram": []}]), "missing field sos.blocks[0].basis"),
    (lambda d: d["sos"].update(blocks=[{"basis": []}]), "missing field sos.blocks[0].gram"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 6], "gram": []}]), "sos.blocks[0].gram is not a 1 x 1 matrix"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 6], "gram": [["1", "2"]]}]),
     "sos.blocks[0].gram is not a 1 x 1 matrix"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 6], "gram": ["1"]}]),
     "sos.blocks[0].gram is not a 1 x 1 matrix"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 6], "gram": [[1.5]]}]),
     "sos.blocks[0].gram: expected a rational 'a/b', got 1.5"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 5], "gram": [["1"]]}]),
     "sos.blocks[0].basis: a monomial must be a list of 6 exponents in 0..64 (another k than claimed?)"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 5 + [65]], "gram": [["1"]]}]),
     "sos.blocks[0].basis: a monomial must be a list of 6 exponents in 0..64 (another k than claimed?)"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 5 + [-1]], "gram": [["1"]]}]),
     "sos.blocks[0].basis: a monomial must be a list of 6 exponents in 0..64 (another k than claimed?)"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 5 + [True]], "gram": [["1"]]}]),
     "sos.blocks[0].basis: a monomial must be a list of 6 exponents in 0..64 (another k than claimed?)"),
    (lambda d: d["sos"].update(blocks=[{"basis": [[0] * 5 + [1.0]], "gram": [["1"]]}]),
     "sos.blocks[0].basis: a monomial must be a list of 6 exponents in 0..64 (another k than claimed?)"),
    (lambda d: d["sos"].update(blocks=[{"basis": [(0,) * 6], "gram": [["1"]]}]),
     "sos.blocks[0].basis: a monomial must be a list of 6 exponents in 0..64 (another k than claimed?)"),
    (lambda d: d["sos"].update(multiplier=[[[0] * 6]]), "sos.multiplier entries must be [monomial, 'a/b']"),
    (lambda d: d["sos"].update(multiplier=[[[0] * 6, "1", "2"]]), "sos.multiplier entries must be [monomial, 'a/b']"),
    (lambda d: d["sos"].update(multiplier=["x"]), "sos.multiplier entries must be [monomial, 'a/b']"),
    (lambda d: d["sos"].update(multiplier=[[[0] * 7, "1"]]),
     "sos.multiplier: a monomial must be a list of 6 exponents in 0..64 (another k than claimed?)"),
    (lambda d: d["sos"].update(multiplier=[[[0] * 6, "x"]]), "sos.multiplier: not a rational 'a/b': 'x'"),
    (lambda d: d["reduction"].update(blocks=[{"domain": "real", "constant_squared": "1"}]),
     "missing field reduction.blocks[0].frequencies"),
    (lambda d: d["reduction"].update(blocks=[{"frequencies": "1", "domain": 1, "constant_squared": "1"}]),
     "field reduction.blocks[0].domain has the wrong type (int)"),
    (lambda d: d["reduction"].update(blocks=[{"frequencies": "1", "domain": "real", "constant_squared": 1}]),
     "field reduction.blocks[0].constant_squared has the wrong type (int)"),
    (lambda d: d["reduction"].update(blocks=[{"frequencies": "1", "domain": "real", "constant_squared": "1/x"}]),
     "constant: not a rational 'a/b': '1/x'"),
    (lambda d: d["sos"].pop("scale"), "missing field sos.scale"),
    (lambda d: d["sos"].pop("gamma"), "missing field sos.gamma"),
    (lambda d: d["sos"].update(scale="1/0"), "sos.scale: denominator must be positive in '1/0'"),
    (lambda d: d["sos"].update(gamma="g"), "sos.gamma: not a rational 'a/b': 'g'"),
    (lambda d: d["claim"].update(upper="1.5"), "claim.upper: not a rational 'a/b': '1.5'"),
    (lambda d: d["claim"].update(lower="-1"), "claim.lower: must be non-negative"),
    (lambda d: d["claim"].update(relative_gap_at_most="0.1"), "claim.relative_gap_at_most: not a rational 'a/b': "
                                                              "'0.1'"),
    (lambda d: d.update(lower_witness=[]), "lower_witness must be an object with U and W"),
    (lambda d: d.update(lower_witness={"U": [], "W": []}),
     "lower_witness: U (m, k, p) and W (m, p) must be non-empty lists of the same length"),
    (lambda d: d.update(lower_witness={"U": [[]], "W": [[], []]}),
     "lower_witness: U (m, k, p) and W (m, p) must be non-empty lists of the same length"),
    (lambda d: d.update(lower_witness={"U": [[]], "W": "x"}),
     "lower_witness: U (m, k, p) and W (m, p) must be non-empty lists of the same length"),
    (lambda d: d.update(lower_witness={"U": "x", "W": [[]]}),
     "lower_witness: U (m, k, p) and W (m, p) must be non-empty lists of the same length"),
])
def test_unreadable_documents_name_what_is_wrong(change, message):
    doc = minimal()
    change(doc)
    assert unreadable(doc) == message


def test_unreadable_top_level_and_the_limits_that_parse_accepts():
    assert unreadable([1]) == "the top level is not a JSON object"
    assert unreadable("x") == "the top level is not a JSON object"
    for p, k in ((2, 1), (10**9, 1), (5, 64)):
        doc = minimal(p, k)
        assert checker.parse(doc)["p"] == p and checker.parse(doc)["k"] == k
    for h in (1, 64):
        assert checker.parse(minimal(half_degree=h))["half_degree"] == h
    doc = minimal(multiplier=[[[64] + [0] * 5, "1/2"]])
    doc["reduction"].pop("p")  # a section may leave p out (it is the certificate's)
    ((m, c),) = checker.parse(doc)["multiplier"]
    assert m == (64, 0, 0, 0, 0, 0) and checker.to_fraction(c) == F(1, 2)


def _witness(p, k, m):
    return {"U": [[["1"] * p for _ in range(k)] for _ in range(m)], "W": [["1"] * p for _ in range(m)]}


def test_witness_shapes_and_the_work_limit():
    for bad in ({"U": [[["1"] * 5]], "W": [["1"] * 5]}, {"U": [[["1"] * 5, ["1"] * 4]], "W": [["1"] * 5]},
                {"U": [[["1"] * 5, "x"]], "W": [["1"] * 5]}, {"U": [[["1"] * 5, ["1"] * 5]], "W": [["1"] * 4]},
                {"U": ["x"], "W": [["1"] * 5]}, {"U": [[["1"] * 5, ["1"] * 5]], "W": ["x"]}):
        assert unreadable(dict(minimal(), lower_witness=bad)) == ("lower_witness: neuron 0 does not have shapes "
                                                                  "(k, p) = (2, 5) and (p,)")
    assert checker._parse_witness(None, 5, 2) is None
    U, W = checker._parse_witness(_witness(5, 2, 2), 5, 2)
    assert len(U) == 2 and len(U[0]) == 2 and len(W[1]) == 5 and W[1][4] == 1
    bad = _witness(5, 2, 1)
    bad["U"][0][1][3] = "0.5"
    assert unreadable(dict(minimal(), lower_witness=bad)) == "lower_witness.U: not a rational 'a/b': '0.5'"
    bad = _witness(5, 2, 1)
    bad["W"][0][3] = "x"
    assert unreadable(dict(minimal(), lower_witness=bad)) == "lower_witness.W: not a rational 'a/b': 'x'"
    # the work p^k m (k + p) is checked before the neurons are read: 5^3 * 5000 * 8 is exactly the limit
    assert checker.MAX_WITNESS_WORK == 5**3 * 5000 * 8
    at_limit = dict(minimal(5, 3), lower_witness={"U": [None] * 5000, "W": [None] * 5000})
    assert unreadable(at_limit) == "lower_witness: neuron 0 does not have shapes (k, p) = (3, 5) and (p,)"
    over = dict(minimal(5, 3), lower_witness={"U": [None] * 5001, "W": [None] * 5001})
    assert unreadable(over) == "lower_witness: a network of 5001 neurons on 5^3 inputs is too large to re-check"


# -- the whole check: what a valid certificate proves, and every tampering ----------------------------------------

VALID_STEPS = [
    ("Gram matrices symmetric, bases of the right degree", "proved"),
    ("polynomial identity SOS + lambda (1 - |z|^2) = gamma N - scale g_k", "proved"),
    ("Gram matrices positive semidefinite (exact LDL^T)", "proved"),
    ("max_{|z|=1} g_k <= gamma/scale", "proved"),
    ("frequency-block constants c^2 recomputed from (p, k) (Lemma C.14)", "proved"),
    ("upper bound U >= c gamma/scale for every block", "proved"),
    *[(name, "argued") for name, _ in checker.NOT_RECHECKED],
    ("lower bound: exact margin of the included network over all inputs", "proved"),
    ("lower <= upper and the claimed relative gap", "proved"),
]


@pytest.mark.parametrize("name", sorted(_TEXT))
def test_the_committed_certificates_are_valid_with_every_step_named(name):
    doc = cert(name)
    out = checker.check_data(doc)
    assert out.status == "valid" and out.exit_code == 0 and (out.p, out.k) == (doc["p"], doc["k"])
    assert [(s.name, s.exactness) for s in out.steps] == VALID_STEPS and all(s.passed for s in out.steps)
    U = F(doc["claim"]["upper"])
    assert out.message == f"valid: every network's max margin for (p, k) = ({doc['p']}, {doc['k']}) is at most " \
                          f"U = {U} (~{float(U):.15g})"
    blocks = doc["sos"]["blocks"]
    c = checker.parse(doc)
    bound = checker.to_fraction(c["gamma"]) / checker.to_fraction(c["scale"])
    details = [s.detail for s in out.steps]
    assert details[:6] == [f"{len(blocks)} blocks", "exact rational coefficients",
                           f"{len(blocks)} blocks, largest {max(len(b['gram']) for b in blocks)}",
                           f"gamma/scale = {bound}",
                           "; ".join(f"j in {x['frequencies']}: c^2 = {x['constant_squared']}"
                                     for x in doc["reduction"]["blocks"]), f"U = {U}"]
    assert details[6:9] == [reason for _, reason in checker.NOT_RECHECKED]
    h, S = checker.network_margin_bound(doc["p"], doc["k"], *c["witness"])
    assert details[9] == (f"{len(doc['lower_witness']['U'])} neurons; normalized margin >= "
                          f"{float(checker.to_fraction(h) / S):.15g}")
    assert details[10] == (f"(U - L)/L <= {F(doc['claim']['relative_gap_at_most'])}; the lower end verified (exact "
                           "margin of the included network)")
    # the upper end and the interval rest on the links not re-proved here; the lower end on nothing argued
    argued = [n for n, _ in checker.NOT_RECHECKED]
    assert [s.assumes for s in out.steps] == [[]] * 5 + [argued] + [[]] * 4 + [argued]
    assert out.steps[10].premises == [checker.LOWER_WITNESS, checker.UPPER]


def test_outcome_exit_codes():
    assert [checker.Outcome(s, "").exit_code for s in ("valid", "invalid", "unreadable", "other")] == [0, 1, 2, 2]


def _indefinite_block(h: int, n2: int, zero_pivot: bool) -> dict:
    """A 2x2 Gram block on the basis ``[m, m]`` whose polynomial is zero (so the identity still holds) but which is
    not PSD: ``[[-1, 1], [1, -1]]`` (negative pivot) or ``[[0, 1], [1, -2]]`` (zero pivot, non-zero row)."""
    m = [h] + [0] * (n2 - 1)
    gram = [["0", "1"], ["1", "-2"]] if zero_pivot else [["-1", "1"], ["1", "-1"]]
    return {"basis": [m, m], "gram": gram}


@pytest.mark.parametrize("name", ["p3k3", "p5k2"])
def test_an_indefinite_gram_block_is_rejected_in_every_position_the_last_included(name):
    n_blocks = len(cert(name)["sos"]["blocks"])
    for position in range(n_blocks + 1):
        for zero_pivot in (False, True):
            doc = cert(name)
            h = doc["sos"]["half_degree"]
            doc["sos"]["blocks"].insert(position, _indefinite_block(h, 2 * (doc["k"] + 1), zero_pivot))
            why = "zero pivot with a non-zero row at 0" if zero_pivot else "negative pivot -1 at row 0"
            assert failed(doc) == (PSD_FAILURE, f"block {position}: {why}")
    for position in (n_blocks - 1, 0):  # a lone change of a real block, the last or the first, breaks the identity
        doc = cert(name)
        gram = doc["sos"]["blocks"][position]["gram"]
        gram[0][0] = str(-F(gram[0][0]) - 1)
        assert failed(doc)[0].startswith("polynomial identity")


def test_a_nonsymmetric_gram_block_is_rejected_in_any_position():
    for position in (0, 5, 18):
        doc = cert("p5k2")
        gram = doc["sos"]["blocks"][position]["gram"]
        if len(gram) == 1:
            doc["sos"]["blocks"][position] = {"basis": [[0] * 6, [0] * 6], "gram": [["1", "1/2"], ["1/3", "1"]]}
        else:
            gram[0][-1] = str(F(gram[0][-1]) + 1)
        assert failed(doc) == ("Gram matrices symmetric", f"block {position} is not symmetric")


def test_relaxation_type_and_degrees_of_the_bases():
    doc = cert("p3k3")
    doc["sos"]["homogeneous"] = False
    assert failed(doc) == ("relaxation type", "k = 3 needs homogeneous=True, half_degree=2")
    doc = cert("p5k2")
    doc["sos"]["half_degree"] = 3
    assert failed(doc) == ("relaxation type", "k = 2 needs homogeneous=False, half_degree=2")
    doc = cert("p3k1")
    doc["sos"]["half_degree"] = 2
    assert failed(doc) == ("relaxation type", "k = 1 needs homogeneous=True, half_degree=1")
    doc = cert("p3k3")
    doc["sos"]["multiplier"] = [[[0] * 8, "0"]]
    assert failed(doc) == ("relaxation type", "a homogeneous certificate has no multiplier")
    doc = cert("p3k3")  # homogeneous: every monomial has degree exactly h = 2
    doc["sos"]["blocks"][-1]["basis"][0] = [1] + [0] * 7
    degrees = sorted({sum(m) for m in doc["sos"]["blocks"][-1]["basis"]})
    assert failed(doc) == ("Gram bases", f"block {len(doc['sos']['blocks']) - 1} has monomials of degree {degrees}")
    doc = cert("p5k2")  # Putinar: degree at most h = 2 (lower degrees are allowed)
    doc["sos"]["blocks"][3]["basis"][0] = [3] + [0] * 5
    assert failed(doc)[0] == "Gram bases"
    doc = cert("p5k2")
    doc["sos"]["blocks"][3]["basis"][0] = [2] + [0] * 5  # degree h is allowed: the identity then fails
    assert failed(doc)[0].startswith("polynomial identity")


def test_a_certificate_scaled_by_a_positive_factor_stays_valid():
    """Multiplying the identity by t > 0 (Gram blocks, multiplier, gamma and scale) keeps it; here down to a scale
    below 1."""
    for name, t in (("p5k2", F(1, 8)), ("p3k3", F(1, 1000))):
        doc = cert(name)
        sos = doc["sos"]
        for b in sos["blocks"]:
            b["gram"] = [[str(F(x) * t) for x in row] for row in b["gram"]]
        sos["multiplier"] = [[m, str(F(x) * t)] for m, x in sos["multiplier"]]
        sos["gamma"], sos["scale"] = str(F(sos["gamma"]) * t), str(F(sos["scale"]) * t)
        assert F(sos["scale"]) < 1 and checker.check_data(doc).status == "valid"


def test_a_zero_or_negative_scale_is_rejected():
    for scale in ("0", "-1"):
        doc = cert("p3k3")
        doc["sos"]["scale"] = scale
        assert failed(doc) == ("scale", "the scale of g_k must be positive")


def test_identity_failures_name_a_differing_coefficient():
    doc = cert("p3k3")
    doc["sos"]["gamma"] = str(F(doc["sos"]["gamma"]) + F(1, 10**30))
    name, detail = failed(doc)
    assert name == "polynomial identity SOS + lambda (1 - |z|^2) = gamma N - scale g_k"
    assert detail.endswith(": -1/1000000000000000000000000000000") and "coefficients differ, e.g. monomial [" in detail
    c = checker.parse(doc)
    defect = checker.identity_defect(3, True, 2, c["scale"], c["gamma"], c["blocks"], c["multiplier"])
    assert detail.startswith(f"{len(defect)} coefficients differ")


def test_zero_gram_blocks_keep_a_certificate_valid_and_progress_is_reported_per_64_blocks():
    doc = cert("p3k1")
    n0 = len(doc["sos"]["blocks"])
    doc["sos"]["blocks"] += [{"basis": [[1, 0, 0, 0]], "gram": [["0"]]} for _ in range(129 - n0)]
    calls = []
    with progress.reporting(lambda what, done, total: calls.append((what, done, total))):
        out = checker.check_data(doc)
    assert out.status == "valid", out.message
    assert calls == [("exact polynomial identity", 0, 1), ("exact polynomial identity", 1, 1),
                     ("exact LDL^T of the Gram blocks", 0, 129), ("exact LDL^T of the Gram blocks", 64, 129),
                     ("exact LDL^T of the Gram blocks", 128, 129)]
    assert out.steps[2].detail == "129 blocks, largest 2"


def test_frequency_block_constants_must_be_recomputed_ones():
    for change in (lambda b: b.pop(), lambda b: b.reverse(), lambda b: b[1].update(domain="complex"),
                   lambda b: b[0].update(frequencies="1..2"), lambda b: b[1].update(constant_squared="1/8"),
                   lambda b: b.append(dict(b[0]))):
        doc = cert("p4k2")
        change(doc["reduction"]["blocks"])
        name, detail = failed(doc)
        assert name == "frequency-block constants (Lemma C.14)"
        assert detail.endswith("!= recomputed [('1..1', 'complex', Fraction(1, 18)), ('2', 'real', Fraction(1, 9))]")


def _block_bounds_squared(doc):
    c = checker.parse(doc)
    bound = checker.to_fraction(c["gamma"]) / checker.to_fraction(c["scale"])
    return [x["constant_squared"] * bound * bound for x in checker.block_constants_squared(doc["p"], doc["k"])]


def _set_upper(doc, U):
    doc["claim"].update(upper=str(U), lower=None, relative_gap_at_most=None)
    doc.pop("lower_witness", None)


def test_even_p_upper_bound_must_cover_every_frequency_block_not_only_one():
    """For even p the real block of frequency p/2 has the larger constant (2^(k-1) times): a U covering the complex
    block only is rejected."""
    doc = cert("p4k2")
    complex2, real2 = _block_bounds_squared(doc)
    assert real2 == 2 * complex2
    U = checker.ceil_sqrt(complex2)  # covers the complex block, not the real one
    assert U * U >= complex2 and U * U < real2
    _set_upper(doc, U)
    assert failed(doc) == (UPPER_FAILURE, f"U = {U} is below a block's bound")
    _set_upper(doc, checker.ceil_sqrt(real2))
    assert checker.check_data(doc).status == "valid"


def test_upper_bound_boundaries_are_exact():
    """With odd k the block constant c is rational, so U = c gamma/scale exactly is allowed and anything below is
    not; a negative U is rejected although its square is large."""
    doc = cert("p3k3")
    (b2,) = _block_bounds_squared(doc)
    c2 = checker.block_constants_squared(3, 3)[0]["constant_squared"]
    c = F(math.isqrt(c2.numerator), math.isqrt(c2.denominator))
    assert c * c == c2
    bound = checker.to_fraction(checker.rational(doc["sos"]["gamma"], "")) / F(doc["sos"]["scale"])
    U = c * bound
    assert U * U == b2
    _set_upper(doc, U)
    assert checker.check_data(doc).status == "valid"
    _set_upper(doc, U - F(1, 10**40))
    assert failed(doc) == (UPPER_FAILURE, f"U = {U - F(1, 10**40)} is below a block's bound")
    _set_upper(doc, -U)
    assert failed(doc) == (UPPER_FAILURE, f"U = {-U} is negative")
    _set_upper(doc, 0)
    assert failed(doc) == (UPPER_FAILURE, "U = 0 is below a block's bound")


def test_argued_steps_of_the_file_are_listed_once_and_never_as_proved():
    doc = cert("p5k2")
    steps = doc["reduction"]["steps"]
    steps.append({"name": "a further argument", "exactness": "argued", "reason": "because"})
    steps.append({"exactness": "argued"})
    steps.append({"name": "claimed proof", "exactness": "proved", "reason": "trust me"})
    steps.append({"name": "weak duality: restated differently", "exactness": "argued", "reason": "dup"})
    steps.append({"name": "Lemma C.14", "exactness": "argued", "reason": "dup"})
    steps.append({"name": "weakly related: another argument", "exactness": "argued", "reason": "own"})
    steps.append({"name": "Lemma C.6 again", "exactness": "argued", "reason": "own too"})
    out = checker.check_data(doc)
    assert out.status == "valid" and all(s.passed for s in out.steps)
    names = [(s.name, s.exactness, s.detail) for s in out.steps]
    assert names[6:13] == [*[(n, "argued", r) for n, r in checker.NOT_RECHECKED],
                           ("a further argument", "argued", "because"), ("argued step", "argued", ""),
                           ("weakly related: another argument", "argued", "own"), ("Lemma C.6 again", "argued",
                                                                                   "own too")]
    assert len(out.steps) == len(VALID_STEPS) + 4


def _with_lower(doc, lower, gap=None, witness=True):
    doc["claim"].update(lower=lower, relative_gap_at_most=None if gap is None else str(gap))
    if not witness:
        doc.pop("lower_witness", None)
    return doc


def test_witness_margin_bounds_the_claimed_lower_end_exactly():
    doc = cert("p5k2")
    c = checker.parse(doc)
    h, S = checker.network_margin_bound(5, 2, *c["witness"])
    L = checker.to_fraction(h) / S
    assert checker.check_data(_with_lower(cert("p5k2"), str(L))).status == "valid"  # L = h / S exactly: allowed
    assert checker.check_data(_with_lower(cert("p5k2"), f"sqrt({L * L})")).status == "valid"
    above = L * (1 + F(1, 10**30))
    assert failed(_with_lower(cert("p5k2"), str(above))) == (
        WITNESS_FAILURE, f"margin/norm bound {checker.to_fraction(h)}/{S} is below the claimed lower bound")
    assert failed(_with_lower(cert("p5k2"), None)) == (WITNESS_FAILURE, "the claim has no lower value")


def test_a_witness_with_zero_margin_proves_nothing():
    doc = cert("p3k1")
    doc["lower_witness"]["W"] = [["0"] * 3 for _ in doc["lower_witness"]["W"]]
    h, S = checker.network_margin_bound(3, 1, *checker.parse(doc)["witness"])
    assert h == 0 and S > 0
    assert failed(_with_lower(doc, "0")) == (WITNESS_FAILURE,
                                             f"margin/norm bound 0/{S} is below the claimed lower bound")
    doc = cert("p3k1")  # all weights zero: margin 0, norm 0
    doc["lower_witness"] = {"U": [[["0"] * 3]], "W": [["0"] * 3]}
    assert failed(_with_lower(doc, "0")) == (WITNESS_FAILURE, "margin/norm bound 0/0 is below the claimed lower bound")


def test_lower_without_witness_is_argued_and_still_compared_with_upper():
    doc = _with_lower(cert("p5k2"), "1/40", witness=False)
    out = checker.check_data(doc)
    assert out.status == "valid" and all(s.passed for s in out.steps)
    unverified = ("unverified: the file includes no lower_witness network whose margin this checker could recompute, "
                  "so claim.lower is the producer's word")
    assert (out.steps[-2].name, out.steps[-2].exactness, out.steps[-2].detail) == (
        "lower bound: stated, not re-checked (no network included)", "argued",
        f"{unverified} (its description, not checked: {doc['claim']['lower_how']})")
    # the comparison is exact, but the interval rests on the unverified lower end: an assumption of the row
    assert out.steps[-1].detail == ("the lower end NOT verified (no network included): the comparison is exact, the "
                                    "interval rests on the producer's claim.lower")
    assert out.steps[-1].assumes == [checker.LOWER_STATED, *(n for n, _ in checker.NOT_RECHECKED)]
    doc["claim"]["lower_how"] = ""
    assert checker.check_data(doc).steps[-2].detail == unverified
    doc = _with_lower(cert("p5k2"), None, witness=False)
    out = checker.check_data(doc)
    assert out.status == "valid" and [s.name for s in out.steps] == [n for n, _ in VALID_STEPS[:9]]


def test_lower_above_upper_and_the_relative_gap_are_exact():
    doc = cert("p5k2")
    U = F(doc["claim"]["upper"])
    ok = checker.check_data(_with_lower(cert("p5k2"), str(U), witness=False))  # L = U is allowed
    assert ok.status == "valid" and ok.steps[-1].detail.startswith("the lower end NOT verified")
    assert failed(_with_lower(cert("p5k2"), str(U + F(1, 10**40)), witness=False)) == (
        "lower <= upper", "the claimed lower bound exceeds the upper bound")
    assert failed(_with_lower(cert("p5k2"), f"sqrt({U * U + F(1, 10**60)})", witness=False))[0] == "lower <= upper"
    L = U * F(9, 10)
    g = U / L - 1  # = 1/9 exactly
    out = checker.check_data(_with_lower(cert("p5k2"), str(L), g, witness=False))
    assert out.status == "valid" and out.steps[-1].detail.startswith("(U - L)/L <= 1/9; the lower end NOT verified")
    assert failed(_with_lower(cert("p5k2"), str(L), g - F(1, 10**30), witness=False)) == (
        GAP_FAILURE, f"claimed {g - F(1, 10**30)}")
    assert checker.check_data(_with_lower(cert("p5k2"), str(L), F(1, 8), witness=False)).status == "valid"
    assert failed(_with_lower(cert("p5k2"), f"sqrt({L * L})", F(1, 10), witness=False)) == (GAP_FAILURE,
                                                                                         "claimed 1/10")
    assert failed(_with_lower(cert("p5k2"), "0", F(10**9), witness=False)) == (GAP_FAILURE,
                                                                                f"claimed {10**9}, but L = 0")
    assert checker.check_data(_with_lower(cert("p5k2"), "0", witness=False)).status == "valid"


# -- files: size limit, non-regular files, unreadable bytes --------------------------------------------------------


class _ReadSpy:
    """``open`` for the checker module that records how many bytes each read asked for."""

    def __init__(self):
        self.reads: list[int] = []
        self.opened = 0

    def __call__(self, path, mode):
        self.opened += 1
        fh = open(path, mode)  # noqa: SIM115 - closed by the checker's with-statement
        spy = self

        class Wrapped:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                fh.close()

            def read(self, n=-1):
                spy.reads.append(n)
                return fh.read(n)

        return Wrapped()


def test_check_file_refuses_a_file_over_the_limit_without_reading_it(tmp_path, monkeypatch):
    assert checker.MAX_BYTES == 512 * 2**20
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:  # sparse: 512 MiB + 1 byte of size, no data written
        fh.truncate(checker.MAX_BYTES + 1)
    spy = _ReadSpy()
    monkeypatch.setattr(checker, "open", spy, raising=False)
    out = checker.check_file(str(big))
    assert (out.status, out.message) == ("unreadable", f"{big}: {checker.MAX_BYTES + 1} bytes is larger than a "
                                                       "certificate can be")
    assert spy.opened == 0
    good = tmp_path / "good.json"
    good.write_text(_TEXT["p3k1"])
    assert checker.check_file(str(good)).status == "valid"
    # the head (to read the claimed k), then never more than that k's limit, and one byte to see a longer file
    assert spy.reads == [checker.HEAD_BYTES, checker.max_certificate_bytes(1) + 1 - checker.HEAD_BYTES]


def test_check_file_refuses_a_file_larger_than_its_k_allows_after_reading_the_head_only(tmp_path, monkeypatch):
    """A 400 MB unknown field in a k = 3 certificate was parsed (1.2 GB resident): a certificate for k = 3 is at most
    ~64 MiB (its SOS blocks and the largest witness the producer writes), refused from the head alone; a smaller
    unknown field is read and refused by name."""
    doc = json.loads(_TEXT["p3k1"])
    limit = checker.max_certificate_bytes(1)
    assert 2**20 < limit < 100 * 2**20 and checker.max_certificate_bytes(9) < 100 * 2**20
    assert checker.max_certificate_bytes(None) == checker.MAX_BYTES
    big = tmp_path / "big.json"
    with open(big, "w") as fh:  # the claimed k in the head, then a sparse tail: no data read beyond the head
        fh.write(json.dumps(doc, separators=(",", ":"))[:-1] + ',"pad":"')
        fh.truncate(limit + 1)
    spy = _ReadSpy()
    monkeypatch.setattr(checker, "open", spy, raising=False)
    out = checker.check_file(str(big))
    assert (out.status, out.message) == ("unreadable", f"{big}: {limit + 1} bytes is larger than a certificate for "
                                                       f"k = 1 can be (at most {limit} bytes)")
    assert spy.reads == [checker.HEAD_BYTES]
    doc["pad"] = "x" * 1000
    small = tmp_path / "small.json"
    small.write_text(json.dumps(doc))
    out = checker.check_file(str(small))
    assert out.status == "unreadable" and out.message.startswith("unknown field 'pad' in certificate")


def test_check_file_limit_is_inclusive_and_a_file_that_grows_is_refused(tmp_path, monkeypatch):
    text = _TEXT["p3k1"]
    monkeypatch.setattr(checker, "MAX_BYTES", len(text) + 10)
    exact = tmp_path / "exact.json"
    exact.write_text(text + " " * 10)  # exactly MAX_BYTES: read and checked
    assert checker.check_file(str(exact)).status == "valid"
    over = tmp_path / "over.json"
    over.write_text(text + " " * 11)
    assert checker.check_file(str(over)).message == (f"{over}: {len(text) + 11} bytes is larger than a certificate "
                                                     "can be")
    real_stat = os.stat

    def stale_stat(path, *args, **kwargs):  # the size seen before the file grew
        st = real_stat(path, *args, **kwargs)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 10,
                               st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(os, "stat", stale_stat)
    grown = checker.check_file(str(over))
    assert (grown.status, grown.message) == ("unreadable", f"{over}: more than {len(text) + 10} bytes is larger than "
                                                           "a certificate can be")
    assert checker.check_file(str(exact)).status == "valid"


def test_check_file_unreadable_files_one_line_each(tmp_path, monkeypatch):
    missing = checker.check_file(str(tmp_path / "missing.json"))
    assert (missing.status, missing.message) == ("unreadable", f"{tmp_path / 'missing.json'}: no such file")
    directory = checker.check_file(str(tmp_path))
    assert (directory.status, directory.message) == ("unreadable", f"{tmp_path}: not a regular file")
    bad = tmp_path / "bad.json"
    for content, kind in ((b"\xff\xfe", "UnicodeDecodeError"), (b"{", "JSONDecodeError"),
                          (b"[" * 100_000 + b"]" * 100_000, "RecursionError")):
        bad.write_bytes(content)
        out = checker.check_file(str(bad))
        assert out.status == "unreadable"
        assert out.message.startswith(f"{bad}: not a readable JSON certificate ({kind}: ")
    bad.write_text("[]")
    assert checker.check_file(str(bad)).message == "the top level is not a JSON object"

    def long_error(*_, **__):  # (json.loads is called with the hook that refuses repeated keys)
        raise ValueError("x" * 200)

    monkeypatch.setattr(checker.json, "loads", long_error)
    assert checker.check_file(str(bad)).message == f"{bad}: not a readable JSON certificate (ValueError: {'x' * 80})"
    if os.geteuid() != 0:  # root reads everything
        bad.chmod(0)
        assert "PermissionError" in checker.check_file(str(bad)).message


def test_main_prints_every_step_and_returns_the_exit_status(tmp_path, capsys, monkeypatch):
    good = tmp_path / "good.json"
    good.write_text(_TEXT["p3k1"])
    assert checker.main([str(good)]) == 0
    out, err = capsys.readouterr()
    steps = checker.check_file(str(good)).steps
    lines = out.splitlines()
    shown = [f"[PASS] ({s.exactness}{'*' if s.assumes else ''}) {s.name}: {s.detail}"
             + (f" [assumes: {'; '.join(s.assumes)}]" if s.assumes else "") for s in steps]
    assert lines[:-1] == shown and err == "" and "(proved*) upper bound U" in out
    assert lines[-1] == checker.check_file(str(good)).message
    doc = cert("p3k1")
    doc["claim"]["upper"] = "0"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert checker.main([str(bad)]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "[FAIL] (proved) upper bound U >= c gamma/scale for every block: U = 0 is below a " \
                                   "block's bound"
    assert err == "step failed: upper bound U >= c gamma/scale for every block: U = 0 is below a block's bound\n"
    doc["claim"].pop("upper")
    bad.write_text(json.dumps(doc))
    monkeypatch.setattr("sys.argv", ["checker.py", str(bad)])
    assert checker.main() == 2
    assert capsys.readouterr() == ("", "missing field claim.upper\n")
    assert checker.main([]) == 2 and checker.main(["a", "b"]) == 2
    assert capsys.readouterr() == ("", "usage: checker.py FILE.json\n" * 2)
    empty = checker.Outcome("valid", "fine", [checker.Step("a step", True, "proved")])
    monkeypatch.setattr(checker, "check_file", lambda path: empty)
    assert checker.main(["x"]) == 0
    assert capsys.readouterr() == ("[PASS] (proved) a step\nfine\n", "")


def test_the_progress_hook_is_the_packages_reporter_or_a_no_op_without_the_package(monkeypatch):
    assert checker._progress_hook() is progress.report
    monkeypatch.setitem(sys.modules, "margintheory.runtime.progress", None)  # as if the module were copied out alone
    assert checker._progress_hook() is checker._no_progress and checker._no_progress("x", 1, 2) is None


def test_derive_steps_takes_the_weakest_premise_and_lists_the_argued_ones():
    S = checker.Step
    steps = checker.derive_steps([
        S("duality", True, "argued", "why"), S("fp", True, "float"), S("solver", True, "certified"),
        S("exact", True, "proved"), S("a", True, "proved", premises=["exact", "solver"]),
        S("b", True, "certified", premises=["fp"]), S("c", True, "proved", premises=["duality", "a"]),
        S("d", True, "argued", premises=["c"]), S("e", True, "proved", premises=["d", "exact"]),
        S("f", True, "float", premises=["exact"])])
    got = {s.name: (s.exactness, s.assumes) for s in steps}
    assert got["a"] == ("certified", []) and got["b"] == ("float", []) and got["f"] == ("float", [])
    assert got["c"] == ("certified", ["duality"]) and got["d"] == ("argued", ["duality"])
    assert got["e"] == ("proved", ["duality", "d"]) and got["duality"] == ("argued", [])
    assert checker.derive_steps(steps) == steps  # idempotent
    assert [s.exactness for s in steps] == ["argued", "float", "certified", "proved", "certified", "float",
                                            "certified", "argued", "proved", "float"]


@pytest.mark.parametrize("steps,message", [
    ([checker.Step("a", True, "proved", premises=["nowhere"])], "names 0 steps"),
    ([checker.Step("a", True, "proved"), checker.Step("a", True, "proved"),
      checker.Step("b", True, "proved", premises=["a"])], "names 2 steps"),
    ([checker.Step("a", True, "proved", premises=["a"])], "cycle"),
    ([checker.Step("a", True, "proved", premises=["b"]), checker.Step("b", True, "argued", premises=["a"])], "cycle"),
])
def test_derive_steps_refuses_unknown_ambiguous_and_circular_premises(steps, message):
    with pytest.raises(ValueError, match=message):
        checker.derive_steps(steps)


def test_a_failed_check_is_derived_too():
    out = checker.check_data(_with_lower(cert("p5k2"), "1"))  # above the witness's margin: the last stage fails
    assert out.status == "invalid" and out.steps[-1].name == WITNESS_FAILURE and not out.steps[-1].passed
    assert out.steps[3].name == checker.MAX_G and out.steps[3].premises == [s.name for s in out.steps[:3]]
    upper = next(s for s in out.steps if s.name == checker.UPPER)
    assert upper.assumes == [n for n, _ in checker.NOT_RECHECKED]  # derived on the way out of a failed check
