"""The training adapter of each task (:class:`~margintheory.backends.training_step.TrainingTask`), by problem
object: the adapters live in their task packages (``margintheory.tasks.<task>.training``); this is the one place
that maps a problem to its adapter."""

from __future__ import annotations

from typing import Any

from margintheory.backends.training_step import TrainingTask
from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, Problem, SparseParity
from margintheory.errors import InputError

#: the tasks that can be trained (every task ``verify`` has)
TRAINABLE = ("modular-addition", "parity", "group", "cogo")


def training_task(problem: Problem) -> TrainingTask:
    """The adapter of ``problem``; a CoGO problem names no construction (a run trains its own network)."""
    if isinstance(problem, ModularAddition):
        from margintheory.tasks.modular_addition.training import ModularAdditionTraining

        return ModularAdditionTraining(problem)
    if isinstance(problem, SparseParity):
        from margintheory.tasks.parity.training import ParityTraining

        return ParityTraining(problem)
    if isinstance(problem, GroupComposition):
        from margintheory.tasks.groups.training import GroupTraining

        return GroupTraining(problem)
    if isinstance(problem, CoGO):
        if problem.construction is not None:
            raise InputError(f"a CoGO training run trains its own network: give CoGO({problem.d}) without a "
                             f"construction (not {problem.construction!r})")
        from margintheory.tasks.cogo.training import CoGOTraining

        return CoGOTraining(problem)
    raise InputError(f"no trainer for {problem!r}: give one of ModularAddition, SparseParity, GroupComposition, CoGO")


def problem_of(task: str, parameters: dict[str, Any]) -> Problem:
    """The problem object a run's saved ``task`` and ``problem`` parameters describe (history.json, checkpoints)."""
    try:
        if task == "modular-addition":
            return ModularAddition(int(parameters["p"]), int(parameters["k"]))
        if task == "parity":
            return SparseParity(int(parameters["n"]), int(parameters["k"]))
        if task == "group":
            return GroupComposition(str(parameters["group"]))
        if task == "cogo":
            return CoGO(int(parameters["d"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"the run's problem parameters {parameters!r} do not describe a {task} problem "
                         f"({type(exc).__name__}: {exc})") from None
    raise InputError(f"unknown task {task!r} in the run's record; expected one of {', '.join(TRAINABLE)}")
