"""The class-weighted single neuron as a quartic form with an exactly checked first-level SOS certificate
(:mod:`margintheory.solvers.quartic_sos`, docs/theory.md#quartic-sos): the exact weights and forms against direct
rational evaluation, the certificate's checks against tampering and weakening, an independent search that never
beats ``U``, agreement with the branch and bound, ``auto``'s choice and fallback, the estimate and the CLI.  Small
sizes only (``(3, 2)``, ``(5, 2)``, ``(3, 3)``); this module is the test selection of the mutation gate's
``quartic_sos`` area."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from margintheory.cli import main
from margintheory.engines.margins import input_grid
from margintheory.errors import InputError, RefusedError, SolverError
from margintheory.solvers import quartic_sos as Q
from margintheory.solvers.class_weighted import (
    auto_method,
    class_weighted_single_neuron,
    estimate,
    objective_on_arrays,
    quartic_sos_size,
)
from margintheory.solvers.objective import SingleNeuronObjective
from tests.class_weight_cases import random_class_weights

_weights = random_class_weights


def _form(w):
    p, k = w.problem.p, w.problem.k
    G, s = Q.exact_signed_matrix(w.q, w.tau, w.labels)
    return Q.quartic_form(G, s, p, k), G, s


def _evaluate(form, x):
    """``form`` at the rational point ``x`` (exact)."""
    n = form.nvars
    total = Fraction(0)
    for key, num in zip(form.keys.tolist(), form.numer, strict=True):
        idx = [(key // n**e) % n for e in (3, 2, 1, 0)]
        total += num * math.prod(x[i] for i in idx)
    return total / 2**form.shift


@pytest.fixture(scope="module")
def solved52():
    w = _weights(5, 2, 1)
    G = w.pair_weights().signed_matrix()
    res = Q.solve_quartic_sos(w.q, w.tau, w.labels, G, 5, 2)
    return w, res


@pytest.fixture(scope="module")
def bracket33():
    w = _weights(3, 3, 2)
    return w, class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau)


def test_the_signed_matrix_is_exact_for_the_arrays_as_given():
    rng = np.random.default_rng(0)
    q = rng.random(9) * np.array([1, 1e-30, 1, 0, 1, 1, 1e-200, 1, 1])
    q /= q.sum()
    tau = rng.random((9, 3)) * 1e-150
    y = input_grid(3, 2).sum(axis=1) % 3
    tau[np.arange(9), y] = 0.0
    G, s = Q.exact_signed_matrix(q, tau, y)
    for x in range(9):
        for c in range(3):
            want = Fraction(q[x]) * (sum(Fraction(t) for t in tau[x]) if c == y[x] else -Fraction(tau[x, c]))
            assert Fraction(G[x, c], 2**s) == want
    assert q[6] * tau[6].max() == 0.0 and G[6, (y[6] + 1) % 3] != 0  # float64 underflows, the exact matrix does not


@pytest.mark.parametrize("k", [2, 3])
def test_the_form_is_the_objective(k):
    """k = 2: f = sum_c M_c(u)^2; k = 3: f = F(u, w); at random rational points, exactly."""
    w = _weights(3, k, 5)
    form, G, s = _form(w)
    rng = np.random.default_rng(1)
    a = input_grid(3, k)
    for _ in range(3):
        x = [Fraction(int(v), 7) for v in rng.integers(-9, 10, form.nvars)]
        u = [Fraction(0)] * (3 * k)
        for i, c in enumerate(form.u_coords):
            u[int(c)] = x[i]
        z = [sum(u[i * 3 + int(a[r, i])] for i in range(k)) for r in range(len(a))]
        M = [sum(Fraction(G[r, c], 2**s) * z[r] ** k for r in range(len(a))) for c in range(3)]
        if k == 2:
            want = sum(m * m for m in M)
        else:
            wv = x[len(form.u_coords):]
            want = sum(wv[j] * M[int(c)] for j, c in enumerate(form.labels))
        assert _evaluate(form, x) == want


def test_the_gram_structure():
    gs = Q.gram_structure(5)
    assert gs.size == 15 and len(gs.keys) == math.comb(8, 4)
    assert set(gs.count.tolist()) == {1, 2, 3, 4, 6} and int(gs.count.sum()) == gs.size**2
    x = np.random.default_rng(2).standard_normal(5)
    m = x[gs.bi] * x[gs.bj]
    assert m @ (gs.diagonal * m) == pytest.approx(np.dot(x, x) ** 2, rel=1e-13)
    vals = np.array([math.prod(x[(key // 5**e) % 5] for e in (3, 2, 1, 0)) for key in gs.keys.tolist()])
    assert vals @ gs.norm == pytest.approx(np.dot(x, x) ** 2, rel=1e-13)
    with pytest.raises(InputError, match="outside"):
        Q.target_rows(gs, replace(_form(_weights(3, 3, 1))[0], keys=np.array([10**9])))


def test_the_certificate_checks_and_the_bound(solved52):
    w, res = solved52
    ok, why = Q.check_certificate(res.form, res.certificate)
    assert ok and why == ""
    assert res.upper == Q.upper_from_gamma(2, res.certificate.gamma)
    assert res.upper**2 >= Fraction(4, 27) * res.certificate.gamma > (res.upper - Fraction(1, 2**60)) ** 2
    assert Q.upper_from_gamma(3, Fraction(3, 7)) == Fraction(3, 7)
    lower = 2 / 3**1.5 * res.f_lower
    assert 0 < (float(res.upper) - lower) / lower <= 1e-6
    s = res.summary()
    assert s["variables"] == 10 and s["gram_size"] == 55 and s["monomials"] == 715 and s["scs_status"] == "solved"


def test_a_tampered_certificate_is_rejected(solved52):
    _, res = solved52
    cert, form = res.certificate, res.form
    P = [row[:] for row in cert.P_int]
    assert not Q.check_certificate(form, replace(cert, gamma_int=cert.gamma_int - 1))[0]
    P[3][3] += 1
    assert "identity" in Q.check_certificate(form, replace(cert, P_int=P))[1]
    # a move between two positions of the monomial x0 x1 x2 x3 keeps the identity but not the decomposition
    P = [row[:] for row in cert.P_int]
    gs = Q.gram_structure(form.nvars)
    key = int(Q.encode(np.array([[0, 1, 2, 3]]), form.nvars)[0])
    (c1, r1), (c2, r2) = list(zip(gs.col[gs.keys[gs.row] == key], gs.rowpos[gs.keys[gs.row] == key], strict=True))[:2]
    t = cert.den // 10
    for (a, b), sign in (((c1, r1), 1), ((c2, r2), -1)):
        P[a][b] += sign * t
        P[b][a] += sign * t
    tampered = replace(cert, P_int=P)
    assert Q.identity_holds(form, tampered)
    assert "L L^T" in Q.check_certificate(form, tampered)[1]
    assert not Q.check_certificate(form, replace(cert, den=cert.den * 2))[0]
    assert not Q.check_certificate(form, replace(cert, P_int=cert.P_int[:-1]))[0]


def test_a_weakened_decomposition_fails(solved52):
    _, res = solved52
    c = res.certificate
    assert Q.remainder_within(c.P_int, c.den, c.chol, c.rho, c.eta_int)
    assert not Q.remainder_within(c.P_int, c.den, c.chol, c.rho, c.eta_int // 10**6)
    assert not Q.remainder_within(c.P_int, c.den, c.chol, c.rho + 1, c.eta_int)
    assert not Q.remainder_within(c.P_int, c.den, c.chol, c.rho, -1)
    assert not Q.remainder_within(c.P_int, c.den, [row[:-1] for row in c.chol], c.rho, c.eta_int)
    neg = [row[:] for row in c.P_int]
    neg[0][0] = -neg[0][0]  # an indefinite matrix is never accepted, whatever the factor
    assert not Q.remainder_within(neg, c.den, c.chol, c.rho, c.eta_int)
    proof, lam = Q.prove_psd(np.array(neg, dtype=object), c.den)
    assert proof is None and lam < 0
    # -I = 0 0^T + (eta I + 0) with eta = -1: |E|_F <= |eta|, but a negative eta proves nothing
    minus_identity = [[-7 if i == j else 0 for j in range(3)] for i in range(3)]
    assert not Q.remainder_within(minus_identity, 7, [[0] * 3] * 3, 0, -7)
    assert Q.remainder_within([[7 if i == j else 0 for j in range(3)] for i in range(3)], 7, [[0] * 3] * 3, 0, 7)


def _eta_for_ratio(cert, ratio):
    """The ``eta_int`` at which ``|P - eta I - L L^T / 4^rho|_F = ratio * eta`` (the larger root), from the exact
    Frobenius data of ``E0 = P - L L^T / 4^rho`` (in units of ``1 / den``)."""
    from flint import fmpz_mat

    four = 1 << (2 * cert.rho)
    L = fmpz_mat(cert.chol)
    E0 = fmpz_mat(cert.P_int) * four - (L * L.transpose()) * cert.den  # times den 4^rho
    entries = [[Fraction(int(v), four) for v in row] for row in E0.tolist()]
    m = len(entries)
    frob2 = sum(v * v for row in entries for v in row)
    trace = sum(entries[i][i] for i in range(m))
    # |E0 - s I|^2 = frob2 - 2 s trace + m s^2 = ratio^2 s^2
    a, b, c = m - ratio**2, -2 * float(trace), float(frob2)
    s = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a) if a else c / -b
    return int(s)


@pytest.mark.parametrize("ratio,holds", [(0.9, True), (1.1, False), (1.9, False)])
def test_the_decomposition_check_is_sharp(solved52, ratio, holds):
    """``|E|_F <= eta`` decides, not a multiple of it: a remainder 10 % under ``eta`` passes, 10 % or 90 % over
    fails (a check weakened by a factor of 2, in the norm or its square, would accept the last two)."""
    c = solved52[1].certificate
    eta = _eta_for_ratio(c, ratio)
    assert eta > 0
    assert Q.remainder_within(c.P_int, c.den, c.chol, c.rho, eta) is holds


def test_the_identity_check_is_an_equality(solved52):
    _, res = solved52
    cert = res.certificate
    for d in (1, -1):
        P = [row[:] for row in cert.P_int]
        P[0][0] += d
        assert not Q.identity_holds(res.form, replace(cert, P_int=P))
        assert not Q.identity_holds(res.form, replace(cert, gamma_int=cert.gamma_int + d))
    P = [row[:] for row in cert.P_int]
    P[0][1] += 1
    P[1][0] -= 1  # the same monomial x0^3 x1 from both positions: the identity still holds
    assert Q.identity_holds(res.form, replace(cert, P_int=P))


def test_a_claim_below_the_maximum_is_raised_above_it(solved52, monkeypatch):
    """Starting the rounding from SCS's gamma lowered by 1e-4 (relative): the projected Gram matrix then has a
    negative eigenvalue, the shift must make it up, and the proved gamma ends above the maximum found; with a
    single try there is no certificate at all."""
    w, res = solved52
    gs = Q.gram_structure(res.form.nvars)
    low = replace(res.scs, gamma=res.scs.gamma * (1 - 1e-4))
    cert = Q.certify(gs, res.form, low)
    assert cert.tries > 1 and Q.check_certificate(res.form, cert)[0]
    assert cert.gamma >= Fraction(res.f_lower) ** 2 * (1 - Fraction(1, 10**12))
    monkeypatch.setattr(Q, "MAX_TRIES", 1)
    with pytest.raises(SolverError, match="no positive semidefinite rounding"):
        Q.certify(gs, res.form, low)


def _projected_gradient(obj, rng, restarts=24, steps=600):
    """Random restarts of projected gradient ascent on the unit sphere, the step doubled after an ascent and
    halved (the step refused) otherwise."""
    best = -math.inf, None
    for _ in range(restarts):
        x = rng.standard_normal(obj.n)
        x /= np.linalg.norm(x)
        f, g = obj.value_and_grad(x)
        step = 1.0
        for _ in range(steps):
            y = x + step * (g - (g @ x) * x)
            y /= np.linalg.norm(y)
            fy, gy = obj.value_and_grad(y)
            if fy > f:
                x, f, g, step = y, fy, gy, step * 2
            else:
                step /= 2
        if f > best[0]:
            best = f, x
    return best[1]


def test_an_independent_search_never_exceeds_u(solved52, bracket33):
    """Projected gradient ascent on the sphere of the full objective ``F(u, w)`` (not the eliminated one the
    solver polishes) from random restarts: it gets within 1e-6 of ``U`` and never above it."""
    for w, upper in ((solved52[0], float(solved52[1].upper)), (bracket33[0], bracket33[1].upper)):
        obj = SingleNeuronObjective(w.pair_weights())
        x = _projected_gradient(obj, np.random.default_rng(11))
        best = objective_on_arrays(w, x.reshape(w.problem.k + 1, w.problem.p))
        assert upper * (1 - 1e-6) <= best <= upper


def test_auto_takes_the_proved_quartic_bound_and_agrees_with_the_branch_and_bound(bracket33):
    w, b = bracket33
    assert auto_method(w) == "quartic-sos" and b.method == "quartic-sos" and b.upper_exactness == "proved"
    assert 0 < b.relative_gap <= 1e-6 and b.lower == objective_on_arrays(w, b.maximiser)
    assert b.exact_upper is not None and b.upper >= b.exact_upper and b.sos_summary()["gram_size"] == 78
    w5 = _weights(5, 2, 1)
    e = class_weighted_single_neuron(w5.problem, q=w5.q, tau=w5.tau, method="eliminated")
    s = class_weighted_single_neuron(w5.problem, q=w5.q, tau=w5.tau, method="quartic-sos")
    assert s.lower <= e.upper and e.lower <= s.upper and s.upper <= e.upper


def test_auto_falls_back_to_the_branch_and_bound(monkeypatch):
    w = _weights(5, 2, 1)

    def fails(*args, **kwargs):
        raise SolverError("quartic SOS bound: simulated")

    real = Q.solve_quartic_sos
    monkeypatch.setattr(Q, "solve_quartic_sos", fails)
    b = class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau)
    assert b.method == "eliminated" and "quartic-sos failed first" in b.certification
    with pytest.raises(SolverError, match="simulated"):
        class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau, method="quartic-sos")

    def loose(*args, **kwargs):  # a valid but loose upper end (the first level not tight, say)
        res = real(*args, **kwargs)
        return replace(res, upper=res.upper * Fraction(1001, 1000))

    monkeypatch.setattr(Q, "solve_quartic_sos", loose)
    b = class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau)
    assert b.method == "eliminated" and "left the relative gap 1.00e-03" in b.certification
    assert b.relative_gap <= 1e-6


def test_sizes_estimates_and_refusals():
    w = _weights(5, 2, 1)
    assert quartic_sos_size(w) == 10 and quartic_sos_size(_weights(3, 3, 1)) == 12
    assert quartic_sos_size(_weights(5, 3, 1, peaked=True)) <= 9 + 6
    est = estimate(w, method="quartic-sos")
    assert "10 variables" in est.what and est.bytes == pytest.approx(Q.estimate_bytes(10) + 8.0 * 25 * 9 * 3)
    ratio = (Q.estimate_bytes(28) - Q.BYTES_BASE) / (Q.estimate_bytes(14) - Q.BYTES_BASE)
    assert ratio == pytest.approx((406 / 105) ** 2)  # grows as the square of the Gram matrix's side
    assert Q.estimate_seconds(28) > Q.estimate_seconds(22) > Q.SECONDS_BASE
    with pytest.raises(RefusedError):
        class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau, method="quartic-sos", max_memory=10**6)
    assert auto_method(w, max_memory=10**6) == "eliminated"
    with pytest.raises(InputError, match="k = 2 or k = 3"):
        u4 = _weights(3, 4, 1)
        class_weighted_single_neuron(u4.problem, q=u4.q, tau=u4.tau, method="quartic-sos")
    with pytest.raises(InputError, match="k = 2 and k = 3"):
        Q.quartic_form(*Q.exact_signed_matrix(u4.q, u4.tau, u4.labels), 3, 4)


def test_the_moment_point_is_the_maximiser(solved52):
    """The dual's moment matrix is rank one at ``m(x*)``: its point is a maximiser up to sign."""
    w, res = solved52
    gs = Q.gram_structure(res.form.nvars)
    x = Q.moment_point(gs, res.scs.Y)
    u = np.zeros(10)
    u[res.form.u_coords] = x
    from margintheory.solvers.weighted_bnb import eliminated_value, reduce_weights

    value = eliminated_value(reduce_weights(w.pair_weights().signed_matrix(), 5, 2), u)[0]
    assert value == pytest.approx(res.f_lower, rel=1e-6)


