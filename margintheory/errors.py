"""The package's expected errors, in library terms; the command line prints each as one line, exit code 2.

An error may name the library ``parameter`` that would lift it (``max_memory``, ``max_seconds``, ...); the command
line translates that name into its own flag (``margintheory/commands/_options.py``), the library never names flags.
"""

from __future__ import annotations


class MarginTheoryError(Exception):
    """Base class of the package's expected errors (bad input, refused work, solver failure)."""

    exit_code: int = 2

    def __init__(self, message: str = "", *, parameter: str | None = None) -> None:
        super().__init__(message)
        self.parameter = parameter  # the library parameter that would lift the error (the CLI names its flag)


class InputError(MarginTheoryError, ValueError):
    """An argument or a file that does not meet the documented contract."""


class NetworkFormatError(InputError):
    """A network file that is malformed, truncated, or has wrong shapes / non-finite values."""


class RefusedError(MarginTheoryError):
    """Work refused up front because its estimate exceeds a budget (:mod:`margintheory.runtime.budget`).

    ``parameter`` names the budget (``"max_memory"``, ``"max_seconds"``, ...; ``None`` for a fixed size limit that
    no budget lifts), ``estimate`` and ``limit`` are in bytes or seconds.  The message is in the library's terms;
    the command line appends the flag that would allow the work.
    """

    def __init__(self, message: str, *, parameter: str | None = None, estimate: float | None = None,
                 limit: float | None = None) -> None:
        super().__init__(message, parameter=parameter)
        self.estimate = estimate
        self.limit = limit
        #: other refusals of the same run under other budgets, reported with this one (one round trip, not several)
        self.also: list[RefusedError] = []


class SolverError(MarginTheoryError):
    """A numerical solver that did not return an optimal (or acceptably inaccurate) status."""


class ExecutionError(MarginTheoryError):
    """Work sent to other processes or machines that could not be run there (a cluster that cannot be reached, a
    task whose workers kept dying)."""


class DivergedError(SolverError):
    """Training whose objective or weights stopped being finite: the run's outcome, reported with exit code 1 (like
    a refuted claim), not bad input; the last checkpoint written before it is left as it was."""

    exit_code = 1
