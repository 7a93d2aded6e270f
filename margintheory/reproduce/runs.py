"""One training run of a recipe: its sweep cell, its trainer, its run directory, and reading it back.

A recipe's runs are cells of a sweep (:mod:`margintheory.sweep`): :func:`run_cells` lists them (one per run and
seed) and :func:`recipe_cell` runs one, on whichever worker it lands, into ``OUT/runs/<label>-seed<s>/``:
``network.npz``, ``initial.npz``, ``checkpoint.npz`` (resumable: a killed recipe continues where it stopped,
:func:`margintheory.training.trainer.train`), ``history.csv`` / ``history.json`` and ``run.json`` (the settings,
where and how long it ran).  The cell's result is the analysis of the trained network
(:func:`margintheory.training.analysis.analyze_network` for modular addition), stored in the sweep's store; a
rerun of the recipe skips the finished cells.  :func:`load_outcome` reads a finished run back.

Which tasks and activations have a trainer here is :func:`trainer_gap` (``None``: trainable).
"""

from __future__ import annotations

import importlib.util
import json
import platform
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from margintheory.core.checks import VerificationResult
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, Problem, SparseParity
from margintheory.errors import InputError
from margintheory.reproduce.recipes import Recipe, RunSpec
from margintheory.runtime import strict_json
from margintheory.runtime.atomic import atomic_write_text
from margintheory.sweep.grid import Cell
from margintheory.tasks.parity.checks import ParityNetwork


def trainer_gap(spec: RunSpec) -> str | None:
    """Why this version cannot train ``spec`` (``None`` when it can): a task or activation without a trainer, or
    a variant of the objective the trainer does not have (CoGO Fig. 2 bottom drops the ``R_*`` term of Eq. 3)."""
    from margintheory.backends.training_step import ACTIVATIONS
    from margintheory.training.tasks import TRAINABLE

    if spec.task not in TRAINABLE:
        return f"there is no {spec.task} trainer in this version"
    if spec.activation not in ACTIVATIONS:
        return f"the {spec.activation} activation is not in this version's trainer"
    if spec.objective != "full" and (spec.task != "cogo" or spec.regularizer not in ("none", "l2")
                                     or spec.optimizer != "adam"):
        return f"no trainer for the objective {spec.objective!r} with {spec.optimizer} and {spec.regularizer}"
    if spec.objective != "full" and importlib.util.find_spec("jax") is None:
        return "Eq. 3 without its R_* term is minimized with JAX, which is not installed (margintheory[jax])"
    return None


def run_name(label: str, seed: int, scale: float) -> str:
    """``quadratic-seed0`` (``quadratic-seed0-scale0.01`` for a scaled run: its checkpoint is not the paper-size
    run's)."""
    return f"{label}-seed{seed}" + ("" if scale == 1 else f"-scale{scale:g}")


def run_cells(rec: Recipe, labels: list[str], scale: float, *, backend: str, device: str, dtype: str,
              out: Path, budget: dict[str, Any]) -> list[Cell]:
    """The sweep cells of the runs ``labels`` of ``rec`` (one per seed).  A cell's identity is the run's settings,
    seed, scale and backend (the same run of two recipes is one cell: ``morwani-fig7.4`` reuses
    ``morwani-fig7.1``'s runs in the same directory); the recipe, the output directory and the budget are not."""
    cells = []
    for label in labels:
        spec = rec.run(label).scaled(scale)
        for seed in spec.seeds:
            params = {"run": label, "seed": seed, "scale": scale, "backend": backend, "device": device,
                      "dtype": dtype, "settings": spec.settings(), "steps": spec.steps, "lr": spec.lr,
                      "lambda": spec.lam, "width": spec.sizes["width"]}
            params.update({name: spec.sizes[name] for name in ("p", "k") if name in spec.sizes})
            cells.append(Cell("train", params, {"recipe": rec.name, "out": str(out), **budget}))
    return cells


def spec_of(settings: dict[str, Any]) -> RunSpec:
    """The :class:`RunSpec` of :meth:`RunSpec.settings` (JSON lists back to tuples)."""
    values = dict(settings)
    for name in ("milestones", "betas", "seeds"):
        values[name] = tuple(values[name])
    return RunSpec(**values)


