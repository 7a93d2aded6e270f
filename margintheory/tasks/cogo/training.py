"""Training adapter of CoGO (:class:`~margintheory.backends.training_step.TrainingTask`; Tian, "Composing global
optimizers ... (CoGO)", arXiv:2410.01779, Sec. 7): modular addition on ``Z_d`` (``d^2`` pairs, label ``a + b mod
d``) with the quadratic two-layer network of Eq. 1-2 -- ``o = sum_j v_j (w_a,j(a) + w_b,j(b))^2``, the core
:class:`~margintheory.core.network.PolyNetwork` with ``k = 2``, ``p = d`` -- trained on the projected MSE of Eq. 1,
``||P1perp(o / (2d) - e_{a+b})||^2`` averaged over the training pairs (the loss of
:func:`margintheory.tasks.cogo.algebra.forward_loss` and of Theorem 1; zero exactly at CoGO's global optimizers).

The paper's runs (Sec. 7): Adam, learning rate 0.01, weight decay ``5e-5`` (PyTorch's coupled decay: the
``l2`` regularizer ``lambda ||theta||^2 / 2`` with ``lambda = 5e-5``), 10k full-batch epochs, a 90/10 train/test
split.  Tian's code writes the loss without the factor ``1/(2d)``; that is the same loss of the weights scaled by
``(2d)^(1/3)``, the scale at which the package's constructions and factorization are stated.  Per history row the
Fourier statistics of modular addition (:func:`~margintheory.tasks.modular_addition.training.fourier_statistics`).
``gamma*(d, 2)`` (odd ``d``) is recorded for the normalized margin, which CoGO itself does not claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.backends.training_step import NetworkSpec
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import CoGO
from margintheory.engines.margins import input_grid
from margintheory.tasks.modular_addition.training import FOURIER_FIELDS, fourier_statistics, sum_network_spec


@dataclass(frozen=True)
class CoGOTraining:
    """CoGO's network and loss on ``Z_d`` as a training task (module docstring)."""

    problem: CoGO
    task = "cogo"
    history_fields = FOURIER_FIELDS

    def parameters(self) -> dict[str, Any]:
        return {"d": self.problem.d}

    def network_spec(self, activation: str) -> NetworkSpec:
        d = self.problem.d
        return sum_network_spec(2, d, activation, loss="projected-mse", output_scale=1.0 / (2 * d))

    @property
    def n_points(self) -> int:
        return int(self.problem.d) ** 2

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        d = self.problem.d
        inputs = input_grid(d, 2)
        return inputs, inputs.sum(axis=1) % d

    def default_init_scale(self) -> float:
        return 1.0 / math.sqrt(self.problem.d)

    def gamma_star(self, width: int) -> float | None:
        return self.problem.gamma_star

    def measure(self, U: np.ndarray, W: np.ndarray) -> dict[str, float]:
        return fourier_statistics(U, W)

    def network(self, U: np.ndarray, W: np.ndarray) -> PolyNetwork:
        return PolyNetwork(U, W)

    def label(self) -> str:
        return f"d={self.problem.d}"
