"""Two statements of Morwani et al. (arXiv:2311.07568) about the group Fourier basis, checked numerically on the
computed real orthogonal irreps (docs/theory.md#lemma-d11, #group-fourier-identity).

* **Lemma D.11 on random neurons.**  For neurons ``u, v, w`` and class masses ``pi`` (``tau_c = pi_C / |C|``), the
  class-weighted margin ``E_(a,b)[(u(a) + v(b))^2 (w(ab) - sum_(c != ab) tau_c w(c))]`` evaluated from its definition
  (all ``|G|^2`` pairs) against the corrected closed form ``sum_R 2 lam_R tr(alpha_R beta_R gamma_R^T) / d_R^2``,
  ``lam_R = 1 - sum_C pi_C chi_R(C) / d_R``, ``alpha_R = (d_R / |G|) (R(g)_ij)_g^T u`` (Lemma D.10).  The printed
  lemma has no factor 2; the measured ratio definition / printed form is reported.
* **Appendix D.9.1's identity.**  For ``f_2(a, b, c) = lam 1[ab = c]`` the transform
  ``f_2^(j, k, l) = lam sum_(a,b) rho_j(a) rho_k(b) rho_l(ab)`` equals ``lam |G|^2 / d_R^2`` when ``rho_j, rho_k,
  rho_l`` are entries ``(i_1, m), (m, i_2), (i_1, i_2)`` of one irrep ``R`` and 0 otherwise, computed from the group
  table (every ``l`` for ``|G| <= 24``, one seeded ``l`` per irrep above).  The paper adds "or ``j = k'`` and
  ``k = j'``" (the swapped pair); its measured size is reported.
"""

from __future__ import annotations

import numpy as np

from margintheory.core.checks import Check
from margintheory.core.groups import FiniteGroup
from margintheory.core.representations import Irrep, basis_vectors

D11_TOL = 1e-10
D91_TOL = 1e-10
SEED = 0
D11_TRIALS = 4
#: every column l of the transform is checked up to this order, one per irrep above it
D91_ALL_UP_TO = 24


def weighted_margin_direct(G: FiniteGroup, u: np.ndarray, v: np.ndarray, w: np.ndarray, pi: np.ndarray) -> float:
    """The class-weighted margin of one neuron from its definition (module docstring), ``pi`` over the non-trivial
    classes."""
    cls = G.class_index()
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    tau = np.concatenate([[0.0], pi])[cls] / sizes[cls]  # tau_x for x = (ab)^-1 c; 0 at the identity
    shifted = w[G.mul] @ tau  # shifted[g] = sum_x tau_x w(g x)
    Z = (u[:, None] + v[None, :]) ** 2
    return float(np.mean(Z * (w[G.mul] - shifted[G.mul])))


def weighted_margin_d11(irreps: list[Irrep], X: np.ndarray, u: np.ndarray, v: np.ndarray, w: np.ndarray,
                        pi: np.ndarray, factor: float = 2.0) -> tuple[float, float]:
    """``(sum_R factor lam_R tr(alpha beta gamma^T) / d_R^2, sum of the terms' absolute values)``."""
    order = len(u)
    total, scale = 0.0, 0.0
    for r, R in enumerate(irreps):  # the trivial irrep too: its lam = 1 - sum pi is 0
        d = R.dim
        B = R.mats.reshape(order, d * d)
        a, b, c = ((d / order) * (B.T @ x).reshape(d, d) for x in (u, v, w))
        lam = 1.0 - float(pi @ X[r, 1:]) / d
        term = factor * lam * float(np.sum((a @ b) * c)) / d**2
        total += term
        scale += abs(term)
    return total, scale


