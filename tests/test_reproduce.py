"""The papers' experiments as recipes (docs/reproductions.md): the registry holds the papers' settings, every
recipe's scaled-down version runs end to end in seconds and says it is not the paper's size, the claims are measured
by functions that tell a max-margin network from a network that is not one, a rerun reuses finished runs, and the
estimates come from the measured speeds."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from margintheory.cli import main
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition
from margintheory.errors import InputError, RefusedError
from margintheory.presentation.schema import validate_result
from margintheory.reproduce import claims as rc
from margintheory.reproduce.catalog import LAMBDA_SWEEP, RECIPES, recipe
from margintheory.reproduce.estimates import estimate_recipe, estimate_run, step_seconds
from margintheory.reproduce.recipes import PAPERS, RunSpec
from margintheory.reproduce.runner import ReproduceOptions, reproduce
from margintheory.reproduce.runs import RunOutcome, trainer_gap
from margintheory.training.metrics import norm_shares

REQUIRED = ("morwani-fig7.1", "morwani-fig7.4", "morwani-fig7.5", "morwani-figD.2", "morwani-figD.3",
            "morwani-fig7.6", "fourier-circuits-fig4.1", "fourier-circuits-figC.1", "fourier-circuits-figC.3",
            "cogo-fig2", "cogo-table2", "lambda-sweep")
#: a scale at which each trainable recipe runs in about a second of CPU
SMOKE = {"morwani-fig7.1": 0.01, "morwani-fig7.4": 0.01, "morwani-fig7.5": 0.01, "morwani-figD.2": 0.01,
         "morwani-figD.3": 0.01, "morwani-fig7.6": 0.001, "fourier-circuits-fig4.1": 0.0003,
         "fourier-circuits-figC.1": 0.001, "fourier-circuits-figC.3": 0.0003, "lambda-sweep": 0.01,
         "cogo-fig2": 0.01, "cogo-fig3": 0.01, "cogo-table2": 0.003, "universality-groups": 0.01}


# -- the registry ------------------------------------------------------------------------------------------------
def test_every_required_recipe_is_registered_and_named_by_paper_and_figure():
    assert set(REQUIRED) <= set(RECIPES)
    for name, rec in RECIPES.items():
        assert name == rec.name
        assert re.fullmatch(r"(fourier-circuits|morwani|cogo)-(fig|table)[0-9A-Z][0-9.]*|lambda-sweep"
                            r"|universality-groups", name), name
        assert rec.paper in PAPERS and re.search(r"arXiv:\d{4}\.\d{5}", rec.citation)
        json.dumps(rec.describe(), allow_nan=False)  # --list --json


def test_unknown_recipes_and_runs_are_one_line():
    with pytest.raises(InputError, match="no recipe 'nosuch'; the recipes are morwani-fig7.1"):
        recipe("nosuch")
    with pytest.raises(InputError, match="has no run 'cubic'"):
        recipe("morwani-fig7.1").run("cubic")


def _final_lr(spec: RunSpec) -> float:
    return spec.lr * 2.0 ** len(spec.milestones)


def test_the_papers_settings_are_transcribed():
    quad = recipe("morwani-fig7.1").run("quadratic")
    assert (quad.sizes, quad.steps, quad.optimizer, quad.lam, quad.regularizer) == (
        {"p": 71, "k": 2, "width": 500}, 40000, "gd", 1e-4, "norm-power")
    assert _final_lr(quad) == pytest.approx(51.2)  # App. D.2.1: 0.05 doubled ten times
    assert _final_lr(recipe("morwani-figD.2").runs[0]) == pytest.approx(1638.4)  # App. D.2.3
    assert _final_lr(recipe("morwani-fig7.6").runs[0]) == pytest.approx(12.8)
    assert recipe("morwani-fig7.6").runs[0].batch_size == 1000
    for name, k, p in (("fourier-circuits-fig4.1", 4, 47), ("fourier-circuits-figC.1", 3, 97),
                       ("fourier-circuits-figC.3", 5, 23)):
        spec = recipe(name).runs[0]
        assert spec.sizes == {"p": p, "k": k, "width": 2 ** (2 * k - 2) * (p - 1)}
        assert (spec.optimizer, spec.lr, spec.batch_size, spec.train_fraction, spec.seeds, spec.warmup) == (
            "adamw", 5e-3, 1024, 0.5, (0, 1, 2), 10)
    table2 = recipe("cogo-table2")
    assert [s.sizes["d"] for s in table2.runs] == [23, 71, 127]
    assert all(s.seeds == (0, 1, 2, 3, 4) and s.train_fraction == 0.9 and s.sizes["width"] == 512
               for s in table2.runs)
    assert {s.label: s.hardware for s in table2.runs} == {"d23": "cpu", "d71": "cpu", "d127": "gpu"}


def test_every_claim_has_a_measure_and_every_run_a_trainer():
    for rec in RECIPES.values():
        for claim in rec.claims:
            assert claim.kind in rc.MEASURES, (rec.name, claim.kind)
    assert {(rec.name, spec.label): trainer_gap(spec) for rec in RECIPES.values() for spec in rec.runs
            if trainer_gap(spec) is not None} == {}
    odd = RunSpec(label="x", task="parity", sizes={"n": 4, "k": 2, "width": 4}, optimizer="gd", lr=0.1, steps=10,
                  objective="no-r-star")
    assert "no trainer for the objective 'no-r-star'" in trainer_gap(odd)


def test_eq3_without_r_star_is_theorem_1_without_its_last_term():
    from margintheory.reproduce.cogo_potentials import full_loss, loss_without_r_star
    from margintheory.tasks.cogo.algebra import forward_loss, from_network, theorem1_loss

    rng = np.random.default_rng(1)
    U = rng.normal(size=(9, 2, 7))
    net = PolyNetwork(U - U.mean(axis=2, keepdims=True), rng.normal(size=(9, 7)))  # Theorem 1: zero-mean inputs
    terms = theorem1_loss(from_network(net))
    assert full_loss(net.U, net.W, 7) == pytest.approx(forward_loss(net), rel=1e-12)
    assert loss_without_r_star(net.U, net.W, 7) == pytest.approx(terms.total - terms.r_star, rel=1e-12)
    assert terms.r_star > 0.1  # the dropped term is not negligible here: the two losses differ


def test_scaling_shrinks_a_run_and_keeps_it_valid():
    quad = recipe("morwani-fig7.1").run("quadratic")
    assert quad.scaled(1.0) is quad
    small = quad.scaled(0.01)
    assert (small.sizes, small.steps, small.hardware) == ({"p": 7, "k": 2, "width": 50}, 400, "cpu")
    assert small.schedule == "constant" and small.milestones == ()  # no milestone falls within 400 steps
    s5 = recipe("morwani-fig7.6").runs[0].scaled(0.001)
    assert (s5.sizes["group"], s5.batch_size, s5.optimizer) == ("S3", None, "gd")  # the 36 pairs: one full batch
    half = quad.scaled(0.5)
    assert half.milestones == quad.milestones and half.schedule == "doubling"
    for scale in (0.0, -1.0, 1.5, math.nan):
        with pytest.raises(InputError, match="scale must be in"):
            quad.scaled(scale)
    fc = recipe("fourier-circuits-fig4.1").runs[0].scaled(0.001)
    assert fc.sizes["p"] == 7 and all(fc.sizes["p"] % d for d in range(2, fc.sizes["p"]))


# -- the claims' measures on networks whose answer is known ----------------------------------------------------
def _outcome(net: PolyNetwork, label: str = "quadratic", **spec) -> RunOutcome:
    from margintheory.engines.margins import exhaustive_margin

    res = exhaustive_margin(net)
    analysis = {"normalized_margin": res.normalized_margin,
                "details": {"margin_tolerance": res.normalized_tolerance, "relative_gradient_norm": 1e-6}}
    settings = dict(label=label, task="modular-addition", sizes={"p": net.p, "k": net.k, "width": net.m},
                    optimizer="gd", lr=0.1, steps=10)
    settings.update(spec)
    rng = np.random.default_rng(0)
    initial = PolyNetwork(rng.normal(size=net.U.shape), rng.normal(size=net.W.shape))
    return RunOutcome(RunSpec(**settings), 0, net, initial, [], analysis, None, 0.0)  # type: ignore[arg-type]


def _checks(name: str, outcomes: dict, missing: dict | None = None) -> dict:
    return {c.name: c for c in rc.claim_checks(recipe(name), outcomes, missing or {}, decide=True)}


def test_the_max_margin_construction_bears_out_the_quadratic_claims():
    net = build_construction(ModularAddition(11, 2))
    checks = _checks("morwani-fig7.1", {"quadratic": [_outcome(net)]}, {"relu": "no trainer"})
    for name in ("margin -> gamma* (Fig. 7.1c)", "single-frequency (7.1b)", "every frequency used (D.1b)"):
        assert checks[name].passed and not checks[name].informational, (name, checks[name].detail)
    assert checks["every frequency used (D.1b)"].measured == 5
    relu = checks["ReLU near single-freq. (7.1a)"]
    assert relu.measured is None and relu.informational and "no trainer" in relu.detail
    quad = _checks("morwani-fig7.4", {"quadratic": [_outcome(net)]})["quadratic: max power ~1 (7.4c)"]
    assert quad.passed and quad.measured == 1.0


def test_the_measures_refuse_networks_that_are_not_max_margin():
    net = build_construction(ModularAddition(11, 2))
    freq = rc.dominant_frequencies(net)
    without_3 = net.subset(np.flatnonzero(freq != 3))
    checks = _checks("morwani-fig7.1", {"quadratic": [_outcome(without_3)]})
    assert not checks["every frequency used (D.1b)"].passed and "missing [3]" in checks[
        "every frequency used (D.1b)"].detail
    assert not checks["margin -> gamma* (Fig. 7.1c)"].passed  # a missing frequency lowers the margin
    mixed = PolyNetwork(net.U.copy(), net.W.copy())
    mixed.U[0, 0] += mixed.U[1 + np.flatnonzero(freq[1:] != freq[0])[0], 0]  # neuron 0: two frequencies in u_1
    checks = _checks("morwani-fig7.4", {"quadratic": [_outcome(mixed)]})
    heavy = float(norm_shares(mixed)[0])  # neuron 0's share of ||theta||^3, above 1/m: it grew
    assert heavy > 1 / net.m and checks["quadratic: max power ~1 (7.4c)"].measured == pytest.approx(1 - heavy)
    assert not checks["quadratic: max power ~1 (7.4c)"].passed
    share = _checks("morwani-fig7.1", {"quadratic": [_outcome(mixed)]})["single-frequency (7.1b)"]
    assert share.measured < 1 - 1e-3 and not share.passed


def _with_two_frequency_neuron(net: PolyNetwork, amplitude: float) -> PolyNetwork:
    """``net`` plus one neuron whose every vector mixes frequencies 1 and 2 equally (max power 0.5), its entries
    ``amplitude`` times the largest of ``net``."""
    x = np.arange(net.p)
    v = amplitude * float(np.abs(net.U).max()) * (np.cos(2 * np.pi * x / net.p) + np.cos(4 * np.pi * x / net.p))
    return PolyNetwork(np.concatenate([net.U, np.stack([v] * net.k)[None]]), np.concatenate([net.W, v[None]]))


@pytest.mark.parametrize("name, recipe_name, runs", [
    ("quadratic: max power ~1 (7.4c)", "morwani-fig7.4", "quadratic"),
    ("single-frequency (7.1b)", "morwani-fig7.1", "quadratic"),
])
def test_a_neuron_row_weighs_its_outliers_by_their_norm(name, recipe_name, runs):
    """One neuron far from single-frequency (max power 0.5): of negligible norm (1e-4 of the others' entries, a
    share near 1e-13 of ||theta||^3) the row agrees and names it -- one outlier and its mass; of a norm like the
    others' (share 1/(m+1) > 1e-3) the row disagrees, whatever the count of the others."""
    net = build_construction(ModularAddition(11, 2))
    light = _checks(recipe_name, {runs: [_outcome(_with_two_frequency_neuron(net, 1e-4))]})[name]
    mass = float(norm_shares(_with_two_frequency_neuron(net, 1e-4))[-1])
    assert 0 < mass < 1e-11 and light.passed and light.measured == pytest.approx(1 - mass, rel=0, abs=1e-15)
    assert f"{net.m}/{net.m + 1} neurons" in light.detail and f"1, holding {mass:.1e} of the norm" in light.detail
    heavy_net = _with_two_frequency_neuron(net, 1.0)
    heavy = _checks(recipe_name, {runs: [_outcome(heavy_net)]})[name]
    share = float(norm_shares(heavy_net)[-1])
    assert share > 1e-3 and not heavy.passed and heavy.measured == pytest.approx(1 - share)
    assert f"1, holding {share:.1e} of the norm" in heavy.detail


