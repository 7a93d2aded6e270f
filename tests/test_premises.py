"""Exactness derived from premises (docs/checks.md#premises): the derivation itself, and every row of the task outputs
read back from their JSON by an independent walk (:mod:`tests.premise_walk`; the conftest applies the same walk to
every ``--json`` result any test prints)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from margintheory.certificate import checker
from margintheory.cli import main
from margintheory.core.checks import Check, VerificationResult, bool_check, step_name
from margintheory.core.premises import PremiseError, derive_premises, exactness_label
from margintheory.presentation.report import assumption_lines
from tests.premise_walk import premise_faults

FIXTURES = Path(__file__).parent / "fixtures" / "certificates"


def _row(name: str, exactness: str = "proved", premises: tuple[str, ...] = ()) -> Check:
    return Check(name=name, expected=True, measured=True, tolerance=None, passed=True, exactness=exactness,
                 detail="why" if exactness == "argued" else "", premises=list(premises))


def _derived(*rows: Check) -> dict[str, Check]:
    return {c.name: c for c in derive_premises(list(rows))}


# -- the derivation -------------------------------------------------------------------------------------------------

def test_a_row_is_the_weakest_of_its_own_method_and_its_premises():
    rows = _derived(_row("exact"), _row("solver", "certified"), _row("fp", "float"),
                    _row("a", premises=("exact", "solver")), _row("b", premises=("a", "fp")),
                    _row("c", "float", premises=("exact",)), _row("d", "certified", premises=("exact",)))
    assert [rows[n].exactness for n in "abcd"] == ["certified", "float", "float", "certified"]
    assert all(not c.assumes for c in rows.values())


def test_an_argued_premise_does_not_lower_a_row_but_is_assumed_transitively():
    rows = _derived(_row("AM-GM", "argued"), _row("weak duality", "argued"), _row("sos", "certified"),
                    _row("upper", premises=("weak duality", "sos")), _row("L = U", premises=("AM-GM", "upper")),
                    _row("width", "argued", premises=("L = U",)), _row("after", premises=("width",)))
    assert (rows["upper"].exactness, rows["upper"].assumes) == ("certified", ["weak duality"])
    assert (rows["L = U"].exactness, rows["L = U"].assumes) == ("certified", ["AM-GM", "weak duality"])
    # an argued row stays argued, and what it rests on goes on to the rows that use it
    assert (rows["width"].exactness, rows["width"].assumes) == ("argued", ["AM-GM", "weak duality"])
    assert rows["after"].assumes == ["AM-GM", "weak duality", "width"]
    assert [exactness_label(c.exactness, c.assumes) for c in (rows["L = U"], rows["width"], rows["sos"])] == [
        "certified*", "argued", "certified"]


def test_once_the_argued_step_is_computed_its_dependents_are_proved_without_assumptions():
    """The AM-GM step is argued today; replacing it by an exact computation must clear the star everywhere."""
    def chain(am_gm: str) -> dict[str, Check]:
        return _derived(_row("AM-GM", am_gm), _row("max margin in [L, U]"),
                        _row("L = U", premises=("AM-GM", "max margin in [L, U]")),
                        _row("width attained", premises=("L = U",)))

    argued, proved = chain("argued"), chain("proved")
    assert [argued[n].assumes for n in ("L = U", "width attained")] == [["AM-GM"], ["AM-GM"]]
    assert all(not c.assumes and c.exactness == "proved" for c in proved.values())
    assert chain("float")["width attained"].exactness == "float"  # a float computation would lower them instead


def test_a_cited_lemma_is_an_assumption_and_an_unknown_name_is_refused():
    rows = _derived(_row("gamma* <= U", premises=("Lemma C.6",)))
    assert rows["gamma* <= U"].assumes == ["Lemma C.6"] and rows["gamma* <= U"].exactness == "proved"
    with pytest.raises(PremiseError, match="neither a row of this result nor a cited lemma"):
        derive_premises([_row("a", premises=("Lemma Z.99",))])
    with pytest.raises(PremiseError, match="names 2 rows"):
        derive_premises([_row("a"), _row("a"), _row("b", premises=("a",))])


@pytest.mark.parametrize("rows", [
    [_row("a", premises=("a",))],
    [_row("a", premises=("b",)), _row("b", premises=("a",))],
    [_row("a", premises=("b",)), _row("b", premises=("c",)), _row("c", "argued", premises=("a",))],
], ids=["self", "two", "three, through an argued row"])
def test_a_cycle_is_refused(rows):
    with pytest.raises(PremiseError, match="cycle"):
        derive_premises(rows)


def test_derivation_is_idempotent_and_a_reported_row_keeps_its_graph():
    res = VerificationResult("t")
    res.add(_row("duality", "argued"))
    res.add(bool_check("bound", True, exactness="proved", premises=["duality", "Lemma C.14"]))
    first = [(c.exactness, list(c.assumes)) for c in res.derive().checks]
    assert first == [(c.exactness, list(c.assumes)) for c in res.derive().checks]
    assert first[1] == ("proved", ["duality", "Lemma C.14"])
    shown = [c.reported("core: ") for c in res.checks]
    assert shown[1].premises == ["core: duality", "Lemma C.14"]
    assert [c.assumes for c in derive_premises(shown)] == [[], ["core: duality", "Lemma C.14"]]
    assert assumption_lines(res.checks) == [
        "* rests on argued statements (exactness derived from the premises, docs/checks.md#premises):",
        "  A1 duality", "  A2 Lemma C.14", "  bound (proved*): A1, A2"]


def test_the_walk_catches_a_label_typed_by_hand():
    """The independent walk of the tests fails on each kind of wrong row (so it can fail)."""
    res = VerificationResult("t")
    res.add(_row("duality", "argued"))
    res.add(_row("fp", "float"))
    res.add(_row("bound", premises=["duality", "fp"]))
    doc = res.to_dict()
    assert not premise_faults(doc)
    doc["checks"][2]["exactness"] = "proved"  # more certain than its float premise
    assert premise_faults(doc) == ["bound: proved but its premise 'fp' is float"]
    doc = res.to_dict()
    doc["checks"][2]["assumes"] = []  # silent about the argued premise
    assert premise_faults(doc) == ["bound: assumes [] but not ['duality']"]
    doc = res.to_dict()
    doc["checks"][2]["premises"].append("nowhere")
    assert premise_faults(doc) == ["bound: premise 'nowhere' is neither a row nor a cited lemma"]


# -- every task's output --------------------------------------------------------------------------------------------

def _json(capsys, argv: list[str]) -> dict:
    main(argv + ["--json"])
    doc = json.loads(capsys.readouterr().out)
    assert not premise_faults(doc)
    return doc


def _rows(doc: dict) -> dict[str, dict]:
    return {c["name"]: c for c in doc["checks"]}


@pytest.mark.parametrize("family", ["lemma-c18", "cyclic-lattice"])
def test_every_p_rows_rest_on_their_argued_steps(capsys, family):
    rows = _rows(_json(capsys, ["verify", "--k", "2", "--every-p", "--family", family]))
    # L = U = gamma* rests on AM-GM while that step is argued, and drops it once it is proved
    am_gm = rows["AM-GM: max g_k exact"]
    assert ("AM-GM: max g_k exact" in rows["L = U = gamma*(p, k)"]["assumes"]) == (am_gm["exactness"] == "argued")
    interval = rows["max margin in [L, U], all p"]
    assert {"U: weak duality (C.6)", "U: homogeneity", "U: C.14 terms that cancel"} <= set(interval["assumes"])
    assert interval["exactness"] == "proved" and "L(p) = gamma*(p, k)" in interval["premises"]
    # Lemma C.14 for all p: sympy's arithmetic, and the cancellation as an argued row of its own
    c14 = rows["U: C.14 blocks, all p"]
    assert c14["assumes"] == ["U: C.14 terms that cancel"]
    assert rows["U: C.14 terms that cancel"]["exactness"] == "argued"
    # the Dirichlet kernel: identities in p only (nothing evaluated at p = 3..11), its root-of-unity step argued
    dirichlet = rows["Dirichlet kernel (all odd p)"]
    assert dirichlet["assumes"] == ["Dirichlet: r = 1 iff p | x"] and "3.." not in dirichlet["detail"]
    assert "odd p = 3" not in dirichlet["detail"]


def test_per_p_verify_rows(capsys):
    doc = _json(capsys, ["verify", "--p", "5", "--k", "2"])
    rows = _rows(doc)
    upper = rows["max margin <= U, gamma* <= U"]
    assert upper["exactness"] == "proved" and {"U: weak duality (C.6)", "U: homogeneity"} <= set(upper["assumes"])
    assert doc["certificate"]["upper_assumes"] == upper["assumes"]  # the certificate object reads the derived row
    assert set(upper["assumes"]) <= set(rows["network margin = optimum"]["assumes"])


def test_the_schema_runs_cover_every_task_and_are_walked():
    """Even p, parity, groups, CoGO and the families are the runs of tests/test_result_schema.py: every JSON result a
    test prints goes through :func:`tests.premise_walk.premise_faults` (tests/conftest.py), so they are walked there,
    not run twice."""
    import inspect

    from tests import conftest
    from tests.test_result_schema import RUNS

    runs = [" ".join(argv) for argv, _, _ in RUNS]
    for fragment in ("--p 6", "--task parity", "--task group", "--task cogo", "--family parity-design",
                     "--single-neuron", "--min-width"):
        assert any(fragment in r for r in runs), fragment
    assert "premise_faults(doc)" in inspect.getsource(conftest)


def test_class_weighted_upper_bound_follows_from_its_rows(capsys, tmp_path):
    from margintheory.engines.margins import input_grid

    path = tmp_path / "w.npz"
    n, y = 5**2, input_grid(5, 2).sum(axis=1) % 5  # q uniform, tau[x, y(x) + 1] = 1: translation-invariant
    tau = np.zeros((n, 5))
    tau[np.arange(n), (y + 1) % 5] = 1.0
    np.savez(path, q=np.full(n, 1.0 / n), tau=tau)
    doc = _json(capsys, ["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(path)])
    rows = _rows(doc)
    upper = rows.get("gamma* <= upper bound") or rows["gamma* x sum(w) <= upper bound"]
    reduction = _rows(doc)["U: F = lam F_unif(u, K_t w)"]
    # the reduction is computed now (exact rationals): whatever its label, the bound's follows from it
    assert (reduction["exactness"] == "argued") == ("U: F = lam F_unif(u, K_t w)" in upper["assumes"])
    assert reduction["exactness"] == "proved" and "Lemma C.6" in upper["assumes"]
    assert doc["details"]["upper_bound_exactness"] == upper["exactness"]
    assert doc["details"]["upper_bound_assumes"] == upper["assumes"]


@pytest.mark.parametrize("witness", [True, False])
def test_check_lower_end_is_verified_or_assumed(capsys, tmp_path, witness):
    doc = json.loads((FIXTURES / "p5k2.json").read_text())
    if not witness:  # the witness deleted and the lower end raised to U: an unverified claim
        doc.pop("lower_witness")
        doc["claim"]["lower"] = doc["claim"]["upper"]
        doc["claim"]["relative_gap_at_most"] = None
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    rows = _rows(_json(capsys, ["check", str(path)]))
    gap = rows["lower <= upper, gap"]
    assert gap["exactness"] == "proved" and len(gap["assumes"]) == (3 if witness else 4)
    if witness:
        assert "lower bound: exact margin" in gap["premises"] and "verified" in gap["detail"]
    else:
        assert gap["assumes"][0] == "lower bound: stated" and "NOT verified" in gap["detail"]
        stated = rows["lower bound: stated"]
        assert stated["exactness"] == "argued" and stated["detail"].startswith("unverified")
    assert [step_name(name) for name, _ in checker.NOT_RECHECKED] == gap["assumes"][-3:]


def test_check_survives_a_file_that_lists_steps_named_like_its_own(capsys, tmp_path):
    """Premises name rows: a file's argued step with the name (or the short name) of a checked step must neither
    crash the derivation nor take that step's place."""
    doc = json.loads((FIXTURES / "p5k2.json").read_text())
    doc["reduction"]["steps"] += [
        {"name": checker.UPPER, "exactness": "argued", "reason": "same name"},
        {"name": checker.MAX_G + " (restated)", "exactness": "argued", "reason": "same short name"}]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    out = checker.check_data(doc)
    assert out.status == "valid" and [s.name for s in out.steps].count(checker.UPPER) == 1
    result = _json(capsys, ["check", str(path)])
    names = [c["name"] for c in result["checks"]]
    assert len(names) == len(set(names)) and "max g_k <= gamma/scale (2)" in names
    assert result["verdict"] == "verified"
