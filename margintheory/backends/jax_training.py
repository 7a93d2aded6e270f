"""JAX backend of the trainer: the papers' objective, its gradient by autodiff, optax optimizers and schedules
(docs/theory.md#training; the numpy reference is :mod:`margintheory.training.objective` and
:mod:`margintheory.training.optim`, which this module reproduces to rounding).

* Networks and losses: every :class:`~margintheory.backends.training_step.NetworkSpec` (family ``sum`` or
  ``linear``, activation ``z^degree`` or ReLU, cross-entropy or projected MSE), as the numpy reference.
* Objective (Def. 4.1; Lemma 4.7 / Morwani et al. Thm 7.1): ``mean loss + lambda R(theta)``, the cross-entropy
  written relative to the correct logit as the numpy reference writes it, ``R`` one of ``norm``
  (``||theta||_{2,L}``, ``L`` the network's homogeneity), ``norm-power``, ``l2``, ``none``.  Gradients:
  ``jax.value_and_grad``.
* Optimizers: ``optax.sgd`` (``gd``, ``sgd``), ``optax.adam``, ``optax.adamw`` (decoupled decay), eps ``1e-12`` as the
  numpy reference; schedules: ``optax.linear_schedule`` warm-up joined to ``optax.constant_schedule``,
  ``optax.cosine_decay_schedule`` or ``optax.piecewise_constant_schedule`` (doubling at milestones).  Optax counts
  updates from 0, the numpy schedule from 1: :func:`learning_rate_schedule` takes the numpy convention.
* Rows are processed in blocks (a ``lax.scan`` accumulating the gradient), so a full batch of ``p^k`` points never
  holds more than a block's activations; the step is one jit-compiled function per shape.
* ``dtype``: the parameters, optimizer state and arithmetic of the updates (float32 or float64);
  :meth:`JaxStepper.evaluate` always recomputes in float64 (``jax.enable_x64`` as a thread-local context, see
  :mod:`margintheory.backends.select`).
* History rows from the step (``TrainSpec.evaluate_in_step``: float64, full batch, and no test points or a row every
  step): the step also returns the measures of the parameters it starts from, the training points' out of its own
  forward pass (the test points' from a forward pass without gradient), and :meth:`JaxStepper.evaluate` computes the
  next step ahead and keeps it, so a row costs no forward pass over the training points of its own.

Parameters and optimizer state stay on the device; the host sees them at records and checkpoints.  The optimizer
state is flattened into named arrays (``"0.mu.U"``, ``"0.count"``, ...) for the checkpoint and restored by name.
"""

from __future__ import annotations

import collections
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from margintheory.backends.select import Backend, devices, float64, import_jax
from margintheory.backends.training_step import Evaluation, NetworkSpec, TrainSpec
from margintheory.errors import InputError

#: device bytes of one block's buffers: a CPU block stays this size (cache-sized: measured at p=17, k=3, m=512 on a
#: 2-core AMD EPYC share, 4-16 MiB blocks cost 0.57x the CPU time of one block of all points), a GPU block up to
#: this share of its memory
CPU_BLOCK_BYTES = 8 * 2**20
GPU_MEMORY_FRACTION = 0.25
ADAM_EPS = 1e-12  # as margintheory.training.optim.OptimizerState


def learning_rate_schedule(spec: TrainSpec) -> Callable[[Any], Any]:
    """The optax schedule of ``spec`` as a function of the 1-based step (numpy convention): linear warm-up to
    ``lr`` over ``warmup`` steps, then constant, cosine (to ``lr * final_fraction``) or doubling."""
    import jax.numpy as jnp
    import optax

    if spec.schedule == "constant":
        after = optax.constant_schedule(spec.lr)
    elif spec.schedule == "cosine":
        after = optax.cosine_decay_schedule(spec.lr, max(1, spec.total_steps - spec.warmup), alpha=spec.final_fraction)
    else:
        # optax scales from count >= boundary on; numpy doubles once step > milestone
        passed = collections.Counter(s - spec.warmup + 1 for s in spec.milestones)
        after = optax.piecewise_constant_schedule(spec.lr, {b: 2.0**c for b, c in passed.items()})
    if not spec.warmup:
        return after
    warm = optax.linear_schedule(0.0, spec.lr, spec.warmup)
    return lambda step: jnp.where(step <= spec.warmup, warm(step), after(step - spec.warmup))