def test_a_neuron_share_counts_the_outliers_and_their_mass():
    judged = rc.neuron_share(np.array([0.5, 0.3, 0.2 - 1e-9, 1e-9]), np.array([True, True, True, False]))
    assert (judged.neurons, judged.outliers) == (4, 1) and judged.outlier_mass == 1e-9
    assert judged.share == pytest.approx(1 - 1e-9, rel=0, abs=1e-15)
    assert judged.holds(1e-3) and judged.holds(1e-9) and not judged.holds(0.0) and not judged.holds(None)
    heavy = rc.neuron_share(np.array([0.5, 0.3, 0.2]), np.array([True, False, True]))
    assert heavy.outlier_mass == 0.3 and not heavy.holds(1e-3) and heavy.holds(0.3)


def test_the_lambda_limit_reads_the_smallest_lambda_and_the_trend():
    net = build_construction(ModularAddition(7, 2))
    worse = net.scaled(1.0)
    worse.W[0] *= 0.5  # lowers the margin
    big, small = "k2-lambda0.1", "k2-lambda0.001"

    def checks(at_big: PolyNetwork, at_small: PolyNetwork) -> dict:
        outs = {big: [_outcome(at_big, label=big, lam=1e-1)], small: [_outcome(at_small, label=small, lam=1e-3)]}
        missing = {label: "left out" for label in LAMBDA_SWEEP.labels if label not in outs}
        return {c.name: c for c in rc.claim_checks(LAMBDA_SWEEP, outs, missing, decide=True)}

    forward = checks(worse, net)
    assert forward["gamma_lambda -> gamma* (L4.7)"].passed and "lambda 0.001" in forward[
        "gamma_lambda -> gamma* (L4.7)"].detail
    assert forward["gap shrinks as lambda falls"].measured == 0
    backwards = checks(net, worse)
    assert not backwards["gamma_lambda -> gamma* (L4.7)"].passed
    assert backwards["gap shrinks as lambda falls"].measured == 1


