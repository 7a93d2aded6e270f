"""Readable output: every table fits the terminal (``COLUMNS``), check names are short, full claims under the table.

Every command and task that prints a table is run in text mode at ``COLUMNS=80`` in-process (rich reads the width
when the output is not a terminal), and the main ones as subprocesses at ``COLUMNS=100`` and ``80`` (the width
seen at the file-descriptor level).  No line may be wider than the terminal; no check name longer than
``NAME_MAX``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from margintheory.cli import main
from margintheory.core.checks import NAME_MAX

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    from tests.test_result_schema import _network_files

    out = {name: str(path) for name, path in _network_files(tmp_path_factory.mktemp("nets")).items()}
    out["cert"] = str(tmp_path_factory.mktemp("cert") / "cert.json")
    return out


def _widest(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


#: a table row starts with the left rule and must end with the right one (rich crops a table wider than the
#: terminal: the line is then exactly as wide as the terminal, but its right part is gone)
CLOSING = {"┏": "┓", "┃": "┃", "┡": "┩", "│": "│", "└": "┘"}


def _cropped(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if line[:1] in CLOSING and not line.rstrip().endswith(CLOSING[line[0]])]


# every command and task with a table or a derivation (the certificate file is written before it is checked)
COMMANDS = [
    "verify --p 5 --k 2 --certificate {cert}",
    "check {cert}",
    "verify --p 6 --k 2 --no-certificate",
    "verify --p 3 --k 2 --exact --no-certificate",
    "verify --p 5 --k 3 --family parity-design --no-certificate",
    "verify --p 5 --k 3 --family cyclic-lattice --exact --no-certificate",
    "verify --network {random} --rtol 0.5 --no-certificate",
    "verify --task parity --n 5 --k 3",
    "verify --task parity --network {parity}",
    "verify --task group --group S3",
    "verify --task group --group C4",
    "verify --task cogo --construction F46 --d 5",
    "solve --p 3 --k 2 --single-neuron",

    "solve --p 5 --k 2 --max-width 4",
    "solve --p 5 --k 2 --min-width",
    "analyze {modular} --p 5 --k 2",
    "derive gamma-star --p 7 --k 3",
    "derive fourier --p 5 --k 2",
    "derive identity --k 3",
    "derive cosine-sum",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_text_output_fits_80_columns(command, files, capsys, monkeypatch):
    """... and the result behind every table is in the result schema (the object ``--json`` would print)."""
    from margintheory.presentation import report
    from margintheory.presentation.schema import validate_result

    shown = []

    def validated(result, console=None, show_fields=None):
        shown.append(validate_result(result))
        original(result, console, show_fields)

    original = report.render_text
    monkeypatch.setattr(report, "render_text", validated)
    monkeypatch.setenv("COLUMNS", "80")
    code = main(command.format(**files).split())
    out = capsys.readouterr().out
    assert code in (0, 1) and out
    assert len(shown) == (0 if command.startswith("derive") else 1)
    assert _widest(out) <= 80, "\n".join(line for line in out.splitlines() if cell_len(line) > 80)
    assert not _cropped(out), _cropped(out)
    assert "np." not in out, "a numpy repr (np.int64(1), ...) in the text"
    if not command.startswith("derive"):
        # the table's claim column holds the short names, the full claims are printed under the table
        assert "claim" in out and "verdict:" in out


@pytest.mark.parametrize("command,columns", [("verify --p 5 --k 2 --no-certificate", 100),
                                             ("derive gamma-star --k 2", 80)])
def test_subprocess_output_fits_the_terminal(command, columns):
    env = dict(os.environ, COLUMNS=str(columns))
    proc = subprocess.run([sys.executable, "-m", "margintheory.cli", *command.split()], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert columns - 25 <= _widest(proc.stdout) <= columns  # uses the width it is given, never more
    assert not _cropped(proc.stdout)


def test_check_names_are_short_and_statements_carry_the_claim(capsys):
    code = main(["verify", "--p", "5", "--k", "2", "--no-certificate", "--json"])
    checks = json.loads(capsys.readouterr().out)["checks"]
    assert code == 0 and all(len(c["name"]) <= NAME_MAX for c in checks)
    by_name = {c["name"]: c for c in checks}
    assert "Lemma C.6" in by_name["margin <= gamma* (C.6)"]["statement"]
    assert main(["verify", "--p", "5", "--k", "2", "--no-certificate"]) == 0
    text = capsys.readouterr().out
    table, _, below = text.partition("└")
    assert "weak duality, Lemma C.6" not in table and "weak duality, Lemma C.6" in below


def test_long_step_names_from_a_file_are_shortened():
    from margintheory.core.checks import step_name

    assert step_name("weak duality: max margin of any network <= ...") == "weak duality (C.6)"
    foreign = step_name("an argued step this package does not know, with a very long statement")
    assert len(foreign) <= NAME_MAX and foreign.endswith("...")