def optimizer(spec: TrainSpec) -> Any:
    """The optax transformation (``count`` 0 is step 1 of the schedule)."""
    import optax

    by_step = learning_rate_schedule(spec)

    def lr(count: Any) -> Any:
        return by_step(count + 1)

    b1, b2 = spec.betas
    if spec.optimizer in ("gd", "sgd"):
        return optax.sgd(lr)
    if spec.optimizer == "adam":
        return optax.adam(lr, b1=b1, b2=b2, eps=ADAM_EPS)
    return optax.adamw(lr, b1=b1, b2=b2, eps=ADAM_EPS, weight_decay=spec.weight_decay)


def logits(params: dict[str, Any], inputs: Any, network: NetworkSpec | int, one_hot_gradient: bool = False) -> Any:
    """``f(a)[c] = sum_i act(U[i,0,a_1] + ... + U[i,k-1,a_k]) W[i,c]`` for rows ``inputs`` (n, k) (family ``sum``),
    ``sum_i act(u_i . x) W[i,c]`` for real rows ``x`` (family ``linear``); ``network`` an integer ``k``: family
    ``sum`` with ``act = z^k``.

    ``one_hot_gradient``: the embeddings' gradient as one-hot products (:func:`embedding_rows`) instead of the
    scatter-add that autodiff makes of the gather (GPUs: a scatter-add sums with atomics, in an order that changes
    from run to run, so a resumed run would not repeat the uninterrupted one bit for bit)."""
    import jax

    net = network if isinstance(network, NetworkSpec) else NetworkSpec("sum", network, 0, 0, "power", network)
    U, W = params["U"], params["W"]
    if net.family == "linear":
        z = inputs @ U.T
    else:
        rows = embedding_rows if one_hot_gradient else (lambda table, index: table[index])
        z = rows(U[:, 0, :].T, inputs[:, 0])
        for j in range(1, net.inputs):
            z = z + rows(U[:, j, :].T, inputs[:, j])
    act = jax.nn.relu(z) if net.activation == "relu" else jax.lax.integer_pow(z, net.degree)
    return act @ W


@functools.lru_cache(maxsize=1)
def _embedding_rows() -> Callable:
    import jax

    @jax.custom_vjp
    def rows(table: Any, index: Any) -> Any:
        return table[index]

    def forward(table: Any, index: Any) -> tuple[Any, Any]:
        return table[index], (index, table.shape[0])

    def backward(saved: Any, g: Any) -> tuple[Any, None]:
        index, size = saved
        return jax.nn.one_hot(index, size, dtype=g.dtype).T @ g, None

    rows.defvjp(forward, backward)
    return rows


def embedding_rows(table: Any, index: Any) -> Any:
    """``table[index]`` (rows of a ``(p, m)`` embedding for ``n`` residues) whose gradient with respect to
    ``table`` is the product ``onehot(index)^T g`` -- a GEMM, summed in a fixed order on every device -- rather than
    the scatter-add of ``g``'s rows that differentiating a gather gives."""
    return _embedding_rows()(table, index)


def cross_entropy_terms(L: Any, y: Any) -> tuple[Any, Any]:
    """Per-row cross-entropy written relative to the correct logit (``log1p`` when it wins), and the margin
    ``f[y] - max_{c != y} f[c]`` (as :func:`margintheory.training.objective.cross_entropy_sum`)."""
    import jax.numpy as jnp

    s = _relative_wrong_logits(L, y)
    best = jnp.max(s, axis=1)
    top = jnp.maximum(best, 0.0)
    wrong = jnp.sum(jnp.exp(s - top[:, None]), axis=1)
    per_row = jnp.where(top > 0, top + jnp.log(jnp.exp(-top) + wrong), jnp.log1p(wrong))
    return per_row, -best


