"""The training objective and its analytic gradient (numpy only).

Networks (:class:`~margintheory.backends.training_step.NetworkSpec`; docs/theory.md#network):

* family ``sum`` (Eq. 4.2): ``f(a)[c] = sum_i act(z_i(a)) W[i, c]`` with ``z_i(a) = U[i,0,a_1] + ... +
  U[i,k-1,a_k]`` (modular addition, a group's ``(a, b)``, CoGO's ``Z_d``);
* family ``linear`` (Morwani et al. Sec. 7.5): ``f(x)[c] = sum_i act(u_i . x) W[i, c]`` (sparse parity);
* ``act(z) = z^degree`` (the papers' polynomial networks) or ``max(z, 0)`` (ReLU).

Objective (Def. 4.1; Lemma 4.7 / Morwani et al. Thm 7.1; docs/theory.md#training):
``L(theta) = mean_a loss(f(a), y(a)) + lambda * R(theta)``, the loss the cross-entropy (the margin papers) or the
projected MSE ``||P1perp(s f(a) - e_y)||^2`` (Tian, CoGO, Eq. 1 with ``s = 1/(2d)``), and the regularizer ``R``
one of (``L`` the homogeneity of the network: ``degree + 1`` for ``z^degree``, 2 for ReLU)

* ``"norm"``       ``||theta||_{2,L}``                  (the papers' objective, the default),
* ``"norm-power"`` ``||theta||_{2,L}^L = sum_i ||theta_i||_2^L`` (Morwani et al.'s "L_{2,3} regularization"),
* ``"l2"``         ``||theta||_2^2 / 2``                  (plain weight decay as a penalty; PyTorch's coupled
  ``weight_decay``),
* ``"none"``       no penalty (used with the decoupled AdamW decay of :mod:`.optim`).

Gradients (derived by hand, checked against finite differences in ``tests/test_training_objective.py`` and
``tests/test_training_tasks.py``):

* computed by blocks of at most :data:`BLOCK_ROWS` rows, the sums accumulated and divided by ``n`` at the end;
* cross-entropy: ``dloss/dlogits = (softmax - onehot) / n``; projected MSE: ``2 s P1perp(s f - e_y) / n``;
* ``dW = act^T dlogits``; ``dz = (dlogits W^T) * act'(z)`` (``degree z^(degree-1)`` or ``[z > 0]``);
* family ``sum``: ``dU[:, j, v] = sum_{points with a_j = v} dz`` (a sparse product with the one-hot scatter matrix
  of position ``j``, ``O(n m)``); family ``linear``: ``dU = dz^T x``;
* ``d||theta||_{2,L} / dtheta_i = ||theta_i||^(L-2) theta_i / ||theta||_{2,L}^(L-1)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from margintheory.backends.training_step import NetworkSpec
from margintheory.errors import InputError

REGULARIZERS = ("norm", "norm-power", "l2", "none")


# Rows per block: the (rows x m) temporaries of a block stay small enough to be reused by the allocator (no page
# faults) and cache-friendly; measured 4x faster than one block at k=3, p=17, m=512 (benchmarks/bench_training.py).
BLOCK_ROWS = 512


def default_network(U: np.ndarray, W: np.ndarray) -> NetworkSpec:
    """The papers' modular-addition network for weights of its shape: family ``sum``, ``z^k``, cross-entropy."""
    if U.ndim != 3:
        raise InputError(f"U of shape {U.shape} is not (m, k, p): give the network specification")
    return NetworkSpec("sum", U.shape[1], U.shape[2], W.shape[1], "power", U.shape[1])


