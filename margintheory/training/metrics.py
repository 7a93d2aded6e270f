"""Per-step measurements of a network during training (docs/theory.md#training; Fig. 4.2).

Common to every task (:func:`margin_measures`):

* ``norm``: ``||theta||_{2,L}`` with ``L`` the network's homogeneity (``k + 1`` for ``z^k``, 2 for ReLU);
* ``normalized_margin``: ``h(theta) / ||theta||_{2,L}^L`` over all points of the task (homogeneity), with
  ``h = min_a (f[y] - max_{c != y} f[c])``; ``ratio`` = that over the task's max margin ``gamma*`` (polynomial
  networks only: the theorems say nothing of ReLU networks).

Each task adds its own structure statistics (:mod:`margintheory.tasks.modular_addition.training` and its
neighbours); modular addition's (:data:`HISTORY_FIELDS`):

* ``mean_max_power``: mean over neurons and over their ``k+1`` vectors ``u_1..u_k, w`` of the one-sided max
  normalized Fourier power ``max_j P(j) / sum_j P(j)`` (``+j`` and ``-j`` folded, ``j = 0`` included;
  :func:`margintheory.engines.fourier.fourier_summary`).  ``weighted_max_power`` weights neuron ``i`` by
  ``||theta_i||^(k+1) / ||theta||^(k+1)``, its share of the norm budget (tiny, unused neurons do not count).
* ``frequencies_covered``: number of frequencies ``1..(p-1)/2`` that are the dominant frequency of at least one
  *sparse* neuron, i.e. one whose every vector has max normalized power ``>= SPARSE_THRESHOLD`` (stated, 0.9).
"""

from __future__ import annotations

import math

import numpy as np

from margintheory.core.network import PolyNetwork
from margintheory.engines.fourier import SPARSE_THRESHOLD, FourierSummary, fourier_summary
from margintheory.training.objective import neuron_sq_norms

__all__ = ["COMMON_FIELDS", "HISTORY_FIELDS", "SPARSE_THRESHOLD", "FourierSummary", "fourier_summary",
           "margin_from_logits", "margin_measures", "measure", "measure_weights", "network_norm", "norm_shares"]

#: the columns of every task's history before the task's own (and ``seconds`` after them)
COMMON_FIELDS = ("step", "lr", "loss", "data_loss", "train_acc", "test_acc", "norm", "normalized_margin", "ratio")
#: the history columns of modular addition
HISTORY_FIELDS = COMMON_FIELDS + ("mean_max_power", "weighted_max_power", "frequencies_covered", "seconds")


def margin_from_logits(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``g(theta, a, y) = f[y] - max_{c != y} f[c]`` for every row (docs/theory.md#margin)."""
    rows = np.arange(labels.shape[0])
    correct = logits[rows, labels]
    others = logits.copy()
    others[rows, labels] = -np.inf
    return correct - others.max(axis=1)


def norm_shares(net: PolyNetwork) -> np.ndarray:
    """``||theta_i||^(k+1) / ||theta||_{2,k+1}^(k+1)``: each neuron's share of the norm budget (sums to 1)."""
    r = net.neuron_norms()
    r = r / r.max()
    w = r ** (net.k + 1)
    return w / w.sum()


def network_norm(U: np.ndarray, W: np.ndarray, homogeneity: int) -> float:
    """``||theta||_{2,L} = (sum_i ||theta_i||_2^L)^(1/L)`` for ``L = homogeneity``, computed relative to the
    largest neuron norm and on weights scaled by a power of two (as :meth:`PolyNetwork.norm`, to the same bits for
    ``L = k + 1``): no overflow or underflow of the powers; ``inf`` if the norm itself exceeds float64."""
    top_abs = max(float(np.abs(U).max(initial=0.0)), float(np.abs(W).max(initial=0.0)))
    if top_abs == 0.0 or not math.isfinite(top_abs):
        return top_abs
    e = math.frexp(top_abs)[1]
    r = np.ldexp(np.sqrt(neuron_sq_norms(np.ldexp(U, -e), np.ldexp(W, -e))), e)
    top = float(r.max())
    if top == 0.0 or not math.isfinite(top):
        return top
    return top * float(np.sum((r / top) ** homogeneity)) ** (1.0 / homogeneity)


def margin_measures(U: np.ndarray, W: np.ndarray, h: float, homogeneity: int, gamma: float | None
                    ) -> dict[str, float]:
    """``norm``, ``normalized_margin = h / ||theta||_{2,L}^L`` and ``ratio`` to ``gamma`` (nan without one)."""
    norm = network_norm(U, W, homogeneity)
    with np.errstate(over="ignore", invalid="ignore"):  # huge weights: inf / nan, reported as divergence by the loop
        nm = float(h / np.float64(norm) ** homogeneity) if norm > 0 else float("nan")
    return {"norm": norm, "normalized_margin": nm, "ratio": nm / gamma if gamma else float("nan")}


def measure(U: np.ndarray, W: np.ndarray, logits_all: np.ndarray, labels_all: np.ndarray,
            train_mask: np.ndarray, gamma: float | None) -> dict[str, float]:
    """Modular addition: accuracy on the train / test parts, the normalized margin over ``D_p`` and the Fourier
    statistics."""
    correct = logits_all.argmax(axis=1) == labels_all
    test = ~train_mask
    train_acc = float(correct[train_mask].mean())
    test_acc = float(correct[test].mean()) if test.any() else float("nan")
    h = float(margin_from_logits(logits_all, labels_all).min())
    return measure_weights(U, W, train_acc, test_acc, h, gamma)


def measure_weights(U: np.ndarray, W: np.ndarray, train_acc: float, test_acc: float, h: float,
                    gamma: float | None) -> dict[str, float]:
    """Modular addition's :func:`measure` from the accuracies and the unnormalized margin ``h`` already computed
    (by any backend): the normalized margin ``h / ||theta||^(k+1)`` (float64 weights) and the Fourier statistics."""
    fs = fourier_summary(U, W)
    return {"train_acc": train_acc, "test_acc": test_acc, **margin_measures(U, W, h, U.shape[1] + 1, gamma),
            "mean_max_power": fs.mean_max_power, "weighted_max_power": fs.weighted_max_power,
            "frequencies_covered": fs.frequencies_covered}
