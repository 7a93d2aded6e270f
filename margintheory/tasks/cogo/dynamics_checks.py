"""The gradient-dynamics statements of Tian's CoGO (arXiv:2410.01779, Section 6 and App. D;
docs/theory.md#cogo-dynamics), checked by computation on seeded weights:

* **Theorem 5**: under gradient flow on the real weights ``W``, the monomial potentials move as
  ``r' = -J J^* conj(grad_r l)`` (``J = dr/dW``; ``r`` and its conjugate treated as independent), and
  ``-conj(grad_r l)^* r' = ||J^* conj(grad_r l)||^2 >= 0``.  The left side is computed from the forward-pass loss
  (its gradient in closed form, never from Theorem 1), the right side from Theorem 1's polynomial in ``r``.
* **Theorem 6**: for ``z = y * z'`` with ``z, z'`` global optimizers there is a path of zero loss in ``Z_q`` from
  ``e * z'`` (``e`` the augmented identity) to ``z``; built as in the proof (``y(t) = (1-t) e + t y`` with each
  ``r[k,k,k]`` renormalised to 1 through the ``c`` entries) and the loss measured along it.
* **Theorem 7**: with i.i.d. Gaussian weights, ``J J^*`` restricted to ``r[k1,k2,k]`` becomes diagonal as the width
  ``q`` grows -- a Monte-Carlo statement: the largest normalised off-diagonal entry is measured at several widths
  (seeded) and its decay exponent compared with ``-1/2`` (the central-limit rate of a sum of ``q`` independent
  mean-zero terms) within a stated tolerance.

Every check here is float64 with its tolerance and measured error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from margintheory.core.checks import Check
from margintheory.runtime.budget import Estimate
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import Z, r_abc
from margintheory.tasks.cogo.lemma1_checks import ZERO_TOL
from margintheory.tasks.cogo.semiring_checks import random_unit, real_network_loss

SEED = 0
#: widths of the Monte-Carlo estimate of Theorem 7 and the tolerance on the fitted decay exponent
THEOREM7_WIDTHS = (64, 256, 1024, 4096)
THEOREM7_EXPONENT_TOL = 0.1
#: ``J J^*`` from the Jacobian against the proof's formula (82)-(85): relative, float64
THEOREM7_FORMULA_TOL = 1e-10
#: the default ``d`` of the dynamics checks (the task runs them at its own ``d``, within its budgets)
DYNAMICS_D = 5
#: conservative throughput (flops per second) of the dynamics checks' complex arithmetic on one loaded core, used only
#: for their time estimates
STATEMENT_FLOPS = 5.0e8


def dft_matrices(d: int) -> tuple[np.ndarray, np.ndarray]:
    """``(F_in, F_out)``: ``z_a = F_in w_a``, ``z_c = F_out v`` (the maps of :func:`~margintheory.tasks.cogo.
    algebra.from_network`)."""
    g = np.arange(d)
    phase = 2j * np.pi * np.outer(g, g) / d
    return np.exp(-phase) / d, np.exp(phase) / d


def potentials_and_jacobian(wa: np.ndarray, wb: np.ndarray, v: np.ndarray, *, pp: bool = True
                            ) -> tuple[np.ndarray, np.ndarray]:
    """The potentials ``r[k1,k2,k]`` (and, with ``pp``, ``r_a``, ``r_b``) for output frequency ``k != 0``, as one
    vector, and their Jacobian ``J`` with respect to ``W = (w_a, w_b, v)`` (each ``(q, d)``, flattened in that
    order): ``r`` is trilinear in ``(z_a, z_b, z_c)``, so ``J`` is exact."""
    q, d = wa.shape
    Fi, Fo = dft_matrices(d)
    za, zb, zc = Fi @ wa.T, Fi @ wb.T, (Fo @ v.T)[1:]
    blocks: list[tuple[np.ndarray, list[np.ndarray]]] = []
    triples = [(za, zb, (0, 1))] + ([(za, za, (0, 0)), (zb, zb, (1, 1))] if pp else [])
    for x, y, (px, py) in triples:
        r = np.einsum("xj,yj,zj->xyz", x, y, zc)
        grads = [np.zeros((d, d, d - 1, q, d), dtype=complex) for _ in range(3)]
        grads[px] += np.einsum("xg,yj,zj->xyzjg", Fi, y, zc)
        grads[py] += np.einsum("xj,yg,zj->xyzjg", x, Fi, zc)
        grads[2] += np.einsum("xj,yj,zg->xyzjg", x, y, Fo[1:])
        blocks.append((r.ravel(), [g.reshape(d * d * (d - 1), q * d) for g in grads]))
    rvec = np.concatenate([r for r, _ in blocks])
    J = np.concatenate([np.concatenate(g, axis=1) for _, g in blocks])
    return rvec, J


def theorem1_gradient(rvec: np.ndarray, d: int) -> np.ndarray:
    """``grad_r l`` of Theorem 1's loss written as a polynomial in the potentials and their conjugates (the
    conjugate of ``r[k1,k2,k]`` is ``r[-k1,-k2,-k]``, treated as a separate variable):
    ``d l / d r[k1,k2,k] = (2 r[-k1,-k2,-k] - 2 [k1 = k2 = k]) / d`` and, with ``S_p(m, k) = sum_k' r_p[k', m-k',
    k]``, ``d l / d r_p[k1,k2,k] = S(-m, -k) / (2 d)`` (``m = k1 + k2``; ``S = S_a + S_b`` at ``m = 0``)."""
    n = d * d * (d - 1)
    R, Ra, Rb = (rvec[i * n:(i + 1) * n].reshape(d, d, d - 1) for i in range(3))
    full = [np.concatenate([np.zeros((d, d, 1), complex), T], axis=2) for T in (R, Ra, Rb)]
    neg = (-np.arange(d)) % d
    gR = 2 * full[0][np.ix_(neg, neg, neg)] / d
    ks = np.arange(1, d)
    gR[ks, ks, ks] -= 2 / d
    m = (np.arange(d)[:, None] + np.arange(d)[None, :]) % d
    S = [np.stack([T[m == mm].sum(axis=0) for mm in range(d)]) for T in full[1:]]  # S_p[m, k]
    S[0][0] = S[1][0] = S[0][0] + S[1][0]  # m = 0: the R_n term sums over p
    grads = [gR[:, :, 1:]] + [(Sp[np.ix_(neg, neg)][m] / (2 * d))[:, :, 1:] for Sp in S]
    return np.concatenate([g.ravel() for g in grads])


def forward_gradient(wa: np.ndarray, wb: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``grad_W`` of the forward-pass loss ``mean_(a,b) ||P1perp(o/(2d) - e_(a+b))||^2`` in closed form (chain rule
    through ``o[ab, c] = sum_j v_j[c] (w_a,j[a] + w_b,j[b])^2``), flattened as in :func:`potentials_and_jacobian`."""
    q, d = wa.shape
    h = wa[:, :, None] + wb[:, None, :]  # (q, a, b)
    o = np.einsum("jc,jab->abc", v, h**2)
    t = o / (2 * d)
    t[np.arange(d)[:, None], np.arange(d)[None, :], (np.arange(d)[:, None] + np.arange(d)[None, :]) % d] -= 1
    G = (t - t.mean(axis=2, keepdims=True)) / d**3  # d loss / d o
    gv = np.einsum("abc,jab->jc", G, h**2)
    gh = 2 * h * np.einsum("abc,jc->jab", G, v)
    return np.concatenate([gh.sum(axis=2).ravel(), gh.sum(axis=1).ravel(), gv.ravel()])


