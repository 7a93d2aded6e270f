"""The common result shape of every verdict: a list of :class:`Check` rolled up into a :class:`VerificationResult`.

Every ``--json`` output of the CLI is ``VerificationResult.to_dict()``, one shape for every task and command,
described by the JSON Schema shipped with the package (:func:`margintheory.presentation.schema.result_schema`,
``margintheory schema``): the common fields ``task, parameters, gamma_star, gamma_star_note, normalized_margin,
ratio_to_gamma_star, relative_error, width, verdict, exit_code, checks, seconds, version, notes`` at the top
level, task-specific values under ``details``, and an optional ``certificate``.
A check compares an *expected* value (from ``theory`` or from the statement being tested) with a *measured* value
(computed from the network or the solver) under a stated *tolerance*; ``exactness`` says how sure it is, derived
from the check's own method and its ``premises`` (the rows it uses and the lemmas it cites), with the argued
statements it rests on in ``assumes`` (:mod:`margintheory.core.premises`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, get_args

from margintheory.errors import InputError

#: How sure a check is: ``proved`` (exact arithmetic or an exactly checked certificate), ``certified`` (a solver
#: certificate with rigorous float error bounds), ``float`` (floating point, with its tolerance and measured error),
#: ``argued`` (a step that is an argument rather than a computation; its reason is in ``detail``).
Exactness = Literal["proved", "certified", "float", "argued"]
EXACTNESS_LEVELS: tuple[Exactness, ...] = ("proved", "certified", "float", "argued")
#: longest check name (the claim column of the table); the full claim goes to ``Check.statement``
NAME_MAX = 30
Verdict = Literal["verified", "refuted", "not-applicable", "undecided"]


@dataclass(kw_only=True)
class Check:
    """One claim: ``expected`` vs ``measured`` within ``tolerance``.

    ``name`` is a short label (at most :data:`NAME_MAX` characters: it is the table's first column);
    ``statement`` is the claim in full, with its formula and lemma (printed under the table and in the JSON).
    ``informational`` checks are reported but do not decide the verdict (e.g. a hypothesis that is not met).
    ``premises``: the rows of the same result this claim uses (by ``name``) and the lemmas it cites
    (:data:`margintheory.core.premises.CITED_LEMMAS`); ``exactness`` is first the row's own method and becomes the
    weakest of it and its premises', and ``assumes`` the argued statements it rests on, when the result is derived
    (:func:`margintheory.core.premises.derive_premises`; never set ``assumes`` by hand).
    """

    name: str
    expected: Any
    measured: Any
    tolerance: float | None
    passed: bool
    exactness: Exactness = "float"
    detail: str = ""
    informational: bool = False
    statement: str = ""
    premises: list[str] = field(default_factory=list)
    assumes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {key: _jsonable(val) for key, val in asdict(self).items()}

    def reported(self, prefix: str = "", note: str = "") -> Check:
        """This check as an informational row of another verdict: ``prefix`` before the name (and the statement),
        ``note`` after the statement."""
        from margintheory.core.premises import CITED_LEMMAS

        statement = prefix + (self.statement or self.name) + note
        premises = [x if x in CITED_LEMMAS else prefix + x for x in self.premises]
        assumes = [x if x in CITED_LEMMAS else prefix + x for x in self.assumes]
        return replace(self, name=prefix + self.name, statement=statement, informational=True, premises=premises,
                       assumes=assumes)


def close_check(name: str, expected: float, measured: float, tolerance: float, *, relative: bool = True,
                exactness: Exactness = "float", detail: str = "", statement: str = "",
                premises: list[str] | None = None) -> Check:
    """``|measured - expected| <= tolerance`` (relative to ``|expected|`` when ``relative``)."""
    err = abs(measured - expected)
    scale = abs(expected) if relative and expected != 0 else 1.0
    ok = bool(math.isfinite(measured) and err <= tolerance * scale)
    kind = "relative" if relative else "absolute"
    extra = f"{kind} error {err / scale:.3e} (tolerance {tolerance:.1e})"
    return Check(name=name, expected=expected, measured=measured, tolerance=tolerance, passed=ok, exactness=exactness,
                 detail=f"{detail}; {extra}" if detail else extra, statement=statement, premises=list(premises or []))


def bool_check(name: str, measured: bool, *, tolerance: float | None = None, exactness: Exactness = "float",
               detail: str = "", expected: bool = True, informational: bool = False, statement: str = "",
               premises: list[str] | None = None) -> Check:
    """A check whose claim is a yes/no property (``measured`` must equal ``expected``)."""
    return Check(name=name, expected=expected, measured=bool(measured), tolerance=tolerance,
                 passed=bool(measured) == expected, exactness=exactness, detail=detail, informational=informational,
                 statement=statement, premises=list(premises or []))


#: short names (the table's claim column) of the proof steps of the upper bound and of the certificate checker,
#: by the beginning of the step's statement
STEP_NAMES = (
    ("weak duality with the invariant dual", "weak duality (invariant t)"),
    ("AM-GM: max_(|z| = 1) g_k", "AM-GM: max g_k exact"),
    ("ratio r^2 = c'^2/c^2", "ratio r^2 = c'^2/c^2"),
    ("dual t >= 0", "dual t >= 0, two-valued"),
    ("upper bound U >= ((p-1)/(p T))", "U >= dual's block bounds"),
    ("closed form: the dual", "closed form: the dual"),
    ("closed form: the network", "closed form: the network"),
    ("blocks scaled by kappa_t", "blocks scaled by kappa_t"),
    ("character sums", "character sums"),
    ("the network's margin per unit cost", "margin per unit cost"),
    ("lower <= max margin", "lower <= max margin <= U"),
    ("weak duality (Lemma 7.6)", "weak duality (7.6)"),
    ("weak duality", "weak duality (C.6)"),
    ("homogeneity", "homogeneity"),
    ("Lemma C.14 and the block closed form", "block form (C.14, all p)"),
    ("Lemma C.14 at (p, k)", "C.14 expanded at (p, k)"),
    ("Lemma C.14:", "C.14 blocks (not re-proved)"),
    ("SOS certificate", "SOS: max g_k <= B"),
    ("U >= c_b B", "U >= c_b B (every block)"),
    ("Gram matrices symmetric", "Gram matrices symmetric"),
    ("polynomial identity", "SOS identity"),
    ("Gram matrices positive semidefinite", "Gram matrices PSD"),
    ("max_{|z|=1} g_k <= gamma/scale", "max g_k <= gamma/scale"),
    ("|g_k| <= |z_w| |z_1|...|z_k|", "modulus identity"),
    ("AM-GM chain of two-variable steps", "AM-GM chain (two variables)"),
    ("max_{|z|=1} g_k = (k+1)^-((k+1)/2)", "max g_k exact (AM-GM)"),
    ("upper bound U >= c max g_k", "U >= c max g_k"),
    ("frequency-block constants", "block constants (C.14)"),
    ("upper bound U >= c gamma/scale", "U >= c gamma/scale"),
    ("lower bound: exact margin", "lower bound: exact margin"),
    ("lower bound: stated", "lower bound: stated"),
    ("lower <= upper", "lower <= upper, gap"),
    ("weights translation-invariant", "weights invariant (exact)"),
    ("F_(q,tau)(u, w) = lam", "F = lam F_unif(u, K_t w)"),
    ("|kappa(j)|^2 <= r", "|kappa_j|^2 <= r (exact)"),
    ("U >= lam c_b |kappa_b| B", "U >= lam c_b |kappa_b| B"),
    ("reduction: F(u, w) = k!", "F = k!(w.b) prod u_S"),
    ("Cauchy-Schwarz: (w . b)", "(w.b)^2 <= 2|w|^2"),
    ("AM-GM", "AM-GM (exact integers)"),
    ("U^2 = 2 (k!)^2", "U^2 exact, U rational"),
    ("character table", "character table (exact)"),
    ("D.11 reduction", "D.11 blocks (factor 2)"),
    ("block maximum", "block max (D.12-D.13)"),
    ("checked dual", "dual checked exactly"),
    ("U^2 = max_R", "U^2 = max_R (exact)"),
)


def step_name(statement: str, prefix: str = "") -> str:
    """The short name of a proof step (a step read from a file that is not one of ours: its first words)."""
    for start, name in STEP_NAMES:
        if statement.startswith(start):
            return prefix + name
    room = NAME_MAX - len(prefix)
    return prefix + (statement if len(statement) <= room else statement[: room - 3].rstrip() + "...")


#: Names of ``VerificationResult.fields`` entries that are promoted to the top level of the JSON result (the common
#: fields of the schema); every other entry goes under ``details``.
COMMON_FIELDS: tuple[str, ...] = ("gamma_star", "gamma_star_note", "normalized_margin", "ratio_to_gamma_star",
                                  "relative_error", "width", "seconds")


#: How sure a measured margin is (:data:`Exactness` without ``argued``: a margin is always computed).
MarginExactness = Literal["proved", "certified", "float"]
#: How a margin was computed: ``fourier`` (from the network's Fourier structure, no input enumerated) or
#: ``exhaustive`` (every input evaluated, in float64 or in exact arithmetic).
MarginMethod = Literal["fourier", "exhaustive"]


@dataclass(frozen=True, kw_only=True)
class MarginMeasurement:
    """A network's measured normalized margin, typed: what the max-min certificate's lower end ``L`` is built from
    (docs/theory.md#certificate, docs/theory.md#compact-margin).

    ``value`` is the normalized margin in float64; ``error_bound`` a bound on ``|value - true margin|`` (rigorous for
    ``proved`` / ``certified``, a-priori for ``float``); ``exact`` the exact value as a sympy-parsable string, present
    exactly when ``exactness`` is ``proved``; ``method`` how it was computed, ``how`` the computation in one line.
    Other layers read these attributes, never ``VerificationResult.fields`` by key; the JSON entries are derived from
    them (:meth:`to_fields`).  Inconsistent values raise :class:`~margintheory.errors.InputError`.
    """

    value: float
    error_bound: float
    exactness: MarginExactness
    method: MarginMethod
    how: str
    exact: str | None = None

    def __post_init__(self) -> None:
        if self.exactness not in get_args(MarginExactness):
            raise InputError(f"margin exactness must be one of {get_args(MarginExactness)}, got {self.exactness!r}")
        if self.method not in get_args(MarginMethod):
            raise InputError(f"margin method must be one of {get_args(MarginMethod)}, got {self.method!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise InputError(f"margin value must be a number, got {self.value!r}")
        if isinstance(self.error_bound, bool) or not isinstance(self.error_bound, int | float) or not (
                math.isfinite(self.error_bound) and self.error_bound >= 0):
            raise InputError(f"margin error bound must be finite and >= 0, got {self.error_bound!r}")
        if (self.exact is not None) != (self.exactness == "proved"):
            raise InputError("a margin has an exact value exactly when it is proved "
                             f"(exactness {self.exactness!r}, exact {self.exact!r})")
        if self.exact is not None and (not isinstance(self.exact, str) or not self.exact.strip()):
            raise InputError(f"the exact margin must be a non-empty string, got {self.exact!r}")
        if not isinstance(self.how, str) or not self.how.strip():
            raise InputError("a margin must say how it was computed (how is empty)")

    def to_fields(self) -> dict[str, Any]:
        """The entries of ``VerificationResult.fields`` (the JSON output) that this measurement stands for."""
        out: dict[str, Any] = {"normalized_margin": float(self.value), "margin_tolerance": float(self.error_bound),
                               "lower_method": self.method, "lower_how": self.how, "lower_exactness": self.exactness}
        if self.exact is not None:
            out["normalized_margin_exact"] = self.exact
        return out


@dataclass
class VerificationResult:
    """A verdict with its checks and the measured quantities.

    ``fields`` holds every named quantity; the entries named in :data:`COMMON_FIELDS` (``gamma_star``,
    ``normalized_margin``, ``width``, ...) are the common fields of the result schema (typed read-only views below),
    all others are task-specific ``details``.  ``task`` names the task (``modular-addition``, ``parity``, ``group``,
    ``cogo``, or the command for ``solve``), ``parameters`` the problem it was run on; ``certificate`` is the optional
    two-sided bound object of the schema.  ``margin`` is the network's measured normalized margin as a typed
    :class:`MarginMeasurement` (``None`` when none was measured): the layers above read it there, not from ``fields``;
    set it with :meth:`set_margin`, which also writes its JSON entries.
    """

    title: str
    checks: list[Check] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    applicable: bool = True
    task: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    certificate: dict[str, Any] | None = None
    margin: MarginMeasurement | None = None
    #: why part of the asked-for work could not be done (a sweep's failed cells); the exit code is then 2
    incomplete: str | None = None

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def derive(self) -> VerificationResult:
        """Every check's exactness and assumptions from its premises (:func:`~margintheory.core.premises.
        derive_premises`; idempotent), in place; returns the result."""
        from margintheory.core.premises import derive_premises

        derive_premises(self.checks)
        return self

    def set_margin(self, margin: MarginMeasurement) -> MarginMeasurement:
        """Record the measured margin: the typed attribute and, derived from it, its entries of ``fields``."""
        if not isinstance(margin, MarginMeasurement):
            raise TypeError(f"margin must be a MarginMeasurement, got {type(margin).__name__}")
        self.margin = margin
        self.fields.update(margin.to_fields())
        return margin

    @property
    def verdict(self) -> Verdict:
        """``verified`` when every deciding check passed, ``refuted`` when one failed; ``undecided`` when none failed
        but a margin claim could not be decided (``fields["undecided_claims"]``: the engine's enclosure straddles the
        claim's tolerance, :mod:`margintheory.core.margin_claims`); ``not-applicable`` when the claims do not apply,
        or when no check decides (nothing was claimed: neither verified nor refuted)."""
        deciding = [c for c in self.checks if not c.informational]
        if not self.applicable or not (deciding or self.fields.get("undecided_claims")):
            return "not-applicable"
        if not all(c.passed for c in deciding):
            return "refuted"
        return "undecided" if self.fields.get("undecided_claims") else "verified"

    @property
    def exit_code(self) -> int:
        """0 verified, 1 refuted; ``not-applicable`` is 0 when every computed check passed, else 1; 2 when part of
        the work could not be done (:attr:`incomplete`) or a claim could not be decided (``undecided``)."""
        if self.incomplete:
            return 2
        if self.verdict == "verified":
            return 0
        if self.verdict == "undecided":
            return 2
        if self.verdict == "not-applicable":
            return 0 if all(c.passed for c in self.checks if not c.informational) else 1
        return 1

    @property
    def gamma_star(self) -> float | None:
        """The closed form's value for this problem (``None`` where no closed form applies)."""
        return _optional_float(self.fields.get("gamma_star"))

    @property
    def gamma_star_note(self) -> str:
        """Which closed form ``gamma_star`` is, or why there is none."""
        return str(self.fields.get("gamma_star_note") or "")

    @property
    def normalized_margin(self) -> float | None:
        """The measured normalized margin (``None`` when it was not computed)."""
        return _optional_float(self.fields.get("normalized_margin"))

    @property
    def ratio_to_gamma_star(self) -> float | None:
        """``normalized_margin / gamma_star`` (stored value if the producer computed it more precisely)."""
        stored = _optional_float(self.fields.get("ratio_to_gamma_star"))
        if stored is not None:
            return stored
        nm, g = self.normalized_margin, self.gamma_star
        return nm / g if nm is not None and g else None

    @property
    def relative_error(self) -> float | None:
        """``|normalized_margin - gamma_star| / gamma_star`` (stored value if computed exactly)."""
        stored = _optional_float(self.fields.get("relative_error"))
        if stored is not None:
            return stored
        nm, g = self.normalized_margin, self.gamma_star
        return abs(nm - g) / g if nm is not None and g else None

    @property
    def width(self) -> int | None:
        """Number of neurons of the network the verdict is about."""
        w = self.fields.get("width")
        return None if w is None else int(w)

    @property
    def seconds(self) -> float | None:
        """Wall time of the whole verification."""
        return _optional_float(self.fields.get("seconds"))

    @property
    def details(self) -> dict[str, Any]:
        """The task-specific values (every field that is not a common one)."""
        return {key: val for key, val in self.fields.items() if key not in COMMON_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON values, in the shape of the package's result schema."""
        from margintheory._version import __version__

        self.derive()
        out: dict[str, Any] = {
            "task": self.task,
            "title": self.title,
            "parameters": _jsonable(self.parameters),
            "gamma_star": _jsonable(self.gamma_star),
            "gamma_star_note": self.gamma_star_note,
            "normalized_margin": _jsonable(self.normalized_margin),
            "ratio_to_gamma_star": _jsonable(self.ratio_to_gamma_star),
            "relative_error": _jsonable(self.relative_error),
            "width": self.width,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "checks": [c.to_dict() for c in self.checks],
            "seconds": _jsonable(self.seconds),
            "version": __version__,
            "notes": list(self.notes),
            "details": _jsonable(self.details),
        }
        if self.certificate is not None:
            out["certificate"] = _jsonable(self.certificate)
        return out


def _optional_float(x: Any) -> float | None:
    return None if x is None else float(x)


def _jsonable(x: Any) -> Any:
    """Convert numpy / sympy scalars and containers into plain JSON values (non-finite floats as strings).
    numpy is not imported here: a numpy value exists only if numpy is loaded (``margintheory check`` never loads it)."""
    np = sys.modules.get("numpy")
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
