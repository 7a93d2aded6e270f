"""The universality-groups recipe: which irreps a trained network uses, against the max-margin solution's
(Chughtai, Chan, Nanda, arXiv:2302.03025; Morwani et al., arXiv:2311.07568, Thm 7.9 and App. D.9)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from margintheory.core.network import PolyNetwork
from margintheory.core.problems import GroupComposition
from margintheory.core.representations import basis_vectors, real_irreps
from margintheory.presentation.schema import validate_result
from margintheory.reproduce.catalog import recipe
from margintheory.reproduce.claims import claim_checks
from margintheory.reproduce.runner import ReproduceOptions, reproduce
from margintheory.reproduce.runs import RunOutcome
from margintheory.reproduce.universality import irrep_mass, jaccard, max_margin_irreps, used_irreps

REC = recipe("universality-groups")


def planted(group: str, sizes: dict[int, float], seed: int = 0) -> PolyNetwork:
    """A network whose neurons each lie in one irrep: for irrep index ``r`` and scale ``s`` in ``sizes``, two
    neurons with ``u, v, w`` random in the span of ``r``'s basis vectors (Lemma D.10), of norm about ``s``."""
    irreps = real_irreps(GroupComposition(group).G)
    B, owner = basis_vectors(irreps)
    rng = np.random.default_rng(seed)
    U, W = [], []
    for r, scale in sizes.items():
        cols = B[:, owner == r]
        for _ in range(2):
            vecs = [cols @ rng.standard_normal(cols.shape[1]) for _ in range(3)]
            vecs = [scale * v / np.linalg.norm(v) for v in vecs]
            U.append(np.stack(vecs[:2]))
            W.append(vecs[2])
    return PolyNetwork(np.array(U), np.array(W))


def outcome(label: str, net: PolyNetwork, margin_ratio: float = 0.5, seed: int = 0) -> RunOutcome:
    spec = REC.run(label)
    gamma = max_margin_irreps(spec.sizes["group"])["gamma_star_lp"]
    return RunOutcome(spec, seed, net, net, [], {"normalized_margin": margin_ratio * gamma, "details": {}},
                      Path("."), 0.0)


def rows(outs: list[RunOutcome]) -> dict[str, object]:
    labels = {o.spec.label for o in outs}
    missing = {label: "not planted" for label in REC.labels if label not in labels}
    return {c.name: c for c in claim_checks(REC, {label: [o for o in outs if o.spec.label == label]
                                                  for label in labels}, missing, decide=True)}


def test_the_max_margin_irreps_are_the_class_lps_and_a5_leaves_the_5_dimensional_out():
    d5, a5 = max_margin_irreps("D5"), max_margin_irreps("A5")
    assert d5["condition_holds"] and d5["used"] == ["R1 (d=1)", "R2 (d=2)", "R3 (d=2)"]
    assert not a5["condition_holds"] and a5["used"] == ["R1 (d=3)", "R2 (d=3)", "R3 (d=4)"]
    assert a5["masses"]["R4 (d=5)"] == 0.0 and abs(sum(a5["masses"].values()) - 1) < 1e-9


@pytest.mark.parametrize("r", [0, 1, 2, 3])
def test_a_network_planted_in_one_irrep_uses_that_irrep_alone(r):
    net = planted("D5", {r: 1.0})
    mass, names = irrep_mass(net, "D5")
    assert abs(mass[r] - 1) < 1e-12 and abs(mass.sum() - 1) < 1e-12
    assert used_irreps(net, "D5") == [names[r]]
    row = rows([outcome("D5", net)])["D5: irreps = max-margin's"]
    lp = max_margin_irreps("D5")["used"]
    assert row.measured == pytest.approx(jaccard([names[r]], lp)) and not row.passed
    assert row.measured == (0.0 if r == 0 else pytest.approx(1 / 3))  # trivial: no overlap with the LP's irreps
    assert f"uses ['{names[r]}']" in row.detail


def test_the_lps_irreps_match_and_a_small_irrep_is_not_used():
    names = [R.name for R in real_irreps(GroupComposition("D5").G)]
    full = planted("D5", {1: 1.0, 2: 1.0, 3: 1.0})
    row = rows([outcome("D5", full, seed=s) for s in (0, 1)])["D5: irreps = max-margin's"]
    assert row.measured == 1.0 and row.passed and "seeds agree with each other: yes" in row.detail
    # the trivial irrep at norm 0.3 of the others: share 2 * 0.027 / (6 + 0.054) < 0.05, below the threshold
    small = planted("D5", {1: 1.0, 2: 1.0, 3: 1.0, 0: 0.3})
    assert 0 < irrep_mass(small, "D5")[0][0] < 0.05 and used_irreps(small, "D5") == names[1:]
    larger = planted("D5", {1: 1.0, 2: 1.0, 3: 1.0, 0: 0.5})  # share 0.25 / 6.25 = 0.04: still below
    bigger = planted("D5", {1: 1.0, 2: 1.0, 3: 1.0, 0: 0.7})  # 0.686 / 6.686 = 0.10: used
    assert used_irreps(larger, "D5") == names[1:] and used_irreps(bigger, "D5") == names
    mixed = rows([outcome("D5", full, seed=0), outcome("D5", bigger, seed=1)])["D5: irreps = max-margin's"]
    assert mixed.measured == pytest.approx(3 / 4) and "seeds agree with each other: no" in mixed.detail


def test_the_margin_row_is_the_margin_over_the_lps_max_margin():
    net = planted("D5", {1: 1.0})
    row = rows([outcome("D5", net, margin_ratio=0.25), outcome("D5", net, margin_ratio=0.75, seed=1)])
    margin = row["D5: margin / max"]
    assert margin.measured == pytest.approx(0.25) and margin.informational
    assert not row["S4: irreps = max-margin's"].measured  # not planted: no measured value


def test_the_recipe_runs_end_to_end_at_a_tiny_scale(tmp_path):
    result = reproduce("universality-groups", tmp_path, ReproduceOptions(scale=0.01, labels=("D5",),
                                                                          figures=False))
    doc = validate_result(result)
    assert doc["verdict"] == "not-applicable" and len(doc["checks"]) == len(REC.claims)
    checks = {c["name"]: c for c in doc["checks"]}
    row = checks["D5: irreps = max-margin's"]
    assert row["measured"] is not None and "D5 seed 2" in row["detail"]
    # the row's sets are the trained networks' own, recomputed from the saved networks
    for seed in (0, 1, 2):
        net = PolyNetwork.load(tmp_path / "runs" / f"D5-seed{seed}-scale0.01" / "network.npz")
        assert f"D5 seed {seed} (D5): uses {used_irreps(net, 'D5')}" in row["detail"]
    assert checks["A5: irreps = max-margin's"]["measured"] is None
    assert "Chughtai" in doc["details"]["citation"] and "Morwani" in doc["details"]["citation"]


def test_analyze_reports_each_neurons_power_in_every_irrep():
    from margintheory.training.analysis import analyze

    net = planted("D5", {2: 1.0, 3: 2.0})  # neurons 0, 1 in R2; 2, 3 in R3
    fields = analyze(GroupComposition("D5"), net, rtol=None).fields
    power = np.asarray(fields["neuron_irrep_power"])
    assert power.shape == (4, 4) and np.allclose(power.sum(axis=1), 1)
    assert np.allclose(power, np.eye(4)[[2, 2, 3, 3]], atol=1e-12)
    assert list(fields["neuron_irrep"]) == [2, 2, 3, 3]
    assert fields["irrep_names"] == [R.name for R in real_irreps(GroupComposition("D5").G)]
