"""One link of a proved upper bound's chain of steps (shared by every task's upper end)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from margintheory.core.checks import Exactness


@dataclass
class ProofStep:
    """One link of the chain: ``exactness`` is ``proved`` or ``argued`` (with its reason in ``detail``)."""

    name: str
    exactness: Exactness
    passed: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "exactness": self.exactness, "passed": self.passed, "reason": self.detail}


__all__ = ["ProofStep"]
