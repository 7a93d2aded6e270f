"""CoGO Fig. 2 (bottom): training on Eq. 3 without its ``R_*`` term (Tian, arXiv:2410.01779; docs/theory.md#cogo).

Theorem 1 writes the projected MSE of Eq. 1 (mean over the ``d^2`` pairs) through the monomial potentials:

    loss = d^-1 sum_{k != 0} [ -2 r_kkk + sum_{k1,k2} |r_{k1 k2 k}|^2 + 1/4 |sum_p S_p[0, k]|^2
                                + 1/4 sum_{m != 0} sum_p |S_p[m, k]|^2 ] + (d - 1) / d,

``S_p[m, k] = sum_k' r_{p k' (m-k') k}`` (:func:`margintheory.tasks.cogo.algebra.theorem1_loss`).  Fig. 2 (bottom)
minimizes it *without the last sum* (the constraint set ``R_*`` removed) and finds 3 nodes per frequency, ``z_syn``.
That objective is not a loss of the network's outputs, so the trainer of :mod:`margintheory.training` (losses of
the outputs) cannot minimize it: :func:`train_without_r_star` does, with JAX autodiff through the Fourier
coefficients ``z`` of the network's weights (:func:`margintheory.tasks.cogo.algebra.from_network`, in ``jax.numpy``)
and optax's Adam.  :func:`loss_without_r_star` is tested against ``theorem1_loss`` minus its ``r_star`` term.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from margintheory.core.network import PolyNetwork


def _potential_terms(U: Any, W: Any, d: int, xp: Any) -> tuple[Any, Any, Any]:
    """``(fit + cross, r_n, r_star)`` of Theorem 1 (each already divided by ``d``) for weights ``U (q, 2, d)``,
    ``W (q, d)`` in the array module ``xp`` (numpy or jax.numpy)."""
    za = xp.fft.fft(U[:, 0, :], axis=1).T / d  # z[a, k, j]
    zb = xp.fft.fft(U[:, 1, :], axis=1).T / d
    zc = xp.fft.ifft(W, axis=1).T
    R = xp.einsum("xj,yj,zj->xyz", za, zb, zc)
    ks = np.arange(1, d)
    fit_cross = (-2 * xp.real(xp.sum(R[ks, ks, ks])) + xp.sum(xp.abs(R[:, :, ks]) ** 2)) / d
    idx = (np.arange(d)[:, None] - np.arange(d)[None, :]) % d  # idx[m, k'] = m - k'
    S = [xp.einsum("kj,mkj,zj->mz", zp, zp[idx], zc) for zp in (za, zb)]  # S_p[m, k]
    r_n = xp.sum(xp.abs(S[0][0, ks] + S[1][0, ks]) ** 2) / 4 / d
    r_star = (xp.sum(xp.abs(S[0][1:, :][:, ks]) ** 2) + xp.sum(xp.abs(S[1][1:, :][:, ks]) ** 2)) / 4 / d
    return fit_cross, r_n, r_star


def loss_without_r_star(U: Any, W: Any, d: int, xp: Any = np) -> Any:
    """Theorem 1's loss without its ``R_*`` term (module docstring)."""
    fit_cross, r_n, _ = _potential_terms(U, W, d, xp)
    return fit_cross + r_n + (d - 1) / d


def full_loss(U: Any, W: Any, d: int, xp: Any = np) -> Any:
    """Theorem 1's loss, all terms (= Eq. 1's projected MSE over the ``d^2`` pairs)."""
    fit_cross, r_n, r_star = _potential_terms(U, W, d, xp)
    return fit_cross + r_n + r_star + (d - 1) / d


def train_without_r_star(U0: np.ndarray, W0: np.ndarray, *, lr: float, steps: int, betas: tuple[float, float],
                         l2: float, log_every: int) -> tuple[PolyNetwork, list[dict[str, float]], float]:
    """Adam (optax, float64) on :func:`loss_without_r_star` plus ``l2 ||theta||^2 / 2`` (PyTorch's Adam weight
    decay) from ``(U0, W0)``; the network, the history (step, lr, the objective as ``loss``, Eq. 1's full loss as
    ``data_loss``) and the seconds taken."""
    from margintheory.backends.select import float64

    start = time.perf_counter()
    U, W, history = float64(_adam)(U0, W0, lr, steps, betas, l2, log_every)
    return PolyNetwork(U, W), history, time.perf_counter() - start


def _adam(U0: np.ndarray, W0: np.ndarray, lr: float, steps: int, betas: tuple[float, float], l2: float,
          log_every: int) -> tuple[np.ndarray, np.ndarray, list[dict[str, float]]]:
    import jax
    import jax.numpy as jnp
    import optax

    d = U0.shape[2]
    params = (jnp.asarray(U0), jnp.asarray(W0))
    opt = optax.adam(lr, b1=betas[0], b2=betas[1])
    state = opt.init(params)

    @jax.jit
    def step(p: Any, s: Any) -> tuple[Any, Any]:
        grad = jax.grad(lambda q: loss_without_r_star(q[0], q[1], d, jnp)
                        + l2 / 2 * (jnp.sum(q[0] ** 2) + jnp.sum(q[1] ** 2)))(p)
        updates, s = opt.update(grad, s, p)
        return optax.apply_updates(p, updates), s

    history = [_row(0, lr, params, d)]
    for t in range(1, steps + 1):
        params, state = step(params, state)
        if t % log_every == 0 or t == steps:
            history.append(_row(t, lr, params, d))
    U, W = (np.asarray(a, dtype=np.float64) for a in params)
    return U, W, history


def _row(step: int, lr: float, params: Any, d: int) -> dict[str, float]:
    U, W = (np.asarray(a, dtype=np.float64) for a in params)
    return {"step": step, "lr": lr, "loss": float(loss_without_r_star(U, W, d)), "data_loss": float(full_loss(U, W, d))}
