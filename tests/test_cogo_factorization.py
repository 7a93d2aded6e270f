"""CoGO's factorization search (Tian, arXiv:2410.01779, App. H; Table 2): the paper's constructions, scrambled as
training leaves them (nodes in any order, the pseudo-1 on any node, an order-1 factor, noise), are found, factored
and sorted into their class; solutions that are not ring products, or products of other partial solutions, are
not."""

from __future__ import annotations

import numpy as np
import pytest

from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo import factorization as fz
from margintheory.tasks.cogo.algebra import Z, single_frequency


def _scramble(z: Z, seed: int, noise: float = 0.0, y: complex = 1.0) -> Z:
    """Nodes permuted, the pseudo-1 [-1, -1, 1] on random nodes, every entry times an order-1 factor, noise."""
    rng = np.random.default_rng(seed)
    zz = z.z[:, :, rng.permutation(z.order)].copy()
    flip = rng.random(z.order) < 0.5
    zz[:2, :, flip] *= -1
    zz *= np.array([y, np.conj(y), 1 / abs(y) ** 2])[:, None, None]
    zz += noise * (rng.normal(size=zz.shape) + 1j * rng.normal(size=zz.shape))
    return Z(zz)


def _syn_ab(d: int, k: int, alpha: complex, beta: complex) -> Z:
    return single_frequency(d, k, fz.z_syn_form(alpha, beta))


@pytest.mark.parametrize("seed", [0, 1])
def test_the_constructions_are_sorted_into_their_classes(seed):
    f4 = [s.kind for s in fz.sort_solutions(_scramble(cc.build_f4(11, xi=np.exp(0.7j)).z, seed, 1e-3, 1.3))]
    assert f4 == ["nu=i * xi"] * 5
    f6 = fz.sort_solutions(_scramble(cc.build_f6(7, nu=np.exp(0.4j)).z, seed, 1e-3))
    assert [(s.order, s.kind) for s in f6] == [(6, "nu * syn")] * 3
    assert all(s.factorization.error < 0.01 for s in f6)
    mixed = fz.sort_solutions(_scramble(cc.build_f46(11, k0=2).z, seed))
    assert [(s.k, s.order, s.kind) for s in mixed] == [(1, 4, "nu=i * xi"), (2, 6, "nu * syn"), (3, 4, "nu=i * xi"),
                                                       (4, 4, "nu=i * xi"), (5, 4, "nu=i * xi")]


def test_z_nu_i_times_z_syn_alpha_beta_is_its_own_class():
    alpha, beta = np.exp(1.1j), np.exp(-0.4j)
    z = cc.z_nu(7, 1, 1j) * _syn_ab(7, 1, alpha, beta)
    sol = fz.sort_solutions(_scramble(z, 3, 1e-3))[0]
    assert (sol.order, sol.factorable, sol.kind) == (6, True, "nu=i * syn(alpha,beta)")
    plain = fz.sort_solutions(_scramble(cc.z_nu(7, 1, 1j) * cc.z_syn(7, 1), 3))[0]
    assert plain.kind == "nu * syn"  # alpha = beta = 1 is z_syn itself: the z_nu * z_syn class comes first


def test_products_of_other_partial_solutions_are_others():
    u3c = cc.maximal_polynomial(cc.generator(7, 1, "u_3c"), 1)[0]  # order 3, Table 1: never seen in training
    sol = fz.sort_solutions(_scramble(cc.z_nu(7, 1, np.exp(0.3j)) * u3c, 4))[0]
    assert (sol.order, sol.factorable, sol.kind) == (6, True, "others")


def test_solutions_that_are_no_ring_product_are_not_factorable():
    rng = np.random.default_rng(5)
    for n in (4, 6):
        vals = rng.normal(size=(3, n)) + 1j * rng.normal(size=(3, n))
        sol = fz.sort_solutions(single_frequency(7, 1, vals))[0]
        assert sol.order == n and not sol.factorable and sol.kind is None
        assert sol.factorization.error > fz.FACTORABLE_ERROR


def test_the_factorization_reproduces_the_solution():
    z = _scramble(cc.build_f6(7).z, 7, 0.0, 0.8 * np.exp(0.3j))
    nodes = fz.salient_nodes(z, 1)
    v = z.z[:, 1][:, nodes]
    f = fz.factorize(v, (2, 3))
    grid = v[:, list(f.order)] * np.stack([np.array(f.signs)] * 2 + [np.ones(6)])
    ratio = grid / np.einsum("pi,pj->pij", f.z1, f.z2).reshape(3, 6)  # equal up to one factor per row (y)
    assert f.error < 1e-12 and np.allclose(ratio, ratio[:, :1])


def test_orders_count_nodes_of_each_frequency_and_ignore_output_biases():
    z = cc.build_f46(11, k0=1).z  # the order-6 part carries output biases at every other frequency
    assert [len(fz.salient_nodes(z, k)) for k in range(1, 6)] == [6, 4, 4, 4, 4]
    assert len(fz.salient_nodes(z.scaled(0.05), 2)) == 0  # below the threshold
    assert len(fz.grid_assignments(2, 3)) == 60 and len(fz.grid_assignments(2, 2)) == 6
    assert fz.sign_patterns(2, 3).shape == (4, 2, 3)