def recipe_cell(params: dict[str, Any]) -> VerificationResult:
    """Train one run of a recipe into its run directory and analyse it (module docstring).  Module-level, so that
    a dask cluster sends it by name; ``params`` holds the cell's parameters (the run's settings) and budget."""
    spec = spec_of(params["settings"])
    gap = trainer_gap(spec)
    if gap is not None:
        raise InputError(f"run {spec.label}: {gap}")
    run_dir = Path(params["out"]) / "runs" / run_name(spec.label, params["seed"], params["scale"])
    run_dir.mkdir(parents=True, exist_ok=True)
    if spec.objective == "no-r-star":
        return _train_without_r_star(spec, params, run_dir)
    return _train_run(spec, params, run_dir)


def _train_without_r_star(spec: RunSpec, params: dict[str, Any], run_dir: Path) -> VerificationResult:
    """CoGO Fig. 2 (bottom): Adam on Eq. 3 without the R_* term (:mod:`margintheory.reproduce.cogo_potentials`),
    from the trainer's initialization of this seed; the run directory gets the trainer's files (no checkpoint: the
    run takes seconds)."""
    from margintheory.reproduce.cogo_potentials import train_without_r_star
    from margintheory.training.analysis import analyze
    from margintheory.training.tasks import training_task
    from margintheory.training.trainer import initial_parameters

    problem = problem_of(spec)
    cfg = train_config(spec, params["seed"], params["backend"], params["dtype"])
    task = training_task(problem)
    U0, W0 = initial_parameters(cfg, task)
    net, history, seconds = train_without_r_star(U0, W0, lr=spec.lr, steps=spec.steps, betas=spec.betas,
                                                 l2=spec.lam if spec.regularizer == "l2" else 0.0,
                                                 log_every=spec.history_every)
    net.save(run_dir / "network.npz")
    PolyNetwork(U0, W0).save(run_dir / "initial.npz")
    doc = {"config": {**cfg.to_dict(), "task": "cogo", "objective": spec.objective}, "seconds": seconds,
           "cpu_seconds": seconds, "finished": True, "gamma_star": None, "history": history}
    atomic_write_text(run_dir / "history.json", json.dumps(doc, indent=1, allow_nan=False))
    result = analyze(problem, net, rtol=None, max_memory=params.get("max_memory", 2**31),
                     title=f"run {spec.label} seed {cfg.seed} (d={spec.sizes['d']}, q={cfg.width}; Eq. 3 without R_*)")
    result.fields.update(train_seconds=seconds, final_objective=history[-1]["loss"])
    result.parameters.update(run=spec.label, seed=cfg.seed, scale=params["scale"], objective=spec.objective)
    _write_run_json(run_dir, spec, params, seconds, 0.0)
    return result


def problem_of(spec: RunSpec) -> Problem:
    """The problem object of a run (its task at its sizes)."""
    s = spec.sizes
    if spec.task == "modular-addition":
        return ModularAddition(int(s["p"]), int(s["k"]))
    if spec.task == "parity":
        return SparseParity(int(s["n"]), int(s["k"]))
    if spec.task == "group":
        return GroupComposition(str(s["group"]))
    return CoGO(int(s["d"]))


def train_config(spec: RunSpec, seed: int, backend: str, dtype: str):  # noqa: ANN201 - a TrainConfig
    """The trainer's configuration of a run: the paper's settings, this seed and backend (modular addition names
    ``p`` and ``k`` in it too, as its checkpoints always have)."""
    from margintheory.training.config import TrainConfig

    s = spec.sizes
    modular = spec.task == "modular-addition"
    lr, lam, init_scale = spec.trainer_settings()
    return TrainConfig(p=s["p"] if modular else None, k=s["k"] if modular else None, width=s["width"],
                       steps=spec.steps, lam=lam, regularizer=spec.regularizer, optimizer=spec.optimizer,
                       lr=lr, init_scale=init_scale, schedule=spec.schedule, warmup=spec.warmup,
                       milestones=list(spec.milestones),
                       betas=list(spec.betas), weight_decay=spec.weight_decay, batch_size=spec.batch_size,
                       train_fraction=spec.train_fraction, seed=seed, log_every=spec.history_every,
                       checkpoint_every=max(spec.history_every, 1000), backend=backend, dtype=dtype,
                       activation=spec.activation)


