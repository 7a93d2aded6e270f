"""Training adapter of group composition (:class:`~margintheory.backends.training_step.TrainingTask`; Morwani et
al. Sec. 7.6, Figs. 7.6, D.2, D.3): the ``|G|^2`` pairs ``(a, b)`` with label ``ab``, the quadratic network
``f(a, b) = sum_i (u_i(a) + v_i(b))^2 w_i`` (or ReLU), and per history row the irrep statistics of Fig. 7.6 (c)-(d).

Irrep power (Lemma D.10-D.12): a vector ``u`` in ``R^G`` has the coefficients ``alpha = (d_R / |G|) B^T u`` on the
matrix-entry basis ``B`` of the real irreps, and the irrep ``R`` carries the power ``(|G| / d_R) sum alpha_R^2`` (the
parts sum to ``||u||^2``).  Recorded per step:

* ``mean_max_irrep_power``: mean over neurons and their three vectors ``u, v, w`` of the largest fraction of the
  vector's power in one irrep (Fig. 7.6 (c)-(d): random at initialization, 1 for the max-margin network);
* ``weighted_max_irrep_power``: the neuron's mean weighted by its share ``||theta_i||^3 / ||theta||^3``;
* ``irreps_covered``: non-trivial irreps that carry the most power of some neuron whose three vectors all have
  max irrep power ``>= SPARSE_THRESHOLD`` (Thm 7.9 (2): every non-trivial irrep is used).

``gamma*`` is the max margin of ``G`` from the class LP of :mod:`.margin` (= Thm 7.9's closed form where its
condition holds, ``S_3`` to ``S_5``), ``gamma*(n, 2)`` for an odd cyclic group ``C_n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from margintheory.backends.training_step import NetworkSpec
from margintheory.core import theory
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import GroupComposition
from margintheory.core.representations import Irrep, basis_vectors, character_table, real_irreps
from margintheory.engines.fourier import SPARSE_THRESHOLD
from margintheory.engines.margins import input_grid
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.modular_addition.training import sum_network_spec

IRREP_FIELDS = ("mean_max_irrep_power", "weighted_max_irrep_power", "irreps_covered")


@dataclass(frozen=True)
class IrrepPower:
    """Per neuron and vector (``u, v, w``) the fraction of the vector's power in each irrep, ``(m, 3, K)``."""

    fractions: np.ndarray
    shares: np.ndarray  # (m,) ||theta_i||^3 / ||theta||^3

    @property
    def vector_max(self) -> np.ndarray:
        return self.fractions.max(axis=2)

    @property
    def dominant(self) -> np.ndarray:
        """The irrep with the most power of each neuron (its three vectors together)."""
        return (self.fractions.sum(axis=1)).argmax(axis=1)

    def covered(self, threshold: float = SPARSE_THRESHOLD) -> list[int]:
        """Non-trivial irreps dominant in a neuron whose three vectors all reach ``threshold``."""
        sparse = np.all(self.vector_max >= threshold, axis=1)
        return sorted({int(r) for r in self.dominant[sparse] if r > 0})


def irrep_power(U: np.ndarray, W: np.ndarray, irreps: list[Irrep]) -> IrrepPower:
    """:class:`IrrepPower` of a quadratic network on ``G`` (``U`` ``(m, 2, |G|)``, ``W`` ``(m, |G|)``)."""
    B, owner = basis_vectors(irreps)
    dims = np.array([R.dim for R in irreps], dtype=float)
    order = B.shape[0]
    V = np.concatenate([U, W[:, None, :]], axis=1)  # (m, 3, |G|)
    coef = (V @ B) * (dims[owner] / order)
    power = coef**2 * (order / dims[owner])  # (m, 3, |G|) per basis vector
    per_irrep = np.zeros(V.shape[:2] + (len(irreps),))
    for r in range(len(irreps)):
        per_irrep[..., r] = power[..., owner == r].sum(axis=-1)
    tot = per_irrep.sum(axis=-1, keepdims=True)
    frac = np.divide(per_irrep, tot, out=np.zeros_like(per_irrep), where=tot > 0)
    r3 = np.sum(V * V, axis=(1, 2)) ** 1.5
    shares = r3 / r3.sum() if r3.sum() > 0 else np.full(len(r3), 1.0 / max(len(r3), 1))
    return IrrepPower(frac, shares)


@dataclass(frozen=True)
class GroupTraining:
    """Group composition as a training task (module docstring)."""

    problem: GroupComposition
    task = "group"
    history_fields = IRREP_FIELDS

    @cached_property
    def irreps(self) -> list[Irrep]:
        return real_irreps(self.problem.G)

    def parameters(self) -> dict[str, Any]:
        return self.problem.parameters()

    def network_spec(self, activation: str) -> NetworkSpec:
        return sum_network_spec(2, self.problem.order, activation)

    @property
    def n_points(self) -> int:
        return int(self.problem.order) ** 2

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        return input_grid(self.problem.order, 2), self.problem.G.product_labels()

    def default_init_scale(self) -> float:
        return 1.0 / math.sqrt(self.problem.order)

    def gamma_star(self, width: int) -> float | None:
        return self.max_margin

    @cached_property
    def max_margin(self) -> float | None:
        """The class LP's max margin (real-type irreps: the symmetric groups), ``gamma*(n, 2)`` for odd ``C_n``."""
        G = self.problem.G
        if G.name.startswith("C"):
            return theory.gamma_star(G.order, 2) if G.order % 2 else None
        dims = np.array([R.dim for R in self.irreps])
        return gm.solve_class_lp(character_table(G, self.irreps), G.order, dims).primal

    def measure(self, U: np.ndarray, W: np.ndarray) -> dict[str, float]:
        ip = irrep_power(U, W, self.irreps)
        vec_max = ip.vector_max
        return {"mean_max_irrep_power": float(vec_max.mean()),
                "weighted_max_irrep_power": float(np.sum(ip.shares * vec_max.mean(axis=1))),
                "irreps_covered": len(ip.covered())}

    def network(self, U: np.ndarray, W: np.ndarray) -> PolyNetwork:
        return PolyNetwork(U, W)

    def label(self) -> str:
        return f"{self.problem.group} (|G| = {self.problem.order})"
