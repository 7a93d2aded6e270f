"""Slips in the text of Tian's CoGO (arXiv:2410.01779), each decided by a computation and reported as an
informational row (docs/theory.md#finding-cogo): the normalisation in the proof of Theorem 6, Lemma 10's orbit
statement, a figure quoted in Section 7, and the citation in Figure 2's caption.  Lemma 2 (2) and Corollary 1 are in
:mod:`margintheory.tasks.cogo.semiring_checks`.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from margintheory.core.checks import Check
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import forward_loss, r_abc, to_network
from margintheory.tasks.cogo.lemma1_checks import ZERO_TOL


def theorem6_normalisation_check(d: int) -> Check:
    """The proof of Theorem 6 writes ``r_kkk(z) = 1/2d`` at a global optimizer; Lemma 1 (and the loss) need
    ``r_kkk = 1``: measured on ``z_F6``, and the loss of ``z_F6`` rescaled to ``r_kkk = 1/2d``."""
    z = cc.build_f6(d, variant="paper" if d % 2 else "corrected").z
    ks = np.arange(1, d)
    r = r_abc(z)[ks, ks, ks]
    loss_at_one = forward_loss(to_network(z)[0])
    rescaled = forward_loss(to_network(z.scaled(float(np.cbrt(1 / (2 * d)))))[0])
    return Check(name="Thm 6 proof: r_kkk = 1/2d", expected=1 / (2 * d), measured=float(np.abs(r).max()),
                 tolerance=ZERO_TOL, passed=bool(np.abs(r - 1 / (2 * d)).max() <= ZERO_TOL), exactness="float",
                 informational=True,
                 detail=f"z_F6 (d = {d}): r_kkk = {float(r.real.min()):.12g}..{float(r.real.max()):.12g} at loss "
                        f"{loss_at_one:.1e}; rescaled to r_kkk = 1/2d its loss is {rescaled:.6g}",
                 statement="proof of Theorem 6 as printed: r_kkk = 1/2d at a global optimizer (Lemma 1: r_kkk = 1)")


def group_orbits(action: dict[tuple[int, int], int], points: list[int], generators: list[int]) -> list[frozenset]:
    """The orbits of a group given by the images ``action[(g, x)]`` of its generators, by closure."""
    orbits: list[frozenset] = []
    for x in points:
        if any(x in o for o in orbits):
            continue
        seen, frontier = {x}, [x]
        while frontier:
            frontier = [y for f in frontier for g in generators for y in [action[(g, f)]] if y not in seen]
            seen.update(frontier)
        orbits.append(frozenset(seen))
    return orbits


def lemma10_check() -> Check:
    """Lemma 10 says two orbits are equal or ``G.y intersect G.y' != empty`` ("disjoint"); the partition needs
    ``= empty``.  ``Z_6`` acting on ``X = Z_2 + Z_3`` (disjoint union, by reduction mod 2 and mod 3): the distinct
    orbits are computed and every pair is disjoint, so the printed ``!= empty`` is false for them."""
    points = list(range(5))  # 0, 1 = Z_2; 2, 3, 4 = Z_3
    action = {(1, x): (x + 1) % 2 if x < 2 else 2 + (x - 1) % 3 for x in points}
    orbits = group_orbits(action, points, [1])
    pairs = list(itertools.combinations(orbits, 2))
    meeting = sum(1 for o1, o2 in pairs if o1 & o2)
    return Check(name="Lemma 10: orbits != meet", expected=len(pairs), measured=meeting, tolerance=None,
                 passed=meeting == len(pairs), exactness="proved", informational=True,
                 detail=f"Z_6 on Z_2 + Z_3: {len(orbits)} orbits {[sorted(o) for o in orbits]}; {meeting} of "
                        f"{len(pairs)} pairs of distinct orbits intersect (every pair is disjoint: '= empty')",
                 statement="Lemma 10 as printed: two orbits are equal or G.y intersect G.y' != empty (should be "
                           "'= empty': orbits partition X)")


def section7_count_check() -> Check:
    """Section 7: for ``d = 127`` the number of order-6 solutions of the form ``z_(nu=i) * z_(syn,alpha beta)`` is
    ``(d-1)/2 * 2.25% ~ 1.26``: computed exactly, ``63 * 2.25/100 = 1.4175``."""
    value = Fraction(127 - 1, 2) * Fraction(225, 10000)
    return Check(name="Sec. 7: (d-1)/2 x 2.25%", expected=1.26, measured=float(value), tolerance=0.005,
                 passed=abs(float(value) - 1.26) <= 0.005, exactness="proved", informational=True,
                 detail=f"(127 - 1)/2 x 2.25/100 = {value} = {float(value):g} exactly (Table 2, d = 127: 2.25%)",
                 statement="Section 7 as printed: (d-1)/2 x 2.25% ~ 1.26 for d = 127 (it is 1.42)")


def figure2_citation_check() -> Check:
    """Figure 2's caption: 6 hidden nodes per frequency 'consistent with Corollary 1'.  The count is the order of
    ``z_F6`` per frequency, Corollary 2 (Corollary 1 is about multiplying by a unit): computed at ``d = 7``."""
    z = cc.build_f6(7).z
    per = z.order // 3
    return Check(name="Fig. 2: 6 nodes = Cor. 2", expected=6, measured=per, tolerance=None, passed=per == 6,
                 exactness="proved", informational=True,
                 detail=f"ord(z_F6) = {z.order} at d = 7 over (d-1)/2 = 3 frequencies; the caption cites Corollary 1, "
                        "the count is Corollary 2's",
                 statement="Figure 2's caption (6 hidden nodes per frequency) refers to Corollary 2, not Corollary 1")


def errata_checks(d: int) -> list[Check]:
    """Every row of this module."""
    return [theorem6_normalisation_check(d), lemma10_check(), section7_count_check(), figure2_citation_check()]
