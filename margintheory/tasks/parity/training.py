"""Training adapter of sparse parity (:class:`~margintheory.backends.training_step.TrainingTask`; Morwani et al.
Sec. 7.5, Fig. 7.5): the ``2^n`` points of ``{+-1}^n`` with label ``prod_{j in S} x_j`` (``S = {0..k-1}``; class 0
is ``y = +1``, as in :class:`~margintheory.tasks.parity.checks.ParityNetwork`), the network ``f(x) = sum_i (u_i .
x)^k w_i`` (or ReLU), ``gamma* = k! sqrt(2 (k+1)^-(k+1))`` of Thm 7.8 (width ``>= 2^(k-1)``), and per history row:

* ``weight_on_support``: ``sum_i ||u_i[S]||^2 / sum_i ||u_i||^2`` (Fig. 7.5: the relevant bits carry the weight);
* ``weighted_characterized``: the norm share ``||theta_i||^(k+1) / ||theta||^(k+1)`` of the neurons with the four
  properties of Thm 7.8's characterization (support ``S``, ``|u_i[j]| = ||w_i||`` on ``S``, ``w_i`` along
  ``(1, -1)``, the sign condition) at the relative tolerance :data:`CHARACTERIZATION_TOL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.backends.training_step import NetworkSpec
from margintheory.core.problems import SparseParity
from margintheory.core.theory import gamma_star_parity
from margintheory.tasks.parity.checks import ParityNetwork, characterization, parity_inputs, parity_labels

PARITY_FIELDS = ("weight_on_support", "weighted_characterized")
#: relative tolerance of the characterization statistic recorded per step (analyze states its own)
CHARACTERIZATION_TOL = 1e-2


def characterized_share(net: ParityNetwork, tol: float = CHARACTERIZATION_TOL) -> float:
    """Norm share of the neurons with all four properties of Thm 7.8's characterization (module docstring)."""
    ch = characterization(net, tol)
    ok = ch["active"] & ch["support"] & ch["w_along_b"] & ch["equal_magnitudes"] & ch["sign"]
    r = net.neuron_norms()
    top = float(r.max())
    if top == 0.0:
        return 0.0
    share = (r / top) ** (net.k + 1)
    return float(share[ok].sum() / share.sum())


@dataclass(frozen=True)
class ParityTraining:
    """Sparse parity as a training task (module docstring)."""

    problem: SparseParity
    task = "parity"
    history_fields = PARITY_FIELDS

    @property
    def support(self) -> np.ndarray:
        return np.arange(self.problem.k)

    def parameters(self) -> dict[str, Any]:
        return self.problem.parameters()

    def network_spec(self, activation: str) -> NetworkSpec:
        k = self.problem.k
        return NetworkSpec("linear", self.problem.n, 0, 2, activation, k if activation == "power" else 1)

    @property
    def n_points(self) -> int:
        return 2 ** int(self.problem.n)

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        X = parity_inputs(self.problem.n)
        return X, (parity_labels(X, self.support) < 0).astype(np.int64)

    def default_init_scale(self) -> float:
        return 1.0 / math.sqrt(self.problem.n)

    def gamma_star(self, width: int) -> float | None:
        """Thm 7.8's max margin; for a width below ``2^(k-1)`` the theorem says nothing (``None``)."""
        return gamma_star_parity(self.problem.k) if width >= self.problem.theorem_width else None

    def measure(self, U: np.ndarray, W: np.ndarray) -> dict[str, float]:
        total = float(np.sum(U * U))
        on = float(np.sum(U[:, : self.problem.k] ** 2))
        net = self.network(U, W)
        return {"weight_on_support": on / total if total > 0 else float("nan"),
                "weighted_characterized": characterized_share(net)}

    def network(self, U: np.ndarray, W: np.ndarray) -> ParityNetwork:
        return ParityNetwork(U, W, self.support)

    def label(self) -> str:
        return f"n={self.problem.n}, k={self.problem.k}"
