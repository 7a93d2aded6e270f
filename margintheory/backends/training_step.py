"""The interface of a training step, shared by the numpy trainer and :mod:`margintheory.backends.jax_training`.

A *stepper* owns the parameters and the optimizer state of a run between records: it makes one update
(:meth:`Stepper.step`), hands out host copies of the weights and of the optimizer state (records, checkpoints),
and measures the current parameters on all points in float64 (:meth:`Stepper.evaluate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class TrainSpec:
    """What the step computes (the trainer's configuration in plain values)."""

    p: int
    k: int
    width: int
    lam: float
    regularizer: str
    optimizer: str
    betas: tuple[float, float]
    weight_decay: float
    lr: float
    total_steps: int
    schedule: str
    warmup: int
    final_fraction: float
    milestones: tuple[int, ...]
    dtype: str = "float64"
    #: the step also measures the parameters it starts from on all ``p^k`` points (the history row's loss,
    #: accuracies and margin), the training points from its own forward pass: float64 full-batch training (the JAX
    #: backend; the numpy reference evaluates separately)
    evaluate_in_step: bool = False


@dataclass(frozen=True)
class Evaluation:
    """Float64 measurements of the current parameters on all ``p^k`` points."""

    data_loss: float  # mean cross-entropy over the training points
    train_acc: float
    test_acc: float  # nan without test points
    h: float  # min over all points of f[y] - max_{c != y} f[c] (unnormalized)


class Stepper(Protocol):
    """What the training loop needs from a backend."""

    def step(self, rows: np.ndarray | None, lr: float) -> tuple[float, bool]:
        """One update on the training points ``rows`` (indices into the training set; all when ``None``) with
        learning rate ``lr``; returns the objective before the update and whether the new weights are finite.
        A non-finite objective leaves the parameters unchanged."""
        ...

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Host copies (or the live arrays) of ``U`` and ``W``."""
        ...

    def evaluate(self) -> Evaluation:
        """Float64 loss, accuracies and unnormalized margin of the current parameters on all points."""
        ...

    def optimizer_state(self) -> tuple[dict[str, np.ndarray], int]:
        """The optimizer's state as named arrays, and its update count."""
        ...
