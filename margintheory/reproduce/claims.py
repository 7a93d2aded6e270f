"""Each claim of a recipe measured on its trained runs, as one check row of the result.

A :class:`~margintheory.reproduce.recipes.Claim` names what it measures (``kind``) and how its words are read as a
number (``reading``, ``tolerance``, ``threshold``).  :func:`claim_checks` measures every claim on the runs it is
about (every seed; the worst seed is the measured value, the others are in the detail) and returns one
:class:`~margintheory.core.checks.Check` per claim.  A claim whose runs were not trained (no trainer for them in
this version, a failed run, or runs left out) is a row with no measured value that says why; it does not decide.

Measures (modular addition; docs/TRAINING.md#definitions-of-the-recorded-quantities):

* max normalized power of a vector: ``max_j P(j) / sum_j P(j)`` with the one-sided power ``P`` (``+j`` and ``-j``
  folded; :func:`margintheory.engines.fourier.max_normalized_power`), as in Morwani et al. Fig. 7.4 and Li et al.
  Fig. 4.2;
* a neuron is *single-frequency* when ``u_1..u_k`` and ``w`` all have max power >= :data:`SINGLE_FREQUENCY_POWER`;
  its weight is its norm share ``||theta_i||^(k+1) / ||theta||^(k+1)`` (dead neurons weigh nothing);
* a frequency is *used* when it is the dominant frequency of a neuron whose vectors all have max power >=
  :data:`margintheory.training.metrics.SPARSE_THRESHOLD`;
* the normalized margin is the run's analysis (:func:`margintheory.training.analysis.analyze_network`: float64 over
  all ``p^k`` points, with its error bound), over ``gamma*`` of Theorem C.22 / Thm 7.7.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.core import theory
from margintheory.core.checks import Check
from margintheory.core.network import PolyNetwork
from margintheory.engines.fourier import max_normalized_power, one_sided_power
from margintheory.reproduce.recipes import Claim, Recipe
from margintheory.reproduce.runs import RunOutcome
from margintheory.reproduce.universality import MEASURES as UNIVERSALITY_MEASURES
from margintheory.training.metrics import SPARSE_THRESHOLD, norm_shares

SINGLE_FREQUENCY_POWER = 0.99


@dataclass
class Measured:
    """A claim's measurement: the value (the worst run), what the claim expects, whether it holds, and the
    detail (every run's value)."""

    measured: Any
    expected: Any
    passed: bool
    detail: str


# -- per-network measures ------------------------------------------------------------------------------------
def vector_max_power(net: PolyNetwork) -> np.ndarray:
    """``(m, k+1)``: the max normalized power of ``u_1..u_k, w`` of every neuron."""
    return max_normalized_power(np.concatenate([net.U, net.W[:, None, :]], axis=1))


def embedding_max_power(net: PolyNetwork) -> np.ndarray:
    """``(m, k)``: the max normalized power of the embedding vectors ``u_1..u_k`` of every neuron."""
    return max_normalized_power(net.U)


def dominant_frequencies(net: PolyNetwork) -> np.ndarray:
    """``(m,)``: the frequency with most one-sided power summed over the neuron's vectors."""
    V = np.concatenate([net.U, net.W[:, None, :]], axis=1)
    return np.argmax(one_sided_power(V).sum(axis=1), axis=-1)


def used_frequencies(net: PolyNetwork) -> list[int]:
    """Frequencies ``1..(p-1)/2`` that are the dominant frequency of a neuron whose vectors all have max power >=
    :data:`SPARSE_THRESHOLD`."""
    sparse = (vector_max_power(net) >= SPARSE_THRESHOLD).all(axis=1)
    return sorted(set(dominant_frequencies(net)[sparse].tolist()) & set(theory.frequencies(net.p)))


def frequency_tv(net: PolyNetwork) -> float:
    """Total-variation distance between the neurons' dominant frequencies (``1..(p-1)/2``; a neuron dominated by
    frequency 0 counts as off the list) and the uniform distribution over them."""
    freqs = theory.frequencies(net.p)
    dom = dominant_frequencies(net)
    counts = np.array([np.sum(dom == f) for f in freqs], dtype=float)
    share = counts / max(1, net.m)
    return 0.5 * float(np.abs(share - 1.0 / len(freqs)).sum() + (net.m - counts.sum()) / max(1, net.m))


def _name(o: RunOutcome) -> str:
    return f"{o.spec.label} seed {o.seed}"


# -- claim measures ------------------------------------------------------------------------------------------
def _margin(claim: Claim, outs: list[RunOutcome]) -> Measured:
    ratios, parts = [], []
    for o in outs:
        g = theory.gamma_star(o.spec.sizes["p"], o.spec.sizes["k"])
        ratio = float(o.analysis["normalized_margin"]) / g
        bound = float(o.analysis["details"].get("margin_tolerance", 0.0)) / g
        ratios.append((ratio, bound))
        parts.append(f"{_name(o)}: {_ratio(ratio)} (float64 error bound {bound:.1e}){_peak(o, g)}")
    worst = min(r for r, _ in ratios)
    tol = claim.tolerance
    passed = (tol is None or worst >= 1 - tol) and all(r <= 1 + b for r, b in ratios)
    return Measured(worst, 1.0, passed, "normalized margin / gamma*: " + "; ".join(parts))


def _peak(o: RunOutcome, gamma: float | None) -> str:
    """``; best during training 0.989930 at step 20000`` from the run's history (its float64 margin rows)."""
    rows = [(float(h["normalized_margin"]), int(h["step"])) for h in o.history
            if h.get("normalized_margin") is not None]
    if not rows or not gamma:
        return ""
    best, step = max(rows)
    return f"; best during training {_ratio(best / gamma)} at step {step} of {o.spec.steps}"


def _ratio(r: float) -> str:
    return f"1 {'-' if r < 1 else '+'} {abs(1 - r):.2e}" if abs(1 - r) < 1e-3 else f"{r:.6f}"


@dataclass(frozen=True)
class NeuronShare:
    """A neuron claim judged as the papers' figures weigh neurons: by their share of the norm.

    ``share`` is the share of ``||theta||^(k+1)`` in the neurons that meet the claim; the others are the
    *outliers*, ``outliers`` of ``neurons``, holding ``outlier_mass`` of the norm (``1 - share``).  The claim holds
    when ``share >= 1 - tolerance``: a neuron of negligible norm (which a histogram of the neurons' values, or the
    network's function, cannot show) does not refute it, and a few heavy ones do."""

    share: float
    neurons: int
    outliers: int
    outlier_mass: float

    def holds(self, tolerance: float | None) -> bool:
        return self.share >= 1 - (tolerance or 0.0)

    def text(self, where: str, what: str) -> str:
        return (f"{where}: norm share {self.share:.9f} in {self.neurons - self.outliers}/{self.neurons} neurons; "
                f"outliers ({what}): {self.outliers}, holding {self.outlier_mass:.1e} of the norm")


def neuron_share(shares: np.ndarray, ok: np.ndarray) -> NeuronShare:
    """:class:`NeuronShare` of the neurons marked ``ok`` given every neuron's norm share ``shares`` (summing to 1;
    :func:`margintheory.training.metrics.norm_shares`)."""
    shares, ok = np.asarray(shares, dtype=float), np.asarray(ok, dtype=bool)
    return NeuronShare(float(shares[ok].sum()), int(ok.size), int((~ok).sum()), float(shares[~ok].sum()))


def _norm_share(claim: Claim, outs: list[RunOutcome], single: Callable[[RunOutcome], np.ndarray],
                what: str = "the others") -> Measured:
    """The share of ``||theta||^(k+1)`` in the neurons ``single(run)`` marks (worst run), against ``1 - tolerance``;
    the count and mass of the other neurons (the outliers) in the detail."""
    judged = [(o, neuron_share(norm_shares(o.network), single(o))) for o in outs]
    worst = min(j.share for _, j in judged)
    return Measured(worst, 1.0, all(j.holds(claim.tolerance) for _, j in judged),
                    "; ".join(j.text(_name(o), what) for o, j in judged))


def _single_frequency(claim: Claim, outs: list[RunOutcome]) -> Measured:
    def single(o: RunOutcome) -> np.ndarray:
        return np.asarray((vector_max_power(o.network) >= SINGLE_FREQUENCY_POWER).all(axis=1))

    return _norm_share(claim, outs, single, f"a vector with max power < {SINGLE_FREQUENCY_POWER:g}")


def _max_power_all(claim: Claim, outs: list[RunOutcome]) -> Measured:
    """Every neuron's embedding max power >= the level, each neuron weighed by its norm share (the lowest max power
    in the detail)."""
    level = claim.threshold if claim.threshold is not None else SINGLE_FREQUENCY_POWER
    judged, lowest = [], []
    for o in outs:
        mp = embedding_max_power(o.network)
        judged.append((o, neuron_share(norm_shares(o.network), np.asarray((mp >= level).all(axis=1)))))
        lowest.append(float(mp.min()))
    worst = min(j.share for _, j in judged)
    detail = f"embedding max power >= {level:g}: " + "; ".join(
        j.text(_name(o), f"max power < {level:g}") + f"; lowest max power {low:.4f}"
        for (o, j), low in zip(judged, lowest, strict=True))
    return Measured(worst, 1.0, all(j.holds(claim.tolerance) for _, j in judged), detail)


def _all_frequencies(claim: Claim, outs: list[RunOutcome]) -> Measured:
    counts, parts, every = [], [], True
    for o in outs:
        want = theory.frequencies(o.network.p)
        used = used_frequencies(o.network)
        missing = sorted(set(want) - set(used))
        every &= not missing
        counts.append(len(used))
        parts.append(f"{_name(o)}: {len(used)}/{len(want)}" + (f" (missing {missing})" if missing else ""))
    want_n = len(theory.frequencies(outs[0].network.p))
    return Measured(min(counts), want_n, every, "frequencies used: " + "; ".join(parts))


def _frequency_uniform(claim: Claim, outs: list[RunOutcome]) -> Measured:
    tvs = [frequency_tv(o.network) for o in outs]
    worst = max(tvs)
    detail = "TV of neurons per frequency to uniform: " + "; ".join(
        f"{_name(o)}: {tv:.4f}" for o, tv in zip(outs, tvs, strict=True))
    return Measured(worst, 0.0, claim.tolerance is None or worst <= claim.tolerance, detail)


def _quantiles(values: np.ndarray) -> str:
    q = np.quantile(values, [0.1, 0.5, 0.9])
    return f"10/50/90% quantiles {q[0]:.3f}/{q[1]:.3f}/{q[2]:.3f}"


def _median_max_powers(outs: list[RunOutcome], which: str) -> tuple[list[float], list[str]]:
    """Per run: the median max normalized power of every embedding vector of its ``initial`` or final ``network``,
    and the run's quantiles as text."""
    meds, parts = [], []
    for o in outs:
        mp = embedding_max_power(getattr(o, which)).ravel()
        meds.append(float(np.median(mp)))
        parts.append(f"{_name(o)}: {_quantiles(mp)}")
    return meds, parts


def _max_power_init(claim: Claim, outs: list[RunOutcome]) -> Measured:
    meds, parts = _median_max_powers(outs, "initial")
    worst = max(meds)
    return Measured(worst, "spread out (median < 0.9)", worst < 0.9, "at initialization: " + "; ".join(parts))


def _relu_max_power(claim: Claim, outs: list[RunOutcome]) -> Measured:
    meds, parts = _median_max_powers(outs, "network")
    lo, hi = min(meds), max(meds)
    return Measured(float(np.median(meds)), "in [0.8, 0.99)", lo >= 0.8 and hi < 0.99,
                    "embedding max power after training: " + "; ".join(parts))


def _by_k(outs: list[RunOutcome]) -> dict[int, list[tuple[float, float, float]]]:
    """``k -> [(lambda, margin / gamma*, relative gradient norm)]`` sorted by decreasing lambda."""
    out: dict[int, list[tuple[float, float, float]]] = {}
    for o in outs:
        g = theory.gamma_star(o.spec.sizes["p"], o.spec.sizes["k"])
        out.setdefault(o.spec.sizes["k"], []).append(
            (o.spec.lam, float(o.analysis["normalized_margin"]) / g,
             float(o.analysis["details"].get("relative_gradient_norm", float("nan")))))
    return {k: sorted(v, reverse=True) for k, v in sorted(out.items())}


def _lambda_limit(claim: Claim, outs: list[RunOutcome]) -> Measured:
    series = _by_k(outs)
    last = {k: v[-1] for k, v in series.items()}
    worst = min(r for _, r, _ in last.values())
    detail = "; ".join(f"k={k}: lambda {lam:g}: margin/gamma* {_ratio(r)} (relative gradient norm {gn:.1e})"
                       for k, (lam, r, gn) in last.items())
    return Measured(worst, 1.0, worst >= 1 - (claim.tolerance or 0.0), detail)


def _lambda_monotone(claim: Claim, outs: list[RunOutcome]) -> Measured:
    violations, parts = 0, []
    for k, rows in _by_k(outs).items():
        gaps = [1 - r for _, r, _ in rows]
        violations += sum(1 for a, b in zip(gaps, gaps[1:], strict=False) if b > a + 1e-9)
        parts.append(f"k={k}: " + ", ".join(f"lambda {lam:g}: gap {1 - r:.2e} (grad {gn:.1e})"
                                            for lam, r, gn in rows))
    return Measured(violations, 0, violations == 0, "increases of the gap as lambda falls: " + "; ".join(parts))


# -- CoGO (Tian, arXiv:2410.01779): orders, factorizations and classes of the per-frequency solutions -----------
def cogo_solutions(o: RunOutcome) -> list[dict[str, Any]]:
    """The per-frequency solutions of a trained CoGO network as its analysis sorted them (order, factorization
    error, construction: :func:`margintheory.tasks.cogo.analysis.analyze_cogo_network`,
    :func:`margintheory.tasks.cogo.factorization.frequency_solutions`)."""
    return list(o.analysis["details"]["per_frequency"])


def _by_label(outs: list[RunOutcome]) -> dict[str, list[RunOutcome]]:
    out: dict[str, list[RunOutcome]] = {}
    for o in outs:
        out.setdefault(o.spec.label, []).append(o)
    return out


def _share(part: int, whole: int) -> float:
    return part / whole if whole else float("nan")


def _cogo_orders(claim: Claim, outs: list[RunOutcome]) -> Measured:
    shares, parts = [], []
    for label, runs in _by_label(outs).items():
        orders = [s["order"] for o in runs for s in cogo_solutions(o)]
        share = _share(sum(q in (4, 6) for q in orders), len(orders))
        shares.append(share)
        hist = {q: orders.count(q) for q in sorted(set(orders))}
        parts.append(f"{label}: {100 * share:.1f}% of {len(orders)} (seed, frequency) solutions; orders {hist} "
                     f"(Table 2, % not order 4/6: {_paper(claim, label)})")
    worst = min(shares)
    return Measured(worst, 1.0, worst >= 1 - (claim.tolerance or 0.0), "order 4 or 6: " + "; ".join(parts))


def _cogo_order_count(claim: Claim, outs: list[RunOutcome]) -> Measured:
    orders = sorted({s["order"] for o in outs for s in cogo_solutions(o)})
    per = "; ".join(f"{_name(o)}: {[s['order'] for s in cogo_solutions(o)]}" for o in outs)
    return Measured(orders, claim.paper_value, orders == [claim.paper_value], f"nodes per frequency: {per}")


def _cogo_factorable(claim: Claim, outs: list[RunOutcome]) -> Measured:
    shares, parts = [], []
    for label, runs in _by_label(outs).items():
        sols = [s for o in runs for s in cogo_solutions(o) if s["order"] in (4, 6)]
        share = _share(sum(s["construction"] is not None for s in sols), len(sols))
        shares.append(share)
        errors = {q: [s["factorization_error"] for s in sols if s["order"] == q and s["construction"] is not None]
                  for q in (4, 6)}
        mean = ", ".join(f"order {q}: {100 * float(np.mean(e)):.2f}e-2" for q, e in errors.items() if e)
        parts.append(f"{label}: {100 * share:.1f}% of {len(sols)} factorable; mean factorization error {mean or '-'} "
                     f"(Table 2, % non-factorable order 4, 6: {_paper(claim, label)})")
    worst = min(shares)
    return Measured(worst, 1.0, worst >= 1 - (claim.tolerance or 0.0), "; ".join(parts))


def _paper(claim: Claim, label: str) -> str:
    """The paper's value for the run ``d<d>`` (the claim's ``paper_value`` by ``d``)."""
    values = claim.paper_value or {}
    row = values.get(int(label[1:])) if label[1:].isdigit() else None
    return "not reported" if row is None else str(row)


def _cogo_constructions(claim: Claim, outs: list[RunOutcome]) -> Measured:
    from margintheory.tasks.cogo.factorization import CONSTRUCTIONS

    shares, parts = [], []
    for label, runs in _by_label(outs).items():
        kinds = [s["construction"] for o in runs for s in cogo_solutions(o) if s["construction"] is not None]
        share = _share(sum(k != "other" for k in kinds), len(kinds))
        shares.append(share)
        dist = ", ".join(f"{c}: {100 * _share(kinds.count(c), len(kinds)):.1f}%" for c in CONSTRUCTIONS)
        parts.append(f"{label}: {100 * share:.1f}% of {len(kinds)} matched ({dist}; Table 2: {_paper(claim, label)})")
    worst = min(shares)
    return Measured(worst, 1.0, worst >= 1 - (claim.tolerance or 0.0), "; ".join(parts))


def _cogo_potentials(claim: Claim, outs: list[RunOutcome]) -> Measured:
    from margintheory.tasks.cogo.algebra import from_network, r_abc

    devs, parts = [], []
    for o in outs:
        z = from_network(o.network)
        R = r_abc(z)
        ks = np.arange(1, z.d)
        diag = float(R[ks, ks, ks].real.sum())
        off = np.abs(R[:, :, ks]).copy()
        off[ks, ks, ks - 1] = 0.0
        devs.append(abs(diag - (z.d - 1)) / (z.d - 1))
        parts.append(f"{_name(o)}: sum r_kkk = {diag:.6g} (d - 1 = {z.d - 1}); largest off-diagonal |r| "
                     f"{float(off.max()):.3g}")
    worst = max(devs)
    return Measured(worst, 0.0, worst <= (claim.tolerance or 0.0), "; ".join(parts))


# -- sparse parity (Thm 7.8) and finite groups (Thm 7.9) ----------------------------------------------------------
def _ratio_to(outs: list[RunOutcome], claim: Claim, what: str) -> Measured:
    """The normalized margin over the analysis's ``gamma_star`` (its note says which closed form), worst run."""
    ratios, parts = [], []
    for o in outs:
        gamma = o.analysis.get("gamma_star")
        ratio = float(o.analysis["normalized_margin"]) / float(gamma) if gamma else float("nan")
        ratios.append(ratio)
        parts.append(f"{_name(o)}: {_ratio(ratio)}{_peak(o, float(gamma) if gamma else None)}")
    worst = min(ratios)
    note = outs[0].analysis.get("gamma_star_note", "")
    return Measured(worst, 1.0, bool(worst >= 1 - (claim.tolerance or 0.0)),
                    f"normalized margin / {what}: " + "; ".join(parts) + (f" ({note})" if note else ""))


def _parity_margin(claim: Claim, outs: list[RunOutcome]) -> Measured:
    return _ratio_to(outs, claim, "gamma* of Thm 7.8")


def _parity_support(claim: Claim, outs: list[RunOutcome]) -> Measured:
    shares = [float(o.analysis["details"]["weighted_fraction_characterized"]) for o in outs]
    detail = "; ".join(f"{_name(o)}: {s:.6f} of ||theta||^(k+1), {o.analysis['details']['characterized_neurons']} of "
                       f"{o.analysis['details']['active_neurons']} active neurons; weight on S "
                       f"{float(o.analysis['details']['weight_on_support']):.6f}" for o, s in zip(outs, shares,
                                                                                                    strict=True))
    return Measured(min(shares), 1.0, min(shares) >= 1 - (claim.tolerance or 0.0), detail)


def _group_margin(claim: Claim, outs: list[RunOutcome]) -> Measured:
    return _ratio_to(outs, claim, "Thm 7.9's max margin")


def irrep_fractions(net: PolyNetwork, group: str) -> tuple[np.ndarray, np.ndarray]:
    """``(m, K)`` fraction of each neuron's power in each real irrep of ``group`` (trivial first) and the irreps'
    dimensions (:func:`margintheory.tasks.groups.margin.irrep_power_fractions`, Lemmas D.10-D.12)."""
    from margintheory.core.problems import GroupComposition
    from margintheory.core.representations import basis_vectors, real_irreps
    from margintheory.tasks.groups.margin import irrep_power_fractions

    irreps = real_irreps(GroupComposition(group).G)
    B, owner = basis_vectors(irreps)
    dims = np.array([R.dim for R in irreps], dtype=float)
    return irrep_power_fractions(net, B, owner, dims), dims


def _single_irrep(claim: Claim, outs: list[RunOutcome]) -> Measured:
    def single(o: RunOutcome) -> np.ndarray:
        frac, _ = irrep_fractions(o.network, o.spec.sizes["group"])
        return (frac.max(axis=1) >= SINGLE_FREQUENCY_POWER) & (frac.argmax(axis=1) > 0)

    return _norm_share(claim, outs, single, f"irrep power fraction < {SINGLE_FREQUENCY_POWER:g} or the trivial irrep")


def _all_irreps(claim: Claim, outs: list[RunOutcome]) -> Measured:
    counts, parts, every = [], [], True
    for o in outs:
        frac, dims = irrep_fractions(o.network, o.spec.sizes["group"])
        used = sorted({int(i) for i in frac.argmax(axis=1)[frac.max(axis=1) >= SPARSE_THRESHOLD]} - {0})
        missing = sorted(set(range(1, len(dims))) - set(used))
        every &= not missing
        counts.append(len(used))
        parts.append(f"{_name(o)}: {len(used)}/{len(dims) - 1} non-trivial irreps"
                     + (f" (missing irreps {missing})" if missing else ""))
    dims_n = len(irrep_fractions(outs[0].network, outs[0].spec.sizes["group"])[1]) - 1
    return Measured(min(counts), dims_n, every, "; ".join(parts))


def _irrep_dimension_counts(claim: Claim, outs: list[RunOutcome]) -> Measured:
    violations, parts = 0, []
    for o in outs:
        frac, dims = irrep_fractions(o.network, o.spec.sizes["group"])
        counts = np.bincount(frac.argmax(axis=1), minlength=len(dims))
        per_dim = {int(d): float(counts[1:][dims[1:] == d].mean()) for d in sorted(set(dims[1:].tolist()))}
        means = list(per_dim.values())
        violations += sum(1 for a, b in zip(means, means[1:], strict=False) if b < a)
        parts.append(f"{_name(o)}: neurons per irrep {counts.tolist()} (dimensions {dims.astype(int).tolist()}); "
                     f"mean per dimension {per_dim}")
    return Measured(violations, 0, violations == 0, "; ".join(parts))


def _irrep_power_init(claim: Claim, outs: list[RunOutcome]) -> Measured:
    meds, parts = [], []
    for o in outs:
        top = irrep_fractions(o.initial, o.spec.sizes["group"])[0].max(axis=1)
        meds.append(float(np.median(top)))
        parts.append(f"{_name(o)}: {_quantiles(top)}")
    worst = max(meds)
    return Measured(worst, "spread out (median < 0.9)", worst < 0.9, "at initialization: " + "; ".join(parts))


def _unmeasured(claim: Claim, outs: list[RunOutcome]) -> Measured:
    return Measured(None, claim.paper_value, False, f"no measurement of {claim.kind!r} in this version")


MEASURES: dict[str, Callable[[Claim, list[RunOutcome]], Measured]] = {
    "margin-to-gamma": _margin, "single-frequency": _single_frequency, "max-power-all": _max_power_all,
    "all-frequencies": _all_frequencies, "frequency-uniform": _frequency_uniform, "max-power-init": _max_power_init,
    "relu-max-power": _relu_max_power, "lambda-limit": _lambda_limit, "lambda-monotone": _lambda_monotone,
    "cogo-orders": _cogo_orders, "cogo-order-count": _cogo_order_count, "cogo-factorable": _cogo_factorable,
    "cogo-constructions": _cogo_constructions, "cogo-potentials": _cogo_potentials, "parity-margin": _parity_margin,
    "parity-support": _parity_support, "group-margin": _group_margin, "single-irrep": _single_irrep,
    "all-irreps": _all_irreps, "irrep-dimension-counts": _irrep_dimension_counts,
    "irrep-power-init": _irrep_power_init,
}


def _universality(kind: str) -> Callable[[Claim, list[RunOutcome]], Measured]:
    """The measure ``kind`` of :mod:`margintheory.reproduce.universality` (which irreps a trained network uses:
    Chughtai et al.'s question), its ``(measured, expected, passed, detail)`` as a :class:`Measured`."""
    return lambda claim, outs: Measured(*UNIVERSALITY_MEASURES[kind](claim, outs))


MEASURES.update({kind: _universality(kind) for kind in UNIVERSALITY_MEASURES})


def claim_checks(rec: Recipe, outcomes: dict[str, list[RunOutcome]], missing: dict[str, str], *,
                 decide: bool) -> list[Check]:
    """One check per claim of ``rec`` (module docstring).  ``outcomes``: the finished runs by label; ``missing``:
    why a run has no outcome, by label; ``decide``: whether the claims decide the verdict (the paper's size) or
    are reported only (a scaled smoke test)."""
    checks = []
    for claim in rec.claims:
        labels = list(claim.runs) or rec.labels
        absent = {label: missing[label] for label in labels if label in missing}
        outs = [o for label in labels for o in outcomes.get(label, [])]
        statement = f"{claim.statement}. Read as: {claim.reading}"
        if not outs:
            why = "; ".join(f"run {label}: {reason}" for label, reason in absent.items()) or "no run"
            checks.append(Check(name=claim.name, expected=claim.paper_value, measured=None,
                                tolerance=claim.tolerance, passed=False, informational=True,
                                detail=f"not measured: {why}", statement=statement))
            continue
        m = MEASURES.get(claim.kind, _unmeasured)(claim, outs)
        detail = m.detail + "".join(f"; run {label} not measured: {reason}" for label, reason in absent.items())
        checks.append(Check(name=claim.name, expected=m.expected, measured=m.measured, tolerance=claim.tolerance,
                            passed=bool(m.passed), informational=claim.informational or not decide or bool(absent),
                            detail=detail, statement=statement))
    return checks


# -- re-judging a published result from what it stored ---------------------------------------------------------
#: a neuron row's per-run text as results stored it before the rows weighed their outliers (two forms), and now
_STORED_SHARE = (
    re.compile(r"(?P<run>\S+ seed \d+): (?P<ok>\d+)/(?P<n>\d+) neurons \(norm share (?P<share>[0-9.]+)\)"
               r"(?:; lowest max power (?P<low>[0-9.]+))?"),
    re.compile(r"(?P<run>\S+ seed \d+): norm share (?P<share>[0-9.]+), (?P<ok>\d+)/(?P<n>\d+) neurons"),
)
#: the neuron rows (:func:`_norm_share`, :func:`_max_power_all`) whose stored detail holds what they are judged on
NEURON_KINDS = ("max-power-all", "single-frequency", "single-irrep")


def rejudged_row(claim: Claim, row: dict[str, Any]) -> dict[str, Any]:
    """A stored check row (``Check.to_dict``) of ``claim`` judged again by the current reading, from what the row
    stored: the statement and tolerance are the claim's; a neuron row (:data:`NEURON_KINDS`) whose detail stored,
    per run, its count of neurons meeting the claim and their norm share (printed with 9 decimals) is judged on
    that share less its printing's rounding (``5e-10``), with the outliers' count and mass (at most ``1 - share +
    5e-10``) in the detail.  A row whose claim cannot be recomputed from what it stored is returned with only its
    statement and tolerance refreshed."""
    out = dict(row, statement=f"{claim.statement}. Read as: {claim.reading}", tolerance=claim.tolerance)
    if claim.kind not in NEURON_KINDS or row.get("measured") is None:
        return out
    found = [m for pattern in _STORED_SHARE for m in pattern.finditer(str(row.get("detail", "")))]
    if not found:
        return out
    rounding = 5e-10
    parts, lows = [], []
    for m in found:
        share, n, ok = float(m["share"]), int(m["n"]), int(m["ok"])
        lows.append(share - rounding)
        parts.append(f"{m['run']}: norm share {m['share']} in {ok}/{n} neurons; outliers: {n - ok}, holding at most "
                     f"{max(1 - share, 0.0) + rounding:.1e} of the norm" + (
                         f"; lowest max power {low}" if (low := m.groupdict().get("low")) else ""))
    worst = min(float(m["share"]) for m in found)
    out.update(measured=worst, expected=1.0, passed=min(lows) >= 1 - (claim.tolerance or 0.0),
               detail="re-judged from the stored result (norm shares printed to 9 decimals, so each known within "
                      f"{rounding:g}): " + "; ".join(parts))
    return out
