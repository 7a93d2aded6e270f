"""The arithmetic of training behind one interface (:class:`margintheory.backends.training_step.Stepper`).

* ``numpy``: the analytic gradient of :mod:`.objective` and the optimizers of :mod:`.optim`, float64, updating the
  run's arrays in place;
* ``jax``: :mod:`margintheory.backends.jax_training` (autodiff, optax, float32 or float64, CPU or GPU), imported
  only when chosen.

The training loop (:mod:`.trainer`) sees only the interface: data, seeds, schedule values, checkpoints and the
history are the same for both.
"""

from __future__ import annotations

import numpy as np

from margintheory.backends.select import Backend
from margintheory.backends.training_step import Evaluation, Stepper, TrainSpec
from margintheory.training.checkpoint import TrainState
from margintheory.training.metrics import margin_from_logits
from margintheory.training.objective import (
    BLOCK_ROWS,
    Batch,
    Workspace,
    data_loss,
    forward_logits,
    objective_and_grad,
)
from margintheory.training.optim import OptimizerState


class NumpyStepper:
    """The numpy reference: ``objective_and_grad`` + :class:`~margintheory.training.optim.OptimizerState`."""

    def __init__(self, spec: TrainSpec, inputs: np.ndarray, labels: np.ndarray, train_mask: np.ndarray,
                 state: TrainState) -> None:
        self.spec, self.mask, self.state = spec, train_mask, state
        self.all_data = all_data = Batch.from_inputs(inputs, spec.network.symbols, labels=labels)
        self.train = all_data.subset(np.flatnonzero(train_mask))
        self.opt = OptimizerState(spec.optimizer, spec.betas, weight_decay=spec.weight_decay, moments=state.moments,
                                  t=state.opt_t)
        self.workspace = Workspace(spec.width, min(BLOCK_ROWS, all_data.n))

    def step(self, rows: np.ndarray | None, lr: float) -> tuple[float, bool]:
        s = self.state
        batch = self.train if rows is None else self.train.subset(rows)
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is detected and reported by the caller
            val = objective_and_grad(s.U, s.W, batch, self.spec.lam, self.spec.regularizer, self.workspace,
                                     self.spec.network)
        if not np.isfinite(val.total):
            return val.total, True
        with np.errstate(over="ignore", invalid="ignore"):
            self.opt.step({"U": s.U, "W": s.W}, {"U": val.grad_U, "W": val.grad_W}, lr)
        return val.total, bool(np.all(np.isfinite(s.U)) and np.all(np.isfinite(s.W)))

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        return self.state.U, self.state.W

    def evaluate(self) -> Evaluation:
        s, labels = self.state, self.all_data.labels
        logits_all = forward_logits(s.U, s.W, self.all_data.inputs, workspace=self.workspace,
                                    network=self.spec.network)
        loss = data_loss(logits_all[self.mask], labels[self.mask], self.spec.network)
        correct = logits_all.argmax(axis=1) == labels
        test = ~self.mask
        return Evaluation(loss, float(correct[self.mask].mean()),
                          float(correct[test].mean()) if test.any() else float("nan"),
                          float(margin_from_logits(logits_all, labels).min()))

    def optimizer_state(self) -> tuple[dict[str, np.ndarray], int]:
        return self.opt.moments, self.opt.t


def make_stepper(spec: TrainSpec, backend: Backend, inputs: np.ndarray, labels: np.ndarray,
                 train_mask: np.ndarray, state: TrainState) -> Stepper:
    """The stepper of ``backend`` continuing ``state`` (parameters, optimizer moments and count) on the task's points
    ``inputs`` with class ``labels``, of which ``train_mask`` marks the training part."""
    if backend.name == "numpy":
        return NumpyStepper(spec, inputs, labels, train_mask, state)
    from margintheory.backends.jax_training import JaxStepper

    return JaxStepper(spec, backend, inputs, labels, train_mask, state.U, state.W, state.moments, state.opt_t)
