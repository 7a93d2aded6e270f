"""The interface of a training step, shared by the numpy trainer and :mod:`margintheory.backends.jax_training`.

A *stepper* owns the parameters and the optimizer state of a run between records: it makes one update
(:meth:`Stepper.step`), hands out host copies of the weights and of the optimizer state (records, checkpoints),
and measures the current parameters on all points in float64 (:meth:`Stepper.evaluate`).

:class:`NetworkSpec` says which network a step differentiates and which loss it minimizes; a task's training
adapter (``margintheory.tasks.<task>.training``) chooses it, and both backends implement every combination:

* ``family="sum"``: ``f(a)[c] = sum_i act(U[i,0,a_1] + ... + U[i,k-1,a_k]) W[i,c]`` on integer inputs
  ``a in [p]^k`` (modular addition, Li et al. Eq. 4.2; a group's ``(a, b)``, Morwani et al. Sec. 7.6; CoGO's
  ``Z_d``, Tian Eq. 1-2);
* ``family="linear"``: ``f(x)[c] = sum_i act(u_i . x) W[i,c]`` on real inputs ``x`` (sparse parity on
  ``{+-1}^n``, Morwani et al. Sec. 7.5);
* ``activation``: ``"power"`` (``z^degree``, the papers' polynomial networks) or ``"relu"`` (``max(z, 0)``, the
  ReLU comparisons of Morwani et al. Fig. 7.1 / 7.4);
* ``loss``: ``"cross-entropy"`` (the margin papers) or ``"projected-mse"``
  (``||P1perp(output_scale * f - e_y)||^2``, Tian's Eq. 1 with ``output_scale = 1/(2d)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

ACTIVATIONS = ("power", "relu")
LOSSES = ("cross-entropy", "projected-mse")
FAMILIES = ("sum", "linear")


@dataclass(frozen=True)
class NetworkSpec:
    """The network and loss of a run (module docstring); hashable, so a compiled JAX step is cached per spec."""

    family: str
    inputs: int  # k (family "sum": embeddings summed) or n (family "linear": input dimension)
    symbols: int  # p, the rows of each embedding table (family "sum"); 0 for "linear"
    classes: int
    activation: str = "power"
    degree: int = 2  # of the power activation (1 for relu)
    loss: str = "cross-entropy"
    output_scale: float = 1.0  # of the projected MSE

    @property
    def homogeneity(self) -> int:
        """The degree ``L`` with ``f(c theta) = c^L f(theta)``: ``degree + 1`` for ``z^degree``, 2 for relu; the
        norm ``||theta||_{2,L}`` of the regularizer and of the normalized margin."""
        return self.degree + 1 if self.activation == "power" else 2

    def u_shape(self, width: int) -> tuple[int, ...]:
        return (width, self.inputs, self.symbols) if self.family == "sum" else (width, self.inputs)

    def w_shape(self, width: int) -> tuple[int, int]:
        return (width, self.classes)

    def describe(self) -> str:
        act = f"x^{self.degree}" if self.activation == "power" else "ReLU"
        return f"{act} network, {self.loss}"


@dataclass(frozen=True)
class TrainSpec:
    """What the step computes (the trainer's configuration in plain values)."""

    network: NetworkSpec
    width: int
    lam: float
    regularizer: str
    optimizer: str
    betas: tuple[float, float]
    weight_decay: float
    lr: float
    total_steps: int
    schedule: str
    warmup: int
    final_fraction: float
    milestones: tuple[int, ...]
    dtype: str = "float64"
    #: the step also measures the parameters it starts from on all ``p^k`` points (the history row's loss,
    #: accuracies and margin), the training points from its own forward pass: float64 full-batch training (the JAX
    #: backend; the numpy reference evaluates separately)
    evaluate_in_step: bool = False


@dataclass(frozen=True)
class Evaluation:
    """Float64 measurements of the current parameters on all points of the task."""

    data_loss: float  # mean loss (cross-entropy or projected MSE) over the training points
    train_acc: float
    test_acc: float  # nan without test points
    h: float  # min over all points of f[y] - max_{c != y} f[c] (unnormalized)


class Stepper(Protocol):
    """What the training loop needs from a backend."""

    def step(self, rows: np.ndarray | None, lr: float) -> tuple[float, bool]:
        """One update on the training points ``rows`` (indices into the training set; all when ``None``) with
        learning rate ``lr``; returns the objective before the update and whether the new weights are finite.
        A non-finite objective leaves the parameters unchanged."""
        ...

    def weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Host copies (or the live arrays) of ``U`` and ``W``."""
        ...

    def evaluate(self) -> Evaluation:
        """Float64 loss, accuracies and unnormalized margin of the current parameters on all points."""
        ...

    def optimizer_state(self) -> tuple[dict[str, np.ndarray], int]:
        """The optimizer's state as named arrays, and its update count."""
        ...


class TrainingTask(Protocol):
    """What the generic trainer (:mod:`margintheory.training.trainer`) needs to know about a task: its points,
    network and loss, initialization scale, max margin, per-step statistics and network file.  Each task's adapter
    (``margintheory.tasks.<task>.training``) implements it; the trainer reaches them through
    :func:`margintheory.training.tasks.training_task`."""

    @property
    def task(self) -> str:
        """The task's registry name (``margintheory.verification.TASK_NAMES``)."""
        ...

    @property
    def history_fields(self) -> tuple[str, ...]:
        """The columns a history row adds for this task (after the common ones)."""
        ...

    def parameters(self) -> dict[str, Any]:
        """The problem's parameters (saved with the run; a resumed run must have the same)."""
        ...

    def network_spec(self, activation: str) -> NetworkSpec:
        """The network trained with ``activation`` (``"power"``: the task's polynomial network; ``"relu"``)."""
        ...

    @property
    def n_points(self) -> int:
        """How many points the task has (known before :meth:`points` allocates them)."""
        ...

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        """Every input of the task (family ``sum``: ``(N, k)`` int; ``linear``: ``(N, n)`` float) and its class
        label ``(N,)`` int; seeded train / test splits are taken from these rows."""
        ...

    def default_init_scale(self) -> float:
        """Standard deviation of the Gaussian initialization when the configuration gives none."""
        ...

    def gamma_star(self, width: int) -> float | None:
        """The max normalized margin of the polynomial network of this width (``None`` where none applies)."""
        ...

    def measure(self, U: np.ndarray, W: np.ndarray) -> dict[str, float]:
        """The task's structure statistics of float64 weights (the :attr:`history_fields`)."""
        ...

    def network(self, U: np.ndarray, W: np.ndarray) -> Any:
        """The weights as the task's network object (``save(path)`` writes the task's network-file layout)."""
        ...

    def label(self) -> str:
        """The problem in a few words (``p=31, k=2``; ``S4``), for titles and messages."""
        ...
