"""``analyze`` for a (trained) network on a finite group: how close is it to Thm 7.9's max-margin networks?

The verdict is :func:`~margintheory.tasks.groups.task.verify_group_network`'s (normalized margin = the max margin
of ``G`` from the class LP -- Thm 7.9's closed form where its condition holds -- at the relative tolerance
``rtol``, every point on the margin, every neuron in one non-trivial irrep at the strict float tolerance, all
irreps used).  Added, informational (Morwani et al. Fig. 7.6 (b)-(d), D.2, D.3):

* per neuron the fraction of its power ``||u||^2 + ||v||^2 + ||w||^2`` in each irrep (Lemma D.10-D.12;
  ``neuron_irrep_power``, ``(m, K)`` in the order of ``irrep_names``); the
  fraction of neurons, and their share of ``||theta||^3``, with ``>= 1 - tolerance`` in one non-trivial irrep;
* the non-trivial irreps used by such a neuron (Thm 7.9 (2): all of them), the neurons per irrep, and the total
  variation between each irrep's share of ``||theta||^3`` and the construction's (Lemma D.16: ``mu_R ∝ d_R^2.5``);
* the normalized margin against Thm 7.9's closed form ``2 / (3 sqrt(3|G|) sum_{R != 1} d_R^2.5)``.
"""

from __future__ import annotations

import numpy as np

from margintheory.core import theory
from margintheory.core.checks import Check, VerificationResult
from margintheory.core.groups import FiniteGroup
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import GroupComposition
from margintheory.core.representations import Irrep, basis_vectors, real_irreps
from margintheory.tasks.groups import margin as gm
from margintheory.tasks.groups.task import group_common_fields, verify_group_network


def irrep_measures(net: PolyNetwork, irreps: list[Irrep], tolerance: float) -> tuple[list[Check], dict]:
    """Per-neuron irrep power and the irreps' shares of the norm, at ``tolerance`` (module docstring)."""
    B, owner = basis_vectors(irreps)
    dims = np.array([R.dim for R in irreps], dtype=float)
    frac = gm.irrep_power_fractions(net, B, owner, dims)  # (m, K), over u, v, w together
    top, which = frac.max(axis=1), frac.argmax(axis=1)
    single = (top >= 1 - tolerance) & (which > 0)
    r = net.neuron_norms()
    share = (r / r.max()) ** 3
    share = share / share.sum()
    mass = np.bincount(which, weights=share, minlength=len(irreps))
    target = gm.theorem79_weights(np.array([R.dim for R in irreps]))
    used = sorted({int(z) for z in which[single]})
    names = [R.name for R in irreps]
    fields = {
        "analysis_tolerance": tolerance, "irrep_names": names,
        "neuron_irrep": which, "neuron_max_irrep_power": top, "neuron_irrep_power": frac,
        "fraction_single_irrep": float(single.mean()), "weighted_fraction_single_irrep": float(share[single].sum()),
        "irreps_used_at_tolerance": [names[z] for z in used],
        "irrep_histogram": np.bincount(which, minlength=len(irreps)), "irrep_mass": mass,
        "irrep_mass_tv_to_construction": 0.5 * float(np.abs(mass - target).sum()),
    }
    checks = [
        Check(name="single-irrep neurons (tol)", expected=1.0, measured=fields["fraction_single_irrep"],
              tolerance=tolerance, passed=bool(single.all()), exactness="float", informational=True,
              detail=f"weighted by norm share: {fields['weighted_fraction_single_irrep']:.6g}",
              statement=f"fraction of neurons with >= 1 - {tolerance:g} of their power in one non-trivial irrep "
                        "(Thm 7.9 (1))"),
        Check(name="every irrep used (tol)", expected=names[1:], measured=[names[z] for z in used],
              tolerance=tolerance, passed=used == list(range(1, len(irreps))), exactness="float",
              informational=True,
              statement=f"every non-trivial irrep spans some neuron (Thm 7.9 (2); tolerance {tolerance:g})"),
        Check(name="mass per irrep (D.16)", expected=0.0, measured=fields["irrep_mass_tv_to_construction"],
              tolerance=tolerance, passed=fields["irrep_mass_tv_to_construction"] <= tolerance, exactness="float",
              informational=True, detail="total variation between the irreps' shares of ||theta||^3 and mu_R ∝ d^2.5",
              statement="each irrep's share of ||theta||^3 equals the Thm 7.9 network's (Lemma D.16)"),
    ]
    return checks, fields


def theorem79_comparison(G: FiniteGroup, irreps: list[Irrep], margin: float | None) -> tuple[list[Check], dict]:
    """The normalized margin against Thm 7.9's closed form (informational: the class LP decides)."""
    formula = float(theory.gamma_star_theorem79(G.order, np.array([R.dim for R in irreps])))
    ratio = margin / formula if margin is not None else float("nan")
    check = Check(name="margin / Thm 7.9 formula", expected=1.0, measured=ratio, tolerance=None,
                  passed=bool(np.isfinite(ratio) and ratio <= 1 + 1e-9), exactness="float", informational=True,
                  detail=f"formula 2 / (3 sqrt(3|G|) sum d_R^2.5) = {formula:.12g}",
                  statement="normalized margin / Thm 7.9's closed form (the max margin where its condition holds)")
    return [check], {"gamma_star_theorem79": formula, "ratio_to_theorem79": ratio}


def analyze_group_network(problem: GroupComposition, net: PolyNetwork, *, rtol: float | None, tolerance: float,
                          max_memory: int, max_seconds: float | None = None,
                          title: str | None = None) -> VerificationResult:
    """``verify_group_network`` plus :func:`irrep_measures` and :func:`theorem79_comparison`, with the common
    fields of the result schema as ``verify`` fills them (:func:`~.task.group_common_fields`)."""
    G = problem.G
    result = verify_group_network(G, net, max_memory=max_memory, max_seconds=max_seconds, rtol=rtol)
    if title:
        result.title = title
    irreps = real_irreps(G)
    parts = [irrep_measures(net.normalized(), irreps, tolerance)]
    margin = result.fields.get("normalized_margin")
    if not G.name.startswith("C"):
        parts.append(theorem79_comparison(G, irreps, margin))
    for checks, fields in parts:
        result.checks += checks
        result.fields.update(fields)
    group_common_fields(problem, result, construction=False)
    result.fields["width"] = net.m
    gamma = result.fields.get("gamma_star_lp")
    if gamma and margin is not None:
        result.notes.append(
            f"normalized margin = {margin / gamma:.9g} x the max margin of {G.name} (class LP; 'equal' checked at "
            f"relative tolerance {rtol or 0:g}); {100 * result.fields['weighted_fraction_single_irrep']:.2f}% of "
            f"||theta||^3 is in single-irrep neurons at tolerance {tolerance:g}")
    return result
