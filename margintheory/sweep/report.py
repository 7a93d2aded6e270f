"""What a sweep found, for people: a summary table, figures (PNG and PDF), and the sweep as one result object.

* :func:`summary_groups` / :func:`summary_table`: one row per command, ``k`` and variant (verify's family, solve's
  method, train's width): how many cells were verified, refuted, not applicable or failed, the range of the ratio
  of the normalized margin to ``gamma*`` (Theorem C.22 of Li et al., "Fourier circuits", arXiv:2402.09469), the
  largest relative error, the widths and the seconds spent.
* :func:`write_figures`: the ratio to ``gamma*`` (and the relative error) against ``p`` per ``k``; the width per
  frequency against ``k`` with the ``2^(2k-1)`` neurons per frequency of Lemma C.18; the seconds of each cell
  against ``p^k`` on log-log axes.  matplotlib (Agg), written atomically as PNG and PDF like the training figures.
* :func:`sweep_result`: the sweep as a :class:`~margintheory.core.checks.VerificationResult` (the result schema of every
  command): one check per cell, with the cell's weakest exactness.  The verdict follows the package's rules over the
  cells: ``refuted`` when some cell is refuted, else ``verified`` when some cell is verified; the cells outside the
  theorem's hypothesis (``not-applicable``) are informational then.  When no cell decides (every cell that ran is
  not applicable) the sweep is ``not-applicable``, with exit code 1 when some cell's own exit code was 1 (a computed
  check of that cell failed), as for one ``verify``.  A failed cell (``error``) decides nothing: its check is
  informational, ``argued`` (nothing was computed; the error is its detail), and the sweep is incomplete (exit code
  2, the failed cells named in the notes).  A one-cell sweep therefore has its cell's verdict and exit code.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from rich import box
from rich.markup import escape
from rich.table import Table

from margintheory.core.checks import NAME_MAX, Check, VerificationResult
from margintheory.sweep.cells import params_of
from margintheory.sweep.store import ERROR

FIGURE_STEMS = ("ratio_vs_p", "width_vs_k", "seconds_vs_points")
VERDICTS = ("verified", "refuted", "not-applicable", "undecided", ERROR)
#: relative errors of exactly 0 (exact arithmetic) are drawn at this floor of the log axis
ERROR_FLOOR = 1e-18
#: the failed cells named in the sweep result's note (the rest are counted)
FAILED_NAMED = 10


def variant(row: dict[str, Any]) -> str:
    """What distinguishes cells of one command and ``k`` besides ``p`` and the seed."""
    if row["command"] == "train":
        return f"width {row['width']}" if row["width"] is not None else "width ?"
    return str(row.get("family") or row.get("method") or params_of(row).get("method") or "")


def summary_groups(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of :func:`summary_table` (plain values)."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["command"], row["k"] if row["k"] is not None else -1, variant(row))].append(row)
    out = []
    for (command, k, var), members in sorted(groups.items()):
        ratios = [r["ratio_to_gamma_star"] for r in members if r["ratio_to_gamma_star"] is not None]
        errors = [r["relative_error"] for r in members if r["relative_error"] is not None]
        widths = sorted({r["width"] for r in members if r["width"] is not None})
        ps = sorted({r["p"] for r in members if r["p"] is not None})
        out.append({"command": command, "k": None if k == -1 else k, "variant": var, "cells": len(members),
                    **{v: sum(r["verdict"] == v for r in members) for v in VERDICTS},
                    "p": (ps[0], ps[-1]) if ps else None,
                    "ratio": (min(ratios), max(ratios)) if ratios else None,
                    "max_relative_error": max(errors) if errors else None,
                    "width": (widths[0], widths[-1]) if widths else None,
                    "seconds": sum(r["seconds"] or 0.0 for r in members)})
    return out


def _span(pair: tuple | None, digits: int = 6) -> str:
    if pair is None:
        return "-"
    lo, hi = (f"{v:.{digits}g}" if isinstance(v, float) else str(v) for v in pair)
    return lo if lo == hi else f"{lo}..{hi}"


def _verdict_counts(group: dict[str, Any]) -> str:
    """``6 ok``, or one line per verdict (``4 ok``, ``1 refuted``, ``1 failed``; zero counts left out): a count is
    never wrapped away from its verdict."""
    names = {"verified": "ok", "refuted": "refuted", "not-applicable": "n/a", "undecided": "undecided",
             ERROR: "failed"}
    styles = {"refuted": "yellow", ERROR: "red"}
    parts = []
    for verdict, name in names.items():
        if group[verdict]:
            text = f"{group[verdict]} {name}"
            parts.append(f"[{styles[verdict]}]{text}[/{styles[verdict]}]" if verdict in styles else text)
    return "\n".join(parts) or "-"


def summary_table(rows: Sequence[dict[str, Any]], title: str | None = None, width: int = 80) -> Table:
    """A rich table of :func:`summary_groups` that fits a terminal ``width`` wide (80 and more) without breaking a
    word: a group's name (a family such as ``smallest-known``, a method, ``width 64``), a verdict count and the
    numbers are never cut.  Several verdicts of a group take a line each; where the one-line layout is too wide the
    command goes on a line of its own above the variant and the ratios get fewer digits (6, then 4)."""
    groups = summary_groups(rows)
    layouts = [(10 if width >= 120 else 6, False), (6, True), (4, True)]
    for digits, stacked in layouts:
        table = _summary_layout(groups, title, digits, stacked)
        if _natural_width(table) <= width:
            break
    return table


def _summary_layout(groups: list[dict[str, Any]], title: str | None, digits: int, stacked: bool) -> Table:
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
                  padding=(0, 1, 0, 0))  # two spaces between columns
    table.add_column("cells", no_wrap=True)
    for name in ("k", "p"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("verdicts", no_wrap=True)
    for name in ("margin /\ngamma*", "relative\nerror", "width", "s"):  # the words of every other table
        table.add_column(name, justify="right", no_wrap=True)
    one_command = len({g["command"] for g in groups}) == 1  # then the title names it and the rows need not
    if one_command and groups:
        table.columns[0].header = f"{groups[0]['command']} cells"
    for g in groups:
        error = "-" if g["max_relative_error"] is None else f"{g['max_relative_error']:.1e}"
        if one_command and g["variant"]:
            name = g["variant"]
        else:
            name = f"{g['command']}{chr(10) if stacked and g['variant'] else ' '}{g['variant']}".strip()
        table.add_row(escape(name), str(g["k"]), _span(g["p"]),
                      _verdict_counts(g), _span(g["ratio"], digits), error, _span(g["width"]), f"{g['seconds']:.3g}")
    return table


def _natural_width(table: Table) -> int:
    """The width ``table`` takes when nothing limits it."""
    from rich.console import Console

    return Console(width=10_000).measure(table).maximum


def failed_lines(rows: Sequence[dict[str, Any]], limit: int = 10) -> list[str]:
    """``cell: error`` of the first ``limit`` failed cells (and how many more)."""
    failed = [r for r in rows if r["verdict"] == ERROR]
    lines = [f"{r['cell']}: {r['error']}" for r in failed[:limit]]
    if len(failed) > limit:
        lines.append(f"... and {len(failed) - limit} more failed cells (the store's error column)")
    return lines


def sweep_result(rows: Sequence[dict[str, Any]], title: str, parameters: dict[str, Any]) -> VerificationResult:
    """The sweep in the result schema: one check per cell (module docstring)."""
    result = VerificationResult(title, task="sweep", parameters=parameters)
    decided = any(r["verdict"] in ("verified", "refuted") for r in rows)
    result.applicable = decided
    for row in rows:
        result.add(_cell_check(row, decided))
    result.fields.update(gamma_star=None, width=None,
                         gamma_star_note="a sweep over several problems: each cell's gamma* is in the store",
                         seconds=sum(r["seconds"] or 0.0 for r in rows),
                         cells=len(rows), **{v.replace("-", "_"): sum(r["verdict"] == v for r in rows)
                                             for v in VERDICTS})
    failed = [r for r in rows if r["verdict"] == ERROR]
    if failed:
        named = ", ".join(r["cell"] for r in failed[:FAILED_NAMED])
        more = f" and {len(failed) - FAILED_NAMED} more" if len(failed) > FAILED_NAMED else ""
        result.incomplete = f"{len(failed)} of {len(rows)} cells failed"
        result.notes.append(f"{result.incomplete} ({named}{more}): their checks record the error and decide nothing; "
                            "rerun with --retry-failed")
    if not decided and rows:
        result.notes.append("no cell was verified or refuted: the sweep's verdict is not-applicable")
    return result


def _cell_check(row: dict[str, Any], decided: bool) -> Check:
    """One cell as a check of the sweep (module docstring): verified and refuted cells decide the verdict; a cell that
    is not applicable decides only where no cell does (then, like a single command's computed checks, it passed when
    its own exit code is 0); a failed cell never decides and claims no exactness it does not have."""
    label = _label(row)
    name = label if len(label) <= NAME_MAX else label[: NAME_MAX - 3] + "..."
    statement = f"{row['command']} {label} (cell {row['cell']})"
    if row["verdict"] == ERROR:
        return Check(name=name, expected="verified", measured=ERROR, tolerance=None, passed=False, exactness="argued",
                     detail=f"the cell failed, nothing was computed: {row['error'] or 'no reason recorded'}",
                     informational=True, statement=statement)
    passed = row["verdict"] == "verified" or (row["verdict"] == "not-applicable" and row["exit_code"] == 0)
    detail = (f"ratio to gamma* {row['ratio_to_gamma_star']:.15g}" if row["ratio_to_gamma_star"] is not None
              else "")
    exactness = row["exactness"]
    if exactness is None:  # the cell ran, but none of its checks decided its verdict
        exactness = "argued"
        detail = "; ".join(filter(None, [detail, "no check of the cell decides its verdict"]))
    return Check(name=name, expected="verified", measured=row["verdict"], tolerance=None, passed=passed,
                 exactness=exactness, detail=detail,
                 informational=row["verdict"] == "not-applicable" and decided, statement=statement)


def _label(row: dict[str, Any]) -> str:
    params = params_of(row)
    parts = [f"p={row['p']}", f"k={row['k']}"]
    for name, short in (("width", "w"), ("seed", "s"), ("lr", "lr"), ("lambda", "lam")):
        if params.get(name) is not None:
            parts.append(f"{short}={params[name]}")
    if variant(row) and row["command"] != "train" and variant(row) != "lemma-c18":
        parts.append(variant(row))
    return " ".join(parts)


def rows_of(table: pa.Table) -> list[dict[str, Any]]:
    """The store's rows as dictionaries."""
    return list(table.to_pylist())


