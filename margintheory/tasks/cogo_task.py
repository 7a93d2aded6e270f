"""The ``cogo`` task: CoGO's zero-loss constructions (Tian, arXiv:2410.01779), tied to the max margin.

Theory: docs/theory.md#cogo.

Per construction: real weights (Hermitian ``z``), order (number of nodes) vs the paper, Theorem 1's loss
formula vs a direct forward pass, the 0/1-sets of Lemma 1 (``R_g`` = 1; ``R_c``, ``R_n``, ``R_*`` = 0), the
loss; where the paper's literal formula does not give zero loss, the computed loss and the corrected
construction; then the ``L_{2,3}``-normalized margin against ``gamma*(d, 2)`` and the core max-margin checks
(informational: neither paper claims a relation).  Every run also checks the algebra on seeded random weights
(Theorem 1, Theorem 3) and Table 1 (its stated potentials and the order of Theorem 4's maximal polynomial).
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from margintheory import theory
from margintheory.checks import Check, VerificationResult, bool_check
from margintheory.errors import InputError, RefusedError
from margintheory.margins import DEFAULT_MAX_MEMORY
from margintheory.network import PolyNetwork
from margintheory.tasks import cogo_constructions as cc
from margintheory.tasks.cogo_algebra import (
    A,
    B,
    Z,
    forward_loss,
    from_network,
    r_abc,
    r_pp,
    r_star,
    theorem1_loss,
    to_network,
)
from margintheory.verification import verify_network

ZERO_TOL = 1e-10
SEED = 0
MAX_D = 64


def potential_sets(z: Z) -> dict[str, float]:
    """Largest deviations from Lemma 1's 0/1-sets (frequencies ``!= 0``) and from the weaker summed
    conditions."""
    d = z.d
    ks = np.arange(1, d)
    R = r_abc(z)
    diag = R[ks, ks, ks]
    off = R[np.ix_(ks, ks, ks)].copy()
    off[np.arange(d - 1), np.arange(d - 1), np.arange(d - 1)] = 0
    neg = (-np.arange(d)) % d
    rn = max(float(np.abs(r_pp(z, p)[np.arange(d), neg][:, ks]).max()) for p in (A, B))
    # R_*: r_p[k', m-k', k] for m != 0, i.e. k2 != -k1
    rs = 0.0
    for p in (A, B):
        T = r_pp(z, p)[:, :, ks]
        mask = (np.arange(d)[:, None] + np.arange(d)[None, :]) % d != 0
        rs = max(rs, float(np.abs(T[mask]).max()))
    SA, SB = r_star(z, A), r_star(z, B)
    return {
        "R_g": float(np.abs(diag - 1).max()),
        "R_c": float(np.abs(off).max()),
        "R_n": rn,
        "R_*": rs,
        "R_n_summed": float(np.abs(SA[0, ks] + SB[0, ks]).max()),
        "R_*_summed": float(max(np.abs(SA[1:, ks]).max(), np.abs(SB[1:, ks]).max())),
    }


CLAIMS = {  # which of Lemma 1's sets the paper claims for each construction (True: 0-set / 1-set holds)
    "F6": {"R_g": True, "R_c": True, "R_n": True, "R_*": True, "zero_loss": True},
    "memorize": {"R_g": True, "R_c": True, "R_n": True, "R_*": True, "zero_loss": True},
    "F4": {"R_g": True, "R_c": True, "R_n": False, "R_*": True, "zero_loss": None},
    "F46": {"R_g": True, "R_c": True, "R_n": False, "R_*": True, "R_n_summed": True, "zero_loss": True},
}
SET_LABELS = {
    "R_g": "r(k,k,k) = 1 (1-set R_g)",
    "R_c": "r(k1,k2,k) = 0 unless k1=k2=k (0-set R_c)",
    "R_n": "r_p(k',-k',k) = 0 (0-set R_n)",
    "R_*": "r_p(k',m-k',k) = 0, m != 0 (0-set R_*)",
    "R_n_summed": "sum_p sum_k' r_p(k',-k',k) = 0 (Corollary 5's weaker condition)",
}


def loss_decomposition(z: Z) -> dict[str, float]:
    """Theorem 1 regrouped into non-negative parts (for Hermitian ``z``, ``r[-k,-k,-k] = conj r[k,k,k]``):
    ``loss = d^-1 sum_k |1 - r[k,k,k]|^2 + d^-1 sum_k sum_{(k1,k2) != (k,k)} |r[k1,k2,k]|^2 + R_n + R_*``."""
    d = z.d
    ks = np.arange(1, d)
    R = r_abc(z)
    diag = R[ks, ks, ks]
    lt = theorem1_loss(z)
    fit = float(np.sum(np.abs(1 - diag) ** 2)) / d
    off = lt.cross - float(np.sum(np.abs(diag) ** 2)) / d
    return {"R_g deficit": fit, "R_c (off-diagonal)": max(off, 0.0), "R_n": lt.r_n, "R_*": lt.r_star}


def explain_loss(parts: dict[str, float], tol: float = ZERO_TOL) -> str:
    """Which parts of :func:`loss_decomposition` carry the loss."""
    nz = [f"{k} {v:.6g}" for k, v in parts.items() if v > tol]
    return "loss = " + (" + ".join(nz) if nz else "0")


def construction_checks(con: cc.Construction, informational: bool = False) -> tuple[list[Check], dict]:
    """Hermitian, order, Theorem 1 vs forward pass, the claimed 0/1-sets and the loss of one construction."""
    z = con.z
    tag = f"{con.name} ({con.variant})"
    net, imag = to_network(z)
    herm = z.hermitian_error()
    lt = theorem1_loss(z)
    fl = forward_loss(net)
    sets = potential_sets(z)
    parts = loss_decomposition(z)
    claims = CLAIMS[con.name]
    checks = [
        Check(
            f"{tag}: weights real (Hermitian z)",
            0.0,
            herm,
            ZERO_TOL,
            herm <= ZERO_TOL,
            "float",
            f"max imaginary part of the real weights {imag:.3e}",
            informational,
        ),
        Check(
            f"{tag}: Theorem 1 loss = forward-pass loss",
            fl,
            lt.total,
            ZERO_TOL,
            abs(lt.total - fl) <= ZERO_TOL * (1 + abs(fl)),
            "float",
            "absolute difference relative to 1 + loss",
            informational,
        ),
    ]
    if con.claimed_order is not None:
        checks.append(
            Check(
                f"{tag}: order (hidden nodes) = paper's",
                con.claimed_order,
                z.order,
                None,
                z.order == con.claimed_order,
                "proved",
                "",
                informational,
            )
        )
    for key, claim in claims.items():
        if key == "zero_loss":
            continue
        val = sets[key]
        holds = val <= ZERO_TOL
        checks.append(
            Check(
                f"{tag}: {SET_LABELS[key]}" + ("" if claim else " fails, as the paper says"),
                0.0 if claim else "> 0",
                val,
                ZERO_TOL,
                holds == claim,
                "float",
                "max deviation over non-zero frequencies",
                informational,
            )
        )
    zl = claims["zero_loss"]
    checks.append(
        Check(
            f"{tag}: loss = 0 (global optimizer, Lemma 1)" if zl else f"{tag}: loss (not claimed 0)",
            0.0,
            fl,
            ZERO_TOL,
            (fl <= ZERO_TOL) if zl else True,
            "float",
            f"Theorem 1 terms: R_n {lt.r_n:.6g}, R_* {lt.r_star:.6g}, cross {lt.cross:.6g}, fit {lt.fit:.6g}",
            informational or zl is None,
        )
    )
    fields = {
        "order": z.order,
        "loss": fl,
        "loss_theorem1": lt.total,
        "loss_terms": {
            "fit": lt.fit,
            "cross": lt.cross,
            "R_n": lt.r_n,
            "R_star": lt.r_star,
            "constant": lt.constant,
        },
        "potential_deviations": sets,
        "loss_parts": parts,
        "why": explain_loss(parts),
        "formula": con.formula,
    }
    return checks, fields


def margin_connection(
    con: cc.Construction, max_memory: int, max_seconds: float | None
) -> tuple[list[Check], dict, list[str]]:
    """Normalized margin vs ``gamma*(d, 2)`` and the core verifier's checks, all informational."""
    net, _ = to_network(con.z)
    d = con.z.d
    core = verify_network(
        net,
        d,
        2,
        max_memory=max_memory,
        max_seconds=max_seconds,
        title=f"core max-margin checks on CoGO {con.name}",
    )
    checks = [
        Check("core: " + c.name, c.expected, c.measured, c.tolerance, c.passed, c.exactness, c.detail, True)
        for c in core.checks
    ]
    nm = core.fields.get("normalized_margin")
    g = theory.gamma_star(d, 2) if d % 2 else None
    tol = float(core.fields.get("margin_tolerance") or 0.0) + 1e-14 * abs(nm)
    if con.name == "memorize":
        expect = memorization_margin(d)
        checks.append(
            Check("normalized margin = 2 / (3 sqrt(3 d) (d-1)^1.5) (derived here, see memorization_margin)",
                  expect, nm, tol, abs(nm - expect) <= tol, "float", "= gamma* sqrt(2/(d-1)) for odd d", True)
        )
    fields = {
        "normalized_margin": nm,
        "gamma_star": g,
        "ratio_to_gamma_star": nm / g if g else None,
        "core_verdict": core.verdict,
    }
    return checks, fields, list(core.notes)


