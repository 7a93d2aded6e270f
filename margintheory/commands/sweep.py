"""``margintheory sweep verify|solve|train|report``: grids of runs on dask.distributed, into a Parquet store.

Wiring only: the flags become a grid (:mod:`margintheory.sweep.grid`), the cells run on an executor
(:mod:`margintheory.execution.executors`: a LocalCluster, a running scheduler, or this process) through
:func:`margintheory.sweep.runner.run_sweep` into a :class:`margintheory.sweep.store.ResultStore`, and
:mod:`margintheory.sweep.report` summarises.  Value lists: ``5,7,11``, inclusive ranges ``3:31`` and ``3:31:2``, or
both (``3:11,13``); ``--odd`` / ``--primes`` keep the odd / prime values of ``--p``.
Exit codes, those of the sweep's result (:func:`margintheory.sweep.report.sweep_result`), in the text output as in the
JSON: 0 every cell verified (cells outside the theorem's hypothesis, not applicable, are informational), 1 some cell
refuted (or, where every cell is not applicable, one of them has a failed check, as one ``verify`` would exit), 2 bad
input or some cell failed (its error is in the store, the cell named in the notes).
Float options are checked here as the single commands check them (``--rtol`` in [0, 1) as ``verify`` and
``analyze``; ``--lr`` positive and ``--lambda`` non-negative, finite, as the trainer requires), so that a value that
no cell could use (``nan``, ``inf``, ``-1``) is one line and exit 2 before any cell runs.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any

from margintheory.commands._options import (
    FAMILY_CHOICES,
    add_engine_options,
    byte_size,
    engine_budget,
    nonneg_int,
    positive_float,
    positive_int,
)
from margintheory.errors import InputError
from margintheory.sweep.grid import MAX_CELLS

FAMILIES = FAMILY_CHOICES
METHODS = ("column-generation", "single-neuron", "min-width")
DEFAULT_STORE = "sweep_store"


#: most values one list may name before the filters (--odd, --primes) apply: ten times the largest grid, so a
#: typo such as 3:100000000 is refused from its length alone, before any list is built
MAX_AXIS_VALUES = 10 * MAX_CELLS


def _values(text: str, convert: Callable[[str], Any], what: str) -> list[Any]:
    out: list[Any] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if ":" in part and convert is int:
                bounds = [int(b) for b in part.split(":")]
                if len(bounds) not in (2, 3) or (len(bounds) == 3 and bounds[2] < 1):
                    raise ValueError
                span = range(bounds[0], bounds[1] + 1, bounds[2] if len(bounds) == 3 else 1)
                if len(out) + len(span) > MAX_AXIS_VALUES:
                    raise argparse.ArgumentTypeError(
                        f"{text!r} names {len(out) + len(span)} values, more than {MAX_AXIS_VALUES} (a sweep has at "
                        f"most {MAX_CELLS} cells): narrow the range or split the sweep")
                out.extend(span)
            else:
                out.append(convert(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a list of {what}: {text!r} (e.g. 5,7,11 or 3:31 or 3:31:2)") \
                from None
    return list(dict.fromkeys(out))


def int_values(text: str) -> list[int]:
    """argparse type: ``5,7,11``, ``3:31`` (inclusive), ``3:31:2`` or a mix."""
    return _values(text, int, "integers")


def _bounded_int_values(text: str, least: int, what: str) -> list[int]:
    values = int_values(text)
    bad = [v for v in values if v < least]
    if bad:
        raise argparse.ArgumentTypeError(f"{what} must be >= {least}, got {bad[0]} in {text!r}")
    return values


def positive_int_values(text: str) -> list[int]:
    """argparse type: integers >= 1 (numbers of inputs k, widths), as the single commands require: a value no cell
    could use is refused before any cluster starts."""
    return _bounded_int_values(text, 1, "each value")


def nonneg_int_values(text: str) -> list[int]:
    """argparse type: integers >= 0 (seeds)."""
    return _bounded_int_values(text, 0, "each value")


def float_values(text: str) -> list[float]:
    """argparse type: ``1e-3,5e-3`` (finite numbers: ``nan`` and ``inf`` are refused)."""
    values = _values(text, float, "numbers")
    bad = [v for v in values if not math.isfinite(v)]
    if bad:
        raise argparse.ArgumentTypeError(f"not a finite number: {bad[0]} in {text!r}")
    return values


def positive_float_values(text: str) -> list[float]:
    """argparse type: finite numbers > 0 (learning rates, as the trainer's schedule requires)."""
    values = float_values(text)
    bad = [v for v in values if not v > 0]
    if bad:
        raise argparse.ArgumentTypeError(f"must be positive, got {bad[0]:g} in {text!r}")
    return values


def nonneg_float_values(text: str) -> list[float]:
    """argparse type: finite numbers >= 0 (regularization strengths, as the trainer requires)."""
    values = float_values(text)
    bad = [v for v in values if not v >= 0]
    if bad:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {bad[0]:g} in {text!r}")
    return values


def family_values(text: str) -> list[str]:
    """argparse type: families of verify, comma-separated."""
    names = _values(text, str, "families")
    bad = [n for n in names if n not in FAMILIES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown family {bad[0]!r} (choose from {', '.join(FAMILIES)})")
    return names


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "sweep",
        help="run verify / solve / train over a grid on dask.distributed; results in a Parquet store",
        description="Run a grid of verify, solve or train cells on dask.distributed (a LocalCluster of --workers "
        "processes, or the running cluster at --scheduler) into a Parquet store that resumes: one file per finished "
        "cell; a rerun skips finished cells. 'sweep report DIR' summarises a store and draws its figures. Exit codes: "
        "0 every cell verified (not-applicable cells are informational), 1 some cell refuted, 2 bad input or some "
        "cell failed.",
    )
    inner = parser.add_subparsers(dest="sweep_command", metavar="{verify,solve,train,report}")
    inner.required = True
    for build in (_verify_parser, _solve_parser, _train_parser, _report_parser):
        build(inner)
    return parser


def _grid_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--p", type=int_values, required=True, metavar="LIST", help="moduli, e.g. 5,7,11 or 3:199")
    parser.add_argument("--odd", action="store_true", help="keep the odd values of --p")
    parser.add_argument("--primes", action="store_true", help="keep the prime values of --p")
    parser.add_argument("--k", type=positive_int_values, required=True, metavar="LIST",
                        help="numbers of inputs, e.g. 2:6")


def _run_options(parser: argparse.ArgumentParser, *, budget: bool = True) -> None:
    g = parser.add_argument_group("where the cells run and where the results go")
    g.add_argument("--store", default=DEFAULT_STORE, metavar="DIR",
                   help="results store: a Parquet dataset, one file per finished cell (default %(default)s)")
    g.add_argument("--workers", type=nonneg_int, default=None, metavar="N",
                   help="a LocalCluster of N worker processes (default: one per core); 0 runs the cells in this "
                   "process, one after another")
    g.add_argument("--threads", type=positive_int, default=1, metavar="T",
                   help="threads per LocalCluster worker (default %(default)s)")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="use the running dask cluster at ADDRESS (e.g. tcp://10.0.0.5:8786) instead of a LocalCluster")
    g.add_argument("--retries", type=nonneg_int, default=1,
                   help="times the scheduler reruns a cell that raised an unexpected exception or lost its worker "
                   "(default %(default)s; expected errors are recorded at once)")
    g.add_argument("--retry-failed", action="store_true", help="rerun the cells recorded as failed in the store")
    g.add_argument("--json", action="store_true", help="print the sweep as one JSON object (one check per cell)")
    if budget:
        add_engine_options(parser)


