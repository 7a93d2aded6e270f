"""The max margin as an interval ``[L, U]`` for the tasks beyond modular addition (sparse parity, finite groups).

The same object and the same verdict rows as modular addition's :mod:`margintheory.certificate.maxmin`: ``L`` is the
normalized margin of the checked network (:func:`~margintheory.certificate.maxmin.lower_bound_from`, read from the
result's typed margin), ``U`` an upper bound on the normalized margin of every network of any width, computed for the
problem (never the closed form) with its chain of steps, each ``proved`` or ``argued`` with its reason.  The task
supplies ``U`` as a :class:`TaskUpperBound`; this module turns ``[L, U]`` into rows and the ``certificate`` object of
the result schema.  The closed form, where there is one, is a third, independent column compared with both ends.

References: Morwani, Edelman, Oncescu, Zhao, Kakade, "Feature emergence via margin maximization" (arXiv:2311.07568),
Lemma 7.6 (weak duality), Theorems 7.8 and 7.9; docs/theory.md#certificate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from margintheory.certificate.maxmin import GAP_TOL, LowerBound, lower_bound_from
from margintheory.certificate.upper_bound import ProofStep, ceil_float
from margintheory.core.checks import Check, Exactness, VerificationResult, step_name
from margintheory.core.premises import derive_premises
from margintheory.errors import SolverError


@dataclass
class TaskUpperBound:
    """``U`` for one problem: a rational ``upper`` (``>=`` the bound proved by ``steps``) and, when the proved bound
    is the square root of a rational, that rational ``upper_squared`` (then ``upper^2 >= upper_squared``)."""

    task: str
    upper: Fraction
    upper_squared: Fraction | None
    steps: list[ProofStep]
    how: str
    upper_algebraic: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    exactness: Exactness = "proved"

    @property
    def upper_float(self) -> float:
        """``U`` rounded up to a float64."""
        return ceil_float(self.upper)

    @property
    def proved(self) -> bool:
        return all(s.passed for s in self.steps)

    def require_proved(self, what: str) -> TaskUpperBound:
        """``self``, or :class:`SolverError` naming the first step that failed (no bound is returned unproved)."""
        failed = [s.name for s in self.steps if not s.passed]
        if failed:
            raise SolverError(f"upper bound for {what}: step failed: {failed[0]}")
        if self.upper_squared is not None and self.upper * self.upper < self.upper_squared:
            raise SolverError(f"upper bound for {what}: the rational U is below the proved bound")
        return self


def upper_at_most_check(measured: float, error_bound: float, ub: TaskUpperBound, statement: str) -> Check:
    """``margin <= U``: the network's normalized margin against the computed ``U`` (weak duality), within the
    margin's own error bound only."""
    U = ub.upper_float
    ratio = f"margin/U = {measured / U:.15g}" if U > 0 else f"margin = {measured:.15g}, U = 0"
    return Check(name="margin <= U", expected=U, measured=measured, tolerance=error_bound / U if U > 0 else None,
                 passed=bool(measured <= U + error_bound), statement=statement,  # exactness: float (the default)
                 detail=f"{ratio}; U computed ({ub.exactness}), not the closed form")


def gamma_below_upper_exact(gamma: float, gamma_squared: Fraction, ub: TaskUpperBound, statement: str) -> Check:
    """The closed form against the computed ``U`` when its square is rational: ``gamma*^2 <= U^2`` exactly."""
    same = "equal to" if gamma_squared == ub.upper_squared else "different from"
    return Check(name="gamma* <= U", expected=gamma, measured=ub.upper_float, tolerance=0.0,
                 passed=bool(ub.upper * ub.upper >= gamma_squared), exactness="proved",
                 detail=f"gamma*^2 = {gamma_squared}, {same} the bound's square; U/gamma* - 1 = "
                        f"{ub.upper_float / gamma - 1:.3e}; squares compared exactly", statement=statement)


def interval_gap(ub: TaskUpperBound, L: LowerBound, tol: float) -> tuple[float, bool, bool]:
    """``((U - L)/L, L <= U and gap <= tol, decided exactly)``: exactly on squares when ``L^2`` and the bound's square
    are rational, else in rational arithmetic on the float ``L`` (itself ``<= L``).  An interval with ``U < L`` (a
    tampered or wrong end) is never within tolerance."""
    L2 = L.exact_square
    U2 = ub.upper_squared if ub.upper_squared is not None else ub.upper * ub.upper
    if L2 is not None and L.exact is not None and L.exact.is_positive:  # then L2 > 0
        within = L2 <= U2 <= (1 + Fraction(tol)) ** 2 * L2
        return math.sqrt(float(U2 / L2)) - 1, within, True
    if L.value <= 0:
        return math.inf, False, False
    Lq = Fraction(L.value)
    return (ub.upper_float - L.value) / L.value, Lq <= ub.upper <= (1 + Fraction(tol)) * Lq, False