def zero_mean_inputs(q: int, d: int) -> np.ndarray:
    """Projection (diagonal 0/1 pattern applied as a matrix) onto ``W`` with zero-mean input weights, where
    Theorem 1 (hence ``l`` as a function of ``r``) holds: the dynamics are on that subspace."""
    P = np.eye(3 * q * d)
    block = np.eye(d) - 1.0 / d
    for s in range(2 * q):
        P[s * d:(s + 1) * d, s * d:(s + 1) * d] = block
    return P


def theorem5_check(d: int = DYNAMICS_D, q: int = 3) -> Check:
    """Theorem 5 on seeded zero-mean random weights."""
    rng = np.random.default_rng(SEED)
    wa, wb, v = (rng.normal(size=(q, d)) for _ in range(3))
    wa -= wa.mean(axis=1, keepdims=True)
    wb -= wb.mean(axis=1, keepdims=True)
    rvec, J = potentials_and_jacobian(wa, wb, v)
    P = zero_mean_inputs(q, d)
    Wdot = -P @ forward_gradient(wa, wb, v)  # gradient flow on the zero-mean subspace
    lhs = J @ Wdot
    JP = J @ P
    g = theorem1_gradient(rvec, d)
    rhs = -JP @ (JP.conj().T @ np.conj(g))
    err = float(np.abs(lhs - rhs).max() / np.abs(lhs).max())
    inner = complex(np.vdot(-np.conj(g), lhs))
    norm2 = float(np.linalg.norm(JP.conj().T @ np.conj(g)) ** 2)
    ip_err = abs(inner - norm2) / norm2
    tol = 1e-10
    return Check(name="Thm 5: r' = -J J* grad l", expected=0.0, measured=max(err, ip_err), tolerance=tol,
                 passed=err <= tol and ip_err <= tol and inner.real >= 0, exactness="float",
                 detail=f"d = {d}, q = {q}, seed {SEED}: relative |r' - (-J J* conj grad_r l)| {err:.2e} (r' = J W', "
                        f"W' = -grad_W of the forward loss); -conj(grad)^* r' = {inner.real:.6g} "
                        f"{inner.imag:+.1e}i vs ||J* conj grad||^2 = {norm2:.6g} (relative {ip_err:.1e})",
                 statement="Theorem 5: r' = -J J* conj(grad_r l), with positive inner product with "
                           "-conj(grad_r l)")


