"""The common result shape of every verdict: a list of :class:`Check` rolled up into a :class:`VerificationResult`.

Every ``--json`` output of the CLI is ``VerificationResult.to_dict()``: ``verdict`` + ``checks`` + extra fields.
A check compares an *expected* value (from ``theory`` or from the statement being tested) with a *measured* value
(computed from the network or the solver) under a stated *tolerance*; ``exactness`` says how sure it is.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

#: How sure a check is: ``proved`` (exact arithmetic or an exactly checked certificate), ``certified`` (a solver
#: certificate with rigorous float error bounds), ``float`` (floating point, with its tolerance and measured error),
#: ``argued`` (a step that is an argument rather than a computation; its reason is in ``detail``).
Exactness = Literal["proved", "certified", "float", "argued"]
EXACTNESS_LEVELS: tuple[Exactness, ...] = ("proved", "certified", "float", "argued")
Verdict = Literal["verified", "refuted", "not-applicable"]


@dataclass
class Check:
    """One claim: ``expected`` vs ``measured`` within ``tolerance``.

    ``informational`` checks are reported but do not decide the verdict (e.g. a hypothesis that is not met).
    """

    name: str
    expected: Any
    measured: Any
    tolerance: float | None
    passed: bool
    exactness: Exactness = "float"
    detail: str = ""
    informational: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {key: _jsonable(val) for key, val in asdict(self).items()}


def close_check(name: str, expected: float, measured: float, tolerance: float, *, relative: bool = True,
                exactness: Exactness = "float", detail: str = "") -> Check:
    """``|measured - expected| <= tolerance`` (relative to ``|expected|`` when ``relative``)."""
    err = abs(measured - expected)
    scale = abs(expected) if relative and expected != 0 else 1.0
    ok = bool(math.isfinite(measured) and err <= tolerance * scale)
    kind = "relative" if relative else "absolute"
    extra = f"{kind} error {err / scale:.3e} (tolerance {tolerance:.1e})"
    return Check(name, expected, measured, tolerance, ok, exactness, f"{detail}; {extra}" if detail else extra)


def bool_check(name: str, measured: bool, *, tolerance: float | None = None, exactness: Exactness = "float",
               detail: str = "", expected: bool = True, informational: bool = False) -> Check:
    """A check whose claim is a yes/no property (``measured`` must equal ``expected``)."""
    return Check(name, expected, bool(measured), tolerance, bool(measured) == expected, exactness, detail,
                 informational)


@dataclass
class VerificationResult:
    """A verdict with its checks and any extra named quantities (``fields``) for JSON output."""

    title: str
    checks: list[Check] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    applicable: bool = True

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    @property
    def verdict(self) -> Verdict:
        if not self.applicable:
            return "not-applicable"
        deciding = [c for c in self.checks if not c.informational]
        return "verified" if deciding and all(c.passed for c in deciding) else "refuted"

    @property
    def exit_code(self) -> int:
        """0 verified, 1 refuted; ``not-applicable`` is 0 when every computed check passed, else 1."""
        if self.verdict == "verified":
            return 0
        if self.verdict == "not-applicable":
            return 0 if all(c.passed for c in self.checks if not c.informational) else 1
        return 1

    def to_dict(self) -> dict[str, Any]:
        out = {key: _jsonable(val) for key, val in self.fields.items()}
        out["verdict"] = self.verdict
        out["checks"] = [c.to_dict() for c in self.checks]
        out["notes"] = list(self.notes)
        return out


def _jsonable(x: Any) -> Any:
    """Convert numpy / sympy scalars and containers into plain JSON values (non-finite floats as strings)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else repr(x)
    if np is not None and isinstance(x, np.generic):
        return _jsonable(x.item())
    if np is not None and isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple | set):
        return [_jsonable(v) for v in x]
    return str(x)
