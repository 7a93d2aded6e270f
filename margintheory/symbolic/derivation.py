"""Machine-checked derivations: an ordered list of steps, each with how (and whether) code checked it.

A :class:`Step` carries a sympy statement, the justification in words, the lemma it comes from (the paper's own
numbering; docs/theory.md) and a :class:`StepCheck`.  A step's check can only be ``proved`` or ``float`` if
the corresponding :class:`Derivation` method *ran* the check (a sympy simplification, an exact computation
in a cyclotomic field, or a seeded random test with a stated tolerance); a failed check is recorded as
``failed`` (never dropped); anything argued but not checked is ``argued`` with the reason.  The labels are
the package's exactness levels (:data:`margintheory.core.checks.Exactness`) plus ``failed``.

Rendering: plain text, Markdown (with ``$$`` LaTeX blocks) and a LaTeX fragment; and, for ``derive --json``, the
package's one result shape (:func:`derivation_result`: each step a check with its exactness).
"""

from __future__ import annotations

import math
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import sympy as sp

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.core.checks import Check, VerificationResult

CheckKind = Literal["proved", "float", "argued", "failed"]
FORMATS = ("text", "markdown", "latex")


@dataclass(frozen=True)
class StepCheck:
    """How a step was established.

    ``scope`` says for which parameters the check ran ("all p, k" for a symbolic proof, or a list of
    instances); ``tolerance``/``max_error`` are set for numeric checks; ``reason`` for argued steps.
    """

    kind: CheckKind
    method: str
    scope: str = ""
    tolerance: float | None = None
    max_error: float | None = None
    reason: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.kind != "failed"

    @property
    def machine_checked(self) -> bool:
        return self.kind in ("proved", "float")

    def label(self) -> str:
        parts: list[str] = [self.kind]
        if self.method:
            parts.append(self.method)
        if self.scope:
            parts.append(f"scope: {self.scope}")
        if self.tolerance is not None:
            err = "n/a" if self.max_error is None else f"{self.max_error:.2e}"
            parts.append(f"max error {err} <= tolerance {self.tolerance:.1e}"
                         if self.kind != "failed" else f"max error {err} > tolerance {self.tolerance:.1e}")
        if self.reason:
            parts.append(f"reason: {self.reason}")
        return "; ".join(parts)


@dataclass(frozen=True)
class Step:
    """One line of a derivation."""

    statement: sp.Basic
    justification: str
    lemma: str
    check: StepCheck


def sympy_equal(statement: sp.Basic) -> bool:
    """Default exact check of an ``Eq``: ``simplify(lhs - rhs) == 0`` (sympy returns 0 only when proved)."""
    if statement is sp.true:
        raise TypeError("the statement evaluated to True on construction; build it with sp.Eq(..., evaluate=False)")
    if not isinstance(statement, sp.Equality):
        raise TypeError("the default exact check needs an sp.Eq; pass proof= for other statements")
    return sp.simplify(statement.lhs - statement.rhs) == 0


