"""``margintheory train [TASK]``: train a task's network (modular addition by default; ``parity``, ``group``,
``cogo``) and save everything.

Wiring only: the flags become a problem object and a :class:`~margintheory.training.config.TrainConfig`; the trainer
is :mod:`margintheory.training.trainer`, the figures :mod:`margintheory.training.figures` and
:mod:`margintheory.training.task_figures`.  Writes into ``--out``: ``network.npz`` (final weights, the task's
documented layout), ``initial.npz`` (weights at initialization), ``checkpoint.npz`` (resumable state),
``history.csv`` / ``history.json`` and the task's figures (PNG and PDF), and says so: one line ``wrote FILE`` on
stderr each.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from margintheory.backends.training_step import ACTIVATIONS
from margintheory.commands._options import (
    add_backend_options,
    add_engine_options,
    engine_time_limit,
    nonneg_int,
    positive_int,
    selected_backend,
)
from margintheory.core import theory
from margintheory.core.groups import GROUP_NAMES_SHORT
from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, Problem, SparseParity
from margintheory.errors import InputError
from margintheory.runtime.budget import require
from margintheory.runtime.process import _stderr_is_terminal, say
from margintheory.training.metrics import SPARSE_THRESHOLD
from margintheory.training.objective import REGULARIZERS
from margintheory.training.optim import OPTIMIZERS, SCHEDULES
from margintheory.training.tasks import TRAINABLE

MODULAR = "modular-addition"
#: the options that name a task's size, and which task uses which
SIZE_OPTIONS = {MODULAR: ("p", "k"), "parity": ("n", "k"), "group": ("group",), "cogo": ("d",)}

#: default time limit of a training run: a day (runs are resumable and show their progress and remaining time)
TRAIN_MAX_SECONDS = 86400.0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "train",
        help="train a task's network and record margin and structure statistics",
        description="Train the network of a TASK -- modular addition (default; --p, --k), parity (--n, --k: "
        "sparse parity on {+-1}^n, Morwani et al. Thm 7.8), group (--group S4, D12, C4xC4, perm:..., a table: "
        "composition, Thm 7.9) "
        "or cogo (--d: Tian's quadratic network on Z_d with the projected MSE) -- on cross-entropy + lambda * "
        "||theta||_{2,k+1} (the papers' objective; cogo: the projected MSE) with analytic numpy gradients (or JAX "
        "autodiff and optax with --backend jax, on a GPU with --device gpu); record per step the loss, accuracy, "
        "normalized margin / gamma* and the task's structure statistics (Fourier power, irrep power, weight on "
        "the parity's support); write the network, history and figures to --out. --activation relu trains the "
        "ReLU network of the papers' comparisons. Interrupt with Ctrl-C and rerun with --resume to continue "
        "without losing work.",
    )
    add_task_options(parser)
    parser.add_argument("--width", type=positive_int, required=True,
                        help="number of neurons m (theorem: 2^(2k-1)(p-1)/2 suffice for modular addition)")
    parser.add_argument("--activation", choices=ACTIVATIONS, default="power", help="power = z^k, the task's "
                        "polynomial network (default); relu = ReLU (no max-margin claims: analyse its statistics)")
    parser.add_argument("--output-scale", type=float, default=None,
                        help="cogo: the factor s of the projected MSE ||P1perp(s f - e_y)||^2 (default 1/(2d), Tian's "
                        "Eq. 1; 1 is Tian's code)")
    parser.add_argument("--steps", type=int, default=3000, help="optimizer steps (default %(default)s)")
    add_objective_options(parser)
    parser.add_argument("--batch-size", type=positive_int, default=None, help="mini-batch size (default: full batch)")
    parser.add_argument("--train-fraction", type=float, default=1.0,
                        help="fraction of the task's points used for training; the rest is the test set "
                        "(default %(default)s)")
    parser.add_argument("--seed", type=nonneg_int, default=0, help="random seed (default %(default)s)")
    parser.add_argument("--init-scale", type=float, default=None,
                        help="init std (default 1/sqrt(p); parity 1/sqrt(n); group 1/sqrt(|G|); cogo 1/sqrt(d))")
    parser.add_argument("--log-every", type=positive_int, default=1,
                        help="record history every N steps (default %(default)s)")
    parser.add_argument("--checkpoint-every", type=positive_int, default=500,
                        help="checkpoint every N steps (default %(default)s)")
    parser.add_argument("--out", default="train_out", help="output directory (default %(default)s)")
    parser.add_argument("--resume", action="store_true",
                        help="continue from OUT/checkpoint.npz (refused when there is none; same settings; bit-for-bit "
                        "the uninterrupted run. A larger --steps extends the run: the cosine schedule is then "
                        "recomputed for the new total)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a previous run in --out (without it, a directory holding a run is refused)")
    add_engine_options(parser, max_seconds=TRAIN_MAX_SECONDS)
    add_backend_options(parser, dtype=True)
    parser.add_argument("--no-figures", action="store_true", help="skip the figures")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar on a terminal, and no progress line every 30 s on a stderr that is "
                        "not a terminal (a log file)")
    parser.set_defaults(func=run)
    return parser


def add_objective_options(parser: argparse.ArgumentParser) -> None:
    """The regularizer, the optimizer and the learning-rate schedule."""
    parser.add_argument("--lambda", dest="lam", type=float, default=1e-3,
                        help="regularization strength lambda (default %(default)s)")
    parser.add_argument("--regularizer", choices=REGULARIZERS, default="norm",
                        help="norm = lambda ||theta||_{2,k+1} (papers); norm-power = lambda ||theta||^(k+1); "
                        "l2 = plain weight decay as a penalty (PyTorch's coupled weight_decay); none = no "
                        "regularizer (default: %(default)s)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="adam",
                        help="gd (full batch), sgd (gd on mini-batches: needs --batch-size), adam, adamw "
                        "(default %(default)s)")
    parser.add_argument("--weight-decay", type=float, default=None, help="decoupled decay (adamw only; default 0)")
    parser.add_argument("--lr", type=float, default=5e-3, help="peak learning rate (default %(default)s)")
    parser.add_argument("--schedule", choices=SCHEDULES, default="cosine", help="default %(default)s")
    parser.add_argument("--warmup", type=int, default=10, help="linear warm-up steps (default %(default)s)")
    parser.add_argument("--milestones", type=positive_int, nargs="*", default=None,
                        help="steps at which the 'doubling' schedule doubles the learning rate")


def add_task_options(parser: argparse.ArgumentParser) -> None:
    """TASK (or ``--task``) and the options that give its size."""
    parser.add_argument("task_name", nargs="?", choices=TRAINABLE, metavar="TASK",
                        help=f"the task: {', '.join(TRAINABLE)} (default {MODULAR}); the same as --task")
    parser.add_argument("--task", default=None, choices=TRAINABLE, help=f"the task (default {MODULAR})")
    parser.add_argument("--p", type=int, default=None, help="modular addition: modulus p")
    parser.add_argument("--k", type=int, default=None,
                        help="modular addition: number of inputs k; parity: |S| (both: the activation degree)")
    parser.add_argument("--n", type=int, default=None, help="parity: number of input bits n")
    parser.add_argument("--group", default=None, help="group: " + GROUP_NAMES_SHORT)
    parser.add_argument("--d", type=int, default=None, help="cogo: the order d of Z_d")


def train_problem(args: argparse.Namespace) -> Problem:
    """The problem object the task and its size options describe; an option of another task is refused."""
    first, flag = args.task_name, args.task
    if first is not None and flag is not None and first != flag:
        raise InputError(f"the task is given twice: {first!r} and --task {flag}")
    task = first or flag or MODULAR
    for other, names in SIZE_OPTIONS.items():
        for name in names:
            if getattr(args, name) is not None and name not in SIZE_OPTIONS[task]:
                raise InputError(f"--{name} is not an option of train {task} (it belongs to train {other})")
    missing = [f"--{name}" for name in SIZE_OPTIONS[task] if getattr(args, name) is None]
    if missing:
        raise InputError(f"train {task} needs {' and '.join(missing)}")
    if task == MODULAR:
        return ModularAddition(args.p, args.k)
    if task == "parity":
        return SparseParity(args.n, args.k)
    if task == "group":
        return GroupComposition(args.group)
    return CoGO(args.d)


def run(args: argparse.Namespace) -> int:
    from margintheory.training.rundir import claim_run_dir, locked_run_dir, previous_run
    from margintheory.training.tasks import training_task
    from margintheory.training.trainer import TrainConfig, estimate_training_run, network_of

    if args.steps < 0:
        raise InputError(f"--steps must be >= 0, got {args.steps}")
    if args.resume and args.overwrite:
        raise InputError("--resume and --overwrite exclude each other")
    if args.resume and not (Path(args.out) / "checkpoint.npz").exists():
        where = "does not exist" if not Path(args.out).exists() else "holds no checkpoint.npz"
        raise InputError(f"--resume: {args.out} {where}, so there is no run to continue; drop --resume to start one")
    _reject_options_that_do_not_apply(args)
    problem = train_problem(args)
    task = training_task(problem)
    backend = selected_backend(args)
    cfg = TrainConfig(
        width=args.width, steps=args.steps, lam=args.lam, regularizer=args.regularizer,
        optimizer=args.optimizer, lr=args.lr, schedule=args.schedule, warmup=args.warmup,
        milestones=list(args.milestones or []), weight_decay=args.weight_decay or 0.0, batch_size=args.batch_size,
        train_fraction=args.train_fraction, seed=args.seed, init_scale=args.init_scale, log_every=args.log_every,
        checkpoint_every=args.checkpoint_every, backend=backend.name, dtype=args.dtype or "float64",
        activation=args.activation, output_scale=args.output_scale,
    )
    cfg.check_points(task.n_points)
    require(estimate_training_run(network_of(cfg, task), task.n_points, cfg.width, cfg.steps,
                                  batch_size=cfg.batch_size, log_every=cfg.log_every, figures=not args.no_figures,
                                  backend=backend.name, device=backend.device),
            args.max_memory, engine_time_limit(args))
    with locked_run_dir(args.out) as out:
        held = previous_run(out)
        if held is not None and not (args.resume or args.overwrite):
            raise InputError(f"{args.out} already holds {held}; pass --resume to continue it, --overwrite to "
                             "replace it, or choose another --out")
        claim_run_dir(out, resume=args.resume, overwrite=args.overwrite)
        return _train_into(problem, cfg, out, args, backend.device)


def _reject_options_that_do_not_apply(args: argparse.Namespace) -> None:
    """A flag that the chosen optimizer or schedule does not use is refused, not silently ignored."""
    if args.weight_decay is not None and args.optimizer != "adamw":
        raise InputError(f"--weight-decay applies to --optimizer adamw only, not {args.optimizer}")
    if args.milestones is not None and args.schedule != "doubling":
        raise InputError(f"--milestones applies to --schedule doubling only, not {args.schedule}")


def _train_into(problem: Problem, cfg, out: Path, args: argparse.Namespace, device: str) -> int:  # noqa: ANN001
    from margintheory.training.task_figures import training_figures
    from margintheory.training.trainer import train, write_history

    try:
        with progress_bar(cfg.steps, enabled=not args.no_progress and _stderr_is_terminal(),
                          plain=not args.no_progress) as report:
            result = train(problem, cfg, checkpoint=out / "checkpoint.npz", resume=args.resume, progress=report,
                           device=device)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: the trainer saved the current step
        from margintheory.runtime.process import add_interrupt_note

        add_interrupt_note(exc, "rerun the same command with --resume to continue")
        raise
    result.network.save(out / "network.npz")
    result.initial.save(out / "initial.npz")
    write_history(out, result)
    written = [] if args.no_figures else training_figures(out)
    _summary(problem, result, device)
    for name in ("network.npz", "initial.npz", "checkpoint.npz", "history.csv", "history.json"):
        say(f"wrote {out / name}")  # one line on stderr per file written
    for figure in written:
        say(f"wrote {figure}")
    return 0


def _summary(problem: Problem, result, device: str) -> None:  # noqa: ANN001 - a TrainResult
    """The run in two lines on stdout: what was trained, then the last row's margin and statistics."""
    from rich.console import Console

    from margintheory.training.tasks import training_task

    cfg, last, task = result.config, result.history[-1], training_task(problem)
    console = Console(highlight=False)
    what = f"p={cfg.p} k={cfg.k}" if isinstance(problem, ModularAddition) else f"{problem.task} {task.label()}"
    act = " ReLU" if cfg.activation == "relu" else ""
    console.print(f"trained {what} m={cfg.width}{act} for {cfg.steps} steps in {result.seconds:.1f} s "
                  f"(CPU {result.cpu_seconds:.1f} s; {cfg.backend} {cfg.dtype} on the {device})")
    if cfg.activation == "relu":
        ratio = "no gamma*: the max-margin theorems are about polynomial networks"
    elif result.gamma_star is None:
        ratio = "gamma* not applicable" + (" (even p)" if isinstance(problem, ModularAddition) else "")
    else:
        ratio = _ratio_text(last["ratio"])
    points = f"all {cfg.p}^{cfg.k} points" if isinstance(problem, ModularAddition) else f"all {task.n_points} points"
    text = (f"normalized margin {last['normalized_margin']:.12g} ({ratio}; float, the float64 minimum over "
            f"{points}, not a verdict: 'margintheory analyze' decides); train acc {last['train_acc']:.4f}; "
            + (f"test acc {last['test_acc']:.4f}; " if cfg.train_fraction < 1 else ""))
    if isinstance(problem, ModularAddition | CoGO):
        p = problem.p if isinstance(problem, ModularAddition) else problem.d
        text += (f"mean max power {last['mean_max_power']:.4f}; frequencies covered "
                 f"{last['frequencies_covered']}/{len(theory.frequencies(p))} (by a sparse neuron: every vector's "
                 f"max power >= {SPARSE_THRESHOLD:g})")
    else:
        text += "; ".join(f"{name.replace('_', ' ')} {_value(last[name])}" for name in task.history_fields)
    if isinstance(problem, CoGO):
        text = f"projected MSE {last['data_loss']:.6g} (training points); " + text
    console.print(text)


