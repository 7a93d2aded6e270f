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

import numpy as np

from margintheory.core.checks import Check
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import Z, forward_loss, r_abc, to_network
from margintheory.tasks.cogo.lemma1_checks import ZERO_TOL
from margintheory.tasks.cogo.semiring_checks import random_unit

SEED = 0
#: widths of the Monte-Carlo estimate of Theorem 7 and the tolerance on the fitted decay exponent
THEOREM7_WIDTHS = (256, 1024, 4096, 16384)
THEOREM7_EXPONENT_TOL = 0.1
#: the dynamics checks run at this ``d`` (Theorems 5 and 7 hold for every ``d``; the Jacobian has ``3 d^2 (d-1)``
#: rows, so the task's ``d`` is capped here)
DYNAMICS_D = 5


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


def theorem6_path(d: int, ts: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """Theorem 6's path from ``e * z'`` to ``z = y * z'`` (``z' = z_F6``, ``y`` a seeded order-2 unit): the loss at
    each ``t``, the smallest ``|r[k,k,k]|`` of the un-normalised ``(1-t) e + t y`` over the grid, and the squared
    norms of ``e * z'`` and ``y * z'``."""
    rng = np.random.default_rng(SEED)
    zp = cc.build_f6(d, variant="paper" if d % 2 else "corrected").z
    e = np.zeros((3, d, 2), dtype=complex)
    e[:, :, 0] = 1
    y = 0.7 * e + 0.3 * (random_unit(d, rng).z @ np.ones((1, 2)))  # order 2, not yet a unit
    y = _normalize_units(Z(y), d).z
    losses, smallest = [], np.inf
    for t in ts:
        yt = Z((1 - t) * e + t * y)
        ks = np.arange(1, d)
        smallest = min(smallest, float(np.abs(r_abc(yt)[ks, ks, ks]).min()))
        losses.append(forward_loss(to_network(_normalize_units(yt, d) * zp)[0]))
    norms = [float(np.sum(np.abs((Z(x) * zp).z) ** 2)) for x in (e, y)]
    return np.array(losses), smallest, norms[0], norms[1]


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
    losses, smallest, n0, n1 = theorem6_path(d, ts)
    worst = float(losses.max())
    ok = worst <= ZERO_TOL and smallest > 0.1 and n0 <= n1
    return Check(name="Thm 6: zero-loss path", expected=0.0, measured=worst, tolerance=ZERO_TOL, passed=ok,
                 exactness="float",
                 detail=f"z' = z_F6 (d = {d}), y a seeded order-2 unit; max loss over t = 0, 0.1, ..., 1 of "
                        f"y(t) * z'; min |r_kkk((1-t) e + t y)| {smallest:.3g} (> 0: the renormalisation exists); "
                        f"||e * z'||^2 = {n0:.6g} <= ||y * z'||^2 = {n1:.6g}",
                 statement="Theorem 6: a path of zero loss in Z_q joins e * z' (= z' with zero nodes) and "
                           "z = y * z'; the lower-order end has the smaller L2 norm")


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


def offdiagonal_ratio(d: int, q: int, rng: np.random.Generator) -> tuple[float, float]:
    """Root-mean-square and maximum over ``i != j`` of ``|H_ij| / sqrt(H_ii H_jj)`` for ``H = J J^*`` over
    ``r[k1,k2,k]`` (all ``k != 0``), weights i.i.d. standard normal (:func:`jjstar_formula`)."""
    wa, wb, v = (rng.normal(size=(q, d)) for _ in range(3))
    H = jjstar_formula(wa, wb, v)
    dg = np.sqrt(np.real(np.diag(H)))
    C = np.abs(H) / np.outer(dg, dg)
    np.fill_diagonal(C, 0.0)
    n = len(C)
    return float(np.sqrt(np.sum(C**2) / (n * n - n))), float(C.max())


def theorem7_check(d: int = DYNAMICS_D) -> Check:
    """Theorem 7 (Monte-Carlo): the normalised off-diagonal of ``J J^*`` at the widths :data:`THEOREM7_WIDTHS`
    (root mean square, the stable statistic; the maximum is reported), and the fitted exponent of its decay."""
    rng = np.random.default_rng(SEED)
    stats = np.array([offdiagonal_ratio(d, q, rng) for q in THEOREM7_WIDTHS])
    slope = float(np.polyfit(np.log(THEOREM7_WIDTHS), np.log(stats[:, 0]), 1)[0])
    err = abs(slope + 0.5)
    return Check(name="Thm 7: J J* -> diagonal", expected=-0.5, measured=slope, tolerance=THEOREM7_EXPONENT_TOL,
                 passed=err <= THEOREM7_EXPONENT_TOL, exactness="float",
                 detail=f"Monte-Carlo, d = {d}, seed {SEED}: normalised off-diagonal |H_ij|/sqrt(H_ii H_jj), rms (max) "
                        + ", ".join(f"q={q}: {r:.3g} ({m:.3g})" for q, (r, m) in zip(THEOREM7_WIDTHS, stats,
                                                                                   strict=True))
                        + f"; fitted exponent of the rms {slope:.3f} (error {err:.3f} vs -1/2)",
                 statement="Theorem 7: with i.i.d. Gaussian weights J J* (over r_k1k2k) tends to a diagonal matrix "
                           "as the width q -> infinity, at the rate q^(-1/2)")
