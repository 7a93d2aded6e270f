"""Per-step measurements of a network during training (docs/theory.md#training; Fig. 4.2).

* ``normalized_margin``: ``h(theta) / ||theta||_{2,k+1}^(k+1)`` over the full dataset ``D_p`` (homogeneity), with
  ``h = min_a (f[y] - max_{c != y} f[c])``; ``ratio`` = that over ``gamma*`` (Lemma C.15).
* ``mean_max_power``: mean over neurons and over their ``k+1`` vectors ``u_1..u_k, w`` of the one-sided max
  normalized Fourier power ``max_j P(j) / sum_j P(j)`` (``+j`` and ``-j`` folded, ``j = 0`` included;
  :func:`margintheory.engines.fourier.max_normalized_power`).  ``weighted_max_power`` weights neuron ``i`` by
  ``||theta_i||^(k+1) / ||theta||^(k+1)``, its share of the norm budget (tiny, unused neurons do not count).
* ``frequencies_covered``: number of frequencies ``1..(p-1)/2`` that are the dominant frequency of at least one
  *sparse* neuron, i.e. one whose every vector has max normalized power ``>= SPARSE_THRESHOLD`` (stated, 0.9).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from margintheory.core import theory
from margintheory.core.network import PolyNetwork
from margintheory.engines.fourier import one_sided_power

SPARSE_THRESHOLD = 0.9
HISTORY_FIELDS = (
    "step", "lr", "loss", "data_loss", "train_acc", "test_acc", "norm", "normalized_margin", "ratio",
    "mean_max_power", "weighted_max_power", "frequencies_covered", "seconds",
)


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


@dataclass(frozen=True)
class FourierSummary:
    """Fourier statistics of the neurons (module docstring)."""

    mean_max_power: float
    weighted_max_power: float
    frequencies_covered: int
    neuron_max_power: np.ndarray  # (m,) mean over the neuron's k+1 vectors
    dominant_frequency: np.ndarray  # (m,) frequency with most one-sided power summed over the neuron's vectors


def fourier_summary(U: np.ndarray, W: np.ndarray) -> FourierSummary:
    """One-sided spectra of ``u_1..u_k, w`` of every neuron and the statistics of the module docstring."""
    V = np.concatenate([U, W[:, None, :]], axis=1)
    P = one_sided_power(V)  # (m, k+1, floor(p/2)+1)
    tot = P.sum(axis=-1)
    vec_max = np.where(tot > 0, P.max(axis=-1) / np.where(tot > 0, tot, 1.0), 0.0)
    dom = np.argmax(P.sum(axis=1), axis=-1)
    weights = tot.sum(axis=1) ** ((U.shape[1] + 1) / 2.0)  # (p ||theta_i||^2)^((k+1)/2) by Parseval
    neuron_max = vec_max.mean(axis=1)
    weighted = float(np.sum(weights * neuron_max) / weights.sum()) if weights.sum() > 0 else 0.0
    sparse = np.all(vec_max >= SPARSE_THRESHOLD, axis=1) & (dom > 0)
    covered = len(set(dom[sparse].tolist()) & set(theory.frequencies(U.shape[2])))
    return FourierSummary(float(vec_max.mean()), weighted, covered, neuron_max, dom)


def measure(U: np.ndarray, W: np.ndarray, logits_all: np.ndarray, labels_all: np.ndarray,
            train_mask: np.ndarray, gamma: float | None) -> dict[str, float]:
    """Accuracy on the train / test parts, the normalized margin over ``D_p`` and the Fourier statistics."""
    correct = logits_all.argmax(axis=1) == labels_all
    test = ~train_mask
    train_acc = float(correct[train_mask].mean())
    test_acc = float(correct[test].mean()) if test.any() else float("nan")
    h = float(margin_from_logits(logits_all, labels_all).min())
    return measure_weights(U, W, train_acc, test_acc, h, gamma)


def measure_weights(U: np.ndarray, W: np.ndarray, train_acc: float, test_acc: float, h: float,
                    gamma: float | None) -> dict[str, float]:
    """:func:`measure` from the accuracies and the unnormalized margin ``h`` already computed (by any backend):
    the normalized margin ``h / ||theta||^(k+1)`` (float64 weights) and the Fourier statistics."""
    norm = PolyNetwork(U, W).norm()
    k = U.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):  # huge weights: inf / nan, reported as divergence by the loop
        nm = float(h / np.float64(norm) ** (k + 1)) if norm > 0 else float("nan")
    fs = fourier_summary(U, W)
    return {
        "train_acc": train_acc,
        "test_acc": test_acc,
        "norm": norm,
        "normalized_margin": nm,
        "ratio": nm / gamma if gamma else float("nan"),
        "mean_max_power": fs.mean_max_power,
        "weighted_max_power": fs.weighted_max_power,
        "frequencies_covered": fs.frequencies_covered,
    }
