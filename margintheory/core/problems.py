"""Problem objects: a task's parameters validated once, at construction, and carried as one immutable value.

Every layer (verification, exact arithmetic, solvers, tasks, reports) receives the object instead of re-validating
loose integers.  Each object is a frozen dataclass with:

* ``task``: the task's registry name (``margintheory.verification.TASKS``);
* ``parameters()``: the JSON-ready parameters written into every result;
* the closed-form quantities of its theorem as cached properties, computed once by calling
  :mod:`margintheory.core.theory` (the home of the closed forms) or the task module's formula.

Invalid parameters raise :class:`~margintheory.errors.InputError` with a message in library terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from margintheory.core import theory
from margintheory.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import sympy as sp

    from margintheory.core.groups import FiniteGroup

GAMMA_STAR_FORMULA = "gamma* = 2 k! / ((2k+2)^((k+1)/2) (p-1) p^((k-1)/2))"


@dataclass(frozen=True)
class ModularAddition:
    """``k``-input modular addition mod ``p``: all ``p^k`` tuples, label ``(a_1 + ... + a_k) mod p``.

    ``p >= 3`` and ``k >= 1`` are integers (checked here, once).  The theorem (Theorem C.22 of Li, Liang, Shi, Song,
    Zhou, "Fourier circuits in neural networks", arXiv:2402.09469) assumes ``p`` an odd prime; odd composite ``p``
    is accepted and reported (``hypothesis``), even ``p`` has no closed form (``gamma_star`` is ``None``).
    """

    p: int
    k: int
    task: ClassVar[str] = "modular-addition"

    def __post_init__(self) -> None:
        p, k = theory.validate_pk(self.p, self.k)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "k", k)

    def parameters(self) -> dict[str, Any]:
        return {"p": self.p, "k": self.k}

    @cached_property
    def hypothesis(self) -> str:
        """``"odd-prime"`` (the papers' hypothesis), ``"odd-composite"`` or ``"even"``."""
        return theory.hypothesis_status(self.p)

    @property
    def applicable(self) -> bool:
        """Whether the closed form applies (odd ``p``)."""
        return self.p % 2 == 1

    @cached_property
    def gamma_star(self) -> float | None:
        """``gamma*`` in float64 (``None`` for even ``p``)."""
        return theory.gamma_star_of(self.p, self.k) if self.applicable else None

    @cached_property
    def gamma_star_exact(self) -> sp.Expr | None:
        """``gamma*`` as an exact sympy number (``None`` for even ``p``)."""
        return theory.gamma_star_exact_of(self.p, self.k) if self.applicable else None

    @property
    def gamma_star_note(self) -> str:
        if self.applicable:
            return f"Theorem C.22 (Fourier circuits): {GAMMA_STAR_FORMULA}"
        return f"p = {self.p} is even: the closed form of Theorem C.22 assumes odd p"

    @cached_property
    def theorem_width(self) -> int | None:
        """Width ``2^(2k-1)(p-1)/2`` of the construction of Lemma C.18 (``None`` for even ``p``)."""
        return theory.construction_width_of(self.p, self.k) if self.applicable else None

    @cached_property
    def frequencies(self) -> tuple[int, ...]:
        """The frequencies ``1 .. (p-1)/2``."""
        return tuple(theory.frequencies(self.p))


@dataclass(frozen=True)
class ModularAdditionEveryP:
    """``k``-input modular addition for **every odd** ``p >= 3`` at once (``p`` a symbol): Theorem C.22's claims as
    identities in ``p`` (docs/theory.md#every-p).  ``1 <= k <= MAX_K``; the theorem's own range, the odd primes, is
    contained; the width minima are stated for the primes ``p > 2k``.  ``even=True``: **every even** ``p >= 4``
    instead, where the max margin is ``gamma_even(p, k)`` (docs/theory.md#even-p-max-margin).
    """

    k: int
    even: bool = False
    task: ClassVar[str] = "modular-addition"
    MAX_K: ClassVar[int] = 12

    def __post_init__(self) -> None:
        k = theory.int_at_least("k", self.k, 1)
        if k > self.MAX_K:
            raise InputError(f"k must be <= {self.MAX_K} for the every-p proof (the exact moments of the networks and "
                             f"the width certificates grow fast beyond it), got {k}")
        if not isinstance(self.even, bool):
            raise InputError(f"even must be True or False, got {self.even!r}")
        object.__setattr__(self, "k", k)

    def parameters(self) -> dict[str, Any]:
        return {"k": self.k, "every_p": True, **({"even": True} if self.even else {})}

    @property
    def p_range(self) -> dict[str, Any]:
        """The range of ``p`` the claims are proved for (JSON ``details.p_range``)."""
        if self.even:
            return {"parity": "even", "min": 4, "max": None,
                    "claims": "every even p >= 4 (outside Theorem C.22's hypothesis: its formula is not the max margin "
                              "there for k >= 2)",
                    "theorem_hypothesis": "p an odd prime (not met)",
                    "width_minimum": "not stated at even p"}
        return {"parity": "odd", "min": 3, "max": None,
                "claims": "every odd p >= 3 (Theorem C.22's odd primes included)",
                "theorem_hypothesis": "p an odd prime",
                "width_minimum": f"every prime p > 2k = {2 * self.k} (no aliasing of the phase moments)"}


@dataclass(frozen=True)
class SparseParity:
    """``(n, k)`` sparse parity: all ``2^n`` points of ``{+1,-1}^n``, label ``prod_{j in S} x_j`` with ``|S| = k``.

    Theorem 7.8 of Morwani, Edelman, Oncescu, Zhao, Kakade, "Feature emergence via margin maximization",
    arXiv:2311.07568: ``gamma* = k! sqrt(2 (k+1)^-(k+1))`` for width ``m >= 2^(k-1)``.
    """

    n: int
    k: int
    task: ClassVar[str] = "parity"

    def __post_init__(self) -> None:
        n, k = theory.validate_nk(self.n, self.k)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "k", k)

    def parameters(self) -> dict[str, Any]:
        return {"n": self.n, "k": self.k}

    @cached_property
    def gamma_star(self) -> float:
        return theory.gamma_star_parity(self.k)

    @property
    def gamma_star_note(self) -> str:
        return "Theorem 7.8 (Morwani et al.): gamma* = k! sqrt(2 (k+1)^-(k+1)) for width >= 2^(k-1)"

    @property
    def theorem_width(self) -> int:
        return int(2 ** (self.k - 1))