def write_figures(rows: Sequence[dict[str, Any]], out: str | os.PathLike[str]) -> list[Path]:
    """The figures of the module docstring in ``out`` (each as PNG and PDF); a figure without data is skipped."""
    from margintheory.training.figures import save_figure

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for stem, draw in zip(FIGURE_STEMS, (_ratio_figure, _width_figure, _seconds_figure), strict=True):
        fig = draw(rows)
        if fig is not None:
            written += save_figure(fig, out_dir / stem)
    return written


def _series(rows: Sequence[dict[str, Any]], x: str, y: str) -> dict[str, list[tuple[float, float]]]:
    """Points ``(row[x], row[y])`` by series ``command k=.. variant`` (rows without both values left out)."""
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in rows:
        if row.get(x) is not None and row.get(y) is not None and row["verdict"] != ERROR:
            series[f"{row['command']} k={row['k']} {variant(row)}".strip()].append((row[x], row[y]))
    return dict(sorted(series.items()))


def _ratio_figure(rows: Sequence[dict[str, Any]]):  # noqa: ANN202 - a matplotlib Figure or None
    import matplotlib.pyplot as plt

    series = _series(rows, "p", "ratio_to_gamma_star")
    if not series:
        return None
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.4))
    for name, pts in series.items():
        pts.sort()
        ax.plot([a for a, _ in pts], [b for _, b in pts], "o-", ms=3, lw=0.8, label=name)
    ax.axhline(1.0, color="k", ls=":", lw=0.8, label="gamma* (Thm C.22)")
    values = [b for pts in series.values() for _, b in pts]
    ax.set_ylim(min(0.9, min(values) - 0.05), max(1.05, max(values) + 0.05))  # deviations of 1e-15 are in (b)
    ax.ticklabel_format(axis="y", useOffset=False)
    ax.set_xlabel("p")
    ax.set_ylabel("normalized margin / gamma*")
    ax.set_title("(a) ratio to the theorem's max margin", fontsize=9)
    ax.legend(fontsize=6, loc="best")
    for name, pts in _series(rows, "p", "relative_error").items():
        pts.sort()
        ax2.plot([a for a, _ in pts], [max(b, ERROR_FLOOR) for _, b in pts], "o", ms=3, label=name)
    ax2.set_yscale("log")
    ax2.set_xlabel("p")
    ax2.set_ylabel("relative error |margin - gamma*| / gamma*")
    ax2.set_title(f"(b) relative error (exact 0 drawn at {ERROR_FLOOR:g})", fontsize=9)
    fig.tight_layout()
    return fig