def memorization_margin(d: int) -> float:
    """``L_{2,3}``-normalized margin of Corollary 3's network, derived (not in the paper): node ``(j1, j2)``
    has ``w_a = d^(-2/3) (d delta_{-j1} - 1)`` etc.; summing over nodes, only the ``alpha beta`` cross term
    survives and ``f(a, b)[c] = 2 (d delta_{c = a+b} - 1)`` (margin ``2d``); each node has squared norm ``3
    d^(-1/3) (d-1)``, so ``||theta||^3 = d^2 (3 d^(-1/3) (d-1))^1.5`` and the normalized margin is ``2 / (3
    sqrt(3d) (d-1)^1.5)``."""
    return 2.0 / (3.0 * math.sqrt(3.0 * d) * (d - 1) ** 1.5)


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
        Check(
            "Theorem 1 loss = forward pass (random zero-mean weights, seed 0)",
            fl,
            lt,
            ZERO_TOL,
            abs(lt - fl) <= ZERO_TOL * (1 + fl),
            "float",
        ),
        Check(
            "Theorem 1 with non-zero-mean input weights (outside its assumption)",
            fl2,
            lt2,
            ZERO_TOL,
            abs(lt2 - fl2) <= ZERO_TOL * (1 + fl2),
            "float",
            f"difference {lt2 - fl2:.6g}",
            True,
        ),
        Check(
            "Theorem 3: r(z1 + z2) = r(z1) + r(z2), r(z1 * z2) = r(z1) r(z2) (random complex z)",
            0.0,
            hom,
            ZERO_TOL,
            hom <= ZERO_TOL,
            "float",
            "max relative error over all potentials",
        ),
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
                Check(
                    f"Table 1 {name}: rho(u) has order {order} and zeroes every potential != 1 (Theorem 4)",
                    order,
                    rho.order,
                    ZERO_TOL,
                    ok,
                    "float",
                    f"max |potential in R| after rho: {zeroed:.3e}; 1-set spread {const:.3e}",
                )
            )
    checks.append(
        bool_check(
            "Table 1: stated potentials match the computed ones",
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
        )
    )
    return checks, {"table1": rows, "table1_mismatches": mismatches}


