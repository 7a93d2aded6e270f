"""The proved upper bound ``U`` on the max margin of every network for ``(p, k)``, and the steps behind it.

Chain (docs/theory.md#frequency-blocks; Li, Liang, Shi, Song, Zhou, "Fourier Circuits in Neural Networks and
Transformers", arXiv:2402.09469; Morwani et al., "Feature emergence via margin maximization", arXiv:2311.07568):

1. *weak duality* (Lemma C.6 of Li et al. / Lemma 7.6 of Morwani et al.; ``argued``): for a network of norm 1 the
   margin is at most the uniform average over (input, wrong label) pairs, which is
   ``sum_i ||theta_i||^(k+1) F(theta_i / ||theta_i||) <= max_{|theta| = 1} F``;
2. *Lemma C.14 and the frequency blocks* (``proved``: sympy for all ``p``, and exactly in ``Q(omega_p)`` at this
   ``(p, k)`` where cheap): ``F = sum_j c_j g_k(zeta_j)`` in orthonormal coordinates
   (:mod:`margintheory.symbolic.block_reduction`);
3. *homogeneity* (``argued``): each block is a form of degree ``k + 1``, so ``F_j(y_j) <= M_j |y_j|^(k+1)`` and
   ``sum_j |y_j|^(k+1) <= (sum_j |y_j|^2)^((k+1)/2) <= 1``: ``max F <= max_j max(0, M_j)``;
4. *the bound on the block form* (``proved``), by one of two methods:

   * ``method="am-gm"`` (what ``verify`` uses): ``max_{|z| = 1} g_k = (k+1)^-((k+1)/2)`` exactly, by the AM-GM
     certificate of :func:`margintheory.certificate.am_gm.block_form_maximum` (no solver, milliseconds, any ``k``);
   * ``method="sos"`` (the cross-check, and the library default): ``max_{|z| = 1} g_k <= B`` with ``B`` rational,
     from the solver's certificate rounded and checked exactly (:mod:`margintheory.certificate.rational_sos`);
5. ``U`` with ``U^2 >= c_j^2 B^2`` for every block (``proved``, exact rationals): with AM-GM ``U^2 = max_j c_j^2
   (k+1)^-(k+1)`` exactly (``U`` itself the square root of a rational), with SOS ``U`` rational.

Nothing here uses the closed form ``gamma*``; it is only compared with ``U`` by the callers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from margintheory.certificate import checker
from margintheory.certificate.checker import ceil_sqrt
from margintheory.certificate.rational_sos import RationalSOS, exact_certificate
from margintheory.certificate.steps import ProofStep
from margintheory.core.problems import ModularAddition, as_problem
from margintheory.errors import InputError, SolverError
from margintheory.runtime import progress

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.certificate.am_gm import BlockFormMaximum

WEAK_DUALITY = ("weak duality: max margin of any network <= max_{|theta| <= 1} F (uniform q, tau)",
                "Lemma C.6 of Li et al. (arXiv:2402.09469) / Lemma 7.6 of Morwani et al. (arXiv:2311.07568): the "
                "minimum over (input, wrong label) pairs is at most their uniform average, which for a network of "
                "norm 1 is sum_i ||theta_i||^(k+1) F(theta_i/||theta_i||) <= max_{|theta| = 1} F")
HOMOGENEITY = ("homogeneity: max_{|y| <= 1} sum_j F_j(y_j) <= max_j max(0, max_{|y_j| = 1} F_j)",
               "each block F_j is a form of degree k+1, so F_j(y_j) <= M_j |y_j|^(k+1), and "
               "sum_j |y_j|^(k+1) <= (sum_j |y_j|^2)^((k+1)/2) <= 1 for k >= 1")

#: the argued half of Lemma C.14's proof for all p (the name of its row and the reason): sympy proves the arithmetic of
#: each step, which terms cancel is read off the expansion
C14_TERMS = "U: C.14 terms that cancel"
C14_TERMS_REASON = (
    "which terms of the expanded single-neuron objective vanish is read off the expansion, not computed for symbolic "
    "p: a multinomial type that misses f >= 1 of the input positions sums to zero over the free inputs, "
    "cross-frequency terms vanish by the orthogonality of characters, and the terms j and p - j pair "
    "(docs/theory.md#frequency-blocks); sympy proves the arithmetic of each of these statements, and verify at one "
    "(p, k) expands the objective exactly in Q(omega_p) (row 'blocks decouple (C.14)')")

@dataclass
class ProvedUpperBound:
    """``U`` with the chain of steps and the certificate of the block form it rests on.

    ``upper`` and ``block_bound`` are rationals ``>=`` the proved values (equal to them with SOS, and with AM-GM
    when the values are rational); ``upper_squared`` and ``block_bound_squared`` are the exact squares of the proved
    values (what exact comparisons use).  ``method``: ``"sos"`` (``sos`` is the certificate) or ``"am-gm"``
    (``am_gm`` is)."""

    p: int
    k: int
    upper: Fraction
    block_bound: Fraction
    constants: list[dict[str, Any]]
    sos: RationalSOS | None
    steps: list[ProofStep]
    solver: dict[str, Any]
    seconds: float
    reduction_check: dict[str, Any] = field(default_factory=dict)
    method: str = "sos"
    am_gm: BlockFormMaximum | None = None
    #: the exact squares when ``upper`` / ``block_bound`` are only rationals above the proved values (AM-GM)
    exact_upper_squared: Fraction | None = None
    exact_block_bound_squared: Fraction | None = None

    @property
    def upper_squared(self) -> Fraction:
        """``U^2`` exactly."""
        return self.upper * self.upper if self.exact_upper_squared is None else self.exact_upper_squared

    @property
    def block_bound_squared(self) -> Fraction:
        """The square of the proved bound on ``max_{|z|=1} g_k``, exactly."""
        return (self.block_bound * self.block_bound if self.exact_block_bound_squared is None
                else self.exact_block_bound_squared)

    @property
    def upper_text(self) -> str:
        """``U`` written exactly: ``"a/b"``, or ``"sqrt(a/b)"`` when only its square is rational."""
        from margintheory.certificate.am_gm import algebraic_text

        return str(self.upper) if self.method == "sos" else algebraic_text(self.upper_squared)

    @property
    def proved(self) -> bool:
        return all(s.passed for s in self.steps)

    @property
    def upper_float(self) -> float:
        """``U`` rounded up to a float64 (so the float is an upper bound too)."""
        return ceil_float(self.upper)

    def reduction_json(self) -> dict[str, Any]:
        return {"p": self.p, "k": self.k,
                "statement": "with uniform q, tau the single-neuron objective is sum over frequency blocks of "
                             "c_b g_k(zeta_b) in orthonormal coordinates (Lemma C.14 of Li et al., arXiv:2402.09469)",
                "blocks": [{"frequencies": c["frequencies"], "domain": c["domain"],
                            "constant_squared": str(c["constant_squared"])} for c in self.constants],
                "exact_check_at_p_k": self.reduction_check,
                "steps": [s.to_dict() for s in self.steps]}


def ceil_float(x: Fraction) -> float:
    """The smallest float64 ``>= x``."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def floor_float(x: Fraction) -> float:
    """The largest float64 ``<= x``."""
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


