"""Steps per second of the trainers at the papers' sizes (not run by CI).

For each experiment of the papers (Morwani et al. Figs. 7.1 / 7.4 / D.1 modular addition p = 71, m = 500,
quadratic and ReLU; Fig. 7.5 (10, 4) parity, m = 40; Figs. D.2 / D.3 / 7.6 S_3, S_4, S_5; Tian's CoGO at
d = 23, 71, 127, q = 512) the trainer is run for a few steps with the paper's optimizer and batch, on the numpy and
(``--jax``) the JAX backend, and reports

* update seconds: one optimizer step (forward and backward over the batch), from a run whose only history row is
  the first;
* row seconds: the extra cost of one history row (loss, accuracies and margin over all points, the task's structure
  statistics), from a second run with a row after every step;
* the paper's run time at one row every 100 steps, and the ratio of each step to the baseline below.

The baseline is measured in the same run: one numpy step of modular addition at p = 23, k = 2, m = 176 (the
package's reproduction size).  JAX steps are timed after a first, compiling run of the same specification.

    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/bench_task_trainers.py [--jax] [--steps 20] [--only S5,cogo-127]
"""

from __future__ import annotations

import argparse
import os
import platform

from rich.console import Console
from rich.table import Table

from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, SparseParity
from margintheory.training.trainer import TrainConfig, train

GD = dict(optimizer="gd", schedule="constant", warmup=0, regularizer="norm-power")
DOUBLING_71 = dict(optimizer="gd", lr=0.05, schedule="doubling", milestones=list(range(1000, 10001, 1000)), warmup=0)
DOUBLING_S = dict(optimizer="gd", lr=0.05, schedule="doubling", warmup=0, regularizer="norm-power", lam=1e-7,
                  milestones=[200 * i for i in range(1, 14)] + [5000, 10000])
COGO = dict(lr=0.01, betas=[0.9, 0.999], schedule="constant", warmup=0, regularizer="l2", lam=5e-5,
            train_fraction=0.9)
#: name -> (problem, configuration, the paper's number of steps)
CASES = {
    "baseline p23 k2 m176": (ModularAddition(23, 2), dict(width=176), 0),
    "fig7.1 p71 m500 x^2": (ModularAddition(71, 2), dict(width=500, regularizer="norm-power", lam=1e-4,
                                                         **DOUBLING_71), 40_000),
    "fig7.1 p71 m500 relu": (ModularAddition(71, 2), dict(width=500, activation="relu", regularizer="l2", lam=1e-4,
                                                          **DOUBLING_71), 40_000),
    "fig7.5 parity (10,4) m40": (SparseParity(10, 4), dict(width=40, lr=0.1, lam=1e-3, **GD), 30_000),
    "figD.2 S3 m30": (GroupComposition("S3"), dict(width=30, **DOUBLING_S), 50_000),
    "figD.3 S4 m200": (GroupComposition("S4"), dict(width=200, **DOUBLING_S), 50_000),
    "fig7.6 S5 m2000 batch1000": (GroupComposition("S5"), dict(
        width=2000, optimizer="sgd", batch_size=1000, lr=0.05, schedule="doubling", warmup=0,
        milestones=list(range(3000, 24001, 3000)), regularizer="norm-power", lam=1e-5), 75_000),
    "cogo d23 q512": (CoGO(23), dict(width=512, **COGO), 10_000),
    "cogo d71 q512": (CoGO(71), dict(width=512, **COGO), 10_000),
    "cogo d127 q512": (CoGO(127), dict(width=512, **COGO), 10_000),
}


def seconds(problem, opts: dict, steps: int, log_every: int, backend: str) -> float:  # noqa: ANN001
    """The run's own clock (``TrainResult.seconds``: from before the first history row to the end, without the
    setup) for ``steps`` updates with a history row every ``log_every`` steps and at the end."""
    cfg = TrainConfig(**{**opts, "steps": steps, "log_every": log_every, "checkpoint_every": 10**9,
                         "backend": backend})
    return train(problem, cfg).seconds


def measure(name: str, steps: int, backend: str, repeats: int = 2) -> tuple[float, float]:
    """``(update, row)`` seconds: with ``T(N, every)`` the clock of ``N`` steps and a row every ``every`` (the
    fastest of ``repeats``; a run also records its first and last rows), ``u = (T(2N, 2N) - T(N, N)) / N`` and
    ``r = (T(N, 1) - T(N, N)) / (N - 1)``."""
    problem, opts, _ = CASES[name]
    if backend == "jax":
        seconds(problem, opts, 2, 1, backend)  # compile the step functions
        seconds(problem, opts, 2, 10**9, backend)

    def clock(n: int, every: int) -> float:
        return min(seconds(problem, opts, n, every, backend) for _ in range(repeats))

    once = clock(steps, steps)
    return (clock(2 * steps, 2 * steps) - once) / steps, (clock(steps, 1) - once) / (steps - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--jax", action="store_true", help="also time the JAX backend (CPU)")
    parser.add_argument("--only", default="", help="comma-separated substrings of the case names")
    parser.add_argument("--repeats", type=int, default=2, help="the fastest of this many runs is kept")
    args = parser.parse_args()
    console = Console()
    console.print(f"device: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
                  f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    backends = ["numpy"] + (["jax"] if args.jax else [])
    base = measure("baseline p23 k2 m176", args.steps, "numpy", args.repeats)[0]
    table = Table(title=f"trainer steps ({args.steps} timed steps each; baseline numpy step {base * 1e3:.2f} ms)")
    for col in ("case", "backend", "update ms", "steps/s", "x baseline", "row ms", "paper's run, rows every 100"):
        table.add_column(col, justify="right")
    wanted = [n for n in CASES if not args.only or any(s in n for s in args.only.split(","))]
    console.print(f"load average at the start: {os.getloadavg()}")
    for name in wanted:
        for backend in backends:
            up, row = measure(name, args.steps, backend, args.repeats)
            paper_steps = CASES[name][2]
            total = paper_steps * (up + row / 100)
            rate = f"{1 / up:.1f}" if up > 0 else "(noise)"
            table.add_row(name, backend, f"{up * 1e3:.2f}", rate, f"{up / base:.2f}", f"{row * 1e3:.2f}",
                          f"{total / 60:.1f} min" if paper_steps else "-")
    console.print(table)


if __name__ == "__main__":
    main()
