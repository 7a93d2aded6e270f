"""The recipe registry: every training experiment of the papers, with its citation, settings and claims.

A :class:`Recipe` is data only.  Its :class:`RunSpec` s are the paper's training runs (task, sizes, activation,
optimizer, schedule, regularizer, steps, batch, split, seeds), transcribed from the paper's text; where the paper
does not state a setting, :attr:`Recipe.unstated` says so and which value the recipe uses instead.  Its
:class:`Claim` s are the paper's statements about the experiment, each measured by
:mod:`margintheory.reproduce.claims` as one check row.  Names: ``<paper>-<fig|table><label>`` with the paper one of
``fourier-circuits`` (Li, Liang, Shi, Song, Zhou, arXiv:2402.09469), ``morwani`` (Morwani, Edelman, Oncescu, Zhao,
Kakade, arXiv:2311.07568) or ``cogo`` (Tian, arXiv:2410.01779); ``lambda-sweep`` illustrates Wei et al.'s limit
(Lemma 4.7 of Li et al. = Thm 7.1 of Morwani et al.), which no paper plots.

:meth:`RunSpec.scaled` shrinks a run for a smoke test (``scale`` in (0, 1]); a scaled recipe is not the paper's
experiment and its result says so (:mod:`margintheory.reproduce.runner`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from margintheory.core.checks import NAME_MAX
from margintheory.errors import InputError

PAPERS = {
    "fourier-circuits": 'Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks and transformers: a case '
                        'study of modular arithmetic with multiple inputs", arXiv:2402.09469',
    "morwani": 'Morwani, Edelman, Oncescu, Zhao, Kakade, "Feature emergence via margin maximization: case studies in '
               'algebraic tasks", arXiv:2311.07568',
    "cogo": 'Tian, "Composing global optimizers to reasoning tasks via algebraic objects in neural nets", '
            "arXiv:2410.01779",
    "chughtai": 'Chughtai, Chan, Nanda, "A toy model of universality: reverse engineering how networks learn group '
                'operations", arXiv:2302.03025',
    "wei": 'Wei, Lee, Liu, Ma, "Regularization matters: generalization and optimization of neural nets v.s. their '
           'induced kernel", arXiv:1810.05369',
}
TASKS = ("modular-addition", "parity", "group", "cogo")
ACTIVATIONS = ("power", "relu")
#: what a claim measures (the functions of :mod:`margintheory.reproduce.claims`, by this name)
CLAIM_KINDS = (
    "margin-to-gamma", "single-frequency", "max-power-all", "all-frequencies", "frequency-uniform",
    "max-power-init", "relu-max-power", "lambda-limit", "lambda-monotone", "parity-margin", "parity-support",
    "group-margin", "single-irrep", "all-irreps", "irrep-dimension-counts", "irrep-power-init", "cogo-orders",
    "cogo-order-count", "cogo-factorable", "cogo-constructions", "cogo-potentials",
    "universality-irreps", "universality-margin",
)


@dataclass(frozen=True)
class RunSpec:
    """One training run of a paper (one network per seed).

    ``sizes``: the task's sizes (``p, k, width``; ``n, k, width``; ``group, width``; ``d, width``).  ``activation``
    ``power`` is ``x^k`` (the papers' polynomial network), ``relu`` the ReLU comparison.  ``regularizer`` and
    ``lam`` as in :mod:`margintheory.training.objective` (``norm-power`` = Morwani et al.'s ``L_{2,k+1}``
    regularization ``lam ||theta||_{2,k+1}^(k+1)``); ``weight_decay`` is AdamW's decoupled decay.  ``loss``:
    ``cross-entropy`` or CoGO's projected ``mse``; ``objective``: a variant of the loss (CoGO Fig. 2 bottom drops
    the ``R_*`` term).  ``log_every``: history rows (``None``: about 400 rows per run).  ``parametrization``
    (CoGO): ``eq1`` trains Eq. 1 of the paper as written (``lr``, ``lam`` and the trainer's initialization as given);
    ``code`` trains the run of Tian's code, whose loss drops Eq. 1's ``1/(2d)``, expressed at Eq. 1's scale (see
    :meth:`trainer_settings`).
    """

    label: str
    task: str
    sizes: dict[str, Any]
    optimizer: str
    lr: float
    steps: int
    lam: float = 0.0
    regularizer: str = "none"
    activation: str = "power"
    schedule: str = "constant"
    milestones: tuple[int, ...] = ()
    warmup: int = 0
    betas: tuple[float, float] = (0.9, 0.98)
    weight_decay: float = 0.0
    batch_size: int | None = None
    train_fraction: float = 1.0
    seeds: tuple[int, ...] = (0,)
    loss: str = "cross-entropy"
    objective: str = "full"
    log_every: int | None = None
    hardware: str = "cpu"
    parametrization: str = "eq1"

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise InputError(f"run {self.label}: task must be one of {TASKS}, got {self.task!r}")
        if self.activation not in ACTIVATIONS:
            raise InputError(f"run {self.label}: activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.hardware not in ("cpu", "gpu"):
            raise InputError(f"run {self.label}: hardware must be cpu or gpu, got {self.hardware!r}")
        if not self.seeds or self.steps < 1:
            raise InputError(f"run {self.label}: needs at least one seed and one step")
        if self.parametrization not in ("eq1", "code") or (self.parametrization == "code" and self.task != "cogo"):
            raise InputError(f"run {self.label}: parametrization must be eq1, or code for a CoGO run, "
                             f"got {self.parametrization!r}")

    def trainer_settings(self) -> tuple[float, float, float | None]:
        """``(lr, lam, init_scale)`` for the trainer (``init_scale`` ``None``: the task's default).

        ``code`` (CoGO): Tian's code trains ``theta`` on ``||P1perp(o(theta) - e)||^2``, Eq. 1 without its ``1/(2d)``
        (Tian, "Composing global optimizers ... (CoGO)", arXiv:2410.01779, Sec. 7), with Adam at learning rate
        ``lr``, the decay ``lam ||theta||^2 / 2`` in the gradient, and weights of standard deviation ``1/sqrt(d)``.
        The network is homogeneous of degree 3, so ``o(theta) = 2d o(theta / c)`` with ``c = (2d)^(1/3)``: that run
        is, exactly, Eq. 1's at ``phi = c theta``, started at standard deviation ``c / sqrt(d)``, with Adam's step
        ``c lr`` (Adam's update is invariant to the gradient's scale, so a step in ``theta`` is ``c`` times that
        step in ``phi``) and decay ``lam / c^2`` (``lam ||theta||^2 = (lam / c^2) ||phi||^2``), up to Adam's
        ``eps``.  The package's constructions and factorization are stated at Eq. 1's scale, where the run is
        trained and analysed."""
        if self.parametrization == "eq1":
            return self.lr, self.lam, None
        d = int(self.sizes["d"])
        c = (2.0 * d) ** (1.0 / 3.0)
        return self.lr * c, self.lam / c**2, c / math.sqrt(d)

    @property
    def history_every(self) -> int:
        """Steps between history rows (about 400 rows per run unless set)."""
        return self.log_every or max(1, self.steps // 400)

    def settings(self) -> dict[str, Any]:
        """The run's settings as JSON values (the result's ``parameters`` and ``reproduce --list --json``)."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["milestones"], out["betas"], out["seeds"] = list(self.milestones), list(self.betas), list(self.seeds)
        return out

    def scaled(self, scale: float) -> RunSpec:
        """This run shrunk by ``scale`` in (0, 1]: the steps by ``scale`` (at least 20), the width by
        ``sqrt(scale)`` (at least 4), the task's size so that its number of points shrinks by about ``scale``; the
        learning-rate milestones that fall within the shrunk run are kept as they are (compressed, the doubling
        schedule diverges before the network has learnt anything); ``scale = 1`` is the run itself."""
        if not (0 < scale <= 1):
            raise InputError(f"scale must be in (0, 1], got {scale}")
        if scale == 1:
            return self
        steps = max(20, round(self.steps * scale))
        milestones = tuple(s for s in self.milestones if s < steps)
        sizes = _scaled_sizes(self.task, self.sizes, scale)
        batch = self.batch_size
        if batch is not None and batch >= _points(self.task, sizes) * self.train_fraction:
            batch = None
        schedule = "constant" if self.schedule == "doubling" and not milestones else self.schedule
        optimizer = "gd" if self.optimizer == "sgd" and batch is None else self.optimizer  # sgd needs a batch
        return replace(self, sizes=sizes, steps=steps, milestones=milestones, schedule=schedule, optimizer=optimizer,
                       warmup=min(self.warmup, steps // 4),
                       batch_size=batch, log_every=max(1, steps // 50), hardware="cpu")


def _prime_at_most(x: float, least: int) -> int:
    """The largest odd prime ``<= max(x, least)`` (at least ``least``, itself an odd prime)."""
    n = max(least, int(math.floor(x)))
    while n > least and not (n % 2 and all(n % d for d in range(3, math.isqrt(n) + 1, 2))):
        n -= 1
    return n


def _scaled_sizes(task: str, sizes: dict[str, Any], scale: float) -> dict[str, Any]:
    out = dict(sizes)
    out["width"] = max(4, round(sizes["width"] * math.sqrt(scale)))
    if task == "modular-addition":
        out["p"] = min(sizes["p"], _prime_at_most(sizes["p"] * scale ** (1 / sizes["k"]), 5))
    elif task == "cogo":
        out["d"] = min(sizes["d"], _prime_at_most(sizes["d"] * scale ** 0.5, 5))
    elif task == "parity":
        out["n"] = max(sizes["k"] + 1, min(sizes["n"], sizes["n"] + math.floor(math.log2(scale))))
    elif task == "group":
        out["group"] = "S3" if sizes["group"] in ("S3", "S4", "S5") else sizes["group"]
    return out


def _points(task: str, sizes: dict[str, Any]) -> int:
    """Number of inputs of the task's full dataset."""
    if task == "modular-addition":
        return int(sizes["p"] ** sizes["k"])
    if task == "cogo":
        return int(sizes["d"] ** 2)
    if task == "parity":
        return int(2 ** sizes["n"])
    from margintheory.core.problems import GroupComposition

    return int(GroupComposition(str(sizes["group"])).G.order ** 2)


@dataclass(frozen=True)
class Claim:
    """One statement of the paper about the experiment, measured by :mod:`margintheory.reproduce.claims`.

    ``kind`` names the measurement (:data:`CLAIM_KINDS`); ``runs`` the run labels it is about (all runs when
    empty); ``tolerance`` how far the measured value may fall short, and ``threshold`` a level the measurement
    uses (a max power), both stated in ``reading`` (how the words are read as a number);
    ``informational`` claims are reported and never decide the verdict (a qualitative statement, or a property of
    the initialization); ``paper_value`` the number the paper reports, where it reports one.
    """

    kind: str
    name: str
    statement: str
    reading: str
    tolerance: float | None = None
    runs: tuple[str, ...] = ()
    informational: bool = False
    paper_value: Any = None
    threshold: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in CLAIM_KINDS:
            raise InputError(f"claim {self.name}: kind must be one of {CLAIM_KINDS}, got {self.kind!r}")
        if not 0 < len(self.name) <= NAME_MAX:
            raise InputError(f"claim name {self.name!r} must have 1 to {NAME_MAX} characters (a table column)")


@dataclass(frozen=True)
class Recipe:
    """One experiment: ``name``, the ``paper`` (a key of :data:`PAPERS`), ``where`` in it (figures, tables and
    the section with the settings), what the experiment shows (``summary``), its ``runs`` and ``claims``, the
    settings the paper leaves ``unstated`` and what the recipe uses instead, and the ``figure`` it draws.  Each
    run says where its paper size runs (:attr:`RunSpec.hardware`: ``cpu``, reproduced on this project's 2-core
    machine; ``gpu``, out of its reach)."""

    name: str
    paper: str
    where: str
    summary: str
    runs: tuple[RunSpec, ...]
    claims: tuple[Claim, ...]
    figure: str
    unstated: tuple[str, ...] = ()
    cites: tuple[str, ...] = field(default_factory=tuple)

    @property
    def citation(self) -> str:
        """``Authors, "Title", arXiv:...; Fig. ...`` (and the other papers it cites)."""
        extra = "".join(f"; {PAPERS[c]}" for c in self.cites)
        return f"{PAPERS[self.paper]}, {self.where}{extra}"

    def run(self, label: str) -> RunSpec:
        for spec in self.runs:
            if spec.label == label:
                return spec
        raise InputError(f"recipe {self.name} has no run {label!r} (runs: {', '.join(self.labels)})")

    @property
    def hardware(self) -> str:
        """``cpu``, ``gpu``, or ``cpu+gpu`` when some runs fit a CPU and others need a GPU."""
        kinds = sorted({spec.hardware for spec in self.runs})
        return "+".join(kinds)

    @property
    def labels(self) -> list[str]:
        return [spec.label for spec in self.runs]

    def describe(self) -> dict[str, Any]:
        """The recipe as JSON values (``reproduce --list --json``)."""
        return {"name": self.name, "paper": self.paper, "citation": self.citation, "where": self.where,
                "summary": self.summary, "hardware": self.hardware, "figure": self.figure,
                "unstated": list(self.unstated), "runs": [spec.settings() for spec in self.runs],
                "claims": [{"name": c.name, "statement": c.statement, "reading": c.reading, "runs": list(c.runs),
                            "informational": c.informational, "paper_value": c.paper_value} for c in self.claims]}
