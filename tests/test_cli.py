"""The ``margintheory`` command tested as an installed console script in a subprocess."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from margintheory.cli import COMMANDS, available_commands
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.presentation.schema import validate_result

EXE = shutil.which("margintheory")
REQUIRED_JSON_KEYS = {
    "task", "parameters", "gamma_star", "gamma_star_note", "normalized_margin", "ratio_to_gamma_star",
    "relative_error", "width", "verdict", "exit_code", "checks", "seconds", "version", "notes", "details",
}
REQUIRED_DETAILS = {"gamma_star_exact", "all_on_margin", "wrong_logits_equal", "neurons_in_optimal_set",
                    "frequencies_covered"}


def run(*args, timeout=300):
    assert EXE is not None, "the console script 'margintheory' is not installed (pip install -e .)"
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout)


def assert_clean_error(proc, code=2):
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert proc.stderr.strip(), "an error must say what is wrong"


def test_every_command_is_installed():
    assert available_commands() == list(COMMANDS)


def test_verify_json_p7_k3():
    proc = run("verify", "--p", "7", "--k", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    out = validate_result(json.loads(proc.stdout))  # a separate process's output against the installed schema
    assert REQUIRED_JSON_KEYS <= set(out) and REQUIRED_DETAILS <= set(out["details"])
    assert out["verdict"] == "verified" and out["exit_code"] == 0 and out["parameters"] == {"p": 7, "k": 3}
    assert out["relative_error"] < 1e-10
    assert out["width"] == 96 and out["details"]["frequencies_covered"] == [1, 2, 3]
    assert out["details"]["gamma_star_exact"] == "1/224"
    for check in out["checks"]:
        assert {"name", "expected", "measured", "tolerance", "passed"} <= set(check)


def test_verify_human_table():
    proc = run("verify", "--p", "5", "--k", "2")
    assert proc.returncode == 0, proc.stderr
    for word in ("claim", "expected", "measured", "tol", "normalized margin", "verdict: verified"):
        assert word in proc.stdout


def test_verify_composite_and_even():
    proc = run("verify", "--p", "9", "--k", "2", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["verdict"] == "verified" and out["details"]["hypothesis"] == "odd-composite"
    assert any("not prime" in n for n in out["notes"])
    proc = run("verify", "--p", "6", "--k", "2", "--json")
    out = validate_result(json.loads(proc.stdout))
    assert out["verdict"] == "not-applicable" and out["normalized_margin"] > 0
    assert out["gamma_star"] is None and "even" in out["gamma_star_note"] and out["ratio_to_gamma_star"] is None


def test_verify_network_file(tmp_path):
    good = tmp_path / "good.npz"
    build_construction(5, 2).save(good)
    assert run("verify", "--network", str(good), "--json").returncode == 0
    rng = np.random.default_rng(0)
    rand = tmp_path / "random.npz"
    PolyNetwork(rng.normal(size=(16, 2, 5)), rng.normal(size=(16, 5))).save(rand)
    proc = run("verify", "--network", str(rand), "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["verdict"] == "refuted"


@pytest.mark.parametrize(
    "args",
    [
        ("verify", "--p", "2", "--k", "2"),
        ("verify", "--p", "7.5", "--k", "3"),
        ("verify", "--p", "seven", "--k", "3"),
        ("verify", "--p", "7", "--k", "0"),
        ("verify", "--k", "3"),
        ("verify", "--p", "7", "--k", "3", "--max-memory", "1K"),
        ("verify", "--p", "97", "--k", "5", "--exhaustive"),
        ("verify", "--p", "7", "--k", "3", "--max-memory", "lots"),
        ("verify", "--p", "7", "--k", "3", "--rtol", "5"),
        ("nonsense",),
    ],
)
def test_bad_arguments_exit_2_without_traceback(args, capfd):
    """In this process (the console script's own start-up is exercised by the other tests here and in
    ``tests/faults``): exit code 2 and one line on stderr, whether argparse or the command refuses."""
    from margintheory.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's own exit, as the console script would end
        code = exc.code
    out, err = capfd.readouterr()
    assert_clean_error(subprocess.CompletedProcess(args, code, out, err))
    assert err.count("\n") == 1, err


def test_bad_network_files(tmp_path):
    text = tmp_path / "x.npz"
    text.write_text("garbage")
    assert_clean_error(run("verify", "--network", str(text)))
    nan = tmp_path / "nan.npz"
    np.savez(nan, U=np.full((1, 2, 5), np.nan), W=np.zeros((1, 5)))
    assert_clean_error(run("verify", "--network", str(nan)))
    shape = tmp_path / "shape.npz"
    np.savez(shape, U=np.zeros((2, 2, 5)), W=np.zeros((2, 4)))
    assert_clean_error(run("verify", "--network", str(shape)))
    good = tmp_path / "good.npz"
    build_construction(5, 2).save(good)
    truncated = tmp_path / "trunc.npz"
    truncated.write_bytes(good.read_bytes()[:100])
    assert_clean_error(run("verify", "--network", str(truncated)))
    assert_clean_error(run("verify", "--network", str(good), "--p", "7"))
    assert_clean_error(run("verify", "--network", str(tmp_path / "missing.npz")))
    zero = tmp_path / "zero.npz"
    np.savez(zero, U=np.zeros((4, 2, 5)), W=np.zeros((4, 5)))
    for command in (("verify", "--network", str(zero)), ("analyze", str(zero), "--p", "5", "--k", "2")):
        proc = run(*command)
        assert_clean_error(proc)
        assert f"{zero}: the zero network" in proc.stderr  # the line names the file


def test_report_keeps_square_brackets():
    import io

    from rich.console import Console

    from margintheory.core.checks import Check, VerificationResult
    from margintheory.presentation.report import render_text

    result = VerificationResult("t", [Check(name="E_q*[g] >= 0", expected="[1, 2]", measured=0.5, tolerance=None,
                                            passed=False, detail="a [b] c")],
                                notes=["note [x]"])
    buf = io.StringIO()
    render_text(result, Console(file=buf, width=200))
    text = buf.getvalue()
    assert "E_q*[g] >= 0" in text and "a [b] c" in text and "note [x]" in text


def test_the_family_choices_are_the_families():
    from margintheory.commands._options import FAMILY_CHOICES
    from margintheory.core.phase_measures import FAMILIES

    assert FAMILY_CHOICES == FAMILIES


@pytest.mark.parametrize("path", [(), ("--exhaustive", "--no-certificate")], ids=["compact", "exhaustive"])
def test_min_share_that_leaves_no_neuron_is_refused(path, tmp_path, capfd):
    """Every neuron of the k = 2 construction has norm share 1/m: ``--min-share`` at that share leaves none to check
    (refused, exit 2, one line naming the flag), just below it checks them all."""
    from margintheory.cli import main

    net = build_construction(5, 2)
    good = tmp_path / "good.npz"
    net.save(good)
    share = 1 / net.m
    assert main(["verify", "--network", str(good), "--min-share", f"{share:.12f}", *path]) == 2
    out, err = capfd.readouterr()
    assert_clean_error(subprocess.CompletedProcess([], 2, out, err))
    assert "min_share" in err and "leaves out every neuron" in err
    assert main(["verify", "--network", str(good), "--min-share", f"{share * 0.999:.12f}", "--json", *path]) == 0
    out, _ = capfd.readouterr()
    assert json.loads(out)["details"]["neurons_checked"] == net.m


def test_rtol_on_an_exact_margin_is_reported_unused(capfd):
    """An exact margin is compared with gamma* exactly, so --rtol loosens nothing and the result says so; the
    exhaustive engine's float margin does use it (no such note)."""
    from margintheory.cli import main

    note = "--rtol 0.001 not used"
    assert main(["verify", "--p", "5", "--k", "2", "--rtol", "1e-3", "--json", "--no-certificate"]) == 0
    assert any(n.startswith(note) for n in json.loads(capfd.readouterr().out)["notes"])
    assert main(["verify", "--p", "5", "--k", "2", "--rtol", "1e-3", "--json", "--no-certificate",
                 "--exhaustive"]) == 0
    assert not any(n.startswith(note) for n in json.loads(capfd.readouterr().out)["notes"])


