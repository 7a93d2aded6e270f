"""The papers' remaining statements as checks: CoGO's slips of the text and its statement rows in ``verify``, and the
modular-addition errata (D.6.2, D.6.3, Sec. 7.4, Fourier circuits (C.2)/(C.9) and the non-mixed terms of C.10/C.14).
CoGO's semi-ring statements, its dynamics (Theorems 5-7) and App. D.4's memorizing network are tested in
``tests/test_mutation_semiring_checks.py``, ``tests/test_mutation_dynamics_checks.py`` and
``tests/test_mutation_memorization.py`` (the mutation gate's areas).  Each test asks what a
wrong implementation would still pass: the computations are compared with independent ones (finite differences, the
exhaustive margin engine, the explicit Jacobian), and weakened versions must fail."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from margintheory.core.problems import ModularAddition
from margintheory.tasks.cogo import errata_checks as err
from margintheory.tasks.cogo.task import verify_cogo
from margintheory.tasks.modular_addition import paper_errata as pe
from margintheory.tasks.modular_addition.checks import verify_construction

# ---------------------------------------------------------------- CoGO: slips of the text

def test_cogo_errata_values() -> None:
    rows = {c.name: c for c in err.errata_checks(7)}
    thm6 = rows["Thm 6 proof: r_kkk = 1/2d"]
    assert thm6.measured == pytest.approx(1.0) and not thm6.passed and "loss is 0.739" in thm6.detail
    assert rows["Sec. 7: (d-1)/2 x 2.25%"].measured == 1.4175 and not rows["Sec. 7: (d-1)/2 x 2.25%"].passed
    assert rows["Lemma 10: orbits != meet"].measured == 0 and rows["Fig. 2: 6 nodes = Cor. 2"].measured == 6
    assert all(c.informational for c in rows.values())


def test_verify_cogo_reports_the_statements_without_changing_the_verdict() -> None:
    r = verify_cogo("F6", 5)
    names = {c.name: c for c in r.checks}
    for n in ("Thm 2: semi-ring axioms", "Obs. 2: ord is a ring map", "Lemma 4: z = z' * y",
              "Thm 5: r' = -J J* grad l", "Thm 6: zero-loss path", "Thm 7: J J* -> diagonal"):
        assert names[n].passed and not names[n].informational
    # exact checks on three seeded instances are testing, not a proof: the rows say so
    assert names["Thm 2: semi-ring axioms"].exactness == "argued" and names["Obs. 2: ord is a ring map"].exactness \
        == "argued" and "not the proof" in names["Thm 2: semi-ring axioms"].detail
    assert not names["Lemma 2(2) as printed"].passed and r.verdict == "verified"


# ---------------------------------------------------------------- modular-addition errata

def test_modular_addition_errata_rows() -> None:
    rows = {c.name: c for c in pe.d62_neuron_pair_rows()}
    assert not rows["D.6.2: (cos a + cos a)^2"].passed and rows["D.6.2: 8 neurons per frequency"].passed
    dft = pe.d63_dft_row(5)
    assert not dft.passed and dft.measured > 0.1 and "e-1" in dft.detail.split("and ")[-1]
    sec = pe.sec74_norm_row(11)
    assert sec.measured == pytest.approx(11.0, rel=1e-13) and not sec.passed
    c9 = pe.c9_identity_row(ModularAddition(11, 3))
    assert c9.measured == "9/10" and c9.expected == "11/10" and "(C.2)" in c9.statement


def test_nonmixed_terms_are_constant_in_delta_and_vanish_for_mean_zero_w() -> None:
    rng = np.random.default_rng(9)
    u = rng.integers(-3, 4, size=(3, 5))
    w = np.array([2, -1, 0, 1, 1])
    size, spread = pe.nonmixed_terms(5, 3, u, w)
    assert size != 0 and spread == 0
    w0 = np.array([2, -1, 0, 1, -2])  # mean zero
    assert pe.nonmixed_terms(5, 3, u, w0) == (Fraction(0), Fraction(0))


def test_verify_construction_carries_the_paper_rows() -> None:
    r = verify_construction(7, 2)
    names = {c.name: c for c in r.checks}
    assert "Morwani et al. App. D.6.2" in names["paper: wrong logit = 0"].statement
    assert names["D.4: f = 1[c = a+b]"].passed and names["D.4: f = 1[c = a+b]"].exactness == "proved"
    assert not names["D.6.3: DFT with j, j, j"].passed and names["D.6.3: DFT with j, j, j"].informational
    assert r.verdict == "verified"