def projected_mse_terms(L: Any, y: Any, scale: float) -> Any:
    """Per-row ``||P1perp(scale L - e_y)||^2`` (Tian, CoGO, Eq. 1; as
    :func:`margintheory.training.objective.projected_mse_sum`)."""
    import jax.numpy as jnp

    t = scale * L - (y[:, None] == jnp.arange(L.shape[1])[None, :]).astype(L.dtype)
    t = t - jnp.mean(t, axis=1, keepdims=True)
    return jnp.sum(t * t, axis=1)


def loss_terms(L: Any, y: Any, network: NetworkSpec) -> tuple[Any, Any]:
    """Per-row loss of ``network`` and the margin ``f[y] - max_{c != y} f[c]``."""
    if network.loss == "projected-mse":
        return projected_mse_terms(L, y, network.output_scale), logit_margins(L, y)
    return cross_entropy_terms(L, y)


def regularizer(params: dict[str, Any], kind: str, homogeneity: int) -> Any:
    """``R(theta)`` named ``kind`` (the numpy reference's four) with the norm ``||theta||_{2,L}``, ``L =
    homogeneity``, differentiable everywhere it is in numpy."""
    import jax
    import jax.numpy as jnp

    U, W = params["U"], params["W"]
    if kind == "none":
        return jnp.zeros((), U.dtype)
    if kind == "l2":
        return 0.5 * (jnp.sum(U * U) + jnp.sum(W * W))
    r2 = jnp.sum(U * U, axis=tuple(range(1, U.ndim))) + jnp.sum(W * W, axis=1)
    if kind == "norm-power":
        return jnp.sum(r2 ** (homogeneity / 2))
    top2 = jax.lax.stop_gradient(jnp.max(r2))  # a rescaling against overflow: the value does not depend on it
    scale2 = jnp.where(top2 > 0, top2, 1.0)
    return jnp.sqrt(scale2) * jnp.sum((r2 / scale2) ** (homogeneity / 2)) ** (1.0 / homogeneity)


