"""The proved upper bound ``U`` (:mod:`margintheory.certificate.upper_bound`) pinned so that a weakened chain fails:
every step named with its exactness, ``U`` the smallest dyadic above every block's bound (the real block for even
``p``), a failed step raising instead of returning a bound, the float roundings outward, and the certificate file's
fields.  The SOS solve and the symbolic proof are cached per ``k`` (a fraction of a second after the first test);
this module is the test selection of the mutation gate's ``certificate`` area."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import pytest

from margintheory.certificate import checker, upper_bound
from margintheory.certificate.upper_bound import HOMOGENEITY, WEAK_DUALITY, ceil_float, floor_float
from margintheory.core.problems import ModularAddition
from margintheory.errors import SolverError
from margintheory.runtime import progress

F = Fraction
LEMMA = "Lemma C.14 and the block closed form F = sum_b c_b g_k(zeta_b), for all p (sympy)"
SOS = "SOS certificate: max_{|z|=1} g_k <= B (exact identity, exact LDL^T of every Gram block)"
UPPER = "U >= c_b B for every frequency block (exact rationals, squares compared)"


def chain(p=5, k=2, exact=True):
    return upper_bound.upper_bound_chain(ModularAddition(p, k), 2 * 2**30, None, exact)


def test_the_chain_of_steps_and_u():
    calls = []
    t = time.perf_counter()
    with progress.reporting(lambda what, done, total: calls.append((what, done, total))):
        ub = chain()
    assert 0 <= ub.seconds <= time.perf_counter() - t
    stage = "proved upper bound for k = 2 (Lemma C.14, SOS solve, exact checks)"
    assert calls == [(stage, i, 4) for i in range(5)]
    assert [(s.name, s.exactness, s.passed) for s in ub.steps] == [
        (WEAK_DUALITY[0], "argued", True), (LEMMA, "proved", True),
        ("Lemma C.14 at (p, k) = (5, 2) expanded exactly in Q(omega_5)", "proved", True),
        (HOMOGENEITY[0], "argued", True), (SOS, "proved", True), (UPPER, "proved", True)]
    assert ub.steps[0].detail == WEAK_DUALITY[1] and ub.steps[3].detail == HOMOGENEITY[1]
    assert ub.steps[2].detail == f"{ub.reduction_check['monomials_compared']} monomials compared"
    B = ub.block_bound
    assert B == ub.sos.bound and ub.steps[5].detail == f"U = {ub.upper}"
    info = ub.solver
    assert ub.steps[4].detail == (f"B = {B} ({float(B):.15g}); {info['gram_blocks']} blocks, largest "
                                  f"{info['largest_block']}; shift {info['shift_delta']}")
    assert ub.constants == checker.block_constants_squared(5, 2) and (ub.p, ub.k) == (5, 2)
    (c2,) = [c["constant_squared"] for c in ub.constants]
    assert ub.upper == checker.ceil_sqrt(c2 * B * B) and ub.upper**2 >= c2 * B * B and ub.proved
    assert ub.reduction_check["ran"] and ub.reduction_check["matches"]


def test_even_p_u_covers_the_larger_real_block_and_no_exact_step_when_not_asked():
    ub = chain(4, 2, exact=False)
    complex2, real2 = (c["constant_squared"] for c in ub.constants)
    B = ub.block_bound
    assert real2 > complex2 and ub.upper == checker.ceil_sqrt(real2 * B * B)
    assert ub.reduction_check == {"ran": False, "reason": "not requested"}
    assert [s.name for s in ub.steps] == [WEAK_DUALITY[0], LEMMA, HOMOGENEITY[0], SOS, UPPER]


def test_a_failed_step_raises_instead_of_returning_a_bound(monkeypatch):
    monkeypatch.setattr(upper_bound, "_symbolic_proof", lambda k: (False, "broken"))
    with pytest.raises(SolverError) as exc:
        chain()
    assert str(exc.value) == f"upper bound for (p, k) = (5, 2): step failed: {LEMMA}"
    monkeypatch.undo()
    from margintheory.symbolic import block_reduction

    monkeypatch.setattr(block_reduction, "exact_reduction_check",
                        lambda problem: {"ran": True, "matches": False, "monomials_compared": 3})
    with pytest.raises(SolverError, match=r"step failed: Lemma C\.14 at \(p, k\) = \(5, 2\) expanded exactly"):
        chain()
    monkeypatch.undo()
    monkeypatch.setattr(upper_bound, "ceil_sqrt", lambda v: checker.ceil_sqrt(v) * (1 - F(1, 10**15)))
    with pytest.raises(SolverError, match=r"step failed: U >= c_b B for every frequency block"):
        chain()


def test_prove_upper_bound_takes_a_problem_or_p_and_k_and_is_cached():
    a = upper_bound.prove_upper_bound(5, 2)
    assert upper_bound.prove_upper_bound(ModularAddition(5, 2)) is a
    assert a.upper == chain().upper and a.reduction_check["ran"]  # the exact expansion by default
    assert a.steps[1].detail == upper_bound._symbolic_proof(2)[1] and "proved" in a.steps[1].detail


def test_the_time_limit_reaches_the_solve(monkeypatch):
    seen = []
    real = upper_bound._block_certificate

    def spy(k, max_memory, time_limit):
        seen.append(time_limit)
        return real(k, max_memory, None)

    monkeypatch.setattr(upper_bound, "_block_certificate", spy)
    upper_bound._prove_upper_bound.cache_clear()  # (an earlier run of this test may have cached the bound)
    upper_bound.upper_bound_chain(ModularAddition(5, 2), 2 * 2**30, 123.0, False)
    upper_bound.prove_upper_bound(5, 2, time_limit=321.0, exact_reduction=False)
    assert seen == [123.0, 321.0]


def test_u_equal_to_the_block_bound_is_allowed():
    """For (3, 1) the block constant is c = 1/2 and B is dyadic: U = c B exactly, and the step holds."""
    ub = chain(3, 1)
    (c2,) = [c["constant_squared"] for c in ub.constants]
    assert c2 == F(1, 4) and ub.upper * ub.upper == c2 * ub.block_bound**2 and ub.proved


def test_float_roundings_are_outward():
    for x in (F(1, 3), F(-1, 3), F(2, 7) * 10**-300, F(10**400 + 1, 10**100)):
        up, down = ceil_float(x), floor_float(x)
        assert F(up) >= x and F(math.nextafter(up, -math.inf)) < x
        assert F(down) <= x and F(math.nextafter(down, math.inf)) > x
    assert ceil_float(F(1, 4)) == floor_float(F(1, 4)) == 0.25
    ub = chain()
    assert ub.upper_float == ceil_float(ub.upper)


def test_certificate_document_and_reduction_json():
    from margintheory import __version__

    ub = chain()
    doc = upper_bound.certificate_document(ub, "1/40", "proved", "how", F(1, 100))
    assert doc == {
        "format": "margintheory-maxmin-certificate", "version": 1, "producer": f"margintheory {__version__}",
        "p": 5, "k": 2,
        "statement": "every one-hidden-layer network f(a)[c] = sum_i (u_i1[a_1]+...+u_ik[a_k])^k w_i[c] of any width "
                     "on modular addition mod 5 with 2 inputs has L_(2,k+1)-normalized margin <= upper; lower is the "
                     "normalized margin of an explicit network",
        "claim": {"lower": "1/40", "upper": str(ub.upper), "relative_gap_at_most": "1/100", "lower_exactness": "proved",
                  "lower_how": "how", "upper_exactness": "proved"},
        "reduction": ub.reduction_json(), "sos": ub.sos.to_json(), "solver": ub.solver}
    assert upper_bound.certificate_document(ub, None, "float", "", None)["claim"]["relative_gap_at_most"] is None
    red = ub.reduction_json()
    assert red == {"p": 5, "k": 2,
                   "statement": "with uniform q, tau the single-neuron objective is sum over frequency blocks of "
                                "c_b g_k(zeta_b) in orthonormal coordinates (Lemma C.14 of Li et al., "
                                "arXiv:2402.09469)",
                   "blocks": [{"frequencies": "1..2", "domain": "complex", "constant_squared": "1/40"}],
                   "exact_check_at_p_k": ub.reduction_check, "steps": [s.to_dict() for s in ub.steps]}
    assert ub.steps[0].to_dict() == {"name": WEAK_DUALITY[0], "exactness": "argued", "passed": True,
                                     "reason": WEAK_DUALITY[1]}
    assert checker.check_data(upper_bound.certificate_document(ub, None, "float", "", None)).status == "valid"
