"""The task abstraction: what a task of the seed papers is made of (docs/theory.md).

A :class:`Task` names its dataset, its network form (input encoding, activation degree, output classes), its
norm, its closed-form claims and its constructions, and runs its verification from the ``verify`` arguments;
the result is the common :class:`~margintheory.checks.VerificationResult` (``verdict`` + ``checks``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import asdict, dataclass

from margintheory.checks import VerificationResult


@dataclass(frozen=True)
class Task:
    """One task: its description (for reports) and the function that verifies it."""

    name: str
    dataset: str
    encoding: str
    activation: str
    classes: str
    norm: str
    closed_form: str
    constructions: tuple[str, ...]
    reference: str
    runner: Callable[[argparse.Namespace], VerificationResult]

    def describe(self) -> dict[str, object]:
        """The task's description without the runner (JSON field ``task``)."""
        d = asdict(self)
        d.pop("runner")
        return d

    def run(self, args: argparse.Namespace) -> VerificationResult:
        result = self.runner(args)
        result.fields.setdefault("task", self.describe())
        return result
