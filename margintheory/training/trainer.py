"""Training loop: seeds, data split, mini-batches, schedule, progress callbacks, checkpoints and exact resume.

``train(problem, config)`` trains the network of any task (a problem object of :mod:`margintheory.core.problems`:
:class:`ModularAddition`, :class:`SparseParity`, :class:`GroupComposition`, :class:`CoGO`) through its adapter
(:mod:`margintheory.training.tasks`).  Minimizes ``mean loss + lambda * R(theta)`` (:mod:`.objective`; Lemma 4.7 =
Thm 7.1 for the margin papers' cross-entropy, Tian's Eq. 1 for CoGO's projected MSE) over the training part of the
task's points.  Randomness comes from three generators derived from ``seed`` (``[seed, 0]`` initialization,
``[seed, 1]`` train/test split, ``[seed, 2]`` mini-batches); the mini-batch generator's state is checkpointed, so a
resumed run makes bit-for-bit the same updates as an uninterrupted one.  Each history row describes the parameters
*after* ``step`` updates (row 0 = initialization).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np

from margintheory.backends.select import Backend
from margintheory.backends.training_step import NetworkSpec, TrainingTask
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition, Problem
from margintheory.errors import DivergedError, InputError
from margintheory.runtime.atomic import atomic_write_text
from margintheory.runtime.budget import Estimate, grid_points
from margintheory.tasks.parity.checks import ParityNetwork
from margintheory.training.checkpoint import TrainState, load_checkpoint, save_checkpoint
from margintheory.training.config import DTYPES, LATER_KEYS, RESUME_FREE, TrainConfig
from margintheory.training.metrics import COMMON_FIELDS, HISTORY_FIELDS, margin_measures
from margintheory.training.objective import BLOCK_ROWS
from margintheory.training.objective import regularizer_value_and_grad as penalty_of
from margintheory.training.steppers import make_stepper
from margintheory.training.tasks import training_task

__all__ = ["DTYPES", "LATER_KEYS", "RESUME_FREE", "TrainConfig", "TrainResult", "estimate_training",
           "estimate_training_run", "history_csv", "train", "train_mask", "write_history"]


#: cost of one numpy training step per unit ``p^k m (k + p)`` (forward, backward, a history row every step).
#: Measured 2026-11-27 on the 2-core machine (32 MiB L3), fastest of 3 runs of 30 steps: 7.6e-10 at (17,3) m=512,
#: 1.2e-9 at (11,4) m=512, 1.6e-9 at (7,5) m=256, 9.0e-10 at (31,3) m=256; on 2026-11-25 (8 MiB L3) 2.0e-9 at
#: (17,3) m=512.  This value keeps the estimate within 2x of all five (0.75x to 1.96x); it was 1.0e-8 (7-13x).
SECONDS_PER_STEP_UNIT = 1.5e-9


#: a GPU's step: a fixed cost plus its matrix products at a fixed rate.  Neither is measured here (no GPU has been
#: available); both come from measurements on one H100 quoted in the JAX-backend issue: a plain JAX version of this
#: objective ran 3000 steps at p=17, k=3, m=512 in 9.5 s (3.2 ms a step, whose 3.4e8 flops take 0.1 ms at the rate
#: below: the step's fixed cost), and a plain float64 engine ran its GEMM at 3.6e12 flop/s at p=101, k=4.  A step
#: counts ``GPU_STEP_GEMMS`` products of ``2 p^k m p`` flops (forward, the two gradient products, the float64
#: evaluation of a history row).  Until 2026-11-27 the estimate was the numpy one divided by 20, which matches the
#: first figure but grows with ``p`` as numpy's elementwise work does: 8.8, 46 and 63 hours for the papers' three
#: runs of 3000 steps, against 15, 75 and 93 minutes by this count.
GPU_STEP_SECONDS = 3.2e-3
GPU_FLOPS = 3.6e12
GPU_STEP_GEMMS = 4
#: the JAX backend's CPU step, taken as this many times faster than the numpy estimate.  Measured 2026-11-27 at the
#: four sizes above (fastest of 3 runs of 30 steps, after float64 steps began to measure the history rows): the
#: estimate is then 0.78x to 1.77x of the measured float64 step and 0.69x to 1.56x of the float32 one (with the
#: earlier 3.0: 1.03x to 2.66x); the largest speed-up over numpy was at (31,3) m=256, the smallest at (7,5) m=256
JAX_CPU_STEP_SPEEDUP = 4.5
#: resident-memory growth of a JAX run beyond its arrays (compiler, runtime): measured 138 MB at p=11, k=2
JAX_RUNTIME_BYTES = 160 * 2**20


def estimate_training(p: int, k: int, width: int, steps: int, *, figures: bool = True, backend: str = "numpy",
                      device: str = "cpu") -> Estimate:
    """Peak host memory and run time of :func:`train` on modular addition from ``(p, k, m, steps)`` alone, with the
    full batch and a history row every step (:func:`estimate_training_run`)."""
    return estimate_training_run(NetworkSpec("sum", k, p, p, "power", k), grid_points(p, k), width, steps,
                                 figures=figures, backend=backend, device=device)


def estimate_training_run(network: NetworkSpec, n_points: float, width: int, steps: int, *,
                          batch_size: int | None = None, log_every: int = 1, figures: bool = True,
                          backend: str = "numpy", device: str = "cpu") -> Estimate:
    """Peak host memory and run time of :func:`train` for a network on ``n_points`` points (numpy: calibrated with
    ``tracemalloc`` and wall clocks: the data and logits of all points, the blocked workspace, parameter copies;
    a step's forward and backward pass over its batch taken as two thirds, a history row's pass over all points as
    one third of :data:`SECONDS_PER_STEP_UNIT` per point, neuron and unit of ``inputs + classes``; jax: the inputs
    and their device copies, the blocks of :mod:`margintheory.backends.jax_training` on a CPU, the numpy step time
    divided by :data:`JAX_CPU_STEP_SPEEDUP` on a CPU; on a GPU a fixed cost per step and the step's matrix products
    at :data:`GPU_FLOPS`)."""
    what = f"training width {width} for {steps} steps on {n_points:.0f} points"
    n = n_points
    table = network.inputs * max(network.symbols, 1)
    if n == math.inf or width * (table + network.classes) > 2**100:
        return Estimate(what, math.inf, math.inf)
    rows = n if batch_size is None else min(n, batch_size)
    weights = 8 * width * (table + network.classes)
    extra = 12 * weights + (64 * 2**20 if figures else 0)
    per_row = SECONDS_PER_STEP_UNIT * width * (network.inputs + network.classes)
    seconds = max(1, steps) * per_row * (2 / 3 * rows + 1 / 3 * n / log_every)
    if backend == "jax":
        blocks = (4 * 8 * 2**20 if device == "cpu" else 0) + JAX_RUNTIME_BYTES
        if device == "gpu":
            width_out = max(network.classes, network.inputs if network.family == "linear" else 0)
            gemm_rows = rows + n / log_every
            seconds = max(1, steps) * (GPU_STEP_SECONDS + GPU_STEP_GEMMS / 2 * 2.0 * gemm_rows * width * width_out
                                       / GPU_FLOPS)
        else:
            seconds /= JAX_CPU_STEP_SPEEDUP
        return Estimate(what, (40 * network.inputs + 64) * n + blocks + extra, seconds)
    return Estimate(what, 64 * n * network.classes + 32 * n * network.inputs + 40 * min(BLOCK_ROWS, n) * width
                    + extra, seconds)


#: the network a run trains: a PolyNetwork (modular addition, groups, CoGO) or a ParityNetwork (parity)
TrainedNetwork = PolyNetwork | ParityNetwork


@dataclass
class TrainResult:
    """The trained network, the network at initialization, the history and whether the run finished.

    ``network`` / ``initial``: the task's network object (:class:`~margintheory.core.network.PolyNetwork`, or
    :class:`~margintheory.tasks.parity.checks.ParityNetwork` for parity); ``problem``: the problem trained on."""

    config: TrainConfig
    network: TrainedNetwork
    initial: TrainedNetwork
    history: list[dict[str, float]]
    seconds: float
    finished: bool
    cpu_seconds: float = 0.0
    problem: Problem | None = None
    #: the history's columns (:data:`margintheory.training.metrics.COMMON_FIELDS`, the task's, ``seconds``)
    fields: tuple[str, ...] = HISTORY_FIELDS
    gamma_star: float | None = None


def initial_parameters(cfg: TrainConfig, task: TrainingTask | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian initialization, standard deviation ``init_scale`` (default: the task's, ``1/sqrt(p)`` for modular
    addition), generator ``[seed, 0]``; ``U`` first, then ``W``."""
    task = task if task is not None else training_task(_modular_problem(cfg))
    net = task.network_spec(cfg.activation)
    rng = np.random.default_rng([cfg.seed, 0])
    scale = cfg.init_scale if cfg.init_scale is not None else task.default_init_scale()
    U = rng.normal(0.0, scale, net.u_shape(cfg.width))
    W = rng.normal(0.0, scale, net.w_shape(cfg.width))
    return U, W


