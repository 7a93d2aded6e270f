"""One result schema for every task and command: the shipped JSON Schema, the ``--json`` outputs, the library API."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import margintheory
from margintheory.cli import main
from margintheory.presentation.schema import result_schema, schema_text, validate_result

ROOT = Path(__file__).resolve().parents[1]
COMMON = {"task", "title", "parameters", "gamma_star", "gamma_star_note", "normalized_margin", "ratio_to_gamma_star",
          "relative_error", "width", "verdict", "exit_code", "checks", "seconds", "version", "notes", "details"}


def _json(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(argv + ["--json"])
    return code, json.loads(capsys.readouterr().out)


def test_schema_is_a_valid_draft_2020_12_schema():
    schema = result_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["required"]) == COMMON
    assert schema["$defs"]["exactness"]["enum"] == ["proved", "certified", "float", "argued"]


def test_schema_command_prints_the_installed_file(capsys):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(schema_text())


def test_schema_file_is_package_data():
    """A non-editable ``pip install .`` ships only declared package data: the schema must be declared."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = conf["tool"]["setuptools"]["package-data"]["margintheory.presentation"]
    assert "result.schema.json" in data and (ROOT / "margintheory" / "presentation" / "result.schema.json").is_file()
    assert any(dep.startswith("jsonschema") for dep in conf["project"]["dependencies"])


def _network_files(tmp_path: Path) -> dict[str, Path]:
    from margintheory.core.construction import build_construction
    from margintheory.core.groups import symmetric_group
    from margintheory.core.network import PolyNetwork
    from margintheory.core.representations import real_irreps
    from margintheory.tasks.groups import margin as gm
    from margintheory.tasks.parity.checks import build_parity_construction

    files = {name: tmp_path / f"{name}.npz" for name in ("modular", "random", "parity", "group")}
    build_construction(5, 2).save(files["modular"])
    rng = np.random.default_rng(1)
    PolyNetwork(rng.normal(size=(8, 2, 5)), rng.normal(size=(8, 5))).save(files["random"])
    build_parity_construction(5, 3).save(files["parity"])
    irreps = real_irreps(symmetric_group(3))
    gm.mixture_network(irreps, gm.theorem79_weights(np.array([R.dim for R in irreps]))).save(files["group"])
    return files


# every command that decides a verdict, every task, float / exact / network, applicable or not
RUNS = [
    (["verify", "--p", "5", "--k", "2"], 0, {"p": 5, "k": 2}),
    (["verify", "--p", "5", "--k", "2", "--exact"], 0, {"p": 5, "k": 2, "exact": True}),
    (["verify", "--p", "6", "--k", "2"], None, {"p": 6, "k": 2}),
    (["verify", "--network", "{modular}"], 0, {"p": 5, "k": 2}),
    (["verify", "--network", "{random}", "--rtol", "0.5"], 1, {"p": 5, "k": 2, "rtol": 0.5}),
    (["verify", "--task", "parity", "--n", "5", "--k", "3"], 0, {"n": 5, "k": 3}),
    (["verify", "--task", "parity", "--network", "{parity}"], 0, {"n": 5, "k": 3}),
    (["verify", "--task", "group", "--group", "S3"], 0, {"group": "S3", "order": 6}),
    (["verify", "--task", "group", "--group", "S3", "--network", "{group}"], 0, {"group": "S3"}),
    (["verify", "--task", "group", "--group", "C5"], 0, {"group": "C5"}),
    (["verify", "--task", "group", "--group", "C4"], 0, {"group": "C4"}),
    (["verify", "--task", "cogo", "--construction", "F6", "--d", "5"], 0, {"d": 5, "construction": "F6"}),
    (["verify", "--p", "5", "--k", "3", "--family", "parity-design", "--no-certificate"], 0,
     {"p": 5, "k": 3, "family": "parity-design"}),
    # Lemma C.18's network is max-margin for modular addition but not a zero-loss optimum of CoGO's objective
    (["verify", "--task", "cogo", "--d", "5", "--network", "{modular}"], 1, {"d": 5}),
    (["solve", "--p", "3", "--k", "2", "--single-neuron"], 0, {"p": 3, "k": 2, "method": "single-neuron"}),
    (["solve", "--p", "3", "--k", "2"], 0, {"p": 3, "k": 2}),
    (["solve", "--p", "5", "--k", "2", "--min-width"], 0, {"p": 5, "k": 2}),
    (["analyze", "{modular}", "--p", "5", "--k", "2", "--no-construction"], 0, {"p": 5, "k": 2}),
]


