"""The papers' experiments at the papers' sizes, and the speeds behind the recipes' time estimates (not run by CI).

    OMP_NUM_THREADS=1 python benchmarks/bench_reproduce.py --calibrate          # writes margintheory/data/
                                                                                 # reproduce_timings.json (minutes)
    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/bench_reproduce.py --run morwani-fig7.1 [--runs quadratic]
    python benchmarks/bench_reproduce.py --table                                 # the docs page's table rows
    python benchmarks/bench_reproduce.py --recipes-table                         # the docs page's recipe list
    python benchmarks/bench_reproduce.py --page       # rewrites those tables in docs/reproductions.md
    python benchmarks/bench_reproduce.py --rejudge    # judges docs/reproductions/*.json again by the current
                                                      # readings, from what they stored (no training)

``--calibrate`` times every distinct modular-addition run of the recipes (an update and a history row, in CPU
seconds of one process, :func:`margintheory.reproduce.estimates.measure_speed`) with the numpy and the JAX backend
and prints the JAX / numpy ratio of each (the baseline measured in the same run); a run whose arrays exceed
``--max-memory`` at the paper's size is timed at the largest prime ``p`` that fits, and the estimate scales it.
``--run NAME`` reproduces a recipe at the paper's size into ``benchmarks/out/reproduce/NAME`` (resumable: rerun
to continue), prints its checks, its wall and CPU time and the machine, copies its figures (PNG) to
``docs/figures/reproduce/`` and its result to ``docs/reproductions/NAME.json``.  ``--table`` prints the
"paper's claim | measured | agrees?" rows of docs/reproductions.md from those results.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from margintheory.reproduce.catalog import RECIPES
from margintheory.reproduce.estimates import TIMINGS_FILE, measure_speed, row_work
from margintheory.reproduce.recipes import RunSpec
from margintheory.reproduce.runs import hardware_description, trainer_gap
from margintheory.training.trainer import estimate_training

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "margintheory" / "data" / TIMINGS_FILE
OUT = ROOT / "benchmarks" / "out" / "reproduce"
DOC_FIGURES = ROOT / "docs" / "figures" / "reproduce"
DOC_RESULTS = ROOT / "docs" / "reproductions"


#: largest work of one history row timed by --calibrate (about 3 s of numpy at 1.5e-9 s per unit)
MAX_ROW_WORK = 2e9


def _fits(spec: RunSpec, max_memory: float) -> RunSpec:
    """``spec`` at the largest prime ``p`` (<= the paper's) whose training arrays fit ``max_memory`` and whose
    history row is at most :data:`MAX_ROW_WORK` (the estimate scales the measurement to the paper's ``p``); the
    other tasks' runs are timed at their own sizes."""
    if spec.task != "modular-addition":
        return spec
    p = spec.sizes["p"]
    while p > 5:
        s = {**spec.sizes, "p": p}
        small = replace(spec, sizes=s)
        if estimate_training(p, s["k"], s["width"], 1, figures=False).bytes <= max_memory and \
                row_work(small) <= MAX_ROW_WORK:
            return small
        p -= 2
        while p > 5 and any(p % d == 0 for d in range(3, math.isqrt(p) + 1, 2)):
            p -= 2
    return replace(spec, sizes={**spec.sizes, "p": 5})


def _distinct_runs(tasks: list[str] | None) -> list[RunSpec]:
    seen, out = set(), []
    for rec in RECIPES.values():
        for spec in rec.runs:
            if trainer_gap(spec) is not None or (tasks and f"{spec.task}/{spec.activation}" not in tasks):
                continue
            key = (tuple(spec.sizes.items()), spec.batch_size, spec.train_fraction, spec.optimizer, spec.activation)
            if key not in seen:
                seen.add(key)
                out.append(spec)
    return out


def calibrate(console: Console, backends: list[str], max_memory: float, seconds: float,
              tasks: list[str] | None) -> None:
    table = Table(title=f"training speed (CPU s of one process) on {hardware_description()}")
    for col in ("run", "sizes timed", "batch", "backend", "update s", "history row s", "ratio to numpy (update)"):
        table.add_column(col, justify="right")
    rows = []
    for spec in _distinct_runs(tasks):
        timed = _fits(spec, max_memory)
        base = None
        for backend in backends:
            probe = measure_speed(timed, backend=backend, device="cpu", steps=3)[0] or 1e-3
            steps = max(5, min(400, int(seconds / max(probe, 1e-4))))
            update, row = measure_speed(timed, backend=backend, device="cpu", steps=steps)
            base = update if base is None else base
            rows.append({"task": spec.task, "activation": spec.activation, "sizes": timed.sizes,
                         "batch_size": timed.batch_size, "train_fraction": timed.train_fraction,
                         "optimizer": timed.optimizer, "backend": backend, "steps_timed": steps,
                         "update_seconds": update, "row_seconds": row})
            table.add_row(f"{spec.label} ({spec.task})", str(timed.sizes), str(timed.batch_size), backend,
                          f"{update:.4g}", f"{row:.4g}", f"{update / base:.2f}")
    console.print(table)
    old = json.loads(DATA.read_text(encoding="utf-8")) if DATA.exists() and tasks else {"devices": {}}
    keep = [m for m in old.get("devices", {}).get("cpu", {}).get("measurements", [])
            if f"{m['task']}/{m.get('activation', 'power')}" not in (tasks or [])]
    doc = {"note": "CPU seconds of one process per update and per history row (benchmarks/bench_reproduce.py "
                   "--calibrate); OMP_NUM_THREADS=1", "devices": {"cpu": {
                       "hardware": hardware_description(), "date": datetime.date.today().isoformat(),
                       "load_average": os.getloadavg()[0], "measurements": keep + rows}}}
    DATA.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    console.print(f"wrote {DATA}")


def run(console: Console, name: str, labels: list[str] | None, backend: str, into: str | None) -> None:
    from margintheory.presentation.report import render_text
    from margintheory.reproduce.runner import ReproduceOptions, reproduce

    out = OUT / (into or name)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = reproduce(name, out, ReproduceOptions(labels=tuple(labels) if labels else None, backend=backend,
                                                   max_memory=4 * 2**30, max_seconds=None))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    render_text(result, console)
    console.print(f"{name}: wall {wall:.0f} s, CPU {cpu:.0f} s (this process), {hardware_description()}, "
                  f"load average {os.getloadavg()[0]:.1f}", highlight=False)
    DOC_FIGURES.mkdir(parents=True, exist_ok=True)
    DOC_RESULTS.mkdir(parents=True, exist_ok=True)
    for figure in result.fields.get("figures", []):
        if figure.endswith(".png"):
            shutil.copy(figure, DOC_FIGURES / Path(figure).name)
    doc = result.to_dict()
    for summary in doc["details"].get("run_summaries", []):  # the docs name run directories from the repository
        if summary.get("run_dir", "").startswith(str(ROOT) + os.sep):
            summary["run_dir"] = str(Path(summary["run_dir"]).relative_to(ROOT))
    doc["details"]["benchmark"] = {"wall_seconds": wall, "cpu_seconds": cpu, "backend": backend,
                                   "load_average": os.getloadavg()[0]}
    (DOC_RESULTS / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def table_rows(console: Console) -> None:
    """``| recipe | paper's claim | read as | measured | agrees? |`` rows from docs/reproductions/*.json."""
    for path in sorted(DOC_RESULTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        name = doc["parameters"]["recipe"]
        for c in doc["checks"]:
            agrees = "not measured" if c["measured"] is None else ("yes" if c["passed"] else "**no**")
            if c["informational"] and c["measured"] is not None:
                agrees += " (reported, not deciding)"
            measured = c["measured"] if not isinstance(c["measured"], float) else f"{c['measured']:.6g}"
            claim, _, reading = c["statement"].partition(". Read as: ")
            cells = [f"`{name}`", claim, reading, str(measured), agrees]
            console.print("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |", highlight=False,
                          markup=False, soft_wrap=True)


def summary_rows(console: Console) -> None:
    """``| recipe | runs trained | verdict | training wall | training CPU |`` rows from docs/reproductions/*.json
    (the sums over the recipe's runs, as their histories recorded them)."""
    from margintheory.runtime.budget import format_seconds

    for path in sorted(DOC_RESULTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        runs = doc["details"]["run_summaries"]
        trained = ", ".join(sorted({f"{r['run']} ({sum(x['run'] == r['run'] for x in runs)} seed"
                                    f"{'s' if sum(x['run'] == r['run'] for x in runs) > 1 else ''})" for r in runs}))
        if len({r["run"] for r in runs}) > 4:
            trained = f"{len({r['run'] for r in runs})} runs, {len(runs)} networks"
        wall = sum(r["seconds"] or 0.0 for r in runs)
        recorded = all(r.get("cpu_seconds") is not None for r in runs)
        cpu = format_seconds(sum(r["cpu_seconds"] for r in runs)) if recorded else "not recorded"
        console.print(f"| `{doc['parameters']['recipe']}` | {trained} | {doc['verdict']} | {format_seconds(wall)} | "
                      f"{cpu} |", highlight=False, markup=False, soft_wrap=True)


def recipes_table(console: Console) -> None:
    """``| recipe | experiment | runs (sizes, steps, seeds) | CPU | GPU | trainer |`` rows of docs/reproductions.md."""
    from margintheory.reproduce.estimates import estimate_recipe

    for rec in RECIPES.values():
        runs = "; ".join(f"{s.label}: {', '.join(f'{k}={v}' for k, v in s.sizes.items())}, {s.optimizer}, "
                         f"{s.steps} steps, {len(s.seeds)} seed{'s' if len(s.seeds) > 1 else ''}"
                         + (" (GPU-sized)" if s.hardware == "gpu" else "") for s in rec.runs[:2])
        runs += f"; ... ({len(rec.runs)} runs)" if len(rec.runs) > 2 else ""
        waiting = ", ".join(sorted({g for s in rec.runs if (g := trainer_gap(s)) is not None})) or "yes"
        console.print(f"| `{rec.name}` | {rec.where} | {runs} | {estimate_recipe(rec, 'cpu').short()} | "
                      f"{estimate_recipe(rec, 'gpu').short()} | {waiting} |", highlight=False, markup=False,
                      soft_wrap=True)


def rejudge(console: Console) -> None:
    """Judge every stored result (docs/reproductions/*.json) again by its recipe's current readings, from what the
    result stored (:func:`margintheory.reproduce.claims.rejudged_row`; the trained networks are not stored), and
    recompute its verdict and exit code from the rows."""
    from margintheory.core.checks import Check, VerificationResult
    from margintheory.reproduce.claims import rejudged_row

    for path in sorted(DOC_RESULTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        claims = {c.name: c for c in RECIPES[doc["parameters"]["recipe"]].claims}
        rows = [rejudged_row(claims[row["name"]], row) if row["name"] in claims else row for row in doc["checks"]]
        changed = [(a["name"], a["passed"], b["passed"]) for a, b in zip(doc["checks"], rows, strict=True)
                   if a["passed"] != b["passed"] or a["measured"] != b["measured"]]
        result = VerificationResult(doc["title"], checks=[Check(**row) for row in rows],
                                    applicable=doc["verdict"] != "not-applicable")
        before = doc["verdict"]
        doc.update(checks=rows, verdict=result.verdict, exit_code=result.exit_code)
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        console.print(f"{path.name}: verdict {before} -> {doc['verdict']}; rows re-judged: "
                      + (", ".join(f"{n} ({'yes' if a else 'no'} -> {'yes' if b else 'no'})" for n, a, b in changed)
                         or "none"), highlight=False, markup=False)


def _captured(fn) -> str:  # noqa: ANN001 - one of the row printers above
    import io

    buf = io.StringIO()
    fn(Console(file=buf, width=10_000, highlight=False))
    return buf.getvalue().strip()


PAGE = ROOT / "docs" / "reproductions.md"
SECTIONS = {
    "recipes": ("| recipe | experiment | runs (first two) | CPU, this machine | GPU | trainable |\n"
                "|---|---|---|---|---|---|", recipes_table),
    "summary": ("| recipe | runs trained | verdict | training, wall (sum over runs) | training, CPU |\n"
                "|---|---|---|---|---|", summary_rows),
    "claims": ("| recipe | paper's claim | read as | measured | agrees? |\n|---|---|---|---|---|", table_rows),
}


def write_page(console: Console) -> None:
    """Replace the generated tables of docs/reproductions.md (between ``<!-- generated: NAME -->`` and
    ``<!-- end: NAME -->``) with the registry's and the results' current rows."""
    import re

    text = PAGE.read_text(encoding="utf-8")
    for name, (header, rows) in SECTIONS.items():
        block = f"<!-- generated: {name} -->\n{header}\n{_captured(rows)}\n<!-- end: {name} -->"
        text, n = re.subn(rf"<!-- generated: {name} -->.*?<!-- end: {name} -->", lambda _m, b=block: b, text,
                          flags=re.S)
        if n != 1:
            raise SystemExit(f"{PAGE}: no generated section {name!r}")
    PAGE.write_text(text, encoding="utf-8")
    console.print(f"wrote {PAGE}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--backends", default="numpy,jax")
    parser.add_argument("--seconds", type=float, default=20.0, help="about this long per timed run")
    parser.add_argument("--tasks", default=None, metavar="TASK/ACTIVATION,...",
                        help="calibrate only these (e.g. parity/power,modular-addition/relu); the others are kept")
    parser.add_argument("--max-memory", type=float, default=3 * 2**30)
    parser.add_argument("--run", metavar="NAME")
    parser.add_argument("--runs", default=None, help="the recipe's runs to train, comma-separated")
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--into", default=None, metavar="DIR_NAME",
                        help="train into benchmarks/out/reproduce/DIR_NAME (another recipe's: its runs are reused)")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--recipes-table", action="store_true")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--page", action="store_true", help="rewrite the generated tables of docs/reproductions.md")
    parser.add_argument("--rejudge", action="store_true",
                        help="judge docs/reproductions/*.json again by the current readings (before --page)")
    args = parser.parse_args()
    console = Console(highlight=False)
    if args.calibrate:
        calibrate(console, args.backends.split(","), args.max_memory, args.seconds,
                  args.tasks.split(",") if args.tasks else None)
    if args.run:
        run(console, args.run, args.runs.split(",") if args.runs else None, args.backend, args.into)
    if args.table:
        table_rows(console)
    if args.recipes_table:
        recipes_table(console)
    if args.summary:
        summary_rows(console)
    if args.rejudge:
        rejudge(console)
    if args.page:
        write_page(console)


if __name__ == "__main__":
    main()