@pytest.mark.parametrize("argv,prefix", [
    (["verify", "--p", "7", "--k", "3", "--bogus"], "margintheory verify: error: unrecognized arguments: --bogus"),
    (["sweep", "verify", "--p", "3", "--k", "2", "--bogus", "x"],
     "margintheory sweep verify: error: unrecognized arguments: --bogus x"),
])
def test_an_unknown_flag_is_reported_by_its_command(argv, prefix, capfd):
    from margintheory.cli import main

    assert main(argv) == 2
    err = capfd.readouterr().err
    assert err.startswith(prefix) and err.count("\n") == 1, err


def test_every_budget_a_run_exceeds_is_named_at_once(capfd):
    """verify --p 7 --k 9 --family smallest-known exceeds the time limit (compact check) and the memory budget
    (certificate leg): one line names both, so raising the first does not just lead to the second refusal."""
    from margintheory.cli import main

    assert main(["verify", "--p", "7", "--k", "9", "--family", "smallest-known", "--method", "sos"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "--max-seconds" in err and "; and the block SOS relaxation" in err
    assert err.rstrip().endswith("raise --max-memory")


def test_a_certificate_beyond_the_machine_points_to_no_certificate(capfd):
    """At k = 10 the SOS upper bound needs about 97 GiB: no budget helps, doing without it does (the default AM-GM
    upper end needs no solver)."""
    from margintheory.cli import main

    assert main(["verify", "--p", "3", "--k", "10", "--method", "sos"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "k = 10" in err and err.rstrip().endswith("pass --no-certificate to verify "
                                                                               "without it"), err
