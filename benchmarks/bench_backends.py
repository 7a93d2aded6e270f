"""Benchmark of the array backends: the exhaustive engine and the trainer on numpy, jax-cpu and jax-gpu (when a GPU
is visible), all in the same run, with every ratio taken against numpy measured in that run.

The header names the machine (CPU model, usable cores, load average before and after), numpy's BLAS thread pools
and ``jax.devices()``.  A backend that is not present is reported as "not measured", never estimated.

* engine: ``exhaustive_margin`` on the Lemma C.18 construction, one row per backend: a first run (jax
  compiles for the shape there; numpy's kernels for that ``k`` were compiled on a small case before), then
  ``--repeats`` runs interleaved across the backends, the fastest reported with the slowest beside it.  Each row
  also times the bare float64 GEMM of the engine's shape ``(p^k x m) @ (m x p)`` on the same device in the
  engine's chunks (numpy: BLAS; jax: one compiled loop), so the ratio engine / GEMM says how far the pass is from
  its matrix-product work, and the normalized margins of all backends must agree within the engine's tolerances.
  ``--cpu-max-points`` leaves the CPU backends out of cases too large for them (reported as not run);
  ``--gpu-sub-chunks`` adds GPU rows with several sub-chunks per call.
* trainer: ``train`` with the papers' objective (Adam, warm-up, cosine, lambda ||theta||_{2,k+1}, full batch, a
  history row every step as ``margintheory train`` records by default) after a compiling warm-up, each run in a
  new interpreter (numpy as a user runs it, without jax in the process), ``--repeats`` interleaved runs of each
  configuration, the fastest reported per step: ``--steps`` on a GPU, ``--cpu-steps`` on numpy and jax-cpu; numpy
  runs with one BLAS thread (the advice of docs/TRAINING.md) and with the default pool, and the faster is the baseline.
  ``float32`` rows train in float32 (records still float64).
* ``--papers OUT``: the papers' runs at their sizes on the GPU (train for ``--papers-steps``, then ``analyze`` with
  figures), each into ``OUT/<case>``; refused without a GPU.  ``--papers-quick`` runs the same pipeline at small
  sizes on any backend (it checks the pipeline, it measures nothing the docs quote).
* ``--json FILE`` is rewritten (atomically) after every row, so a run stopped at a time limit keeps what it measured.

    python benchmarks/bench_backends.py                        # 2-core sizes, about two minutes
    python benchmarks/bench_backends.py --engine 101x4 47x5 199x3 --train 17x3x512 --steps 3000   # GPU targets
    python benchmarks/bench_backends.py --papers out           # the papers' runs (GPU; tens of minutes)

``benchmarks/device_session.sh`` runs the GPU correctness check and these figures as one job sized for a lent GPU
machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_margin_engine import bare_gemm_seconds
from rich.console import Console
from rich.table import Table
from threadpoolctl import threadpool_info

from margintheory.backends.select import Backend, check_available
from margintheory.core.construction import build_construction
from margintheory.core.theory import gamma_star
from margintheory.engines.margins import estimate_cost, exhaustive_margin, normalize_margin, worker_count
from margintheory.errors import InputError
from margintheory.training.trainer import estimate_training

#: this script and the processes it starts share one GPU: JAX's default of taking 75 % of the GPU's memory at
#: start-up in every process would leave a child none, so memory is taken as needed (set before jax is imported;
#: the engine and trainer size their blocks from the allocator's limit, which this does not change)
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

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


def warm_up(k: int, found: dict[str, Backend | None]) -> None:
    """Compile numpy's kernels for this ``k`` (numba caches per degree) outside the timings."""
    if found.get("numpy") is not None:
        exhaustive_margin(build_construction(5, k).normalized(), backend=found["numpy"])