def _verify_parser(inner: argparse._SubParsersAction) -> None:
    parser = inner.add_parser("verify", help="margintheory verify over a grid of (p, k) and families",
                              description="One 'margintheory verify' (modular addition) per cell.")
    _grid_options(parser)
    parser.add_argument("--family", type=family_values, default=["lemma-c18"], metavar="LIST",
                        help=f"constructions, comma-separated: {', '.join(FAMILIES)} (default lemma-c18)")
    parser.add_argument("--exact", action="store_true", help="check in exact arithmetic (small p, k)")
    parser.add_argument("--no-certificate", action="store_true", help="skip the solver leg (the upper bound U)")
    parser.add_argument("--rtol", type=float, default=None, help="relative tolerance of the 'equals gamma*' claims")
    _run_options(parser)
    parser.set_defaults(func=run_verify)


def _solve_parser(inner: argparse._SubParsersAction) -> None:
    parser = inner.add_parser("solve", help="margintheory solve over a grid of (p, k) and seeds",
                              description="One 'margintheory solve' per cell (the same computation and checks).")
    _grid_options(parser)
    parser.add_argument("--seeds", type=nonneg_int_values, default=[0], metavar="LIST", help="seeds (default 0)")
    parser.add_argument("--method", choices=METHODS, default="column-generation",
                        help="column generation (default), the single-neuron bracket, or the smallest width")
    parser.add_argument("--pricing", default=None, choices=("fourier", "sos"),
                        help="column-generation pricing (default: solve's, fourier for odd p and sos for even p); "
                        "--method column-generation only")
    parser.add_argument("--time-limit", type=positive_float, default=None, metavar="SEC",
                        help="time limit of each cell")
    _run_options(parser, budget=False)
    parser.add_argument("--max-memory", type=byte_size, default=None, metavar="BYTES",
                        help="memory budget of each cell (default 2 GiB)")
    parser.set_defaults(func=run_solve)


