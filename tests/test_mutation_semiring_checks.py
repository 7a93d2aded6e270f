"""CoGO's semi-ring statements (:mod:`margintheory.tasks.cogo.semiring_checks`: Theorem 2, Observation 2, Lemma 2,
Corollary 1, Lemma 4), each against a wrong implementation it must reject.  Small cases only: this module is also the
test selection of the mutation gate's ``semiring_checks`` area (``tools/mutation.sh semiring_checks``)."""

from __future__ import annotations

import numpy as np
import pytest

from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo import semiring_checks as sr
from margintheory.tasks.cogo.algebra import Z, forward_loss, r_abc, to_network

# ---------------------------------------------------------------- CoGO: semi-ring, Lemma 2, Corollary 1, Lemma 4

def test_semiring_axioms_hold_and_a_broken_product_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    assert all(sr.semiring_axioms(5).values()) and all(sr.order_homomorphism(5).values())

    def lopsided(self: Z, other: Z) -> Z:  # a product that is not commutative: conjugates the right factor
        prod = self.z[:, :, :, None] * np.conj(other.z[:, :, None, :])
        return Z(prod.reshape(3, self.d, -1))

    monkeypatch.setattr(Z, "__mul__", lopsided)
    broken = sr.semiring_axioms(5)
    assert not broken["ab = ba"] and not all(broken.values())


def test_same_element_is_exact_up_to_node_order() -> None:
    rng = np.random.default_rng(1)
    z = sr.gaussian_integer_weights(rng, 4, 3)
    assert sr.same_element(z, Z(z.z[:, :, ::-1]))
    tweaked = z.z.copy()
    tweaked[0, 1, 0] += 2.0**-40
    assert not sr.same_element(z, Z(tweaked))


def test_lemma2_printed_part_two_is_false_by_exactly_one() -> None:
    rows = {c.name: c for c in sr.lemma2_checks(7)}
    printed = rows["Lemma 2(2) as printed"]
    assert printed.informational and not printed.passed and printed.measured == 2.0
    assert rows["Lemma 2(1): z1 * z2 sets"].passed and rows["Lemma 2(2) corrected"].passed
    e = sr.identity(5)
    assert np.array_equal(sr.potential_values(e + e), np.full(sr.potential_values(e).shape, 2.0))


def test_corollary1_holds_under_lemma1_and_fails_for_the_mixed_optimizer() -> None:
    rng = np.random.default_rng(3)
    y = sr.random_unit(7, rng)
    ks = np.arange(1, 7)
    assert np.allclose(r_abc(y)[ks, ks, ks], 1)  # a unit
    assert forward_loss(to_network(cc.build_f6(7).z * y)[0]) < 1e-12
    f46 = cc.build_f46(7, variant="corrected").z
    assert forward_loss(to_network(f46)[0]) < 1e-12  # a global optimizer ...
    assert forward_loss(to_network(f46 * y)[0]) > 1e-2  # ... whose product with a unit is not
    assert forward_loss(to_network(f46 * sr.random_unit(7, rng, unit_modulus=True))[0]) < 1e-12
    rows = {c.name: c for c in sr.corollary1_checks(7)}
    assert rows["Cor. 1 on z_F6 * y"].passed and not rows["Cor. 1 on z_F4/6 * y"].passed
    assert rows["Cor. 1 on z_F4/6 * y"].informational


def test_canonical_decomposition_rebuilds_the_weights() -> None:
    rng = np.random.default_rng(5)
    z = Z(rng.normal(size=(3, 6, 4)) + 1j * rng.normal(size=(3, 6, 4)))
    zp, y, _ = sr.canonical_decomposition(z, 2)
    assert y.order == 1 and np.allclose(zp.z[:, [2, 4], 0], 1)
    assert np.allclose(sr.node_multiset(zp * y), sr.node_multiset(z))
    assert sr.lemma4_check(7).passed




def test_corollary1_rows_in_full() -> None:
    rows = {c.name: c for c in sr.corollary1_checks(7)}
    good, bad, f6 = rows["Cor. 1 on z_F4/6, |y| = 1"], rows["Cor. 1 on z_F4/6 * y"], rows["Cor. 1 on z_F6 * y"]
    assert good.passed and not good.informational and good.measured < 1e-12 and good.tolerance == sr.ZERO_TOL
    assert f6.passed and not f6.informational and f6.expected == 0.0 and f6.exactness == "float"
    assert bad.measured == pytest.approx(0.3036404451041474, rel=1e-9) and bad.expected == 0.0
    assert bad.tolerance == sr.ZERO_TOL and bad.exactness == "float"
    assert all("imaginary part dropped" in c.detail for c in rows.values())


def test_corollary1_rows_fail_when_an_imaginary_part_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real network that drops an imaginary part (a z that is not Hermitian) fails every Cor. 1 row."""
    real = sr.to_network
    monkeypatch.setattr(sr, "to_network", lambda z: (real(z)[0], 1e-3))
    assert not any(c.passed for c in sr.corollary1_checks(7))
    loss, imag = sr.real_network_loss(cc.build_f6(7).z)
    assert loss < 1e-12 and 0 < imag < 1e-3  # relative to the largest weight (> 1 here)