def lemma_d11_check(G: FiniteGroup, irreps: list[Irrep], X: np.ndarray, trials: int = D11_TRIALS,
                    seed: int = SEED) -> Check:
    """Lemma D.11 (factor 2) on ``trials`` random neurons and random class masses (seeded)."""
    rng = np.random.default_rng(seed)
    worst, ratios = 0.0, []
    for _ in range(trials):
        u, v, w = rng.normal(size=(3, G.order))
        pi = rng.dirichlet(np.ones(X.shape[1] - 1))
        direct = weighted_margin_direct(G, u, v, w, pi)
        formula, scale = weighted_margin_d11(irreps, X, u, v, w, pi)
        worst = max(worst, abs(direct - formula) / max(scale, 1e-300))
        printed, _ = weighted_margin_d11(irreps, X, u, v, w, pi, factor=1.0)
        ratios.append(direct / printed)
    return Check(name="D.11 on random neurons", expected=0.0, measured=worst, tolerance=D11_TOL,
                 passed=worst <= D11_TOL, exactness="float",
                 detail=f"{trials} random (u, v, w, pi), seed {seed}; |definition - sum_R 2 lam_R tr(a b c^T)/d^2| "
                        f"relative to the sum of |terms|; definition / printed form (no factor 2) = "
                        f"{min(ratios):.12g}..{max(ratios):.12g}",
                 statement="Lemma D.11 (with the cross-term factor 2): weighted margin = sum_R 2 lam_R "
                           "tr(alpha_R beta_R gamma_R^T)/d_R^2, on random neurons")


def _columns_to_check(irreps: list[Irrep], order: int, seed: int) -> list[int]:
    if order <= D91_ALL_UP_TO:
        return list(range(order))
    rng = np.random.default_rng(seed)
    out, start = [], 0
    for R in irreps:
        out.append(start + int(rng.integers(R.dim**2)))
        start += R.dim**2
    return out


def _predicted_d91(irreps: list[Irrep], l_col: int, order: int, lam: float) -> tuple[np.ndarray, list[tuple]]:
    """The predicted transform for column ``l`` and the swapped positions the paper also names."""
    start = 0
    for R in irreps:
        d = R.dim
        if l_col < start + d * d:
            i1, i2 = divmod(l_col - start, d)
            P = np.zeros((order, order))
            swapped = []
            for m in range(d):
                j, k = start + i1 * d + m, start + m * d + i2
                P[j, k] = lam * order**2 / d**2
                swapped.append((k, j))
            return P, [s for s in swapped if P[s] == 0]
        start += d * d
    raise IndexError(l_col)


def fourier_identity_d91(G: FiniteGroup, irreps: list[Irrep], lam: float = 1.0,
                         seed: int = SEED) -> tuple[float, float, int]:
    """``(max |f_2^ - predicted| / (lam |G|^2 / d^2), max |f_2^ at the swapped pairs| / same, columns checked)``."""
    B, owner = basis_vectors(irreps)
    worst, swapped_worst = 0.0, 0.0
    cols = _columns_to_check(irreps, G.order, seed)
    for col in cols:
        M = lam * B[G.mul, col]  # M[a, b] = lam rho_l(ab)
        F = B.T @ M @ B
        P, swapped = _predicted_d91(irreps, col, G.order, lam)
        unit = lam * G.order**2 / irreps[owner[col]].dim ** 2
        worst = max(worst, float(np.abs(F - P).max()) / unit)
        if swapped:
            swapped_worst = max(swapped_worst, max(abs(float(F[s])) for s in swapped) / unit)
    return worst, swapped_worst, len(cols)


def d91_check(G: FiniteGroup, irreps: list[Irrep]) -> Check:
    """The identity of Appendix D.9.1 (module docstring) as a row."""
    worst, swapped, ncols = fourier_identity_d91(G, irreps)
    how = "every column l" if ncols == G.order else f"one seeded column l per irrep ({ncols}, seed {SEED})"
    return Check(name="D.9.1: f2^ = lam|G|^2/d^2", expected=0.0, measured=worst, tolerance=D91_TOL,
                 passed=worst <= D91_TOL, exactness="float",
                 detail=f"{how}: max |f2^ - lam |G|^2/d^2 at j = (i1, m), k = (m, i2), 0 elsewhere|, relative to "
                        f"lam |G|^2/d^2; at the paper's swapped pairs j = (m, i2), k = (i1, m) the transform is "
                        f"{swapped:.3g} of that value",
                 statement="App. D.9.1: f2 = lam 1[ab = c] has f2^(j, k, l) = lam |G|^2/d_R^2 exactly on "
                           "j = (i1, m), k = (m, i2), l = (i1, i2) within one irrep, 0 elsewhere")
