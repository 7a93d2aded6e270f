"""The Derivation object: labels come only from checks that ran; failures are recorded, never hidden."""

import pytest
import sympy as sp

from margintheory.symbolic.derivation import Derivation

x = sp.Symbol("x", real=True)


def test_exact_step_runs_sympy_and_records_failure():
    d = Derivation("t")
    ok = d.exact(sp.Eq(sp.sin(x) ** 2 + sp.cos(x) ** 2, 1, evaluate=False), "pythagoras", "L1")
    bad = d.exact(sp.Eq(sp.sin(x) ** 2, 1, evaluate=False), "wrong", "L2")
    assert ok.check.kind == "proved" and bad.check.kind == "failed"
    assert not d.all_passed
    assert d.counts() == {"proved": 1, "float": 0, "argued": 0, "failed": 1}


def test_custom_proof_and_numeric_and_assumed():
    d = Derivation("t")
    d.exact(sp.Eq(sp.Symbol("a"), sp.Symbol("b")), "custom", "L", proof=lambda: True, method="m", scope="s")
    n_ok = d.numeric(sp.Le(x, 1), "num", "L", max_error=lambda: 1e-14, tolerance=1e-12, method="rand")
    n_bad = d.numeric(sp.Le(x, 1), "num", "L", max_error=lambda: 1e-3, tolerance=1e-12, method="rand")
    n_nan = d.numeric(sp.Le(x, 1), "num", "L", max_error=lambda: float("nan"), tolerance=1.0, method="rand")
    a = d.assumed(sp.Eq(x, x, evaluate=False), "given", "L", reason="cited")
    assert n_ok.check.kind == "float" and n_ok.check.max_error == 1e-14
    assert n_bad.check.kind == "failed" and n_nan.check.kind == "failed"
    assert a.check.kind == "argued" and not a.check.machine_checked and a.check.passed
    assert "max error 1.00e-03 > tolerance" in n_bad.check.label()


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex"])
def test_render_formats(fmt):
    d = Derivation("Title_with%specials")
    d.exact(sp.Eq(2 * x, x + x, evaluate=False), "double", "Lemma X")
    d.notes.append("a note")
    out = d.render(fmt)
    assert "1 proved" in out and "Lemma X" in out
    if fmt == "latex":
        assert r"\section*{Title\_with\%specials}" in out and r"\begin{enumerate}" in out
    if fmt == "markdown":
        assert "$$" in out


def test_bad_format_and_auto_evaluated_statement():
    d = Derivation("t")
    with pytest.raises(ValueError):
        d.render("html")
    with pytest.raises(TypeError):
        d.exact(sp.Eq(sp.Integer(1), 1), "evaluates to True", "L")