@dataclass(frozen=True)
class Batch:
    """Inputs (``(n, k)`` int residues, family ``sum``; ``(n, d)`` float vectors, family ``linear``), labels ``y``
    ``(n,)`` int and, per block of at most :data:`BLOCK_ROWS` rows and (family ``sum``) per position ``j``, the sparse
    (CSR) matrix ``scatter[v, r] = [a_j(r) = v]`` that sums a per-point quantity into the ``p`` symbols (cost
    ``O(rows m)``)."""

    inputs: np.ndarray
    labels: np.ndarray
    p: int
    blocks: tuple[tuple[int, int, tuple[sparse.csr_matrix, ...]], ...]

    @classmethod
    def from_inputs(cls, inputs: np.ndarray, p: int, block_rows: int = BLOCK_ROWS, *,
                    labels: np.ndarray | None = None) -> Batch:
        """The batch of ``inputs`` with ``labels`` (default: modular addition's ``y = (a_1 + ... + a_k) mod p``,
        docs/theory.md#task) and the scatter matrices of each block; ``p = 0``: real inputs (family ``linear``), no
        scatter matrices."""
        a = np.asarray(inputs, dtype=np.int64 if p else np.float64)
        if a.ndim != 2:
            raise InputError(f"inputs must have shape (n, k), got {a.shape}")
        n = a.shape[0]
        y = a.sum(axis=1) % p if labels is None else np.asarray(labels, dtype=np.int64)
        if y.shape != (n,):
            raise InputError(f"labels must have shape ({n},), got {y.shape}")
        blocks = []
        for start in range(0, n, block_rows):
            stop = min(n, start + block_rows)
            cols = np.arange(stop - start)
            ones = np.ones(stop - start)
            scatter = tuple(sparse.csr_matrix((ones, (a[start:stop, j], cols)), shape=(p, stop - start))
                            for j in range(a.shape[1])) if p else ()
            blocks.append((start, stop, scatter))
        return cls(a, y, p, tuple(blocks))

    def subset(self, index: np.ndarray) -> Batch:
        """The batch restricted to the rows ``index``."""
        return Batch.from_inputs(self.inputs[index], self.p, labels=self.labels[index])

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
        self.U = np.empty((m, 0))
        self.k = 0
        self.degree = 0
        self.relu = False

    @classmethod
    def for_weights(cls, U: np.ndarray, rows: int, reuse: Workspace | None = None,
                    network: NetworkSpec | None = None) -> Workspace:
        """A workspace loaded with ``U``: ``reuse`` if its buffers fit ``rows`` rows of ``m`` neurons."""
        m = U.shape[0]
        fits = reuse is not None and reuse.z.shape[1] == m and reuse.z.shape[0] >= rows
        ws = reuse if reuse is not None and fits else cls(m, rows)
        ws.k = U.shape[1]
        ws.degree = network.degree if network is not None else U.shape[1]
        ws.relu = network is not None and network.activation == "relu"
        if U.ndim == 3:
            ws.table = np.ascontiguousarray(U.transpose(1, 2, 0))  # (k, p, m): row gathers are contiguous
        else:
            ws.U = U
        return ws

    def pre_activation(self, inputs: np.ndarray) -> np.ndarray:
        """``z`` of a block: ``z[r, i] = sum_j U[i, j, a_j(r)]`` by row gathers (no one-hot product), or
        ``x_r . u_i`` (family ``linear``)."""
        r = inputs.shape[0]
        z, tmp = self.z[:r], self.tmp[:r]
        if self.table.shape[0] == 0:
            return np.matmul(inputs, self.U.T, out=z)
        np.take(self.table[0], inputs[:, 0], axis=0, out=z)
        for j in range(1, self.k):
            np.take(self.table[j], inputs[:, j], axis=0, out=tmp)
            z += tmp
        return z

    def forward(self, W: np.ndarray, inputs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``act'(z) / c``, ``act(z)`` and the logits of a block (views into the buffers, valid until the next call);
        ``c`` = :attr:`derivative_factor` (``z^(k-1)`` is returned for ``z^k``, the factor ``k`` applied once)."""
        r = inputs.shape[0]
        z, pw, act = self.pre_activation(inputs), self.pw[:r], self.act[:r]
        if self.relu:
            np.greater(z, 0.0, out=pw)  # the derivative, 0 at z = 0 (the subgradient autodiff takes)
            np.multiply(pw, z, out=act)
            return pw, act, act @ W
        pw.fill(1.0)
        for _ in range(self.degree - 1):
            pw *= z
        np.multiply(pw, z, out=act)
        return pw, act, act @ W

    @property
    def derivative_factor(self) -> float:
        return 1.0 if self.relu else float(self.degree)


def forward_logits(U: np.ndarray, W: np.ndarray, inputs: np.ndarray, block_rows: int = BLOCK_ROWS,
                   workspace: Workspace | None = None, network: NetworkSpec | None = None) -> np.ndarray:
    """``f(theta, a)`` for every row of ``inputs`` (``(n, classes)``), computed by blocks of rows."""
    inputs = np.asarray(inputs, dtype=np.int64 if U.ndim == 3 else np.float64)
    n = inputs.shape[0]
    out = np.empty((n, W.shape[1]))
    ws = Workspace.for_weights(U, min(block_rows, max(n, 1)), workspace, network)
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


def projected_mse_sum(logits: np.ndarray, labels: np.ndarray, scale: float) -> tuple[float, np.ndarray]:
    """Summed ``||P1perp(scale f - e_y)||^2`` (Tian, CoGO, Eq. 1; ``P1perp = I - 11^T/C`` removes the mean over the
    ``C`` classes) and its gradient w.r.t. the logits, ``2 scale P1perp(scale f - e_y)`` (``P1perp`` is a
    projection, so ``P^T P = P``)."""
    rows = np.arange(labels.shape[0])
    t = scale * logits
    t[rows, labels] -= 1.0
    t -= t.mean(axis=1, keepdims=True)
    return float(np.einsum("rc,rc->", t, t)), (2.0 * scale) * t


def data_loss_sum(logits: np.ndarray, labels: np.ndarray, network: NetworkSpec | None = None
                  ) -> tuple[float, np.ndarray]:
    """The summed loss of ``network`` (cross-entropy by default) and its unnormalized gradient w.r.t. the logits."""
    if network is not None and network.loss == "projected-mse":
        return projected_mse_sum(logits, labels, network.output_scale)
    return cross_entropy_sum(logits, labels)


def data_loss(logits: np.ndarray, labels: np.ndarray, network: NetworkSpec | None = None) -> float:
    """The mean loss of ``network`` over the rows (:func:`data_loss_sum` divided by their number)."""
    return data_loss_sum(logits, labels, network)[0] / max(labels.shape[0], 1)


def neuron_sq_norms(U: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``||theta_i||_2^2`` for every neuron ``i`` (every axis of ``U`` and ``W`` but the first)."""
    return np.einsum("ij,ij->i", U.reshape(U.shape[0], -1), U.reshape(U.shape[0], -1)) + np.einsum("ic,ic->i", W, W)


def regularizer_value_and_grad(U: np.ndarray, W: np.ndarray, kind: str, homogeneity: int | None = None
                               ) -> tuple[float, np.ndarray, np.ndarray]:
    """Value and gradient (w.r.t. ``U`` and ``W``) of the regularizer ``R(theta)`` named ``kind``, with the norm
    ``||theta||_{2,L}`` of ``L = homogeneity`` (default ``k + 1`` for ``U`` of shape ``(m, k, p)``)."""
    L = U.shape[1] + 1 if homogeneity is None else homogeneity
    if kind == "none":
        return 0.0, np.zeros_like(U), np.zeros_like(W)
    if kind == "l2":
        return 0.5 * float(np.sum(U * U) + np.sum(W * W)), U.copy(), W.copy()
    r = np.sqrt(neuron_sq_norms(U, W))
    shape_u = (-1,) + (1,) * (U.ndim - 1)
    if kind == "norm-power":
        # d sum_i r_i^L = L r_i^(L-2) theta_i
        coef = L * r ** (L - 2)
        return float(np.sum(r ** L)), coef.reshape(shape_u) * U, coef[:, None] * W
    if kind == "norm":
        top = float(r.max())
        if top == 0.0:
            return 0.0, np.zeros_like(U), np.zeros_like(W)
        rs = r / top
        norm = top * float(np.sum(rs ** L)) ** (1.0 / L)
        # r_i^(L-2) / norm^(L-1), written with the rescaled r to avoid overflow
        coef = rs ** (L - 2) * (top / norm) ** (L - 2) / norm
        return norm, coef.reshape(shape_u) * U, coef[:, None] * W
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
                       workspace: Workspace | None = None, network: NetworkSpec | None = None) -> ObjectiveValue:
    """``mean loss + lam * R(theta)`` and its analytic gradient (module docstring), accumulated over row blocks.

    ``workspace``: buffers to reuse (a trainer passes the same one at every step); ``network``: the network and
    loss (default :func:`default_network`: ``z^k`` on ``(m, k, p)`` weights, cross-entropy)."""
    net = network if network is not None else default_network(U, W)
    grad_U = np.zeros_like(U)
    grad_W = np.zeros_like(W)
    loss_sum = 0.0
    ws = Workspace.for_weights(U, max(stop - start for start, stop, _ in batch.blocks), workspace, net)
    for start, stop, scatter in batch.blocks:
        block = batch.inputs[start:stop]
        deriv, act, logits = ws.forward(W, block)
        part, dlogits = data_loss_sum(logits, batch.labels[start:stop], net)
        loss_sum += part
        grad_W += act.T @ dlogits
        dz = np.matmul(dlogits, W.T, out=ws.tmp[: stop - start])
        dz *= deriv  # act'(z) dL/dact, the power's factor applied once at the end
        if net.family == "linear":
            grad_U += dz.T @ block
        else:
            for j in range(U.shape[1]):
                grad_U[:, j, :] += (scatter[j] @ dz).T
    grad_U *= ws.derivative_factor / batch.n
    grad_W /= batch.n
    mean_loss = loss_sum / batch.n
    penalty, gU, gW = regularizer_value_and_grad(U, W, regularizer, net.homogeneity)
    if lam:
        grad_U += lam * gU
        grad_W += lam * gW
    return ObjectiveValue(mean_loss + lam * penalty, mean_loss, penalty, grad_U, grad_W)
