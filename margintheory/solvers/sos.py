"""Certified upper bounds for ``max_{|y| = 1} F(y)`` by a sum-of-squares (Lasserre / Putinar) relaxation in cvxpy.

Relaxation (degree ``2h``, ``h = ceil(deg F / 2)``):

* ``F`` a form of even degree ``d``: ``minimise gamma`` s.t. ``gamma |y|^d - F(y) = m(y)^T Q m(y)``,
  ``Q >= 0``, ``m`` = the monomials of degree ``d/2`` (a certificate of ``F <= gamma |y|^d``);
* otherwise: ``gamma - F(y) = m(y)^T Q m(y) + lambda(y) (1 - |y|^2)``, ``m`` = monomials of degree ``<= h``,
  ``lambda`` a free polynomial of degree ``2h - 2`` (Putinar certificate on the sphere).

The bound is **not** the solver's ``gamma`` itself.  With the returned ``Q`` (and ``lambda``) the float64 remainder
``r = gamma a - F - m^T Q m - lambda (1 - |y|^2)`` is computed coefficient-wise; on the unit sphere
``|y^beta| <= 1`` and ``|m(y)|^2 <= L`` (``L`` = number of degree levels of ``m``, since
``sum_{|alpha| = j} y^(2 alpha) <= |y|^(2j)``), hence for every unit ``y``

    ``F(y) <= gamma + L max(0, -lambda_min(Q)) + |r|_1 + (rounding of r, of lambda_min and of the expansion of F)``.

That right-hand side is the certified bound (float64 a-priori rounding bounds, not interval arithmetic).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sps

from margintheory.errors import SolverError
from margintheory.runtime.process import load_native_imports
from margintheory.solvers.polynomial import Polynomial, monomials_of_degree, monomials_up_to, norm_power

EPS = float(np.finfo(np.float64).eps)
ACCEPTED_STATUS = ("optimal", "optimal_inaccurate")


@dataclass(frozen=True)
class SOSBound:
    """A certified upper bound on ``max_{|y|=1} F(y)`` and how it was obtained."""

    bound: float
    solver_value: float
    safety_margin: float
    residual_l1: float
    min_eigenvalue: float
    status: str
    solver: str
    seconds: float
    gram_size: int
    n_equations: int

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class _Relaxation:
    basis: np.ndarray
    levels: int
    A_Q: sps.csr_matrix
    A_lam: sps.csr_matrix | None
    a_gamma: np.ndarray
    f: np.ndarray


def _build(poly: Polynomial) -> _Relaxation:
    """Coefficient-matching equations ``a_gamma gamma - f = A_Q vec(Q) + A_lam lambda`` over all monomials."""
    n, d = poly.nvars, poly.degree
    degs = poly.exps.sum(axis=1)
    homogeneous_even = d % 2 == 0 and bool(np.all(degs == d))
    h = math.ceil(d / 2)
    if homogeneous_even:
        basis, levels = monomials_of_degree(n, h), 1
        gamma_poly, mult = norm_power(n, h), None
    else:
        basis, levels = monomials_up_to(n, h), h + 1
        gamma_poly = Polynomial(np.zeros((1, n), dtype=np.int64), np.ones(1))
        mult = monomials_up_to(n, 2 * h - 2)
    s = len(basis)
    pairs = (basis[:, None, :] + basis[None, :, :]).reshape(-1, n)
    blocks = [pairs, poly.exps, gamma_poly.exps]
    if mult is not None:
        shifted = (mult[:, None, :] + 2 * np.eye(n, dtype=np.int64)[None, :, :]).reshape(-1, n)
        blocks += [mult, shifted]
    table, inv = np.unique(np.concatenate(blocks), axis=0, return_inverse=True)
    inv = inv.ravel()
    N = len(table)
    cut = np.cumsum([len(b) for b in blocks])
    A_Q = sps.csr_matrix((np.ones(s * s), (inv[: cut[0]], np.arange(s * s))), shape=(N, s * s))
    f = np.zeros(N)
    np.add.at(f, inv[cut[0]: cut[1]], poly.coeffs)
    a_gamma = np.zeros(N)
    np.add.at(a_gamma, inv[cut[1]: cut[2]], gamma_poly.coeffs)
    A_lam = None
    if mult is not None:
        nm = len(mult)
        rows = np.concatenate([inv[cut[2]: cut[3]], inv[cut[3]: cut[4]]])
        cols = np.concatenate([np.arange(nm), np.repeat(np.arange(nm), n)])
        vals = np.concatenate([np.ones(nm), -np.ones(nm * n)])
        A_lam = sps.csr_matrix((vals, (rows, cols)), shape=(N, nm))
    return _Relaxation(basis, levels, A_Q, A_lam, a_gamma, f)


def _solve(rel: _Relaxation, solver: str, time_limit: float | None, verbose: bool):
    import cvxpy as cp

    s = len(rel.basis)
    Q = cp.Variable((s, s), PSD=True)
    gamma = cp.Variable()
    rhs = rel.A_Q @ cp.vec(Q, order="F")
    lam = None
    if rel.A_lam is not None:
        lam = cp.Variable(rel.A_lam.shape[1])
        rhs = rhs + rel.A_lam @ lam
    prob = cp.Problem(cp.Minimize(gamma), [rel.a_gamma * gamma - rel.f == rhs])
    opts: dict[str, object] = {}
    if solver == "CLARABEL":
        opts = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 400}
        if time_limit is not None:
            opts["time_limit"] = float(time_limit)
    elif solver == "SCS":
        opts = {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iters": 200000}
        if time_limit is not None:
            opts["time_limit_secs"] = float(time_limit)
    if solver not in cp.installed_solvers():
        raise SolverError(f"SOS relaxation: solver {solver} is not installed (installed: {cp.installed_solvers()})")
    try:
        with warnings.catch_warnings():  # the status is checked below; the residuals enter the bound
            warnings.simplefilter("ignore")
            load_native_imports()  # (a signal must not land inside the native solve's imports)
            prob.solve(solver=solver, verbose=verbose, **opts)
    except (cp.error.SolverError, ValueError) as exc:  # ValueError: cvxpy on an UNKNOWN status
        raise SolverError(f"SOS relaxation: {solver} failed ({exc})") from None
    status = str(prob.status)
    if status not in ACCEPTED_STATUS or gamma.value is None or Q.value is None:
        raise SolverError(f"SOS relaxation: {solver} returned status {status!r}; no certified bound")
    lam_val = None if lam is None else np.asarray(lam.value, dtype=float)
    return float(gamma.value), np.asarray(Q.value, dtype=float), lam_val, status


def _certify(rel: _Relaxation, gamma: float, Q: np.ndarray, lam: np.ndarray | None, f_error: float):
    """The a-posteriori bound of the module docstring, from the solver's point ``(gamma, Q, lambda)``."""
    Q = 0.5 * (Q + Q.T)
    q = Q.ravel(order="F")
    r = rel.a_gamma * gamma - rel.f - rel.A_Q @ q
    mag = np.abs(rel.a_gamma) * abs(gamma) + np.abs(rel.f) + abs(rel.A_Q) @ np.abs(q)
    nnz = np.diff(rel.A_Q.indptr)
    if rel.A_lam is not None and lam is not None:
        r -= rel.A_lam @ lam
        mag += abs(rel.A_lam) @ np.abs(lam)
        nnz = nnz + np.diff(rel.A_lam.indptr)
    rounding = float(np.sum((nnz + 3) * EPS * mag))
    s = Q.shape[0]
    eig = float(np.linalg.eigvalsh(Q)[0])
    eig_err = s * EPS * float(np.abs(Q).sum(axis=1).max())
    residual = float(np.abs(r).sum())
    safety = rel.levels * (max(0.0, -eig) + eig_err) + residual + rounding + f_error
    return gamma + safety, safety, residual, eig


