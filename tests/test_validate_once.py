"""Validate once, carry a value: ``p`` is checked when the problem object is made, never again on the way through
verification, theory, construction, exact arithmetic and the certificate; every layer's result names its task."""

from __future__ import annotations

import pytest

import margintheory
from margintheory.core import theory
from margintheory.core.construction import build_construction
from margintheory.core.problems import CoGO, ModularAddition, SparseParity


@pytest.fixture
def p_validations(monkeypatch) -> list[object]:
    """Every validation of a modulus ``p`` (``theory.validate_pk`` and the size checks all go through
    ``int_at_least("p", ...)``), recorded."""
    seen: list[object] = []
    original = theory.int_at_least

    def counting(name: str, value: object, low: int) -> int:
        if name == "p":
            seen.append(value)
        return original(name, value, low)

    monkeypatch.setattr(theory, "int_at_least", counting)
    return seen


@pytest.mark.parametrize("options", [{}, {"certificate": False}, {"exact": True, "certificate": False},
                                     {"family": "parity-design", "certificate": False},
                                     {"exact": True, "family": "parity-design", "certificate": False}],
                         ids=["certificate", "float", "exact", "family", "exact-family"])
def test_verify_validates_p_once(p_validations, options):
    k = 3 if "family" in options else 2
    result = margintheory.verify(ModularAddition(5, k), **options)
    assert result.verdict == "verified"
    assert p_validations == [5]  # the problem object's own check, nothing after it


def test_a_given_network_validates_p_once(p_validations):
    net = build_construction(ModularAddition(5, 2))
    del p_validations[:]
    result = margintheory.verify(ModularAddition(5, 2), network=net, certificate=False)
    assert result.verdict == "verified" and p_validations == [5]


@pytest.mark.parametrize("command", ["verify --p 5 --k 2", "solve --p 3 --k 2 --single-neuron", "solve --p 3 --k 2",
                                     "solve --p 5 --k 2 --min-width", "analyze {net} --p 3 --k 2"])
def test_the_cli_validates_p_once(p_validations, capsys, tmp_path, command):
    """From the flags to the verdict: the command makes the problem object once; the verification, the solvers
    (single-neuron bracket, column generation, the width search, the certificate's upper bound) and the analysis
    receive it."""
    from margintheory.cli import main

    net = tmp_path / "net.npz"
    build_construction(ModularAddition(3, 2)).save(net)
    del p_validations[:]
    assert main([*command.format(net=net).split(), "--json"]) == 0
    assert p_validations == [int(command.split("--p ")[1].split()[0])]


def test_low_level_results_carry_their_task():
    from margintheory.core.groups import parse_group
    from margintheory.symbolic.exact import verify_construction_exact
    from margintheory.symbolic.exact_families import verify_family_exact
    from margintheory.tasks.cogo.task import verify_cogo, verify_cogo_network
    from margintheory.tasks.groups.task import verify_group, verify_group_network
    from margintheory.tasks.modular_addition.checks import verify_construction, verify_network
    from margintheory.tasks.parity.checks import build_parity_construction, verify_parity

    problem = ModularAddition(3, 2)
    results = [verify_construction(problem), verify_network(build_construction(problem)),
               verify_construction_exact(problem), verify_family_exact(ModularAddition(5, 3), family="parity-design"),
               verify_parity(build_parity_construction(SparseParity(4, 2)), construction=True),
               verify_cogo(CoGO(5, "F6")), verify_cogo_network(build_construction(problem)),
               verify_group(parse_group("C3")), verify_group_network(parse_group("C3"), build_construction(problem))]
    tasks = [r.task for r in results]
    assert tasks == ["modular-addition"] * 4 + ["parity", "cogo", "cogo", "group", "group"]
    assert all(r.parameters for r in results)