def interval_checks(ub: TaskUpperBound, L: LowerBound, *, gamma: float | None, gamma_below_upper: Check | None,
                    applicable: bool, rtol: float | None) -> list[Check]:
    """The rows of the verdict: ``L``, ``U`` (and the closed form against ``U`` when given: ``gamma_below_upper``,
    made by the task, which knows how to compare its closed form exactly), the gap, and every step of ``U``."""
    base = max(GAP_TOL, rtol or 0.0)
    slack = L.error_bound / L.value if L.exactness == "float" and L.value > 0 else 0.0
    tol = base + slack
    gap, within, exact = interval_gap(ub, L, tol)
    steps = [Check(name=step_name(s.name, "U: "), expected="argument" if s.exactness == "argued" else "holds",
                   measured=s.exactness, tolerance=None, passed=s.passed, exactness=s.exactness,
                   detail=s.detail, informational=s.exactness == "argued",
                   statement=f"upper-bound step: {s.name}") for s in ub.steps]
    rows = [Check(name="max margin >= L", expected=gamma, measured=L.value, tolerance=None, passed=True,
                  exactness=L.exactness, detail=f"L = {L.text()}; {L.how}", informational=True,
                  statement="max margin >= L: normalized margin of the checked network"),
            Check(name="max margin <= U", expected=gamma, measured=ub.upper_float, tolerance=None, passed=ub.proved,
                  exactness=ub.exactness, detail=f"U = {ub.upper_algebraic or ub.upper} (rational {ub.upper}); "
                  f"{ub.how}", statement="max margin of every network of any width <= U (computed)",
                  premises=[c.name for c in steps])]  # U bounds the max margin by its chain of steps
    if gamma_below_upper is not None:
        rows.append(gamma_below_upper)
    how = f"{base:g} + {slack:.3g} = {tol:.6g} ({base:g} plus the float64 error bound of L, relative)" if slack else (
        f"{base:g} (decided exactly)" if exact else f"{base:g}")
    rows.append(Check(name="network margin = optimum", expected=tol, measured=gap, tolerance=tol, passed=bool(within),
                      exactness="proved" if exact and L.exactness == "proved" else
                      "certified" if L.exactness in ("proved", "certified") else "float",
                      detail=f"L = {L.value:.15g} ({L.exactness}), U = {ub.upper_float:.15g} ({ub.exactness}); "
                      f"tolerance {how}" + ("" if applicable else "; the theorem's hypothesis fails: reported"),
                      informational=not applicable, statement=f"network margin = max margin: (U - L)/L <= {how}",
                      premises=["max margin >= L", "max margin <= U"]))
    return rows + steps


def certificate_object(ub: TaskUpperBound, L: LowerBound, tol: float = GAP_TOL) -> dict[str, Any]:
    """The ``certificate`` object of the result schema (the keys modular addition's has, and the task's own)."""
    gap, _, _ = interval_gap(ub, L, tol)
    return {
        "lower": L.value, "upper": ub.upper_float, "relative_gap": gap,
        "lower_exactness": L.exactness, "upper_exactness": ub.exactness,
        "lower_exact": L.rational(), "upper_exact": str(ub.upper),
        "lower_algebraic": L.text() if L.exact is not None else None,
        "upper_algebraic": ub.upper_algebraic,
        "upper_squared": None if ub.upper_squared is None else str(ub.upper_squared),
        "lower_how": L.how, "lower_method": L.method, "upper_how": ub.how,
        "steps": [s.to_dict() for s in ub.steps],
        "seconds": ub.seconds,
        **ub.details,
    }


def attach_interval(result: VerificationResult, ub: TaskUpperBound, *, gamma: float | None,
                    gamma_below_upper: Check | None, applicable: bool, rtol: float | None) -> LowerBound | None:
    """Add the rows and the ``certificate`` object of ``[L, U]`` to ``result`` (``L`` from its typed margin);
    ``None`` (nothing added) when no margin was measured."""
    L = lower_bound_from(result)
    if L is None:
        return None
    rows = derive_premises(interval_checks(ub, L, gamma=gamma, gamma_below_upper=gamma_below_upper,
                                           applicable=applicable, rtol=rtol))
    for row in rows:
        result.add(row)
    cert = certificate_object(ub, L)
    upper = next(c for c in rows if c.name.startswith("max margin <= U"))
    cert["upper_assumes"] = list(upper.assumes)  # the argued steps U rests on, derived from its row
    result.certificate = cert
    result.fields["max_margin_interval"] = (f"[{L.value:.15g}, {ub.upper_float:.15g}]  (L {L.exactness}, U "
                                            f"{ub.exactness}; gap {cert['relative_gap']:.2e})")
    return L
