"""``margintheory.solve(problem, options)``: every method of ``margintheory solve`` is one library call, and the
command's JSON is the library result's JSON (the timings aside)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import margintheory
from margintheory import ModularAddition, SolveOptions, solve
from margintheory.cli import main
from margintheory.errors import InputError


def _untimed(value):
    """The JSON without the wall-clock entries (``seconds``, ``solver_seconds``, ``time``, ...), which differ run to
    run; everything else must be equal."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if "seconds" not in k and k != "time"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _weights_file(tmp_path, p: int, k: int) -> str:
    rng = np.random.default_rng(3)
    n = p**k
    q = rng.random(n)
    tau = rng.random((n, p))
    labels = np.arange(n) % p  # row-major digits: a_k is the last digit, the label is their sum mod p
    digits = np.array(np.unravel_index(np.arange(n), (p,) * k)).T
    labels = digits.sum(axis=1) % p
    tau[np.arange(n), labels] = 0.0
    tau /= tau.sum(axis=1, keepdims=True)
    path = tmp_path / "w.npz"
    np.savez(path, q=q / q.sum(), tau=tau)
    return str(path)


CASES = [
    ((5, 2), {"method": "single-neuron"}, ["--single-neuron"]),
    ((5, 2), {"method": "single-neuron", "seed": 3, "time_limit": 60.0}, ["--single-neuron", "--seed", "3",
                                                                          "--time-limit", "60"]),
    ((3, 2), {}, []),
    ((5, 2), {"method": "min-width"}, ["--min-width"]),
    ((3, 2), {"method": "min-width", "search": True}, ["--min-width", "--search"]),
    ((5, 2), {"method": "max-width", "max_width": 8}, ["--max-width", "8"]),
]


@pytest.mark.parametrize(("pk", "options", "flags"), CASES, ids=lambda c: str(c))
def test_the_library_call_gives_the_commands_json(capsys, pk, options, flags):
    result = solve(ModularAddition(*pk), SolveOptions(**options))
    library = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    code = main(["solve", "--p", str(pk[0]), "--k", str(pk[1]), *flags, "--json"])
    command = json.loads(capsys.readouterr().out)
    assert code == result.exit_code == 0
    assert _untimed(command) == _untimed(library)
    assert library["parameters"]["method"].startswith(options.get("method", "column-generation"))


def test_class_weights_from_a_file_and_as_arrays(capsys, tmp_path):
    path = _weights_file(tmp_path, 3, 2)
    from_file = solve(ModularAddition(3, 2), method="single-neuron", weights=path)
    code = main(["solve", "--p", "3", "--k", "2", "--single-neuron", "--weights", path, "--json"])
    command = json.loads(capsys.readouterr().out)
    assert code == from_file.exit_code
    assert _untimed(command) == _untimed(json.loads(json.dumps(from_file.to_dict())))
    assert from_file.parameters["weights"] == path and from_file.fields["weights"]["uniform"] is False
    with np.load(path) as data:
        arrays = solve(ModularAddition(3, 2), SolveOptions(method="single-neuron", weights=(data["q"], data["tau"])))
    assert arrays.parameters["weights"] == "arrays"
    assert arrays.fields["lower_bound"] == from_file.fields["lower_bound"]  # the same arrays, the same bracket
    assert arrays.fields["upper_bound"] == from_file.fields["upper_bound"]


def test_keywords_and_options_are_the_same_call():
    a = solve(ModularAddition(3, 2), method="min-width")
    b = margintheory.solve(ModularAddition(3, 2), SolveOptions(method="min-width"))
    assert _untimed(a.to_dict()) == _untimed(b.to_dict())
    with pytest.raises(InputError, match="either"):
        solve(ModularAddition(3, 2), SolveOptions(), method="min-width")


def test_the_network_is_saved_and_named(tmp_path):
    path = tmp_path / "net.npz"
    result = solve(ModularAddition(5, 2), method="min-width", out=str(path))
    assert result.fields["network_file"] == str(path)
    assert margintheory.PolyNetwork.load(path).m == result.fields["width"]
    with pytest.raises(InputError):  # an existing file is not replaced without overwrite
        solve(ModularAddition(5, 2), method="min-width", out=str(path))


@pytest.mark.parametrize(("options", "message"), [
    ({"method": "min-width", "seed": 0}, "seed does not apply to the min-width method"),
    ({"method": "single-neuron", "pricing": "sos"}, "pricing does not apply to the single-neuron method"),
    ({"method": "max-width"}, "needs it"),
    ({"max_width": 8}, "needs it"),
    ({"search": True}, "search applies to the min-width"),
    ({"weights": "w.npz"}, "weights apply to the single-neuron"),
    ({"time_limit": 0.0}, "time_limit must be positive"),
    ({"overwrite": True}, "no out was given"),
    ({"method": "newton"}, "method must be one of"),
])
def test_options_that_do_not_apply_are_refused_in_the_librarys_terms(options, message):
    with pytest.raises(InputError, match=message) as info:
        SolveOptions(**options)
    assert "--" not in str(info.value)


def test_refusals_that_need_the_problem():
    with pytest.raises(InputError, match="needs odd p"):
        solve(ModularAddition(4, 2), method="max-width", max_width=5)
    with pytest.raises(InputError, match="needs odd p"):
        solve(ModularAddition(4, 2), pricing="fourier")
    with pytest.raises(InputError, match="ModularAddition"):
        solve(margintheory.SparseParity(6, 2))