@dataclass
class Derivation:
    """An ordered list of :class:`Step`; every ``proved``/``float`` label is produced by running a check."""

    title: str
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def exact(self, statement: sp.Basic, justification: str, lemma: str, *,
              proof: Callable[[], bool] | None = None, method: str = "sympy simplify(lhs - rhs) == 0",
              scope: str = "") -> Step:
        """Append a step proved by code: ``proof()`` (default :func:`sympy_equal`) must return ``True``."""
        start = time.perf_counter()
        ok = bool(proof()) if proof is not None else sympy_equal(statement)
        check = StepCheck("proved" if ok else "failed", method, scope, seconds=time.perf_counter() - start)
        return self._append(Step(statement, justification, lemma, check))

    def numeric(self, statement: sp.Basic, justification: str, lemma: str, *,
                max_error: Callable[[], float], tolerance: float, method: str, scope: str = "") -> Step:
        """Append a step tested numerically: ``max_error()`` (largest violation / error seen) must be ``<= tol``."""
        start = time.perf_counter()
        err = float(max_error())
        ok = math.isfinite(err) and err <= tolerance
        check = StepCheck("float" if ok else "failed", method, scope, tolerance, err,
                          seconds=time.perf_counter() - start)
        return self._append(Step(statement, justification, lemma, check))

    def assumed(self, statement: sp.Basic, justification: str, lemma: str, *, reason: str) -> Step:
        """Append a step that no code checked, with the reason it is taken as given."""
        return self._append(Step(statement, justification, lemma, StepCheck("argued", "", reason=reason)))

    def _append(self, step: Step) -> Step:
        self.steps.append(step)
        return step

    @property
    def all_passed(self) -> bool:
        """No step failed its check (argued steps count as labelled, not as failed)."""
        return all(s.check.passed for s in self.steps)

    def counts(self) -> dict[str, int]:
        out = {kind: 0 for kind in ("proved", "float", "argued", "failed")}
        for s in self.steps:
            out[s.check.kind] += 1
        return out

    def render(self, fmt: str = "text", width: int | None = None, *, unicode: bool = True) -> str:
        """Render as ``text`` (lines at most ``width`` columns when given: prose wrapped, formulas broken by
        sympy's pretty printer, in ASCII art when ``unicode`` is false), ``markdown`` or ``latex``."""
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        if fmt == "text":
            return self._text(width, unicode)
        return {"markdown": self._markdown, "latex": self._latex}[fmt]()

    def summary(self) -> str:
        c = self.counts()
        verdict = "all checks passed" if self.all_passed else "SOME CHECKS FAILED"
        return (f"{len(self.steps)} steps: {c['proved']} proved, {c['float']} float, "
                f"{c['argued']} argued, {c['failed']} failed ({verdict})")

    def _text(self, width: int | None = None, unicode: bool = True) -> str:
        def wrap(text: str, indent: str = "") -> list[str]:
            if width is None:
                return [text]
            return textwrap.wrap(text, max(width, 40), subsequent_indent=indent, break_on_hyphens=False) or [""]

        lines = [*wrap(self.title), "=" * min(len(self.title), width or len(self.title))]
        columns = None if width is None else max(width - 6, 34)
        for i, s in enumerate(self.steps, 1):
            lines.extend(wrap(f"[{i}] {s.lemma}: {s.justification}", "    "))
            lines.extend("      " + row for row in
                         sp.pretty(s.statement, use_unicode=unicode, num_columns=columns).splitlines())
            lines.extend(wrap(f"      check: {s.check.label()}", "        "))
        for n in self.notes:
            lines.extend(wrap(f"note: {n}", "      "))
        lines.extend(wrap(self.summary()))
        return "\n".join(lines)

    def _markdown(self) -> str:
        lines = [f"## {self.title}", ""]
        for i, s in enumerate(self.steps, 1):
            lines += [f"{i}. **{s.lemma}**: {s.justification}", "",
                      f"   $$ {sp.latex(s.statement)} $$", "",
                      f"   *check:* `{s.check.label()}`", ""]
        lines.extend(f"> note: {n}" for n in self.notes)
        lines.append(f"**{self.summary()}**")
        return "\n".join(lines)

    def _latex(self) -> str:
        lines = [f"\\section*{{{_latex_text(self.title)}}}", "\\begin{enumerate}"]
        for s in self.steps:
            lines += [f"\\item \\textbf{{{_latex_text(s.lemma)}}}: {_latex_text(s.justification)}",
                      f"\\[ {sp.latex(s.statement)} \\]",
                      f"\\emph{{check: {_latex_text(s.check.label())}}}"]
        lines.append("\\end{enumerate}")
        lines.extend(f"\\paragraph{{Note.}} {_latex_text(n)}" for n in self.notes)
        lines.append(f"\\paragraph{{Summary.}} {_latex_text(self.summary())}")
        return "\n".join(lines)


def step_check(index: int, step: Step) -> Check:
    """One step as a row of the result schema: ``proved`` / ``float`` (expected error 0, measured the largest error
    seen, the tolerance) / ``argued`` (informational, its reason in ``detail``); a failed check keeps the exactness
    of the check that failed (``float`` when it had a tolerance, else ``proved``) with ``passed`` false."""
    from margintheory.core.checks import NAME_MAX, Check

    c = step.check
    kind = c.kind if c.kind != "failed" else ("float" if c.tolerance is not None else "proved")
    name = f"{index}. {step.lemma}"
    numeric = c.tolerance is not None
    return Check(name=name if len(name) <= NAME_MAX else name[:NAME_MAX - 3].rstrip() + "...",
                 expected=0.0 if numeric else ("argument" if kind == "argued" else "holds"),
                 measured=c.max_error if numeric else (kind if c.passed else "fails"),
                 tolerance=c.tolerance, passed=c.passed, exactness=kind, detail=c.label(),
                 informational=kind == "argued",
                 statement=f"{step.lemma}: {step.justification}: {sp.sstr(step.statement)}")


def derivation_result(derivation: Derivation, *, topic: str, parameters: dict[str, Any],
                      seconds: float | None = None) -> VerificationResult:
    """The derivation in the result schema of every ``--json`` output (``task`` ``"derive"``): one check per step,
    the steps in full (statement, LaTeX, lemma, justification, check) under ``details``."""
    from margintheory.core.checks import VerificationResult

    result = VerificationResult(derivation.title, task="derive", parameters={"topic": topic, **parameters})
    for i, step in enumerate(derivation.steps, 1):
        result.add(step_check(i, step))
    result.fields.update({
        "gamma_star": None, "gamma_star_note": "not compared: a derivation (its steps are the claims)",
        "normalized_margin": None, "width": None, "seconds": seconds, "topic": topic, "counts": derivation.counts(),
        "summary": derivation.summary(),
        "steps": [{"lemma": s.lemma, "justification": s.justification, "statement": sp.sstr(s.statement),
                   "latex": sp.latex(s.statement), "check": {"kind": s.check.kind, "method": s.check.method,
                   "scope": s.check.scope, "tolerance": s.check.tolerance, "max_error": s.check.max_error,
                   "reason": s.check.reason, "seconds": s.check.seconds}} for s in derivation.steps],
    })
    result.notes.extend(derivation.notes)
    return result


_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_text(text: str) -> str:
    """Escape plain text for LaTeX."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)
