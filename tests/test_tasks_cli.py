"""``margintheory verify --task ...`` end to end (in-process), JSON shape and one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from margintheory import ModularAddition, verify
from margintheory.cli import main
from margintheory.verification import TASK_NAMES


def _json(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(argv + ["--json"])
    return code, json.loads(capsys.readouterr().out)


def test_task_names() -> None:
    assert {"modular-addition", "parity", "group", "cogo"} <= set(TASK_NAMES)


@pytest.mark.parametrize("argv", [
    ["verify", "--task", "parity", "--n", "10", "--k", "4"],
    ["verify", "--task", "group", "--group", "S4"],
    ["verify", "--task", "group", "--group", "C7"],
    ["verify", "--task", "cogo", "--construction", "F6", "--d", "7"],
])
def test_verified_runs(capsys, argv) -> None:
    code, out = _json(capsys, argv)
    assert code == 0 and out["verdict"] == "verified"
    assert all({"name", "expected", "measured", "passed"} <= set(c) for c in out["checks"])


def test_refuted_cogo_reports_correction(capsys) -> None:
    code, out = _json(capsys, ["verify", "--task", "cogo", "--construction", "F46", "--d", "9"])
    assert code == 1 and out["verdict"] == "refuted"
    assert out["details"]["corrected"]["loss"] < 1e-12 and out["details"]["paper"]["loss"] > 0.1


def test_parity_network_file(tmp_path, capsys) -> None:
    from margintheory.tasks.parity.checks import build_parity_construction

    path = tmp_path / "p.npz"
    build_parity_construction(7, 3).save(path)
    code, out = _json(capsys, ["verify", "--task", "parity", "--network", str(path)])
    assert code == 0 and out["parameters"]["n"] == 7 and out["parameters"]["k"] == 3


@pytest.mark.parametrize("argv", [
    ["verify", "--task", "parity", "--n", "3"],
    ["verify", "--task", "parity", "--n", "3", "--k", "5"],
    ["verify", "--task", "group", "--group", "Q9"],
    ["verify", "--task", "group"],
    ["verify", "--task", "cogo", "--construction", "F6"],
    ["verify", "--task", "cogo", "--construction", "F6", "--d", "1000"],
    ["verify", "--task", "cogo", "--construction", "F6", "--p", "7"],
    ["verify", "--task", "group", "--group", "S3", "--k", "3"],
    ["verify", "--task", "group", "--group", "S3", "--exact"],
    # a budget that refuses the margin pass refuses the run (it used to drop the margin rows and say verified)
    ["verify", "--task", "group", "--group", "S4", "--max-seconds", "0.0001"],
    ["verify", "--task", "group", "--group", "S3", "--max-memory", "1K"],
    ["verify", "--task", "cogo", "--construction", "F6", "--d", "7", "--max-memory", "1K"],
])
def test_bad_input_is_one_line_exit_2(capsys, argv) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("margintheory verify: error:") and "\n" not in err


def test_library_verify_modular_addition_wraps_core() -> None:
    res = verify(ModularAddition(5, 2))
    assert res.verdict == "verified" and res.task == "modular-addition" and res.parameters == {"p": 5, "k": 2}
    assert np.isclose(res.normalized_margin, res.gamma_star, rtol=1e-12)


def test_group_and_cogo_network_files(tmp_path, capsys) -> None:
    from margintheory.core.groups import symmetric_group
    from margintheory.core.representations import real_irreps
    from margintheory.tasks.cogo.algebra import to_network
    from margintheory.tasks.cogo.constructions import build_f6
    from margintheory.tasks.groups import margin as gm

    irreps = real_irreps(symmetric_group(3))
    net = gm.mixture_network(irreps, gm.theorem79_weights(np.array([R.dim for R in irreps])))
    path = tmp_path / "s3.npz"
    net.save(path)
    code, out = _json(capsys, ["verify", "--task", "group", "--group", "S3", "--network", str(path)])
    assert code == 0 and out["verdict"] == "verified"
    assert main(["verify", "--task", "group", "--group", "S4", "--network", str(path)]) == 2
    capsys.readouterr()
    cogo = tmp_path / "f6.npz"
    to_network(build_f6(5).z)[0].save(cogo)
    code, out = _json(capsys, ["verify", "--task", "cogo", "--network", str(cogo)])
    assert code == 0 and out["details"]["loss"] < 1e-12 and out["details"]["core_verdict"] == "verified"


def test_a_cogo_network_is_judged_by_its_loss(tmp_path, capsys):
    """A given CoGO network's claim is zero loss (a global optimizer of Theorem 1's objective): a random zero-mean
    network, for which Theorem 1's identity holds, was 'verified' on that identity alone; the parameters hold only
    what the task reads (verify's --fourier-tol and --min-share defaults were listed)."""
    from margintheory.core.network import PolyNetwork

    r = np.random.default_rng(1)
    U = r.standard_normal((20, 2, 7))
    U -= U.mean(axis=2, keepdims=True)  # zero-mean inputs: Theorem 1 applies
    PolyNetwork(U, r.standard_normal((20, 7))).save(tmp_path / "random.npz")
    code, out = _json(capsys, ["verify", "--task", "cogo", "--network", str(tmp_path / "random.npz")])
    rows = {c["name"]: c for c in out["checks"]}
    assert rows["Thm 1 loss = forward pass"]["passed"] and not rows["loss = 0"]["passed"]
    assert not rows["loss = 0"]["informational"] and out["verdict"] == "refuted" and code == 1
    assert "fourier_tolerance" not in out["parameters"] and "min_share" not in out["parameters"]


def test_even_cyclic_groups_and_narrow_parity_networks_are_not_applicable(tmp_path, capsys):
    """No closed form for an even cyclic group (as verify --p 4 --k 2), and Theorem 7.8 speaks of width >=
    2^(k-1): neither is verified or refuted."""
    from margintheory.tasks.parity.checks import ParityNetwork, build_parity_construction

    code, out = _json(capsys, ["verify", "--task", "group", "--group", "C4"])
    assert out["verdict"] == "not-applicable" and code == 0
    net = build_parity_construction(8, 3)
    ParityNetwork(net.U[:3], net.W[:3], net.S).save(tmp_path / "narrow.npz")
    code, out = _json(capsys, ["verify", "--task", "parity", "--network", str(tmp_path / "narrow.npz")])
    assert out["verdict"] == "not-applicable"
    code, out = _json(capsys, ["verify", "--task", "group", "--group", "S3"])
    irreps_row = {c["name"]: c for c in out["checks"]}["all irreps used (7.9)"]
    assert irreps_row["exactness"] == "float" and irreps_row["tolerance"] > 0  # a float power fraction decides it
