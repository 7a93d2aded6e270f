"""Random class weights ``(q, tau)`` for the class-weighted single-neuron tests: a random ``q`` on every point and a
random wrong-label ``tau`` ("random"), or ``q`` on three points and ``tau`` on one wrong label each ("peaked"), the
two kinds of target of the class-weighted solvers (docs/theory.md#quartic-sos)."""

from __future__ import annotations

import numpy as np

from margintheory.engines.margins import input_grid
from margintheory.solvers.class_weighted import ClassWeights, class_weights


def random_class_weights(p: int, k: int, seed: int, peaked: bool = False) -> ClassWeights:
    """Class weights of ``(p, k)`` drawn with ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    n, y = p**k, input_grid(p, k).sum(axis=1) % p
    if peaked:
        q = np.zeros(n)
        idx = rng.choice(n, 3, replace=False)
        q[idx] = rng.random(3)
        q /= q.sum()
        tau = np.zeros((n, p))
        tau[np.arange(n), (y + rng.integers(1, p, n)) % p] = 1.0
    else:
        q = rng.random(n)
        q /= q.sum()
        tau = rng.random((n, p))
        tau[np.arange(n), y] = 0.0
        tau /= tau.sum(axis=1, keepdims=True)
    return class_weights(p, k, q=q, tau=tau)


def near_uniform_class_weights(p: int, k: int, seed: int, eps: float) -> ClassWeights:
    """Uniform ``q`` and ``tau`` times ``1 + eps N(0, 1)`` entrywise, normalised: close to translation-invariant
    weights (whose maximisers form a continuum) but not equal to them, so the quartic SOS path takes them."""
    rng = np.random.default_rng(seed)
    n, y = p**k, input_grid(p, k).sum(axis=1) % p
    q = 1 + eps * rng.standard_normal(n)
    tau = 1 + eps * rng.standard_normal((n, p))
    tau[np.arange(n), y] = 0.0
    tau /= tau.sum(axis=1, keepdims=True)
    return class_weights(p, k, q=q / q.sum(), tau=tau)
