"""Training adapter of modular addition (:class:`~margintheory.backends.training_step.TrainingTask`): the
``p^k`` points of ``D_p`` with labels ``(a_1 + ... + a_k) mod p``, the papers' network ``f(a) = sum_i act(u_{i,1}(a_1)
+ ... + u_{i,k}(a_k)) w_i`` (Li et al. Eq. 4.2; ``act = z^k``, or ReLU as in Morwani et al.'s comparison, Figs. 7.1,
7.4, D.1), ``gamma*`` of Theorem C.22 (odd ``p``) and the Fourier statistics of
:func:`margintheory.engines.fourier.fourier_summary` per history row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.backends.training_step import NetworkSpec
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition
from margintheory.engines.fourier import fourier_summary
from margintheory.engines.margins import input_grid

#: the Fourier statistics recorded per step (:func:`fourier_statistics`)
FOURIER_FIELDS = ("mean_max_power", "weighted_max_power", "frequencies_covered")


def fourier_statistics(U: np.ndarray, W: np.ndarray) -> dict[str, float]:
    """:data:`FOURIER_FIELDS` of the weights (embedding-sum networks on ``Z_p``)."""
    fs = fourier_summary(U, W)
    return {"mean_max_power": fs.mean_max_power, "weighted_max_power": fs.weighted_max_power,
            "frequencies_covered": fs.frequencies_covered}


def sum_network_spec(k: int, p: int, activation: str, loss: str = "cross-entropy",
                     output_scale: float = 1.0) -> NetworkSpec:
    """``sum_i act(U[i,0,a_1] + ... + U[i,k-1,a_k]) W[i]`` on ``[p]^k`` with ``p`` classes; ``act = z^k`` or ReLU."""
    return NetworkSpec("sum", k, p, p, activation, k if activation == "power" else 1, loss, output_scale)


@dataclass(frozen=True)
class ModularAdditionTraining:
    """Modular addition as a training task (module docstring)."""

    problem: ModularAddition
    task = "modular-addition"
    history_fields = FOURIER_FIELDS

    def parameters(self) -> dict[str, Any]:
        return self.problem.parameters()

    def network_spec(self, activation: str) -> NetworkSpec:
        return sum_network_spec(self.problem.k, self.problem.p, activation)

    @property
    def n_points(self) -> int:
        return int(self.problem.p) ** int(self.problem.k)

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        inputs = input_grid(self.problem.p, self.problem.k)
        return inputs, inputs.sum(axis=1) % self.problem.p

    def default_init_scale(self) -> float:
        return 1.0 / math.sqrt(self.problem.p)

    def gamma_star(self, width: int) -> float | None:
        return self.problem.gamma_star

    def measure(self, U: np.ndarray, W: np.ndarray) -> dict[str, float]:
        return fourier_statistics(U, W)

    def network(self, U: np.ndarray, W: np.ndarray) -> PolyNetwork:
        return PolyNetwork(U, W)

    def label(self) -> str:
        return f"p={self.problem.p}, k={self.problem.k}"
