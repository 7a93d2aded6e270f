"""The hyper-parameters of a training run (:class:`TrainConfig`), validated once, when the configuration is made.

The problem -- which task, at which size -- is not part of the configuration: it is a problem object of
:mod:`margintheory.core.problems` given to :func:`margintheory.training.trainer.train` next to it.  For modular
addition the configuration may name ``p`` and ``k`` itself (the 0.1 form ``train(TrainConfig(p=31, k=2, ...))``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from margintheory.backends.select import BACKENDS
from margintheory.backends.training_step import ACTIVATIONS, NetworkSpec, TrainSpec
from margintheory.core import theory
from margintheory.errors import InputError
from margintheory.training.objective import REGULARIZERS
from margintheory.training.optim import OptimizerState, Schedule

DTYPES = ("float32", "float64")
#: configuration keys added after checkpoints were first written, and their value in those checkpoints
LATER_KEYS: dict[str, Any] = {"backend": "numpy", "dtype": "float64", "activation": "power", "output_scale": None}
#: settings a resumed run may change: how far it goes, and how often it writes a checkpoint (neither changes a step)
RESUME_FREE = ("steps", "checkpoint_every")


@dataclass
class TrainConfig:
    """Hyper-parameters of a run (all of them are saved with the checkpoint and the history).

    ``p``, ``k``: modular addition's size when no problem object is given to ``train`` (leave them ``None`` for
    the other tasks).  ``activation``: ``"power"`` (the task's polynomial network, ``z^k``) or ``"relu"``.
    ``optimizer``: ``gd`` (full batch), ``sgd`` (the same update on mini-batches of ``batch_size``), ``adam``,
    ``adamw`` (``weight_decay``: decoupled decay).  ``schedule``: ``constant``, ``cosine`` (to ``lr *
    final_fraction``) or ``doubling`` (``lr`` doubled after each of ``milestones``), after ``warmup`` linear steps.
    ``lam``, ``regularizer``: ``lam * R(theta)`` (:mod:`margintheory.training.objective`).  ``train_fraction``: the
    seeded share of the task's points trained on (the rest is the test set).  ``output_scale``: the factor ``s`` of
    a projected-MSE loss ``||P1perp(s f - e_y)||^2`` (CoGO only; default the task's, ``1/(2d)`` of Tian's Eq. 1;
    ``1.0`` is Tian's code).

    Defaults: Adam, betas (0.9, 0.98) and 10 warm-up steps as in the Fourier-circuits setup (App. C.10.1), cosine decay,
    the papers' regularizer ``lambda ||theta||_{2,k+1}`` with ``lambda = 1e-3``, full batch, no test split.
    """

    p: int | None = None
    k: int | None = None
    width: int = 0
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
    activation: str = "power"
    output_scale: float | None = None

    def __post_init__(self) -> None:
        if (self.p is None) != (self.k is None):
            raise InputError("p and k go together (modular addition); give both or neither")
        if self.p is not None:
            theory.validate_pk(self.p, self.k)
        for ok, msg in self._checks():
            if not ok:
                raise InputError(msg)
        if self.p is not None and self.k is not None:
            self.check_points(self.p**self.k)
        self.schedule_obj()  # validates lr, schedule kind, warm-up
        OptimizerState(self.optimizer, self.betas_pair())  # validates the optimizer name and betas

    def _checks(self) -> list[tuple[bool, str]]:
        return [
            (isinstance(self.width, int) and self.width >= 1, f"width must be an integer >= 1, got {self.width!r}"),
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
            (self.activation in ACTIVATIONS, f"activation must be one of {ACTIVATIONS}, got {self.activation!r}"),
            (self.output_scale is None or 0 < self.output_scale < math.inf,
             f"output scale must be positive and finite, got {self.output_scale}"),
            (self.optimizer != "sgd" or self.batch_size is not None,
             "the sgd optimizer takes mini-batches: give a batch size (or use gd for the full batch)"),
        ]

    def n_train(self, n_points: int) -> int:
        """How many of the task's ``n_points`` points are trained on (as :func:`~.trainer.train_mask` draws)."""
        return int(round(self.train_fraction * n_points))

    def check_points(self, n_points: int) -> None:
        """Refuse a split that leaves no training point, or a batch larger than the training set."""
        n_train = self.n_train(n_points)
        if n_train < 1:
            raise InputError(f"train fraction {self.train_fraction} leaves no training point out of {n_points}")
        if self.batch_size is not None and self.batch_size > n_train:
            raise InputError(f"batch size {self.batch_size} exceeds the {n_train} training points (omit it for the "
                             "full batch)")

    def betas_pair(self) -> tuple[float, float]:
        """The two Adam betas (``betas`` is a list so that it round-trips through JSON)."""
        if len(self.betas) != 2:
            raise InputError(f"betas must be two numbers, got {self.betas}")
        return float(self.betas[0]), float(self.betas[1])

    def schedule_obj(self) -> Schedule:
        return Schedule(self.lr, self.steps, self.schedule, self.warmup, self.final_fraction, tuple(self.milestones))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def step_spec(self, network: NetworkSpec | None = None, n_points: int | None = None) -> TrainSpec:
        """What a training step computes, for the backends (:mod:`margintheory.training.steppers`); by default
        modular addition's network on the ``p^k`` points of the configuration's ``p`` and ``k``."""
        if network is None:
            p, k = self._modular_size()
            network = NetworkSpec("sum", k, p, p, self.activation, k if self.activation == "power" else 1)
        return TrainSpec(network, self.width, self.lam, self.regularizer, self.optimizer, self.betas_pair(),
                         self.weight_decay, self.lr, self.steps, self.schedule, self.warmup, self.final_fraction,
                         tuple(self.milestones), self.dtype, self.evaluate_in_step(n_points))

    def _modular_size(self) -> tuple[int, int]:
        if self.p is None or self.k is None:
            raise InputError("the configuration names no modular-addition size (p, k): give the task's network and "
                             "number of points")
        return self.p, self.k

    def evaluate_in_step(self, n_points: int | None = None) -> bool:
        """Whether a step measures the history row, the training points from its own forward pass: float64
        training (the row is float64) on the full batch, with no test points or a row every step (the step then also
        runs a forward pass over the test points, which the row needs anyway; with rows further apart, every other
        step would pay for it).  Fixed by the configuration, so a resumed run takes the same steps as the
        uninterrupted one.  ``n_points``: the task's number of points (default ``p^k``)."""
        if n_points is None:
            p, k = self._modular_size()
            n_points = p**k
        n_train = self.n_train(n_points)
        full_batch = self.batch_size is None or self.batch_size >= n_train
        return self.dtype == "float64" and full_batch and (n_train == n_points or self.log_every == 1)
