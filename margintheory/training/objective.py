"""The training objective and its analytic gradient (numpy only).

Network (Eq. 4.2; docs/theory.md#network): ``f(a)[c] = sum_i z_i(a)^k W[i, c]`` with the pre-activation
``z_i(a) = U[i,0,a_1] + ... + U[i,k-1,a_k]``.

Objective (Def. 4.1; Lemma 4.7 / Morwani et al. Thm 7.1; docs/theory.md#training):
``L(theta) = mean_a CE(f(a), y(a)) + lambda * R(theta)`` with the regularizer ``R`` one of

* ``"norm"``       ``||theta||_{2,k+1}``                  (the papers' objective, the default),
* ``"norm-power"`` ``||theta||_{2,k+1}^(k+1) = sum_i ||theta_i||_2^(k+1)`` (Morwani et al.'s "L_{2,3} regularization"),
* ``"l2"``         ``||theta||_2^2 / 2``                  (plain weight decay as a penalty),
* ``"none"``       no penalty (used with the decoupled AdamW decay of :mod:`.optim`).

Gradients (derived by hand, checked against finite differences in ``tests/test_training_objective.py``):

* computed by blocks of at most :data:`BLOCK_ROWS` rows, the sums accumulated and divided by ``n`` at the end;
* ``dCE/dlogits = (softmax - onehot) / n``; ``dW = act^T dlogits`` with ``act = z^k``;
* ``dz = (dlogits W^T) * k z^(k-1)``; ``dU[:, j, v] = sum_{points with a_j = v} dz`` (a sparse product with the
  one-hot scatter matrix of position ``j``, ``O(n m)``);
* ``d||theta||_{2,k+1} / dtheta_i = ||theta_i||^(k-1) theta_i / ||theta||_{2,k+1}^k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from margintheory.errors import InputError

REGULARIZERS = ("norm", "norm-power", "l2", "none")


# Rows per block: the (rows x m) temporaries of a block stay small enough to be reused by the allocator (no page
# faults) and cache-friendly; measured 4x faster than one block at k=3, p=17, m=512 (benchmarks/bench_training.py).
BLOCK_ROWS = 512


@dataclass(frozen=True)
class Batch:
    """Inputs ``a`` (n, k) int, labels ``y`` (n,) and, per block of at most :data:`BLOCK_ROWS` rows and per
    position ``j``, the sparse (CSR) matrix ``scatter[v, r] = [a_j(r) = v]`` that sums a per-point quantity into the
    ``p`` symbols (cost ``O(rows m)``)."""

    inputs: np.ndarray
    labels: np.ndarray
    p: int
    blocks: tuple[tuple[int, int, tuple[sparse.csr_matrix, ...]], ...]

    @classmethod
    def from_inputs(cls, inputs: np.ndarray, p: int, block_rows: int = BLOCK_ROWS) -> Batch:
        """Labels ``y = (a_1 + ... + a_k) mod p`` (docs/theory.md#task) and the scatter matrices of each block."""
        a = np.asarray(inputs, dtype=np.int64)
        if a.ndim != 2:
            raise InputError(f"inputs must have shape (n, k), got {a.shape}")
        n = a.shape[0]
        labels = a.sum(axis=1) % p
        blocks = []
        for start in range(0, n, block_rows):
            stop = min(n, start + block_rows)
            cols = np.arange(stop - start)
            ones = np.ones(stop - start)
            scatter = tuple(sparse.csr_matrix((ones, (a[start:stop, j], cols)), shape=(p, stop - start))
                            for j in range(a.shape[1]))
            blocks.append((start, stop, scatter))
        return cls(a, labels, p, tuple(blocks))

    def subset(self, index: np.ndarray) -> Batch:
        """The batch restricted to the rows ``index``."""
        return Batch.from_inputs(self.inputs[index], self.p)

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])


