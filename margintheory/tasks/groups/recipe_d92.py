"""Appendix D.9.2 of Morwani et al. (arXiv:2311.07568): the recipe for a finite group where Theorem 7.9's condition
fails, implemented as printed and compared with the class LP (docs/theory.md#group-recipe).

Choose ``kappa_R`` (non-trivial irreps) and ``kappa_C`` (non-trivial classes) with ``|kappa_R| = |kappa_C|``.

* *System 1* (class weights, unknowns ``pi_C``, ``C in kappa_C``): ``lam_m / sqrt(d_m) = lam_m' / sqrt(d_m')`` for
  ``m, m' in kappa_R`` with ``lam_m = 1 - sum_(C in kappa_C) pi_C chi_m(C) / d_m``, and ``sum pi_C = 1``.  The paper
  writes the normalization ``sum tau_(C_n) = 1``; with per-element weights ``tau_c`` summing to 1 over the wrong labels
  (Eq. D.7) it is the class masses ``pi_C = |C| tau_C`` that sum to 1, which is what is solved here.
* *System 2* (output scaling, unknowns ``lam*_m``, ``m in kappa_R``): ``sum_m lam*_m chi_m(C)`` equal for all ``C in
  kappa_C``, and ``sum_m lam*_m = 1``.
* *Conditions*: (1) ``pi, lam* >= 0``; (2) no irrep outside ``kappa_R`` has a larger ``lam_m / sqrt(d_m)``; (3) no
  class outside ``kappa_C`` has a larger ``sum_m lam*_m chi_m(C)`` (ties allowed, as printed).

When they hold, the recipe's value is ``2 lam_m / (3 sqrt 3 |G|^(3/2) sqrt(d_m))`` (Lemma D.13 with the factor 2), and
the blocks of ``kappa_R`` with masses ``mu_m ∝ lam*_m / kappa_m`` form a network (:attr:`RecipeSolution.masses`):
:func:`recipe_checks` builds it (Lemma D.15's blocks) and measures its margin on all ``|G|^2`` inputs, through the
caller's ``network_margin`` (the class margins from the characters, :attr:`RecipeSolution.network_margin`, are the
LP's formula and only reported).  :func:`search_recipe` tries every equal-size pair of subsets of the irreps tight
under the LP's dual and the classes on the margin of the LP's network (where any optimal pair must lie), and
``kappa = everything`` (which is Theorem 7.9 itself).  Conditions are decided in float64 with relative tolerance
:data:`COND_TOL`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from margintheory.core.checks import Check
from margintheory.tasks.groups import margin as gm

COND_TOL = 1e-12
VALUE_TOL = 1e-9
#: at most this many subset pairs are tried (S_6's tight sets give 924)
MAX_PAIRS = 20000


@dataclass
class RecipeSolution:
    """The two systems' solutions for ``(kappa_R, kappa_C)`` and the three conditions."""

    irreps: tuple[int, ...]
    classes: tuple[int, ...]
    pi: np.ndarray  # over all classes (0 outside kappa_C; entry 0 = identity)
    scaling: np.ndarray  # lam*, over all irreps (0 outside kappa_R)
    conditions: tuple[bool, bool, bool]
    value: float
    network_margin: float  # from the characters (the LP's class-margin formula), reported only
    masses: np.ndarray  # mu over all irreps: the network's block masses (sum 1; 0 outside kappa_R)

    @property
    def holds(self) -> bool:
        return all(self.conditions)


def _system_one(X: np.ndarray, dims: np.ndarray, kR: tuple[int, ...], kC: tuple[int, ...]) -> np.ndarray | None:
    rows, rhs = [], []
    coef = [(-X[m, list(kC)] / dims[m] / math.sqrt(dims[m]), 1 / math.sqrt(dims[m])) for m in kR]
    for r, c in coef[1:]:
        rows.append(r - coef[0][0])
        rhs.append(coef[0][1] - c)
    rows.append(np.ones(len(kC)))
    rhs.append(1.0)
    A = np.array(rows)
    if abs(np.linalg.det(A)) < 1e-12 * max(1.0, float(np.abs(A).max()) ** len(kC)):
        return None
    return np.linalg.solve(A, np.array(rhs))


