"""The task abstraction: what a task of the seed papers is made of (docs/theory.md sections 1, 7-9).

A :class:`Task` names its dataset, its network form (input encoding, activation degree, output classes), its
norm, its closed-form claims and its constructions, the problem type it verifies (:mod:`margintheory.core.problems`)
and the runner that verifies one problem under :class:`VerifyOptions`; :meth:`Task.run` returns the common
:class:`~margintheory.core.checks.VerificationResult` (one result shape for every task).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, cast

from margintheory.core.checks import VerificationResult
from margintheory.engines.fourier import DEFAULT_SPARSITY_TOL
from margintheory.engines.margins import DEFAULT_MAX_MEMORY
from margintheory.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.core.network import PolyNetwork
    from margintheory.tasks.parity.checks import ParityNetwork

#: options a task may or may not use (the engine budget is used by every task)
VERDICT_OPTIONS = ("exact", "rtol", "fourier_tolerance", "min_share", "family", "exhaustive", "upper_method",
                   "compact")


@dataclass(frozen=True, kw_only=True)
class VerifyOptions:
    """How to verify (as opposed to *what*: the problem object).

    ``network``: check this network instead of the task's construction (a
    :class:`~margintheory.core.network.PolyNetwork`, or a
    :class:`~margintheory.tasks.parity.checks.ParityNetwork` for parity);
    ``exact``: check the construction in exact
    arithmetic (modular addition); ``rtol``: relative tolerance of the "equals gamma*" claims (default: the float64
    error bound only); ``fourier_tolerance``: leakage allowed in the per-neuron Fourier checks of a network;
    ``min_share``: neurons with at most this norm share are left out of the per-neuron checks; ``max_memory`` (bytes)
    and ``max_seconds`` (``None``: no limit): the budget of the exhaustive margin engine; ``family``: which
    construction of modular addition (``"lemma-c18"``, or a smaller one of :mod:`margintheory.core.phase_measures`);
    ``certificate`` (modular addition): also compute the proved upper bound ``U`` and report the max margin as
    ``[L, U]`` (:mod:`margintheory.certificate.maxmin`); ``exhaustive`` (modular addition): compute the lower end
    ``L`` on all ``p^k`` inputs even where the network's Fourier structure proves it without enumeration
    (:mod:`margintheory.tasks.modular_addition.compact`); ``upper_method`` (modular addition): how the upper end
    bounds the block form ``g_k``, ``"am-gm"`` (its exact maximum, no solver) or ``"sos"`` (the SOS certificate,
    the cross-check; :func:`margintheory.certificate.upper_bound.prove_upper_bound`); ``compact`` (modular
    addition): always check the construction with the per-``p`` compact check, never as the every-p proof evaluated
    at ``p`` (:mod:`margintheory.tasks.modular_addition.specialised`, used where the compact check does not fit).
    """

    network: PolyNetwork | ParityNetwork | None = None
    exact: bool = False
    rtol: float | None = None
    fourier_tolerance: float = DEFAULT_SPARSITY_TOL
    min_share: float = 0.0
    max_memory: int = DEFAULT_MAX_MEMORY
    max_seconds: float | None = None
    family: str = "lemma-c18"
    certificate: bool = True
    exhaustive: bool = False
    upper_method: str = "am-gm"
    compact: bool = False

    def __post_init__(self) -> None:
        if self.rtol is not None and not (0 <= self.rtol < 1):
            raise InputError(f"rtol must be in [0, 1), got {self.rtol}")
        if not (0 < self.fourier_tolerance < 1):
            raise InputError(f"fourier_tolerance must be in (0, 1), got {self.fourier_tolerance}")
        if not (0 <= self.min_share < 1):
            raise InputError(f"min_share must be in [0, 1), got {self.min_share}")
        if isinstance(self.max_memory, bool) or not isinstance(self.max_memory, int) or self.max_memory < 1:
            raise InputError(f"max_memory must be a positive number of bytes, got {self.max_memory!r}")
        if self.max_seconds is not None and not self.max_seconds > 0:
            raise InputError(f"max_seconds must be positive (or None for no limit), got {self.max_seconds}")
        if self.exact and self.exhaustive:
            raise InputError("exact arithmetic already evaluates every input; exhaustive applies to the float64 checks")
        if self.exact and self.network is not None:
            raise InputError("exact arithmetic checks the construction; it cannot be combined with a given network")
        from margintheory.core.phase_measures import FAMILIES

        if self.family not in FAMILIES:
            raise InputError(f"family must be one of {', '.join(FAMILIES)}, got {self.family!r}")
        if self.upper_method not in ("am-gm", "sos"):
            raise InputError(f"upper_method must be 'am-gm' or 'sos', got {self.upper_method!r}")
        if self.family != "lemma-c18" and self.network is not None:
            raise InputError("family chooses a construction; it cannot be combined with a given network")

    def non_default(self) -> dict[str, Any]:
        """The options that differ from the defaults and change what is checked (for ``parameters``)."""
        out: dict[str, Any] = {}
        if self.exact:
            out["exact"] = True
        if self.family != "lemma-c18":
            out["family"] = self.family
        if self.rtol is not None:
            out["rtol"] = self.rtol
        if self.exhaustive:
            out["exhaustive"] = True
        if self.upper_method != "am-gm":
            out["upper_method"] = self.upper_method
        if self.compact:
            out["compact"] = True
        if self.network is not None:
            out.update(fourier_tolerance=self.fourier_tolerance, min_share=self.min_share)
        return out



@dataclass(frozen=True, kw_only=True)
class Task:
    """One task: its description (for reports), its problem type and the function that verifies a problem."""

    name: str
    dataset: str
    encoding: str
    activation: str
    classes: str
    norm: str
    closed_form: str
    constructions: tuple[str, ...]
    reference: str
    problem_type: type | tuple[type, ...]
    runner: Callable[[Any, VerifyOptions], VerificationResult]
    options: frozenset[str] = frozenset()

    def describe(self) -> dict[str, object]:
        """The task's description (JSON ``details.task_description``)."""
        skip = {"runner", "problem_type", "options"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}

    def run(self, problem: Any, options: VerifyOptions | None = None) -> VerificationResult:
        """Verify ``problem``: refuse options this task does not use, time the run, fill the common fields."""
        options = VerifyOptions() if options is None else options
        if not isinstance(problem, self.problem_type):
            types = self.problem_type if isinstance(self.problem_type, tuple) else (self.problem_type,)
            names = " or ".join(t.__name__ for t in types)
            raise InputError(f"the {self.name} task verifies {names} problems, got {problem!r}")
        defaults = VerifyOptions()
        unused = [n for n in VERDICT_OPTIONS if n not in self.options and getattr(options, n) != getattr(defaults, n)]
        if unused:
            raise InputError(f"the {self.name} task does not use the option(s) {', '.join(unused)}")
        start = time.perf_counter()
        result = self.runner(problem, options)
        if "seconds" in result.fields:
            result.fields["engine_seconds"] = result.fields.pop("seconds")
        result.fields["seconds"] = time.perf_counter() - start
        result.fields.setdefault("task_description", self.describe())
        result.task = self.name
        used = {n: v for n, v in options.non_default().items() if n in self.options}  # what this task reads
        result.parameters = {**cast(Any, problem).parameters(), **used}
        return result.derive()  # every row's exactness from its premises (margintheory.core.premises)