def train_mask(cfg: TrainConfig, n_points: int | None = None) -> np.ndarray:
    """Mask over the task's points (modular addition: :func:`input_grid` rows, ``p^k`` of them) of the training
    points (seeded permutation, generator ``[seed, 1]``)."""
    n = n_points if n_points is not None else int(_modular_problem(cfg).p ** _modular_problem(cfg).k)
    mask = np.zeros(n, dtype=bool)
    mask[np.random.default_rng([cfg.seed, 1]).permutation(n)[:cfg.n_train(n)]] = True
    return mask


def _modular_problem(cfg: TrainConfig) -> ModularAddition:
    if cfg.p is None or cfg.k is None:
        raise InputError("the configuration names no problem: give train() a problem object (or p and k for "
                         "modular addition)")
    return ModularAddition(cfg.p, cfg.k)


def run_record(cfg: TrainConfig, task: TrainingTask) -> dict[str, Any]:
    """The configuration as saved with the run: the hyper-parameters, the task and the problem's parameters."""
    return {**cfg.to_dict(), "task": task.task, "problem": task.parameters()}


def fresh_state(cfg: TrainConfig, task: TrainingTask | None = None) -> TrainState:
    task = task if task is not None else training_task(_modular_problem(cfg))
    U, W = initial_parameters(cfg, task)
    rng = np.random.default_rng([cfg.seed, 2])
    return TrainState(run_record(cfg, task), U, W, 0, 0, {}, dict(rng.bit_generator.state), [], 0.0)