def _system_two(X: np.ndarray, kR: tuple[int, ...], kC: tuple[int, ...]) -> np.ndarray | None:
    A = np.array([[X[m, C] - X[m, kC[0]] for m in kR] for C in kC[1:]] + [[1.0] * len(kR)])
    if abs(np.linalg.det(A)) < 1e-12 * max(1.0, float(np.abs(A).max()) ** len(kR)):
        return None
    return np.linalg.solve(A, np.array([0.0] * (len(kC) - 1) + [1.0]))


def recipe(X: np.ndarray, dims: np.ndarray, order: int, kR: tuple[int, ...],
           kC: tuple[int, ...]) -> RecipeSolution | None:
    """The recipe of the module docstring for one pair of sets (``None`` when a system is singular)."""
    K = len(dims)
    p, s = _system_one(X, dims, kR, kC), _system_two(X, kR, kC)
    if p is None or s is None:
        return None
    pi, scaling = np.zeros(K), np.zeros(K)
    pi[list(kC)], scaling[list(kR)] = p, s
    ratio = (1 - (X @ pi) / dims) / np.sqrt(dims)  # lam_m / sqrt(d_m) for every irrep
    best = float(ratio[list(kR)].max())
    out = X.T @ scaling  # sum_m lam*_m chi_m(C) for every class
    top = float(out[list(kC)].max())
    others_R = [m for m in range(1, K) if m not in kR]
    others_C = [C for C in range(1, K) if C not in kC]
    conditions = (bool(p.min() >= -COND_TOL and s.min() >= -COND_TOL),
                  all(ratio[m] <= best + COND_TOL * abs(best) for m in others_R),
                  all(out[C] <= top + COND_TOL * max(1.0, abs(top)) for C in others_C))
    value = 2 * best / (3 * math.sqrt(3) * order**1.5)
    kap = np.array([gm.kappa(order, int(d)) for d in dims])
    mu = np.where(scaling > 0, scaling, 0.0) / kap
    mu = mu / mu.sum() if mu.sum() > 0 else mu
    margin = float(gm.class_margins(mu, X, order, dims).min()) if mu.sum() > 0 else -math.inf
    return RecipeSolution(tuple(kR), tuple(kC), pi, scaling, conditions, value, margin, mu)


@dataclass
class RecipeSearch:
    """What :func:`search_recipe` tried and found."""

    pairs_tried: int
    solutions: list[RecipeSolution]
    everything: RecipeSolution | None
    tight_irreps: list[int]
    tight_classes: list[int]
    notes: list[str] = field(default_factory=list)

    @property
    def smallest(self) -> RecipeSolution | None:
        return min(self.solutions, key=lambda s: (len(s.irreps), s.irreps, s.classes), default=None)


def search_recipe(X: np.ndarray, dims: np.ndarray, order: int, lp: gm.ClassLP) -> RecipeSearch:
    """Every equal-size pair of subsets of the LP-tight irreps and classes (module docstring), and ``kappa = all``."""
    K = len(dims)
    tight_R = [int(r) for r in gm.tight_irreps(lp, X, order, dims)]
    cm = gm.class_margins(lp.mu, X, order, dims)
    tight_C = [int(c) + 1 for c in np.flatnonzero(cm <= cm.min() * (1 + 1e-9))]
    everything = recipe(X, dims, order, tuple(range(1, K)), tuple(range(1, K)))
    found, tried = [], 0
    for size in range(1, min(len(tight_R), len(tight_C)) + 1):
        for kR in itertools.combinations(tight_R, size):
            for kC in itertools.combinations(tight_C, size):
                tried += 1
                if tried > MAX_PAIRS:
                    raise ValueError(f"the D.9.2 search would try more than {MAX_PAIRS} pairs")
                sol = recipe(X, dims, order, kR, kC)
                if sol is not None and sol.holds:
                    found.append(sol)
    return RecipeSearch(tried, found, everything, tight_R, tight_C)


