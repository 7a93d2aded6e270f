"""Lower bounds for the single-neuron problem: multi-start local maximisation of ``F(x/|x|)`` on the unit sphere
(scipy BFGS on the homogeneous quotient ``F(x) / |x|^(k+1)``; docs/theory.md#single-neuron-problem).

Any unit vector gives a valid lower bound ``F(x)``; the value reported is re-evaluated at the normalised point.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from margintheory.errors import InputError
from margintheory.solvers.objective import SingleNeuronObjective


@dataclass(frozen=True)
class LocalMaxima:
    """Best value/maximiser and all local values found (sorted, best first); ``points`` are unit vectors."""

    value: float
    x: np.ndarray
    values: np.ndarray
    points: np.ndarray
    n_starts: int
    seed: int | None
    seconds: float


def _ascend(obj: SingleNeuronObjective, x0: np.ndarray, gtol: float) -> np.ndarray:
    def neg(x: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = obj.sphere_value_and_grad(x)
        return -f, -g

    # BFGS rather than L-BFGS-B: the latter's Fortran core is dominated by BLAS thread start-up for n ~ 20
    res = minimize(neg, x0, jac=True, method="BFGS", options={"gtol": gtol, "maxiter": 2000})
    x = np.asarray(res.x, dtype=float)
    return x / np.linalg.norm(x)


def multistart_maximise(obj: SingleNeuronObjective, *, n_starts: int = 16, seed: int | None = 0,
                        extra_starts: np.ndarray | None = None, gtol: float = 1e-11) -> LocalMaxima:
    """Maximise ``F`` on the unit sphere from ``n_starts`` Gaussian starts (``numpy`` generator seeded with
    ``seed``) plus the rows of ``extra_starts``; returns every local value found (a lower bound each)."""
    if n_starts < 0:
        raise InputError("n_starts must be >= 0")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    starts = [rng.standard_normal(obj.n) for _ in range(n_starts)]
    if extra_starts is not None:
        starts += [np.asarray(s, dtype=float).ravel() for s in np.atleast_2d(extra_starts)]
    starts = [s for s in starts if np.linalg.norm(s) > 0]
    if not starts:
        raise InputError("no starting point for the local solver")
    points = np.array([_ascend(obj, s, gtol) for s in starts])
    values = np.array([obj.value(x) for x in points])
    order = np.argsort(-values)
    return LocalMaxima(float(values[order[0]]), points[order[0]], values[order], points[order], len(starts), seed,
                       time.perf_counter() - t0)