class Workspace:
    """Buffers of shape ``(rows, m)`` reused by every row block of an evaluation, and across evaluations.

    Fresh multi-megabyte temporaries cost more in page faults (system time) than the arithmetic; a trainer keeps
    one workspace for the whole run (:meth:`for_weights` reuses the buffers when the shapes allow it).
    """

    def __init__(self, m: int, rows: int) -> None:
        self.z, self.pw, self.act, self.tmp = (np.empty((rows, m)) for _ in range(4))
        self.table = np.empty((0, 0, m))
        self.k = 0

    @classmethod
    def for_weights(cls, U: np.ndarray, rows: int, reuse: Workspace | None = None) -> Workspace:
        """A workspace loaded with ``U``: ``reuse`` if its buffers fit ``rows`` rows of ``m`` neurons."""
        m = U.shape[0]
        fits = reuse is not None and reuse.z.shape[1] == m and reuse.z.shape[0] >= rows
        ws = reuse if reuse is not None and fits else cls(m, rows)
        ws.k = U.shape[1]
        ws.table = np.ascontiguousarray(U.transpose(1, 2, 0))  # (k, p, m): row gathers are contiguous
        return ws

    def forward(self, W: np.ndarray, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``z^(k-1)``, ``z^k`` and the logits of a block (views into the buffers, valid until the next call).

        ``z[r, i] = sum_j U[i, j, a_j(r)]`` by row gathers (no one-hot product in the forward pass).
        """
        r = inputs.shape[0]
        z, pw, act, tmp = self.z[:r], self.pw[:r], self.act[:r], self.tmp[:r]
        np.take(self.table[0], inputs[:, 0], axis=0, out=z)
        for j in range(1, self.k):
            np.take(self.table[j], inputs[:, j], axis=0, out=tmp)
            z += tmp
        pw.fill(1.0)
        for _ in range(self.k - 1):
            pw *= z
        np.multiply(pw, z, out=act)
        return pw, act, act @ W


def forward_logits(U: np.ndarray, W: np.ndarray, inputs: np.ndarray, block_rows: int = BLOCK_ROWS,
                   workspace: Workspace | None = None) -> np.ndarray:
    """``f(theta, a)`` for every row of ``inputs`` (``(n, p)``), computed by blocks of rows."""
    inputs = np.asarray(inputs, dtype=np.int64)
    n = inputs.shape[0]
    out = np.empty((n, W.shape[1]))
    ws = Workspace.for_weights(U, min(block_rows, max(n, 1)), workspace)
    for start in range(0, n, block_rows):
        out[start:start + block_rows] = ws.forward(W, inputs[start:start + block_rows])[2]
    return out


# Probabilities below exp(-FLUSH) are set to zero: exp() and the products downstream would otherwise enter the
# subnormal range, which is ~10x slower on x86; their contribution is below 1e-250 of the largest term.
FLUSH = 575.0


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy and its gradient w.r.t. the logits, ``(softmax - onehot) / n``.

    Written relative to the correct logit, ``s_c = f[c] - f[y]``: the per-point loss is
    ``log(1 + sum_{c != y} e^{s_c})`` (``log1p`` when ``y`` wins, so a loss of 1e-12 keeps full precision) and
    ``softmax_y - 1 = -sum_{c != y} softmax_c`` (no cancellation).
    """
    total, grad = cross_entropy_sum(logits, labels)
    n = labels.shape[0]
    return total / n, grad / n


def cross_entropy_sum(logits: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """Summed cross-entropy and ``softmax - onehot`` (unnormalized), as in :func:`cross_entropy`."""
    rows = np.arange(labels.shape[0])
    s = logits - logits[rows, labels][:, None]
    s[rows, labels] = -np.inf
    top = np.maximum(s.max(axis=1), 0.0)  # > 0 only for misclassified points
    shifted = s - top[:, None]
    e = np.exp(np.maximum(shifted, -FLUSH))
    e[shifted < -FLUSH] = 0.0
    wrong = e.sum(axis=1)
    base = np.exp(-top)  # e^{s_y - top} with s_y = 0
    per_point = np.where(top > 0, top + np.log(base + wrong), np.log1p(wrong))
    total = base + wrong
    grad = e / total[:, None]
    grad[rows, labels] = -wrong / total
    return float(per_point.sum()), grad


def regularizer_value_and_grad(U: np.ndarray, W: np.ndarray, kind: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Value and gradient (w.r.t. ``U`` and ``W``) of the regularizer ``R(theta)`` named ``kind``."""
    k = U.shape[1]
    if kind == "none":
        return 0.0, np.zeros_like(U), np.zeros_like(W)
    if kind == "l2":
        return 0.5 * float(np.sum(U * U) + np.sum(W * W)), U.copy(), W.copy()
    r = np.sqrt(np.einsum("ijc,ijc->i", U, U) + np.einsum("ic,ic->i", W, W))
    if kind == "norm-power":
        # d sum_i r_i^(k+1) = (k+1) r_i^(k-1) theta_i
        coef = (k + 1) * r ** (k - 1)
        return float(np.sum(r ** (k + 1))), coef[:, None, None] * U, coef[:, None] * W
    if kind == "norm":
        top = float(r.max())
        if top == 0.0:
            return 0.0, np.zeros_like(U), np.zeros_like(W)
        rs = r / top
        norm = top * float(np.sum(rs ** (k + 1))) ** (1.0 / (k + 1))
        # r_i^(k-1) / norm^k, written with the rescaled r to avoid overflow
        coef = rs ** (k - 1) * (top / norm) ** (k - 1) / norm
        return norm, coef[:, None, None] * U, coef[:, None] * W
    raise InputError(f"unknown regularizer {kind!r}; choose one of {', '.join(REGULARIZERS)}")


@dataclass(frozen=True)
class ObjectiveValue:
    """Objective value, its parts and the gradient."""

    total: float
    data_loss: float
    penalty: float
    grad_U: np.ndarray
    grad_W: np.ndarray


def objective_and_grad(U: np.ndarray, W: np.ndarray, batch: Batch, lam: float, regularizer: str,
                       workspace: Workspace | None = None) -> ObjectiveValue:
    """``mean CE + lam * R(theta)`` and its analytic gradient (module docstring), accumulated over row blocks.

    ``workspace``: buffers to reuse (a trainer passes the same one at every step)."""
    k = U.shape[1]
    grad_U = np.zeros_like(U)
    grad_W = np.zeros_like(W)
    loss_sum = 0.0
    ws = Workspace.for_weights(U, max(stop - start for start, stop, _ in batch.blocks), workspace)
    for start, stop, scatter in batch.blocks:
        pw, act, logits = ws.forward(W, batch.inputs[start:stop])
        part, dlogits = cross_entropy_sum(logits, batch.labels[start:stop])
        loss_sum += part
        grad_W += act.T @ dlogits
        dz = np.matmul(dlogits, W.T, out=ws.tmp[: stop - start])
        dz *= pw  # k * z^(k-1) * dL/dact, the factor k applied once at the end
        for j in range(k):
            grad_U[:, j, :] += (scatter[j] @ dz).T
    grad_U *= k / batch.n
    grad_W /= batch.n
    data_loss = loss_sum / batch.n
    penalty, gU, gW = regularizer_value_and_grad(U, W, regularizer)
    if lam:
        grad_U += lam * gU
        grad_W += lam * gW
    return ObjectiveValue(data_loss + lam * penalty, data_loss, penalty, grad_U, grad_W)