def jax_gemm_seconds(backend: Backend, n_rows: int, m: int, p: int, chunk_rows: int, repeats: int = 1) -> float:
    """The bare float64 GEMMs of the engine's shape on a JAX device: ``ceil(n_rows / chunk_rows)`` products
    ``(chunk_rows x m) @ (m x p)`` in one compiled loop (each with its own right factor, so that none can be hoisted
    out of the loop, and a min-reduction of its result, so that none can be dropped); the fastest of ``repeats``
    calls after a compiling one."""
    import jax
    import jax.numpy as jnp

    from margintheory.backends.select import devices

    with jax.enable_x64(True):
        dev = devices(backend)[0]
        n = -(-n_rows // chunk_rows)
        A = jax.device_put(np.random.default_rng(0).standard_normal((chunk_rows, m)), dev)
        W = jax.device_put(np.random.default_rng(1).standard_normal((m, p)), dev)

        @jax.jit
        def loop(A, W):
            def body(i, acc):
                return jnp.minimum(acc, jnp.min(A @ (W + i.astype(W.dtype))))
            return jax.lax.fori_loop(0, n, body, jnp.inf)

        loop(A, W).block_until_ready()
        best = math.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            loop(A, W).block_until_ready()
            best = min(best, time.perf_counter() - t0)
        return best


def engine_rows(case: str, found: dict[str, Backend | None], cpu_max_points: float,
                gpu_sub_chunks: list[int], repeats: int = 3) -> list[dict]:
    """One row per backend (and per forced sub-chunks-per-call on the GPU): seconds of the timed run, the first
    run (jax: compilation), the bare GEMM of the same shape on the same device, and agreement with the first
    backend's normalized margin within both tolerances.  CPU backends skip cases over ``cpu_max_points``."""
    from margintheory.backends import jax_engine

    p, k = parse(case)
    net = build_construction(p, k).normalized()
    m, n = net.m, p**k
    warm_up(k, found)
    rows: list[dict] = []
    variants: list[tuple[str, Backend, int | None]] = []
    for name, backend in found.items():
        if backend is None:
            continue
        if backend.device == "cpu" and n > cpu_max_points:
            rows.append({"case": f"({p},{k})", "m": m, "points": n, "backend": name,
                         "skipped": f"over --cpu-max-points {cpu_max_points:.3g}"})
            continue
        variants.append((name, backend, None))
        if name == "jax-gpu":
            variants += [(f"jax-gpu nsub={s}", backend, s) for s in gpu_sub_chunks if s != 1]
    def once(backend: Backend, nsub: int | None) -> tuple[float, float, float]:
        t0 = time.perf_counter()
        if nsub is None:
            res = exhaustive_margin(net, 2**40, max_seconds=None, backend=backend)
            value, tol = res.normalized_margin, res.normalized_tolerance
        else:
            stats = jax_engine.margins_over_prefixes(backend, net.U, net.W, None, max_bytes=math.inf, nsub=nsub)
            _, _, value, tol = normalize_margin(net, float(stats.margins.min()))
        return time.perf_counter() - t0, value, tol

    first = {label: once(backend, nsub) for label, backend, nsub in variants}  # jax compiles per shape here
    timed: dict[str, list[float]] = {label: [] for label, *_ in variants}
    for _ in range(repeats):  # interleaved: a shared machine's noise reaches every backend alike
        for label, backend, nsub in variants:
            timed[label].append(once(backend, nsub)[0])
    def gemm(backend: Backend) -> tuple[float, int]:
        """The bare GEMM baseline on ``backend``'s device, in the engine's chunk rows."""
        if backend.name == "numpy":
            rows_per_chunk = estimate_cost(p, k, m, backend=backend).prefixes_per_chunk * p
            return min(bare_gemm_seconds(n, m, p, rows_per_chunk) for _ in range(repeats)), rows_per_chunk
        workers = worker_count(None) if backend.device == "cpu" else 1  # as exhaustive_margin sizes them
        rows_per_chunk = jax_engine.chunk_prefixes(backend, p, k, m, math.inf, workers) * p
        return jax_gemm_seconds(backend, n, m, p, rows_per_chunk, repeats), rows_per_chunk

    baselines: dict[Backend, tuple[float, int]] = {}  # one per device: the GPU's sub-chunk variants share it
    reference = None
    for label, backend, _ in variants:
        _, value, tol = first[label]
        row: dict = {"case": f"({p},{k})", "m": m, "points": n, "backend": label, "seconds": min(timed[label]),
                     "slowest seconds": max(timed[label]), "first seconds": first[label][0], "repeats": repeats}
        if backend not in baselines:
            baselines[backend] = gemm(backend)
        row["gemm seconds"], row["gemm rows"] = baselines[backend]
        row["flops"] = 2 * n * m * p
        if reference is None:
            reference = (label, value, tol)
        row["agree"] = abs(value - reference[1]) <= tol + reference[2]
        row["agree with"] = reference[0]
        # the construction's normalized margin is gamma* (proved): a check that holds where no other backend ran
        row["gamma* error"], row["tolerance"] = abs(value - gamma_star(p, k)), tol
        rows.append(row)
    return rows


_TIME_TRAIN = """
import json, sys, time
from threadpoolctl import threadpool_limits
from margintheory.training.trainer import TrainConfig, train
spec = json.loads(sys.argv[1])
cfg = TrainConfig(**spec["config"])
with threadpool_limits(limits=spec["threads"]):
    train(cfg, stop_after=2, device=spec["device"])  # compile (jax) / warm caches
    t0 = time.perf_counter()
    res = train(cfg, device=spec["device"])
    seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "loss": res.history[-1]["loss"]}))
"""


def time_train(config: dict, threads: int | None, device: str) -> tuple[float, float]:
    """Seconds of one ``train(config)`` after a warm-up run, and its final loss, in a new interpreter: numpy as a
    user runs it, in a process that never imported jax.  (In one comparison on the 2-core machine, numpy's trainer
    ran 20-30 % faster in a process where jax's CPU runtime had started; later runs were too noisy to confirm it.
    Separate processes leave no such question, and no backend's warm state reaches another's timing.)"""
    import subprocess
    import sys

    spec = json.dumps({"config": config, "threads": threads, "device": device})
    out = subprocess.run([sys.executable, "-c", _TIME_TRAIN, spec], capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"timing {config} failed: {out.stderr.strip()[-2000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["seconds"], got["loss"]


def train_case(case: str, steps: int, cpu_steps: int, found: dict[str, Backend | None], repeats: int) -> dict:
    """Seconds per step of each backend and dtype: ``steps`` on a GPU, ``cpu_steps`` on the CPU backends (numpy,
    jax-cpu), each timed in its own new process after a warm-up (compilation) run; the configurations are
    interleaved ``repeats`` times and the fastest run of each is reported with the slowest beside it (a shared
    machine's noise reaches every backend alike).  The final losses of runs of equal length are compared with
    numpy's."""
    p, k, m = parse(case)
    row: dict = {"case": f"({p},{k}) m={m}", "steps": {}, "per step": {}, "slowest per step": {}, "repeats": repeats}
    finals = {}
    runs = [("numpy 1 thread", "numpy", "float64", 1), ("numpy", "numpy", "float64", None)]
    runs += [(f"{name} {dtype}", name, dtype, None) for name in ("jax-cpu", "jax-gpu") if found.get(name) is not None
             for dtype in ("float64", "float32")]
    configs = []
    for label, name, dtype, threads in runs:
        backend = found.get(name)
        if backend is None:
            continue
        n_steps = steps if backend.device == "gpu" else cpu_steps
        config = dict(p=p, k=k, width=m, steps=n_steps, checkpoint_every=10**9, backend=backend.name, dtype=dtype)
        configs.append((label, config, threads, backend.device, n_steps))
        row["steps"][label] = n_steps
    times: dict[str, list[float]] = {label: [] for label, *_ in configs}
    for _ in range(repeats):
        for label, config, threads, device, n_steps in configs:
            seconds, loss = time_train(config, threads, device)
            times[label].append(seconds / n_steps)
            finals[label] = (n_steps, loss)
    for label, ts in times.items():
        row["per step"][label], row["slowest per step"][label] = min(ts), max(ts)
    numpy_runs = [row["per step"][lab] for lab in ("numpy 1 thread", "numpy") if lab in row["per step"]]
    if numpy_runs:
        row["numpy best"] = min(numpy_runs)
    row["loss rel. diff (float64, same steps as numpy)"] = {
        label: abs(v / finals["numpy"][1] - 1) for label, (n_steps, v) in finals.items()
        if label.endswith("float64") and "numpy" in finals and n_steps == finals["numpy"][0]}
    return row


def print_engine(rows: list[dict], console: Console) -> None:
    table = Table(title="exhaustive engine, float64, the construction: seconds, fastest of the interleaved timed runs "
                  "(slowest); the first run (jax: compilation); the bare GEMM of the same shape on the same device; "
                  "speed-up over numpy (same run)")
    for col in ("case", "m", "points", "backend", "seconds", "first run", "GEMM s", "engine / GEMM", "GEMM TFLOP/s",
                "vs numpy", "agree", "|margin - gamma*| (tol.)"):
        table.add_column(col, justify="right")
    numpy_s = {r["case"]: r["seconds"] for r in rows if r["backend"] == "numpy" and "seconds" in r}
    for r in rows:
        if "skipped" in r:
            table.add_row(r["case"], str(r["m"]), str(r["points"]), r["backend"], "not run: " + r["skipped"],
                          *[""] * 7)
            continue
        vs = f"{numpy_s[r['case']] / r['seconds']:.2f}x" if r["case"] in numpy_s else "numpy not run"
        table.add_row(r["case"], str(r["m"]), str(r["points"]), r["backend"],
                      f"{r['seconds']:.3f} ({r['slowest seconds']:.3f})",
                      f"{r['first seconds']:.2f}", f"{r['gemm seconds']:.2f}",
                      f"{r['seconds'] / r['gemm seconds']:.2f}",
                      f"{r['flops'] / r['gemm seconds'] / 1e12:.3g}", vs, f"{r['agree']} ({r['agree with']})",
                      f"{r['gamma* error']:.1e} ({r['tolerance']:.1e})")
    console.print(table)


def print_train(row: dict, console: Console) -> None:
    table = Table(title=f"trainer, {row['case']}, a history row every step: milliseconds per step, fastest of "
                  f"{row['repeats']} interleaved runs (steps per run; slowest run; speed-up over the faster numpy "
                  "configuration, same run)")
    labels = list(row["per step"])
    for col in labels:
        table.add_column(col, justify="right")
    base = row.get("numpy best")
    cells = []
    for lab in labels:
        cell = f"{1e3 * row['per step'][lab]:.2f} ms ({row['steps'][lab]}; {1e3 * row['slowest per step'][lab]:.1f})"
        cells.append(cell + (f" ({base / row['per step'][lab]:.2f}x)" if base else ""))
    table.add_row(*cells)
    console.print(table)
    console.print(f"final loss vs numpy (relative): {row['loss rel. diff (float64, same steps as numpy)']}")


def papers(out: Path, cases: list, backend: Backend, steps: int, console: Console, rows: list[dict],
           saved: Callable[[], None]) -> None:
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
        estimate = estimate_training(p, k, m, steps, backend=backend.name, device=backend.device).seconds
        rows.append({"case": [p, k, m], "steps": steps, "train seconds": trained, "verdict": doc["verdict"],
                     "estimated train seconds": estimate,  # what train compares with --max-seconds
                     "ratio to gamma*": doc.get("ratio_to_gamma_star"),
                     "frequencies covered": doc["details"].get("frequencies_covered"), "directory": str(where)})
        saved()
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


def save(report: dict, path: str | None) -> None:
    """Write the measurements so far (atomically: a run stopped at its time limit keeps every finished row)."""
    if path:
        tmp = Path(path).with_suffix(".partial")
        tmp.write_text(json.dumps(report, indent=1, default=str))
        os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", nargs="*", default=ENGINE_CASES, metavar="PxK", help="engine cases (construction)")
    ap.add_argument("--train", default=TRAIN_CASE, metavar="PxKxM", help="trainer case ('none': no trainer rows)")
    ap.add_argument("--steps", type=int, default=20, help="timed training steps (default %(default)s)")
    ap.add_argument("--cpu-steps", type=int, help="timed training steps of the CPU backends (default: --steps); "
                    "compared with the GPU per step")
    ap.add_argument("--repeats", type=int, default=3,
                    help="interleaved timed runs of each engine backend and trainer configuration (fastest reported)")
    ap.add_argument("--backends", help="comma-separated subset of numpy,jax-cpu,jax-gpu (default: all present)")
    ap.add_argument("--cpu-max-points", type=float, default=math.inf,
                    help="engine cases with more inputs than this are not run on the CPU backends (reported so)")
    ap.add_argument("--gpu-sub-chunks", type=int, nargs="*", default=[],
                    help="also time the GPU engine with this many sub-chunks per kernel call (default: one)")
    ap.add_argument("--papers", metavar="OUT", help="the papers' three runs on the GPU into OUT")
    ap.add_argument("--papers-cases", nargs="*", metavar="PxKxM", help="a subset of the papers' runs (or others)")
    ap.add_argument("--papers-steps", type=int, help="training steps of each papers' run (default 3000)")
    ap.add_argument("--papers-quick", metavar="OUT", help="the same pipeline at small sizes on the best backend")
    ap.add_argument("--json", metavar="FILE", help="also write the measurements as JSON (after every row)")
    args = ap.parse_args()
    console = Console(width=200)
    found = backends_here()
    if args.backends:
        wanted = set(args.backends.split(","))
        unknown = wanted - set(found)
        if unknown:
            raise SystemExit(f"--backends: unknown {sorted(unknown)}; choose from {sorted(found)}")
        found = {name: b for name, b in found.items() if name in wanted}
    report: dict = {"machine": machine()}
    console.print(report["machine"])
    if args.papers or args.papers_quick:
        gpu = found.get("jax-gpu")
        if args.papers and gpu is None:
            raise SystemExit("--papers needs a GPU visible to jax: not measured on this machine")
        best = gpu or found.get("jax-cpu") or Backend()
        cases = [tuple(parse(c)) for c in args.papers_cases] if args.papers_cases else (
            PAPER_RUNS if args.papers else QUICK_RUNS)
        steps = args.papers_steps or (3000 if args.papers else 50)
        report["papers"] = []
        papers(Path(args.papers or args.papers_quick), cases, best, steps, console, report["papers"],
               lambda: save(report, args.json))
        return
    report["engine"] = []
    for case in args.engine:
        report["engine"] += engine_rows(case, found, args.cpu_max_points, args.gpu_sub_chunks, args.repeats)
        save(report, args.json)
    if report["engine"]:
        print_engine(report["engine"], console)
    if args.train != "none":
        report["train"] = train_case(args.train, args.steps, args.cpu_steps or args.steps, found, args.repeats)
        print_train(report["train"], console)
    report["machine"]["load average after"] = os.getloadavg()
    console.print(f"load average before {report['machine']['load average']}, after {os.getloadavg()}")
    save(report, args.json)


if __name__ == "__main__":
    main()