def theorem6_path(d: int, ts: np.ndarray) -> tuple[np.ndarray, float, float, float, float]:
    """Theorem 6's path from ``e * z'`` to ``z = y * z'`` (``z' = z_F6``, ``y`` a seeded order-2 unit): the loss at
    each ``t``, the smallest ``|r[k,k,k]|`` of the un-normalised ``(1-t) e + t y`` over the grid, the squared
    norms of ``e * z'`` and ``y * z'``, and the largest imaginary part dropped when forming the real networks
    (relative to the largest weight)."""
    rng = np.random.default_rng(SEED)
    zp = cc.build_f6(d, variant="paper" if d % 2 else "corrected").z
    e = np.zeros((3, d, 2), dtype=complex)
    e[:, :, 0] = 1
    y = 0.7 * e + 0.3 * (random_unit(d, rng).z @ np.ones((1, 2)))  # order 2, not yet a unit
    y = _normalize_units(Z(y), d).z
    losses, smallest, imag = [], np.inf, 0.0
    for t in ts:
        yt = Z((1 - t) * e + t * y)
        ks = np.arange(1, d)
        smallest = min(smallest, float(np.abs(r_abc(yt)[ks, ks, ks]).min()))
        loss, im = real_network_loss(_normalize_units(yt, d) * zp)
        losses.append(loss)
        imag = max(imag, im)
    norms = [float(np.sum(np.abs((Z(x) * zp).z) ** 2)) for x in (e, y)]
    return np.array(losses), smallest, norms[0], norms[1], imag


def _normalize_units(y: Z, d: int) -> Z:
    """Scale the ``c`` entries at each ``k != 0`` by ``1 / r[k,k,k](y)`` (conjugate at ``-k``): ``r[k,k,k] = 1``."""
    z = y.z.copy()
    for k in range(1, d):
        r = np.sum(z[0, k] * z[1, k] * z[2, k])
        z[2, k] /= r
    return Z(z)


def theorem6_check(d: int) -> Check:
    """Theorem 6: zero loss along the path (11 points), the endpoints, and the norm comparison."""
    ts = np.linspace(0.0, 1.0, 11)
    losses, smallest, n0, n1, imag = theorem6_path(d, ts)
    worst = float(losses.max())
    ok = worst <= ZERO_TOL and smallest > 0.1 and n0 <= n1 and imag <= ZERO_TOL
    return Check(name="Thm 6: zero-loss path", expected=0.0, measured=worst, tolerance=ZERO_TOL, passed=ok,
                 exactness="float",
                 detail=f"z' = z_F6 (d = {d}), y a seeded order-2 unit; max loss over t = 0, 0.1, ..., 1 of "
                        f"y(t) * z'; min |r_kkk((1-t) e + t y)| {smallest:.3g} (> 0: the renormalisation exists); "
                        f"||e * z'||^2 = {n0:.6g} <= ||y * z'||^2 = {n1:.6g}; imaginary part dropped from the real "
                        f"weights {imag:.1e} of the largest (bound {ZERO_TOL:.0e})",
                 statement="Theorem 6: a path of zero loss in Z_q joins e * z' (= z' with zero nodes) and "
                           "z = y * z'; the lower-order end has the smaller L2 norm")