def build(name: str, d: int, variant: str, nu: complex, xi: complex, k0: int) -> cc.Construction:
    if name == "F6":
        return cc.build_f6(d, nu, variant)
    if name == "F4":
        return cc.build_f4(d, xi)
    if name == "F46":
        return cc.build_f46(d, k0, xi, variant)
    if name == "memorize":
        return cc.build_memorization(d)
    raise InputError(f"unknown CoGO construction {name!r}; choose from {', '.join(cc.CONSTRUCTIONS)}")


def verify_cogo(
    name: str,
    d: int,
    *,
    nu_angle: float = 0.0,
    xi_angle: float = 0.0,
    k0: int = 1,
    max_memory: int = DEFAULT_MAX_MEMORY,
    max_seconds: float | None = None,
) -> VerificationResult:
    """All checks of the module docstring for construction ``name`` at ``d`` (``nu = e^{i nu_angle}``, ...)."""
    if isinstance(d, bool) or not isinstance(d, int) or not 3 <= d <= MAX_D:
        raise InputError(f"--d must be an integer in 3..{MAX_D}, got {d!r}")
    if name == "F46" and d < 5:
        raise InputError("F46 needs d >= 5 (at least one order-4 frequency besides k0)")
    nu, xi = cmath.exp(1j * nu_angle), cmath.exp(1j * xi_angle)
    result = VerificationResult(
        f"CoGO construction {name} (d = {d})",
        fields={"construction": name, "d": d, "nu": nu, "xi": xi, "k0": k0},
    )
    paper = build(name, d, "paper", nu, xi, k0)
    checks, fields = construction_checks(paper)
    result.checks += checks
    result.fields["paper"] = fields
    best = paper
    if name == "F4":
        result.notes.append(
            f"F4 alone is not a global optimizer (Corollary 4: R_n is not a 0-set): {fields['why']}; "
            "Corollary 5 cancels the R_n sums with biased order-6 nodes (F46)."
        )
    if name in ("F6", "F46") and fields["loss"] > ZERO_TOL:
        fixed = build(name, d, "corrected", nu, xi, k0)
        c2, f2 = construction_checks(fixed, informational=True)
        result.checks += c2
        result.fields["corrected"] = f2
        best = fixed
        result.notes.append(
            f"{name}: the paper's formula gives loss {fields['loss']:.12g}, not 0 ({fields['why']}); corrected "
            f"construction "
            f"({f2['formula']}) has loss {f2['loss']:.3g}."
        )
    try:
        mc, mf, notes = margin_connection(best, max_memory, max_seconds)
        result.checks += mc
        result.fields.update(mf)
        result.notes += notes
        if mf["gamma_star"]:
            result.notes.append(
                f"{name} ({best.variant}): normalized margin {mf['normalized_margin']:.12g} = "
                f"{mf['ratio_to_gamma_star']:.12g} x gamma*(d={d}, k=2); core verdict "
                f"{mf['core_verdict']}."
            )
    except RefusedError as exc:
        result.notes.append(f"margin not computed: {exc}")
    ac, af = algebra_checks(d)
    result.checks += ac
    result.fields.update(af)
    return result


