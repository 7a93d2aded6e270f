"""Smaller defects a new user met trying the package, each pinned by a test that fails on the behaviour they saw:

* ``verify group --group C2`` and ``analyze group --group C2``: "internal error" (C2 = S2 has real-type irreps but
  was routed to the exact character table of the symmetric groups without its permutations);
* a network file whose ``U`` is ``(m, p)``, read without a name map as one embedding shared by all inputs, then
  refuted: now refused, saying the shape found and how to ask for a shared embedding;
* ``PYTHONIOENCODING=ascii``: "internal error: UnicodeEncodeError" (``derive``, ``sweep report``);
* ``reproduce --list --scale 0.1`` listed the paper-size estimates;
* docs/failures.md gave ``verify --p 4 --k 2`` as an exit-1 example (it exits 0);
* class weights that total ``1 - 9e-10``: the row named "gamma* <= upper bound" compared ``gamma* x total``;
* ``train`` / ``reproduce`` without a terminal printed nothing for minutes;
* ``analyze`` refused a network without ``--p``/``--k`` where ``verify --network`` infers them;
* the sweep tables said "margin/γ*" and "rel.err";
* ``analyze cogo`` printed "mean errors order 4: nan";
* CoGO's "F46 fixed: Thm 1 loss" had Theorem 1's value as the measurement and the forward pass as the claim;
* "1 in flight were dropped";
* under ``ulimit -v`` the refusal advised raising ``--max-memory``, which cannot help;
* a JSON file (certificate, safetensors header, checkpoint state) with a repeated key was read, the last value winning.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from margintheory.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def _cli(*argv: str, cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "margintheory.cli", *argv], cwd=cwd, env=_env(**env),
                          capture_output=True, text=True, timeout=timeout)


# --- C2 ---

def test_the_group_c2_is_verified_and_analysed_like_s2(tmp_path, capsys):
    from margintheory.core.groups import cyclic_group
    from margintheory.core.representations import real_irreps
    from margintheory.tasks.groups import margin as gm

    assert main(["verify", "group", "--group", "C2", "--json"]) == 0
    c2 = json.loads(capsys.readouterr().out)
    assert main(["verify", "group", "--group", "S2", "--json"]) == 0
    s2 = json.loads(capsys.readouterr().out)
    assert c2["verdict"] == s2["verdict"] == "verified"
    assert math.isclose(c2["normalized_margin"], s2["normalized_margin"], rel_tol=1e-12)
    irreps = real_irreps(cyclic_group(2))
    net = tmp_path / "c2.npz"
    gm.mixture_network(irreps, gm.theorem79_weights(np.array([R.dim for R in irreps]))).save(net)
    assert main(["analyze", "group", str(net), "--group", "C2"]) == 0
    assert "internal error" not in capsys.readouterr().err


# --- a (m, p) U without a name map ---

def test_a_two_dimensional_u_without_a_name_map_is_refused(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "shared.npz"
    np.savez(path, U=rng.normal(size=(6, 5)), W=rng.normal(size=(6, 5)))
    for argv in (["verify", "--network", str(path), "--k", "2"], ["analyze", str(path), "--p", "5", "--k", "2"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "(6, 5)" in err and "name map U=U,W=W and the number of inputs k" in err, err
    # asked for with a name map, the shared embedding is read (and judged)
    assert main(["verify", "--network", str(path), "--k", "2", "--names", "U=U,W=W", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "refuted"


# --- an output that cannot encode Unicode ---

def test_ascii_output_degrades_instead_of_failing(tmp_path):
    from margintheory.execution.executors import InProcessExecutor
    from margintheory.sweep.cells import verify_cell
    from margintheory.sweep.grid import grid_cells
    from margintheory.sweep.runner import run_sweep
    from margintheory.sweep.store import ResultStore

    run_sweep(grid_cells("verify", {"p": [3]}, {"k": 2, "certificate": False}), ResultStore(tmp_path / "store"),
              InProcessExecutor(), verify_cell)
    for argv, word in ((["derive", "cosine-sum"], "2*cos(theta*zeta)"),
                       (["sweep", "report", "store", "--no-figures"], "gamma*")):
        run = _cli(*argv, cwd=tmp_path, PYTHONIOENCODING="ascii")
        assert run.returncode == 0 and "internal error" not in run.stderr, run.stderr
        assert run.stdout.isascii() and word in run.stdout, run.stdout[:500]


def test_the_ascii_spelling_of_what_the_output_prints():
    from margintheory.runtime.process import ascii_spelling

    assert [ascii_spelling(c) for c in "γΓ≤─×é⋅"] == ["gamma", "Gamma", "<=", "-", "x", "e", "*"]
    assert ascii_spelling("\u4e00") == "?"


# --- reproduce --list --scale ---

def test_reproduce_list_applies_the_scale(capsys):
    assert main(["reproduce", "--list", "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main(["reproduce", "--list", "--json", "--scale", "0.1"]) == 0
    scaled = json.loads(capsys.readouterr().out)
    assert scaled["scale"] == 0.1 and full["scale"] == 1.0
    pairs = [(a["estimate_cpu"]["seconds"], b["estimate_cpu"]["seconds"])
             for a, b in zip(full["recipes"], scaled["recipes"], strict=True)]
    assert all(s <= f for f, s in pairs) and any(s < f / 2 for f, s in pairs), pairs
    assert main(["reproduce", "--list", "--scale", "0.1"]) == 0
    assert "--scale 0.1" in capsys.readouterr().out
    assert main(["reproduce", "--list", "--scale", "2"]) == 2


# --- docs/failures.md ---

def test_the_exit_status_examples_of_failures_md_are_what_the_commands_exit(tmp_path, capsys):
    text = (ROOT / "docs" / "failures.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    assert main(["verify", "--p", "4", "--k", "2"]) == 0
    capsys.readouterr()
    assert "`verify --p 4 --k 2` is outside them, and exits 0" in row
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "net.npz", U=rng.normal(size=(8, 2, 5)), W=rng.normal(size=(8, 5)))
    assert "`verify --network net.npz`" in row
    assert main(["verify", "--network", str(tmp_path / "net.npz")]) == 1


# --- class weights that do not total 1 ---

def _uniform_weights(path: Path, total: float, p: int = 5, k: int = 2) -> None:
    from margintheory.engines.margins import input_grid

    x = input_grid(p, k)
    y = x.sum(axis=1) % p
    tau = np.full((p**k, p), 1 / (p - 1))
    tau[np.arange(p**k), y] = 0
    np.savez(path, q=np.full(p**k, total / p**k), tau=tau)


def test_rows_of_weights_that_do_not_total_one_are_named_for_what_they_compare(tmp_path, capsys):
    from margintheory import gamma_star

    _uniform_weights(tmp_path / "short.npz", 1 - 9e-10)
    assert main(["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(tmp_path / "short.npz"),
                 "--json"]) == 0
    rows = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert "gamma* <= upper bound" not in rows
    row = rows["gamma* x sum(w) <= upper bound"]
    upper = float(row["detail"].split("upper ")[1].split()[0])
    assert upper < gamma_star(5, 2)  # the bound of the weights as given is below gamma* itself ...
    bound = float(row["detail"].split("U / total = ")[1].split()[0])
    assert bound >= gamma_star(5, 2)  # ... and the detail gives the bound on gamma*: U / total
    assert "lower bound <= gamma* x sum(w)" in rows


# --- progress without a terminal ---

def test_a_heartbeat_line_comes_every_interval_with_the_latest_status(capsys):
    import time

    from margintheory.runtime.process import Heartbeat

    with Heartbeat("margintheory train", "step 0/10", interval=0.05) as beat:
        beat.update("step 7/10")
        time.sleep(0.3)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2 and all(line.startswith("margintheory train: step 7/10 (") for line in lines), lines
    with Heartbeat("margintheory train", interval=60):  # shorter than the interval: nothing
        pass
    assert capsys.readouterr().err == ""


def test_train_without_a_terminal_prints_progress_lines(tmp_path):
    run = _cli("train", "--p", "5", "--k", "2", "--width", "16", "--steps", "3000", "--out", "run", "--no-figures",
               cwd=tmp_path, MARGINTHEORY_PROGRESS_SECONDS="0.3")
    assert run.returncode == 0, run.stderr
    beats = [line for line in run.stderr.splitlines() if line.startswith("margintheory train: step ")]
    assert beats and "/3000: loss " in beats[-1], run.stderr


# --- analyze infers p and k ---

def test_analyze_infers_p_and_k_from_the_network_as_verify_does(tmp_path, capsys):
    from margintheory.core.construction import build_construction

    build_construction(5, 3).save(tmp_path / "net.npz")
    assert main(["analyze", str(tmp_path / "net.npz"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["parameters"]["p"], doc["parameters"]["k"]) == (5, 3)
    assert main(["analyze", str(tmp_path / "net.npz"), "--p", "7"]) == 2
    assert "p=7" in capsys.readouterr().err


# --- the sweep tables' words ---

def test_sweep_tables_say_gamma_star_and_relative_error(tmp_path, capsys):
    store = str(tmp_path / "store")
    assert main(["sweep", "verify", "--p", "3", "--k", "2", "--no-certificate", "--workers", "0", "--store",
                 store]) == 0
    out = capsys.readouterr().out
    assert main(["sweep", "report", store, "--no-figures"]) == 0
    out += capsys.readouterr().out
    assert "γ" not in out and "rel.err" not in out
    assert out.count("gamma*") == 2 and out.count("relative") == 2 and out.count("error") >= 2


# --- analyze cogo ---

def test_a_mean_over_no_solution_is_none_not_nan():
    from margintheory.tasks.cogo.analysis import factorization_checks

    table = {"solution_orders": {6: 3, 8: 1}, "share_not_order_4_6": 0.25, "share_factorable": 1 / 3,
             "construction_shares": {"z_nu=i * z_xi": math.nan, "other": math.nan},
             "factorization_error_order_4": math.nan, "factorization_error_order_6": math.nan}
    rows = {c.name: c for c in factorization_checks(table, 0.1, 1e-2, 1e-2)}
    detail = rows["factorable (Table 2)"].detail
    assert "nan" not in detail
    assert "order 4: none (no solution of order 4)" in detail
    assert "order 6: none (3 solutions of order 6, none factorable)" in detail
    assert "nan" not in rows["matches a construction"].detail


# --- CoGO: Theorem 1's loss is the claim, the forward pass the measurement ---

def test_the_theorem_1_rows_have_the_claim_as_expected(capsys):
    assert main(["verify", "cogo", "--construction", "F46", "--d", "7", "--json"]) in (0, 1)
    rows = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    for tag in ("F46 fixed", "F46 paper"):
        thm1, loss = rows[f"{tag}: Thm 1 loss"], rows[f"{tag}: loss = 0"]
        assert thm1["measured"] == loss["measured"]  # both the forward pass's loss
        assert thm1["expected"] != loss["measured"]  # Theorem 1's value (rounded differently)


# --- grammar ---

def test_in_flight_dropped_is_singular_for_one():
    from margintheory.sweep.runner import in_flight_dropped

    assert in_flight_dropped(1) == "1 in flight was dropped, its claim released"
    assert in_flight_dropped(2) == "2 in flight were dropped, their claims released"


# --- ulimit -v ---

def test_under_an_address_space_limit_the_refusal_does_not_advise_a_larger_budget(tmp_path):
    from tests.faults.helpers import assert_one_line_error, run_cli

    # (the SOS upper end at k = 9 needs more than the address space allows; the default AM-GM end needs no solver)
    run = run_cli("verify", "--p", "5", "--k", "9", "--method", "sos", cwd=tmp_path, memory=1536 * 2**20, timeout=120)
    line = assert_one_line_error(run, contains=("address-space limit", "a larger memory budget cannot help"))
    assert "; raise --max-memory" not in line


# --- duplicate JSON keys ---

def test_a_repeated_json_key_is_refused_in_every_file_read(tmp_path, capsys):
    from margintheory.core.network import PolyNetwork
    from margintheory.runtime import strict_json

    assert strict_json.loads('{"a": 1, "b": {"c": 2}}') == {"a": 1, "b": {"c": 2}}
    with pytest.raises(strict_json.DuplicateKeyError, match="'c'"):
        strict_json.loads('{"a": 1, "b": {"c": 2, "c": 3}}')
    # a certificate
    assert main(["verify", "--p", "5", "--k", "2", "--certificate", str(tmp_path / "cert.json")]) == 0
    capsys.readouterr()
    text = (tmp_path / "cert.json").read_text()
    assert text.count('"k":2,') >= 1
    (tmp_path / "dup.json").write_text(text.replace('"k":2,', '"k":3,"k":2,', 1))
    assert main(["check", str(tmp_path / "dup.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "duplicate key 'k'" in err, err
    # a safetensors header (network files, class weights)
    U, W = np.ones((2, 2, 3)), np.ones((2, 3))
    header = (b'{"U": {"dtype": "F64", "shape": [2, 2, 3], "data_offsets": [0, 96]}, '
              b'"W": {"dtype": "F64", "shape": [2, 3], "data_offsets": [96, 144]}, '
              b'"W": {"dtype": "F64", "shape": [2, 3], "data_offsets": [0, 48]}}')
    header += b" " * (-len(header) % 8)
    path = tmp_path / "dup.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + U.tobytes() + W.tobytes())
    with pytest.raises(ValueError, match="duplicate key 'W'"):
        PolyNetwork.load(path)
    # a training checkpoint's state
    from margintheory.training.checkpoint import checkpoint_progress

    np.savez(tmp_path / "ckpt.npz", U=U, W=W, state_json=np.array('{"step": 3, "step": 9, "config": {"steps": 9}}'))
    from margintheory.errors import InputError

    with pytest.raises(InputError, match="duplicate key 'step'"):
        checkpoint_progress(tmp_path / "ckpt.npz")