@lru_cache(maxsize=16)
def _block_certificate(k: int, max_memory: int, time_limit: float | None) -> tuple[RationalSOS, dict[str, Any]]:
    from margintheory.certificate.block_sos import kkt_residuals, solve_block_sos

    sol = solve_block_sos(k, max_memory=max_memory, time_limit=time_limit)
    cert = exact_certificate(sol)
    info = {"name": "Clarabel", "status": sol.status, "iterations": sol.solution.iterations,
            "solve_seconds": sol.seconds, "float_optimum": sol.gamma, "kkt": kkt_residuals(sol.solution),
            "gram_blocks": len(sol.structure.blocks), "largest_block": max(len(b) for b in sol.structure.blocks),
            "shift_delta": str(cert.delta), "rounding_tries": cert.tries}
    return cert, info


def block_form_certificate(k: int, *, max_memory: int = 2 * 2**30,
                           time_limit: float | None = None) -> tuple[RationalSOS, dict[str, Any]]:
    """The exact SOS certificate ``max_{|z| = 1} g_k <= B`` of the block form and the solver's record (cached per
    ``k``): the one ``p``-independent ingredient of ``U`` (docs/theory.md#every-p)."""
    return _block_certificate(k, max_memory, time_limit)


@lru_cache(maxsize=8)
def _symbolic_proof(k: int) -> tuple[bool, str]:
    from margintheory.symbolic.block_reduction import lemma_c14_for_all_p

    d = lemma_c14_for_all_p(k)
    unproved = [s for s in d.steps if s.check.kind in ("assumed", "argued")]
    return d.all_passed and not unproved, d.summary()