@dataclass(frozen=True, eq=False)
class GroupComposition:
    """Composition ``(a, b) -> ab`` on a finite group: any group :func:`~margintheory.core.groups.parse_group` names
    (Theorem 7.9 of Morwani et al.).

    ``group`` is the group's name (``"S4"``, ``"C7"``); it is parsed once into :attr:`G`.
    """

    group: str
    G: FiniteGroup = field(init=False, repr=False)
    task: ClassVar[str] = "group"

    def __post_init__(self) -> None:
        from margintheory.core.groups import parse_group

        if not isinstance(self.group, str):
            raise InputError(f"group must be a name such as 'S4', 'D12' or 'C4xC4', got {self.group!r}")
        G = parse_group(self.group)
        object.__setattr__(self, "G", G)
        object.__setattr__(self, "group", G.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GroupComposition) and other.group == self.group

    def __hash__(self) -> int:
        return hash((GroupComposition, self.group))

    def parameters(self) -> dict[str, Any]:
        return {"group": self.group, "order": self.G.order}

    @property
    def order(self) -> int:
        return self.G.order

    @cached_property
    def irrep_dims(self) -> tuple[int, ...]:
        """Dimensions of the real irreducible representations (computed once, Young's orthogonal form)."""
        from margintheory.core.representations import real_irreps

        return tuple(int(R.dim) for R in real_irreps(self.G))

    @cached_property
    def theorem79_formula(self) -> float:
        """Theorem 7.9's closed form ``2 / (3 sqrt(3|G|) sum_{R != 1} d_R^2.5)`` (a max margin only where its
        hypotheses hold; the group task checks them)."""
        import numpy as np

        return float(theory.gamma_star_theorem79(self.order, np.array(self.irrep_dims)))


