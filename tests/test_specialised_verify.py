"""``verify --p P --k K`` as the every-p proof evaluated at ``P`` (module ``tasks.modular_addition.specialised``).

Compared with the per-``p`` compact check (an independent computation: the exact ``p x p`` table in ``Q(omega_p)``)
at every odd ``p <= 31`` for ``k = 2, 3`` (composite ``p`` included) and at sampled ``p`` for ``k = 1, 4``: the same
rows in the same order, the same verdict of every row, the same exact margin.  A wrong Dirichlet kernel or a wrong
``gamma*`` at large ``p`` turns rows red; ``verify --p P`` for a ``P`` far beyond any table is proved in seconds.
"""

from __future__ import annotations

import pytest
import sympy as sp

from margintheory import ModularAddition, verify
from margintheory.core.theory import gamma_star_exact
from margintheory.symbolic import every_p as sym
from margintheory.tasks.modular_addition import specialised
from margintheory.tasks.modular_addition.checks import verify_construction

CASES = ([(p, k) for k in (2, 3) for p in range(3, 32, 2)] + [(p, 1) for p in (3, 9, 31)]
         + [(p, 4) for p in (3, 5, 11)])


@pytest.mark.parametrize("p, k", CASES)
def test_the_specialised_proof_agrees_with_the_per_p_check(p, k):
    per_p = verify_construction(ModularAddition(p, k))
    spec = specialised.verify_specialised(ModularAddition(p, k))
    assert [c.name for c in spec.checks] == [c.name for c in per_p.checks]
    assert [(c.name, c.passed, c.informational) for c in spec.checks] == [
        (c.name, c.passed, c.informational) for c in per_p.checks]
    assert spec.verdict == per_p.verdict
    assert sp.simplify(sp.sympify(spec.margin.exact) - sp.sympify(per_p.margin.exact)) == 0
    assert spec.margin.exactness == "proved" and spec.fields["width"] == per_p.fields["width"]
    for key in ("all_on_margin", "wrong_logits_equal", "construction_correct_logit", "construction_wrong_logit",
                "neurons_in_optimal_set", "frequencies_covered"):
        assert spec.fields[key] == per_p.fields[key], key
    assert all(c.exactness == "proved" for c in spec.checks if not c.informational)
    assert all("every-p identity evaluated at p = " in c.detail for c in spec.checks[1:3])


@pytest.mark.parametrize("family, k", [("parity-design", 3), ("smallest-known", 2)])
def test_the_family_networks_agree_too(family, k):
    for p in (7, 9):
        per_p = verify_construction(ModularAddition(p, k), family=family)
        spec = specialised.verify_specialised(ModularAddition(p, k), family)
        assert [(c.name, c.passed) for c in spec.checks] == [(c.name, c.passed) for c in per_p.checks]
        assert sp.simplify(sp.sympify(spec.margin.exact) - sp.sympify(per_p.margin.exact)) == 0


def test_a_wrong_dirichlet_kernel_turns_the_rows_red(monkeypatch):
    right = sym.dirichlet_kernel_values()
    specialised.every_p_facts.cache_clear()
    monkeypatch.setattr(sym, "dirichlet_kernel_values", lambda: (2 * right[0], 2 * right[1]))
    try:
        res = specialised.verify_specialised(ModularAddition(10007, 3))
        rows = {c.name: c for c in res.checks}
        assert res.verdict == "refuted"
        assert not rows["margin = gamma* (C.22)"].passed and not rows["correct logit = (p-1)/2"].passed
    finally:
        specialised.every_p_facts.cache_clear()


def test_verify_at_a_p_beyond_any_table_is_proved_with_gap_zero():
    """p = 10^12 + 39 (prime): the per-p compact check would hold a 10^24-entry table; the every-p proof at p needs
    none.  Both ends are proved and equal (the AM-GM upper end)."""
    p = 10**12 + 39
    res = verify(ModularAddition(p, 3))
    assert res.verdict == "verified" and res.fields["specialised_from_every_p"] is True
    assert sp.sympify(res.margin.exact) == gamma_star_exact(p, 3) == sp.Rational(3, 16 * p * (p - 1))
    c = res.certificate
    assert c["lower_exactness"] == c["upper_exactness"] == "proved" and c["relative_gap"] == 0
    assert c["upper_exact"] == str(sp.Rational(3, 16 * p * (p - 1)))


def test_gamma_star_exact_is_not_rounded_to_zero_at_large_p():
    g = gamma_star_exact(999999999989, 8)
    assert g > 0 and sp.expand(g**2) == sp.Rational(4 * 40320**2, 18**9 * 999999999988**2 * 999999999989**7)