#: the methods of step 4 (module docstring)
UPPER_METHODS = ("am-gm", "sos")


def prove_upper_bound(p: int | ModularAddition, k: int | None = None, *, max_memory: int = 2 * 2**30,
                      time_limit: float | None = None, exact_reduction: bool = True,
                      method: str = "sos") -> ProvedUpperBound:
    """The chain of the module docstring for the problem ``p`` (or ``ModularAddition(p, k)``); raises
    :class:`SolverError` if a proved step fails.  Deterministic, so cached per process (``verify`` and its
    certificate file share one computation).  ``method``: how the block form is bounded (``"am-gm"``: exactly, no
    solver; ``"sos"``: the SOS certificate)."""
    if method not in UPPER_METHODS:
        raise InputError(f"method must be one of {', '.join(UPPER_METHODS)}, got {method!r}")
    problem = as_problem(p, k)
    return _prove_upper_bound(problem, max_memory, time_limit, exact_reduction, method)


@lru_cache(maxsize=32)
def _prove_upper_bound(problem: ModularAddition, max_memory: int, time_limit: float | None,
                       exact_reduction: bool, method: str = "sos") -> ProvedUpperBound:
    if method == "am-gm":
        return am_gm_upper_bound(problem, exact_reduction)
    return upper_bound_chain(problem, max_memory, time_limit, exact_reduction)


def am_gm_upper_bound(problem: ModularAddition, exact_reduction: bool = True) -> ProvedUpperBound:
    """The chain of the module docstring with step 4 by AM-GM: ``U^2 = max_b c_b^2 (k+1)^-(k+1)`` exactly (no
    solver; the symbolic proof of Lemma C.14 is cached per ``k``); raises :class:`SolverError` when a step fails."""
    from margintheory.certificate.am_gm import BLOCK_FORM_MAXIMUM_NAME, block_form_maximum, upper_sqrt

    p, k = problem.p, problem.k
    t0 = time.perf_counter()
    steps = _reduction_steps(problem, exact_reduction)
    check = steps.pop()
    am = block_form_maximum(k)
    steps.append(ProofStep(BLOCK_FORM_MAXIMUM_NAME, "proved", am.proved, am.detail))
    constants = checker.block_constants_squared(p, k)
    U2 = max(c["constant_squared"] for c in constants) * am.bound_squared
    steps.append(ProofStep("U = max_b c_b max g_k (exact: squares of algebraic numbers compared)", "proved",
                           all(U2 >= c["constant_squared"] * am.bound_squared for c in constants),
                           f"U^2 = {U2}"))
    info = {"name": "AM-GM (no solver)", "status": "proved" if am.proved else "failed", "iterations": 0,
            "solve_seconds": am.seconds}
    out = ProvedUpperBound(p, k, upper_sqrt(U2), am.bound, constants, None, steps, info,
                           time.perf_counter() - t0, check, method="am-gm", am_gm=am, exact_upper_squared=U2,
                           exact_block_bound_squared=am.bound_squared)
    if not out.proved:
        failed = next(s.name for s in steps if not s.passed)
        raise SolverError(f"upper bound for (p, k) = ({p}, {k}): step failed: {failed}")
    return out


