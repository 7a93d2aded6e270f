"""``verify --k K --every-p``: Theorem C.22's claims for every odd p at once (docs/theory.md#every-p), and the
parity design's general-k claim counted exactly to k = 12.

What each test would catch: a wrong block constant C_(p,k), a dropped factor in the Dirichlet-kernel form of the
logits or in the logit scale, a family whose moments do not all vanish, a width certificate that fails, a step
labelled ``float``, a certificate object that leaves the schema; and, for the design, a programme that miscounts
(checked against the closed-form number of terms and against brute force on designs where terms do survive).
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

from margintheory import verify
from margintheory.cli import main
from margintheory.core.phase_measures import PhaseMeasure, l1_ball
from margintheory.core.problems import ModularAdditionEveryP
from margintheory.errors import InputError
from margintheory.presentation.schema import validate_result
from margintheory.tasks.modular_addition import every_p


def _rows(result) -> dict:
    return {c.name: c for c in result.checks}


@pytest.mark.parametrize("k, family", [(1, "lemma-c18"), (2, "lemma-c18"), (3, "lemma-c18"), (4, "lemma-c18"),
                                       (2, "cyclic-lattice"), (3, "parity-design"), (4, "smallest-known")])
def test_every_p_is_proved_for_the_construction_and_the_families(k, family):
    res = verify(ModularAdditionEveryP(k), family=family)
    assert res.verdict == "verified", [(c.name, c.detail) for c in res.checks if not c.passed]
    assert {c.exactness for c in res.checks} <= {"proved", "argued"}  # no step is float
    assert all(c.informational for c in res.checks if c.exactness == "argued")
    rows = _rows(res)
    assert rows["L(p) = gamma*(p, k)"].passed and rows["L = U = gamma*(p, k)"].passed
    assert rows["max margin in [L, U], all p"].measured < 1e-9
    assert rows["min width = N (p-1)/2"].passed and not rows["min width = N (p-1)/2"].informational  # k = 1..5
    d = res.to_dict()
    validate_result(d)
    assert d["details"]["p_range"]["claims"].startswith("every odd p >= 3")
    assert d["parameters"]["every_p"] is True and d["gamma_star"] is None and d["width"] is None
    cert = d["certificate"]
    assert cert["lower"] == 1.0 and 1.0 <= cert["upper"] < 1 + 1e-9 and cert["lower_exactness"] == "proved"
    assert "gamma*(p" in cert["scale"] and cert["upper_exactness"] == "proved"
    expected_width = {"lemma-c18": 2 ** (2 * k - 1), "cyclic-lattice": 2 * 3 ** (k - 1)}.get(family,
                                                                                           (k + 1) * 2 ** (k - 1))
    assert d["details"]["width_per_frequency"] == expected_width
    assert d["details"]["gamma_star_formula"] and "p" in d["details"]["lower_formula"]


def test_formulas_match_the_closed_form_at_sample_p():
    """The formulas in p agree with the per-p closed form gamma*(p, k) when p is substituted (a cross-check of the
    symbol, not part of the proof)."""
    import sympy as sp

    from margintheory.core.theory import gamma_star_exact
    from margintheory.symbolic import every_p as sym

    for k in (2, 3):
        net = every_p.network_side("lemma-c18", k)
        lower = sym.lower_end_in_p(k, net.logit_scale, net.per_frequency_weight)
        for p in (3, 7, 11):
            assert sp.simplify(lower.normalized.subs(sym.P, p) - gamma_star_exact(p, k)) == 0
            assert lower.wrong.subs(sym.P, p) == sp.Rational(-1, 2) and lower.correct.subs(sym.P, p) == (p - 1) // 2


def test_a_wrong_block_constant_turns_rows_red(monkeypatch):
    from margintheory.symbolic import block_reduction

    right = block_reduction.block_constant_expr
    monkeypatch.setattr(block_reduction, "block_constant_expr", lambda p=block_reduction.P, k=3: right(p, k) / p)
    res = every_p.verify_every_p(ModularAdditionEveryP(3))
    rows = _rows(res)
    assert res.verdict == "refuted"
    assert not rows["U: C_(p,k) as C.14 derives"].passed and not rows["U(p) = rho_k gamma*(p, k)"].passed
    assert not rows["L = U = gamma*(p, k)"].passed and not rows["neurons optimal (C.15, all p)"].passed
    # a constant factor is caught by the gap, even though rho stays free of p
    monkeypatch.setattr(block_reduction, "block_constant_expr", lambda p=block_reduction.P, k=3: 2 * right(p, k))
    rows = _rows(every_p.verify_every_p(ModularAdditionEveryP(3)))
    assert not rows["max margin in [L, U], all p"].passed and not rows["U: C_(p,k) as C.14 derives"].passed


def test_a_dropped_factor_in_the_dirichlet_kernel_or_the_logit_scale_turns_rows_red(monkeypatch):
    from margintheory.symbolic import every_p as sym

    right = sym.dirichlet_kernel_values()
    monkeypatch.setattr(sym, "dirichlet_kernel_values", lambda: (2 * right[0], 2 * right[1]))  # cos without its 1/2
    rows = _rows(every_p.verify_every_p(ModularAdditionEveryP(2)))
    assert not rows["Dirichlet kernel (all odd p)"].passed and not rows["L(p) = gamma*(p, k)"].passed
    assert not rows["f^(j..,-j) > 0 (C.20, all p)"].passed  # against Lemma C.14's independent sum
    monkeypatch.setattr(sym, "dirichlet_kernel_values", lambda: (right[1], right[0]))  # values swapped
    rows = _rows(every_p.verify_every_p(ModularAdditionEveryP(2)))
    assert not rows["all on margin, C.1 (all p)"].passed and not rows["Dirichlet kernel (all odd p)"].passed
    monkeypatch.undo()
    monkeypatch.setattr(sym, "cosine_square_sum", lambda: sym.P)  # the norm without its 1/2
    rows = _rows(every_p.verify_every_p(ModularAdditionEveryP(2)))
    assert not rows["norm: sum cos^2 = p/2"].passed and not rows["L(p) = gamma*(p, k)"].passed
    monkeypatch.undo()
    monkeypatch.setattr(every_p, "expansion_coefficient", lambda k, n: 1)  # N_k(-1) = k! dropped
    rows = _rows(every_p.verify_every_p(ModularAdditionEveryP(3)))
    assert not rows["expansion N_k(-1) = k!"].passed and not rows["L(p) = gamma*(p, k)"].passed


def _even_parity_design(k: int, coordinates: tuple[int, ...]) -> PhaseMeasure:
    """The parity design with ``sum_(j in coordinates) h_j`` even: max-margin only for an odd number of them."""
    q = 2 * (k + 1)
    pts = np.array([[(t + (k + 1) * h) % q for h in hv] for t in range(k + 1)
                    for hv in itertools.product((0, 1), repeat=k) if sum(hv[j] for j in coordinates) % 2 == 0])
    return PhaseMeasure(k, q, pts, tuple([Fraction(1, len(pts))] * len(pts)), "parity-design", "mutated")


def test_a_family_moment_that_does_not_vanish_turns_rows_red(monkeypatch):
    bad = _even_parity_design(4, (0, 1))
    monkeypatch.setattr(every_p, "family_measure", lambda family, k: bad)
    res = every_p.verify_every_p(ModularAdditionEveryP(4), family="parity-design")
    rows = _rows(res)
    assert res.verdict == "refuted"
    assert not (rows["moments: f depends on s"].passed and rows["only the wanted moment"].passed)
    assert not rows["logits = K D(s - c), all p"].passed
    monkeypatch.undo()
    monkeypatch.setattr(every_p, "smallest_known_measure", lambda k: bad)  # the width row's family
    rows = _rows(every_p.verify_every_p(ModularAdditionEveryP(4)))
    assert not rows["width min: attained"].passed and not rows["min width = N (p-1)/2"].passed


def test_library_and_cli_refusals(capsys):
    with pytest.raises(InputError):
        ModularAdditionEveryP(13)
    with pytest.raises(InputError):
        verify(ModularAdditionEveryP(2), exact=True)
    with pytest.raises(InputError):
        verify(ModularAdditionEveryP(2), family="parity-design")  # needs k >= 3
    for argv in (["--k", "3", "--every-p", "--p", "7"], ["--every-p"], ["--k", "9", "--every-p"],
                 ["--k", "3", "--every-p", "--exact"], ["--k", "3", "--every-p", "--certificate", "x.json"],
                 ["--task", "parity", "--n", "5", "--k", "2", "--every-p"]):
        assert main(["verify", *argv]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("margintheory verify: error:") and "\n" not in err


def test_cli_every_p_json(capsys):
    assert main(["verify", "--k", "2", "--every-p", "--family", "cyclic-lattice", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "verified" and d["parameters"] == {"k": 2, "every_p": True, "family": "cyclic-lattice"}
    assert d["details"]["width_minimum"].startswith("exactly 6 (p-1)/2")


# ---------------------------------------------------------------- the parity design's general-k claim

def test_parity_design_counted_exactly_to_k12():
    from margintheory.symbolic import parity_design as pd

    for k in (3, 4, 5, 6, 7, 8, 12):
        c = pd.design_term_count(k)
        assert (c.surviving, c.wanted, c.terms) == (0, 2, pd.expansion_term_total(k)), c
    assert pd.expansion_term_total(12) == 354_870_594


def _brute_force_survivors(mu: PhaseMeasure) -> int:
    """Expansion terms (n, eps) with m = n + eps 1 != 0 and an exact non-zero moment (M_k listed)."""
    from margintheory.core.cyclotomic import reduce_mod_cyclotomic

    k, q = mu.k, mu.denominator
    ball = l1_ball(k, k)
    n = ball[(np.abs(ball).sum(axis=1) - k) % 2 == 0]
    m = np.concatenate([n + 1, n - 1])
    m = m[np.any(m != 0, axis=1)]
    res = (m @ mu.points.T) % q
    counts = np.zeros((len(m), q), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(len(m)), res.shape[1]), res.ravel()), 1)
    return int(np.any(reduce_mod_cyclotomic(counts) != 0, axis=1).sum())


@pytest.mark.parametrize("k, coordinates", [(4, (0, 1)), (4, (0, 1, 2, 3)), (5, (0, 1)), (3, (0, 1, 2))])
def test_the_count_agrees_with_brute_force_where_terms_survive(k, coordinates):
    """On designs with an even number of parity coordinates terms survive; the programme counts exactly the terms
    that brute force finds (and none for the real design, an odd number)."""
    from margintheory.symbolic import parity_design as pd

    mu = _even_parity_design(k, coordinates)
    c = pd.design_term_count(k, mu)
    assert c is not None and c.surviving == _brute_force_survivors(mu)
    assert (c.surviving > 0) == (len(coordinates) % 2 == 0)
    assert pd.design_term_count(k, PhaseMeasure(k, 2 * k + 2, mu.points[:-1], tuple(
        [Fraction(1, len(mu.points) - 1)] * (len(mu.points) - 1)), "x", "")) is None  # not a product set


def test_parity_design_derivation_symbolic_in_k():
    from margintheory.symbolic import parity_design as pd

    d = pd.parity_design_derivation(k_max=5, factor_k_max=4, count_k_max=9)
    assert d.all_passed, d.render("text")
    kinds = [s.check.kind for s in d.steps]
    assert kinds.count("argued") == 1 and "float" not in kinds
    symbolic = [s for s in d.steps if "symbol" in s.check.scope]
    assert len(symbolic) >= 3  # the diagonal factor, the even sum, the parity factor: k a symbol
    argued = next(s for s in d.steps if s.check.kind == "argued")
    assert "2k+2 | s forces s = 0" in argued.justification and "k - 3 (mod 2)" in argued.justification


def test_the_upper_end_by_am_gm_is_exact_and_the_sos_path_stays_as_a_cross_check(monkeypatch):
    """Default: U(p) = gamma*(p, k) exactly (rho_k = 1, the AM-GM row proved, no SOS solve); --method sos: the SOS
    bound with rho_k - 1 > 0 tiny, the AM-GM row proved beside it.  A wrong AM-GM constant turns rows red."""
    from fractions import Fraction

    from margintheory.certificate import am_gm

    res = verify(ModularAdditionEveryP(2))
    rows = _rows(res)
    assert rows["U: AM-GM max g_k exact"].passed and rows["AM-GM: max g_k exact"].exactness == "proved"
    assert rows["max margin in [L, U], all p"].measured == 0.0 and res.to_dict()["details"]["rho_squared"] == "1"
    assert "U: SOS max g_k <= B_k" not in rows and res.certificate["sos_solves"] == 0
    sos = verify(ModularAdditionEveryP(2), upper_method="sos")
    rows = _rows(sos)
    assert sos.verdict == "verified" and rows["U: SOS max g_k <= B_k"].passed
    assert rows["AM-GM: max g_k exact"].passed and 0 < rows["max margin in [L, U], all p"].measured < 1e-9
    right = am_gm.block_form_maximum
    monkeypatch.setattr(am_gm, "block_form_maximum", lambda k, **kw: right(
        k, bound_squared=Fraction(1, (k + 1) ** (k + 1)) * (1 - Fraction(1, 10**12)) ** 2))
    rows = _rows(every_p.verify_every_p(ModularAdditionEveryP(2)))
    assert not rows["U: AM-GM max g_k exact"].passed and not rows["L = U = gamma*(p, k)"].passed
