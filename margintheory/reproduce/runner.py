"""Reproduce one recipe: train its runs (as sweep cells), measure its claims, draw its figures, write its result.

:func:`reproduce` is the whole recipe (docs/reproductions.md):

1. the runs this version can train are the cells of a sweep into ``OUT/store``
   (:func:`margintheory.sweep.runner.run_sweep`), on the executor given (this process by default, or a dask
   cluster: :func:`margintheory.execution.executors.open_executor`), each into ``OUT/runs/<label>-seed<s>/``
   (:mod:`margintheory.reproduce.runs`); a rerun skips the finished cells and resumes a killed run from its
   checkpoint;
2. every claim of the paper is a check row (:mod:`margintheory.reproduce.claims`); at the paper's size the claims
   decide the verdict (``verified``: the run bears every claim out; ``refuted``: some claim is not borne out), a
   run scaled by ``scale < 1`` reports them without deciding (``not-applicable``: a smoke test is not the paper's
   experiment, and its result says so);
3. the paper's figures are drawn into ``OUT/figures`` (:mod:`margintheory.reproduce.figures`);
4. the result (the one result shape) is written to ``OUT/<recipe>.json``.

Runs whose task or activation has no trainer in this version are not trained: their claims are rows without a
measured value that say why, and the result is incomplete (exit code 2), as it is when a run fails.  Runs left out
on request (``labels``) leave their claims unmeasured (and undecided) without making the result incomplete.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from margintheory.core import theory
from margintheory.core.checks import VerificationResult
from margintheory.errors import InputError
from margintheory.execution.executors import Executor, InProcessExecutor
from margintheory.reproduce.catalog import recipe
from margintheory.reproduce.claims import claim_checks
from margintheory.reproduce.estimates import estimate_recipe
from margintheory.reproduce.figures import draw_recipe
from margintheory.reproduce.recipes import Recipe, RunSpec
from margintheory.reproduce.runs import (
    RunOutcome,
    hardware_description,
    load_outcome,
    recipe_cell,
    run_cells,
    run_name,
    trainer_gap,
)
from margintheory.runtime.atomic import atomic_write_text, check_output_dir
from margintheory.runtime.budget import DEFAULT_MAX_MEMORY, Estimate, require
from margintheory.sweep.runner import SweepCounts, run_sweep
from margintheory.sweep.store import ERROR, ResultStore


@dataclass(frozen=True)
class ReproduceOptions:
    """How to run a recipe: ``scale`` in (0, 1] (1: the paper's size), the runs to train (``labels``, default
    all), the training backend, device and dtype, the budget (``max_memory`` per run, ``max_seconds`` for the whole
    recipe, checked against its estimate before anything runs), and whether to draw the figures."""

    scale: float = 1.0
    labels: tuple[str, ...] | None = None
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"
    max_memory: int = DEFAULT_MAX_MEMORY
    max_seconds: float | None = None
    figures: bool = True


def reproduce(name: str, out: str | os.PathLike[str], options: ReproduceOptions | None = None, *,
              executor: Executor | None = None,
              on_progress: Callable[[SweepCounts], None] | None = None) -> VerificationResult:
    """Reproduce the recipe ``name`` into the directory ``out`` (module docstring)."""
    start = time.perf_counter()
    opts = options or ReproduceOptions()
    rec = recipe(name)
    labels = _chosen_labels(rec, opts)
    trainable = [label for label in labels if trainer_gap(rec.run(label)) is None]
    missing = {label: str(trainer_gap(rec.run(label))) for label in labels if label not in trainable}
    left_out = {label: "left out of this reproduction (runs chosen)" for label in rec.labels if label not in labels}
    require(_estimate(rec, trainable, opts), opts.max_memory, opts.max_seconds)
    folder = check_output_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    outcomes, failed = _train(rec, trainable, opts, folder, executor, on_progress)
    missing.update(failed)
    checks = claim_checks(rec, outcomes, {**missing, **left_out}, decide=opts.scale == 1)
    figures = draw_recipe(rec, outcomes, folder / "figures") if opts.figures else []
    result = _result(rec, opts, outcomes, missing, checks)
    if left_out:
        result.notes.append(f"runs left out (chosen): {', '.join(left_out)}; the claims on them are not measured")
    result.fields.update(figures=[str(p) for p in figures], out=str(folder), seconds=time.perf_counter() - start)
    atomic_write_text(folder / f"{rec.name}.json", json.dumps(result.to_dict(), indent=1, allow_nan=False))
    return result


def _chosen_labels(rec: Recipe, opts: ReproduceOptions) -> list[str]:
    if not (0 < opts.scale <= 1):
        raise InputError(f"scale must be in (0, 1], got {opts.scale}")
    labels = list(opts.labels) if opts.labels else rec.labels
    for label in labels:
        rec.run(label)  # an unknown label is one line naming the recipe's runs
    return labels


def _estimate(rec: Recipe, labels: list[str], opts: ReproduceOptions) -> Estimate:
    """Memory of the largest run and time of all runs: measured speeds where there are some, else the trainer's
    cost model (:func:`margintheory.training.trainer.estimate_training_run`)."""
    from margintheory.reproduce.runs import problem_of, train_config
    from margintheory.training.tasks import training_task
    from margintheory.training.trainer import estimate_training_run, network_of

    what = f"reproducing {rec.name}" + ("" if opts.scale == 1 else f" scaled by {opts.scale:g}")
    memory, model = 0.0, 0.0
    for label in labels:
        spec = rec.run(label).scaled(opts.scale)
        cfg = train_config(spec, 0, opts.backend, opts.dtype)
        task = training_task(problem_of(spec))
        est = estimate_training_run(network_of(cfg, task), task.n_points, cfg.width, cfg.steps,
                                    batch_size=cfg.batch_size, log_every=cfg.log_every, figures=opts.figures,
                                    backend=opts.backend, device=opts.device)
        memory, model = max(memory, float(est.bytes)), model + float(est.seconds or 0.0) * len(spec.seeds)
    measured = estimate_recipe(rec, opts.device, opts.backend, opts.scale, labels).seconds if labels else 0.0
    return Estimate(what, memory, measured if measured is not None else model)


def _train(rec: Recipe, labels: list[str], opts: ReproduceOptions, folder: Path, executor: Executor | None,
           on_progress: Callable[[SweepCounts], None] | None) -> tuple[dict[str, list[RunOutcome]], dict[str, str]]:
    """Run the cells of ``labels``; the finished runs read back by label, and why the others failed."""
    if not labels:
        return {}, {}
    budget: dict[str, Any] = {"max_memory": opts.max_memory}
    cells = run_cells(rec, labels, opts.scale, backend=opts.backend, device=opts.device, dtype=opts.dtype,
                      out=folder, budget=budget)
    store = ResultStore(folder / "store")
    own = executor is None
    runner = executor or InProcessExecutor(retries=0)
    try:
        summary = run_sweep(cells, store, runner, recipe_cell, retry_failed=True, on_progress=on_progress,
                            warm=False)
    finally:
        if own:
            runner.close()
    outcomes: dict[str, list[RunOutcome]] = {}
    failed: dict[str, str] = {}
    rows = {row["cell"]: row for row in summary.table.to_pylist()}
    for cell in cells:
        label, seed = cell.params["run"], cell.params["seed"]
        row = rows.get(cell.key)
        if row is None or row["verdict"] == ERROR:
            failed.setdefault(label, f"seed {seed} failed: {row['error'] if row else 'no result'}")
            continue
        spec = rec.run(label).scaled(opts.scale)
        run_dir = folder / "runs" / run_name(label, seed, opts.scale)
        outcomes.setdefault(label, []).append(load_outcome(spec, seed, run_dir, json.loads(row["result"])))
    return outcomes, failed


def _result(rec: Recipe, opts: ReproduceOptions, outcomes: dict[str, list[RunOutcome]], missing: dict[str, str],
            checks: list) -> VerificationResult:
    runs = [rec.run(label).scaled(opts.scale) for label in rec.labels]
    paper = opts.scale == 1
    result = VerificationResult(
        title=f"reproduce {rec.name}: {rec.where}" + ("" if paper else f", scaled by {opts.scale:g} (NOT the "
                                                                         "paper's size)"),
        checks=checks, task=runs[0].task,
        parameters={"recipe": rec.name, "scale": opts.scale, "paper_size": paper, "backend": opts.backend,
                    "device": opts.device, "dtype": opts.dtype,
                    "runs": {spec.label: spec.settings() for spec in runs}})
    result.fields.update(_common_fields(runs, outcomes))
    result.fields.update(citation=rec.citation, summary=rec.summary, unstated=list(rec.unstated),
                         hardware=hardware_description(), run_summaries=_run_summaries(outcomes),
                         estimate_cpu=estimate_recipe(rec, "cpu", scale=opts.scale).to_dict(),
                         estimate_gpu=estimate_recipe(rec, "gpu", scale=opts.scale).to_dict())
    if not paper:
        result.notes.append(f"scaled by {opts.scale:g}: NOT the paper's size (a smoke test); the paper's claims are "
                            "measured and reported, and decide nothing")
    if missing:
        result.incomplete = "; ".join(f"run {label}: {why}" for label, why in missing.items())
        result.notes.append(f"not every run was trained: {result.incomplete}")
    return result


def _common_fields(runs: list[RunSpec], outcomes: dict[str, list[RunOutcome]]) -> dict[str, Any]:
    """``gamma_star``, ``normalized_margin`` (the worst run) and ``width`` when every run is one modular-addition
    problem with a closed form (else ``gamma_star`` is null and the note says why)."""
    problems = {(int(s.sizes["p"]), int(s.sizes["k"])) for s in runs if s.task == "modular-addition"
                and s.activation == "power"}
    done = [o for group in outcomes.values() for o in group if o.spec.activation == "power"
            and o.spec.task == "modular-addition"]
    if len(problems) != 1 or not done:
        return {"gamma_star": None, "gamma_star_note": "the recipe's runs are not one modular-addition problem with "
                "a measured margin: each claim row carries its own"}
    p, k = next(iter(problems))
    margin = min(float(o.analysis["normalized_margin"]) for o in done)
    return {"gamma_star": theory.gamma_star(p, k), "gamma_star_note": "Theorem C.22 (= Thm 7.7 for k = 2)",
            "normalized_margin": margin, "width": max(o.network.m for o in done)}


def _run_summaries(outcomes: dict[str, list[RunOutcome]]) -> list[dict[str, Any]]:
    return [{"run": o.spec.label, "seed": o.seed, "sizes": o.spec.sizes, "steps": o.spec.steps,
             "seconds": o.seconds, "cpu_seconds": o.cpu_seconds,
             "normalized_margin": o.analysis.get("normalized_margin"),
             "ratio_to_gamma_star": o.analysis.get("ratio_to_gamma_star"), "analysis_verdict": o.analysis["verdict"],
             "relative_gradient_norm": o.analysis["details"].get("relative_gradient_norm"),
             "run_dir": str(o.run_dir)} for group in outcomes.values() for o in group]
