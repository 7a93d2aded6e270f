"""Which irreps does a trained network use, and are they the max-margin solution's?  (the ``universality-groups``
recipe's claims)

Chughtai, Chan and Nanda, "A toy model of universality: reverse engineering how networks learn group operations"
(arXiv:2302.03025), train networks on group composition and ask which irreducible representations they learn, and
whether networks trained from different seeds learn the same ones.  The max-margin theory answers for the quadratic
network trained with a vanishing norm penalty (Morwani, Edelman, Oncescu, Zhao, Kakade, "Feature emergence via
margin maximization: case studies in algebraic tasks", arXiv:2311.07568, Thm 7.9 and App. D.9): a max-margin
network puts its mass on the irreps of the class LP's solution -- every non-trivial irrep where Thm 7.9's condition
holds, a strict subset where it fails (``A_5``: the LP leaves the 5-dimensional irrep out).

Measures (float64, on the trained network):

* each neuron's fraction of its power ``||u||^2 + ||v||^2 + ||w||^2`` in each real irrep (trivial included:
  :func:`margintheory.tasks.groups.margin.irrep_power_fractions`, Lemmas D.10-D.12), weighted by the neuron's share
  of ``||theta||^3`` (:func:`margintheory.training.metrics.norm_shares`): the network's **mass per irrep** (sums to 1);
* an irrep is **used** when its mass is at least :data:`USED_MASS` (a stated reading, on every claim row);
* the max-margin solution's irreps are :func:`max_margin_irreps`: the irreps the class LP puts mass on
  (``verify(GroupComposition(g))``'s ``irreps_used_by_lp``), with the LP's masses;
* the match of a run is the Jaccard index ``|used & LP| / |used | LP|`` (1: the same set);
* the margin reached is the analysis's normalized margin over the LP's max margin (``gamma_star_lp``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from margintheory.core.network import PolyNetwork

#: an irrep is used by a network when it carries at least this share of ``||theta||^3``
USED_MASS = 0.05


def irrep_mass(net: PolyNetwork, group: str) -> tuple[np.ndarray, list[str]]:
    """``(K,)`` each real irrep's share of ``||theta||^3`` (trivial first; the neurons' irrep power fractions
    weighted by their norm shares; sums to 1) and the irreps' names."""
    from margintheory.core.problems import GroupComposition
    from margintheory.core.representations import basis_vectors, real_irreps
    from margintheory.tasks.groups.margin import irrep_power_fractions
    from margintheory.training.metrics import norm_shares

    irreps = real_irreps(GroupComposition(group).G)
    B, owner = basis_vectors(irreps)
    frac = irrep_power_fractions(net, B, owner, np.array([R.dim for R in irreps], dtype=float))
    return norm_shares(net) @ frac, [R.name for R in irreps]


def used_irreps(net: PolyNetwork, group: str, least: float = USED_MASS) -> list[str]:
    """The irreps (trivial included) whose share of ``||theta||^3`` is at least ``least``."""
    mass, names = irrep_mass(net, group)
    return [name for name, m in zip(names, mass, strict=True) if m >= least]


@lru_cache(maxsize=16)
def _max_margin(group: str) -> tuple[tuple[str, ...], tuple[str, ...], bool, float, tuple[float, ...],
                                     tuple[str, ...]]:
    from margintheory.core.problems import GroupComposition
    from margintheory.verification import verify

    f = verify(GroupComposition(group)).fields
    return (tuple(f["irreps_used_by_lp"]), tuple(f["irreps_tight_under_dual"]), bool(f["condition_holds"]),
            float(f["gamma_star_lp"]), tuple(float(x) for x in f["lp_block_masses"]), tuple(f["irrep_names"]))


def max_margin_irreps(group: str) -> dict[str, Any]:
    """The max-margin solution of ``group`` from ``verify(GroupComposition(group))`` (Thm 7.9 and its class LP):
    ``used`` (the irreps the LP puts mass on), ``tight`` (those tight under the dual), ``condition_holds``,
    ``gamma_star_lp`` (the max margin) and the LP's ``masses`` by irrep name."""
    used, tight, holds, gamma, masses, names = _max_margin(group)
    return {"used": list(used), "tight": list(tight), "condition_holds": holds, "gamma_star_lp": gamma,
            "masses": dict(zip(names, masses, strict=True))}


def jaccard(a: list[str] | set[str], b: list[str] | set[str]) -> float:
    """``|a & b| / |a | b|`` (1 for two empty sets)."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


# -- claim measures (registered in margintheory.reproduce.claims.MEASURES, which wraps each result -- measured,
# -- expected, passed, detail -- as its Measured) ------------------------------------------------------------------
Measurement = tuple[Any, Any, bool, str]
def _mass_text(mass: np.ndarray, names: list[str]) -> str:
    return ", ".join(f"{n} {m:.3f}" for n, m in zip(names, mass, strict=True))


def _universality_irreps(claim: Any, outs: list[Any]) -> Measurement:
    """Per run: the irreps used (mass >= the claim's threshold, default :data:`USED_MASS`), against the LP's; the
    measured value is the worst seed's Jaccard index; the claim holds when every seed's set is the LP's."""
    least = claim.threshold if claim.threshold is not None else USED_MASS
    parts, scores, sets = [], [], []
    groups = sorted({o.spec.sizes["group"] for o in outs})
    for o in outs:
        group = o.spec.sizes["group"]
        mm = max_margin_irreps(group)
        mass, names = irrep_mass(o.network, group)
        used = [n for n, m in zip(names, mass, strict=True) if m >= least]
        score = jaccard(used, mm["used"])
        scores.append(score)
        sets.append((group, frozenset(used)))
        parts.append(f"{o.spec.label} seed {o.seed} ({group}): uses {used}, Jaccard {score:.3f}; mass per irrep "
                     f"{_mass_text(mass, names)}")
    lp = "; ".join(f"{g}: LP irreps {max_margin_irreps(g)['used']} (Thm 7.9's condition "
                   f"{'holds' if max_margin_irreps(g)['condition_holds'] else 'fails'}; LP masses "
                   + ", ".join(f"{n} {m:.3f}" for n, m in max_margin_irreps(g)["masses"].items()) + ")"
                   for g in groups)
    agree = len({s for _, s in sets}) == 1
    detail = (f"max-margin solution: {lp}; seeds agree with each other: {'yes' if agree else 'no'}; "
              + "; ".join(parts))
    worst = min(scores)
    return worst, 1.0, worst == 1.0, detail


def _universality_margin(claim: Any, outs: list[Any]) -> Measurement:
    """Per run: the analysis's normalized margin over the LP's max margin of the group (worst seed)."""
    ratios, parts = [], []
    for o in outs:
        gamma = max_margin_irreps(o.spec.sizes["group"])["gamma_star_lp"]
        margin = o.analysis.get("normalized_margin")
        ratio = float(margin) / gamma if margin is not None else float("nan")
        ratios.append(ratio)
        parts.append(f"{o.spec.label} seed {o.seed}: {ratio:.6f} (max margin {gamma:.6g}, class LP)")
    worst = min(ratios)
    tol = claim.tolerance
    return worst, 1.0, bool(tol is None or worst >= 1 - tol), "normalized margin / max margin: " + "; ".join(parts)


MEASURES: dict[str, Callable[[Any, list[Any]], Measurement]] = {
    "universality-irreps": _universality_irreps, "universality-margin": _universality_margin}