#: ``network_margin(mu) -> (margin, error bound, how)``: the normalized margin of the block network with masses ``mu``
#: measured on all ``|G|^2`` inputs
NetworkMargin = Callable[[np.ndarray], tuple[float, float, str]]


def recipe_checks(search: RecipeSearch, lp: gm.ClassLP, names: list[str], network_margin: NetworkMargin,
                  prefer: np.ndarray | None = None) -> list[Check]:
    """The recipe against the LP (deciding): a pair meeting the three conditions exists (none is a failed row: the
    recipe did not deliver), every such pair's value equals the LP value, and the network of one pair (the one whose
    masses are ``prefer``, a network the caller has measured already, else the smallest), built and measured by
    ``network_margin``, has the LP value as its margin; ``kappa = all`` (informational)."""
    allc = search.everything
    rows = [Check(name="D.9.2 with kappa = all", expected="conditions 1-3", measured=list(allc.conditions) if allc
                  else "singular", tolerance=COND_TOL, passed=bool(allc and allc.holds), exactness="float",
                  informational=True, detail="kappa_R = every non-trivial irrep, kappa_C = every non-trivial class: "
                  "the recipe is then Theorem 7.9 (system 1 gives Lemma D.14's weights, system 2 lam* ∝ d_R)",
                  statement="App. D.9.2 with kappa_R, kappa_C = all: conditions (1)-(3) hold iff Theorem 7.9 applies")]
    statement = ("App. D.9.2: some choice of kappa_R, kappa_C meets conditions (1)-(3), every such choice has the LP "
                 "max margin as its value, and its network (built) has that margin")
    best = search.smallest
    if best is None:
        rows.append(Check(name="D.9.2 recipe = LP", expected=lp.primal, measured=None, tolerance=VALUE_TOL,
                          passed=False, exactness="float",
                          detail=f"no pair among {search.pairs_tried} (subsets of the LP-tight irreps "
                                 f"{[names[r] for r in search.tight_irreps]} and classes {search.tight_classes}) "
                                 "meets conditions 1-3: the recipe gives no network",
                          statement=statement))
        return rows
    dev = max(abs(s.value - lp.primal) for s in search.solutions) / lp.primal
    if prefer is not None:
        best = next((s for s in search.solutions if np.allclose(s.masses, prefer, rtol=0.0, atol=1e-12)), best)
    margin, bound, how = network_margin(best.masses)
    net_dev = abs(margin - lp.primal)
    net_tol = VALUE_TOL * lp.primal + bound
    formula_dev = max(abs(s.network_margin - lp.primal) for s in search.solutions) / lp.primal
    ok = dev <= VALUE_TOL and net_dev <= net_tol
    rows.append(Check(name="D.9.2 recipe = LP", expected=lp.primal, measured=margin, tolerance=VALUE_TOL,
                      passed=ok, exactness="float",
                      detail=f"{len(search.solutions)} of {search.pairs_tried} pairs (subsets of the LP-tight irreps "
                             f"{[names[r] for r in search.tight_irreps]} and classes {search.tight_classes}) meet "
                             f"conditions 1-3; max relative deviation of their values from the LP value {dev:.2e}; "
                             f"built for kappa_R = {[names[r] for r in best.irreps]}, kappa_C = {list(best.classes)}: "
                             f"its network (Lemma D.15 blocks, masses mu ∝ lam*/kappa) built, margin {margin:.12g} "
                             f"measured {how} (error bound {bound:.1e}), deviation from the LP value {net_dev:.2e} "
                             f"(tolerance {net_tol:.1e}); the class-margin formula of the pairs' networks deviates "
                             f"{formula_dev:.2e} (reported only)",
                      statement=statement))
    return rows
