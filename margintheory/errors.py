"""Exceptions with a meaning for the command line: every one of them is printed as one line, exit code 2."""

from __future__ import annotations


class MarginTheoryError(Exception):
    """Base class of the package's expected errors (bad input, refused work, solver failure)."""

    exit_code: int = 2


class InputError(MarginTheoryError, ValueError):
    """An argument or a file that does not meet the documented contract."""


class NetworkFormatError(InputError):
    """A network file that is malformed, truncated, or has wrong shapes / non-finite values."""


class RefusedError(MarginTheoryError):
    """Work refused up front (memory budget or time estimate exceeded); the message names the override flag."""


class SolverError(MarginTheoryError):
    """A numerical solver that did not return an optimal (or acceptably inaccurate) status."""
