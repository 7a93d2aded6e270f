"""The claims about a network's normalized margin, defined once: whichever engine measured the network (the Fourier
shortcut of a near-exact cosine network, the exhaustive pass on either array backend) decides the same claim at the
same tolerance.

Theorem C.22 (Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks", arXiv:2402.09469) and Lemma C.6's
characterisation make three claims about a network of normalized margin ``gamma``:

* ``margin = gamma*``: ``|gamma - gamma*| <= T``;
* every point on the margin: every input's normalized margin is within ``T`` of the network's margin;
* all wrong-label logits equal (condition C.1): their normalized spread is at most ``T`` at every input;

with one tolerance ``T = rtol * gamma*`` (:func:`claim_tolerance`; ``rtol`` defaults to :data:`EQUALITY_RTOL`, the
caller's ``--rtol`` replaces it).  An engine never knows the network's values exactly: it knows each as an
*enclosure* ``[lo, hi]`` (its value plus or minus its rigorous or a-priori error bound).  :func:`decide_at_most`
decides ``value <= bound`` from an enclosure: it ``holds`` when all of the enclosure does, ``fails`` when none of it
does, and is ``undecided`` when the enclosure straddles the bound -- the engine's resolution is then too coarse for
the claim, and the verification hands the network to a finer engine or reports it undecided.  It never decides at
the engine's own tolerance, so two engines whose enclosures hold the true value cannot decide differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: the default relative tolerance of the three claims: ``T = EQUALITY_RTOL * gamma*``.  A float64 file cannot equal
#: ``gamma*`` exactly; 1e-8 is above the resolution of both engines on the near-exact files they are given up to
#: ``k = 8`` (the shortcut's certified interval of a rounded construction is 2.6e-9 of the margin at ``(3, 8)``,
#: 1.6e-11 at ``(5, 5)``; the exhaustive engine's a-priori bound 2.7e-10 at ``(5, 5)``, 1.5e-12 at ``(7, 3)``) and far
#: below what separates a trained network from the optimum (``analyze`` uses 1e-6)
EQUALITY_RTOL = 1e-8

Decision = Literal["holds", "fails", "undecided"]
#: how the detail of a claim's row ends when no decision was made (the row fails and is informational)
UNDECIDED_ENDING = ": undecided"


def claim_tolerance(reference: float, rtol: float | None) -> float:
    """``T``: the absolute tolerance of the margin claims, ``rtol * reference`` (``reference``: ``gamma*``, or the
    margin itself where no ``gamma*`` is known; ``rtol``: :data:`EQUALITY_RTOL` when ``None``)."""
    return (EQUALITY_RTOL if rtol is None else rtol) * abs(reference)


def decide_at_most(lo: float, hi: float, bound: float) -> Decision:
    """``value <= bound`` for a value known to lie in ``[lo, hi]``: ``holds`` when ``hi <= bound``, ``fails`` when
    ``lo > bound``, ``undecided`` otherwise (also for a NaN anywhere: nothing is decided from it)."""
    if hi <= bound:
        return "holds"
    if lo > bound:
        return "fails"
    return "undecided"


def decide_within(lo: float, hi: float, target: float, tolerance: float) -> Decision:
    """``|value - target| <= tolerance`` for a value known to lie in ``[lo, hi]``."""
    if target - tolerance <= lo and hi <= target + tolerance:
        return "holds"
    if hi < target - tolerance or lo > target + tolerance:
        return "fails"
    return "undecided"


@dataclass(frozen=True)
class ClaimDecision:
    """One claim decided from an enclosure: ``decision``, the enclosure ``[lo, hi]``, the tolerance ``T`` and a
    one-line ``text`` saying so (for the row's detail)."""

    decision: Decision
    lo: float
    hi: float
    tolerance: float
    text: str

    @property
    def passed(self) -> bool:
        return self.decision == "holds"


def margin_equals(lo: float, hi: float, gamma: float, rtol: float | None) -> ClaimDecision:
    """``margin = gamma*``: ``|margin - gamma*| <= T`` for a margin known to lie in ``[lo, hi]``."""
    t = claim_tolerance(gamma, rtol)
    d = decide_within(lo, hi, gamma, t)
    return ClaimDecision(d, lo, hi, t, f"margin in [{lo:.17g}, {hi:.17g}]; claim |margin - gamma*| <= {t:.3g} "
                                       f"(rtol {t / gamma:.3g}): {d}")


def within_of_margin(lo: float, hi: float, reference: float, rtol: float | None, what: str) -> ClaimDecision:
    """``what <= T`` (a nonnegative normalized deviation, e.g. the largest gap to the margin or the largest wrong-logit
    spread) known to lie in ``[lo, hi]``; ``T = claim_tolerance(reference, rtol)``."""
    t = claim_tolerance(reference, rtol)
    lo = max(lo, 0.0)
    d = decide_at_most(lo, hi, t)
    return ClaimDecision(d, lo, hi, t, f"{what} in [{lo:.3g}, {hi:.3g}]; claim <= {t:.3g}: {d}")
