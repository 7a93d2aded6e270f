"""The typed seam between the checks and the certificate: a result carries its network's normalized margin as a
:class:`~margintheory.core.checks.MarginMeasurement` (value, error bound, exactness, exact value, method, how), and the
lower end ``L`` of the max-min certificate is built from that object alone (docs/theory.md#certificate).

A misspelt or tampered ``fields`` entry cannot change or skip a certificate leg (``fields`` are not read); a misspelt
keyword of the measurement is a ``TypeError``; an inconsistent measurement is refused.  For every producer (the
compact construction check, ``--exhaustive``, ``--exact``, an exact family, ``--network FILE`` with and without the
Fourier shortcut, ``solve --min-width``) the typed margin agrees with the JSON output it stands for.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import sympy as sp

from margintheory import verify
from margintheory.certificate import maxmin
from margintheory.cli import main
from margintheory.commands import solve as solve_command
from margintheory.commands import verify as verify_command
from margintheory.core.checks import MarginMeasurement, VerificationResult
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import ModularAddition
from margintheory.errors import InputError

GAMMA_5_2 = sp.sqrt(30) / 180  # gamma* for (p, k) = (5, 2)
GOOD = {"value": 0.03, "error_bound": 1e-15, "exactness": "float", "method": "exhaustive", "how": "by hand"}


@pytest.fixture(scope="module")
def compact_result() -> VerificationResult:
    """The construction for (5, 2) checked without enumerating inputs (no solver leg)."""
    return verify(ModularAddition(5, 2), certificate=False)


# -- the measurement object ----------------------------------------------------------------------------------------


def test_a_misspelt_or_missing_keyword_is_a_type_error():
    MarginMeasurement(**GOOD)
    with pytest.raises(TypeError):
        MarginMeasurement(**{**GOOD, "exactnes": "float"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MarginMeasurement(**{k: v for k, v in GOOD.items() if k != "error_bound"})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MarginMeasurement(0.03, 1e-15, "float", "exhaustive", "by hand")  # type: ignore[misc]  # keywords only


@pytest.mark.parametrize("bad", [
    {"exactness": "argued"}, {"exactness": "exact"}, {"exactness": None}, {"method": "brute"}, {"method": "exact"},
    {"error_bound": -1e-300}, {"error_bound": math.inf}, {"error_bound": math.nan}, {"error_bound": True},
    {"error_bound": "0"}, {"value": True}, {"value": "0.03"}, {"how": ""}, {"how": "   "},
    {"exactness": "proved"},  # proved without its exact value
    {"exact": "1/3"},  # an exact value on a float margin
    {"exactness": "certified", "exact": "1/3"}, {"exactness": "proved", "exact": ""},
])
def test_an_inconsistent_measurement_is_refused(bad):
    with pytest.raises(InputError):
        MarginMeasurement(**{**GOOD, **bad})
    assert issubclass(InputError, ValueError)


def test_the_measurement_is_frozen_and_set_margin_takes_only_a_measurement():
    m = MarginMeasurement(**{**GOOD, "exactness": "proved", "exact": "3/100"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.value = 1.0  # type: ignore[misc]
    result = VerificationResult("t")
    with pytest.raises(TypeError):
        result.set_margin({"normalized_margin": 0.03})  # type: ignore[arg-type]
    assert result.margin is None and result.fields == {}
    result.set_margin(m)
    assert result.margin is m and result.fields == {
        "normalized_margin": 0.03, "margin_tolerance": 1e-15, "lower_method": "exhaustive", "lower_how": "by hand",
        "lower_exactness": "proved", "normalized_margin_exact": "3/100"}
    assert result.normalized_margin == 0.03  # the common field of the JSON, from the measurement


# -- lower_bound_from reads the typed margin only ------------------------------------------------------------------


def test_tampered_or_misspelt_fields_leave_the_lower_end_unchanged(compact_result):
    result = compact_result
    L = maxmin.lower_bound_from(result)
    assert L is not None and L.exactness == "proved" and L.exact == GAMMA_5_2 and L.method == "fourier"
    tampered = dataclasses.replace(result, fields=dict(result.fields))
    f = tampered.fields
    f["normalized_margin"] = 1.0
    f["margin_tolerance"] = 0.5
    f["lower_method"], f["lower_exactness"], f["lower_how"] = "exhaustive", "float", "tampered"
    f["normalized_margin_exakt"] = f.pop("normalized_margin_exact")  # a misspelt key
    assert maxmin.lower_bound_from(tampered) == L
    # the fields alone, however complete, give no lower end: the typed margin is what is read
    assert maxmin.lower_bound_from(VerificationResult("t", fields=dict(result.fields))) is None
    assert maxmin.lower_bound_from(dataclasses.replace(result, margin=None)) is None


def test_the_lower_end_follows_the_typed_margin(compact_result):
    m = compact_result.margin
    assert m is not None
    lowered = dataclasses.replace(m, value=m.value / 2, exactness="certified", exact=None, error_bound=1e-12)
    L = maxmin.lower_bound_from(dataclasses.replace(compact_result, margin=lowered))
    assert L is not None and L.exactness == "certified" and L.exact is None and L.method == "fourier"
    assert L.value == math.nextafter(m.value / 2 - 1e-12, -math.inf) and L.error_bound == 1e-12
    assert L.how.endswith(m.how) and "rigorous error bound 1.00e-12" in L.how


# -- every producer: the typed margin agrees with the JSON -------------------------------------------------------


def _run(monkeypatch, capsys, module, argv: list[str]) -> tuple[int, VerificationResult, dict]:
    """Run the command, keeping the result object it emits and the JSON it prints."""
    kept: list[VerificationResult] = []
    real = module.emit

    def spy(result, *args, **kwargs):
        kept.append(result)
        return real(result, *args, **kwargs)

    monkeypatch.setattr(module, "emit", spy)
    code = main(argv)
    return code, kept[0], json.loads(capsys.readouterr().out)


def _agrees(result: VerificationResult, doc: dict, method: str, exactness: str, *, same_value: bool = True) -> None:
    m = result.margin
    assert m is not None and (m.method, m.exactness) == (method, exactness)
    det = doc["details"]
    assert (det["lower_method"], det["lower_exactness"], det["lower_how"]) == (m.method, m.exactness, m.how)
    assert det["margin_tolerance"] == m.error_bound and det.get("normalized_margin_exact") == m.exact
    if same_value:
        assert doc["normalized_margin"] == m.value
    else:  # solve reports its lower bound as the normalized margin
        assert abs(doc["normalized_margin"] - m.value) <= m.error_bound
    if m.exact is not None:
        assert sp.simplify(sp.sympify(m.exact) - GAMMA_5_2) == 0
    else:
        assert abs(m.value - float(GAMMA_5_2)) <= m.error_bound + 1e-15
    L = maxmin.lower_bound_from(result)
    cert = doc["certificate"]
    assert L is not None and cert["lower"] == L.value and cert["lower_how"] == L.how
    assert (cert["lower_method"], cert["lower_exactness"]) == (m.method, m.exactness)


@pytest.mark.parametrize("flags, method, exactness", [
    ([], "fourier", "proved"),
    (["--exhaustive"], "exhaustive", "float"),
    (["--exact"], "exhaustive", "proved"),
    (["--exact", "--family", "cyclic-lattice"], "exhaustive", "proved"),
])
def test_verify_construction_typed_margin_matches_the_json(monkeypatch, capsys, flags, method, exactness):
    code, result, doc = _run(monkeypatch, capsys, verify_command, ["verify", "--p", "5", "--k", "2", "--json", *flags])
    assert code == 0 and doc["verdict"] == "verified"
    _agrees(result, doc, method, exactness)


@pytest.mark.parametrize("moved, method, exactness", [(False, "fourier", "certified"), (True, "exhaustive", "float")])
def test_verify_network_file_typed_margin_matches_the_json(monkeypatch, capsys, tmp_path, moved, method, exactness):
    net = build_construction(ModularAddition(5, 2))
    U = net.U.copy()
    if moved:  # beyond float64 rounding of an exact cosine network: the Fourier shortcut is refused
        U[1, 0, 2] += 1e-7 * float(np.abs(U).max())
    path = tmp_path / "net.npz"
    PolyNetwork(U, net.W.copy()).save(str(path))
    code, result, doc = _run(monkeypatch, capsys, verify_command, ["verify", "--network", str(path), "--json"])
    assert result.margin is not None
    if moved:
        assert code == 1 and "refused" in result.margin.how
        m = result.margin
        assert doc["normalized_margin"] == m.value and doc["details"]["lower_how"] == m.how
        L = maxmin.lower_bound_from(result)
        assert L is not None and doc["certificate"]["lower"] == L.value and doc["certificate"]["lower_method"] == method
        assert m.exactness == exactness and m.method == method
    else:
        assert code == 0
        _agrees(result, doc, method, exactness)


def test_solve_min_width_typed_margin_matches_the_json(monkeypatch, capsys):
    code, result, doc = _run(monkeypatch, capsys, solve_command, ["solve", "--p", "5", "--k", "2", "--min-width",
                                                                  "--json"])
    assert code == 0 and doc["verdict"] == "verified"
    _agrees(result, doc, "fourier", "proved", same_value=False)
    assert doc["details"]["lower_bound"] == doc["certificate"]["lower"]