class _Run:
    """One training session (possibly continuing a checkpoint) on the backend's :class:`Stepper`."""

    def __init__(self, cfg: TrainConfig, task: TrainingTask, state: TrainState, device: str = "cpu") -> None:
        self.cfg, self.task, self.state = cfg, task, state
        self.network = network_of(cfg, task)
        inputs, labels = task.points()
        self.mask = train_mask(cfg, len(labels))
        self.n_train = int(self.mask.sum())
        self.sched = cfg.schedule_obj()
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = state.rng_state
        self.gamma = task.gamma_star(cfg.width) if cfg.activation == "power" else None
        self.stepper = make_stepper(cfg.step_spec(self.network, len(labels)), Backend(cfg.backend, device),
                                    inputs, labels, self.mask, state)

    def batch_rows(self) -> np.ndarray | None:
        """Indices into the training points of this step's mini-batch (``None``: the full batch)."""
        bs = self.cfg.batch_size
        if bs is None or bs >= self.n_train:
            return None
        return np.sort(self.rng.choice(self.n_train, size=bs, replace=False))

    def record(self, lr: float, seconds: float) -> dict[str, float]:
        """A history row: loss and accuracies by the backend, recomputed in float64; margin and the task's
        statistics from the float64 weights."""
        s, L = self.state, self.network.homogeneity
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # huge weights: divergence, reported
            ev = self.stepper.evaluate()
            U, W = (np.asarray(a, dtype=np.float64) for a in self.stepper.weights())
            penalty, _, _ = penalty_of(U, W, self.cfg.regularizer, L)
            row = {"step": s.step, "lr": lr, "loss": ev.data_loss + self.cfg.lam * penalty, "data_loss": ev.data_loss,
                   "train_acc": ev.train_acc, "test_acc": ev.test_acc}
            row.update(margin_measures(U, W, ev.h, L, self.gamma))
            if np.all(np.isfinite(U)) and np.all(np.isfinite(W)):
                row.update(self.task.measure(U, W))
            else:
                row.update({name: float("nan") for name in self.task.history_fields})
        row["seconds"] = seconds
        s.history.append(row)
        return row

    def update(self) -> float:
        s = self.state
        lr = self.sched(s.step + 1)
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is detected and reported just below
            total, finite = self.stepper.step(self.batch_rows(), lr)
        if not math.isfinite(total):
            raise DivergedError(f"training diverged at step {s.step + 1} (objective {total}); "
                                "lower the learning rate")
        s.step += 1
        if not finite:
            raise DivergedError(f"training diverged at step {s.step} (non-finite weights); lower the learning rate")
        return lr

    def snapshot(self) -> TrainState:
        """The state with the stepper's weights and optimizer state (host copies for the JAX backend)."""
        s = self.state
        s.U, s.W = self.stepper.weights()
        s.moments, s.opt_t = self.stepper.optimizer_state()
        s.rng_state = dict(self.rng.bit_generator.state)
        return s


