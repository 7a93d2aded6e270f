"""Presentation of a :class:`~margintheory.core.checks.VerificationResult`: a table that fits the terminal, or one JSON
object in the shape of the result schema (:mod:`margintheory.presentation.schema`).

The table has one row per check (claim | expected | measured | tol | how | verdict) under the check's short name; rich
reads the terminal's width (``COLUMNS`` when the output is not a terminal, 80 by default), numbers are shown with
fewer digits on narrow terminals, and each claim in full (its formula and lemma) is printed under the table, wrapped
to the width, with the details of failed checks.  The ``how`` column is the row's exactness as derived from its premises
(:mod:`margintheory.core.premises`): ``proved*`` for a row that rests on argued statements, which are listed under the
table.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from margintheory.core.checks import NAME_MAX, Check, VerificationResult
from margintheory.core.margin_claims import UNDECIDED_ENDING
from margintheory.core.premises import exactness_label

_VERDICT_STYLE = {"verified": "bold green", "refuted": "bold red", "not-applicable": "bold yellow",
                  "undecided": "bold yellow"}
#: terminals at least this wide get 12 significant digits, those at least NARROW wide 8, narrower ones 6
WIDE = 120
NARROW = 90


def digits_for(width: int) -> int:
    """Significant digits of the numbers in a table ``width`` columns wide."""
    return 12 if width >= WIDE else (8 if width >= NARROW else 6)


def format_value(x: Any, digits: int = 12) -> str:
    """A compact human rendering of a number, bool, list or string."""
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        return f"{x:.{digits}g}"
    if type(x).__module__ == "numpy" and hasattr(x, "tolist"):  # an array or scalar (numpy is not imported here:
        return format_value(x.tolist(), digits)                  # the certificate checker runs without it)
    if isinstance(x, list | tuple):
        if len(x) > 12:
            return f"[{', '.join(format_value(v, 6) for v in x[:5])}, ... ({len(x)} items)]"
        return "[" + ", ".join(format_value(v, 6) for v in x) + "]"
    if isinstance(x, dict):  # e.g. the solver's record: name=..., status=..., time=1.16
        return ", ".join(f"{k}={format_value(v, 6)}" for k, v in x.items())
    return str(x)


#: columns of the table: 7 rules and a space each side of 6 cells
TABLE_RULES = 19


def format_tolerance(tol: float) -> str:
    """A tolerance in one significant digit, rounded up, exponent without a leading zero (a narrow column): it never
    shows a tolerance smaller than the one applied (``1.47e-12`` was shown as ``1e-12``, below a measured ``1.2e-12``
    that passed); the value itself is in the JSON and in the statement under the table."""
    if not math.isfinite(tol) or tol <= 0:
        return f"{tol:g}"
    exponent = math.floor(math.log10(tol))
    digit = math.ceil(tol / 10.0**exponent * (1 - 1e-12))  # 1..10; the factor absorbs the division's rounding
    while digit * 10.0**exponent < tol:
        digit += 1
    if digit == 10:
        digit, exponent = 1, exponent + 1
    return f"{digit}e{exponent}"


def _row_verdict(c: Check) -> str:
    """``PASS``, ``FAIL``, with `` (i)`` for an informational row; ``UNDECIDED`` for a margin claim that no engine
    could decide (:mod:`margintheory.core.margin_claims`)."""
    if c.informational and not c.passed and c.detail.endswith(UNDECIDED_ENDING):
        return "UNDECIDED"
    return ("PASS" if c.passed else "FAIL") + (" (i)" if c.informational else "")


def checks_table(checks: list[Check], title: str | None = None, digits: int = 12, width: int | None = None
                 ) -> Table:
    """The claim | expected | measured | tol | how | verdict table, at most ``width`` columns wide: the claim and
    value columns get the room the fixed ones (tol, how, verdict) leave, and wrap inside it."""
    digits = fitting_digits(checks, digits, width)
    rows = []
    for c in checks:
        verdict = _row_verdict(c)
        style = "green" if c.passed else ("yellow" if c.informational else "red")
        tol = "-" if c.tolerance is None else format_tolerance(c.tolerance)
        rows.append((c.name, format_value(c.expected, digits), format_value(c.measured, digits), tol,
                     exactness_label(c.exactness, c.assumes), verdict, style))
    fixed = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in ((3, "tol"), (4, "how"), (5, "verdict"))]
    wanted = [min(max([len(h)] + [len(r[i]) for r in rows]), cap)
              for i, h, cap in ((0, "claim", NAME_MAX), (1, "expected", digits + 8), (2, "measured", digits + 8))]
    room = None if width is None else width - TABLE_RULES - sum(fixed)
    # a number is never folded across lines (a folded "0.03042 / 9" reads as another value): the value columns are
    # at least as wide as their longest number
    numbers = [max([0] + [len(format_value(v, digits)) for v in values if _is_number(v)])
               for values in ([c.expected for c in checks], [c.measured for c in checks])]
    claim, expected, measured = _fit(wanted, room, numbers)
    table = Table(title=title, show_lines=False, header_style="bold", expand=False)
    table.add_column("claim", overflow="fold", width=claim)
    table.add_column("expected", overflow="fold", width=expected)
    table.add_column("measured", overflow="fold", width=measured)
    for name in ("tol", "how", "verdict"):
        table.add_column(name, no_wrap=True)
    for name, exp, meas, tol, how, verdict, style in rows:
        table.add_row(escape(name), escape(exp), escape(meas), tol, how, f"[{style}]{verdict}[/{style}]")
    return table


def fitting_digits(checks: list[Check], digits: int, width: int | None) -> int:
    """The significant digits of the table's numbers: ``digits``, or fewer (down to 4) where the longest expected and
    measured numbers would not fit beside each other in ``width`` columns (numbers are never folded across lines, so
    they are shortened instead)."""
    if width is None:
        return digits
    fixed = sum(max([len(h)] + [len("-" if c.tolerance is None else format_tolerance(c.tolerance)) if i == 0 else
                                 len(exactness_label(c.exactness, c.assumes)) if i == 1 else len(_row_verdict(c))
                                 for c in checks]) for i, h in enumerate(("tol", "how", "verdict")))
    room = width - TABLE_RULES - fixed - 4  # the claim column's hard floor
    while digits > 4:
        longest = [max([0] + [len(format_value(v, digits)) for v in values if _is_number(v)])
                   for values in ([c.expected for c in checks], [c.measured for c in checks])]
        if sum(longest) <= room:
            break
        digits -= 1
    return digits


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _fit(wanted: list[int], room: int | None, numbers: list[int] | None = None) -> list[int]:
    """Widths of the claim, expected and measured columns within ``room``: the widest one gives way first, down to
    floors (claim 14, values 8), then all shrink evenly (the text wraps inside), but a value column never below its
    longest number (``numbers``), so numbers are not folded; the table is then wider than ``room``."""
    widths = list(wanted)
    if room is None:
        return widths
    numbers = numbers or [0, 0]
    hard = [4, max(4, numbers[0]), max(4, numbers[1])]
    floors = [min(14, wanted[0]), max(min(8, wanted[1]), hard[1]), max(min(8, wanted[2]), hard[2])]
    for lower in (floors, hard):
        while sum(widths) > room:
            slack = [w - f for w, f in zip(widths, lower, strict=True)]
            if max(slack) <= 0:
                break
            widths[slack.index(max(slack))] -= 1
    return widths


def summary_lines(result: VerificationResult, digits: int = 12) -> list[str]:
    """The common fields of the result schema, one short line each."""
    lines = []
    g = result.gamma_star
    note = f" ({result.gamma_star_note})" if result.gamma_star_note else ""
    lines.append(f"gamma*: {format_value(g, digits) if g is not None else 'n/a'}{note}")
    if result.normalized_margin is not None:
        how = result.margin.exactness if result.margin is not None else "float"
        parts = [f"normalized margin ({how}): {format_value(result.normalized_margin, digits)}"]
        if result.ratio_to_gamma_star is not None:
            parts.append(f"ratio to gamma*: {format_value(result.ratio_to_gamma_star, digits)}")
        if result.relative_error is not None:
            parts.append(f"relative error: {result.relative_error:.3e}")
        lines.append("; ".join(parts))
    tail = []
    if result.width is not None:
        tail.append(f"width: {result.width}")
    if result.seconds is not None:
        tail.append(f"seconds: {result.seconds:.3g}")
    if tail:
        lines.append("; ".join(tail))
    return lines


def assumption_lines(checks: list[Check]) -> list[str]:
    """The argued statements that starred rows rest on, numbered once (``A1 ...``), then each starred row with the
    numbers of its assumptions; empty when no row rests on an argument."""
    starred = [c for c in checks if c.assumes and c.exactness != "argued"]
    numbers: dict[str, int] = {}
    for c in starred:
        for a in c.assumes:
            numbers.setdefault(a, len(numbers) + 1)
    if not numbers:
        return []
    lines = ["* rests on argued statements (exactness derived from the premises, docs/checks.md#premises):"]
    lines += [f"  A{n} {a}" for a, n in numbers.items()]
    lines += [f"  {c.name} ({exactness_label(c.exactness, c.assumes)}): "
              + ", ".join(f"A{n}" for n in sorted(numbers[a] for a in c.assumes)) for c in starred]
    return lines


def make_console(stream: TextIO | None = None) -> Console:
    """A console on ``stream`` (stdout) whose width is the terminal's (``COLUMNS`` if set, else 80 when piped)."""
    return Console(file=stream, highlight=False, soft_wrap=False)


