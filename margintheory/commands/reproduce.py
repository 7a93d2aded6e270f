"""``margintheory reproduce NAME`` and ``margintheory reproduce --list [--json]``: the papers' experiments.

Wiring only: the recipes are :mod:`margintheory.reproduce.catalog`, the run is
:func:`margintheory.reproduce.runner.reproduce` (training as sweep cells: in this process by default, on a dask
LocalCluster with ``--workers N`` or on a running cluster with ``--scheduler ADDRESS``, whose workers must see
``--out``), the estimates :mod:`margintheory.reproduce.estimates`.  Exit codes: 0 every claim of the paper borne out
at the paper's size (or a scaled smoke test whose runs all trained), 1 some claim not borne out, 2 bad input, a
refused size, or a run that could not be trained (no trainer for it in this version, or it failed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from margintheory.commands._options import (
    add_backend_options,
    add_engine_options,
    engine_time_limit,
    nonneg_int,
    positive_float,
    positive_int,
    selected_backend,
)
from margintheory.errors import InputError

#: default time limit of a recipe (checked against its estimate; runs resume, so a longer one can be continued)
REPRODUCE_MAX_SECONDS = 86400.0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "reproduce",
        help="reproduce an experiment of the papers (a recipe): train, analyse, draw the figure, check the claims",
        description="Run one of the papers' training experiments with the paper's settings (sizes, optimizer, "
        "schedule, steps, batch, split, seeds), measure each of the paper's claims about it as a check row, and draw "
        "the paper's figure from the run. --list shows the recipes with their citation and estimated time. A rerun "
        "with the same --out skips finished runs and resumes interrupted ones.",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="the recipe, e.g. morwani-fig7.1 (see --list)")
    parser.add_argument("--list", action="store_true", help="list the recipes (with --json: as one JSON object)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output directory: runs, store, figures and NAME.json (default reproduce_out/NAME)")
    parser.add_argument("--scale", type=positive_float, default=1.0, metavar="F",
                        help="shrink the recipe by F in (0, 1] for a smoke test: fewer steps, smaller sizes; the "
                        "result says it is not the paper's size and its claims decide nothing (default 1)")
    parser.add_argument("--runs", default=None, metavar="LABELS",
                        help="train only these runs of the recipe, comma-separated (see --list); the claims on the "
                        "others are reported as not measured")
    parser.add_argument("--workers", type=nonneg_int, default=None, metavar="N",
                        help="train the runs on a dask LocalCluster of N processes (default: in this process)")
    parser.add_argument("--threads", type=positive_int, default=1, metavar="T",
                        help="threads per LocalCluster worker (default %(default)s)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="train the runs on the running dask cluster at ADDRESS (its workers must see --out)")
    parser.add_argument("--no-figures", action="store_true", help="skip the figures")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_engine_options(parser, max_seconds=REPRODUCE_MAX_SECONDS)
    add_backend_options(parser, dtype=True)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    if not 0 < args.scale <= 1:
        raise InputError(f"--scale must be in (0, 1], got {args.scale:g}")
    if args.list:
        if args.name is not None:
            raise InputError("--list takes no recipe name")
        return list_recipes(args.json, args.scale)
    if args.name is None:
        raise InputError("name a recipe (margintheory reproduce --list shows them)")
    if args.scheduler and args.workers is not None:
        raise InputError("--scheduler uses a running cluster; --workers starts a local one: give one of them")
    from margintheory.reproduce.catalog import recipe

    recipe(args.name)  # an unknown name: one line listing the recipes, before anything starts
    backend = selected_backend(args)
    from margintheory.reproduce.runner import ReproduceOptions

    labels = tuple(s.strip() for s in args.runs.split(",") if s.strip()) if args.runs else None
    opts = ReproduceOptions(scale=args.scale, labels=labels, backend=backend.name, device=backend.device,
                            dtype=args.dtype or "float64", max_memory=args.max_memory,
                            max_seconds=engine_time_limit(args), figures=not args.no_figures)
    return _reproduce(args, opts)


def _reproduce(args: argparse.Namespace, opts) -> int:  # noqa: ANN001 - a ReproduceOptions
    from margintheory.presentation.report import emit
    from margintheory.reproduce.runner import reproduce
    from margintheory.runtime.process import Heartbeat, _stderr_is_terminal, say

    out = args.out or f"reproduce_out/{args.name}"

    beat = contextlib.nullcontext() if _stderr_is_terminal() else Heartbeat("margintheory reproduce",
                                                                          "0 runs finished")

    def progress(counts) -> None:  # noqa: ANN001 - a SweepCounts
        status = f"{counts.done}/{counts.total} runs finished ({counts.failed} failed)"
        if isinstance(beat, Heartbeat):  # a line every 30 s meanwhile (a run takes minutes)
            beat.update(status)
        if counts.done and counts.done != getattr(progress, "last", -1):
            progress.last = counts.done  # type: ignore[attr-defined]
            say(f"margintheory reproduce: {status}")

    with beat:
        if args.workers is None and args.scheduler is None:
            result = reproduce(args.name, out, opts, on_progress=progress)
        else:
            from margintheory.execution.executors import open_executor

            with open_executor(workers=args.workers, threads=args.threads, scheduler=args.scheduler) as executor:
                result = reproduce(args.name, out, opts, executor=executor, on_progress=progress)
    code = emit(result, args.json)
    say(f"wrote {out}/{args.name}.json")
    for figure in result.fields.get("figures", []):
        say(f"wrote {figure}")
    return code


def list_recipes(as_json: bool, scale: float = 1.0) -> int:
    """The recipes, with their citation, hardware, runs, estimates (of the recipe shrunk by ``scale``, as
    ``reproduce NAME --scale`` runs it) and whether this version can train them."""
    from margintheory.reproduce.catalog import RECIPES
    from margintheory.reproduce.estimates import estimate_recipe
    from margintheory.reproduce.runs import trainer_gap

    rows = []
    for rec in RECIPES.values():
        doc = rec.describe()
        doc["estimate_cpu"] = estimate_recipe(rec, "cpu", scale=scale).to_dict()
        doc["estimate_gpu"] = estimate_recipe(rec, "gpu", scale=scale).to_dict()
        doc["waiting_for"] = {spec.label: gap for spec in rec.runs if (gap := trainer_gap(spec)) is not None}
        rows.append(doc)
    if as_json:
        json.dump({"scale": scale, "recipes": rows}, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    _print_table(rows, scale)
    return 0


def _print_table(rows: list[dict], scale: float = 1.0) -> None:
    from rich.table import Table

    from margintheory.presentation.report import make_console

    console = make_console()
    at = "" if scale == 1 else f"; times at --scale {scale:g}, not the paper's size"
    table = Table(title=f"recipes (margintheory reproduce NAME; --list --json for the settings and claims{at})")
    table.add_column("recipe", no_wrap=True)
    for column in ("experiment", "runs", "CPU", "GPU", "not trainable yet"):
        table.add_column(column, overflow="fold")
    for doc in rows:
        gpu = sum(r["hardware"] == "gpu" for r in doc["runs"])
        runs = ", ".join(f"{r['label']}" + (" (gpu)" if r["hardware"] == "gpu" else "") for r in doc["runs"]) \
            if len(doc["runs"]) <= 3 else f"{len(doc['runs'])} runs" + (f", {gpu} gpu" if gpu else "")
        waiting = ", ".join(doc["waiting_for"]) or "-"
        table.add_row(doc["name"], doc["where"].split(" (")[0], runs, doc["estimate_cpu"]["short"],
                      doc["estimate_gpu"]["short"], waiting)
    console.print(table)
    console.print("CPU: this project's 2-core machine, from measured steps per second (margintheory/data/"
                  "reproduce_timings.json, written by benchmarks/bench_reproduce.py --calibrate); GPU: not measured, "
                  "no GPU has been available. Runs marked (gpu) are planned for a GPU at the paper's size "
                  "(docs/reproductions.md).",
                  highlight=False)