ProgressHook = Callable[[dict[str, float], int], None]


@overload
def train(problem: TrainConfig, config: None = None, *, checkpoint: str | os.PathLike[str] | None = None,
          resume: bool = False, stop_after: int | None = None, progress: ProgressHook | None = None,
          hook: ProgressHook | None = None, device: str = "cpu") -> TrainResult: ...


@overload
def train(problem: Problem, config: TrainConfig, *, checkpoint: str | os.PathLike[str] | None = None,
          resume: bool = False, stop_after: int | None = None, progress: ProgressHook | None = None,
          hook: ProgressHook | None = None, device: str = "cpu") -> TrainResult: ...


def train(problem: Problem | TrainConfig, config: TrainConfig | None = None, *,
          checkpoint: str | os.PathLike[str] | None = None, resume: bool = False, stop_after: int | None = None,
          progress: ProgressHook | None = None, hook: ProgressHook | None = None,
          device: str = "cpu") -> TrainResult:
    """Run (or continue) training the network of ``problem`` with the hyper-parameters ``config``.

    ``train(SparseParity(10, 4), TrainConfig(width=40, ...))``; for modular addition also ``train(TrainConfig(p=31,
    k=2, width=240, ...))`` (the 0.1 form).  ``checkpoint``: file written every ``config.checkpoint_every`` steps,
    at the end, and on interruption (``KeyboardInterrupt`` saves the current step, then re-raises).  ``resume``:
    continue from that file if it exists (its problem and configuration must equal these except for ``steps`` and
    ``checkpoint_every``).  ``stop_after``: stop after this many updates in this session (used to test resuming).
    ``progress`` and ``hook``: callbacks ``(row, target_step)`` called with every recorded history row (the command
    line passes one that draws a progress bar).  ``device``: ``"cpu"`` or ``"gpu"`` for the ``jax`` backend
    (``config.backend``).
    """
    cfg, task = resolve(problem, config)
    state = _initial_state(cfg, task, checkpoint, resume)
    run = _Run(cfg, task, state, device)
    initial = task.network(*initial_parameters(cfg, task))
    t_start = time.perf_counter() - state.seconds
    cpu_start = time.process_time() - state.cpu_seconds

    def clock() -> None:
        state.seconds = time.perf_counter() - t_start
        state.cpu_seconds = time.process_time() - cpu_start

    if not state.history:
        _check_start(cfg, task, run.record(run.sched(1) if cfg.steps else cfg.lr, 0.0))
    target = cfg.steps if stop_after is None else min(cfg.steps, state.step + stop_after)
    saved = state.step if checkpoint is not None and resume and Path(checkpoint).exists() else None
    _loop(run, target, checkpoint, saved, [f for f in (progress, hook) if f is not None], clock, t_start)
    clock()
    run.snapshot()
    if checkpoint is not None:
        save_checkpoint(checkpoint, state)
    net = task.network(state.U.copy(), state.W.copy())
    return TrainResult(cfg, net, initial, state.history, state.seconds, state.step >= cfg.steps, state.cpu_seconds,
                       task_problem(task), COMMON_FIELDS + tuple(task.history_fields) + ("seconds",), run.gamma)


