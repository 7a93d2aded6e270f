"""``margintheory.testing``: the public strategies draw what they promise, and the documented examples run."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import margintheory.testing as mt
from margintheory.core.groups import parse_group
from margintheory.core.theory import is_prime
from margintheory.engines.fourier import neuron_fourier


@given(mt.odd_moduli(3, 41), mt.odd_moduli(3, 41, primes_only=True))
def test_odd_moduli(p, q):
    assert p % 2 == 1 and 3 <= p <= 41
    assert is_prime(q)


@given(mt.moduli_and_inputs(max_points=500, min_k=2, max_k=4))
def test_moduli_and_inputs_respect_the_budget(pk):
    p, k = pk
    assert p % 2 == 1 and 2 <= k <= 4 and p**k <= 500


@settings(max_examples=30)
@given(mt.moduli_and_inputs(max_points=2000, max_k=4, max_p=13).flatmap(lambda pk: mt.optimal_neurons(*pk)))
def test_optimal_neurons_are_in_the_optimal_set(net):
    nf = neuron_fourier(net)
    assert nf.in_optimal_set.all()
    assert math.isclose(net.norm(), 1.0, rel_tol=1e-12)
    assert int(nf.frequency[0]) == int(net.metadata["frequency"][0])
    # the same neuron with its output phase moved by a quarter turn is not (the check can fail)
    x = 2 * np.pi * int(net.metadata["frequency"][0]) * np.arange(net.p) / net.p
    amp = np.abs(np.fft.fft(net.W[0]))[int(net.metadata["frequency"][0])] * 2 / net.p
    phase = np.angle(np.fft.fft(net.W[0])[int(net.metadata["frequency"][0])])
    moved = type(net)(net.U, amp * np.cos(x + phase + np.pi / 2)[None])
    assert not neuron_fourier(moved).in_optimal_set.any()


@settings(max_examples=20, deadline=None)
@given(mt.perturbed_constructions(5, 2, min_relative=1e-6, max_relative=1e-2))
def test_perturbations_have_the_stated_relative_size(case):
    _check_relative_size(case)


@settings(max_examples=5, deadline=None)
@given(mt.perturbed_constructions(7, 2, max_relative=1e-2, family="smallest-known"))  # from 0: the rounding floor
def test_perturbations_of_a_smaller_family(case):
    from margintheory.core import theory

    assert case.base.m < theory.construction_width(7, 2)  # the smallest known, not Lemma C.18's
    _check_relative_size(case)


def _check_relative_size(case):
    d = math.sqrt(np.sum((case.network.U - case.base.U) ** 2) + np.sum((case.network.W - case.base.W) ** 2))
    size = math.sqrt(np.sum(case.base.U**2) + np.sum(case.base.W**2))
    assert math.isclose(d / size, case.relative_size, rel_tol=1e-9, abs_tol=1e-14)  # abs: rounding of base + dW


@given(st.sampled_from(["S3", "S4", "C7"]).flatmap(lambda n: st.tuples(st.just(parse_group(n)),
                                                                        mt.group_elements(parse_group(n)))),
       st.sampled_from(["S3", "C5"]).flatmap(lambda n: st.tuples(st.just(parse_group(n).order),
                                                                  mt.group_elements(n))))
def test_group_elements(case, by_name):
    order, b = by_name
    assert 0 <= b < order
    G, a = case
    assert 0 <= a < G.order
    assert G.mul[a, G.inverses()[a]] == 0


@settings(max_examples=10)
@given(st.from_type(mt.PolyNetwork))
def test_polynetwork_type_strategy_is_registered(net):
    assert isinstance(net, mt.PolyNetwork) and net.m >= 1


def test_documented_examples_run():
    """The two user property tests in the module docstring are executed as written."""
    blocks = re.findall(r"^Example \d.*:\n\n((?:    .*\n|\n)+)", mt.__doc__, flags=re.M)
    assert len(blocks) == 2
    for block in blocks:
        code = "\n".join(line[4:] for line in block.splitlines())
        exec(compile(code, "<margintheory.testing docstring>", "exec"), {})


def test_documented_page_example_runs():
    """The property test shown on the docs page "Using the library" (docs/python.md) runs as written."""
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "python.md").read_text(encoding="utf-8")
    section = page.split("## Property-based tests of your own", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    names: dict = {}
    exec(compile(blocks[0], "<docs/python.md>", "exec"), names)
    tests = [f for n, f in names.items() if n.startswith("test_") and callable(f)]
    assert len(tests) == 1
    tests[0]()


def test_margintheory_imports_without_hypothesis():
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "import margintheory, margintheory.cli, margintheory.network_io\n"
            "try:\n    import margintheory.testing\nexcept ImportError as e:\n    print('IMPORTERROR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "IMPORTERROR" in out.stdout and "margintheory[testing]" in out.stdout