def _reduction_steps(problem: ModularAddition, exact_reduction: bool) -> list[Any]:
    """Weak duality, Lemma C.14 (sympy, all ``p``; exactly at ``(p, k)`` where cheap) and homogeneity, with the
    exact check's record appended last (popped by the caller)."""
    from margintheory.symbolic.block_reduction import exact_reduction_check

    p, k = problem.p, problem.k
    steps: list[Any] = [ProofStep(WEAK_DUALITY[0], "argued", True, WEAK_DUALITY[1])]
    ok, summary = _symbolic_proof(k)
    steps.append(ProofStep("Lemma C.14 and the block closed form F = sum_b c_b g_k(zeta_b), for all p (sympy)",
                           "proved", ok, summary))
    check = exact_reduction_check(problem) if exact_reduction else {"ran": False, "reason": "not requested"}
    if check.get("ran"):
        steps.append(ProofStep(f"Lemma C.14 at (p, k) = ({p}, {k}) expanded exactly in Q(omega_{p})", "proved",
                               bool(check["matches"]), f"{check['monomials_compared']} monomials compared"))
    steps.append(ProofStep(HOMOGENEITY[0], "argued", True, HOMOGENEITY[1]))
    return [*steps, check]


def upper_bound_chain(problem: ModularAddition, max_memory: int, time_limit: float | None,
                      exact_reduction: bool) -> ProvedUpperBound:
    """The chain of the module docstring, computed (the SOS certificate and the symbolic proof of Lemma C.14 are
    cached per ``k``); raises :class:`SolverError` when a proved step fails."""
    p, k = problem.p, problem.k
    t0 = time.perf_counter()
    stage = f"proved upper bound for k = {k} (Lemma C.14, SOS solve, exact checks)"
    progress.report(stage, 0, 4)
    *steps, check = _reduction_steps(problem, exact_reduction)
    progress.report(stage, 1, 4)  # (the symbolic proof of Lemma C.14 and, where cheap, its exact check at (p, k))
    progress.report(stage, 2, 4)
    cert, info = _block_certificate(k, max_memory, time_limit)
    progress.report(stage, 3, 4)
    B = cert.bound
    steps.append(ProofStep("SOS certificate: max_{|z|=1} g_k <= B (exact identity, exact LDL^T of every Gram block)",
                           "proved", True, f"B = {B} ({float(B):.15g}); {info['gram_blocks']} blocks, largest "
                           f"{info['largest_block']}; shift {info['shift_delta']}"))
    constants = checker.block_constants_squared(p, k)
    U = max(ceil_sqrt(c["constant_squared"] * B * B) for c in constants)
    holds = all(U * U >= c["constant_squared"] * B * B for c in constants)
    steps.append(ProofStep("U >= c_b B for every frequency block (exact rationals, squares compared)", "proved",
                           holds, f"U = {U}"))
    progress.report(stage, 4, 4)
    out = ProvedUpperBound(p, k, U, B, constants, cert, steps, info, time.perf_counter() - t0, check)
    if not out.proved:
        failed = next(s.name for s in steps if not s.passed)
        raise SolverError(f"upper bound for (p, k) = ({p}, {k}): step failed: {failed}")
    return out


def certificate_document(ub: ProvedUpperBound, lower: str | None, lower_exactness: str, lower_how: str,
                         gap_at_most: Fraction | None) -> dict[str, Any]:
    """The self-contained certificate file (format of :mod:`margintheory.certificate.checker`, version 1)."""
    from margintheory._version import __version__

    return {
        "format": checker.FORMAT,
        "version": checker.VERSION,
        "producer": f"margintheory {__version__}",
        "p": ub.p,
        "k": ub.k,
        "statement": f"every one-hidden-layer network f(a)[c] = sum_i (u_i1[a_1]+...+u_ik[a_k])^k w_i[c] of any width "
                     f"on modular addition mod {ub.p} with {ub.k} inputs has L_(2,k+1)-normalized margin <= upper; "
                     "lower is the normalized margin of an explicit network",
        "claim": {"lower": lower, "upper": ub.upper_text, "relative_gap_at_most": None if gap_at_most is None
                  else str(gap_at_most), "lower_exactness": lower_exactness, "lower_how": lower_how,
                  "upper_exactness": "proved"},
        "reduction": ub.reduction_json(),
        **({"am_gm": ub.am_gm.to_json()} if ub.am_gm is not None else
           {"sos": ub.sos.to_json()} if ub.sos is not None else {}),
        "solver": ub.solver,
    }