def _blocks(n: int, m: int, p: int, backend: Backend, dtype_bytes: int) -> tuple[int, int]:
    """``(block_rows, n_blocks)`` for ``n`` rows: a block's buffers fit the device's share."""
    per_row = dtype_bytes * (6 * m + 4 * p) + 16
    if backend.device == "gpu":
        stats = devices(backend)[0].memory_stats() or {}
        budget = GPU_MEMORY_FRACTION * stats.get("bytes_limit", 4 * 2**30)
    else:
        budget = CPU_BLOCK_BYTES
    rows = max(1, min(n, int(budget // per_row)))
    n_blocks = math.ceil(n / rows)
    return math.ceil(n / n_blocks), n_blocks


def _padded(inputs: np.ndarray, labels: np.ndarray, weights: np.ndarray, rows: int, n_blocks: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows in ``n_blocks`` blocks of ``rows`` (padding rows have weight 0); integer inputs (family ``sum``) as
    int32, real inputs (family ``linear``) in the weights' dtype."""
    total = rows * n_blocks
    pad = total - len(labels)
    a = np.concatenate([inputs, np.zeros((pad, inputs.shape[1]), inputs.dtype)]).reshape(n_blocks, rows, -1)
    y = np.concatenate([labels, np.zeros(pad, labels.dtype)]).reshape(n_blocks, rows)
    w = np.concatenate([weights, np.zeros((pad,) + weights.shape[1:], weights.dtype)])
    a = a.astype(np.int32) if inputs.dtype.kind in "iu" else a.astype(weights.dtype)
    return a, y.astype(np.int32), w.reshape((n_blocks, rows) + weights.shape[1:])


def _state_name(path: tuple) -> str:
    parts = []
    for key in path:
        for attr in ("idx", "name", "key"):
            if hasattr(key, attr):
                parts.append(str(getattr(key, attr)))
                break
    return ".".join(parts)


def flatten_state(state: Any) -> dict[str, np.ndarray]:
    """The optimizer state as named host arrays (the checkpoint's ``opt__<name>`` entries)."""
    import jax

    return {_state_name(path): np.array(leaf) for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]}


def restore_state(fresh: Any, saved: dict[str, np.ndarray]) -> Any:
    """``fresh`` (``tx.init(params)``) with every leaf replaced by the saved array of the same name."""
    import jax

    leaves, treedef = jax.tree_util.tree_flatten_with_path(fresh)
    names = [_state_name(path) for path, _ in leaves]
    if sorted(names) != sorted(saved):
        raise InputError(f"the checkpoint's optimizer state ({', '.join(sorted(saved)) or 'empty'}) is not the "
                         f"jax optimizer's ({', '.join(sorted(names))})")
    out = []
    for name, (_, leaf) in zip(names, leaves, strict=True):
        value = np.asarray(saved[name])
        if value.shape != leaf.shape:
            raise InputError(f"the checkpoint's optimizer entry {name} has shape {value.shape}, expected {leaf.shape}")
        out.append(jax.device_put(value.astype(leaf.dtype), leaf.device))
    return jax.tree_util.tree_unflatten(treedef, out)


#: how the embeddings' gradient is formed on each kind of device (:func:`logits`): a scatter-add on a CPU (the
#: faster there: 15 ms a step against 22 ms for the one-hot products at (17,3), m = 512, on the 2-core machine, and
#: deterministic), one-hot products on a GPU (deterministic, where the scatter-add's atomics are not)
ONE_HOT_EMBEDDING_GRADIENT = {"cpu": False, "gpu": True}


@functools.lru_cache(maxsize=8)
def _step_function(spec: TrainSpec, one_hot_gradient: bool = False) -> tuple[Any, Callable]:
    """The optimizer and ``(params, opt_state, a, y, w, n, *held_out) -> (params', opt_state', objective, weights
    finite, measures)``, jit-compiled; cached per specification (and way of forming the embeddings' gradient), so
    that later runs (a resumed one, a test's second) reuse the compiled code.

    ``measures`` is empty, or with ``spec.evaluate_in_step`` the evaluation of ``params`` (before the update) as
    :func:`_evaluate_function` returns it: the training points' part from the step's own forward pass, the test
    points' (``held_out``: their blocks ``a, y, w``, when there are any) from a forward pass without gradient.  The
    gradient is computed as without measures, over the training points only."""
    import jax
    import jax.numpy as jnp
    import optax

    net, tx, measuring = spec.network, optimizer(spec), spec.evaluate_in_step

    def block_loss(params, a, y, w):
        L = logits(params, a, net, one_hot_gradient)
        per_row, margin = loss_terms(L, y, net)
        return jnp.sum(w * per_row), _right_and_least_margin(L, y, w, margin) if measuring else ()

    value_and_grad = jax.value_and_grad(block_loss, has_aux=True)

    def held_out_measures(params, a, y, w):
        def body(seen, block):
            a_b, y_b, w_b = block
            L = logits(params, a_b, net)
            return _join_measures(seen, _right_and_least_margin(L, y_b, w_b, logit_margins(L, y_b))), None

        return jax.lax.scan(body, _no_measures(params["U"].dtype), (a, y, w))[0]

    def step(params, opt_state, a, y, w, n, *held_out):
        def body(carry, block):
            loss, grad, seen = carry
            (part, measures), g = value_and_grad(params, *block)
            return (loss + part, jax.tree.map(jnp.add, grad, g), _join_measures(seen, measures)), None

        dtype = params["U"].dtype
        if a.shape[0] == 1:  # one block: no loop (compiles faster)
            (loss, seen), grad = value_and_grad(params, a[0], y[0], w[0])
        else:
            none = _no_measures(dtype) if measuring else ()
            zero = (jnp.zeros((), dtype), jax.tree.map(jnp.zeros_like, params), none)
            (loss, grad, seen), _ = jax.lax.scan(body, zero, (a, y, w))
        measures: tuple = ()
        if measuring:
            right_test, least_test = held_out_measures(params, *held_out) if held_out else _no_measures(dtype)
            measures = (loss, seen[0], right_test, jnp.minimum(seen[1], least_test))
        penalty, grad_r = jax.value_and_grad(regularizer)(params, spec.regularizer, net.homogeneity)
        grad = jax.tree.map(lambda g, r: g / n + spec.lam * r, grad, grad_r)
        updates, new_state = tx.update(grad, opt_state, params)
        new = optax.apply_updates(params, updates)
        finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(new)]))
        return new, new_state, loss / n + spec.lam * penalty, finite, measures

    return tx, jax.jit(step)