@pytest.mark.parametrize("argv,code,params", RUNS, ids=[" ".join(r[0][:4]) for r in RUNS])
def test_every_json_output_validates(capsys, tmp_path, argv, code, params):
    files = _network_files(tmp_path)
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    got, out = _json(capsys, argv)
    validate_result(out)  # (the autouse fixture validated the in-process object too)
    assert set(out) - {"certificate"} == COMMON
    assert code is None or got == code
    assert out["exit_code"] == got and out["version"] == margintheory.__version__
    assert params.items() <= out["parameters"].items()
    assert out["task"] in margintheory.verification.TASK_NAMES and out["seconds"] > 0
    no_closed_form = " ".join(argv).startswith("verify --p 6") or "C4" in argv  # even p; C4: even, complex irreps
    assert (out["gamma_star"] is None) == no_closed_form, out["gamma_star_note"]
    if out["gamma_star"] is not None and out["normalized_margin"] is not None:
        ratio = out["normalized_margin"] / out["gamma_star"]
        assert out["ratio_to_gamma_star"] == pytest.approx(ratio, rel=1e-12)
        assert out["relative_error"] == pytest.approx(abs(ratio - 1), abs=1e-15)
    else:
        assert out["ratio_to_gamma_star"] is None
    assert out["gamma_star_note"]


def test_the_schema_rejects_what_it_should(capsys):
    _, good = _json(capsys, ["verify", "--p", "3", "--k", "1"])
    validate_result(good)
    bad_cases = []
    d = copy.deepcopy(good)
    d["checks"][0]["exactness"] = "exact"  # the old label
    bad_cases.append(d)
    d = copy.deepcopy(good)
    d["gamma_star"], d["gamma_star_note"] = None, ""  # null without a reason
    bad_cases.append(d)
    d = copy.deepcopy(good)
    d["p"] = 3  # task-specific values belong under details
    bad_cases.append(d)
    d = copy.deepcopy(good)
    d["verdict"], d["exit_code"] = "refuted", 0
    bad_cases.append(d)
    d = copy.deepcopy(good)
    d["checks"][0].update(exactness="argued", detail="")  # an argument without its reason
    bad_cases.append(d)
    for case in bad_cases:
        with pytest.raises(jsonschema.ValidationError):
            validate_result(case)


def test_certificate_object():
    result = margintheory.verify(margintheory.ModularAddition(3, 1))
    result.certificate = {"lower": 0.25, "upper": 0.25, "relative_gap": 0.0, "lower_exactness": "proved",
                          "upper_exactness": "proved", "lower_exact": "1/4", "upper_exact": "1/4",
                          "lower_method": "fourier", "lower_how": "from the phase moments",
                          "steps": [{"name": "weak duality", "value": "1/4"}]}
    assert validate_result(result)["certificate"]["upper_exact"] == "1/4"
    result.certificate["lower_exact"] = "0.25"  # not a rational a/b
    with pytest.raises(jsonschema.ValidationError):
        validate_result(result)
    del result.certificate["steps"]
    with pytest.raises(jsonschema.ValidationError):
        validate_result(result)
    result.certificate.update(lower_exact="1/4", steps=[], lower_method="guessed")  # only fourier / exhaustive
    with pytest.raises(jsonschema.ValidationError):
        validate_result(result)


def test_schema_subcommand_as_a_process():
    proc = subprocess.run([sys.executable, "-m", "margintheory.cli", "schema"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and json.loads(proc.stdout)["title"] == "margintheory result"
