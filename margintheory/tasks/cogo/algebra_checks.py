"""The algebra of Tian's CoGO (arXiv:2410.01779) checked on seeded random weights and on Table 1: Theorem 1's
loss formula against a forward pass, Theorem 3 (the potentials are ring homomorphisms of the semi-ring of
Theorem 2), and Table 1's generators with Theorem 4's maximal polynomials.  Theory: docs/theory.md#cogo.
"""

from __future__ import annotations

import numpy as np

from margintheory.core.checks import Check, bool_check
from margintheory.core.network import PolyNetwork
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import A, B, Z, forward_loss, from_network, r_abc, r_pp, theorem1_loss
from margintheory.tasks.cogo.lemma1_checks import ZERO_TOL

SEED = 0


def theorem1_loss_check(loss_formula: float, loss_forward: float, detail: str = "", informational: bool = False,
                        *, statement: str) -> Check:
    """Theorem 1 of Tian (CoGO): the loss computed from the Fourier coefficients ``z`` equals the forward pass's
    loss, to ``ZERO_TOL`` relative to ``1 + loss``: Theorem 1's value is the expected one (the claim), the forward
    pass's the measured one."""
    return Check(name="Thm 1 loss = forward pass", expected=loss_formula, measured=loss_forward, tolerance=ZERO_TOL,
                 passed=abs(loss_formula - loss_forward) <= ZERO_TOL * (1 + loss_forward), exactness="float",
                 detail=detail, informational=informational, statement=statement)


def algebra_checks(d: int) -> tuple[list[Check], dict]:
    """Theorem 1 on seeded random zero-mean weights; Theorem 3 (homomorphism); Table 1 and Theorem 4 (the
    ``u_nu`` row at the generic ``nu = e^{0.2 pi i}``)."""
    rng = np.random.default_rng(SEED)
    q = 5
    U = rng.normal(size=(q, 2, d))
    U -= U.mean(axis=2, keepdims=True)
    net = PolyNetwork(U, rng.normal(size=(q, d)))
    z = from_network(net)
    lt, fl = theorem1_loss(z).total, forward_loss(net)
    U2 = U + 0.3  # non-zero mean: outside Theorem 1's assumption, reported only
    fl2 = forward_loss(PolyNetwork(U2, net.W))
    lt2 = theorem1_loss(from_network(PolyNetwork(U2, net.W))).total
    z1 = Z(rng.normal(size=(3, d, 3)) + 1j * rng.normal(size=(3, d, 3)))
    z2 = Z(rng.normal(size=(3, d, 2)) + 1j * rng.normal(size=(3, d, 2)))
    hom = 0.0
    for f in (r_abc, lambda x: r_pp(x, A), lambda x: r_pp(x, B)):
        f1, f2 = f(z1), f(z2)
        scale = float(np.abs(f1).max() * np.abs(f2).max())
        hom = max(
            hom,
            float(np.abs(f(z1 + z2) - f1 - f2).max()) / scale,
            float(np.abs(f(z1 * z2) - f1 * f2).max()) / scale,
        )
    checks = [
        theorem1_loss_check(lt, fl, statement="Theorem 1 loss = forward pass (random zero-mean weights, seed 0)"),
        Check(name="Thm 1, non-zero-mean weights", expected=fl2, measured=lt2, tolerance=ZERO_TOL,
              passed=abs(lt2 - fl2) <= ZERO_TOL * (1 + fl2), exactness="float", detail=f"difference {lt2 - fl2:.6g}",
              informational=True, statement="Theorem 1 with non-zero-mean input weights (outside its assumption)"),
        Check(name="Thm 3: r is a ring map", expected=0.0, measured=hom, tolerance=ZERO_TOL, passed=hom <= ZERO_TOL,
              exactness="float", detail="max relative error over all potentials",
              statement="Theorem 3: r(z1 + z2) = r(z1) + r(z2), r(z1 * z2) = r(z1) r(z2) (random complex z)"),
    ]
    table, tfields = table1_checks(d, cc.DEFAULT_NU)
    return checks + table, {"theorem1_random": {"forward": fl, "formula": lt}, **tfields}


def table1_checks(d: int, nu: complex) -> tuple[list[Check], dict]:
    """Table 1 rows: stated potentials (informational where they differ) and Theorem 4's polynomial."""
    stated = cc.table1_stated(nu)
    checks, rows = [], {}
    mismatches = {}
    for name, (values, order) in stated.items():
        u = cc.generator(d, 1, name, nu)
        got = cc.single_frequency_mps(u, 1)
        bad = [i for i in range(9) if abs(got[i] - values[i]) > 1e-9]
        if bad:
            mismatches[name] = {
                cc.MP_NAMES[i]: {"stated": complex(values[i]), "computed": complex(got[i])} for i in bad
            }
        rho, roots = cc.maximal_polynomial(u, 1)
        before = cc.all_single_frequency_values(u, 1)
        after = cc.all_single_frequency_values(rho, 1)
        ones = np.abs(before - 1) <= cc.ROOT_TOL
        zeroed = float(np.abs(after[~ones]).max()) if (~ones).any() else 0.0
        const = float(np.ptp(np.abs(after[ones]))) if ones.any() else 0.0
        rows[name] = {
            "order": rho.order,
            "roots": [complex(r) for r in roots],
            "r_kkk": complex(r_abc(rho)[1, 1, 1]),
        }
        if order is not None:
            ok = rho.order == order and zeroed <= ZERO_TOL
            checks.append(
                Check(name=f"Table 1 {name}: rho(u) (Thm 4)", expected=order, measured=rho.order, tolerance=ZERO_TOL,
                      passed=ok, exactness="float",
                      detail=f"max |potential in R| after rho: {zeroed:.3e}; 1-set spread {const:.3e}",
                      statement=f"Table 1 {name}: rho(u) has order {order} and zeroes every potential != 1 (Theorem 4)")
            )
    checks.append(
        bool_check(
            "Table 1 potentials",
            not mismatches,
            exactness="float",
            tolerance=1e-9,
            informational=True,
            detail="; ".join(
                f"{n}: "
                + ", ".join(
                    f"{k} stated {v['stated']:.4g} computed {v['computed']:.4g}" for k, v in mm.items()
                )
                for n, mm in mismatches.items()
            )
            + (
                f" (nu = {nu:.4g}; the computed values are the conjugates: a typo nu <-> conj nu)"
                if mismatches
                else ""
            ),
            statement="Table 1: stated potentials match the computed ones")
    )
    return checks, {"table1": rows, "table1_mismatches": mismatches}