def render_text(
    result: VerificationResult, console: Console | None = None, show_fields: list[str] | None = None
) -> None:
    """Print the table, the common fields, the requested details, failed checks' details, notes and the verdict."""
    console = console or make_console()
    digits = digits_for(console.width)
    result.derive()
    console.print(checks_table(result.checks, title=result.title, digits=digits, width=console.width))
    for line in assumption_lines(result.checks):
        console.print(escape(line))
    for c in result.checks:
        if c.statement:
            console.print(f"[dim]{escape(c.name)}:[/dim] {escape(c.statement)}")
    for line in summary_lines(result):  # full precision whatever the width: a line wraps at spaces, not in a number
        console.print(escape(line))
    details = result.details
    for name in show_fields or []:
        if details.get(name) is not None:
            console.print(f"{name}: {escape(format_value(details[name], digits))}")
    for c in result.checks:
        if c.detail and not c.passed:
            console.print(f"[dim]{escape(c.name)}: {escape(c.detail)}[/dim]")
    for note in result.notes:
        console.print(f"note: {escape(note)}")
    style = _VERDICT_STYLE[result.verdict]
    console.print(f"verdict: [{style}]{result.verdict}[/{style}]")


def render_json(result: VerificationResult, stream: TextIO | None = None) -> None:
    """Print ``result.to_dict()`` (the result schema) as one JSON object."""
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
