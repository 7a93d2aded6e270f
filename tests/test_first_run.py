"""What a new user trips over when following the README: analyze on the trainer's checkpoint and on a float-optimal
network, the gap row's stated tolerance, per-task help of ``verify``, ``derive --json`` in the result schema."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from margintheory.cli import main
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.presentation.schema import validate_result
from margintheory.training.analysis import TRAINED_NETWORK_RTOL, analyze_network
from margintheory.training.trainer import TrainConfig, train


@pytest.mark.parametrize("optimizer,backend", [("adam", "numpy"), ("gd", "numpy"), ("adamw", "jax"), ("gd", "jax")])
def test_analyze_reads_the_trainers_checkpoint_and_nothing_else_extra(tmp_path, capsys, optimizer, backend):
    """Both trainers' checkpoints: numpy's moments ``opt__m_U``, ..., and optax's state by tree path
    (``opt__0.mu.U``, scalar ``opt__0.count``, ...), which analyze once refused as unexpected tensors."""
    ck = tmp_path / "checkpoint.npz"
    run = train(TrainConfig(p=5, k=2, width=8, steps=4, optimizer=optimizer, backend=backend), checkpoint=ck)
    net = PolyNetwork.load(ck)
    assert np.array_equal(net.U, run.network.U) and np.array_equal(net.W, run.network.W)
    assert main(["analyze", str(ck), "--p", "5", "--k", "2", "--json", "--no-construction"]) in (0, 1)
    validate_result(json.loads(capsys.readouterr().out))
    arrays = dict(np.load(ck))
    for name, extra in [("extra", np.zeros(3)), ("opt__m_U", np.zeros(3)), ("opt__z_U", arrays["U"]),
                        ("opt__0.mu.U", arrays["W"]), ("opt__0.mu.Z", arrays["U"]), ("opt__count", np.int32(4))]:
        bad = tmp_path / f"bad_{name}.npz"
        np.savez(bad, **{**arrays, name: extra})  # not the trainer's format: refused, not silently skipped
        assert main(["analyze", str(bad), "--p", "5", "--k", "2"]) == 2
        err = capsys.readouterr().err
        assert "unexpected tensors" in err and len(err.strip().splitlines()) == 1


def test_analyze_accepts_a_float_optimal_network_at_its_stated_default_tolerance():
    """A network within ~1e-9 of the max margin (as trained networks are) is verified by analyze's default, with the
    tolerance stated in the row and the note; at rtol 0 (verify's float64 error bound) it is refuted."""
    net = build_construction(7, 2)
    rng = np.random.default_rng(0)
    near = PolyNetwork(net.U * (1 + 1e-9 * rng.standard_normal(net.U.shape)), net.W)
    default = analyze_network(near, 7, 2, compare_construction=False)
    strict = analyze_network(near, 7, 2, rtol=0, compare_construction=False)
    row = next(c for c in default.checks if c.name == "margin = gamma* (C.22)")
    assert 1e-12 < 1 - default.fields["ratio_to_gamma_star"] < TRAINED_NETWORK_RTOL
    assert default.verdict == "verified" and row.tolerance == pytest.approx(TRAINED_NETWORK_RTOL)
    assert "relative tolerance 1e-06" in " ".join(default.notes) and "1 - " in " ".join(default.notes)
    assert strict.verdict == "refuted"


def test_gap_row_states_the_tolerance_it_applies():
    from margintheory.certificate.maxmin import GAP_TOL, LowerBound, maxmin_checks
    from margintheory.certificate.upper_bound import floor_float, prove_upper_bound
    from margintheory.core.theory import gamma_star_exact

    ub = prove_upper_bound(5, 2)
    g = float(gamma_star_exact(5, 2))
    for err in (0.0, 1e-13 * g, 2e-9 * g):
        L = LowerBound(floor_float(Fraction(g) - Fraction(err)), None, "float", "test", err)
        row = next(r for r in maxmin_checks(ub, L, gamma_star_exact(5, 2), True, None)
                   if r.name == "network margin = optimum")
        slack = err / L.value
        assert row.tolerance == GAP_TOL + slack
        if err:
            assert f"{GAP_TOL:g} + {slack:.3g} = {GAP_TOL + slack:.6g}" in row.statement
        else:
            assert row.statement.endswith(f"<= {GAP_TOL:g}")
    exact = LowerBound(floor_float(Fraction(g)), sp.sqrt(sp.Rational(2, 27)) / (sp.sqrt(5) * 4), "proved", "exact")
    row = next(r for r in maxmin_checks(ub, exact, gamma_star_exact(5, 2), True, None)
               if r.name == "network margin = optimum")
    assert row.tolerance == GAP_TOL and row.exactness == "proved" and "decided exactly" in row.statement


@pytest.mark.parametrize("argv,shown,hidden", [
    (["verify", "parity", "--help"], ["--n", "--k", "--rtol", "--network"], ["--group", "--construction", "--p ",
                                                                               "--certificate", "--d "]),
    (["verify", "--task", "cogo", "-h"], ["--construction", "--d", "--nu", "--names"], ["--n ", "--p ", "--exact"]),
    (["verify", "group", "--help"], ["--group", "--names"], ["--n ", "--construction", "--family"]),
    (["verify", "modular-addition", "--help"], ["--p", "--exact", "--certificate", "--fourier-tol"],
     ["--n ", "--group", "--construction"]),
])
def test_verify_task_help_lists_only_that_tasks_options(capsys, argv, shown, hidden):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: margintheory verify {argv[-2] if argv[1] == '--task' else argv[1]}")
    assert all(flag in out for flag in shown) and not any(flag in out for flag in hidden), out


def test_verify_full_help_groups_options_by_task_and_both_spellings_run(capsys):
    assert main(["verify", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.index("verify parity --help:") < out.index("\n  --n N") < out.index("verify group --help:")
    for argv in (["verify", "parity", "--n", "5", "--k", "3", "--json"],
                 ["verify", "--task", "parity", "--n", "5", "--k", "3", "--json"]):
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["task"] == "parity"
    assert main(["verify", "parity", "--task", "group"]) == 2
    assert "given twice" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["gamma-star"], ["identity", "--k", "3"]])
def test_derive_json_is_in_the_result_schema(capsys, argv):
    assert main(["derive", *argv, "--json"]) == 0
    doc = validate_result(json.loads(capsys.readouterr().out))
    assert doc["task"] == "derive" and doc["parameters"]["topic"] == argv[0] and doc["verdict"] == "verified"
    assert len(doc["checks"]) == len(doc["details"]["steps"]) >= 3
    for check, step in zip(doc["checks"], doc["details"]["steps"], strict=True):
        assert check["exactness"] == step["check"]["kind"] and check["informational"] == (step["check"]["kind"] ==
                                                                                          "argued")


def test_derive_json_maps_a_failed_or_argued_step_honestly():
    from margintheory.symbolic.derivation import Derivation, derivation_result

    x = sp.Symbol("x")
    d = Derivation("test")
    d.exact(sp.Eq(x + x, 2 * x, evaluate=False), "algebra", "Lemma T.1")
    d.numeric(sp.Eq(x, x, evaluate=False), "numbers", "Lemma T.2", max_error=lambda: 1e-3, tolerance=1e-9,
              method="sampled")
    d.assumed(sp.Eq(x, x, evaluate=False), "argument", "Lemma T.3", reason="by the paper's proof")
    res = derivation_result(d, topic="test", parameters={})
    failed, argued = res.checks[1], res.checks[2]
    assert not failed.passed and failed.exactness == "float" and failed.measured == 1e-3 and failed.tolerance == 1e-9
    assert argued.informational and argued.exactness == "argued" and "by the paper's proof" in argued.detail
    assert res.verdict == "refuted" and res.exit_code == 1
    validate_result(res.to_dict())
