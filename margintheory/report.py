"""Presentation of a :class:`~margintheory.checks.VerificationResult`: a rich table or one JSON object."""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from margintheory.checks import Check, VerificationResult

_VERDICT_STYLE = {"verified": "bold green", "refuted": "bold red", "not-applicable": "bold yellow"}


def format_value(x: Any, digits: int = 12) -> str:
    """A compact human rendering of a number, bool, list or string."""
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        return f"{x:.{digits}g}"
    if isinstance(x, list | tuple):
        if len(x) > 12:
            return f"[{', '.join(format_value(v, 6) for v in x[:5])}, ... ({len(x)} items)]"
        return "[" + ", ".join(format_value(v, 6) for v in x) + "]"
    return str(x)


def checks_table(checks: list[Check], title: str | None = None) -> Table:
    """The claim | expected | measured | tolerance | verdict table."""
    table = Table(title=title, show_lines=False, header_style="bold")
    for col in ("claim", "expected", "measured", "tolerance", "how", "verdict"):
        table.add_column(col, overflow="fold")
    for c in checks:
        verdict = "PASS" if c.passed else "FAIL"
        if c.informational:
            verdict += " (info)"
        style = "green" if c.passed else ("yellow" if c.informational else "red")
        tol = "-" if c.tolerance is None else f"{c.tolerance:.1e}"
        expected, measured = escape(format_value(c.expected)), escape(format_value(c.measured))
        table.add_row(escape(c.name), expected, measured, tol, c.exactness, f"[{style}]{verdict}[/{style}]")
    return table


def render_text(
    result: VerificationResult, console: Console | None = None, show_fields: list[str] | None = None
) -> None:
    """Print the result as a table plus its notes and verdict."""
    if console is None:
        console = Console(highlight=False)
        if not console.is_terminal or console.width < 120:
            console = Console(highlight=False, width=160)
    console.print(checks_table(result.checks, title=result.title))
    for name in show_fields or []:
        if name in result.fields:
            console.print(f"{name}: {escape(format_value(result.fields[name]))}")
    for c in result.checks:
        if c.detail and not c.passed:
            console.print(f"[dim]{escape(c.name)}: {escape(c.detail)}[/dim]")
    for note in result.notes:
        console.print(f"note: {escape(note)}")
    style = _VERDICT_STYLE[result.verdict]
    console.print(f"verdict: [{style}]{result.verdict}[/{style}]")


def render_json(result: VerificationResult, stream: TextIO | None = None) -> None:
    """Print ``result.to_dict()`` as one JSON object."""
    stream = stream or sys.stdout
    json.dump(result.to_dict(), stream, indent=2, allow_nan=False)
    stream.write("\n")


def emit(result: VerificationResult, as_json: bool, show_fields: list[str] | None = None) -> int:
    """Render and return the exit code (0 verified, 1 refuted)."""
    if as_json:
        render_json(result)
    else:
        render_text(result, show_fields=show_fields)
    return result.exit_code
