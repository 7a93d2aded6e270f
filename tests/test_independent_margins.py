"""Margins recomputed independently (brute force, plain Python loops over every input) instead of trusting the
library's verdict; networks slightly off the max margin must be reported with their *measured* margin, and the
"equals gamma*" claims must fail for them (a loosened tolerance or a margin replaced by the closed form would not).

The independent code uses only the definitions: ``f(a)[c] = sum_i (u_i1[a_1] + ... + u_ik[a_k])^k w_i[c]``, the
margin ``min_a f(a)[y] - max_{c != y} f(a)[c]`` and the norm ``(sum_i ||theta_i||_2^(k+1))^(1/(k+1))``
(docs/theory.md, section 1); gamma* is typed in from the formula of Theorem C.22 / Theorem 7.8.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from margintheory import GroupComposition, ModularAddition, SparseParity, verify
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.tasks.parity.checks import ParityNetwork, build_parity_construction


def gamma_formula(p: int, k: int) -> float:
    return 2 * math.factorial(k) / ((2 * k + 2) ** ((k + 1) / 2) * (p - 1) * p ** ((k - 1) / 2))


def norm_power(vectors_per_neuron: list[list[float]], k: int) -> float:
    return math.fsum(math.sqrt(math.fsum(x * x for x in v)) ** (k + 1) for v in vectors_per_neuron)


def brute_margin(U: np.ndarray, W: np.ndarray, label) -> float:
    """Normalized margin of a one-hot network over all p^k inputs, with ``label(a)`` the correct class."""
    m, k, p = U.shape
    U, W = U.tolist(), W.tolist()
    worst = math.inf
    for a in itertools.product(range(p), repeat=k):
        f = [math.fsum((sum(U[i][j][a[j]] for j in range(k))) ** k * W[i][c] for i in range(m)) for c in range(p)]
        y = label(a)
        worst = min(worst, f[y] - max(f[c] for c in range(p) if c != y))
    return worst / norm_power([sum(U[i], []) + W[i] for i in range(m)], k)


def perturbed(net: PolyNetwork, size: float, seed: int) -> PolyNetwork:
    rng = np.random.default_rng(seed)
    scale = float(np.abs(net.U).max())
    return PolyNetwork(net.U + size * scale * rng.standard_normal(net.U.shape), net.W.copy())


def _check(result, prefix: str):
    found = [c for c in result.checks if c.name.startswith(prefix)]
    assert len(found) == 1, [c.name for c in result.checks]
    return found[0]


def test_construction_margin_is_measured_and_tight():
    p, k = 5, 2
    net = build_construction(p, k)
    result = verify(ModularAddition(p, k), network=net)
    brute = brute_margin(net.U, net.W, lambda a: sum(a) % p)
    g = gamma_formula(p, k)
    assert result.verdict == "verified"
    assert result.normalized_margin == pytest.approx(brute, rel=1e-13) and brute == pytest.approx(g, rel=1e-13)
    # the tolerance behind the verdict is the float64 error bound, not a loose constant
    assert result.details["margin_tolerance"] < 1e-11 * g


@pytest.mark.parametrize("size", [1e-8, 1e-7])
def test_slightly_suboptimal_network_is_refuted_with_its_measured_margin(size):
    """The margin drops by ~size relative: far above the float64 bound (~1e-12), far below any loose tolerance."""
    p, k = 5, 2
    net = perturbed(build_construction(p, k), size, seed=3)
    brute = brute_margin(net.U, net.W, lambda a: sum(a) % p)
    g = gamma_formula(p, k)
    assert 1e-3 * size < (g - brute) / g < 1e3 * size  # independently: measurably below gamma*
    result = verify(ModularAddition(p, k), network=net)
    assert result.normalized_margin == pytest.approx(brute, rel=1e-12)
    assert result.relative_error == pytest.approx((g - brute) / g, rel=1e-6)
    assert not _check(result, "margin = gamma*").passed
    assert _check(result, "margin <= gamma*").passed
    assert result.verdict == "refuted" and result.exit_code == 1


def test_random_network_margin_matches_brute_force():
    rng = np.random.default_rng(0)
    p, k = 5, 3
    net = PolyNetwork(rng.standard_normal((6, k, p)), rng.standard_normal((6, p)))
    result = verify(ModularAddition(p, k), network=net)
    assert result.normalized_margin == pytest.approx(brute_margin(net.U, net.W, lambda a: sum(a) % p), rel=1e-12)
    assert result.verdict == "refuted"


def parity_brute_margin(net: ParityNetwork) -> float:
    U, W, S, k = net.U.tolist(), net.W.tolist(), net.S.tolist(), net.k
    worst = math.inf
    for x in itertools.product((1, -1), repeat=net.n):
        y = math.prod(x[j] for j in S)
        f = [math.fsum(math.fsum(u * xi for u, xi in zip(U[i], x, strict=True)) ** k * W[i][c] for i in range(net.m))
             for c in range(2)]
        worst = min(worst, (f[0] - f[1]) if y == 1 else (f[1] - f[0]))
    return worst / norm_power([U[i] + W[i] for i in range(net.m)], k)


def test_parity_margin_is_measured_not_the_closed_form():
    n, k = 5, 3
    gamma = math.factorial(k) * math.sqrt(2 * (k + 1) ** -(k + 1))  # Theorem 7.8
    good = build_parity_construction(n, k)
    assert verify(SparseParity(n, k)).normalized_margin == pytest.approx(parity_brute_margin(good), rel=1e-13)
    rng = np.random.default_rng(1)
    bad = ParityNetwork(good.U + 1e-7 * rng.standard_normal(good.U.shape), good.W, good.S)
    brute = parity_brute_margin(bad)
    assert 1e-11 < (gamma - brute) / gamma < 1e-4
    result = verify(SparseParity(n, k), network=bad)
    assert result.normalized_margin == pytest.approx(brute, rel=1e-12)
    assert not _check(result, "margin = gamma*").passed and result.verdict == "refuted"


def s3_labels():
    perms = list(itertools.permutations(range(3)))  # the documented element order: lexicographic image tuples
    index = {q: i for i, q in enumerate(perms)}
    return lambda ab: index[tuple(perms[ab[0]][perms[ab[1]][x]] for x in range(3))]  # (a*b)(x) = a(b(x))


def theorem79_network(name: str = "S3") -> PolyNetwork:
    from margintheory.core.groups import parse_group
    from margintheory.core.representations import real_irreps
    from margintheory.tasks.groups import margin as gm

    irreps = real_irreps(parse_group(name))
    return gm.mixture_network(irreps, gm.theorem79_weights(np.array([R.dim for R in irreps])))


def test_group_network_margin_is_measured():
    net = theorem79_network()
    formula = 2 / (3 * math.sqrt(3 * 6) * (1 + 2**2.5))  # Theorem 7.9 for S3 (irreps of dimension 1, 1, 2)
    assert brute_margin(net.U, net.W, s3_labels()) == pytest.approx(formula, rel=1e-12)
    bad = perturbed(net, 1e-7, seed=5)
    brute = brute_margin(bad.U, bad.W, s3_labels())
    assert 1e-11 < (formula - brute) / formula < 1e-4
    result = verify(GroupComposition("S3"), network=bad)
    assert result.gamma_star == pytest.approx(formula, rel=1e-13)
    assert result.normalized_margin == pytest.approx(brute, rel=1e-12)
    assert not _check(result, "margin = gamma*").passed and result.verdict == "refuted"


def test_group_construction_margin_is_measured_on_the_network_built(monkeypatch):
    """Swap the Theorem 7.9 network for a slightly perturbed one: the construction check must report the margin
    of the network it was handed (computed), not the closed form, and fail its "equals" claim."""
    from margintheory.tasks.groups import margin as gm

    built: list[PolyNetwork] = []
    original = gm.mixture_network

    def spoiled(*args, **kwargs):
        net = perturbed(original(*args, **kwargs), 1e-7, seed=7)
        built.append(net)
        return net

    monkeypatch.setattr(gm, "mixture_network", spoiled)
    result = verify(GroupComposition("S3"))
    assert built
    brute = brute_margin(built[-1].U, built[-1].W, s3_labels())
    formula = 2 / (3 * math.sqrt(18) * (1 + 2**2.5))
    assert 1e-11 < (formula - brute) / formula < 1e-4
    assert result.gamma_star == pytest.approx(formula, rel=1e-13)
    assert result.normalized_margin == pytest.approx(brute, rel=1e-12)
    assert not _check(result, "margin = gamma*").passed and result.verdict == "refuted"


@pytest.mark.parametrize("name", ["F6", "memorize"])
def test_cogo_margin_is_the_brute_force_margin_of_its_network(name):
    from margintheory.core.problems import CoGO
    from margintheory.tasks.cogo import constructions as cc
    from margintheory.tasks.cogo.algebra import to_network

    d = 5
    con = cc.build_f6(d, 1.0) if name == "F6" else cc.build_memorization(d)
    net = to_network(con.z)[0]
    brute = brute_margin(net.U, net.W, lambda a: sum(a) % d)
    result = verify(CoGO(d, name))
    assert "corrected" not in result.details and result.width == net.m
    assert result.normalized_margin == pytest.approx(brute, rel=1e-12)
    if name == "memorize":  # 2 / (3 sqrt(3d) (d-1)^1.5), derived in cogo_margin.memorization_margin
        assert brute == pytest.approx(2 / (3 * math.sqrt(3 * d) * (d - 1) ** 1.5), rel=1e-12)
    else:
        assert brute == pytest.approx(gamma_formula(d, 2), rel=1e-12)
