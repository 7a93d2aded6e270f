"""Training loop: seeds, data split, mini-batches, schedule, progress callbacks, checkpoints and exact resume.

Minimizes ``mean CE + lambda * R(theta)`` (:mod:`.objective`; Lemma 4.7 = Thm 7.1) over the training
part of ``D_p`` (all ``p^k`` points, :func:`margintheory.engines.margins.input_grid`).  Randomness comes from three
generators derived from ``seed`` (``[seed, 0]`` initialization, ``[seed, 1]`` train/test split, ``[seed, 2]``
mini-batches); the mini-batch generator's state is checkpointed, so a resumed run makes bit-for-bit the same updates
as an uninterrupted one.  Each history row describes the parameters *after* ``step`` updates (row 0 = initialization).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from margintheory.backends.select import BACKENDS, Backend
from margintheory.backends.training_step import TrainSpec
from margintheory.core import theory
from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import input_grid
from margintheory.errors import DivergedError, InputError
from margintheory.runtime.atomic import atomic_write_text
from margintheory.runtime.budget import Estimate, grid_points
from margintheory.training.checkpoint import TrainState, load_checkpoint, save_checkpoint
from margintheory.training.metrics import HISTORY_FIELDS, measure_weights
from margintheory.training.objective import BLOCK_ROWS, REGULARIZERS
from margintheory.training.objective import regularizer_value_and_grad as penalty_of
from margintheory.training.optim import OptimizerState, Schedule
from margintheory.training.steppers import make_stepper


@dataclass
class TrainConfig:
    """Hyper-parameters of a run (all of them are saved with the checkpoint and the history).

    Defaults: Adam, betas (0.9, 0.98) and 10 warm-up steps as in the Fourier-circuits setup (App. C.10.1), cosine decay,
    the papers' regularizer ``lambda ||theta||_{2,k+1}`` with ``lambda = 1e-3``, full batch, no test split.
    """

    p: int
    k: int
    width: int
    steps: int = 3000
    lam: float = 1e-3
    regularizer: str = "norm"
    optimizer: str = "adam"
    lr: float = 5e-3
    schedule: str = "cosine"
    warmup: int = 10
    final_fraction: float = 0.0
    milestones: list[int] = field(default_factory=list)
    betas: list[float] = field(default_factory=lambda: [0.9, 0.98])
    weight_decay: float = 0.0
    batch_size: int | None = None
    train_fraction: float = 1.0
    seed: int = 0
    init_scale: float | None = None
    log_every: int = 1
    checkpoint_every: int = 500
    backend: str = "numpy"
    dtype: str = "float64"

    def __post_init__(self) -> None:
        theory.validate_pk(self.p, self.k)
        checks = [
            (self.width >= 1, f"width must be >= 1, got {self.width}"),
            (self.steps >= 0, f"steps must be >= 0, got {self.steps}"),
            (self.lam >= 0 and math.isfinite(self.lam), f"lambda must be finite and >= 0, got {self.lam}"),
            (self.regularizer in REGULARIZERS, f"regularizer must be one of {REGULARIZERS}, got {self.regularizer!r}"),
            (0 < self.train_fraction <= 1, f"train fraction must be in (0, 1], got {self.train_fraction}"),
            (self.batch_size is None or self.batch_size >= 1, f"batch size must be >= 1, got {self.batch_size}"),
            (self.log_every >= 1 and self.checkpoint_every >= 1, "log/checkpoint intervals must be >= 1"),
            (self.weight_decay >= 0, f"weight decay must be >= 0, got {self.weight_decay}"),
            (self.init_scale is None or 0 < self.init_scale < math.inf,
             f"init scale must be positive and finite, got {self.init_scale}"),
            (isinstance(self.seed, int) and self.seed >= 0, f"seed must be an integer >= 0, got {self.seed!r}"),
            (self.backend in BACKENDS, f"backend must be one of {BACKENDS}, got {self.backend!r}"),
            (self.dtype in DTYPES, f"dtype must be one of {DTYPES}, got {self.dtype!r}"),
            (self.dtype == "float64" or self.backend == "jax",
             f"{self.dtype} training needs the jax backend (the numpy trainer computes in float64)"),
            (self.schedule != "doubling" or len(self.milestones) > 0,
             "the doubling schedule needs milestones (the steps after which the learning rate doubles); without "
             "them it is the constant schedule"),
            (all(isinstance(s, int) and s >= 1 for s in self.milestones),
             f"milestones must be step numbers >= 1, got {self.milestones}"),
        ]
        for ok, msg in checks:
            if not ok:
                raise InputError(msg)
        n_train = int(round(self.train_fraction * self.p**self.k))
        if n_train < 1:
            raise InputError(f"train fraction {self.train_fraction} leaves no training point out of {self.p**self.k}")
        if self.batch_size is not None and self.batch_size > n_train:
            raise InputError(f"batch size {self.batch_size} exceeds the {n_train} training points (omit it for the "
                             "full batch)")
        self.schedule_obj()  # validates lr, schedule kind, warm-up
        OptimizerState(self.optimizer, self.betas_pair())  # validates the optimizer name and betas

    def betas_pair(self) -> tuple[float, float]:
        """The two Adam betas (``betas`` is a list so that it round-trips through JSON)."""
        if len(self.betas) != 2:
            raise InputError(f"betas must be two numbers, got {self.betas}")
        return float(self.betas[0]), float(self.betas[1])

    def schedule_obj(self) -> Schedule:
        return Schedule(self.lr, self.steps, self.schedule, self.warmup, self.final_fraction, tuple(self.milestones))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def step_spec(self) -> TrainSpec:
        """What a training step computes, for the backends (:mod:`margintheory.training.steppers`)."""
        return TrainSpec(self.p, self.k, self.width, self.lam, self.regularizer, self.optimizer, self.betas_pair(),
                         self.weight_decay, self.lr, self.steps, self.schedule, self.warmup, self.final_fraction,
                         tuple(self.milestones), self.dtype, self.evaluate_in_step())

    def evaluate_in_step(self) -> bool:
        """Whether a step measures the history row, the training points from its own forward pass: float64
        training (the row is float64) on the full batch, with no test points or a row every step (the step then also
        runs a forward pass over the test points, which the row needs anyway; with rows further apart, every other
        step would pay for it).  Fixed by the configuration, so a resumed run takes the same steps as the
        uninterrupted one."""
        n, n_train = self.p**self.k, int(round(self.train_fraction * self.p**self.k))  # as train_mask
        full_batch = self.batch_size is None or self.batch_size >= n_train
        return self.dtype == "float64" and full_batch and (n_train == n or self.log_every == 1)


DTYPES = ("float32", "float64")
#: configuration keys added after checkpoints were first written, and their value in those checkpoints
LATER_KEYS = {"backend": "numpy", "dtype": "float64"}
#: settings a resumed run may change: how far it goes, and how often it writes a checkpoint (neither changes a step)
RESUME_FREE = ("steps", "checkpoint_every")


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
    """Peak host memory and run time of :func:`train` from ``(p, k, m, steps)`` alone (numpy: calibrated with
    ``tracemalloc`` and wall clocks: the data and logits of all ``p^k`` points, the blocked workspace, parameter
    copies; jax: the inputs and their device copies, the blocks of :mod:`margintheory.backends.jax_training` on a
    CPU, the numpy step time divided by :data:`JAX_CPU_STEP_SPEEDUP` on a CPU; on a GPU a fixed cost per step and
    the step's matrix products at :data:`GPU_FLOPS`)."""
    what = f"training width {width} for {steps} steps on {p}^{k} points"
    n = grid_points(p, k)
    if n == math.inf or width * (k + 1) * p > 2**100:
        return Estimate(what, math.inf, math.inf)
    weights = 8 * width * (k + 1) * p
    extra = 12 * weights + (64 * 2**20 if figures else 0)
    seconds = max(1, steps) * SECONDS_PER_STEP_UNIT * n * width * (k + p)
    if backend == "jax":
        blocks = 4 * 8 * 2**20 if device == "cpu" else 0
        blocks += JAX_RUNTIME_BYTES
        if device == "gpu":
            seconds = max(1, steps) * (GPU_STEP_SECONDS + GPU_STEP_GEMMS * 2.0 * n * width * p / GPU_FLOPS)
        else:
            seconds /= JAX_CPU_STEP_SPEEDUP
        return Estimate(what, (40 * k + 64) * n + blocks + extra, seconds)
    return Estimate(what, 64 * n * p + 32 * n * k + 40 * min(BLOCK_ROWS, n) * width + extra, seconds)


@dataclass
class TrainResult:
    """The trained network, the network at initialization, the history and whether the run finished."""

    config: TrainConfig
    network: PolyNetwork
    initial: PolyNetwork
    history: list[dict[str, float]]
    seconds: float
    finished: bool
    cpu_seconds: float = 0.0


def initial_parameters(cfg: TrainConfig) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian initialization, standard deviation ``init_scale`` (default ``1/sqrt(p)``), generator ``[seed, 0]``."""
    rng = np.random.default_rng([cfg.seed, 0])
    scale = cfg.init_scale if cfg.init_scale is not None else 1.0 / math.sqrt(cfg.p)
    U = rng.normal(0.0, scale, (cfg.width, cfg.k, cfg.p))
    W = rng.normal(0.0, scale, (cfg.width, cfg.p))
    return U, W


def train_mask(cfg: TrainConfig) -> np.ndarray:
    """Mask over :func:`input_grid` rows of the training points (seeded permutation, generator ``[seed, 1]``)."""
    n = cfg.p**cfg.k
    mask = np.zeros(n, dtype=bool)
    n_train = int(round(cfg.train_fraction * n))
    mask[np.random.default_rng([cfg.seed, 1]).permutation(n)[:n_train]] = True
    return mask


def fresh_state(cfg: TrainConfig) -> TrainState:
    U, W = initial_parameters(cfg)
    rng = np.random.default_rng([cfg.seed, 2])
    return TrainState(cfg.to_dict(), U, W, 0, 0, {}, dict(rng.bit_generator.state), [], 0.0)


class _Run:
    """One training session (possibly continuing a checkpoint) on the backend's :class:`Stepper`."""

    def __init__(self, cfg: TrainConfig, state: TrainState, device: str = "cpu") -> None:
        self.cfg = cfg
        self.state = state
        inputs = input_grid(cfg.p, cfg.k)
        self.mask = train_mask(cfg)
        self.n_train = int(self.mask.sum())
        self.sched = cfg.schedule_obj()
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = state.rng_state
        self.gamma = theory.gamma_star(cfg.p, cfg.k) if cfg.p % 2 == 1 else None
        self.stepper = make_stepper(cfg.step_spec(), Backend(cfg.backend, device), inputs, self.mask, state)

    def batch_rows(self) -> np.ndarray | None:
        """Indices into the training points of this step's mini-batch (``None``: the full batch)."""
        bs = self.cfg.batch_size
        if bs is None or bs >= self.n_train:
            return None
        return np.sort(self.rng.choice(self.n_train, size=bs, replace=False))

    def record(self, lr: float, seconds: float) -> dict[str, float]:
        """A history row: loss and accuracies by the backend, recomputed in float64; margin and Fourier statistics
        from the float64 weights."""
        s = self.state
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # huge weights: divergence, reported
            ev = self.stepper.evaluate()
            U, W = (np.asarray(a, dtype=np.float64) for a in self.stepper.weights())
            penalty, _, _ = penalty_of(U, W, self.cfg.regularizer)
            row = {"step": s.step, "lr": lr, "loss": ev.data_loss + self.cfg.lam * penalty, "data_loss": ev.data_loss}
            row.update(measure_weights(U, W, ev.train_acc, ev.test_acc, ev.h, self.gamma))
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


def train(cfg: TrainConfig, *, checkpoint: str | os.PathLike[str] | None = None, resume: bool = False,
          stop_after: int | None = None, progress: ProgressHook | None = None,
          hook: ProgressHook | None = None, device: str = "cpu") -> TrainResult:
    """Run (or continue) training.

    ``checkpoint``: file written every ``cfg.checkpoint_every`` steps, at the end, and on interruption
    (``KeyboardInterrupt`` saves the current step, then re-raises).  ``resume``: continue from that file if it
    exists (its configuration must equal ``cfg`` except for ``steps``).  ``stop_after``: stop after this many
    updates in this session (used to test resuming).  ``progress`` and ``hook``: callbacks ``(row, target_step)``
    called with every recorded history row (the command line passes one that draws a progress bar).  ``device``:
    ``"cpu"`` or ``"gpu"`` for the ``jax`` backend (``cfg.backend``).
    """
    state = _initial_state(cfg, checkpoint, resume)
    run = _Run(cfg, state, device)
    initial = PolyNetwork(*initial_parameters(cfg))
    t_start = time.perf_counter() - state.seconds
    cpu_start = time.process_time() - state.cpu_seconds

    def clock() -> None:
        state.seconds = time.perf_counter() - t_start
        state.cpu_seconds = time.process_time() - cpu_start

    if not state.history:
        _check_start(cfg, run.record(run.sched(1) if cfg.steps else cfg.lr, 0.0))
    target = cfg.steps if stop_after is None else min(cfg.steps, state.step + stop_after)
    saved = state.step if checkpoint is not None and resume and Path(checkpoint).exists() else None
    callbacks = [f for f in (progress, hook) if f is not None]
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
    clock()
    run.snapshot()
    if checkpoint is not None:
        save_checkpoint(checkpoint, state)
    net = PolyNetwork(state.U.copy(), state.W.copy())
    return TrainResult(cfg, net, initial, state.history, state.seconds, state.step >= cfg.steps, state.cpu_seconds)


def _check_start(cfg: TrainConfig, row: dict[str, float]) -> None:
    """Refuse, before any update, a start whose objective is not finite (the initial weights or lambda overflow)."""
    if not math.isfinite(row["loss"]):
        scale = cfg.init_scale if cfg.init_scale is not None else 1.0 / math.sqrt(cfg.p)
        raise InputError(f"the objective at initialization is {row['loss']} (init scale {scale:g}, lambda "
                         f"{cfg.lam:g}: the logits or the penalty overflow float64); lower the init scale or lambda")


def _initial_state(cfg: TrainConfig, checkpoint: str | os.PathLike[str] | None, resume: bool) -> TrainState:
    if not (resume and checkpoint is not None and Path(checkpoint).exists()):
        return fresh_state(cfg)
    state = load_checkpoint(checkpoint)
    saved = dict(state.config)
    mine = cfg.to_dict()
    diff = sorted(k for k in mine if k not in RESUME_FREE and saved.get(k, LATER_KEYS.get(k)) != mine[k])
    if diff:
        detail = ", ".join(f"{k}: checkpoint {saved.get(k, LATER_KEYS.get(k))!r} vs now {mine[k]!r}" for k in diff)
        raise InputError(f"{checkpoint}: checkpoint was written with different settings ({detail})")
    if cfg.steps < state.step:
        raise InputError(f"{checkpoint}: the run is already at step {state.step}, beyond steps {cfg.steps}; resume "
                         f"with steps >= {state.step} (a run is not shortened)")
    if state.U.shape != (cfg.width, cfg.k, cfg.p):
        raise InputError(f"{checkpoint}: parameters have shape {state.U.shape}, expected {(cfg.width, cfg.k, cfg.p)}")
    state.config = mine
    return state


def history_csv(history: list[dict[str, float]]) -> str:
    """The history as CSV text with the columns :data:`HISTORY_FIELDS`."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(HISTORY_FIELDS), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in history:
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    return buf.getvalue()


def write_history(out_dir: str | os.PathLike[str], result: TrainResult) -> None:
    """``history.csv`` and ``history.json`` (with the configuration and wall time) written atomically."""
    out = Path(out_dir)
    atomic_write_text(out / "history.csv", history_csv(result.history))
    doc = {"config": result.config.to_dict(), "seconds": result.seconds, "cpu_seconds": result.cpu_seconds,
           "finished": result.finished,
           "gamma_star": theory.gamma_star(result.config.p, result.config.k) if result.config.p % 2 else None,
           "history": [{k: _finite_or_none(v) for k, v in row.items()} for row in result.history]}
    atomic_write_text(out / "history.json", json.dumps(doc, indent=1, allow_nan=False))


def _finite_or_none(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v