def _relative_wrong_logits(L: Any, y: Any) -> Any:
    """``f[c] - f[y]`` per row for the wrong classes ``c``, ``-inf`` at the correct one."""
    import jax.numpy as jnp

    hit = y[:, None] == jnp.arange(L.shape[1])[None, :]
    correct = jnp.sum(jnp.where(hit, L, 0.0), axis=1)
    return jnp.where(hit, -jnp.inf, L - correct[:, None])


def logit_margins(L: Any, y: Any) -> Any:
    """``f[y] - max_{c != y} f[c]`` per row, computed as :func:`cross_entropy_terms` computes it."""
    import jax.numpy as jnp

    return -jnp.max(_relative_wrong_logits(L, y), axis=1)


def _right_and_least_margin(L: Any, y: Any, weight: Any, margin: Any) -> tuple[Any, Any]:
    """Of one block's logits ``L``: the weighted count of rows classified right, and the least margin over the rows
    of positive weight (padding rows have weight 0)."""
    import jax.numpy as jnp

    right = (jnp.argmax(L, axis=1) == y).astype(L.dtype)
    return jnp.sum(weight * right), jnp.min(jnp.where(weight > 0, margin, jnp.inf))


def _no_measures(dtype: Any) -> tuple[Any, Any]:
    import jax.numpy as jnp

    return jnp.zeros((), dtype), jnp.array(jnp.inf, dtype)


def _join_measures(seen: tuple, block: tuple) -> tuple:
    """Measures of the blocks so far joined with the next block's (a sum and a minimum)."""
    import jax.numpy as jnp

    if not block:
        return ()
    return seen[0] + block[0], jnp.minimum(seen[1], block[1])


@functools.lru_cache(maxsize=8)
def _evaluate_function(network: NetworkSpec) -> Callable:
    """``(float64 params, a, y, w) -> (train loss sum, train correct, test correct, min margin)``; ``w`` holds the
    train and test indicator of every row (0 for padding)."""
    import jax
    import jax.numpy as jnp

    def evaluate(p64, a, y, w):
        def body(carry, block):
            a_b, y_b, w_b = block
            L = logits(p64, a_b, network)
            per_row, margin = loss_terms(L, y_b, network)
            loss, train, test = carry
            return (loss + jnp.sum(w_b[:, 0] * per_row),
                    _join_measures(train, _right_and_least_margin(L, y_b, w_b[:, 0], margin)),
                    _join_measures(test, _right_and_least_margin(L, y_b, w_b[:, 1], margin))), None

        start = (jnp.zeros((), jnp.float64), _no_measures(jnp.float64), _no_measures(jnp.float64))
        if a.shape[0] == 1:  # one block: no loop (compiles faster)
            loss, train, test = body(start, (a[0], y[0], w[0]))[0]
        else:
            loss, train, test = jax.lax.scan(body, start, (a, y, w))[0]
        return loss, train[0], test[0], jnp.minimum(train[1], test[1])

    return jax.jit(evaluate)


