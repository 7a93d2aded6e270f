"""The compact lower end (margintheory.engines.fourier_margin): the margin of a single-frequency cosine network from
its phase moments, against the exhaustive engine, and the refusals that keep the shortcut honest."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from margintheory import verify
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.core.phase_measures import FAMILIES
from margintheory.core.problems import ModularAddition
from margintheory.engines import fourier_margin as fm
from margintheory.engines.margins import exhaustive_margin

AGREE = 1e-13


def _agree(cm: fm.CompactMargin, net: PolyNetwork) -> None:
    """Margin, per-label margins and the label-logit table of the compact engine against the exhaustive engine on
    the float64 network ``net`` (same scale)."""
    from margintheory.engines.margins import sum_labels

    em = exhaustive_margin(net)
    p, k = net.p, net.k
    if "normalized_margin_interval" in cm.details:  # a file: its margin is known as a narrow interval, the lower end
        assert cm.normalized_margin == cm.normalized_lower  # reported (never the exact description's margin)
        assert cm.normalized_upper - cm.normalized_lower <= 1e-10 * abs(em.normalized_margin)  # (k = 5: 3e-11)
    else:
        assert abs(cm.normalized_margin - em.normalized_margin) <= AGREE * abs(em.normalized_margin)
    assert cm.normalized_lower <= em.normalized_margin + em.normalized_tolerance
    assert em.normalized_margin - em.normalized_tolerance <= cm.normalized_upper
    tol = 8 * (em.logit_error_bound + cm.logit_error)
    assert np.max(np.abs(em.label_logit_sums / p ** (k - 1) - cm.logits)) <= tol
    labels = sum_labels(p, k)
    for lab in range(p):
        assert np.max(np.abs(em.margins[labels == lab] - cm.label_margins[lab])) <= tol
        assert np.max(em.wrong_spread[labels == lab]) <= cm.wrong_spread[lab] + tol


CASES = [(7, 3), (5, 4), (9, 2), (5, 1), (3, 5)]


#: the smallest k at which each family is defined (the others start at k = 1)
SMALLEST_K = {"cyclic-lattice": 2, "parity-design": 3}


def _defined(family: str, k: int) -> bool:
    return k >= SMALLEST_K.get(family, 1)


def test_families_are_refused_below_their_smallest_k():
    undefined = [(p, k, f) for p, k in CASES for f in FAMILIES if not _defined(f, k)]
    assert undefined  # the exclusion below is exercised
    for p, k, family in undefined:
        with pytest.raises(ValueError):
            fm.construction_cosine_network(ModularAddition(p, k), family)


@pytest.mark.parametrize(("p", "k", "family"), [(p, k, f) for p, k in CASES for f in FAMILIES if _defined(f, k)])
def test_compact_agrees_with_exhaustive_on_every_family(p, k, family):
    problem = ModularAddition(p, k)
    exact = fm.construction_cosine_network(problem, family)
    cm = fm.compact_margin(exact)
    assert cm.exactness == "proved" and cm.normalized_margin_exact == problem.gamma_star_exact
    raw = build_construction(problem, normalize=False, family=family)
    _agree(cm, raw)
    from_file, why = fm.network_fourier_margin(raw.normalized())
    assert from_file is not None, why
    assert from_file.exactness == "certified"
    _agree(from_file, raw.normalized())


def test_the_networks_solve_saves_are_recognised(tmp_path):
    from margintheory.solvers.width import min_width_network

    mw = min_width_network(ModularAddition(7, 3), search=False)
    path = tmp_path / "k3.npz"
    mw.network.save(path)
    net = PolyNetwork.load(path)
    cm, why = fm.network_fourier_margin(net)
    assert cm is not None, why
    _agree(cm, net)


def _group_cases():
    g = fm.construction_cosine_network(ModularAddition(11, 3), "parity-design").groups[0]
    shifted = g.phases.copy()
    shifted[:, 3] = (shifted[:, 3] + 1) % 8
    return {
        "missing frequency": fm.CosineNetwork(11, 3, 8, (fm.CosineGroup((1, 3, 4, 5), g.phases, g.weights),)),
        "unequal weights": fm.CosineNetwork(11, 3, 8, (fm.CosineGroup((1, 2), g.phases, g.weights),
                                                       fm.CosineGroup((3, 4, 5), g.phases,
                                                                      tuple(2 * w for w in g.weights)))),
        "misaligned phases": fm.CosineNetwork(11, 3, 8, (fm.CosineGroup(g.frequencies, shifted, g.weights),)),
        "k = 1, two atoms": fm.CosineNetwork(11, 1, 4, (fm.CosineGroup(
            (1, 2, 3, 4, 5), np.array([[0, 0], [1, 3]]), (Fraction(1), Fraction(1, 3))),)),
        "k = 4, non-aligned diagonal": fm.CosineNetwork(7, 4, 2, (fm.CosineGroup(
            (1, 2, 3), np.array([[0, 0, 0, 0, 1]]), (Fraction(1),)),)),
    }


@pytest.mark.parametrize("name", [n for n in _group_cases() if n != "k = 4, non-aligned diagonal"])
def test_certified_path_agrees_with_exhaustive(name):
    """Networks whose logits depend on s only but are not max-margin (a frequency missing, unequal weights,
    misaligned phases, diagonal moments that survive): F in float64 with its rigorous bound."""
    net = _group_cases()[name]
    structure = fm.check_structure(net)
    assert structure.passed
    cm = fm.compact_margin(net, structure)
    assert cm.exactness == "certified"
    _agree(cm, fm.float_network(net))


def test_off_diagonal_moments_that_survive_are_caught_and_needed():
    """A single neuron per frequency has surviving off-diagonal moments: the shortcut is refused, and it would be
    wrong (the table F built while ignoring them differs from the exhaustive logits)."""
    net = _group_cases()["k = 4, non-aligned diagonal"]
    structure = fm.check_structure(net)
    assert not structure.passed and structure.failure_text()
    with pytest.raises(ValueError, match="off-diagonal"):
        fm.compact_margin(net, structure)
    wrong = fm._certified_margin(net, structure)  # what a version without the check would report
    em = exhaustive_margin(fm.float_network(net))
    assert abs(wrong.normalized_margin - em.normalized_margin) > 1e-3 * abs(em.normalized_margin)


def test_moment_counts_match_a_direct_count():
    rng = np.random.default_rng(1)
    for k, q, limit in [(1, 4, 10), (2, 6, 10), (3, 8, 2**21), (3, 100, 7), (4, 5, 2**21)]:
        phases, iw = rng.integers(0, q, (7, k + 1)), rng.integers(1, 5, 7)
        seen = {}
        for nodes, node, rho, w in fm.moment_blocks(phases, iw, k, q, limit):
            counts = np.zeros((len(nodes), q), dtype=np.int64)
            np.add.at(counts, (node, rho), w)
            seen.update({tuple(n): c for n, c in zip(nodes.tolist(), counts, strict=True)})
        ball = [n for n in itertools.product(range(-k, k + 1), repeat=k) if sum(map(abs, n)) <= k]
        assert sorted(seen) == sorted(ball)
        for n, c in seen.items():
            direct = np.bincount((phases[:, :k] @ np.array(n) + phases[:, k]) % q, weights=iw, minlength=q)
            assert np.array_equal(direct, c)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_expansion_coefficients_and_off_diagonal_indices(k):
    """``N_k(n)`` counts the sequences of ``k`` steps ``+-e_j`` summing to ``n`` (brute force)."""
    steps = [s * np.eye(k, dtype=int)[j] for j in range(k) for s in (1, -1)]
    counts: dict[tuple, int] = {}
    for seq in itertools.product(range(2 * k), repeat=k):
        n = tuple(int(v) for v in sum(steps[i] for i in seq))
        counts[n] = counts.get(n, 0) + 1
    for n in [(t,) * k for t in fm.diagonal_indices(k)] + [tuple(int(v) for v in r) for r in
                                                              fm.off_diagonal_indices(k)[:20]]:
        assert fm.expansion_coefficient(k, list(n)) == counts[n]
    idx = fm.off_diagonal_indices(k)
    assert len(idx) == fm.off_diagonal_count(k)
    expected = {n for n in counts if len(set(n)) > 1}
    assert {tuple(r) for r in idx.tolist()} == expected


def test_a_weight_moved_by_1e7_is_refused_the_shortcut_and_refuted():
    net = build_construction(ModularAddition(7, 3))
    U = net.U.copy()
    U[5, 1, 2] += 1e-7
    moved = PolyNetwork(U, net.W.copy())
    cm, why = fm.network_fourier_margin(moved)
    assert cm is None and why
    result = verify(ModularAddition(7, 3), network=moved, certificate=False)
    assert result.fields["lower_method"] == "exhaustive" and "refused" in result.fields["lower_how"]
    assert result.verdict == "refuted"
    rounded = verify(ModularAddition(7, 3), network=net, certificate=False)
    assert rounded.fields["lower_method"] == "fourier" and rounded.verdict == "verified"


def test_a_deviation_beyond_rounding_is_refused_even_with_equal_amplitudes():
    """Each vector moved along its own cosine's phase by 1e-9: still single-frequency with equal amplitudes, but
    not the exact network within float64 rounding."""
    exact = fm.construction_cosine_network(ModularAddition(7, 2), "cyclic-lattice")
    net = fm.float_network(exact)
    x = np.arange(7)
    U = net.U.copy()
    U[0, 0] = np.cos(2 * np.pi * (1 / 6 + x / 7) + 1e-9) * np.abs(U[0, 0]).max() / np.abs(
        np.cos(2 * np.pi * (1 / 6 + x / 7))).max()
    rec = fm.recognize_cosine_network(PolyNetwork(U, net.W))
    assert rec.network is None and rec.reason


def test_verify_exhaustive_forces_the_enumeration():
    problem = ModularAddition(5, 3)
    fast = verify(problem, family="parity-design", certificate=False)
    slow = verify(problem, family="parity-design", exhaustive=True, certificate=False)
    assert fast.fields["lower_method"] == "fourier" and fast.fields["lower_exactness"] == "proved"
    assert slow.fields["lower_method"] == "exhaustive" and "requested" in slow.fields["lower_how"]
    assert fast.verdict == slow.verdict == "verified"
    assert abs(fast.normalized_margin - slow.normalized_margin) <= AGREE * slow.normalized_margin
    assert {c.name for c in fast.checks} >= {c.name for c in slow.checks}


def test_the_certificate_says_how_the_lower_end_was_computed():
    result = verify(ModularAddition(5, 2))
    cert = result.certificate
    assert cert["lower_method"] == "fourier" and cert["lower_exactness"] == "proved"
    assert cert["lower_exact"] is None and "no input enumerated" in cert["lower_how"]
    assert result.verdict == "verified" and cert["relative_gap"] <= 1e-9


def test_solve_min_width_needs_no_lp_and_its_file_verifies_without_enumeration(capsys, tmp_path):
    """``solve --min-width`` builds the family directly (no column generation unless --search), proves both ends,
    and the saved file is verified through its Fourier structure."""
    import json

    from margintheory.cli import main

    path = tmp_path / "mw.npz"
    assert main(["solve", "--p", "5", "--k", "3", "--min-width", "--json", "--out", str(path)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["details"]["rounds"] == 0 and "not run" in d["details"]["column_generation"]
    assert d["certificate"]["lower_method"] == "fourier" and d["certificate"]["lower_exactness"] == "proved"
    assert d["certificate"]["relative_gap"] <= 1e-9 and d["verdict"] == "verified"
    assert main(["verify", "--network", str(path), "--json", "--no-certificate"]) == 0
    v = json.loads(capsys.readouterr().out)
    assert v["details"]["lower_method"] == "fourier" and v["width"] == d["width"] == 32


def test_the_block_sos_variable_counts_are_the_counted_ones():
    """The memory model's table of conic variables (used by the up-front estimate) against the count itself."""
    from margintheory.certificate import block_sos

    for k in range(1, 8):
        assert block_sos.VARIABLES[k] == block_sos.estimate_variables(k)
