"""How long a recipe takes: from measured steps per second, stated as such.

``margintheory/data/reproduce_timings.json`` holds measured training speeds: per device (``cpu``, ``gpu``), the
machine, the date, and per measurement the run it timed (task, sizes, backend, batch, history interval) with its
seconds per step.  ``benchmarks/bench_reproduce.py --calibrate`` writes it (:func:`measure_step_seconds` times a
run's steps on this machine).  :func:`estimate_recipe` turns it into a time per recipe:

* a run measured at its own size: ``steps x seconds per step`` (per seed);
* otherwise the measurement of the same task, backend and device nearest in size, scaled by the work of one step,
  ``(points per step + points of a history row / history interval) x width x (inputs + outputs)`` (the trainer's
  cost model, :data:`margintheory.training.trainer.SECONDS_PER_STEP_UNIT`); the estimate says so.

No GPU has been available to this project: until a GPU measurement exists the GPU estimate is ``None`` ("not
measured"), never a guess.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from importlib import resources
from typing import Any

from margintheory.reproduce.recipes import Recipe, RunSpec
from margintheory.runtime.budget import format_seconds

TIMINGS_FILE = "reproduce_timings.json"


def load_timings() -> dict[str, Any]:
    """The measured speeds (module docstring); an empty table when the file is absent."""
    try:
        text = resources.files("margintheory.data").joinpath(TIMINGS_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"devices": {}}
    return json.loads(text)


def points_per_step(spec: RunSpec) -> tuple[float, float]:
    """``(points of one update, points of the full dataset)`` of a run."""
    n = _dataset_points(spec)
    train = max(1.0, round(spec.train_fraction * n))
    return float(min(spec.batch_size or train, train)), float(n)


def _dataset_points(spec: RunSpec) -> float:
    s = spec.sizes
    if spec.task == "modular-addition":
        return float(s["p"]) ** s["k"]
    if spec.task == "cogo":
        return float(s["d"]) ** 2
    if spec.task == "parity":
        return 2.0 ** s["n"]
    return float(_group_order(s["group"])) ** 2


def _group_order(name: str) -> int:
    from margintheory.core.problems import GroupComposition

    return int(GroupComposition(name).G.order)


def _fan(spec: RunSpec) -> float:
    """Inputs + outputs of one neuron (the work per point and neuron, up to a constant)."""
    s = spec.sizes
    if spec.task == "modular-addition":
        return float(s["k"] + s["p"])
    if spec.task == "cogo":
        return 2.0 + s["d"]
    if spec.task == "parity":
        return s["n"] + 2.0
    return 2.0 + _group_order(s["group"])


def update_work(spec: RunSpec) -> float:
    """Work of one update in the cost model's units: points per update x width x (inputs + outputs)."""
    return points_per_step(spec)[0] * spec.sizes["width"] * _fan(spec)


def row_work(spec: RunSpec) -> float:
    """Work of one history row (every point of the dataset) in the same units."""
    return points_per_step(spec)[1] * spec.sizes["width"] * _fan(spec)


@dataclass(frozen=True)
class RunEstimate:
    """One run's estimate: ``seconds`` for all its seeds (``None`` with no measurement) and how it was obtained."""

    label: str
    seconds: float | None
    basis: str


def step_seconds(spec: RunSpec, m: dict[str, Any]) -> float:
    """Seconds per step of ``spec`` from the measurement ``m`` (its update and history-row times, each scaled by
    the work: module docstring), a history row every :attr:`RunSpec.history_every` steps."""
    ref = _as_spec(m, spec)
    return (m["update_seconds"] * update_work(spec) / update_work(ref)
            + m["row_seconds"] * row_work(spec) / row_work(ref) / spec.history_every)


def estimate_run(spec: RunSpec, device: str, backend: str, timings: dict[str, Any] | None = None) -> RunEstimate:
    """``spec``'s time on ``device`` with ``backend`` from the measured speeds (module docstring)."""
    table = (timings or load_timings()).get("devices", {}).get(device) or {}
    found = [m for m in table.get("measurements", []) if m["task"] == spec.task
             and m.get("activation", "power") == spec.activation]
    if not found:
        return RunEstimate(spec.label, None, f"no {device} measurement of a {spec.task} run")
    same = [m for m in found if m["backend"] == backend] or found
    best = min(same, key=lambda m: (-_likeness(m, spec), abs(math.log(update_work(_as_spec(m, spec))
                                                                       / update_work(spec)))
                                    + abs(math.log(row_work(_as_spec(m, spec)) / row_work(spec)))))
    per_step = step_seconds(spec, best)
    seconds = per_step * spec.steps * len(spec.seeds)
    where = f"{table.get('hardware', device)}, {best['backend']} backend"
    exact = _as_spec(best, spec).sizes == spec.sizes and update_work(_as_spec(best, spec)) == update_work(spec)
    rates = f"update {best['update_seconds']:.3g} s, history row {best['row_seconds']:.3g} s"
    how = "measured at this size" if exact else \
        f"measured at {_sizes_text(best['sizes'])} ({rates}), scaled by the work"
    basis = (f"{per_step:.3g} s/step x {spec.steps} steps x {len(spec.seeds)} seed(s); {how} on {where} "
             f"({table.get('date', 'undated')})")
    return RunEstimate(spec.label, seconds, basis)