class JaxStepper:
    """The trainer's steps on one JAX device (the interface of :mod:`margintheory.training.steppers`)."""

    @float64
    def __init__(self, spec: TrainSpec, backend: Backend, inputs: np.ndarray, labels: np.ndarray,
                 train_mask: np.ndarray, U: np.ndarray, W: np.ndarray, moments: dict[str, np.ndarray], t: int) -> None:
        jax = import_jax()

        self.spec, self.backend, self.t = spec, backend, t
        self.device = devices(backend)[0]
        self.dtype = np.float32 if spec.dtype == "float32" else np.float64
        self.params = jax.device_put({"U": np.asarray(U, self.dtype), "W": np.asarray(W, self.dtype)}, self.device)
        self.tx, self._step = _step_function(spec, ONE_HOT_EMBEDDING_GRADIENT[backend.device])
        fresh = jax.device_put(self.tx.init(self.params), self.device)  # committed, as the step's outputs are
        self.opt_state = restore_state(fresh, moments) if moments else fresh
        self.train_inputs, self.train_labels = inputs[train_mask], labels[train_mask]
        self.n_train, self.n_test = int(train_mask.sum()), int((~train_mask).sum())
        rows, n_blocks = _blocks(len(labels), spec.width, spec.network.classes, backend, 8)
        which = np.stack([train_mask, ~train_mask], axis=1).astype(np.float64)
        self.all_points = jax.device_put(_padded(inputs, labels, which, rows, n_blocks), self.device)
        self._evaluate = _evaluate_function(spec.network)
        self.full_batch = self._put_batch(self.train_inputs, self.train_labels)
        self.held_out: tuple[Any, ...] = ()  # the test points' blocks, for steps that measure the history row
        if spec.evaluate_in_step and self.n_test:
            test = ~train_mask
            rows, n_blocks = _blocks(self.n_test, spec.width, spec.network.classes, backend, 8)
            self.held_out = tuple(jax.device_put(_padded(inputs[test], labels[test], np.ones(self.n_test), rows,
                                                         n_blocks), self.device))
        #: with ``spec.evaluate_in_step``: the step computed ahead by :meth:`evaluate` (its measures are the row)
        #: and the parameters it started from; :meth:`step` takes it instead of computing the same again
        self._ahead: tuple[Any, tuple] | None = None

    def _put_batch(self, inputs: np.ndarray, labels: np.ndarray) -> tuple[Any, ...]:
        jax = import_jax()
        rows, n_blocks = _blocks(len(labels), self.spec.width, self.spec.network.classes, self.backend,
                                 self.dtype().itemsize)
        a, y, w = _padded(inputs, labels, np.ones(len(labels), self.dtype), rows, n_blocks)
        return (*jax.device_put((a, y, w), self.device), self.dtype(len(labels)))

    @float64
    def step(self, rows: np.ndarray | None, lr: float) -> tuple[float, bool]:
        """One update on the training points ``rows`` (all when ``None``); ``lr`` is the numpy schedule's value,
        which the optax schedule reproduces (tested).  A non-finite objective leaves the parameters unchanged.

        A full-batch step that :meth:`evaluate` already computed from the same parameters is taken from it: the same
        compiled function on the same arrays, so the result is the one computing it here would give."""
        ahead, self._ahead = self._ahead, None
        if rows is None and ahead is not None and ahead[0] is self.params:
            out = ahead[1]
        else:
            batch = self.full_batch if rows is None else self._put_batch(self.train_inputs[rows],
                                                                          self.train_labels[rows])
            out = self._step(self.params, self.opt_state, *batch, *self.held_out)
        params, state, objective, finite, _ = out
        value = float(objective)
        if math.isfinite(value):
            self.params, self.opt_state, self.t = params, state, self.t + 1
        return value, bool(finite)

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Host copies of ``U`` and ``W`` in the training dtype."""
        return np.array(self.params["U"]), np.array(self.params["W"])

    @float64
    def evaluate(self) -> Evaluation:
        """The float64 measures of the current parameters on all points.  With ``spec.evaluate_in_step`` they come
        from the next full-batch step, computed here and kept for :meth:`step` (a forward pass fewer per history
        row; the last row of a run computes one step that is not taken)."""
        if self.spec.evaluate_in_step:
            out = self._step(self.params, self.opt_state, *self.full_batch, *self.held_out)
            self._ahead = (self.params, out)
            measures = out[4]
        else:
            p64 = {name: value.astype(np.float64) for name, value in self.params.items()}  # one compiled evaluation
            measures = self._evaluate(p64, *self.all_points)
        loss, right_train, right_test, h = (float(v) for v in measures)
        return Evaluation(loss / self.n_train, right_train / self.n_train,
                          right_test / self.n_test if self.n_test else float("nan"), h)

    def optimizer_state(self) -> tuple[dict[str, np.ndarray], int]:
        return flatten_state(self.opt_state), self.t