def test_cli_reports_the_proved_bracket(capsys, tmp_path):
    w = _weights(5, 2, 3)
    path = tmp_path / "w.npz"
    np.savez(path, q=w.q, tau=w.tau)
    assert main(["solve", "--p", "5", "--k", "2", "--single-neuron", "--weights", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    d = doc["details"]
    assert d["method"] == "quartic-sos" and d["upper_bound_exactness"] == "proved"
    assert d["lower_bound"] <= d["upper_bound"] <= d["lower_bound"] * (1 + 1e-6)
    assert d["weights"]["quartic_sos"]["variables"] == 10


# -- the exact checks on certificates built by hand (what a weakened check would accept) ------------------------
def _zero_form(nvars=2, shift=0):
    """``f = 0`` in ``nvars`` variables: ``gamma |x|^4 = m^T P m`` is then a statement about ``P`` alone."""
    empty = np.zeros(0, dtype=np.int64)
    return Q.QuarticForm(3, 2, nvars, empty, empty, empty, empty, [], shift)


def _hand_certificate(P, den=1, gamma_int=1, chol=None, rho=0, eta_int=0):
    return Q.QuarticCertificate(gamma_int, den, P, chol if chol is not None else [[0] * len(P)] * len(P), rho,
                                eta_int)


def test_the_identity_check_reads_every_monomial_of_p():
    """``|x|^4 = x0^4 + 2 x0^2 x1^2 + x1^4`` with ``m = (x0^2, x0 x1, x1^2)``: ``P`` with the cross term on
    ``(x0^2, x1^2)`` holds, and one with an extra ``x0^3 x1`` (a monomial neither ``|x|^4`` nor ``f`` has) does
    not -- a check that compared only the monomials of ``f`` and ``|x|^4`` would accept it."""
    form = _zero_form()
    holds = [[1, 0, 1], [0, 0, 0], [1, 0, 1]]
    assert Q.identity_holds(form, _hand_certificate(holds))
    assert Q.identity_holds(form, _hand_certificate([[1, 0, 0], [0, 2, 0], [0, 0, 1]]))
    extra = [[1, 1, 1], [1, 0, 0], [1, 0, 1]]
    assert not Q.identity_holds(form, _hand_certificate(extra))
    assert not Q.identity_holds(form, _hand_certificate(holds, gamma_int=2))


def test_the_identity_check_refuses_malformed_certificates():
    form = _zero_form()
    holds = [[1, 0, 1], [0, 0, 0], [1, 0, 1]]
    assert not Q.identity_holds(form, _hand_certificate(holds[:-1]))
    assert not Q.identity_holds(form, _hand_certificate([holds[0], holds[1][:-1], holds[2]]))
    assert not Q.identity_holds(form, _hand_certificate(holds, den=0))
    assert not Q.identity_holds(form, _hand_certificate(holds, den=-1))
    # the form's coefficients are numer / 2^shift: a denominator that 2^shift does not divide cannot carry them
    shifted = _zero_form(shift=3)
    assert Q.identity_holds(shifted, _hand_certificate(holds, den=8))
    assert not Q.identity_holds(shifted, _hand_certificate(holds, den=12))


def test_an_exact_factorization_with_no_slack_passes_and_nothing_less_does():
    """``P = L L^T`` exactly (``eta = 0``, ``E = 0``) is a proof; a factor off by one entry, a negative ``eta`` or
    a ragged matrix is not."""
    P, L = [[4, 2], [2, 2]], [[2, 0], [1, 1]]
    assert Q.remainder_within(P, 1, L, 0, 0)
    assert Q.remainder_within([[8, 4], [4, 4]], 2, L, 0, 0)  # P / den = L L^T
    assert not Q.remainder_within(P, 1, [[2, 0], [1, 0]], 0, 0)
    assert not Q.remainder_within(P, 1, [[2, 0], [0, 1]], 0, 0)  # off-diagonal remainder only
    assert Q.remainder_within(P, 1, [[2, 0], [1, 0]], 0, 1)  # |E|_F = 1 <= eta = 1 (on the boundary)
    assert not Q.remainder_within(P, 1, L, 0, -1)
    assert not Q.remainder_within(P, 1, [[2, 0], [1]], 0, 0)
    assert not Q.remainder_within([[4, 2], [2]], 1, L, 0, 0)
    assert not Q.remainder_within(P, 1, L[:1], 0, 0)


def test_check_certificate_needs_both_parts(solved52):
    """The decision, not only the message: a certificate whose identity holds and whose decomposition fails is
    refused (``False``), and one whose identity fails is refused whatever its decomposition."""
    _, res = solved52
    cert, form = res.certificate, res.form
    bad_decomposition = replace(cert, eta_int=cert.eta_int // 10**6)
    assert Q.identity_holds(form, bad_decomposition)
    ok, why = Q.check_certificate(form, bad_decomposition)
    assert ok is False and "L L^T" in why
    ok, why = Q.check_certificate(form, replace(cert, gamma_int=cert.gamma_int + 1))
    assert ok is False and "identity" in why
    hand = _hand_certificate([[1, 0, 1], [0, 0, 0], [1, 0, 1]], chol=[[1, 0, 0], [0, 0, 0], [1, 0, 0]])
    assert Q.check_certificate(_zero_form(), hand) == (True, "")


def test_one_input_and_one_wrong_label_is_a_form_and_no_mass_is_refused():
    """The smallest weights the problem has -- all of ``q`` on one input, all of its ``tau`` on one wrong label --
    give a form in two label columns; weights with no mass are refused."""
    G = np.zeros((9, 3), dtype=object)
    G[4, 2], G[4, 0] = 1, -1
    rows, cols = Q._used(G)
    assert rows.tolist() == [4] and cols.tolist() == [0, 2]
    with pytest.raises(InputError, match="no mass"):
        Q._used(np.zeros((9, 3), dtype=object))


# -- near-uniform weights: no cliff ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def near52():
    from tests.class_weight_cases import near_uniform_class_weights

    return near_uniform_class_weights(5, 2, 0, 1e-6)


def test_near_uniform_weights_end_within_the_effort_cap(near52):
    """Uniform weights plus 1e-6 noise: SCS alone needed its 20 000-iteration limit (a degenerate problem: the
    uniform maximisers form a continuum); the staged run with the claim started at the value attained stops at the
    effort cap, still proved, with the proved gap measured (1.9e-9) well inside 1e-7."""
    w = near52
    b = class_weighted_single_neuron(w.problem, q=w.q, tau=w.tau, method="quartic-sos")
    assert b.upper_exactness == "proved" and not w.translation_invariant
    assert b.weights["quartic_sos"]["scs_iterations"] <= Q.EFFORT_ITERATIONS
    assert 0 <= b.relative_gap <= 1e-7


def test_the_claim_starts_at_the_value_attained(near52):
    """From an early SCS point (below the maximum: primal infeasible) the certificate started at SCS's gamma needs
    several shifts and ends far above the maximum; started at the value the local ascent attains it ends within
    1e-8 of it.  Both certificates pass the exact check."""
    w = near52
    form, _, _ = _form(w)
    G = w.pair_weights().signed_matrix()
    f_low, _ = Q._local_ascent(G, 5, 2, [np.random.default_rng(0).standard_normal(10) for _ in range(8)])
    gs = Q.gram_structure(form.nvars)
    sol = Q.solve_scs(gs, form, f_low**2, max_iters=150)
    attained = f_low**2 / 2.0**sol.sigma
    assert sol.gamma < attained  # SCS stopped below the maximum
    from_scs = Q.certify(gs, form, sol)
    from_low = Q.certify(gs, form, sol, attained)
    assert Q.check_certificate(form, from_scs)[0] and Q.check_certificate(form, from_low)[0]
    maximum = Fraction(f_low) ** 2
    assert from_low.gamma >= maximum * (1 - Fraction(1, 10**12))  # no certificate claims less than attained
    assert from_low.gamma <= maximum * (1 + Fraction(1, 10**8)) < from_scs.gamma


def test_the_time_limit_covers_the_fallback(monkeypatch):
    """``auto``'s branch and bound after the SOS bound gets the time the SOS bound left, and none when it is spent
    (it was given the whole limit again: a 3.2 s limit ran 16 to 19 s)."""
    import time

    from margintheory.solvers import class_weighted as cw

    w = _weights(5, 2, 1)
    slow = cw._quartic_bracket(w, 8, 0, None)
    slow.lower = slow.upper * (1 - 1e-3)  # a gap above AUTO_GAP: auto would run the branch and bound

    def quartic(*args):
        time.sleep(0.3)
        return slow

    given = []
    monkeypatch.setattr(cw, "_quartic_bracket", quartic)
    monkeypatch.setattr(cw, "_eliminated_bracket", lambda w, n, s, limit: given.append(limit) or slow)
    assert cw._quartic_then_eliminated(w, 8, 0, 0.2, True) is slow and given == []
    cw._quartic_then_eliminated(w, 8, 0, 5.0, True)
    assert len(given) == 1 and 0 < given[0] <= 5.0 - 0.3
