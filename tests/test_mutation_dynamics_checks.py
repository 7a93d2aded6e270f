"""CoGO's gradient-dynamics statements (:mod:`margintheory.tasks.cogo.dynamics_checks`: Theorems 5, 6 and 7), each
against a wrong implementation it must reject (a wrong gradient factor, a dropped term of ``H``, a Gram matrix unrelated
to ``J J^*``, no decoupling, a dropped imaginary part).  Small cases only: this module is also the test selection of the
mutation gate's ``dynamics_checks`` area (``tools/mutation.sh dynamics_checks``)."""

from __future__ import annotations

import numpy as np
import pytest

from margintheory.tasks.cogo import dynamics_checks as dyn
from margintheory.tasks.cogo import semiring_checks as sr
from margintheory.tasks.cogo.algebra import forward_loss

# ---------------------------------------------------------------- CoGO: dynamics (Theorems 5-7)

def _random_weights(seed: int, q: int = 3, d: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    wa, wb, v = (rng.normal(size=(q, d)) for _ in range(3))
    return wa - wa.mean(axis=1, keepdims=True), wb - wb.mean(axis=1, keepdims=True), v


def test_forward_gradient_matches_finite_differences() -> None:
    from margintheory.core.network import PolyNetwork

    wa, wb, v = _random_weights(2)
    W = np.concatenate([wa.ravel(), wb.ravel(), v.ravel()])

    def loss(x: np.ndarray) -> float:
        a, b, c = x.reshape(3, 3, 5)
        return forward_loss(PolyNetwork(np.stack([a, b], axis=1), c))

    h = 1e-6
    fd = np.array([(loss(W + h * e) - loss(W - h * e)) / (2 * h) for e in np.eye(len(W))])
    assert np.allclose(dyn.forward_gradient(wa, wb, v), fd, atol=1e-8)


def test_theorem1_gradient_matches_the_chain_rule_and_a_wrong_factor_is_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    wa, wb, v = _random_weights(4)
    rvec, J = dyn.potentials_and_jacobian(wa, wb, v)
    P = dyn.zero_mean_inputs(3, 5)
    g = dyn.theorem1_gradient(rvec, 5)
    assert np.allclose(P @ (J.T @ g), P @ dyn.forward_gradient(wa, wb, v), atol=1e-13)  # real chain rule
    assert dyn.theorem5_check().passed
    monkeypatch.setattr(dyn, "theorem1_gradient", lambda r, d: 1.01 * g if len(r) == len(rvec) else g)
    assert not dyn.theorem5_check().passed


def test_jacobian_is_exact() -> None:
    wa, wb, v = _random_weights(6, q=2)
    r0, J = dyn.potentials_and_jacobian(wa, wb, v)
    step = np.random.default_rng(7).normal(size=J.shape[1])
    da, db, dv = step.reshape(3, 2, 5)
    t = 1e-6
    r1, _ = dyn.potentials_and_jacobian(wa + t * da, wb + t * db, v + t * dv)
    rm, _ = dyn.potentials_and_jacobian(wa - t * da, wb - t * db, v - t * dv)
    assert np.allclose((r1 - rm) / (2 * t), J @ step, atol=1e-8)


def test_theorem7_formula_is_jjstar_and_the_fit_detects_no_decay() -> None:
    wa, wb, v = _random_weights(8, q=6)
    _, J = dyn.potentials_and_jacobian(wa, wb, v, pp=False)
    keep = np.ones((5, 5, 4), dtype=bool)
    keep[0] = keep[:, 0] = False
    J = J[keep.ravel()]
    assert np.allclose(J, dyn.jacobian_nonzero(wa, wb, v), atol=1e-15)
    assert np.allclose(J @ J.conj().T, dyn.jjstar_formula(wa, wb, v), atol=1e-13)
    assert dyn.jjstar_probe_error(J @ J.conj().T, wa, wb, v, np.random.default_rng(0), chunk=4) < 1e-14
    assert dyn.theorem7_check().passed
    # weights shared by every node never decorrelate: the fitted exponent is ~0 and the check fails
    base = np.random.default_rng(0).normal(size=(3, 5))
    stats = []
    for q in dyn.THEOREM7_WIDTHS[:2]:
        wa, wb, v = (np.repeat(base[i][None, :], q, axis=0) for i in range(3))
        H = dyn.jjstar_formula(wa, wb, v)
        dg = np.sqrt(np.real(np.diag(H)))
        C = np.abs(H) / np.outer(dg, dg)
        np.fill_diagonal(C, 0)
        stats.append(np.sqrt(np.mean(C**2)))
    assert stats[1] == pytest.approx(stats[0], rel=1e-9)


def _jjstar_without_third_term(wa: np.ndarray, wb: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The proof's H with the [k = k'] term dropped: a sum of q independent mean-zero terms all the same."""
    d = wa.shape[1]
    Fi, Fo = dyn.dft_matrices(d)
    a, b, c = (Fi @ wa.T)[1:], (Fi @ wb.T)[1:], (Fo @ v.T)[1:]
    n = d - 1

    def pair(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        P = (x[:, None, :] * y[None, :, :]).reshape(n * n, -1)
        return (P @ P.conj().T).reshape(n, n, n, n)

    eye = np.eye(n)
    H = np.einsum("ad,bcef->abcdef", eye, pair(b, c)) + np.einsum("be,acdf->abcdef", eye, pair(a, c))
    return H.reshape(n**3, n**3) / d


def _unrelated_gram(wa: np.ndarray, wb: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A Gram matrix of q independent complex Gaussian columns: its normalised off-diagonal decays as q^(-1/2) too."""
    q, d = wa.shape
    rng = np.random.default_rng(int(q))
    G = rng.normal(size=((d - 1) ** 3, q)) + 1j * rng.normal(size=((d - 1) ** 3, q))
    return G @ G.conj().T


@pytest.mark.parametrize("wrong", [_jjstar_without_third_term, _unrelated_gram])
def test_theorem7_fails_for_an_h_that_is_not_jjstar(wrong, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both decay as q^(-1/2) (the fitted exponent alone passes them); the row compares H with J J* from J."""
    monkeypatch.setattr(dyn, "jjstar_formula", wrong)
    row = dyn.theorem7_check()
    assert not row.passed and abs(row.measured + 0.5) <= dyn.THEOREM7_EXPONENT_TOL


def test_theorem7_decoupling_must_decay(monkeypatch: pytest.MonkeyPatch) -> None:
    """An E whose operator norm does not fall with the width fails, whatever the rms does."""
    real = dyn.offdiagonal

    def stuck(d: int, q: int, rng: np.random.Generator) -> dyn.OffDiagonal:
        s = real(d, q, rng)
        return dyn.OffDiagonal(s.rms, s.largest, 0.5, s.formula_error)

    monkeypatch.setattr(dyn, "offdiagonal", stuck)
    assert not dyn.theorem7_check().passed


def test_dynamics_rows_run_at_the_tasks_d_or_are_refused() -> None:
    rows = {c.name: c for c in dyn.dynamics_checks(4, 2**31, 900.0)}
    assert "d = 4" in rows["Thm 7: J J* -> diagonal"].detail and rows["Thm 7: J J* -> diagonal"].passed
    assert "d = 4" in rows["Thm 5: r' = -J J* grad l"].detail and rows["Thm 5: r' = -J J* grad l"].passed
    big = {c.name: c for c in dyn.dynamics_checks(31, 2**31, 900.0) if c.measured == "refused"}
    assert set(big) == {"Thm 5: r' = -J J* grad l", "Thm 7: J J* -> diagonal"}
    assert all(c.informational and not c.passed and "GiB" in c.detail for c in big.values())
    assert dyn.theorem7_estimate(31).bytes > 16 * 27000**2 and dyn.theorem7_estimate(5).bytes < 2**28


def test_theorem6_path_has_zero_loss_and_the_right_ends() -> None:
    losses, smallest, n0, n1, imag = dyn.theorem6_path(5, np.linspace(0, 1, 5))
    assert losses.max() < 1e-12 and smallest > 0.1 and n0 < n1 and imag < 1e-12
    assert dyn.theorem6_check(6).passed


def test_theorem6_outside_lemma1_proof_path_fails_phase_path_holds() -> None:
    rows = {c.name: c for c in dyn.theorem6_outside_lemma1_checks(5)}
    proof, phase = rows["Thm 6 proof path on z_F4/6"], rows["Thm 6 phase path on z_F4/6"]
    assert proof.informational and not proof.passed and proof.measured > 0.1
    assert phase.passed and not phase.informational and phase.measured < 1e-12
    assert dyn.theorem6_outside_lemma1_checks(6) == []  # k = d/2 real: no modulus-1 path through -1


def test_the_dropped_imaginary_part_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real network that drops a large imaginary part (a non-Hermitian z) fails Cor. 1 and Thm 6."""
    from margintheory.tasks.cogo import algebra

    real = algebra.to_network
    monkeypatch.setattr(sr, "to_network", lambda z: (real(z)[0], 1e-3))
    assert not sr.corollary1_checks(5)[0].passed
    assert not dyn.theorem6_check(5).passed
    assert "imaginary part dropped" in sr.corollary1_checks(5)[0].detail


