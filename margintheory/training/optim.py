"""Optimizers (gradient descent, Adam, AdamW) and the learning-rate schedule, with serializable state.

* ``gd``:    ``theta <- theta - lr * g``  (Morwani et al.'s full-batch GD; docs/theory.md#training).
* ``sgd``:   the same update on mini-batches (Morwani et al.'s ``S_5`` run, batch 1000; the configuration
  requires a batch size, so that the name says what the run does).
* ``adam``:  Kingma & Ba, bias-corrected moments; the regularizer of :mod:`.objective` enters through ``g``.
* ``adamw``: Loshchilov & Hutter, decoupled decay ``theta <- theta - lr * weight_decay * theta`` on top of Adam
  (Fourier-circuits settings, App. C.10.1: lr 5e-3, betas (0.9, 0.98), 10 warm-up steps).

Schedule: linear warm-up over ``warmup`` steps to ``lr``, then ``constant``, ``cosine`` (to ``lr * final_fraction``)
or ``doubling`` (``lr * 2^(number of milestones passed)``, Morwani et al. App. D.2.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from margintheory.errors import InputError

OPTIMIZERS = ("gd", "sgd", "adam", "adamw")
SCHEDULES = ("constant", "cosine", "doubling")


@dataclass(frozen=True)
class Schedule:
    """Learning rate as a function of the (1-based) step number."""

    lr: float
    total_steps: int
    kind: str = "constant"
    warmup: int = 0
    final_fraction: float = 0.0
    milestones: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise InputError(f"unknown schedule {self.kind!r}; choose one of {', '.join(SCHEDULES)}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise InputError(f"learning rate must be positive and finite, got {self.lr}")
        if self.warmup < 0:
            raise InputError(f"warm-up steps must be >= 0, got {self.warmup}")

    def __call__(self, step: int) -> float:
        """Learning rate used at step ``step`` (1-based)."""
        if step <= self.warmup:
            return self.lr * step / self.warmup
        if self.kind == "constant":
            return self.lr
        if self.kind == "doubling":
            return self.lr * 2.0 ** sum(1 for s in self.milestones if step > s)
        span = max(1, self.total_steps - self.warmup)
        frac = min(1.0, (step - self.warmup) / span)
        lo = self.lr * self.final_fraction
        return lo + 0.5 * (self.lr - lo) * (1.0 + math.cos(math.pi * frac))


@dataclass
class OptimizerState:
    """Everything an optimizer carries between steps (saved in checkpoints)."""

    kind: str
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-12
    weight_decay: float = 0.0
    moments: dict[str, np.ndarray] = field(default_factory=dict)
    t: int = 0

    def __post_init__(self) -> None:
        if self.kind not in OPTIMIZERS:
            raise InputError(f"unknown optimizer {self.kind!r}; choose one of {', '.join(OPTIMIZERS)}")
        b1, b2 = self.betas
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise InputError(f"Adam betas must lie in [0, 1), got {self.betas}")

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray], lr: float) -> None:
        """Update ``params`` in place with the gradients ``grads`` and learning rate ``lr``."""
        self.t += 1
        if self.kind in ("gd", "sgd"):
            for name, g in grads.items():
                params[name] -= lr * g
            return
        b1, b2 = self.betas
        c1, c2 = 1.0 - b1 ** self.t, 1.0 - b2 ** self.t
        for name, g in grads.items():
            m = self.moments.setdefault("m_" + name, np.zeros_like(g))
            v = self.moments.setdefault("v_" + name, np.zeros_like(g))
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            if self.kind == "adamw" and self.weight_decay:
                params[name] *= 1.0 - lr * self.weight_decay
            params[name] -= lr * (m / c1) / (np.sqrt(v / c2) + self.eps)