def _width_figure(rows: Sequence[dict[str, Any]]):  # noqa: ANN202
    import matplotlib.pyplot as plt

    per_frequency = [{**r, "per_frequency": r["width"] / ((r["p"] - 1) // 2)} for r in rows
                     if r["width"] is not None and r["p"] is not None and r["p"] % 2 and r["p"] >= 3
                     and r["verdict"] != ERROR]
    if not per_frequency:
        return None
    fig, ax = plt.subplots(figsize=(4.6, 3.4))
    series: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in per_frequency:
        series[f"{r['command']} {variant(r)}".strip()].append((r["k"], r["per_frequency"]))
    for name, pts in sorted(series.items()):
        ax.plot([a for a, _ in pts], [b for _, b in pts], "o", ms=4, alpha=0.7, label=name)
    ks = sorted({r["k"] for r in per_frequency})
    grid = list(range(min(ks), max(ks) + 1))
    ax.plot(grid, [2 ** (2 * k - 1) for k in grid], "k--", lw=0.9, label="2^(2k−1) (Lemma C.18)")
    ax.set_yscale("log", base=2)
    ax.set_xticks(grid)
    ax.set_xlabel("k")
    ax.set_ylabel("neurons per frequency  (width / ((p-1)/2))")
    ax.set_title("width against the theorem's construction", fontsize=9)
    ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    return fig


def _seconds_figure(rows: Sequence[dict[str, Any]]):  # noqa: ANN202
    import matplotlib.pyplot as plt

    points = [{**r, "points": float(r["p"]) ** r["k"]} for r in rows
              if r["p"] is not None and r["k"] is not None and r["seconds"] and r["verdict"] != ERROR]
    series = _series(points, "points", "seconds")
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(4.6, 3.4))
    for name, pts in series.items():
        ax.plot([a for a, _ in pts], [b for _, b in pts], "o", ms=3, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("inputs p^k")
    ax.set_ylabel("seconds per cell (wall)")
    ax.set_title("cost of a cell", fontsize=9)
    ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    return fig


def parameters_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The values each parameter took over ``rows`` (for the sweep result's ``parameters``)."""
    values: dict[str, set] = defaultdict(set)
    for row in rows:
        for name, value in params_of(row).items():
            values[name].add(json.dumps(value))
    return {name: sorted((json.loads(v) for v in vs), key=lambda v: (v is None, str(type(v)), v))
            for name, vs in sorted(values.items())}


