"""Exactness derived from premises: a row is never more certain than the rows it uses.

Every :class:`~margintheory.core.checks.Check` names its ``premises``: the rows of the same result it uses, by their
short name (the claim column), and the lemmas of the papers it cites (:data:`CITED_LEMMAS`).  :func:`derive_premises`
walks that graph and sets, for every row,

* ``exactness``: the weakest of the row's own method and the (derived) exactness of its premise rows, in the order
  ``proved > certified > float``.  An ``argued`` premise does not lower it (an argument has no precision to inherit),
  but it is an assumption of the row; an ``argued`` row stays ``argued``;
* ``assumes``: the argued statements the row rests on, transitively -- each argued premise row, each cited lemma, and
  everything its premise rows assume.

A row whose ``assumes`` is non-empty is shown as ``proved*`` (``certified*``, ``float*``) in the text table, its
assumptions listed under the table (:mod:`margintheory.presentation.report`).  When an argued premise becomes a
computation (its own exactness ``proved``), every row that rests on it drops the assumption on the next derivation:
nothing is typed per row.  The derivation is idempotent (a derived row's exactness is already the weakest of its
premises), refuses a premise that names no row and no cited lemma, a name that several rows share, and a cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar


class Row(Protocol):
    """What the derivation reads and writes of a row (a :class:`margintheory.core.checks.Check`; this module does not
    import it: the result shape imports the derivation)."""

    name: str
    exactness: Any  # an Exactness literal; the derivation writes one of the same four values
    premises: list[str]
    assumes: list[str]


R = TypeVar("R", bound=Row)

#: how sure each computed exactness is: lower is more certain (``argued`` is not on this scale)
CERTAINTY = {"proved": 0, "certified": 1, "float": 2}

#: lemmas of the seed papers that rows cite without a row of their own computing them: each is an assumption of the
#: row that cites it (the paper's argument, not re-done here).  Name -> the statement and its source.
CITED_LEMMAS: dict[str, str] = {
    "Lemma C.6": "weak duality: the max margin under any weighting q, tau of the (input, wrong label) pairs is at most "
                 "max_(|theta| <= 1) F_(q,tau)(theta) (Li, Liang, Shi, Song, Zhou, \"Fourier circuits in neural "
                 "networks and transformers\", arXiv:2402.09469, Lemma C.6)",
    "Lemma 7.6": "weak duality for the uniform q, tau (Morwani, Edelman, Oncescu, Zhao, Kakade, \"Feature emergence "
                 "via margin maximization: case studies in algebraic tasks\", arXiv:2311.07568, Lemma 7.6)",
    "Lemma C.14": "the single-neuron objective splits into frequency blocks C_(p,k) g_k(zeta_j) (Li et al., "
                  "arXiv:2402.09469, Lemma C.14)",
}


class PremiseError(ValueError):
    """A premise graph that cannot be derived: an unknown or ambiguous premise name, or a cycle (a programming error
    of the producer of the rows, not bad input)."""


def weakest(levels: Sequence[str]) -> str:
    """The least certain of computed exactness levels (``proved > certified > float``)."""
    unknown = [x for x in levels if x not in CERTAINTY]
    if unknown:
        raise PremiseError(f"not a computed exactness: {unknown[0]!r}")
    return max(levels, key=CERTAINTY.__getitem__)


def derive_premises(checks: Sequence[R], lemmas: dict[str, str] | None = None) -> list[R]:
    """Set every row's ``exactness`` and ``assumes`` from its ``premises`` (module docstring), in place; returns the
    rows.  ``lemmas``: the citable lemmas (default :data:`CITED_LEMMAS`)."""
    lemmas = CITED_LEMMAS if lemmas is None else lemmas
    by_name: dict[str, list[int]] = {}
    for i, c in enumerate(checks):
        by_name.setdefault(c.name, []).append(i)
    for c in checks:
        for name in c.premises:
            rows = by_name.get(name, [])
            if len(rows) > 1:
                raise PremiseError(f"row {c.name!r}: premise {name!r} names {len(rows)} rows")
            if not rows and name not in lemmas:
                raise PremiseError(f"row {c.name!r}: premise {name!r} is neither a row of this result nor a cited "
                                   "lemma")
    derived: dict[int, tuple[str, tuple[str, ...]]] = {}
    visiting: list[int] = []

    def visit(i: int) -> tuple[str, tuple[str, ...]]:
        if i in derived:
            return derived[i]
        if i in visiting:
            cycle = [checks[j].name for j in visiting[visiting.index(i):]] + [checks[i].name]
            raise PremiseError("premises form a cycle: " + " -> ".join(cycle))
        visiting.append(i)
        row = checks[i]
        levels = [] if row.exactness == "argued" else [row.exactness]
        assumes: list[str] = []
        for name in row.premises:
            if name in by_name:
                level, inherited = visit(by_name[name][0])
                new = [*inherited, name] if level == "argued" else list(inherited)
                if level != "argued":
                    levels.append(level)
            else:
                new = [name]
            assumes += [a for a in new if a not in assumes]
        visiting.pop()
        derived[i] = ("argued" if row.exactness == "argued" else weakest(levels), tuple(assumes))
        return derived[i]

    for i in range(len(checks)):
        visit(i)
    for i, c in enumerate(checks):
        level, assumes = derived[i]
        c.exactness = level
        c.assumes = list(assumes)
    return list(checks)


def exactness_label(exactness: str, assumes: Sequence[str]) -> str:
    """The ``how`` column of the table: the exactness, with ``*`` when the row rests on argued statements."""
    return f"{exactness}*" if assumes and exactness != "argued" else str(exactness)