@dataclass(frozen=True)
class CoGO:
    """Tian's CoGO setting on ``Z_d`` (quadratic networks, two inputs): a named zero-loss construction
    (``F6``, ``F4``, ``F46``, ``memorize``) or, with ``construction=None``, a given network.

    Y. Tian, "Composing global optimizers to reasoning tasks via algebraic objects in neural nets" (CoGO),
    arXiv:2410.01779.  ``nu_angle`` / ``xi_angle`` set ``nu = e^{i nu_angle}`` (F6) and ``xi = e^{i xi_angle}``
    (F4, F46); ``k0`` is F46's order-6 frequency.
    """

    d: int
    construction: str | None = None
    nu_angle: float = 0.0
    xi_angle: float = 0.0
    k0: int = 1
    task: ClassVar[str] = "cogo"
    MAX_D: ClassVar[int] = 64
    #: a given (or trained) network: the paper's largest group is ``Z_127`` (Tian Table 2, Fig. 4)
    MAX_NETWORK_D: ClassVar[int] = 256
    CONSTRUCTIONS: ClassVar[tuple[str, ...]] = ("F6", "F4", "F46", "memorize")

    def __post_init__(self) -> None:
        d = self.d
        top = self.MAX_D if self.construction is not None else self.MAX_NETWORK_D
        if isinstance(d, bool) or not isinstance(d, int) or not 3 <= d <= top:
            what = "a construction" if self.construction is not None else "a network"
            raise InputError(f"d must be an integer in 3..{top} for {what}, got {d!r}")
        if self.construction is not None and self.construction not in self.CONSTRUCTIONS:
            names = ", ".join(self.CONSTRUCTIONS)
            raise InputError(f"unknown CoGO construction {self.construction!r}; choose from {names}")
        if self.construction == "F46" and d < 5:
            raise InputError("F46 needs d >= 5 (at least one order-4 frequency besides k0)")
        if isinstance(self.k0, bool) or not isinstance(self.k0, int):
            raise InputError(f"k0 must be an integer, got {self.k0!r}")
        for name in ("nu_angle", "xi_angle"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise InputError(f"{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))

    def parameters(self) -> dict[str, Any]:
        out: dict[str, Any] = {"d": self.d, "construction": self.construction}
        if self.construction is not None:
            out.update(nu_angle=self.nu_angle, xi_angle=self.xi_angle, k0=self.k0)
        return out

    @cached_property
    def gamma_star(self) -> float | None:
        """``gamma*(d, 2)`` of modular addition (odd ``d``); CoGO itself claims no margin."""
        return theory.gamma_star_of(self.d, 2) if self.d % 2 else None

    @property
    def gamma_star_note(self) -> str:
        if self.d % 2:
            return "modular addition's gamma*(d, k=2) (Theorem C.22); CoGO claims zero loss, not a margin"
        return f"d = {self.d} is even: the modular-addition closed form assumes odd d"


Problem = ModularAddition | ModularAdditionEveryP | SparseParity | GroupComposition | CoGO


def as_problem(p: int | ModularAddition, k: int | None = None) -> ModularAddition:
    """``p`` if it already is a :class:`ModularAddition` (validated once, when it was made), else
    ``ModularAddition(p, k)``: the one place where loose ``(p, k)`` become a problem."""
    if isinstance(p, ModularAddition):
        if k is not None and k != p.k:
            raise InputError(f"k = {k} given with a problem that has k = {p.k}")
        return p
    if k is None:
        raise InputError("k is required when p is given as an integer")
    return ModularAddition(p, k)
