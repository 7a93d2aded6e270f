"""The class-weighted single-neuron bracket for any weights ``(q, tau)`` (``solve --single-neuron --weights``):
the proved path under translation-invariant weights against the default, the closed form and the relaxation; the
exact hypothesis; the certified relaxation against an exact value (k = 1); bad arrays and sizes refused."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from margintheory.cli import main
from margintheory.core import theory
from margintheory.engines.margins import input_grid
from margintheory.errors import InputError
from margintheory.presentation.schema import validate_result
from margintheory.solvers.class_weighted import (
    circulant_certificate,
    class_weighted_single_neuron,
    class_weights,
    kappa_bound,
    kappa_values,
)
from margintheory.solvers.single_neuron import solve_single_neuron


def _uniform(p: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    n, y = p**k, input_grid(p, k).sum(axis=1) % p
    tau = np.full((n, p), 1.0 / (p - 1))
    tau[np.arange(n), y] = 0.0
    return np.full(n, 1.0 / n), tau


def _shifted(p: int, k: int, profile: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """q uniform, tau[x, y(x) + d] = profile[d] (translation-invariant)."""
    n, y = p**k, input_grid(p, k).sum(axis=1) % p
    tau = np.zeros((n, p))
    for d, v in profile.items():
        tau[np.arange(n), (y + d) % p] = v
    return np.full(n, 1.0 / n), tau


def _random(p: int, k: int, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    n, y = p**k, input_grid(p, k).sum(axis=1) % p
    rng = np.random.default_rng(seed)
    q = rng.random(n) + 0.2
    tau = rng.random((n, p))
    tau[np.arange(n), y] = 0.0
    return q / q.sum(), tau / tau.sum(axis=1, keepdims=True)


def test_uniform_weights_reproduce_the_default_bracket():
    q, tau = _uniform(5, 2)
    b = class_weighted_single_neuron(5, 2, q=q, tau=tau)
    default = solve_single_neuron(5, 2)
    assert b.upper_exactness == default.upper_exactness == "proved"
    assert b.lower == pytest.approx(default.lower, rel=1e-13)
    assert b.upper == pytest.approx(default.upper, rel=1e-12)  # the file's floats are uniform only up to rounding
    assert b.lower <= theory.gamma_star(5, 2) * (1 + 1e-12) <= b.upper * (1 + 1e-12)


def test_translation_invariant_tau_is_proved_and_matches_the_closed_form():
    """All weight on the wrong label y + 1: kappa(j) = 1 - omega^j, max |kappa| = 2 cos(pi / 2p) at j = (p-1)/2,
    so Psi = gamma* (p-1)/p * 2 cos(pi / 2p) (fourier_pricing's closed form)."""
    p, k = 5, 2
    q, tau = _shifted(p, k, {1: 1.0})
    b = class_weighted_single_neuron(p, k, q=q, tau=tau)
    closed = theory.gamma_star(p, k) * (p - 1) / p * 2 * math.cos(math.pi / (2 * p))
    assert b.upper_exactness == "proved" and b.method == "fourier-exact"
    assert b.lower <= closed * (1 + 1e-12) and closed <= b.upper
    assert b.relative_gap < 1e-9 and b.weights["best_frequency"] == (p - 1) // 2
    assert abs(b.weights["lower_by_dft"] - b.weights["lower_by_direct_sum"]) <= 1e-13 * closed
    assert all(s.passed for s in b.proved_upper.steps)


def test_proved_bracket_agrees_with_the_relaxation_on_the_same_weights():
    q, tau = _shifted(3, 2, {1: 0.75, 2: 0.25})
    proved = class_weighted_single_neuron(3, 2, q=q, tau=tau)
    relaxed = class_weighted_single_neuron(3, 2, q=q, tau=tau, method="fourier-blocks", n_starts=4)
    assert proved.upper_exactness == "proved" and relaxed.upper_exactness == "certified"
    assert relaxed.lower <= proved.upper and proved.lower <= relaxed.upper
    assert relaxed.relative_gap < 1e-6


def test_the_hypothesis_is_decided_exactly_not_within_a_tolerance():
    q, tau = _shifted(5, 2, {1: 0.5, 3: 0.5})
    assert class_weights(5, 2, q=q, tau=tau).translation_invariant
    nudged_tau = tau.copy()
    nudged_tau[7, np.flatnonzero(tau[7])[0]] = np.nextafter(0.5, 1.0)  # one ulp: still a valid distribution
    assert not class_weights(5, 2, q=q, tau=nudged_tau).translation_invariant
    nudged_q = q.copy()
    nudged_q[3] = np.nextafter(q[3], 1.0)
    assert not class_weights(5, 2, q=nudged_q, tau=tau).translation_invariant
    with pytest.raises(InputError, match="translation-invariant"):
        class_weighted_single_neuron(5, 2, q=nudged_q, tau=tau, method="fourier-exact")


def test_kappa_bound_is_an_exact_certificate_that_fails_below_the_maximum():
    rng = np.random.default_rng(0)
    t = rng.random(31)
    t[0] = 0.0
    t /= t.sum()
    kb = kappa_bound(t)
    top = float(np.max(np.abs(kappa_values(t)) ** 2))
    assert kb.holds and top <= float(kb.r) <= top * (1 + 1e-12)
    low = Fraction(top * (1 - 1e-9))  # below the largest eigenvalue: no certificate can exist
    diag, off = circulant_certificate(t, low, 2.0**-48)
    assert diag < off


def test_relaxation_for_general_weights_contains_the_exact_value_k1():
    """k = 1: Psi = max_{|u|^2 + |w|^2 <= 1} u^T G w = sigma_max(G) / 2 (an independent value)."""
    q, tau = _random(3, 1)
    b = class_weighted_single_neuron(3, 1, q=q, tau=tau, n_starts=4)
    G = class_weights(3, 1, q=q, tau=tau).pair_weights().signed_matrix()
    exact = float(np.linalg.svd(G, compute_uv=False)[0]) / 2
    assert b.upper_exactness == "certified" and b.method == "generic"
    assert b.lower <= exact * (1 + 1e-12) and exact <= b.upper
    assert b.relative_gap < 1e-9 and b.weights["rounding_of_q_tau"] > 0


@pytest.mark.parametrize("change,message", [
    (lambda q, t: (q * 2, t), "sum to 1"),
    (lambda q, t: (np.where(np.arange(q.size) == 0, -q, q), t), "non-negative"),
    (lambda q, t: (q, t + 0.0 * t + (np.arange(t.shape[1]) == 0)), "must be 0|sum to 1"),
    (lambda q, t: (q[:-1], t), "shape"),
    (lambda q, t: (q, np.full_like(t, np.nan)), "non-finite"),
])
def test_bad_arrays_are_one_clear_input_error(change, message):
    q, tau = change(*_uniform(3, 2))
    with pytest.raises(InputError, match=message):
        class_weights(3, 2, q=q, tau=tau)


def test_cli_json_is_in_the_schema_and_says_where_it_wrote(capsys, tmp_path):
    path, out = tmp_path / "w.npz", tmp_path / "neuron.npz"
    np.savez(path, **dict(zip(("q", "tau"), _shifted(5, 2, {1: 1.0}), strict=True)))
    code = main(["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(path), "--json",
                 "--out", str(out)])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    validate_result(doc)
    assert code == 0 and doc["verdict"] == "verified" and doc["parameters"]["weights"] == str(path)
    d = doc["details"]
    assert d["upper_bound_exactness"] == "proved" and d["lower_bound"] <= d["upper_bound"]
    # the bound is the conclusion of its rows: it rests on their argued steps (weak duality, homogeneity), listed,
    # not hidden behind "proved"; the translation-invariant reduction is computed (exact rationals), not assumed
    # (named "gamma* x sum(w) <= upper bound" when the float total of the weights is not exactly 1)
    upper = next(c for c in doc["checks"] if c["name"] in ("gamma* <= upper bound", "gamma* x sum(w) <= upper bound"))
    assert d["upper_bound_assumes"] == upper["assumes"] == ["Lemma C.6", "U: homogeneity"]
    reduction = next(c for c in doc["checks"] if c["name"] == "U: F = lam F_unif(u, K_t w)")
    assert reduction["exactness"] == "proved" and reduction["passed"]
    assert "column sums of K_t all 0" in reduction["detail"]
    assert d["weights"]["translation_invariant"] and not d["weights"]["uniform"]
    assert captured.err.strip().splitlines()[-1] == f"wrote {out}" and out.is_file()
    # the class-weighted optimum is not gamma*: no ratio to it (it printed "relative error 1.33" beside verified)
    assert doc["gamma_star"] is None and doc["ratio_to_gamma_star"] is None and doc["relative_error"] is None
    assert "class weights" in doc["gamma_star_note"]


def test_the_reduction_to_the_uniform_objective_is_computed_and_fails_when_wrong():
    from fractions import Fraction

    from margintheory.solvers.class_weighted import uniform_reduction

    p, k = 5, 2
    profile = np.array([0.0, 0.5, 0.0, 0.25, 0.25])
    s = Fraction(1, 25)
    lam = s * p**k * Fraction(p - 1, p)
    assert uniform_reduction(profile, p, k, s, lam)[0]
    assert not uniform_reduction(profile, p, k, s, 2 * lam)[0]  # a wrong scale
    assert not uniform_reduction(profile, p, k, s, s * p**k)[0]  # lam without (p-1)/p
    assert not uniform_reduction(np.array([0.1, 0.4, 0.0, 0.25, 0.25]), p, k, s, lam)[0]  # t(0) != 0


@pytest.mark.parametrize("case,message", [
    ("shape", "array tau must have shape (25, 5)"),
    ("missing", "missing array(s) ['tau']"),
    ("text", "must hold real numbers"),
    ("sum", "row 0 sums to"),
    ("no-single", "--weights applies to --single-neuron"),
    ("too-big", "needs an estimated"),
])
def test_cli_bad_weights_are_one_line_exit_2(capsys, tmp_path, case, message):
    q, tau = _uniform(5, 2)
    arrays = {"shape": {"q": q, "tau": tau[:, :4]}, "missing": {"q": q}, "text": {"q": q, "tau": np.array("x")},
              "sum": {"q": q, "tau": tau * 1.5}}.get(case, {"q": q, "tau": tau})
    path = tmp_path / "w.npz"
    np.savez(path, **arrays)
    argv = ["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(path)]
    if case == "no-single":
        argv.remove("--single-neuron")
    if case == "too-big":  # random weights at (13, 3): the quartic form has 52 variables (a Gram matrix of side
        # 1378, estimated 2.7 GiB), the eliminated branch and bound does not apply (2197 inputs carry weight), and
        # the generic relaxation in 52 variables does not fit 2 GiB either
        path13 = tmp_path / "w13.npz"
        np.savez(path13, **dict(zip(("q", "tau"), _random(13, 3), strict=True)))
        argv = ["solve", "--p", "13", "--k", "3", "--single-neuron", "--weights", str(path13)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err


def test_weights_summing_to_slightly_less_than_one_are_compared_as_given(capsys, tmp_path):
    """Sums within the accepted 1e-9 but below 1 scale Psi below gamma*: weak duality is gamma* sum(q tau) <= Psi,
    and a check that compared with gamma* itself would refute correct weights."""
    q, tau = _uniform(5, 2)
    path = tmp_path / "w.npz"
    np.savez(path, q=q * (1 - 5e-10), tau=tau)
    assert main(["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "verified" and doc["details"]["upper_bound"] < theory.gamma_star(5, 2)
    assert any("not exactly 1" in n for n in doc["notes"])