def _train_parser(inner: argparse._SubParsersAction) -> None:
    parser = inner.add_parser("train", help="train and analyse over a grid of (p, k), widths, seeds, lr, lambda",
                              description="One training run per cell (margintheory train's trainer), then the "
                              "analysis of the trained network (ratio to gamma*; its verdict with --rtol).")
    _grid_options(parser)
    parser.add_argument("--width", type=positive_int_values, required=True, metavar="LIST", help="widths m, e.g. 32,64")
    parser.add_argument("--seeds", type=nonneg_int_values, default=[0], metavar="LIST", help="seeds, e.g. 0,1,2")
    parser.add_argument("--lr", type=positive_float_values, default=[5e-3], metavar="LIST", help="learning rates")
    parser.add_argument("--lambda", dest="lam", type=nonneg_float_values, default=[1e-3], metavar="LIST",
                        help="regularization strengths lambda")
    parser.add_argument("--steps", type=nonneg_int, default=3000, help="optimizer steps (default %(default)s)")
    parser.add_argument("--rtol", type=float, default=None,
                        help="relative tolerance of 'margin = gamma*' for the trained network's verdict (default: "
                        "analyze's, 1e-6; 0 checks at the float64 error bound)")
    _run_options(parser)
    parser.set_defaults(func=run_train)


def _report_parser(inner: argparse._SubParsersAction) -> None:
    parser = inner.add_parser("report", help="summary table and figures of a results store",
                              description="Summarise a sweep's store: a table per command, k and variant, and the "
                              "figures (ratio to gamma* vs p, width vs k against 2^(2k-1), seconds vs p^k) as PNG "
                              "and PDF.")
    parser.add_argument("store", metavar="DIR", help="the results store (--store of the sweep)")
    parser.add_argument("--figures", metavar="DIR", help="where the figures go (default DIR/_report)")
    parser.add_argument("--no-figures", action="store_true", help="print the table only")
    parser.add_argument("--json", action="store_true", help="print the store as one JSON object (one check per cell)")
    parser.set_defaults(func=run_report)


def _moduli(args: argparse.Namespace) -> list[int]:
    from margintheory.sweep.grid import odd_values, prime_values

    ps = odd_values(args.p) if args.odd else list(args.p)
    return prime_values(ps) if args.primes else ps


def _check_rtol(args: argparse.Namespace) -> None:
    """``--rtol`` as ``verify`` and ``analyze`` check it (a value no cell could use is refused before any runs)."""
    if args.rtol is not None and not (0 <= args.rtol < 1):
        raise InputError(f"--rtol must be in [0, 1), got {args.rtol}")


