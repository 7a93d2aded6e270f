"""``analyze`` for a (trained) sparse-parity network: how close is it to Thm 7.8's max-margin networks?

The verdict is :func:`~margintheory.tasks.parity.checks.verify_parity`'s (normalized margin = ``gamma* = k! sqrt(2
(k+1)^-(k+1))`` at the relative tolerance ``rtol``, every input on the margin, Lemma 7.5's mean margin, and the
characterization of every neuron at its strict float tolerance).  Added, informational (Morwani et al. Fig. 7.5):

* the four properties of the characterization at the stated ``tolerance`` (relative to each neuron's norm): the
  fraction of active neurons with all four, and their share of ``||theta||_{2,k+1}^(k+1)`` (dead neurons count by
  their norm, not by their number);
* the share of ``sum_i ||u_i||^2`` on the support ``S`` (the relevant bits).
"""

from __future__ import annotations

from margintheory.core.checks import Check, VerificationResult
from margintheory.core.problems import SparseParity
from margintheory.tasks.parity.checks import ParityNetwork, characterization, verify_parity


def characterization_measures(net: ParityNetwork, tolerance: float) -> tuple[list[Check], dict]:
    """The characterization at ``tolerance``: per-property counts, all four together, norm share, weight on S."""
    ch = characterization(net.normalized(), tolerance)
    act = ch["active"]
    every = act & ch["support"] & ch["w_along_b"] & ch["equal_magnitudes"] & ch["sign"]
    r = net.neuron_norms()
    share = (r / r.max()) ** (net.k + 1)
    share = share / share.sum()
    U2 = net.U**2
    on_support = float(U2[:, net.S].sum() / U2.sum()) if U2.sum() > 0 else float("nan")
    fields = {
        "analysis_tolerance": tolerance,
        "active_neurons": int(act.sum()),
        "characterized_neurons": int(every.sum()),
        "fraction_characterized": float(every.sum() / max(int(act.sum()), 1)),
        "weighted_fraction_characterized": float(share[every].sum()),
        "weight_on_support": on_support,
        "property_counts": {key: int((ch[key] & act).sum()) for key in ("support", "w_along_b", "equal_magnitudes",
                                                                       "sign")},
    }
    checks = [
        Check(name="neurons of Thm 7.8 (tol)", expected=1.0, measured=fields["weighted_fraction_characterized"],
              tolerance=tolerance, passed=bool(every[act].all()), exactness="float", informational=True,
              detail=f"{int(every.sum())} of {int(act.sum())} active neurons (norm > {tolerance:g} x the largest) "
                     f"have all four properties; measured = their share of ||theta||^(k+1)",
              statement=f"every active neuron has Thm 7.8's four properties (tolerance {tolerance:g}, relative to "
                        "the neuron's norm)"),
        Check(name="weight on the support S", expected=1.0, measured=on_support, tolerance=None,
              passed=bool(on_support == 1.0), exactness="float", informational=True,
              detail="sum_i ||u_i[S]||^2 / sum_i ||u_i||^2",
              statement="the input weights sit on the relevant bits S (Thm 7.8: spt(u_i) = S)"),
    ]
    return checks, fields


def analyze_parity_network(net: ParityNetwork, *, rtol: float | None, tolerance: float,
                           max_memory: int | None = None, max_seconds: float | None = None,
                           title: str | None = None) -> VerificationResult:
    """``verify_parity`` on the network plus :func:`characterization_measures` (module docstring)."""
    result = verify_parity(net, construction=False, rtol=rtol, max_memory=max_memory, max_seconds=max_seconds)
    result.fields["gamma_star_note"] = SparseParity(net.n, net.k).gamma_star_note
    if title:
        result.title = title
    checks, fields = characterization_measures(net, tolerance)
    result.checks += checks
    result.fields.update(fields)
    ratio = result.fields["normalized_margin"] / result.fields["gamma_star"]
    result.fields["ratio_to_gamma_star"] = ratio
    result.notes.append(
        f"normalized margin = {ratio:.9g} x gamma* ('equal to gamma*' checked at relative tolerance {rtol or 0:g}); "
        f"{100 * fields['weighted_fraction_characterized']:.2f}% of ||theta||^(k+1) is in neurons with Thm 7.8's "
        f"four properties at tolerance {tolerance:g}")
    return result