def _likeness(m: dict[str, Any], spec: RunSpec) -> int:
    """How many of the run's sizes, batch and split a measurement shares (the most alike is scaled, then the one
    nearest in work: a ``k = 4`` run is scaled from a ``k = 4`` measurement)."""
    same = sum(m["sizes"].get(name) == value for name, value in spec.sizes.items())
    return same + (m.get("batch_size") == spec.batch_size) + (m.get("train_fraction", 1.0) == spec.train_fraction)


def _as_spec(m: dict[str, Any], like: RunSpec) -> RunSpec:
    from dataclasses import replace

    return replace(like, sizes=dict(m["sizes"]), batch_size=m.get("batch_size"),
                   train_fraction=m.get("train_fraction", 1.0))


def _sizes_text(sizes: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


@dataclass(frozen=True)
class RecipeEstimate:
    """A recipe's time on one device: ``seconds`` (``None`` when a run has no measurement) and the per-run
    estimates."""

    device: str
    seconds: float | None
    runs: tuple[RunEstimate, ...]

    def short(self) -> str:
        """``1.1 h``, ``33 min + 1 run not measured`` or ``not measured`` (a table cell)."""
        if self.seconds is not None:
            return format_seconds(self.seconds)
        known = [r.seconds for r in self.runs if r.seconds is not None]
        if not known:
            return "not measured"
        missing = len(self.runs) - len(known)
        return f"{format_seconds(sum(known))} + {missing} run{'s' if missing > 1 else ''} not measured"

    def text(self) -> str:
        """``1.1 h (from measured steps/s)``, or why there is no figure."""
        if self.seconds is not None:
            return f"{format_seconds(self.seconds)} (from measured steps/s)"
        if self.device == "gpu":
            return "not measured: no GPU has been available to this project"
        return "not measured: " + "; ".join(r.basis for r in self.runs if r.seconds is None)

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "seconds": self.seconds, "text": self.text(), "short": self.short(),
                "runs": [{"run": r.label, "seconds": r.seconds, "basis": r.basis} for r in self.runs]}


def estimate_recipe(rec: Recipe, device: str, backend: str | None = None, scale: float = 1.0,
                    labels: list[str] | None = None, timings: dict[str, Any] | None = None) -> RecipeEstimate:
    """The time of ``rec`` (its runs ``labels``, default all, shrunk by ``scale``) on ``device``."""
    backend = backend or ("jax" if device == "gpu" else "numpy")
    specs = [rec.run(label).scaled(scale) for label in (labels or rec.labels)]
    runs = tuple(estimate_run(spec, device, backend, timings) for spec in specs)
    measured = [r.seconds for r in runs]
    total = sum(s for s in measured if s is not None) if all(s is not None for s in measured) else None
    return RecipeEstimate(device, total, runs)


def measure_speed(spec: RunSpec, *, backend: str, device: str, steps: int) -> tuple[float, float]:
    """``(seconds per update, seconds per history row)`` of ``spec`` (seed 0, its optimizer, batch and split, a
    constant learning rate) on this machine, in CPU seconds of this process (:func:`time.process_time`: on a shared,
    loaded machine the wall clock measures the other jobs too; single-threaded BLAS, ``OMP_NUM_THREADS=1``, makes it
    the wall time of an idle core): two runs of ``steps`` and ``2 steps`` updates, each recording only its first
    and last rows; their difference is ``steps`` updates, the rest of the shorter run two rows (start-up and
    compilation included: an upper bound on a row)."""
    from dataclasses import replace

    from margintheory.reproduce.runs import problem_of, train_config, trainer_gap
    from margintheory.training.trainer import train

    gap = trainer_gap(spec)
    if gap is not None:
        raise NotImplementedError(gap)
    times = []
    for n in (steps, 2 * steps):
        short = replace(spec, steps=n, milestones=(), schedule="constant", log_every=n)
        start = time.process_time()
        train(problem_of(short), train_config(short, 0, backend, "float64"), device=device)
        times.append(time.process_time() - start)
    update = max(0.0, times[1] - times[0]) / steps
    return update, max(0.0, times[0] - steps * update) / 2