def sphere_max_upper_bound(poly: Polynomial, *, scale: float | None = None, solver: str = "CLARABEL",
                           time_limit: float | None = None, coefficient_error: float = 0.0,
                           verbose: bool = False) -> SOSBound:
    """Certified upper bound on ``max_{|y| = 1} poly(y)`` (module docstring).

    ``scale``: a positive number of the order of the optimum (e.g. a lower bound); the polynomial is divided by
    the nearest power of two (exact in floating point) so that the solver works at unit scale.
    ``coefficient_error``: an a-priori bound on ``sum |error|`` of ``poly``'s coefficients, added to the bound.
    """
    if scale is None or not (scale > 0 and math.isfinite(scale)):
        scale = float(np.abs(poly.coeffs).max(initial=0.0)) or 1.0
    two = 2.0 ** round(math.log2(scale))
    scaled = Polynomial(poly.exps, poly.coeffs / two)
    t0 = time.perf_counter()
    rel = _build(scaled)
    gamma, Q, lam, status = _solve(rel, solver, time_limit, verbose)
    bound, safety, residual, eig = _certify(rel, gamma, Q, lam, coefficient_error / two)
    seconds = time.perf_counter() - t0
    return SOSBound(bound * two, gamma * two, safety * two, residual * two, eig * two, status, solver, seconds,
                    len(rel.basis), len(rel.f))
