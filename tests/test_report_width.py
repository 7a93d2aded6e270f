"""Readable output: the table and everything printed under it fit the terminal's width (in terminal cells:
combining marks take none)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from rich.cells import cell_len
from rich.console import Console

from margintheory import CoGO, GroupComposition, ModularAddition, SparseParity, verify
from margintheory.presentation.report import render_text


def _run(columns: int, *args: str) -> str:
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("LINES", None)
    proc = subprocess.run([sys.executable, "-m", "margintheory.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout


@pytest.mark.parametrize("columns,args", [
    (100, ("verify", "--p", "5", "--k", "2")),
    (80, ("verify", "--task", "group", "--group", "S3")),
])
def test_cli_output_fits_columns(columns, args):
    out = _run(columns, *args)
    lines = out.splitlines()
    assert "claim" in out and "verdict:" in out and "normalized margin" in out
    assert max(cell_len(line) for line in lines) <= columns, max(lines, key=cell_len)
    # the table uses the room it is given (it is not a fixed 160-column layout squeezed or a 40-column one)
    assert max(cell_len(line) for line in lines) >= columns - 10


@pytest.fixture(scope="module")
def results():
    return [verify(ModularAddition(5, 2)), verify(ModularAddition(3, 1), exact=True), verify(SparseParity(4, 2)),
            verify(GroupComposition("S3")), verify(GroupComposition("C4")), verify(CoGO(5, "F46"))]


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_every_result_renders_within_the_width(results, width):
    for result in results:
        buf = io.StringIO()
        render_text(result, console=Console(file=buf, width=width, highlight=False), show_fields=["p", "k"])
        lines = buf.getvalue().splitlines()
        assert max(cell_len(line) for line in lines) <= width, (result.title, max(lines, key=cell_len))
        assert lines[-1].startswith("verdict: ")


@pytest.mark.parametrize("width", [60, 80, 100])
def test_no_number_is_folded_across_lines(results, width):
    """Every number of every check's expected and measured cells is printed whole on one line of the table (a
    folded '0.03042' / '9' reads as another value); the claim column wraps instead."""
    from margintheory.presentation.report import _is_number, checks_table, digits_for, fitting_digits, format_value

    for result in results:
        digits = fitting_digits(result.checks, digits_for(width), width)  # shortened where they would not fit
        assert digits >= 4
        buf = io.StringIO()
        Console(file=buf, width=width, highlight=False).print(checks_table(result.checks, digits=digits, width=width))
        text = buf.getvalue()
        for c in result.checks:
            for v in (c.expected, c.measured):
                if _is_number(v):
                    assert format_value(v, digits) in text, (result.title, c.name, format_value(v, digits), width)


def test_details_print_as_values_not_python_reprs():
    """A solver record and a numpy array print as values (no braces, quotes or numpy's space-separated repr)."""
    import numpy as np

    from margintheory.presentation.report import format_value

    assert format_value({"name": "HiGHS", "time": 1.1648261529990123}) == "name=HiGHS, time=1.16483"
    assert format_value(np.array([0, 6, 9])) == "[0, 6, 9]"
    assert format_value(np.float64(0.1234567891234), 6) == "0.123457" and format_value(np.int64(7)) == "7"


def test_the_tol_column_never_shows_less_than_the_tolerance_applied():
    """One significant digit, rounded up (``1.47e-12`` was shown as ``1e-12``), at most 5 characters."""
    import numpy as np

    from margintheory.presentation.report import format_tolerance

    assert [format_tolerance(t) for t in (1e-9, 0.1, 0.0, 1.47e-12, 1.0014671446e-09, 2.5e-10, 9.96e-5, 0.5)] == [
        "1e-9", "1e-1", "0", "2e-12", "2e-9", "3e-10", "1e-4", "5e-1"]
    for t in 10 ** np.random.default_rng(0).uniform(-15, 0, 2000):
        shown = format_tolerance(float(t))
        assert t <= float(shown) <= 2.0 * t and len(shown) <= 5, (t, shown)
