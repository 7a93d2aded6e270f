"""What one cell of a sweep runs, on whichever worker it lands: one call of the library function, as a row.

* :func:`verify_cell`: ``margintheory.verify(ModularAddition(p, k), family=..., exact=..., certificate=..., rtol=...)``
  (the construction of Lemma C.18 or a smaller family; Theorem C.22 of Li et al., "Fourier circuits",
  arXiv:2402.09469; docs/theory.md#theorem-c22).
* :func:`train_cell`: :func:`margintheory.training.trainer.train` with a
  :class:`~margintheory.training.trainer.TrainConfig`, then :func:`margintheory.training.analysis.analyze_network` on
  the trained network, with the given ``rtol`` or else the ``analyze`` command's default
  (:data:`~margintheory.training.analysis.TRAINED_NETWORK_RTOL`): a cell and the command it runs give the same
  verdict on the same network.
* ``solve`` cells run the ``solve`` command's computation; the command line supplies that function.

:func:`run_cell` runs a cell function with the cell's parameters and budget and turns the result into a row of the
store (:data:`margintheory.sweep.store.SCHEMA`).  An expected failure (bad parameters, a refused size, a solver
failure: :class:`~margintheory.errors.MarginTheoryError`) is a row too, with its one-line error: it would fail the
same way again, so it is not retried.  Any other exception propagates, and the scheduler retries the cell.
The functions are module-level and take plain dictionaries, so a cluster sends them by name.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from margintheory._version import __version__
from margintheory.core.checks import EXACTNESS_LEVELS, Check, VerificationResult
from margintheory.core.phase_measures import FAMILIES as FAMILY_NAMES
from margintheory.core.problems import ModularAddition
from margintheory.errors import MarginTheoryError
from margintheory.runtime import progress
from margintheory.sweep.grid import Cell
from margintheory.sweep.store import COLUMNS, ERROR

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.core.network import PolyNetwork  # modular addition's trained network

CellFunction = Callable[[dict[str, Any]], VerificationResult]
#: the cell's parameters that have a column of their own (all of them are also in the ``parameters`` column)
PARAMETER_COLUMNS = {"p": "p", "k": "k", "family": "family", "method": "method", "seed": "seed", "width": "width",
                     "lr": "lr", "lambda": "lam", "steps": "steps"}


def verify_cell(params: dict[str, Any]) -> VerificationResult:
    """``margintheory.verify`` of the modular-addition problem ``(p, k)`` (module docstring); a family that does not
    exist at this ``k`` (the parity design below ``k = 3``) is a ``not-applicable`` result (:func:`absent_family`)."""
    from margintheory.core.phase_measures import family_absent_reason
    from margintheory.verification import verify

    family = params.get("family", "lemma-c18")
    problem = ModularAddition(params["p"], params["k"])
    reason = family_absent_reason(family, problem.k) if family in FAMILY_NAMES else None
    if reason is not None:
        return absent_family(problem, family, reason)
    options: dict[str, Any] = {"family": family, "exact": bool(params.get("exact")),
                               "certificate": bool(params.get("certificate", True)), "rtol": params.get("rtol")}
    for name in ("max_memory", "max_seconds"):
        if name in params:
            options[name] = params[name]
    return verify(problem, **options)


def absent_family(problem: ModularAddition, family: str, reason: str) -> VerificationResult:
    """The ``not-applicable`` result of a grid cell whose family does not exist at its ``k``: nothing to check, so
    no check decides (exit code 0); one informational row says why, and ``gamma*`` is still given."""
    result = VerificationResult(title=f"the {family} family at p={problem.p}, k={problem.k}", applicable=False,
                                task="modular-addition", parameters={"p": problem.p, "k": problem.k, "family": family})
    result.add(Check(name="family exists at this k", expected="a network of the family", measured="none",
                     tolerance=None, passed=False, exactness="proved", informational=True,
                     statement=f"{reason}: there is no network of this family to check", detail=reason))
    result.fields.update(gamma_star=problem.gamma_star, gamma_star_note=problem.gamma_star_note)
    result.notes.append(f"{reason}: not applicable (a grid over families and k holds such pairs)")
    return result


def train_cell(params: dict[str, Any]) -> VerificationResult:
    """Train, then analyse the trained network (module docstring)."""
    from margintheory.runtime.budget import DEFAULT_MAX_MEMORY, require
    from margintheory.training.analysis import TRAINED_NETWORK_RTOL, analyze_network, estimate_analysis
    from margintheory.training.trainer import TrainConfig, estimate_training, train

    p, k = int(params["p"]), int(params["k"])
    cfg = TrainConfig(p=p, k=k, width=params["width"], steps=params.get("steps", 3000),
                      lam=params.get("lambda", 1e-3), lr=params.get("lr", 5e-3), seed=params.get("seed", 0),
                      log_every=max(1, params.get("steps", 3000)), checkpoint_every=10**9)
    memory, seconds = params.get("max_memory", DEFAULT_MAX_MEMORY), params.get("max_seconds")
    need = estimate_training(p, k, cfg.width, cfg.steps, figures=False).plus(
        estimate_analysis(p, k, cfg.width, compare_construction=False, max_memory=memory))
    require(need, memory, seconds)
    trained = train(cfg)
    rtol = params.get("rtol")
    result = analyze_network(cast("PolyNetwork", trained.network), p, k, max_memory=memory, max_seconds=seconds,
                             rtol=TRAINED_NETWORK_RTOL if rtol is None else rtol, compare_construction=False,
                             title=f"trained network (p={cfg.p}, k={cfg.k}, m={cfg.width}, seed={cfg.seed})")
    last = trained.history[-1]
    result.parameters.update(width=cfg.width, seed=cfg.seed, lr=cfg.lr, **{"lambda": cfg.lam}, steps=cfg.steps)
    result.fields.update(train_seconds=trained.seconds, final_loss=last["loss"], train_accuracy=last["train_acc"],
                         mean_max_power=last["mean_max_power"], trained_frequencies_covered=last["frequencies_covered"])
    return result


#: the cell functions of the library, by command (``solve`` cells get theirs from the command line)
CELL_FUNCTIONS: dict[str, CellFunction] = {"verify": verify_cell, "train": train_cell}


def run_cell(function: CellFunction, cell: Cell) -> dict[str, Any]:
    """Run ``function`` on the cell's parameters and budget; the store's row (module docstring)."""
    start = time.perf_counter()
    try:
        with progress.reporting(None):  # a worker draws no progress bars
            result = function({**cell.params, **cell.budget})
    except MarginTheoryError as exc:
        return error_row(cell, " ".join(str(exc).split()), time.perf_counter() - start)
    return result_row(cell, result, time.perf_counter() - start)


def warm_up(function: CellFunction, params: dict[str, Any]) -> None:
    """Run ``function`` once on the smallest problem (``p = 3, k = 1``) with the sweep's other parameters and drop
    the result: the imports and compiled kernels a worker needs are then loaded before the first cell, whose
    ``seconds`` measure its own work.  Any failure is ignored (the cells report their own)."""
    try:
        with progress.reporting(None):
            function({**params, "p": 3, "k": 1, "width": min(int(params.get("width", 1) or 1), 4), "steps": 1})
    except Exception:  # noqa: S110 - a warm-up that fails costs nothing: the real cells report their errors
        pass


def weakest_exactness(result: VerificationResult) -> str | None:
    """How sure the verdict is: the weakest exactness among the checks that decide it (``None`` if none does)."""
    levels = [EXACTNESS_LEVELS.index(c.exactness) for c in result.checks if not c.informational]
    return EXACTNESS_LEVELS[max(levels)] if levels else None


def result_row(cell: Cell, result: VerificationResult, seconds: float) -> dict[str, Any]:
    """The row of a cell that ran: the result schema's common fields, flattened, and the whole result as JSON."""
    doc = result.to_dict()
    row = _base_row(cell, seconds)
    row.update(task=doc["task"] or row["task"], verdict=doc["verdict"], exit_code=doc["exit_code"],
               gamma_star=_number(doc["gamma_star"]), normalized_margin=_number(doc["normalized_margin"]),
               ratio_to_gamma_star=_number(doc["ratio_to_gamma_star"]), relative_error=_number(doc["relative_error"]),
               exactness=weakest_exactness(result), result=json.dumps(doc, allow_nan=False))
    if doc["width"] is not None:
        row["width"] = doc["width"]
    return row


def error_row(cell: Cell, error: str, seconds: float | None) -> dict[str, Any]:
    """The row of a cell that could not be run: verdict ``error``, exit code 2 and the one-line reason."""
    row = _base_row(cell, seconds)
    row.update(verdict=ERROR, exit_code=2, error=error)
    return row


def _base_row(cell: Cell, seconds: float | None) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(cell=cell.key, command=cell.command, task="modular-addition", seconds=seconds, version=__version__,
               parameters=json.dumps(dict(cell.params), sort_keys=True, allow_nan=False),
               host=socket.gethostname(), worker=_worker_name(),
               finished=datetime.datetime.now(datetime.timezone.utc))
    for name, column in PARAMETER_COLUMNS.items():
        value = cell.params.get(name)
        row[column] = value if not isinstance(value, bool) else None
    return row


def _number(x: Any) -> float | None:
    """A JSON number of the result (non-finite floats are strings there) as a float; ``None`` stays ``None``."""
    return None if x is None else float(x)


def _worker_name() -> str:
    """The dask worker running this (its address), else ``pid <n>`` of this process."""
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


def params_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """The cell parameters recorded in a row."""
    return dict(json.loads(row["parameters"] or "{}"))