def _loop(run: _Run, target: int, checkpoint: str | os.PathLike[str] | None, saved: int | None,
          callbacks: list[ProgressHook], clock: Callable[[], None], t_start: float) -> None:
    """The updates up to step ``target``: history rows, callbacks, periodic checkpoints; on divergence the last
    checkpoint is left as it is, on interruption the current step is saved."""
    cfg, state = run.cfg, run.state
    try:
        while state.step < target:
            lr = run.update()
            if state.step % cfg.log_every == 0 or state.step == cfg.steps:
                row = run.record(lr, time.perf_counter() - t_start)
                for callback in callbacks:
                    callback(row, target)
            if checkpoint is not None and state.step % cfg.checkpoint_every == 0:
                clock()
                save_checkpoint(checkpoint, run.snapshot())
                saved = state.step
    except DivergedError as exc:  # the checkpoint on disk is the last finite state written: left as it is
        kept = f"{checkpoint} (step {saved}) is kept" if saved is not None else "no checkpoint was written"
        raise DivergedError(f"{exc}; {kept}") from None
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM or SIGHUP (runtime.process.Terminated)
        from margintheory.runtime.process import add_interrupt_note

        if checkpoint is not None:
            due = state.step % cfg.log_every == 0 or state.step == cfg.steps
            if due and state.history[-1]["step"] != state.step:  # interrupted between update and record
                run.record(run.sched(state.step), time.perf_counter() - t_start)
            clock()
            save_checkpoint(checkpoint, run.snapshot())
            add_interrupt_note(exc, f"step {state.step} of {cfg.steps} saved in {checkpoint}")
        raise


def network_of(cfg: TrainConfig, task: TrainingTask) -> NetworkSpec:
    """The task's network with the configuration's activation (and output scale of a projected-MSE loss)."""
    spec = task.network_spec(cfg.activation)
    if cfg.output_scale is None:
        return spec
    if spec.loss != "projected-mse":
        raise InputError(f"an output scale applies to a projected-MSE loss (CoGO); the {task.task} task is trained "
                         f"on the {spec.loss}")
    return dataclasses.replace(spec, output_scale=cfg.output_scale)


def task_problem(task: TrainingTask) -> Problem:
    return task.problem  # type: ignore[attr-defined]  # every adapter holds its problem


def resolve(problem: Problem | TrainConfig, config: TrainConfig | None) -> tuple[TrainConfig, TrainingTask]:
    """The configuration (modular addition: with ``p`` and ``k`` filled in from the problem) and the task's
    adapter; the configuration's split and batch checked against the task's number of points."""
    prob: Problem
    if isinstance(problem, TrainConfig):
        if config is not None:
            raise InputError("train(problem, config): the problem comes first, then the configuration")
        cfg, prob = problem, _modular_problem(problem)
    elif config is None:
        raise InputError("train(problem, config) needs a TrainConfig")
    else:
        cfg, prob = config, problem
    if isinstance(prob, ModularAddition):
        if (cfg.p, cfg.k) not in ((None, None), (prob.p, prob.k)):
            raise InputError(f"the configuration's p={cfg.p}, k={cfg.k} differ from the problem's p={prob.p}, "
                             f"k={prob.k}")
        cfg = dataclasses.replace(cfg, p=prob.p, k=prob.k)
    elif cfg.p is not None:
        raise InputError(f"p and k describe modular addition; the {prob.task} problem carries its own parameters "
                         "(leave p and k out of the configuration)")
    task = training_task(prob)
    cfg.check_points(task.n_points)
    network_of(cfg, task)  # refuses an output scale the task's loss does not have
    return cfg, task


