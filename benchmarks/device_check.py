"""Correctness of the JAX backend on one device (a GPU by default): the checks the test suite runs on the CPU,
run where CI cannot, with every comparison's measured error and tolerance printed.

* engine: random networks (several shapes, with and without given labels), the device's own chunk sizing and
  forced layouts (a padded last sub-chunk, several sub-chunks per call, both ways of forming the label sums)
  against the numpy engine: per-row margins and wrong-logit spreads within ``4 x`` the a-priori float64 logit
  error bound, the label sums within the same bound times the rows summed; and the construction's normalized
  margin against gamma* within the engine's tolerance.  Each comparison is also made against a copy with one
  margin moved by 100 bounds, which must be rejected (the check can fail).
* trainer: 200 float64 steps of each optimizer family against the numpy trainer (1e-6 relative, parameters and
  the recorded history), a stopped run resumed bit-exactly, float32 steps with float64 records.
* command line: ``verify --exhaustive``, ``train`` and ``analyze`` with ``--backend jax --device DEVICE`` as a
  user runs them (new processes), their JSON naming the device; a run stopped and resumed by a new process
  against the uninterrupted run, bit for bit (each process compiles, and on a GPU autotunes, on its own).

    python benchmarks/device_check.py                     # on the GPU; exit 1 if any check fails
    python benchmarks/device_check.py --device cpu --quick   # the same code on the CPU (the suite runs this)

``benchmarks/device_session.sh`` runs this and the GPU benchmarks as one prepared job on a lent GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from margintheory.backends.select import Backend, check_available
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.core.theory import gamma_star
from margintheory.engines.margins import exhaustive_margin
from margintheory.errors import InputError

#: this script and the processes it starts share one GPU: JAX's default of taking 75 % of the GPU's memory at
#: start-up in every process would leave a child none, so memory is taken as needed (set before jax is imported;
#: the engine and trainer size their blocks from the allocator's limit, which this does not change)
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


@dataclass
class Row:
    """One comparison: what, its measured error, its tolerance, and whether it passed."""

    check: str
    error: float
    tolerance: float
    ok: bool
    note: str = ""


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(a))), 1e-300))


def engine_rows(device: str, quick: bool) -> list[Row]:
    """The JAX engine on ``device`` against the numpy engine, and the construction against gamma*."""
    from margintheory.backends import jax_engine

    backend = Backend("jax", device)
    shapes = [(5, 3, 7), (7, 3, 9), (5, 4, 6)] if quick else [(5, 3, 7), (7, 3, 9), (5, 4, 6), (3, 5, 4), (11, 3, 40)]
    rows: list[Row] = []
    for seed, (p, k, m) in enumerate(shapes):
        rng = np.random.default_rng(seed)
        net = PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))
        for given in (False, True):
            labels = rng.integers(0, p, size=p**k) if given else None
            ref = exhaustive_margin(net, labels=labels, backend="numpy")
            tol = 4 * ref.logit_error_bound
            layouts: list[tuple[str, dict]] = [("device sizing", {})]
            n_prefix = p ** (k - 1)
            layouts.append(("padded sub-chunks, 3 per call", dict(nb=max(1, n_prefix // 3 - 1), nsub=3)))
            layouts.append(("one sub-chunk per call, segment sums", dict(nb=2, nsub=1, one_hot_sums=False)))
            layouts.append(("one-hot label sums", dict(nb=3, nsub=2, one_hot_sums=True)))
            for name, kw in layouts:
                stats = jax_engine.margins_over_prefixes(backend, net.U, net.W, labels, max_bytes=2**30, **kw)
                err = max(float(np.max(np.abs(stats.margins - ref.margins))),
                          float(np.max(np.abs(stats.spread - ref.wrong_spread))))
                sums_tol = tol * p ** (k - 1)  # a label's sum adds p^(k-1) rows
                sums_err = float(np.max(np.abs(stats.label_sums - ref.label_logit_sums)))
                what = f"engine ({p},{k}) m={m} {'given labels' if given else 'sum labels'}, {name}"
                rows.append(Row(what + ": margins, spreads", err, tol, err <= tol,
                                f"nb={stats.chunk_prefixes} nsub={stats.sub_chunks}"))
                rows.append(Row(what + ": label sums", sums_err, sums_tol, sums_err <= sums_tol))
            moved = stats.margins.copy()
            moved[len(moved) // 2] += 100 * tol
            bad = float(np.max(np.abs(moved - ref.margins)))
            rows.append(Row(f"engine ({p},{k}): a margin moved by 100 bounds is rejected", bad, tol, bad > tol))
    for p, k in ([(11, 3)] if quick else [(11, 3), (7, 4), (5, 5)]):
        net = build_construction(p, k).normalized()
        res = exhaustive_margin(net, backend=backend)
        err = abs(res.normalized_margin - gamma_star(p, k))
        rows.append(Row(f"construction ({p},{k}) on {res.backend}: normalized margin vs gamma*", err,
                        res.normalized_tolerance, err <= res.normalized_tolerance and res.backend == f"jax ({device})"))
    return rows


def trainer_rows(device: str, quick: bool, where: Path) -> list[Row]:
    """The JAX trainer on ``device`` against the numpy trainer; resume; float32 records."""
    from margintheory.training.checkpoint import load_checkpoint
    from margintheory.training.trainer import TrainConfig, train

    base: dict[str, Any] = dict(p=5, k=2, width=16, steps=200, log_every=50, checkpoint_every=1000)
    runs: dict[str, dict[str, Any]] = {"adam": dict(),
            "adamw": dict(optimizer="adamw", weight_decay=1e-2, regularizer="none", batch_size=16, train_fraction=0.8),
            "gd": dict(optimizer="gd", lr=0.05, schedule="doubling", milestones=[60, 120], regularizer="norm-power")}
    if quick:
        runs = {"adamw": runs["adamw"]}
    rows: list[Row] = []
    fields = ("lr", "loss", "data_loss", "norm", "normalized_margin", "mean_max_power")
    jax_runs = {}
    for name, extra in runs.items():
        ref = train(TrainConfig(**base, **extra))
        got = train(TrainConfig(**base, **extra, backend="jax"), device=device)
        jax_runs[name] = got
        same_steps = [r["step"] for r in ref.history] == [r["step"] for r in got.history]
        pairs = zip(ref.history, got.history, strict=same_steps)
        err = max(_rel(ref.network.U, got.network.U), _rel(ref.network.W, got.network.W),
                  *(abs(b[f] / a[f] - 1) if a[f] else abs(b[f]) for a, b in pairs for f in fields))
        rows.append(Row(f"trainer {name}: 200 float64 steps vs numpy (parameters, history)", err, 1e-6,
                        err <= 1e-6 and same_steps))
    name = "adamw"
    cfg = TrainConfig(**base, **runs[name], backend="jax")
    ck = where / "resume.npz"
    part = train(cfg, checkpoint=ck, stop_after=73, device=device)
    rest = train(cfg, checkpoint=ck, resume=True, device=device)
    whole = jax_runs[name]
    diff = max(float(np.max(np.abs(rest.network.U - whole.network.U))),
               float(np.max(np.abs(rest.network.W - whole.network.W))))
    rows.append(Row("trainer: stopped at step 73 and resumed, bit-exact", diff, 0.0,
                    diff == 0.0 and not part.finished and load_checkpoint(ck).step == 200))
    f32 = train(TrainConfig(**base, backend="jax", dtype="float32"), checkpoint=where / "f32.npz", device=device)
    state = load_checkpoint(where / "f32.npz")
    recorded = f32.history[-1]["normalized_margin"]
    recomputed = exhaustive_margin(f32.network).normalized_margin
    err = abs(recorded / recomputed - 1)
    rows.append(Row("trainer float32: weights float32, recorded margin = float64 engine's", err, 1e-12,
                    err <= 1e-12 and state.U.dtype == np.float32))
    return rows


def cli_rows(device: str, where: Path) -> list[Row]:
    """``verify``, ``train`` and ``analyze`` on the device, each as a new process."""
    flags = ["--backend", "jax", "--device", device]

    def run(*argv: str, as_json: bool = True) -> dict:
        out = subprocess.run([sys.executable, "-m", "margintheory.cli", *argv, *flags, *(["--json"] * as_json)],
                             capture_output=True, text=True, cwd=where)
        if out.returncode not in (0, 1):
            raise SystemExit(f"margintheory {' '.join(argv)}: exit {out.returncode}: {out.stderr.strip()}")
        return json.loads(out.stdout) if as_json else {}

    rows = []
    doc = run("verify", "--p", "11", "--k", "3", "--exhaustive")
    backend = doc["details"].get("engine_backend", "")
    rows.append(Row(f"verify --exhaustive on {backend}: verdict {doc['verdict']}", 0.0, 0.0,
                    doc["verdict"] == "verified" and backend == f"jax ({device})"))
    run("train", "--p", "7", "--k", "3", "--width", "48", "--steps", "100", "--out", "net", "--overwrite",
        "--no-progress", as_json=False)
    doc = run("analyze", "net/network.npz", "--p", "7", "--k", "3")
    backend = doc["details"].get("engine_backend", "")
    rows.append(Row(f"train + analyze on {backend}: verdict {doc['verdict']}", 0.0, 0.0,
                    doc["verdict"] in ("verified", "refuted") and backend == f"jax ({device})"))
    # a run stopped at step 30 and resumed by a new process against one run of 60 steps: on a GPU the two
    # processes compile and autotune separately, which the in-process resume above does not see
    same = ["--p", "7", "--k", "3", "--width", "48", "--schedule", "constant", "--no-progress", "--no-figures"]
    run("train", *same, "--steps", "60", "--out", "whole", as_json=False)
    run("train", *same, "--steps", "30", "--out", "part", as_json=False)
    run("train", *same, "--steps", "60", "--out", "part", "--resume", as_json=False)
    with np.load(where / "whole" / "network.npz") as a, np.load(where / "part" / "network.npz") as b:
        diff = max(float(np.max(np.abs(a[name] - b[name]))) for name in a.files)
    rows.append(Row("train --resume in a new process: 30 + 30 steps against 60 steps, bit-exact", diff, 0.0,
                    diff == 0.0))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--quick", action="store_true", help="fewer shapes and one optimizer (the suite's CPU run)")
    ap.add_argument("--no-cli", action="store_true", help="skip the command-line runs (new processes)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    try:
        check_available(Backend("jax", args.device))
    except InputError as exc:
        print(f"device_check: {exc}", file=sys.stderr)
        return 2
    import jax

    t0 = time.perf_counter()
    print(f"jax {jax.__version__}: {[f'{d} {d.device_kind}' for d in jax.devices(args.device)]}")
    with tempfile.TemporaryDirectory() as tmp:
        rows = engine_rows(args.device, args.quick)
        rows += trainer_rows(args.device, args.quick, Path(tmp))
        if not args.no_cli:
            rows += cli_rows(args.device, Path(tmp))
    width = max(len(r.check) for r in rows)
    for r in rows:
        print(f"{'ok  ' if r.ok else 'FAIL'} {r.check:<{width}}  error {r.error:.3g}  tolerance {r.tolerance:.3g}"
              + (f"  ({r.note})" if r.note else ""))
    failed = sum(not r.ok for r in rows)
    print(f"{len(rows)} checks, {failed} failed, {time.perf_counter() - t0:.1f} s")
    if args.json:
        tmp_json = Path(args.json).with_suffix(".tmp")
        tmp_json.write_text(json.dumps({"device": args.device, "rows": [asdict(r) for r in rows]}, indent=1))
        os.replace(tmp_json, args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