def _budget(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in engine_budget(args).items() if v is not None}


def run_verify(args: argparse.Namespace) -> int:
    from margintheory.sweep.grid import grid_cells

    _check_rtol(args)
    fixed: dict[str, Any] = {"certificate": not args.no_certificate}
    if args.exact:
        fixed["exact"] = True
    if args.rtol is not None:
        fixed["rtol"] = args.rtol
    cells = grid_cells("verify", {"k": args.k, "family": args.family, "p": _moduli(args)}, fixed, _budget(args))
    return _run_grid(args, cells, None)


def run_train(args: argparse.Namespace) -> int:
    from margintheory.sweep.grid import grid_cells

    _check_rtol(args)
    fixed: dict[str, Any] = {"steps": args.steps}
    if args.rtol is not None:
        fixed["rtol"] = args.rtol
    axes = {"k": args.k, "width": args.width, "lr": args.lr, "lambda": args.lam, "p": _moduli(args),
            "seed": args.seeds}
    return _run_grid(args, grid_cells("train", axes, fixed, _budget(args)), None)


def run_solve(args: argparse.Namespace) -> int:
    from margintheory.sweep.grid import grid_cells

    fixed: dict[str, Any] = {"method": args.method}
    if args.method == "min-width" and args.seeds != [0]:
        raise InputError("--seeds does not apply to --method min-width (no random start)")
    if args.pricing is not None and args.method != "column-generation":
        raise InputError(f"--pricing does not apply to --method {args.method}")
    if args.pricing is not None:  # else each cell takes solve's default for its p (fourier; sos for even p)
        fixed["pricing"] = args.pricing
    # the time limit and the memory are the cell's budget, not its identity (sweep.grid): a cell that ran out of time
    # is the same cell rerun with a larger --time-limit and --retry-failed, which replaces its failed row
    budget = {name: value for name, value in (("time_limit", args.time_limit), ("max_memory", args.max_memory))
              if value is not None}
    cells = grid_cells("solve", {"k": args.k, "p": _moduli(args), "seed": args.seeds}, fixed, budget)
    return _run_grid(args, cells, solve_cell)


def solve_cell(params: dict[str, Any]):  # noqa: ANN201 - a VerificationResult
    """One ``margintheory solve`` run: :func:`margintheory.verification.solving.solve` with the cell's options (the
    library's defaults for the others; module-level, so a cluster sends it by name)."""
    from margintheory.core.problems import ModularAddition
    from margintheory.verification.solving import SolveOptions, solve

    method = params.get("method", "column-generation")
    options = {name: params[name] for name in ("pricing", "time_limit", "max_memory") if params.get(name) is not None}
    if method != "min-width":  # the direct min-width path has no random start
        options["seed"] = params.get("seed", 0)
    return solve(ModularAddition(params["p"], params["k"]), SolveOptions(method=method, **options))


def _run_grid(args: argparse.Namespace, cells: list, function: Callable | None) -> int:
    from margintheory.execution.executors import open_executor
    from margintheory.sweep.runner import run_sweep
    from margintheory.sweep.store import ResultStore

    if args.scheduler and args.workers is not None:
        raise InputError("--scheduler uses a running cluster; --workers starts a local one: give one of them")
    if args.scheduler and args.threads != 1:
        raise InputError("--threads applies to the LocalCluster of --workers; the running cluster has its own")
    _quiet_dask_logs()
    store = ResultStore(args.store)
    with open_executor(workers=args.workers, threads=args.threads, scheduler=args.scheduler, retries=args.retries,
                       worker_memory=_cell_memory(args)) as executor, \
            _progress_bar(len(cells), args.sweep_command) as update:
        try:
            summary = run_sweep(cells, store, executor, function, retry_failed=args.retry_failed,
                                on_progress=update)
        except KeyboardInterrupt as exc:
            from margintheory.runtime.process import add_interrupt_note

            add_interrupt_note(exc, "rerun the same command to run the rest (finished cells are not rerun)")
            raise
    return _finish(args, summary)


