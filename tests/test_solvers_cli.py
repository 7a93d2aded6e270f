"""``margintheory solve``: JSON shape, saved networks, failure paths (exit 2, one line, no traceback)."""

from __future__ import annotations

import json

import pytest

from margintheory.cli import main
from margintheory.core.network import PolyNetwork
from margintheory.core.theory import gamma_star

REQUIRED = ("verdict", "checks", "gamma_star", "normalized_margin", "width")
REQUIRED_DETAILS = ("lower_bound", "upper_bound", "upper_bound_certified", "relative_gap", "rounds", "solver")


def _run_json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_single_neuron_json_and_saved_maximiser(capsys, tmp_path):
    path = tmp_path / "neuron.npz"
    code, data = _run_json(capsys, ["solve", "--p", "3", "--k", "3", "--single-neuron", "--json", "--out", str(path)])
    assert code == 0 and data["verdict"] == "verified"
    assert all(key in data for key in REQUIRED) and all(key in data["details"] for key in REQUIRED_DETAILS)
    det = data["details"]
    assert det["upper_bound_certified"] is True and data["normalized_margin"] == det["lower_bound"]
    assert det["lower_bound"] <= gamma_star(3, 3) * (1 + 1e-12) <= det["upper_bound"] * (1 + 1e-12)
    assert set(det["solver"]) >= {"name", "status", "time"}
    net = PolyNetwork.load(path)
    assert net.m == 1 and net.k == 3 and net.p == 3


def test_network_json_with_max_width_and_verify_roundtrip(capsys, tmp_path):
    path = tmp_path / "net.npz"
    code, data = _run_json(capsys, ["solve", "--p", "3", "--k", "2", "--json", "--min-width", "--search", "--out",
                                    str(path)])
    assert code == 0 and data["verdict"] == "verified"
    det = data["details"]
    assert det["rounds"] >= 1 and data["width"] == 6 == det["width_per_frequency"] * 1  # --search: the LP first
    assert data["width"] < det["theorem_width"] == 8 and det["family"] == "cyclic-lattice"
    assert det["width_lower_bound_exactness"] is None  # p = 3 <= 2k: frequencies alias, the bound does not apply
    assert PolyNetwork.load(path).m == data["width"]
    code = main(["verify", "--network", str(path), "--p", "3", "--k", "2", "--json", "--rtol", "1e-6"])
    verify = json.loads(capsys.readouterr().out)
    assert "verdict" in verify


@pytest.mark.parametrize("argv, message", [
    (["solve", "--p", "2", "--k", "2"], "p must be"),
    (["solve", "--p", "5", "--k", "0"], "k must be"),
    (["solve", "--p", "5", "--k", "2", "--time-limit", "-1"], "time-limit"),
    (["solve", "--p", "5", "--k", "2", "--single-neuron", "--max-width", "3"], "--max-width"),
    # options the chosen method does not use are refused, not ignored
    (["solve", "--p", "7", "--k", "3", "--min-width", "--sdp-solver", "SCS"], "--sdp-solver does not apply"),
    (["solve", "--p", "7", "--k", "3", "--min-width", "--pricing", "fourier"], "--pricing does not apply"),
    (["solve", "--p", "7", "--k", "3", "--min-width", "--seed", "0"], "--seed does not apply"),
    (["solve", "--p", "5", "--k", "2", "--single-neuron", "--pricing", "sos"], "--pricing does not apply"),
    (["sweep", "solve", "--p", "7", "--k", "3", "--method", "min-width", "--pricing", "sos"], "--pricing does not"),
    (["sweep", "solve", "--p", "7", "--k", "3", "--method", "min-width", "--seeds", "0,1"], "--seeds does not"),
])
def test_bad_input_exit_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_solver_missing_exit_2(capsys, monkeypatch):
    import cvxpy as cp

    monkeypatch.setattr(cp, "installed_solvers", lambda: ["CLARABEL"])
    assert main(["solve", "--p", "3", "--k", "2", "--single-neuron", "--json", "--sdp-solver", "SCS"]) == 2
    assert "not installed" in capsys.readouterr().err


def test_time_limit_exit_2(capsys):
    assert main(["solve", "--p", "7", "--k", "2", "--time-limit", "0.01", "--json"]) == 2
    assert "time" in capsys.readouterr().err


def test_max_width_caps_the_network(capsys, tmp_path):
    path = tmp_path / "small.npz"
    code, data = _run_json(capsys, ["solve", "--p", "3", "--k", "2", "--json", "--max-width", "4", "--out", str(path)])
    assert data["width"] <= 4 and PolyNetwork.load(path).m == data["width"]
    width_check = [c for c in data["checks"] if c["name"] == "width <= 4"]
    assert width_check and width_check[0]["passed"]
    # 4 neurons pruned from the family do not reach gamma*(3, 2): reported (informational), not a refutation --
    # backward elimination is a heuristic (and at p = 3 <= 2k no width lower bound applies)
    shortfall = [c for c in data["checks"] if c["name"] == "pruned margin = gamma*"]
    assert shortfall and shortfall[0]["informational"] and not shortfall[0]["passed"]
    assert data["details"]["lower_bound"] < gamma_star(3, 2) and code == 0 and data["verdict"] == "verified"
    assert any("reported, not judged" in note for note in data["notes"])


def test_column_generation_network_saved_as_safetensors_verifies_at_the_lp_accuracy(capsys, tmp_path):
    """The advice of docs/commands.md for solve --out without --min-width: the LP's network verifies at
    --rtol 1e-8."""
    path = tmp_path / "cg.safetensors"
    assert main(["solve", "--p", "5", "--k", "2", "--out", str(path)]) == 0
    capsys.readouterr()
    net = PolyNetwork.load(path)
    assert net.k == 2 and net.p == 5
    assert main(["verify", "--network", str(path), "--rtol", "1e-8"]) == 0
    assert "verdict: verified" in capsys.readouterr().out


def test_min_width_json_states_one_gap_and_names_the_width_bound(capsys):
    """One relative gap (the certificate's), and the width lower bound's fields say they are about the width, not
    about the margin's lower bound ``lower_bound``."""
    assert main(["solve", "--p", "7", "--k", "3", "--min-width", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["details"]["relative_gap"] == doc["certificate"]["relative_gap"]
    assert doc["details"]["width_lower_bound_exactness"] == "proved" and doc["details"]["lower_bound_width"] == 48
    assert "lower_bound_exactness" not in doc["details"]