def _check_start(cfg: TrainConfig, task: TrainingTask, row: dict[str, float]) -> None:
    """Refuse, before any update, a start whose objective is not finite (the initial weights or lambda overflow)."""
    if not math.isfinite(row["loss"]):
        scale = cfg.init_scale if cfg.init_scale is not None else task.default_init_scale()
        raise InputError(f"the objective at initialization is {row['loss']} (init scale {scale:g}, lambda "
                         f"{cfg.lam:g}: the logits or the penalty overflow float64); lower the init scale or lambda")


def saved_record(saved: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's configuration with the keys that older checkpoints lack at the values they implied (a run of
    0.1 was modular addition)."""
    full = {**LATER_KEYS, **saved}
    full.setdefault("task", "modular-addition")
    full.setdefault("problem", {"p": saved.get("p"), "k": saved.get("k")})
    return full


def _initial_state(cfg: TrainConfig, task: TrainingTask, checkpoint: str | os.PathLike[str] | None,
                   resume: bool) -> TrainState:
    if not (resume and checkpoint is not None and Path(checkpoint).exists()):
        return fresh_state(cfg, task)
    state = load_checkpoint(checkpoint)
    saved = saved_record(dict(state.config))
    mine = run_record(cfg, task)
    diff = sorted(k for k in mine if k not in RESUME_FREE and saved.get(k) != mine[k])
    if diff:
        detail = ", ".join(f"{k}: checkpoint {saved.get(k)!r} vs now {mine[k]!r}" for k in diff)
        raise InputError(f"{checkpoint}: checkpoint was written with different settings ({detail})")
    if cfg.steps < state.step:
        raise InputError(f"{checkpoint}: the run is already at step {state.step}, beyond steps {cfg.steps}; resume "
                         f"with steps >= {state.step} (a run is not shortened)")
    shape = task.network_spec(cfg.activation).u_shape(cfg.width)
    if state.U.shape != shape:
        raise InputError(f"{checkpoint}: parameters have shape {state.U.shape}, expected {shape}")
    state.config = mine
    return state


def history_csv(history: list[dict[str, float]], fields: tuple[str, ...] = HISTORY_FIELDS) -> str:
    """The history as CSV text with the columns ``fields`` (modular addition's :data:`HISTORY_FIELDS` by default;
    a run's are :attr:`TrainResult.fields`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(fields), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in history:
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    return buf.getvalue()


def write_history(out_dir: str | os.PathLike[str], result: TrainResult) -> None:
    """``history.csv`` and ``history.json`` (with the configuration, the task and its problem, ``gamma*`` and the
    wall time) written atomically."""
    out = Path(out_dir)
    atomic_write_text(out / "history.csv", history_csv(result.history, result.fields))
    problem = result.problem if result.problem is not None else _modular_problem(result.config)
    config = {**result.config.to_dict(), "task": problem.task, "problem": training_task(problem).parameters()}
    doc = {"config": config, "seconds": result.seconds, "cpu_seconds": result.cpu_seconds,
           "finished": result.finished, "gamma_star": result.gamma_star, "fields": list(result.fields),
           "history": [{k: _finite_or_none(v) for k, v in row.items()} for row in result.history]}
    atomic_write_text(out / "history.json", json.dumps(doc, indent=1, allow_nan=False))


def _finite_or_none(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v