def _cell_memory(args: argparse.Namespace) -> float:
    """The memory budget of one cell (``--max-memory``; without it the single command's default, 2 GiB): what
    each worker of a LocalCluster must have room for."""
    from margintheory.runtime.budget import DEFAULT_MAX_MEMORY

    given = getattr(args, "max_memory", None)
    return float(DEFAULT_MAX_MEMORY if given is None else given)


def _quiet_dask_logs() -> None:
    """dask's informational and shutdown messages stay off the terminal (errors still show)."""
    import logging

    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.ERROR)


@contextlib.contextmanager
def _progress_bar(total: int, what: str) -> Iterator[Callable | None]:
    """A rich progress bar over the cells on stderr (running / done / failed); nothing when stderr is not a
    terminal."""
    from margintheory.runtime.process import _stderr_is_terminal

    if not _stderr_is_terminal():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(TextColumn(f"[bold]sweep {what}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=Console(file=sys.stderr), transient=True, redirect_stdout=False,
                  redirect_stderr=False) as bar:
        task = bar.add_task(what, total=total, info="")

        def update(counts) -> None:  # noqa: ANN001 - a SweepCounts
            info = f"running {counts.running}  failed {counts.failed}"
            if counts.elsewhere:
                info += f"  in another sweep {counts.elsewhere}"
            bar.update(task, completed=counts.done, info=info)

        yield update


def _finish(args: argparse.Namespace, summary) -> int:  # noqa: ANN001 - a SweepSummary
    from margintheory.presentation.report import emit, make_console
    from margintheory.runtime.process import say
    from margintheory.sweep.report import failed_lines, parameters_summary, rows_of, summary_table, sweep_result

    rows = rows_of(summary.table)
    c = summary.counts
    params = {"command": args.sweep_command, "store": str(summary.store), "grid": parameters_summary(rows)}
    result = sweep_result(rows, f"sweep {args.sweep_command}: {len(rows)} cells", params)
    if args.json:
        emit(result, True)
    else:
        console = make_console()
        console.print(summary_table(rows, f"sweep {args.sweep_command}: {summary.store}", console.width))
        console.print(f"{c.total} cells: {c.done - c.skipped} run now, {c.skipped} already in the store; "
                      f"{summary.seconds:.1f} s on {summary.executor}", highlight=False)
        for line in failed_lines(rows):
            console.print(f"failed: {line}", highlight=False, markup=False)
    failed = sum(r["verdict"] == "error" for r in rows)
    if failed:
        say(f"margintheory sweep: {failed} of {len(rows)} cells failed (errors in the store's error column; rerun "
            "with --retry-failed)")
    return result.exit_code  # the same in both outputs: 2 when a cell failed (module docstring for the others)


def run_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from margintheory.presentation.report import emit, make_console
    from margintheory.sweep.report import parameters_summary, rows_of, summary_table, sweep_result, write_figures
    from margintheory.sweep.store import ResultStore

    if not Path(args.store).is_dir():
        what = "not a directory" if Path(args.store).exists() else "no such directory"
        raise InputError(f"{args.store}: not a results store ({what})")
    figures_dir = Path(args.figures) if args.figures else None
    if figures_dir is not None and not args.no_figures and figures_dir.exists() and not figures_dir.is_dir():
        raise InputError(f"{args.figures}: --figures needs a directory, and this is not one")
    rows = rows_of(ResultStore(args.store).read())
    if not rows:
        raise InputError(f"{args.store}: the store holds no finished cell")
    written = [] if args.no_figures else write_figures(rows, args.figures or Path(args.store) / "_report")
    result = sweep_result(rows, f"results store {args.store}: {len(rows)} cells",
                          {"store": str(args.store), "grid": parameters_summary(rows)})
    if args.json:
        result.fields["figures"] = [str(p) for p in written]
        return emit(result, True)  # 2 when a cell failed (the result is incomplete)
    console = make_console()
    console.print(summary_table(rows, f"results store {args.store}", console.width))
    if written:
        console.print(f"figures: {', '.join(sorted({str(p.with_suffix('')) for p in written}))} (.png, .pdf)",
                      highlight=False, markup=False)
    return result.exit_code
