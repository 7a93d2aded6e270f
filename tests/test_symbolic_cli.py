"""``margintheory derive`` and ``verify --exact`` through the CLI entry point."""

import json

import pytest

from margintheory.cli import main


@pytest.mark.parametrize("argv", [["derive", "gamma-star", "--format", "latex"],
                                  ["derive", "gamma-star", "--k", "2", "--p", "5", "--format", "markdown"],
                                  ["derive", "identity", "--k", "4"], ["derive", "expansion", "--k", "3"],
                                  ["derive", "fourier", "--k", "2", "--p", "3"], ["derive", "cosine-sum"]])
def test_derive_ok(argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "0 failed (all checks passed)" in out


def test_gamma_star_latex_labels_every_step(capsys):
    assert main(["derive", "gamma-star", "--format", "latex"]) == 0
    out = capsys.readouterr().out
    items = out.count(r"\item ")
    labels = sum(out.count(f"check: {kind}") for kind in ("proved", "float", "argued"))
    assert items == labels > 10 and r"\section*" in out


@pytest.mark.parametrize("argv", [["derive", "identity"], ["derive", "fourier", "--k", "2"],
                                  ["derive", "fourier", "--k", "4", "--p", "31"], ["derive", "gamma-star", "--p", "6"],
                                  ["derive", "identity", "--k", "10"], ["derive", "gamma-star", "--k", "x"]])
def test_derive_bad_input(argv, capsys):
    code = main(argv)  # usage errors of argparse too: main returns 2 rather than raising SystemExit
    assert code == 2
    assert "error:" in capsys.readouterr().err


def test_verify_exact_json(capsys):
    assert main(["verify", "--p", "7", "--k", "3", "--exact", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "verified" and d["relative_error"] == 0.0 and d["details"]["exactness"] == "proved"
    assert d["parameters"] == {"p": 7, "k": 3, "exact": True} and d["ratio_to_gamma_star"] == 1.0
