"""Benchmark of the array backends: the exhaustive engine and the trainer on numpy, jax-cpu and jax-gpu (when a GPU
is visible), all in the same run, with every ratio taken against numpy measured in that run.

The header names the machine (CPU model, usable cores, load average before and after), numpy's BLAS thread pools
and ``jax.devices()``.  A backend that is not present is reported as "not measured", never estimated.

* engine: ``exhaustive_margin`` on the Lemma C.18 construction; each backend runs every case twice and the second
  run is reported (the first compiles: numba caches on disk, jax per shape), with the first jax run's time too;
  the normalized margins of all backends must agree within the engine's tolerance.
* trainer: ``train`` with the papers' objective (Adam, warm-up, cosine, lambda ||theta||_{2,k+1}, full batch, a
  history row every step as ``margintheory train`` records by default) for ``--steps`` steps after a compiling
  warm-up; numpy runs with one BLAS thread (the README's advice) and with the default pool, and the faster is the
  baseline.  ``float32`` rows train in float32 (records still float64).
* ``--papers OUT``: the papers' three runs at their sizes on the GPU (train, then ``analyze`` with figures), each
  into ``OUT/<case>``; refused without a GPU.  ``--papers-quick`` runs the same pipeline at small sizes on any
  backend (it checks the pipeline, it measures nothing the README quotes).

    python benchmarks/bench_backends.py                        # 2-core sizes, about two minutes
    python benchmarks/bench_backends.py --engine 101x4 47x5 199x3 --train 17x3x512 --steps 3000   # GPU targets
    python benchmarks/bench_backends.py --papers out           # the papers' runs (GPU; tens of minutes)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from threadpoolctl import threadpool_info, threadpool_limits

from margintheory.backends.select import Backend, check_available
from margintheory.core.construction import build_construction
from margintheory.engines.margins import exhaustive_margin
from margintheory.errors import InputError
from margintheory.training.trainer import TrainConfig, train

ENGINE_CASES = ["47x3", "17x4", "11x5"]
TRAIN_CASE = "17x3x512"
#: the papers' runs: (p, k, width) of Fourier circuits' experiments
PAPER_RUNS = [(97, 3, 1536), (47, 4, 2944), (23, 5, 5632)]
QUICK_RUNS = [(7, 3, 96), (5, 4, 256)]


def backends_here() -> dict[str, Backend | None]:
    """numpy, jax-cpu and jax-gpu, each ``None`` when it cannot run on this machine."""
    found: dict[str, Backend | None] = {}
    for name, backend in (("numpy", Backend()), ("jax-cpu", Backend("jax", "cpu")), ("jax-gpu", Backend("jax", "gpu"))):
        try:
            check_available(backend)
            found[name] = backend
        except InputError:
            found[name] = None
    return found


def machine() -> dict:
    """What the figures were measured on."""
    model = platform.processor()
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    info = {"cpu": model, "usable cores": len(os.sched_getaffinity(0)), "load average": os.getloadavg(),
            "blas": [f"{p['internal_api']} {p['num_threads']} threads" for p in threadpool_info()]}
    try:
        import jax

        info["jax"] = f"{jax.__version__}: {[str(d) for d in jax.devices()]}"
        try:
            info["jax gpu"] = [f"{d} {d.device_kind}" for d in jax.devices("gpu")]
        except RuntimeError:
            info["jax gpu"] = "none visible"
    except ImportError:
        info["jax"] = "not installed"
    return info


def parse(case: str) -> list[int]:
    return [int(x) for x in case.lower().split("x")]


def engine_case(case: str, found: dict[str, Backend | None]) -> dict:
    """Seconds of each backend's second run (and jax's first) and the agreement of the normalized margins."""
    p, k = parse(case)
    net = build_construction(p, k).normalized()
    row: dict = {"case": f"({p},{k})", "m": net.m, "points": p**k}
    margins = {}
    for name, backend in found.items():
        if backend is None:
            continue
        t0 = time.perf_counter()
        exhaustive_margin(net, 2**40, max_seconds=None, backend=backend)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = exhaustive_margin(net, 2**40, max_seconds=None, backend=backend)
        row[name] = time.perf_counter() - t0
        row[f"{name} first"] = first
        margins[name] = (res.normalized_margin, res.normalized_tolerance)
    ref, tol = margins["numpy"]
    row["agree"] = all(abs(v - ref) <= t + tol for v, t in margins.values())
    return row


def train_case(case: str, steps: int, found: dict[str, Backend | None]) -> dict:
    """Seconds of ``steps`` training steps per backend and dtype after a warm-up (compilation) run."""
    p, k, m = parse(case)
    base = dict(p=p, k=k, width=m, steps=steps, checkpoint_every=10**9)
    row: dict = {"case": f"({p},{k}) m={m}", "steps": steps}
    finals = {}
    runs = [("numpy 1 thread", "numpy", "float64", 1), ("numpy", "numpy", "float64", None)]
    runs += [(f"{name} {dtype}", name, dtype, None) for name in ("jax-cpu", "jax-gpu") if found[name] is not None
             for dtype in ("float64", "float32")]
    for label, name, dtype, threads in runs:
        backend = found[name]
        assert backend is not None
        cfg = TrainConfig(**base, backend=backend.name, dtype=dtype)
        with threadpool_limits(limits=threads):
            train(cfg, stop_after=2, device=backend.device)  # compile (jax) / warm caches
            t0 = time.perf_counter()
            res = train(cfg, device=backend.device)
            row[label] = time.perf_counter() - t0
        finals[label] = res.history[-1]["loss"]
    row["numpy best"] = min(row["numpy 1 thread"], row["numpy"])
    row["loss rel. diff (jax f64)"] = {label: abs(v / finals["numpy"] - 1) for label, v in finals.items()
                                       if label.endswith("float64")}
    return row


def ratio(row: dict, name: str, base: str) -> str:
    return f"{row[name]:.2f} s ({row[base] / row[name]:.2f}x)" if name in row else "not measured"


def print_engine(rows: list[dict], console: Console) -> None:
    table = Table(title="exhaustive engine, float64: seconds (speed-up over numpy, same run)")
    for col in ("case", "m", "points", "numpy", "jax-cpu", "jax-cpu first", "jax-gpu", "jax-gpu first", "agree"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["case"], str(r["m"]), str(r["points"]), f"{r['numpy']:.2f} s", ratio(r, "jax-cpu", "numpy"),
                      f"{r['jax-cpu first']:.2f} s" if "jax-cpu first" in r else "not measured",
                      ratio(r, "jax-gpu", "numpy"),
                      f"{r['jax-gpu first']:.2f} s" if "jax-gpu first" in r else "not measured", str(r["agree"]))
    console.print(table)


def print_train(row: dict, console: Console) -> None:
    table = Table(title=f"trainer, {row['case']}, {row['steps']} steps with a history row each: seconds "
                  "(speed-up over the faster numpy run, same run)")
    labels = ["numpy 1 thread", "numpy"] + [f"{n} {d}" for n in ("jax-cpu", "jax-gpu") for d in ("float64", "float32")]
    for col in labels:
        table.add_column(col, justify="right")
    table.add_row(*(ratio(row, label, "numpy best") for label in labels))
    console.print(table)
    console.print(f"final loss vs numpy (relative): {row['loss rel. diff (jax f64)']}")


def papers(out: Path, cases: list[tuple[int, int, int]], backend: Backend, steps: int, console: Console) -> None:
    """Train each case with the papers' objective (``margintheory train``, float32 steps), then ``analyze`` it
    (float64: verdict, ratio to gamma*, frequency coverage, figures), each as the command a user runs."""
    table = Table(title=f"the papers' runs, {steps} steps, {backend.label}")
    for col in ("case", "train s", "analyze s", "verdict", "ratio to gamma*", "frequencies covered", "directory"):
        table.add_column(col, justify="right")
    flags = ["--backend", backend.name, "--device", backend.device, "--force"]
    for p, k, m in cases:
        where = out / f"p{p}_k{k}_m{m}"
        t0 = time.perf_counter()
        size = ["--p", str(p), "--k", str(k)]
        _command(["train", *size, "--width", str(m), "--steps", str(steps), "--out", str(where), "--dtype", "float32",
                  "--log-every", "50", "--overwrite", "--no-progress", *flags], where / "train.txt")
        trained = time.perf_counter() - t0
        t0 = time.perf_counter()
        _command(["analyze", str(where / "network.npz"), *size, "--plots", str(where / "figures"), "--json", *flags],
                 where / "analysis.json")
        doc = json.loads((where / "analysis.json").read_text())
        table.add_row(f"({p},{k}) m={m}", f"{trained:.0f}", f"{time.perf_counter() - t0:.0f}", doc["verdict"],
                      f"{doc.get('ratio_to_gamma_star')}", f"{doc['details'].get('frequencies_covered')}", str(where))
    console.print(table)


def _command(argv: list[str], output: Path) -> None:
    """``margintheory ARGV`` in a new process, its standard output saved to ``output`` (exit 0 or 1 expected)."""
    import subprocess
    import sys

    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w") as fh:
        code = subprocess.run([sys.executable, "-m", "margintheory.cli", *argv], stdout=fh).returncode
    if code not in (0, 1):
        raise SystemExit(f"margintheory {' '.join(argv)} failed with exit code {code}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", nargs="*", default=ENGINE_CASES, metavar="PxK", help="engine cases (construction)")
    ap.add_argument("--train", default=TRAIN_CASE, metavar="PxKxM", help="trainer case")
    ap.add_argument("--steps", type=int, default=20, help="timed training steps (default %(default)s)")
    ap.add_argument("--papers", metavar="OUT", help="the papers' three runs on the GPU into OUT")
    ap.add_argument("--papers-quick", metavar="OUT", help="the same pipeline at small sizes on the best backend")
    ap.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    args = ap.parse_args()
    console = Console(width=160)
    found = backends_here()
    report: dict = {"machine": machine()}
    console.print(report["machine"])
    if args.papers or args.papers_quick:
        gpu = found["jax-gpu"]
        if args.papers and gpu is None:
            raise SystemExit("--papers needs a GPU visible to jax: not measured on this machine")
        best = gpu or found["jax-cpu"] or Backend()
        papers(Path(args.papers or args.papers_quick), PAPER_RUNS if args.papers else QUICK_RUNS, best,
               3000 if args.papers else 50, console)
        return
    report["engine"] = [engine_case(case, found) for case in args.engine]
    print_engine(report["engine"], console)
    report["train"] = train_case(args.train, args.steps, found)
    print_train(report["train"], console)
    report["machine"]["load average after"] = os.getloadavg()
    console.print(f"load average before {report['machine']['load average']}, after {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))


if __name__ == "__main__":
    main()