def theorem6_outside_lemma1(d: int, ts: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """Theorem 6 for ``z' = z_F4/6`` (a global optimizer outside Lemma 1's condition, where Corollary 1 fails) and
    ``y`` a seeded order-1 unit with ``|y_pk| = 1`` (so ``z = y * z'`` is a global optimizer too): the largest loss
    on the proof's path ``(1-t) 1 + t y`` (renormalised to ``r_kkk = 1``), the largest on the phase path
    ``y(t) = e^(i t theta)`` (``theta`` the phases of ``y``, ``theta_c = -(theta_a + theta_b)``: a unit of modulus 1
    at every ``t``), the loss at ``z``, and the largest imaginary part dropped."""
    ts = np.linspace(0.0, 1.0, 11) if ts is None else ts
    rng = np.random.default_rng(SEED)
    zp = cc.build_f46(d, variant="corrected").z
    one = np.ones((3, d, 1), dtype=complex)
    u = random_unit(d, rng, unit_modulus=True).z
    theta = np.angle(u)
    theta[2] = -(theta[0] + theta[1])
    linear: list[float] = []
    phase: list[float] = []
    imag = 0.0
    for t in ts:
        for out, yt in ((linear, _normalize_units(Z((1 - t) * one + t * u), d)), (phase, Z(np.exp(1j * t * theta)))):
            loss, im = real_network_loss(yt * zp)
            out.append(loss)
            imag = max(imag, im)
    end, im = real_network_loss(Z(u) * zp)
    return max(linear), max(phase), end, max(imag, im)


def theorem6_outside_lemma1_checks(d: int) -> list[Check]:
    """Theorem 6 on ``z_F4/6`` (:func:`theorem6_outside_lemma1`): the proof's path (informational: it leaves the
    zero-loss set) and a phase path (deciding: the statement holds there).  Odd ``d >= 5`` only: at even ``d`` the
    entries at ``k = d/2`` are real, and a unit with ``-1`` there is joined to ``1`` by no path of modulus-1 units."""
    if d < 5 or d % 2 == 0:
        return []
    linear, phase, end, imag = theorem6_outside_lemma1(d)
    where = (f"z' = z_F4/6 (corrected, d = {d}), y a seeded order-1 unit with |y_pk| = 1 (loss of y * z' {end:.1e}); "
             f"imaginary part dropped {imag:.1e} of the largest weight (bound {ZERO_TOL:.0e})")
    return [
        Check(name="Thm 6 proof path on z_F4/6", expected=0.0, measured=linear, tolerance=ZERO_TOL,
              passed=linear <= ZERO_TOL, exactness="float", informational=True,
              detail=f"{where}; max loss over t = 0, 0.1, ..., 1 of ((1-t) 1 + t y) * z', renormalised to "
                     "r_kkk = 1: |y_pk(t)| < 1 inside the path, and Corollary 1 fails for z_F4/6",
              statement="Theorem 6's proof path (1-t) e + t y keeps zero loss for a global optimizer z' outside "
                        "Lemma 1's condition (it does not: the proof uses Corollary 1 along the path)"),
        Check(name="Thm 6 phase path on z_F4/6", expected=0.0, measured=phase, tolerance=ZERO_TOL,
              passed=phase <= ZERO_TOL and end <= ZERO_TOL and imag <= ZERO_TOL, exactness="float",
              detail=f"{where}; max loss over t = 0, 0.1, ..., 1 of e^(i t theta) * z' (a unit of modulus 1 at "
                     "every t)",
              statement="Theorem 6 for z' = z_F4/6: a path of zero loss joins z' and z = y * z' (here along the "
                        "phases of y, not the proof's straight line)"),
    ]


def jjstar_formula(wa: np.ndarray, wb: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``H = J J^*`` over ``r[k1,k2,k]`` (all three ``k != 0``) by the proof of Theorem 7, Eq. (82)-(85):
    ``H = d^-1 ([k1 = k1'] sum_j b_k2 conj(b_k2') c_k conj(c_k') + [k2 = k2'] sum_j a conj(a') c conj(c')
    + [k = k'] sum_j a conj(a') b conj(b'))`` (the ``d^-1`` is ``F F^*`` of the DFT from real weights to ``z``).
    ``O(q d^4)``: no Jacobian is formed."""
    d = wa.shape[1]
    Fi, Fo = dft_matrices(d)
    a, b, c = (Fi @ wa.T)[1:], (Fi @ wb.T)[1:], (Fo @ v.T)[1:]
    n = d - 1
    eye = np.eye(n)

    def pair(x: np.ndarray, y: np.ndarray) -> np.ndarray:  # [(i, l), (i', l')] = sum_j x_i y_l conj(x_i' y_l')
        P = (x[:, None, :] * y[None, :, :]).reshape(n * n, -1)
        return (P @ P.conj().T).reshape(n, n, n, n)

    H = (np.einsum("ad,bcef->abcdef", eye, pair(b, c)) + np.einsum("be,acdf->abcdef", eye, pair(a, c))
         + np.einsum("cf,abde->abcdef", eye, pair(a, b))) / d
    return H.reshape(n**3, n**3)


#: nodes per block of the Jacobian in :func:`jjstar_probe_error` (fewer where a block would exceed
#: :data:`JACOBIAN_BLOCK_ENTRIES` complex entries)
JACOBIAN_CHUNK = 1024
JACOBIAN_BLOCK_ENTRIES = 2**22


def jacobian_chunk(d: int) -> int:
    """Nodes per Jacobian block at ``d``: :data:`JACOBIAN_CHUNK`, or fewer so that a block ``(d-1)^3 x 3 chunk d``
    holds at most :data:`JACOBIAN_BLOCK_ENTRIES` entries."""
    return max(1, min(JACOBIAN_CHUNK, JACOBIAN_BLOCK_ENTRIES // (3 * d * (d - 1) ** 3)))


def _nonzero_rows(d: int) -> np.ndarray:
    """The rows of :func:`potentials_and_jacobian` (``pp = False``) with ``k1, k2 != 0`` (``k != 0`` always)."""
    keep = np.ones((d, d, d - 1), dtype=bool)
    keep[0] = keep[:, 0] = False
    return keep.ravel()


def jacobian_nonzero(wa: np.ndarray, wb: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The rows of ``J = dr/dW`` for ``r[k1,k2,k]`` with all three ``k != 0`` (columns ``W = (w_a, w_b, v)`` flattened
    as in :func:`potentials_and_jacobian`, equal to its rows there): ``r = sum_j a_k1j b_k2j c_kj`` with
    ``a = F_in w_a``, ``b = F_in w_b``, ``c = F_out v``, so ``dr/dw_a[j, g] = F_in[k1, g] b_k2j c_kj`` and likewise."""
    q, d = wa.shape
    Fi, Fo = dft_matrices(d)
    a, b, c = (Fi @ wa.T)[1:], (Fi @ wb.T)[1:], (Fo @ v.T)[1:]
    n = d - 1
    # axes (k1, k2, k, node j, weight g); x[k, j] placed on axis 0, 1 or 2 of the potentials
    on = [lambda x: x[:, None, None, :, None], lambda x: x[None, :, None, :, None], lambda x: x[None, None, :, :, None]]
    dft = [lambda F: F[1:, None, None, None, :], lambda F: F[None, 1:, None, None, :],
           lambda F: F[None, None, 1:, None, :]]
    blocks = [dft[0](Fi) * on[1](b) * on[2](c), dft[1](Fi) * on[0](a) * on[2](c), dft[2](Fo) * on[0](a) * on[1](b)]
    return np.concatenate([blk.reshape(n**3, q * d) for blk in blocks], axis=1)


#: seeded complex Gaussian probes ``x`` of ``H x = J (J^* x)`` (:func:`jjstar_probe_error`)
JJSTAR_PROBES = 4


def jjstar_probe_error(H: np.ndarray, wa: np.ndarray, wb: np.ndarray, v: np.ndarray, rng: np.random.Generator,
                       chunk: int | None = None) -> float:
    """``max |H X - J (J^* X)| / max |J (J^* X)|`` for :data:`JJSTAR_PROBES` seeded complex Gaussian columns ``X``,
    with ``J`` the Jacobian itself (:func:`jacobian_nonzero`, built in blocks of nodes: ``r`` is a sum over the nodes,
    so node ``j``'s columns depend on node ``j`` alone).  ``H = J J^*`` iff ``H x = J J^* x`` for every ``x``; a
    matrix ``H != J J^*`` agrees on random probes with probability 0 (Freivalds), at ``O(d^4 q)`` instead of the
    ``O(d^7 q)`` of forming ``J J^*``."""
    q = wa.shape[0]
    chunk = chunk or jacobian_chunk(wa.shape[1])
    X = rng.normal(size=(len(H), JJSTAR_PROBES)) + 1j * rng.normal(size=(len(H), JJSTAR_PROBES))
    JJX = 0
    for s in range(0, q, chunk):
        J = jacobian_nonzero(wa[s:s + chunk], wb[s:s + chunk], v[s:s + chunk])
        JJX = JJX + J @ (J.conj().T @ X)
    return float(np.abs(H @ X - JJX).max() / np.abs(JJX).max())


def theorem7_estimate(d: int, widths: tuple[int, ...] = THEOREM7_WIDTHS) -> Estimate:
    """Memory and time of :func:`theorem7_check` at ``d`` (``n = (d-1)^3`` potentials): ``H`` and the formula's
    einsum temporaries (about five ``n x n`` complex arrays), a block of ``J`` (``n x 3 chunk d``), and the time of
    ``||E||_2`` (Hermitian eigenvalues, ``~ 10 n^3`` flops) and of the formula (``~ 8 n^2`` per node) at every width."""
    n = (d - 1) ** 3
    memory = 5 * 16 * n * n + 4 * 16 * n * 3 * jacobian_chunk(d) * d
    flops = len(widths) * 10.0 * n**3 + sum(widths) * (8.0 * n * n + 48.0 * n * d)
    return Estimate(f"Theorem 7's check at d = {d} ((d-1)^3 = {n} potentials)", memory, flops / STATEMENT_FLOPS)


def theorem5_estimate(d: int, q: int = 3) -> Estimate:
    """Memory and time of :func:`theorem5_check` at ``d``: the Jacobian over all ``3 d^2 (d-1)`` potentials and
    ``3 q d`` weights, ``J P`` and the einsum temporaries (about six such arrays)."""
    rows, cols = 3 * d * d * (d - 1), 3 * q * d
    return Estimate(f"Theorem 5's check at d = {d}", 6 * 16 * rows * cols, 16.0 * rows * cols * cols / STATEMENT_FLOPS)


@dataclass(frozen=True)
class OffDiagonal:
    """The normalised off-diagonal ``E = D^(-1/2) H D^(-1/2) - I`` of ``H = J J^*`` (``D = diag H``) at one width."""

    rms: float  # root mean square of |E_ij| over i != j
    largest: float  # max |E_ij|
    operator: float  # ||E||_2: the relative error of the decoupled dynamics (module docstring)
    formula_error: float  # the proof's Eq. (82)-(85) against J J^* from the Jacobian (jjstar_probe_error)


def offdiagonal(d: int, q: int, rng: np.random.Generator) -> OffDiagonal:
    """:class:`OffDiagonal` for ``H`` by the proof's formula (:func:`jjstar_formula`), weights i.i.d. standard
    normal, checked equal to ``J J^*`` with ``J`` the Jacobian itself on the same weights
    (:func:`jjstar_probe_error`)."""
    wa, wb, v = (rng.normal(size=(q, d)) for _ in range(3))
    H = jjstar_formula(wa, wb, v)
    formula_error = jjstar_probe_error(H, wa, wb, v, rng)
    dg = np.sqrt(np.real(np.diag(H)))
    E = H / np.outer(dg, dg) - np.eye(len(H))
    C = np.abs(E)
    np.fill_diagonal(C, 0.0)
    n = len(C)
    return OffDiagonal(float(np.sqrt(np.sum(C**2) / (n * n - n))), float(C.max()),
                       float(np.abs(np.linalg.eigvalsh(E)).max()), formula_error)  # E is Hermitian


def theorem7_check(d: int = DYNAMICS_D, widths: tuple[int, ...] = THEOREM7_WIDTHS) -> Check:
    """Theorem 7 (Monte-Carlo): at each width, ``H`` by the proof's formula, checked equal to ``J J^*`` with ``J`` the
    Jacobian itself (random probes, :func:`jjstar_probe_error`), and its
    normalised off-diagonal ``E``: the root mean square of ``|E_ij|`` (the stable statistic; the maximum is reported)
    and ``||E||_2``, which bounds the relative error of the decoupled dynamics ``r'_i = -H_ii conj(g_i)`` against
    ``r' = -H conj(g)`` for every ``g`` (in the ``D^(-1/2)`` norm); both must decrease at every step and decay at the
    fitted exponent ``-1/2`` within :data:`THEOREM7_EXPONENT_TOL` (``||E||_2`` at least that fast: at these widths it is
    still above its ``q^(-1/2)`` asymptote), and the formula must equal ``J J^*`` to
    :data:`THEOREM7_FORMULA_TOL`."""
    rng = np.random.default_rng(SEED)
    stats = [offdiagonal(d, q, rng) for q in widths]
    logq = np.log(widths)
    slope = float(np.polyfit(logq, np.log([s.rms for s in stats]), 1)[0])
    op_slope = float(np.polyfit(logq, np.log([s.operator for s in stats]), 1)[0])
    formula = max(s.formula_error for s in stats)
    err = max(abs(slope + 0.5), op_slope + 0.5)  # ||E||_2 may decay faster than q^(-1/2), not slower
    decreasing = all(b.rms < a.rms and b.operator < a.operator for a, b in zip(stats, stats[1:], strict=False))
    ok = err <= THEOREM7_EXPONENT_TOL and decreasing and formula <= THEOREM7_FORMULA_TOL
    return Check(name="Thm 7: J J* -> diagonal", expected=-0.5, measured=slope, tolerance=THEOREM7_EXPONENT_TOL,
                 passed=ok, exactness="float",
                 detail=f"Monte-Carlo, d = {d}, seed {SEED}; H over r[k1,k2,k] (k's != 0) by the proof's formula, "
                        f"checked against J (J* x) with J = dr/dW itself on {JJSTAR_PROBES} random probes x; "
                        f"E = D^-1/2 H D^-1/2 - I; per width q: rms |E_ij| (max), ||E||_2: "
                        + ", ".join(f"q={q}: {s.rms:.3g} ({s.largest:.3g}), {s.operator:.3g}"
                                    for q, s in zip(widths, stats, strict=True))
                        + f"; fitted exponents: rms {slope:.3f}, ||E||_2 {op_slope:.3f} (worst error {err:.3f} vs "
                          f"-1/2); both decrease at every step: {decreasing}; H x vs J (J* x): "
                          f"max relative deviation {formula:.1e} (tolerance {THEOREM7_FORMULA_TOL:.0e})",
                 statement="Theorem 7: with i.i.d. Gaussian weights J J* (over r_k1k2k) tends to a diagonal matrix "
                           "as the width q -> infinity, so the dynamics of the r_k1k2k decouple (||E||_2, the relative "
                           "error of the decoupled dynamics, -> 0); the rate q^(-1/2) is this package's reading (the "
                           "central-limit rate of a sum of q independent mean-zero terms), not the paper's statement")


def dynamics_checks(d: int, max_memory: float | None, max_seconds: float | None) -> list[Check]:
    """Theorems 5, 6 and 7 at the task's ``d``.  Theorems 5 and 7 are first estimated
    (:func:`theorem5_estimate`, :func:`theorem7_estimate`); one whose estimate exceeds the budget is reported as a
    refused row (informational: it decides nothing, and says what it would need) rather than run at another ``d``."""
    from margintheory.errors import RefusedError
    from margintheory.runtime.budget import require

    def budgeted(check: Callable[[int], Check], estimate: Callable[[int], Estimate], name: str,
                 statement: str) -> Check:
        try:
            require(estimate(d), max_memory, max_seconds)
        except RefusedError as exc:
            return Check(name=name, expected="run at d", measured="refused", tolerance=None, passed=False,
                         exactness="float", informational=True,
                         detail=f"not run: {exc} (it is not run at another d instead)", statement=statement)
        return check(d)

    rows = [budgeted(theorem5_check, theorem5_estimate, "Thm 5: r' = -J J* grad l",
                     "Theorem 5: r' = -J J* conj(grad_r l)"),
            theorem6_check(d), *theorem6_outside_lemma1_checks(d),
            budgeted(theorem7_check, theorem7_estimate, "Thm 7: J J* -> diagonal",
                     "Theorem 7: J J* tends to a diagonal matrix as the width grows")]
    return rows