def _value(v: object) -> str:
    return f"{v:.4f}" if isinstance(v, float) else str(v)


@contextlib.contextmanager
def progress_bar(total: int, enabled: bool = True, plain: bool = False
                 ) -> Iterator[Callable[[dict[str, float], int], None] | None]:
    """A rich progress bar on stderr (loss, accuracy, margin / gamma*, Fourier power) fed by the trainer's callback;
    where it is not ``enabled`` (stderr not a terminal) and ``plain``, a line of the same on stderr every 30 s
    (:class:`margintheory.runtime.process.Heartbeat`)."""
    if not enabled:
        if not plain:
            yield None
            return
        from margintheory.runtime.process import Heartbeat

        with Heartbeat("margintheory train", f"step 0/{total}") as beat:
            def line(row: dict[str, float], target: int) -> None:
                beat.update(f"step {int(row['step'])}/{total}: {_row_info(row)}")

            yield line
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(TextColumn("[bold]train"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
                  console=Console(file=sys.stderr), transient=False, redirect_stdout=False,
                  redirect_stderr=False) as prog:
        task = prog.add_task("train", total=total, completed=0, info="")

        def report(row: dict[str, float], target: int) -> None:
            prog.update(task, completed=row["step"], info=_row_info(row))

        yield report


def _row_info(row: dict[str, float]) -> str:
    return (f"loss {row['loss']:.3e}  acc {row['train_acc']:.3f}  margin/gamma* {row['ratio']:.4f}  "
            f"max-power {row['mean_max_power']:.3f}")


def _ratio_text(ratio: float) -> str:
    """``gamma* (1 - 2.0e-11)`` near 1 (six digits would print 1.000000 for a network that a check refutes),
    ``0.853421 x gamma*`` otherwise."""
    if math.isfinite(ratio) and abs(ratio - 1) < 1e-4:
        return f"= gamma* (1 {'-' if ratio < 1 else '+'} {abs(ratio - 1):.2g})"
    return f"{ratio:.6f} x gamma*"