def _train_run(spec: RunSpec, params: dict[str, Any], run_dir: Path) -> VerificationResult:
    from margintheory.runtime.budget import DEFAULT_MAX_MEMORY, require
    from margintheory.training.analysis import analyze
    from margintheory.training.tasks import training_task
    from margintheory.training.trainer import estimate_training_run, network_of, train, write_history

    problem = problem_of(spec)
    cfg = train_config(spec, params["seed"], params["backend"], params["dtype"])
    task = training_task(problem)
    memory, seconds = params.get("max_memory", DEFAULT_MAX_MEMORY), params.get("max_seconds")
    require(estimate_training_run(network_of(cfg, task), task.n_points, cfg.width, cfg.steps,
                                  batch_size=cfg.batch_size, log_every=cfg.log_every, figures=False,
                                  backend=cfg.backend, device=params["device"]), memory, seconds)
    trained = train(problem, cfg, checkpoint=run_dir / "checkpoint.npz", resume=True, device=params["device"])
    trained.network.save(run_dir / "network.npz")
    trained.initial.save(run_dir / "initial.npz")
    write_history(run_dir, trained)
    kwargs: dict[str, Any] = {"compare_construction": False} if spec.task == "modular-addition" else {}
    result = analyze(problem, trained.network, activation=spec.activation, rtol=None, max_memory=memory,
                     max_seconds=seconds, title=f"run {spec.label} seed {cfg.seed} ({task.label()}, m={cfg.width})",
                     **kwargs)
    result.fields["relative_gradient_norm"] = relative_gradient_norm(cfg, task, trained.network)
    result.fields.update(train_seconds=trained.seconds, train_cpu_seconds=trained.cpu_seconds,
                         final_loss=trained.history[-1]["loss"], train_accuracy=trained.history[-1]["train_acc"])
    result.parameters.update(run=spec.label, seed=cfg.seed, scale=params["scale"])
    _write_run_json(run_dir, spec, params, trained.seconds, trained.cpu_seconds)
    return result


def relative_gradient_norm(cfg, task, net: Any) -> float:  # noqa: ANN001 - a TrainConfig and a TrainingTask
    """``||grad L(theta)|| / ||grad of the data term alone||`` at the trained weights, over the training points:
    how far the run is from a stationary point of the regularized objective (0 at a stationary point; 1 when the
    penalty's gradient is negligible next to the loss's, as with no penalty at all)."""
    from margintheory.training.objective import Batch, objective_and_grad
    from margintheory.training.trainer import network_of, train_mask

    inputs, labels = task.points()
    mask = train_mask(cfg, task.n_points)
    spec = network_of(cfg, task)
    batch = Batch.from_inputs(inputs[mask], spec.symbols, labels=labels[mask])
    full = objective_and_grad(net.U, net.W, batch, cfg.lam, cfg.regularizer, network=spec)
    data = objective_and_grad(net.U, net.W, batch, 0.0, "none", network=spec)
    num = float(np.sqrt(np.sum(full.grad_U**2) + np.sum(full.grad_W**2)))
    den = float(np.sqrt(np.sum(data.grad_U**2) + np.sum(data.grad_W**2)))
    return num / den if den > 0 else float("inf")


def _write_run_json(run_dir: Path, spec: RunSpec, params: dict[str, Any], seconds: float, cpu: float) -> None:
    doc = {"recipe": params["recipe"], "run": spec.label, "seed": params["seed"], "scale": params["scale"],
           "settings": spec.settings(), "backend": params["backend"], "device": params["device"],
           "dtype": params["dtype"], "seconds": seconds, "cpu_seconds": cpu, "host": socket.gethostname(),
           "machine": hardware_description()}
    atomic_write_text(run_dir / "run.json", json.dumps(doc, indent=1, allow_nan=False))


def hardware_description() -> str:
    """``x86_64, 2 CPUs, Linux 6.1`` and the CPU model where the system names it."""
    import os

    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model or platform.processor() or platform.machine()}, {cpus} CPUs, {platform.system()} " \
           f"{platform.release()}"


@dataclass
class RunOutcome:
    """A finished run read back: its settings, seed, trained and initial network, history, analysis (the cell's
    result as JSON) and run directory."""

    spec: RunSpec
    seed: int
    network: Any  # a PolyNetwork, or a ParityNetwork for parity
    initial: Any
    history: list[dict[str, Any]]
    analysis: dict[str, Any]
    run_dir: Path
    seconds: float
    cpu_seconds: float = 0.0
    cache: dict[str, Any] = field(default_factory=dict)


def load_outcome(spec: RunSpec, seed: int, run_dir: Path, analysis: dict[str, Any]) -> RunOutcome:
    """Read the run directory of a finished run (its files were written by :func:`recipe_cell`)."""
    doc = strict_json.loads((run_dir / "history.json").read_text(encoding="utf-8"))
    kind: Any = ParityNetwork if spec.task == "parity" else PolyNetwork
    return RunOutcome(spec, seed, kind.load(run_dir / "network.npz"), kind.load(run_dir / "initial.npz"),
                      doc["history"], analysis, run_dir, float(doc.get("seconds") or 0.0),
                      float(doc.get("cpu_seconds") or 0.0))