def default_angle(x: float | None) -> float:
    return 0.0 if x is None else float(x) % (2 * math.pi)


def verify_cogo_network(
    net: PolyNetwork, *, max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None
) -> VerificationResult:
    """A given quadratic network on ``Z_d``: Theorem 1 vs forward pass, Lemma 1's sets, loss, margin."""
    if net.k != 2:
        raise InputError(f"CoGO networks have k = 2 inputs; got k = {net.k}")
    z = from_network(net)
    d = net.p
    mean = float(np.abs(z.z[:2, 0, :]).max())
    result = VerificationResult(f"CoGO network check (d = {d}, q = {net.m})", fields={"d": d, "order": net.m})
    lt, fl = theorem1_loss(z).total, forward_loss(net)
    result.add(
        Check(
            "Theorem 1 loss = forward-pass loss",
            fl,
            lt,
            ZERO_TOL,
            abs(lt - fl) <= ZERO_TOL * (1 + fl),
            "float",
            f"input-weight means (z[a,0], z[b,0]) max {mean:.3e}; Theorem 1 assumes 0",
            informational=mean > ZERO_TOL,
        )
    )
    sets = potential_sets(z)
    for key in ("R_g", "R_c", "R_n", "R_*", "R_n_summed"):
        result.add(
            Check(
                SET_LABELS[key], 0.0, sets[key], ZERO_TOL, sets[key] <= ZERO_TOL, "float", informational=True
            )
        )
    result.add(Check("loss = 0", 0.0, fl, ZERO_TOL, fl <= ZERO_TOL, "float", informational=True))
    result.fields.update(loss=fl, loss_theorem1=lt, potential_deviations=sets)
    core = verify_network(net, d, 2, max_memory=max_memory, max_seconds=max_seconds)
    result.checks += [
        Check("core: " + c.name, c.expected, c.measured, c.tolerance, c.passed, c.exactness, c.detail, True)
        for c in core.checks
    ]
    result.fields.update(normalized_margin=core.fields.get("normalized_margin"), core_verdict=core.verdict)
    return result
