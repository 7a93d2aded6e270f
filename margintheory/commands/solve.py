"""``margintheory solve``: an independent numeric answer to "what is the max margin for (p, k)?" with a bracket.

Wiring only: the flags become a problem object and :class:`~margintheory.verification.solving.SolveOptions`, and
:func:`margintheory.verification.solving.solve` does the rest (single-neuron bracket, class weights, column
generation, the smallest widths); every flag-specific message is here.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import replace

from margintheory.commands._options import byte_size, nonneg_int, positive_int
from margintheory.core.checks import VerificationResult
from margintheory.core.problems import ModularAddition
from margintheory.errors import InputError
from margintheory.presentation.report import emit
from margintheory.runtime.budget import DEFAULT_MAX_MEMORY
from margintheory.runtime.process import say

SUMMARY_FIELDS = ["lower_bound", "upper_bound", "upper_bound_exactness", "upper_bound_assumes", "upper_bound_certified",
                  "relative_gap", "rounds",
                  "width_per_frequency", "lower_bound_width", "lower_bound_width_per_frequency",
                  "width_lower_bound_exactness", "width_lower_bound_applies", "theorem_width",
                  "theorem_width_per_frequency", "family", "solver", "uniform_dual_bound"]
#: what each computation is called in the messages about options it does not use
LABELS = {"min-width": "--min-width without --search (no LP, no random start)",
          "max-width": "--max-width (the smallest family network pruned; no column generation, no random start)",
          "single-neuron": "--single-neuron", "column-generation": "column generation",
          "min-width-search": "column generation"}


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "solve",
        help="numeric max margin for (p, k): certified single-neuron bracket or column-generation LP",
        description="Compute the max margin numerically, independently of the proof: a certified bracket "
        "[lower, upper] for the single-neuron problem (--single-neuron) or the network-level LP solved by column "
        "generation from random neurons. Exit codes: 0 verified, 1 refuted, 2 bad input or solver failure.",
    )
    parser.add_argument("--p", type=int, required=True, help="modulus p (integer >= 3)")
    parser.add_argument("--k", type=int, required=True, help="number of inputs k (integer >= 1)")
    parser.add_argument("--single-neuron", action="store_true", help="bracket the single-neuron problem only")
    parser.add_argument("--weights", metavar="FILE.npz",
                        help="with --single-neuron: class weights q (p^k,) over the inputs in row-major order of "
                        "(a_1..a_k) and tau (p^k, p) over the wrong labels (default: uniform); proved when "
                        "translation-invariant (q constant, tau[x, y(x)+d] depending on d only), else certified")
    parser.add_argument("--max-width", type=positive_int, metavar="M",
                        help="the smallest max-margin network known, pruned to at most M neurons by backward "
                        "elimination (the margin LP re-solved per neuron dropped; no column generation); a pruned "
                        "network's margin is reported, not judged (below the proved minimum width no network reaches "
                        "gamma*: the verdict is then not-applicable)")
    parser.add_argument("--min-width", action="store_true",
                        help="the smallest max-margin network known (exact phase measures per frequency), with the "
                        "proved lower bound on the width and the theorem's width")
    parser.add_argument("--search", action="store_true",
                        help="with --min-width (not with --max-width): also run column generation (the network LP "
                        "from random neurons, an independent bracket, reported as extra rows) before building and "
                        "verifying the smallest family; without it --min-width builds and verifies the family only")
    parser.add_argument("--pricing", default=None, choices=("fourier", "sos"),
                        help="column-generation pricing: exact closed form per frequency (default for odd p; it "
                        "needs odd p) or the SOS bracket (default for even p); column generation only")
    parser.add_argument("--seed", type=nonneg_int, default=None,
                        help="seed of every random start (default 0); column generation and --single-neuron")
    parser.add_argument("--time-limit", type=float, default=None, metavar="SEC", help="overall time limit")
    parser.add_argument("--sdp-solver", default=None, choices=("CLARABEL", "SCS"),
                        help="SOS solver (default CLARABEL); column generation and --single-neuron")
    parser.add_argument("--max-memory", type=byte_size, default=DEFAULT_MAX_MEMORY, metavar="BYTES",
                        help="memory budget of the solvers, e.g. 2G (default 2 GiB); larger jobs are refused up front")
    parser.add_argument("--json", action="store_true", help="print one JSON object (verdict + checks)")
    parser.add_argument("--out", metavar="FILE", help="save the network found (.npz or .safetensors, by suffix)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    result = solve_result(args)
    if result.fields.get("network_file"):
        say(f"wrote {result.fields['network_file']}")
    return emit(result, args.json, SUMMARY_FIELDS)


def solve_result(args: argparse.Namespace) -> VerificationResult:
    """The computation of ``margintheory solve`` for the parsed ``args``: :func:`margintheory.verification.solving.
    solve` on the options the flags give."""
    from margintheory.verification.solving import METHOD_OPTIONS, solve

    problem = ModularAddition(args.p, args.k)
    options = solve_options(args)
    with _progress(sys.stderr.isatty() and options.used() == METHOD_OPTIONS["column-generation"]) as report:
        return solve(problem, options if report is None else replace(options, progress=report))


def solve_options(args: argparse.Namespace):  # noqa: ANN201 - a SolveOptions
    """The library's options for the flags, every combination that does not apply refused in the flags' terms."""
    from margintheory.verification.solving import METHOD_OPTIONS, SolveOptions

    if args.time_limit is not None and not args.time_limit > 0:
        raise InputError(f"--time-limit must be positive, got {args.time_limit}")
    if args.single_neuron and (args.max_width or args.min_width):
        raise InputError("--max-width / --min-width apply to the network problem, not to --single-neuron")
    if args.max_width and args.p % 2 == 0:
        raise InputError("--max-width needs odd p: it prunes a phase-measure family network, and those are "
                         "max-margin for odd p only (for even p the closed form gamma* does not apply)")
    if args.overwrite and args.out is None:
        raise InputError("--overwrite applies to the --out file; no --out was given")
    if args.weights is not None and not args.single_neuron:
        raise InputError("--weights applies to --single-neuron (the class-weighted single-neuron problem)")
    if args.search and not args.min_width:
        raise InputError("--search applies to --min-width (solve without --min-width is column generation already)")
    if args.search and args.max_width:
        raise InputError("--search applies to --min-width without --max-width (--max-width prunes the smallest family "
                         "network and runs no column generation)")
    method = ("single-neuron" if args.single_neuron else "max-width" if args.max_width else
              "min-width" if args.min_width else "column-generation")
    kind = "min-width-search" if method == "min-width" and args.search else method
    if kind in ("column-generation", "min-width-search") and args.pricing == "fourier" and args.p % 2 == 0:
        raise InputError(f"--pricing fourier needs odd p (the closed form does not price the real frequency p/2); "
                         f"p = {args.p} is priced by --pricing sos, the default for even p")
    for name in ("pricing", "seed", "sdp_solver"):
        if getattr(args, name) is not None and name not in METHOD_OPTIONS[kind]:
            raise InputError(f"--{name.replace('_', '-')} does not apply to {LABELS[kind]}")
    return SolveOptions(method=method, max_width=args.max_width, search=args.search, weights=args.weights,
                        pricing=args.pricing, seed=args.seed, sdp_solver=args.sdp_solver, time_limit=args.time_limit,
                        max_memory=args.max_memory, out=args.out, overwrite=args.overwrite)


@contextlib.contextmanager
def _progress(enabled: bool):
    """A rich status line on stderr updated every column-generation round (nothing when ``enabled`` is false:
    stderr is not a terminal)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(file=sys.stderr), transient=False, redirect_stdout=False,
                  redirect_stderr=False) as prog:
        task = prog.add_task("column generation: starting", total=None)

        def report(rec) -> None:
            gap = (rec.priced_upper - rec.lp_value) / rec.lp_value if rec.lp_value > 0 else float("inf")
            prog.update(task, description=f"round {rec.round}: LP {rec.lp_value:.12g}  priced <= "
                        f"{rec.priced_upper:.12g}  gap {gap:.2e}  orbits {rec.orbits} (+{rec.added})")

        yield report
