"""The compact lower end on files that are almost, but not quite, exact cosine networks: every comparison of the
rigorous rounding check is NaN-safe, weight ratios it cannot hold exactly refuse the shortcut (the exhaustive engine
decides), nothing it raises ends ``verify --network``, and what it reports is the file's margin (an interval), never
the exact description's.  A hypothesis fuzz compares it with the exhaustive engine (a larger run:
``benchmarks/fuzz_compact.py``)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings

from margintheory import verify
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition
from margintheory.engines import fourier_margin as fm
from margintheory.engines.margins import exhaustive_margin
from tests.compact_cases import PRIMES, compact_cases


def _with_tiny_neuron(p: int, k: int, amplitude: float, zeta: int) -> PolyNetwork:
    """The construction plus one exact cosine neuron of the given amplitude at frequency ``zeta``."""
    net = build_construction(p, k)
    u = amplitude * np.cos(2 * np.pi * zeta * np.arange(p) / p)
    return PolyNetwork(np.concatenate([net.U, np.stack([u] * k)[None]]), np.concatenate([net.W, u[None]]))


def _coprime(p: int, k: int, count: int = 8) -> PolyNetwork:
    """The construction with ``count`` neurons rescaled so that their weight ratios are ``1/P`` for primes ``P``
    just below 1e6 (a legitimate cosine network whose exact weights have a common denominator near 1e48)."""
    net = build_construction(p, k)
    U, W = net.U.copy(), net.W.copy()
    for i, prime in enumerate(PRIMES[:count]):
        f = (1.0 / prime) ** (1 / (k + 1))
        U[i] *= f
        W[i] *= f
    return PolyNetwork(U, W)


def test_a_weight_ratio_too_small_to_describe_refuses_the_shortcut():
    """An extra neuron of amplitude 1e-10: its weight ratio (3e-28) rounded to the rational 0, whose arb root is
    nan +- inf; the NaN passed the rounding check and a constructor crashed (a traceback, exit 1)."""
    net = _with_tiny_neuron(5, 2, 1e-10, 2)
    cm, why = fm.network_fourier_margin(net)
    assert cm is None and "too small for a rational" in why
    result = verify(ModularAddition(5, 2), network=net, certificate=False)
    assert result.fields["lower_method"] == "exhaustive" and "too small" in result.fields["lower_how"]


def test_the_rounding_check_refuses_a_nan_bound(monkeypatch):
    """``rel > tolerance`` is False for NaN: the check must be ``not rel <= tolerance``."""
    real = fm._deviation

    def nan_bound(net, proposal):
        dev, amp = real(net, proposal)
        dev[0, 0] = math.nan
        return dev, amp

    monkeypatch.setattr(fm, "_deviation", nan_bound)
    rec = fm.recognize_cosine_network(build_construction(5, 2))
    assert rec.network is None and "unbounded" in rec.reason


def test_coprime_weight_ratios_refuse_the_shortcut_and_the_exhaustive_engine_decides():
    net = _coprime(5, 3)
    cm, why = fm.network_fourier_margin(net)
    assert cm is None and "common denominator" in why and "2^52" in why
    result = verify(ModularAddition(5, 3), network=net, certificate=False)
    assert result.fields["lower_method"] == "exhaustive" and "common denominator" in result.fields["lower_how"]
    em = exhaustive_margin(net.normalized())
    assert result.normalized_margin == pytest.approx(em.normalized_margin, rel=1e-12)


def test_nothing_raised_inside_the_shortcut_ends_the_verification(monkeypatch):
    def broken(net):
        raise ArithmeticError("a ball of infinite radius")

    monkeypatch.setattr(fm, "check_structure", broken)
    net = build_construction(5, 2)
    cm, why = fm.network_fourier_margin(net)
    assert cm is None and "ArithmeticError: a ball of infinite radius" in why
    result = verify(ModularAddition(5, 2), network=net, certificate=False)
    assert result.fields["lower_method"] == "exhaustive" and result.verdict == "verified"


def test_a_file_reports_its_own_margin_not_the_exact_descriptions():
    """One neuron of the (7, 3) construction scaled by 1 - 1e-13: the JSON said normalized_margin = 1/224 exactly,
    relative_error 0.0 and ratio 1.0, while the file's margin is 2.4e-13 below gamma*.  Now the value is the lower
    end of the file's certified interval, which holds the exhaustive engine's measurement."""
    net = build_construction(7, 3)
    U, W = net.U.copy(), net.W.copy()
    U[0] *= 1 - 1e-13
    W[0] *= 1 - 1e-13
    net = PolyNetwork(U, W)
    problem = ModularAddition(7, 3)
    result = verify(problem, network=net, certificate=False)
    f = result.fields
    assert f["lower_method"] == "fourier" and f["lower_exactness"] == "certified"
    lo, hi = f["normalized_margin_interval"]
    em = exhaustive_margin(net.normalized())
    assert lo <= em.normalized_margin + em.normalized_tolerance and em.normalized_margin - em.normalized_tolerance <= hi
    assert result.normalized_margin == lo < problem.gamma_star
    assert 0 < f["relative_error"] < 1e-10 and f["ratio_to_gamma_star"] < 1
    assert f["exact_description_margin"] == "1/224"  # named as the description's, beside the file's interval
    assert result.margin is not None and result.margin.exact is None
    # the exact construction itself keeps its exact numbers
    exact = verify(problem, certificate=False)
    assert exact.fields["relative_error"] == 0.0 and exact.fields["ratio_to_gamma_star"] == 1.0


def _run(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "margintheory.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_verify_network_on_the_crafted_files_is_never_a_traceback(tmp_path):
    """As a subprocess: the NaN case and the coprime case gave a traceback and exit 1 (which reads as refuted)."""
    _with_tiny_neuron(5, 2, 1e-10, 2).save(tmp_path / "tiny.npz")
    _coprime(5, 3).save(tmp_path / "coprime.npz")
    for name in ("tiny", "coprime"):
        run = _run("verify", "--network", f"{name}.npz", "--json", "--no-certificate", cwd=tmp_path)
        assert "Traceback" not in run.stderr, run.stderr
        doc = json.loads(run.stdout)
        assert run.returncode == doc["exit_code"] and doc["details"]["lower_method"] == "exhaustive"


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(compact_cases())
def test_fuzz_the_compact_path_against_the_exhaustive_engine(case):
    """Exact cosine networks with tiny, rational or non-representable changes: the shortcut never raises; when it
    accepts a file, its interval holds the exhaustive margin (so L is never above the true margin), and a claim it
    verifies holds for the true margin within the tolerance it states."""
    cm, why = fm.network_fourier_margin(case.network)
    em = exhaustive_margin(case.network.normalized())
    true_lo, true_hi = em.normalized_margin - em.normalized_tolerance, em.normalized_margin + em.normalized_tolerance
    if cm is None:
        assert why
        return
    assert cm.normalized_lower <= true_hi and true_lo <= cm.normalized_upper
    result = verify(case.problem, network=case.network, certificate=False)
    assert result.normalized_margin <= true_hi
    gamma = case.problem.gamma_star
    row = next(c for c in result.checks if c.name == "margin = gamma* (C.22)")
    if row.passed:
        assert abs(true_lo - gamma) <= row.tolerance * gamma and abs(true_hi - gamma) <= row.tolerance * gamma
    if result.fields["lower_method"] == "fourier" and result.fields["lower_exactness"] == "certified":
        assert result.fields["relative_error"] > 0 and result.fields["ratio_to_gamma_star"] != 1.0
    exhaustive = verify(case.problem, network=case.network, certificate=False, exhaustive=True)
    assert result.verdict == exhaustive.verdict, (result.verdict, exhaustive.verdict)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(compact_cases(kinds=("noise", "scale"), sizes=((3, 2), (5, 1), (5, 2), (7, 2))))
def test_verify_and_verify_exhaustive_give_one_verdict_on_near_exact_files(case):
    """The shortcut and the exhaustive engine decide one claim at one tolerance: on files a hair away from an exact
    network (the kinds on which they disagreed, verified by the shortcut at its interval's width and refuted at the
    exhaustive engine's finer bound) their verdicts agree; the shortcut hands over what it cannot decide."""
    a = verify(case.problem, network=case.network, certificate=False)
    b = verify(case.problem, network=case.network, certificate=False, exhaustive=True)
    assert a.verdict == b.verdict, (case, a.verdict, b.verdict)
    assert b.fields["lower_method"] == "exhaustive"


def test_the_fuzz_cases_cover_every_kind():
    """The strategy draws every kind of change (a weak fuzz would only ever draw the exact network)."""
    seen: set[str] = set()

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(compact_cases())
    def draw(case):
        seen.add(case.kind)

    draw()
    from tests.compact_cases import KINDS

    assert seen == set(KINDS)


def test_the_primes_are_primes_below_the_largest_denominator_tried():
    assert all(sympy.isprime(q) and q < fm.MAX_WEIGHT_DENOMINATOR for q in PRIMES)


def _scaled_construction(p: int, k: int, factor: float) -> PolyNetwork:
    """The float64 construction with neuron 0's weight ``A^(k+1)`` times ``factor``."""
    net = build_construction(p, k)
    U, W = net.U.copy(), net.W.copy()
    U[0] *= factor ** (1 / (k + 1))
    W[0] *= factor ** (1 / (k + 1))
    return PolyNetwork(U, W)


def test_a_file_between_the_two_resolutions_gets_one_verdict():
    """A neuron scaled by 1 - 1e-13 (p = 5, k = 1): the file's margin, wrong logits and points are off by more than
    the exhaustive engine's error bounds but inside the shortcut's certified interval -- the band where the shortcut
    said verified (at its interval's width) and the exhaustive engine refuted (at its own bound).  Both now decide
    |margin - gamma*| <= 1e-8 gamma*."""
    problem = ModularAddition(5, 1)
    net = _scaled_construction(5, 1, 1 - 1e-13)
    cm, _ = fm.network_fourier_margin(net)
    em = exhaustive_margin(net.normalized())
    gamma, e = problem.gamma_star, em.logit_error_bound
    assert cm is not None and cm.normalized_lower <= gamma <= cm.normalized_upper  # the shortcut cannot tell
    assert abs(em.normalized_margin - gamma) > em.normalized_tolerance + 4 * 2.0**-52 * gamma  # the exhaustive can
    assert em.max_wrong_spread > 2 * e and em.points_above(em.h + 4 * e) > 0  # and so for C.1 and the points
    a = verify(problem, network=net, certificate=False)
    b = verify(problem, network=net, certificate=False, exhaustive=True)
    assert a.fields["lower_method"] == "fourier" and b.fields["lower_method"] == "exhaustive"
    assert a.verdict == b.verdict == "verified" and a.exit_code == b.exit_code == 0
    row = next(c for c in b.checks if c.name == "margin = gamma* (C.22)")
    assert row.tolerance == 1e-8 and row.detail.endswith(": holds")


def test_the_shortcut_hands_a_file_it_cannot_decide_to_the_exhaustive_engine():
    """With the claim's boundary gamma* - T inside the shortcut's certified interval but far outside the exhaustive
    engine's enclosure, the shortcut does not decide: the exhaustive engine does, and says why it ran."""
    problem = ModularAddition(5, 1)
    net = _scaled_construction(5, 1, 1 - 1e-13)
    cm, _ = fm.network_fourier_margin(net)
    em = exhaustive_margin(net.normalized())
    gamma, m = problem.gamma_star, em.normalized_margin
    assert cm is not None and (m - cm.normalized_lower) / 2 > 4 * (em.normalized_tolerance + 4 * 2.0**-52 * gamma)
    rtol = (gamma - (cm.normalized_lower + m) / 2) / gamma  # gamma* - T halfway between the shortcut's L and m
    a = verify(problem, network=net, certificate=False, rtol=rtol)
    b = verify(problem, network=net, certificate=False, exhaustive=True, rtol=rtol)
    assert a.fields["lower_method"] == "exhaustive" and "shortcut cannot decide margin = gamma* (C.22)" in a.fields[
        "lower_how"]
    assert a.verdict == b.verdict
    assert next(c for c in a.checks if c.name == "margin = gamma* (C.22)").passed  # m - (gamma* - T) >> its bound


def test_a_claim_no_engine_can_decide_is_undecided_exit_2(tmp_path):
    """rtol 0 asks for equality exactly: a float64 enclosure around gamma* can neither verify nor refute it, so the
    verdict is undecided (exit 2), the undecided claims are named, and the JSON validates against the schema."""
    from margintheory.presentation.schema import validate_result

    net = build_construction(5, 2)
    result = verify(ModularAddition(5, 2), network=net, certificate=False, exhaustive=True, rtol=0.0)
    assert result.verdict == "undecided" and result.exit_code == 2
    assert "margin = gamma* (C.22)" in result.fields["undecided_claims"]
    validate_result(result.to_dict())
    path = tmp_path / "net.npz"
    net.save(path)
    run = _run("verify", "--network", str(path), "--exhaustive", "--rtol", "0", "--no-certificate", "--json",
               cwd=tmp_path)
    assert run.returncode == 2 and json.loads(run.stdout)["verdict"] == "undecided", run.stderr


def test_both_backends_and_the_shortcut_give_the_band_file_one_verdict(tmp_path, capsys):
    """The file between the two resolutions through the command: the shortcut, and the exhaustive engine on numpy
    and on JAX, decide the same claim at the same tolerance."""
    from margintheory.cli import main

    path = tmp_path / "band.npz"
    _scaled_construction(5, 1, 1 - 1e-13).save(path)
    base = ["verify", "--network", str(path), "--no-certificate", "--json"]
    verdicts = {}
    for name, extra in (("shortcut", []), ("numpy", ["--exhaustive", "--backend", "numpy"]),
                        ("jax", ["--exhaustive", "--backend", "jax"])):
        code = main(base + extra)
        doc = json.loads(capsys.readouterr().out)
        row = next(c for c in doc["checks"] if c["name"] == "margin = gamma* (C.22)")
        verdicts[name] = (code, doc["verdict"], row["tolerance"], doc["details"]["lower_method"])
    assert verdicts == {"shortcut": (0, "verified", 1e-8, "fourier"), "numpy": (0, "verified", 1e-8, "exhaustive"),
                        "jax": (0, "verified", 1e-8, "exhaustive")}