# -- each recipe's scaled-down version, end to end -------------------------------------------------------------
@pytest.fixture(scope="module")
def fig71(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig71")
    return out, reproduce("morwani-fig7.1", out, ReproduceOptions(scale=SMOKE["morwani-fig7.1"]))


def test_a_scaled_recipe_says_it_is_not_the_papers_size(fig71):
    out, result = fig71
    doc = validate_result(result)
    assert "NOT the paper's size" in doc["title"] and doc["parameters"]["paper_size"] is False
    assert any("NOT the paper's size" in note for note in doc["notes"])
    assert doc["verdict"] == "not-applicable" and all(c["informational"] for c in doc["checks"])
    assert [c["name"] for c in doc["checks"]] == [c.name for c in recipe("morwani-fig7.1").claims]
    margin = doc["checks"][0]
    assert isinstance(margin["measured"], float) and "seed 0" in margin["detail"]
    assert doc["exit_code"] == 0 and {r["run"] for r in doc["details"]["run_summaries"]} == {"quadratic", "relu"}
    assert json.loads((out / "morwani-fig7.1.json").read_text())["checks"] == doc["checks"]
    run_dir = out / "runs" / "quadratic-seed0-scale0.01"
    assert {"network.npz", "initial.npz", "checkpoint.npz", "history.json", "run.json"} <= {
        p.name for p in run_dir.iterdir()}
    assert {p.name for p in (out / "figures").iterdir()} >= {"morwani-fig7.1-margin.png",
                                                             "morwani-fig7.1-embeddings-quadratic.pdf",
                                                             "morwani-fig7.1-embeddings-relu.png"}


def test_a_rerun_and_another_recipe_reuse_the_finished_runs(fig71):
    out, first = fig71
    history = out / "runs" / "quadratic-seed0-scale0.01" / "history.json"
    stamp = history.stat().st_mtime_ns
    again = reproduce("morwani-fig7.1", out, ReproduceOptions(scale=SMOKE["morwani-fig7.1"], figures=False))
    assert history.stat().st_mtime_ns == stamp
    assert [c.measured for c in again.checks] == [c.measured for c in first.checks]
    fig74 = reproduce("morwani-fig7.4", out, ReproduceOptions(scale=SMOKE["morwani-fig7.4"]))
    assert history.stat().st_mtime_ns == stamp
    assert (out / "figures" / "morwani-fig7.4-max-power.png").is_file()
    init = {c.name: c for c in fig74.checks}["init: max power spread (7.4a)"]
    assert 0 < init.measured < 0.9


@pytest.mark.parametrize("name", sorted(set(SMOKE) - {"morwani-fig7.1", "morwani-fig7.4"}))
def test_each_recipe_runs_scaled_down(name, tmp_path):
    figures = name in ("lambda-sweep", "morwani-figD.2", "cogo-table2")
    result = reproduce(name, tmp_path, ReproduceOptions(scale=SMOKE[name], figures=figures))
    doc = validate_result(result)
    assert doc["verdict"] == "not-applicable" and len(doc["checks"]) == len(recipe(name).claims)
    seeds = {(r["run"], r["seed"]) for r in doc["details"]["run_summaries"]}
    trained = [s for s in recipe(name).runs if trainer_gap(s) is None]
    assert seeds == {(s.label, seed) for s in trained for seed in s.seeds}
    assert len(trained) == len(recipe(name).runs) and doc["exit_code"] == 0
    assert all(c["measured"] is not None for c in doc["checks"])
    if figures:
        assert any(p.suffix == ".png" for p in (tmp_path / "figures").iterdir())


def test_every_recipe_has_a_smoke_scale():
    assert set(SMOKE) == set(RECIPES)


def test_the_budget_refuses_a_paper_size_run_before_training(tmp_path):
    with pytest.raises(RefusedError):
        reproduce("fourier-circuits-fig4.1", tmp_path, ReproduceOptions(max_memory=2**30))
    assert not (tmp_path / "store").exists()


# -- estimates ---------------------------------------------------------------------------------------------------
TIMINGS = {"devices": {"cpu": {"hardware": "test machine", "date": "2000-01-01", "measurements": [
    {"task": "modular-addition", "activation": "power", "sizes": {"p": 71, "k": 2, "width": 500},
     "batch_size": None, "train_fraction": 1.0, "backend": "numpy", "update_seconds": 0.04, "row_seconds": 0.5}]}}}


def test_estimates_come_from_the_measured_speeds():
    quad = recipe("morwani-fig7.1").run("quadratic")
    est = estimate_run(quad, "cpu", "numpy", TIMINGS)
    assert est.seconds == pytest.approx(40000 * (0.04 + 0.5 / 100))
    assert "measured at this size" in est.basis and "test machine" in est.basis
    small = RunSpec(label="s", task="modular-addition", sizes={"p": 23, "k": 2, "width": 176}, optimizer="gd",
                    lr=0.1, steps=1000, log_every=10)
    ratio = (23**2 * 176 * 25) / (71**2 * 500 * 73)
    assert step_seconds(small, TIMINGS["devices"]["cpu"]["measurements"][0]) == pytest.approx(
        0.04 * ratio + 0.5 * ratio / 10)
    assert "scaled by the work" in estimate_run(small, "cpu", "numpy", TIMINGS).basis
    gpu = estimate_recipe(recipe("morwani-fig7.1"), "gpu", timings=TIMINGS)
    assert gpu.seconds is None and gpu.text() == "not measured: no GPU has been available to this project"
    parity = estimate_recipe(recipe("morwani-fig7.5"), "cpu", timings=TIMINGS)
    assert parity.seconds is None and "no cpu measurement of a parity run" in parity.text()


# -- the command -------------------------------------------------------------------------------------------------
def test_list_json_names_every_recipe_with_its_estimates(capsys):
    assert main(["reproduce", "--list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in doc["recipes"]]
    assert names == list(RECIPES)
    fig71 = doc["recipes"][0]
    assert all(r["waiting_for"] == {} for r in doc["recipes"])
    assert fig71["estimate_gpu"]["seconds"] is None and "citation" in fig71 and fig71["runs"][0]["steps"] == 40000


@pytest.mark.parametrize("argv, message", [
    (["reproduce"], "name a recipe"),
    (["reproduce", "nosuch"], "no recipe 'nosuch'"),
    (["reproduce", "--list", "morwani-fig7.1"], "--list takes no recipe name"),
    (["reproduce", "morwani-fig7.1", "--scale", "2"], "--scale must be in (0, 1]"),
    (["reproduce", "morwani-fig7.1", "--runs", "cubic", "--scale", "0.01"], "has no run 'cubic'"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path):
    assert main(argv + ["--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def _cogo_outcome(net: PolyNetwork, label: str, seed: int) -> RunOutcome:
    from margintheory.tasks.cogo.analysis import analyze_cogo_network

    spec = RunSpec(label=label, task="cogo", sizes={"d": net.p, "width": net.m}, optimizer="adam", lr=0.01, steps=10)
    return RunOutcome(spec, seed, net, net, [], analyze_cogo_network(net).to_dict(), None, 0.0)  # type: ignore


def test_the_cogo_measures_sort_the_constructions_like_table_2():
    from margintheory.tasks.cogo import constructions as cc
    from margintheory.tasks.cogo.algebra import to_network

    outs = [_cogo_outcome(to_network(cc.build_f46(23, k0=3).z)[0], "d23", 0),
            _cogo_outcome(to_network(cc.build_f4(23).z)[0], "d23", 1)]
    checks = {c.name: c for c in rc.claim_checks(recipe("cogo-table2"), {"d23": outs},
                                                 {"d71": "left out", "d127": "left out"}, decide=True)}
    orders = checks["solutions of order 4 or 6"]
    assert orders.measured == 1.0 and orders.passed and "{4: 21, 6: 1}" in orders.detail
    assert checks["~95% factorable"].measured == 1.0
    matched = checks["~98% match CoGO constructions"]
    assert matched.measured == 1.0 and "z_nu=i * z_xi: 95.5%" in matched.detail
    assert all(c.informational for c in checks.values())  # two runs were left out: nothing is decided
    potentials = rc.claim_checks(recipe("cogo-fig3"), {"d23": outs[1:]}, {}, decide=True)[1]
    assert potentials.passed and potentials.measured < 1e-9
    f6 = _cogo_outcome(to_network(cc.build_f6(7).z)[0], "full", 0)
    fig2 = rc.claim_checks(recipe("cogo-fig2"), {"full": [f6]}, {"no-R*": "left out"}, decide=True)
    assert fig2[0].passed and fig2[0].measured == [6] and not fig2[0].informational and fig2[1].measured is None
    rng = np.random.default_rng(0)
    random = _cogo_outcome(PolyNetwork(rng.normal(size=(40, 2, 23)), rng.normal(size=(40, 23))), "d23", 0)
    assert not rc.claim_checks(recipe("cogo-table2"), {"d23": [random]}, {}, decide=True)[0].passed


def test_the_command_runs_a_chosen_run_of_a_scaled_recipe(tmp_path, capsys):
    argv = ["reproduce", "lambda-sweep", "--scale", "0.01", "--runs", "k2-lambda0.1,k2-lambda0.0001",
            "--no-figures", "--json", "--out", str(tmp_path)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    doc = validate_result(json.loads(captured.out))
    assert {r["run"] for r in doc["details"]["run_summaries"]} == {"k2-lambda0.1", "k2-lambda0.0001"}
    assert any("left out (chosen)" in note for note in doc["notes"]) and doc["verdict"] == "not-applicable"
    assert f"wrote {tmp_path}/lambda-sweep.json" in captured.err
    assert (tmp_path / "lambda-sweep.json").is_file() and not (tmp_path / "figures").exists()


# -- CoGO: the run of the paper's code at Eq. 1's scale ----------------------------------------------------------
def test_cogo_code_parametrization_is_the_codes_run_scaled_by_the_cube_root_of_2d(monkeypatch):
    """The CoGO recipes train Tian's code (Eq. 1 without its 1/(2d), lr 0.01, decay 5e-5, std 1/sqrt(d)) at Eq. 1's
    scale: the trained network must be c = (2d)^(1/3) times the code's, step for step.  The code's run is trained here
    by the same trainer with the output scale 1; a wrong exponent of c in the step, the decay or the start fails."""
    from margintheory.core.problems import CoGO
    from margintheory.reproduce.runs import train_config
    from margintheory.tasks.cogo import training as cogo_training
    from margintheory.tasks.modular_addition.training import sum_network_spec
    from margintheory.training.trainer import train

    d, width, steps = 7, 12, 40
    spec = RunSpec(label="t", task="cogo", sizes={"d": d, "width": width}, optimizer="adam", lr=0.01, steps=steps,
                   lam=5e-5, regularizer="l2", loss="mse", betas=(0.9, 0.999), train_fraction=1.0,
                   parametrization="code", log_every=steps)
    c = (2 * d) ** (1 / 3)
    lr, lam, init = spec.trainer_settings()
    assert (lr, lam, init) == pytest.approx((0.01 * c, 5e-5 / c**2, c / math.sqrt(d)), rel=1e-15)
    ours = train(CoGO(d), train_config(spec, 0, "numpy", "float64")).network
    code_cfg = train_config(RunSpec(**{**spec.__dict__, "parametrization": "eq1"}), 0, "numpy", "float64")
    code_cfg = type(code_cfg)(**{**code_cfg.__dict__, "init_scale": 1 / math.sqrt(d)})
    monkeypatch.setattr(cogo_training.CoGOTraining, "network_spec",
                        lambda self, activation: sum_network_spec(2, d, activation, loss="projected-mse",
                                                                  output_scale=1.0))
    code = train(CoGO(d), code_cfg).network
    assert np.allclose(ours.U, c * code.U, rtol=1e-6, atol=1e-12)
    assert np.allclose(ours.W, c * code.W, rtol=1e-6, atol=1e-12)
    assert not np.allclose(ours.U, code.U, rtol=1e-2)  # the two runs differ by the scale, not by nothing
    with pytest.raises(InputError, match="parametrization"):
        RunSpec(label="x", task="parity", sizes={"n": 4, "k": 2, "width": 4}, optimizer="gd", lr=0.1, steps=1,
                parametrization="code")


def test_the_published_results_name_no_path_of_the_machine_that_ran_them():
    """docs/reproductions/*.json are read by users on other machines: each run directory is relative to the
    repository (benchmarks/out/reproduce/...), never an absolute path of the machine that trained it."""
    from pathlib import Path

    results = sorted((Path(__file__).resolve().parents[1] / "docs" / "reproductions").glob("*.json"))
    assert results
    for path in results:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for run in doc["details"].get("run_summaries", []):
            assert not Path(run["run_dir"]).is_absolute(), (path.name, run["run_dir"])
            assert run["run_dir"].startswith("benchmarks/out/reproduce/"), (path.name, run["run_dir"])


RESULTS = Path(__file__).resolve().parents[1] / "docs" / "reproductions"


def _stored_row(detail: str, measured: float = 0.992) -> dict:
    return {"name": "quadratic: max power ~1 (7.4c)", "expected": 1.0, "measured": measured, "tolerance": None,
            "passed": False, "exactness": "float", "detail": detail, "informational": False, "statement": "old"}


def test_a_stored_neuron_row_is_judged_again_from_its_norm_share():
    """The rows stored before neuron rows were weighed: 4 of 500 neurons below 0.99 holding (to the 9 printed
    decimals) no norm agree; holding 2e-3 of it disagree; the second stored form (single-frequency rows) too."""
    claim = next(c for c in recipe("morwani-fig7.4").claims if c.kind == "max-power-all")
    light = rc.rejudged_row(claim, _stored_row("embedding max power >= 0.99: quadratic seed 0: 496/500 neurons "
                                               "(norm share 1.000000000); lowest max power 0.5762"))
    assert light["passed"] and light["measured"] == 1.0 and light["tolerance"] == 1e-3
    assert "outliers: 4, holding at most 5.0e-10 of the norm; lowest max power 0.5762" in light["detail"]
    assert light["statement"] == f"{claim.statement}. Read as: {claim.reading}"
    heavy = rc.rejudged_row(claim, _stored_row("embedding max power >= 0.99: quadratic seed 0: 496/500 neurons "
                                               "(norm share 0.998000000); lowest max power 0.5762"))
    assert not heavy["passed"] and heavy["measured"] == 0.998 and "holding at most 2.0e-03" in heavy["detail"]
    edge = rc.rejudged_row(claim, _stored_row("quadratic seed 0: 499/500 neurons (norm share 0.999000000)"))
    assert not edge["passed"]  # 0.999 printed: the share may be 0.9989999995, below 1 - 1e-3
    single = next(c for c in recipe("morwani-fig7.1").claims if c.kind == "single-frequency")
    two = rc.rejudged_row(single, _stored_row("quadratic seed 0: norm share 0.990000000, 496/500 neurons; "
                                              "quadratic seed 1: norm share 1.000000000, 500/500 neurons"))
    assert not two["passed"] and two["measured"] == 0.99 and "outliers: 0" in two["detail"]
    untouched = rc.rejudged_row(claim, _stored_row("no count stored"))
    assert (untouched["passed"], untouched["measured"], untouched["detail"]) == (False, 0.992, "no count stored")


def test_the_published_results_are_judged_by_the_current_readings():
    """Re-judging docs/reproductions/*.json (bench_reproduce.py --rejudge) changes nothing: every row states its
    claim's current reading and tolerance, and each verdict is its rows' verdict."""
    from margintheory.core.checks import Check, VerificationResult

    for path in sorted(RESULTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        claims = {c.name: c for c in recipe(doc["parameters"]["recipe"]).claims}
        for row in doc["checks"]:
            assert rc.rejudged_row(claims[row["name"]], row) == row, (path.name, row["name"])
        rows = VerificationResult("", checks=[Check(**row) for row in doc["checks"]],
                                  applicable=doc["verdict"] != "not-applicable")
        assert (rows.verdict, rows.exit_code) == (doc["verdict"], doc["exit_code"]), path.name


def test_the_page_states_the_best_margin_of_fig_7_1_as_its_result_records_it():
    """docs/reproductions.md's "climbs to 0.990 gamma* at step N" is the stored row's best during training."""
    detail = next(c["detail"] for c in json.loads((RESULTS / "morwani-fig7.1.json").read_text(encoding="utf-8"))[
        "checks"] if c["name"] == "margin -> gamma* (Fig. 7.1c)")
    best, step = re.search(r"best during training ([0-9.]+) at step (\d+)", detail).groups()
    page = (RESULTS.parent / "reproductions.md").read_text(encoding="utf-8")
    stated = re.search(r"climbs to `([0-9.]+) gamma\*` at step ([0-9 ]+),", page)
    assert stated is not None and float(stated[1]) == round(float(best), 3)
    assert int(stated[2].replace(" ", "")) == int(step) == 21000
