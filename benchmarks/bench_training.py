"""Benchmark of the trainer (not run by CI).

Default: CPU and wall time of one full-batch step (forward + analytic backward over all ``p^k`` points) for the
reproduction sizes, and the throughput in points x neurons per second.  ``--reproduce DIR`` reruns the docs'
reproduction (``margintheory train`` settings below) into ``DIR/<case>`` and prints the measured ratio to
``gamma*``, the max-power statistics and the wall / CPU time of each run.

    OMP_NUM_THREADS=1 python benchmarks/bench_training.py              # step timings (seconds)
    OMP_NUM_THREADS=1 python benchmarks/bench_training.py --reproduce out   # the runs of docs/benchmarks.md (minutes)

Single-threaded BLAS is faster at these sizes (small matrices) and makes the timings comparable.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from margintheory.core.theory import construction_width
from margintheory.engines.margins import input_grid
from margintheory.training.objective import Batch, objective_and_grad

# Morwani et al.'s full-batch gradient descent (App. D.2.1): lr 0.05 doubled at steps 1e3..10e3, L_{2,3} penalty 1e-4
EDELMAN_GD = dict(optimizer="gd", lr=0.05, schedule="doubling", milestones=[1000 * i for i in range(1, 11)],
                  regularizer="norm-power", lam=1e-4, warmup=0)
# (p, k, width multiple of the theorem's width 2^(2k-1)(p-1)/2, steps, settings other than the defaults)
REPRODUCTION = [(23, 2, 1, 4000, {}), (23, 2, 2, 4000, {}), (31, 2, 2, 4000, {}), (13, 3, 1, 3000, {}),
                (13, 3, 2, 3000, {}), (17, 3, 2, 3000, {}), (23, 2, 2, 40000, EDELMAN_GD)]


def step_time(p: int, k: int, m: int, repeats: int = 5) -> tuple[float, float]:
    """Mean (CPU, wall) seconds of one objective + gradient evaluation over all ``p^k`` points."""
    batch = Batch.from_inputs(input_grid(p, k), p)
    rng = np.random.default_rng(0)
    U, W = rng.normal(0, p**-0.5, (m, k, p)), rng.normal(0, p**-0.5, (m, p))
    objective_and_grad(U, W, batch, 1e-3, "norm")
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(repeats):
        objective_and_grad(U, W, batch, 1e-3, "norm")
    return (time.process_time() - c0) / repeats, (time.perf_counter() - t0) / repeats


def timings(console: Console) -> None:
    table = Table(title="one full-batch training step (forward + analytic backward)")
    for col in ("p", "k", "m", "points", "CPU s/step", "wall s/step", "points*neurons / CPU s"):
        table.add_column(col, justify="right")
    for p, k, mult, _, _ in REPRODUCTION:
        m = mult * construction_width(p, k)
        cpu, wall = step_time(p, k, m)
        table.add_row(str(p), str(k), str(m), str(p**k), f"{cpu:.4f}", f"{wall:.4f}", f"{p**k * m / cpu:.3g}")
    console.print(table)


def reproduce(out: str, console: Console) -> None:
    from margintheory.training.metrics import fourier_summary
    from margintheory.training.trainer import TrainConfig, train, write_history

    table = Table(title="reproduction (default: Adam lr 5e-3 cosine, 10 warm-up steps, lambda 1e-3 ||theta||_{2,k+1})")
    for col in ("p", "k", "m", "steps", "settings", "margin / gamma*", "mean max power", "min max power",
                "freq. covered", "wall s", "CPU s"):
        table.add_column(col, justify="right")
    for p, k, mult, steps, extra in REPRODUCTION:
        m = mult * construction_width(p, k)
        settings = {"lam": 1e-3, **extra}
        cfg = TrainConfig(p=p, k=k, width=m, steps=steps, log_every=10, **settings)
        res = train(cfg)
        run_dir = f"{out}/k{k}p{p}m{m}" + ("_gd" if extra else "")
        res.network.save(f"{run_dir}/network.npz")
        res.initial.save(f"{run_dir}/initial.npz")
        write_history(run_dir, res)
        last = res.history[-1]
        fs = fourier_summary(res.network.U, res.network.W)
        table.add_row(str(p), str(k), str(m), str(steps), "Morwani GD" if extra else "default",
                      f"{last['ratio']:.10f}", f"{last['mean_max_power']:.4f}", f"{fs.neuron_max_power.min():.4f}",
                      str(last["frequencies_covered"]), f"{res.seconds:.0f}", f"{res.cpu_seconds:.0f}")
        console.print(f"done: p={p} k={k} m={m} margin/gamma* = {last['ratio']:.10f} ({res.seconds:.0f} s)")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reproduce", metavar="DIR", help="rerun the reproduction of docs/benchmarks.md into DIR")
    args = parser.parse_args()
    console = Console()
    timings(console)
    if args.reproduce:
        reproduce(args.reproduce, console)


if __name__ == "__main__":
    main()
