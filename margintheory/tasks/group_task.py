"""The ``group`` task: composition ``(a, b) -> ab`` on ``S_n`` and ``C_n`` (Morwani et al. Thm 7.9, App. D.8-D.9).

Verifies, on the computed representations, the hypotheses and every claim of Theorem 7.9 and reports, for a
group where the condition fails (``S_6``), the true max margin from the class LP of :mod:`.group_margin` next
to the formula.  Cyclic groups have irreps of complex type, outside Theorem 7.9; for them the task checks that
the same path (core network, group-table labels) reproduces modular addition at ``k = 2``.
"""

from __future__ import annotations

import numpy as np

from margintheory import theory
from margintheory.checks import Check, VerificationResult, bool_check, close_check
from margintheory.construction import build_construction
from margintheory.errors import InputError, RefusedError
from margintheory.margins import DEFAULT_MAX_MEMORY, EPS, exhaustive_margin
from margintheory.network import PolyNetwork
from margintheory.tasks import group_margin as gm
from margintheory.tasks.groups import FiniteGroup
from margintheory.tasks.representations import (
    Irrep,
    basis_vectors,
    character_inner_products,
    character_table,
    class_function_error,
    frobenius_schur_indicator,
    generators,
    homomorphism_error,
    orthogonality_error,
    real_irreps,
    schur_orthogonality_error,
)
from margintheory.verification import margin_checks

REP_TOL = 1e-11
LP_REL_TOL = 1e-9
SINGLE_IRREP_TOL = 1e-9
SAMPLED_TRIPLES = 4000
SEED = 0


def representation_checks(G: FiniteGroup, irreps: list[Irrep]) -> tuple[list[Check], dict]:
    """Lemma D.10 / Theorem D.5 / D.8-D.9 on the computed irreps: homomorphism, orthogonality, characters."""
    dims = np.array([R.dim for R in irreps])
    classes = G.conjugacy_classes()
    gens = generators(G)
    hom = max(homomorphism_error(G, R, gens) for R in irreps)
    orth = max(orthogonality_error(R) for R in irreps)
    ip = character_inner_products(G, irreps)
    fs = np.array([frobenius_schur_indicator(G, R) for R in irreps])
    real_type = bool(np.all(np.abs(fs - 1) < REP_TOL))
    n_complex = int(sum(2 if abs(f) < 0.5 else 1 for f in fs))
    axioms = G.check_axioms() if G.order <= 120 else {"associative": None}
    checks = [
        bool_check(
            "group table: Latin square with identity, associative",
            all(v is not False for v in axioms.values()),
            exactness="proved",
            detail=f"{axioms}"
            + (
                ""
                if G.order <= 120
                else " (associativity of permutation composition not re-checked exhaustively above order 120)"
            ),
        ),
        Check(
            "R(g s) = R(g) R(s) for all g and generators s (hence a homomorphism)",
            0.0,
            hom,
            REP_TOL,
            hom <= REP_TOL,
            "float",
            f"{len(gens)} generator(s); max abs error",
        ),
        Check("R(g) orthogonal", 0.0, orth, REP_TOL, orth <= REP_TOL, "float", "max |R^T R - I|"),
        Check(
            "complex irreps counted (real type 1, complex type 2) = number of conjugacy classes",
            len(classes),
            n_complex,
            None,
            len(classes) == n_complex,
            "proved",
            "a real irrep of complex type splits into two complex irreps",
        ),
        Check(
            "characters constant on conjugacy classes",
            0.0,
            class_function_error(G, irreps),
            REP_TOL,
            class_function_error(G, irreps) <= REP_TOL,
            "float",
        ),
        bool_check(
            "all irreps of real type (Frobenius-Schur indicator 1; Thm 7.9's hypothesis)",
            real_type,
            tolerance=REP_TOL,
            detail=f"indicators {np.round(fs, 12).tolist()}",
            informational=True,
        ),
    ]
    if real_type:
        sq = int(np.sum(dims**2))
        schur = schur_orthogonality_error(irreps)
        ch = float(np.abs(ip - np.eye(len(irreps))).max())
        checks += [
            Check("sum d_R^2 = |G| (Theorem D.5)", G.order, sq, None, sq == G.order, "proved"),
            Check(
                "matrix-entry orthogonality B^T B = diag(|G|/d_R) (Lemma D.10 (1)-(2))",
                0.0,
                schur,
                REP_TOL,
                schur <= REP_TOL,
                "float",
                "max deviation relative to |G|",
            ),
            Check("characters orthonormal (Theorem D.8)", 0.0, ch, REP_TOL, ch <= REP_TOL, "float"),
            _class_sum_check(G, irreps, classes),
        ]
    else:
        expect = np.diag(np.where(np.abs(fs) < 0.5, 2.0, 1.0))
        dev = float(np.abs(ip - expect).max())
        sq = float(np.sum(dims**2 / np.diag(expect)))
        checks += [
            Check(
                "<chi_R,chi_S> = 0 (R != S), 1 (real type) or 2 (complex type)",
                0.0,
                dev,
                REP_TOL,
                dev <= REP_TOL,
                "float",
            ),
            Check(
                "sum over complex irreps of d^2 = |G|",
                G.order,
                sq,
                REP_TOL,
                abs(sq - G.order) <= REP_TOL,
                "float",
                "a complex-type real irrep of dimension d contributes 2 (d/2)^2",
            ),
        ]
    fields = {
        "group": G.name,
        "order": G.order,
        "irrep_names": [R.name for R in irreps],
        "irrep_dims": dims.tolist(),
        "class_sizes": [len(c) for c in classes],
        "class_representatives": [G.labels[int(c[0])] for c in classes],
        "character_table": np.round(character_table(G, irreps), 12).tolist(),
        "frobenius_schur": fs.tolist(),
        "all_irreps_real_type": real_type,
    }
    return checks, fields


def _class_sum_check(G: FiniteGroup, irreps: list[Irrep], classes: list[np.ndarray]) -> Check:
    """Lemma D.10 (3)-(4): class sums of off-diagonal entries vanish; of diagonal entries are equal."""
    err = 0.0
    for R in irreps:
        for cl in classes:
            S = R.mats[cl].sum(axis=0)
            off = S - np.diag(np.diag(S))
            err = max(err, float(np.abs(off).max()), float(np.ptp(np.diag(S))))
    return Check(
        "class sums: off-diagonal 0, diagonal independent of position (Lemma D.10 (3)-(4))",
        0.0,
        err,
        REP_TOL * G.order,
        err <= REP_TOL * G.order,
        "float",
    )


def theorem79_checks(
    G: FiniteGroup,
    irreps: list[Irrep],
    max_memory: int,
    max_seconds: float | None,
) -> tuple[list[Check], dict, gm.ClassLP]:
    """Condition, closed form, class LP, Lemma D.15 blocks and the Theorem 7.9 network for a real-type group."""
    dims = np.array([R.dim for R in irreps])
    X = character_table(G, irreps)
    cond = gm.condition_values(X, dims)
    holds = bool(np.all(cond < 0))
    formula = gm.gamma_star_theorem79(G.order, dims)
    lp = gm.solve_class_lp(X, G.order, dims)
    checks = [
        bool_check(
            "condition sum_{R!=1} d_R^1.5 chi_R(C) < 0 for every class C != e (Thm 7.9)",
            holds,
            exactness="float",
            detail=f"values per class {np.round(cond, 6).tolist()}",
            informational=True,
        ),
        Check(
            "class LP: primal (block masses) = dual (class weights)",
            0.0,
            lp.gap / lp.primal,
            LP_REL_TOL,
            abs(lp.gap) <= LP_REL_TOL * lp.primal,
            "float",
            "relative gap; HiGHS optimal on both",
        ),
    ]
    if holds:
        checks.append(
            close_check(
                "closed form 2/(3 sqrt(3|G|) sum d_R^2.5) = LP max margin", formula, lp.primal, LP_REL_TOL
            )
        )
    else:
        checks.append(
            Check(
                "closed form of Thm 7.9 (condition fails): formula < true max margin",
                "< LP value",
                formula / lp.primal,
                LP_REL_TOL,
                formula < lp.primal * (1 - LP_REL_TOL),
                "float",
                f"formula {formula:.12g}, LP max margin {lp.primal:.12g}, ratio formula/LP "
                f"{formula / lp.primal:.9f}; the formula is still attained by the mu ∝ d^2.5 network",
            )
        )
    sizes = np.array([len(c) for c in G.conjugacy_classes()])
    pi14 = gm.lemma_d14_weights(X, sizes, dims)
    v14 = gm.dual_values(pi14, X, G.order, dims)
    ok14 = abs(pi14.sum() - 1) <= LP_REL_TOL and float(np.ptp(v14)) <= LP_REL_TOL * formula
    checks.append(
        Check(
            "Lemma D.14 weights (tau_C = -sum z_R chi_R(C)) sum to 1 and equalize every irrep at the formula",
            formula,
            float(v14.max()),
            LP_REL_TOL,
            bool(ok14 and abs(v14.max() - formula) <= LP_REL_TOL * formula),
            "float",
            f"sum |C| tau_C = {pi14.sum():.15g}; min |C| tau_C = {pi14.min():.6g} (>= 0 iff the condition holds); "
            "the statement's sign (+) gives sum -1",
        )
    )
    if holds:
        checks.append(
            Check(
                "Lemma D.14 weights are non-negative (a valid dual: formula is an upper bound)",
                ">= 0",
                float(pi14.min()),
                0.0,
                bool(pi14.min() >= 0),
                "float",
            )
        )
    lp_margin = float(gm.class_margins(lp.mu, X, G.order, dims).min())
    checks.append(
        close_check(
            "LP block network margin (blocks + characters) = LP value", lp.primal, lp_margin, LP_REL_TOL
        )
    )
    blocks, bfields = block_checks(G, irreps)
    checks += blocks
    width = gm.theorem79_width(dims)
    net = gm.mixture_network(irreps, gm.theorem79_weights(dims))
    checks.append(
        Check(
            "construction width = 2 sum_{R!=1} d_R^3 (Lemma D.15)",
            width,
            net.m,
            None,
            net.m == width,
            "proved",
        )
    )
    fields = {
        "condition_values": cond.tolist(),
        "condition_holds": holds,
        "gamma_star_formula": formula,
        "gamma_star_lp": lp.primal,
        "lp_dual": lp.dual,
        "lp_block_masses": lp.mu.tolist(),
        "lp_class_weights": lp.pi.tolist(),
        "theorem_width": width,
        "irreps_used_by_lp": [irreps[r].name for r in np.flatnonzero(lp.mu > 1e-9)],
        "irreps_tight_under_dual": [irreps[r].name for r in gm.tight_irreps(lp, X, G.order, dims)],
    }
    fields.update(bfields)
    cm = gm.class_margins(gm.theorem79_weights(dims), X, G.order, dims)
    checks.append(
        close_check(
            "Thm 7.9 network margin (verified blocks + characters) = formula", formula, float(cm.min()), 1e-12
        )
    )
    # the exhaustive pass runs on the max-margin network: Thm 7.9's if the condition holds, else the LP's
    best = net if holds else gm.mixture_network(irreps, lp.mu)
    try:
        res = exhaustive_margin(best, max_memory, labels=G.product_labels(), max_seconds=max_seconds)
    except RefusedError as exc:
        fields["exhaustive"] = f"refused: {exc}"
        return checks, fields, lp
    mc, mf = margin_checks(res, lp.primal, None)
    mc = [_relabel(c) for c in mc]
    if not holds:
        mc = [_relax_c1(c) for c in mc]
        cm_lp = gm.class_margins(lp.mu, X, G.order, dims)
        support = lp.pi > 1e-9
        spread = float(cm_lp[support].max() - cm_lp.min())
        mc.append(
            Check(
                "wrong classes weighted by the LP dual attain the max wrong logit (C.1 for tau = pi)",
                0.0,
                spread / lp.primal,
                LP_REL_TOL,
                spread <= LP_REL_TOL * lp.primal,
                "float",
                f"classes in spt(pi): {int(support.sum())} of {len(support)}; from blocks + characters",
            )
        )
    checks += mc
    fields.update({"construction_" + k: v for k, v in mf.items()})
    fields["construction_width"] = best.m
    fields["exhaustive"] = "Thm 7.9 network" if holds else "class-LP network"
    fields["seconds"] = res.seconds
    if holds:
        checks += single_irrep_checks(best, irreps, np.arange(1, len(irreps)))[0]
    else:
        checks += single_irrep_checks(best, irreps, np.flatnonzero(lp.mu > 1e-9),
                                      required_label="every irrep of the LP solution used by some neuron")[0]
    return checks, fields, lp


def _relabel(c: Check) -> Check:
    """The core's margin checks carry modular-addition references; name the group statement instead."""
    name = c.name.replace("(Theorem C.22)", "(max margin of G: class LP / Thm 7.9)")
    name = name.replace("(spt q* = D_p, Lemma C.6)", "(uniform q*, Lemma 7.6)")
    return Check(name, c.expected, c.measured, c.tolerance, c.passed, c.exactness, c.detail, c.informational)


def _relax_c1(c: Check) -> Check:
    """With the condition failing only some wrong classes are on the margin (D.9.2): uniform C.1 is reported."""
    if "C.1" not in c.name:
        return c
    return Check(c.name + " (not expected: condition fails)", c.expected, c.measured, c.tolerance, c.passed,
                 c.exactness, c.detail, True)


def block_checks(G: FiniteGroup, irreps: list[Irrep]) -> tuple[list[Check], dict]:
    """Every Lemma D.15 block outputs ``2 d^3 kappa_R chi_R(a b c^-1)`` (all triples for |G| <= 24, else a
    seeded sample of :data:`SAMPLED_TRIPLES`)."""
    rng = np.random.default_rng(SEED)
    if G.order**3 <= 24**3:
        grid = np.stack(np.meshgrid(*[np.arange(G.order)] * 3, indexing="ij"), -1).reshape(-1, 3)
        how = "all triples"
    else:
        grid = rng.integers(0, G.order, size=(SAMPLED_TRIPLES, 3))
        how = f"{SAMPLED_TRIPLES} random triples (seed {SEED})"
    err = max(
        gm.block_identity_error(G, R, gm.irrep_block(R, r), grid) for r, R in enumerate(irreps) if r > 0
    )
    tol = 1e-12
    return [
        Check(
            "each block of 2 d^3 neurons outputs 4 chi_R(a b c^-1) (Lemma D.15)",
            0.0,
            err,
            tol,
            err <= tol,
            "float",
            f"{how}; max error relative to the block's largest logit",
        )
    ], {"block_check": how}


def single_irrep_checks(
    net: PolyNetwork,
    irreps: list[Irrep],
    required: np.ndarray | None,
    tol: float = SINGLE_IRREP_TOL,
    required_label: str = "every non-trivial irrep used by some neuron (Thm 7.9 (2))",
) -> tuple[list[Check], dict]:
    """Thm 7.9 (1): every neuron spanned by one non-trivial irrep; (2): every irrep in ``required`` used."""
    B, owner = basis_vectors(irreps)
    dims = np.array([R.dim for R in irreps], dtype=float)
    frac = gm.irrep_power_fractions(net, B, owner, dims)
    top = frac.max(axis=1)
    which = frac.argmax(axis=1)
    single = top >= 1 - tol
    used = sorted({int(r) for r in which[single] if r > 0})
    checks = [
        Check(
            "every neuron spanned by one non-trivial irrep (Thm 7.9 (1))",
            net.m,
            int((single & (which > 0)).sum()),
            tol,
            bool(np.all(single & (which > 0))),
            "float",
            f"min max-irrep power fraction {float(top.min()):.15g}",
        )
    ]
    if required is not None:
        need = sorted(int(r) for r in required)
        checks.append(
            Check(
                required_label,
                [irreps[r].name for r in need],
                [irreps[r].name for r in used],
                None,
                set(need) <= set(used),
                "proved",
            )
        )
    return checks, {"irreps_used": [irreps[r].name for r in used], "min_irrep_power": float(top.min())}


def cyclic_checks(G: FiniteGroup, max_memory: int, max_seconds: float | None) -> tuple[list[Check], dict]:
    """``C_n`` through the group path = modular addition at ``k = 2``: the core construction with the
    group-table labels has the same margins as with the modular-addition labels, and (odd ``n``) equals
    ``gamma*(n, 2)``."""
    n = G.order
    if n < 3:
        raise InputError("the cyclic-group check needs n >= 3")
    net = build_construction(n, 2)
    via_group = exhaustive_margin(net, max_memory, labels=G.product_labels(), max_seconds=max_seconds)
    via_sum = exhaustive_margin(net, max_memory, max_seconds=max_seconds)
    diff = float(np.abs(via_group.margins - via_sum.margins).max())
    checks = [
        Check(
            "group-table labels = modular-addition labels (C_n = Z_n)",
            0.0,
            diff,
            0.0,
            diff == 0.0,
            "proved",
            "max |margin difference| between the two label paths",
        )
    ]
    fields = {
        "modular_addition_margin": via_sum.normalized_margin,
        "group_path_margin": via_group.normalized_margin,
    }
    if n % 2 == 1:
        g = theory.gamma_star(n, 2)
        tol = via_group.normalized_tolerance + 4 * EPS * g
        checks.append(
            close_check(
                "group-path margin of the Lemma C.18 network = gamma*(n, 2) (Morwani et al. Thm 7.7)",
                g,
                via_group.normalized_margin,
                tol / g,
            )
        )
        fields["gamma_star_modular"] = g
    return checks, fields


def verify_group(
    G: FiniteGroup, *, max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None
) -> VerificationResult:
    """All checks of the module docstring for the constructions of ``G``."""
    irreps = real_irreps(G)
    result = VerificationResult(f"group composition on {G.name} (|G| = {G.order}; Morwani et al. Thm 7.9)")
    checks, fields = representation_checks(G, irreps)
    result.checks += checks
    result.fields.update(fields)
    if fields["all_irreps_real_type"]:
        checks, f2, lp = theorem79_checks(G, irreps, max_memory, max_seconds)
        result.checks += checks
        result.fields.update(f2)
        if not f2["condition_holds"]:
            result.notes.append(
                f"{G.name}: the condition of Thm 7.9 fails for some class, so its closed form "
                f"{f2['gamma_star_formula']:.12g} is only a lower bound; the class LP gives the max margin "
                f"{f2['gamma_star_lp']:.12g} (ratio {f2['gamma_star_formula'] / f2['gamma_star_lp']:.9f}), "
                f"attained "
                f"with irreps {f2['irreps_used_by_lp']} (cf. D.9.2); any max-margin network uses only irreps in "
                f"{f2['irreps_tight_under_dual']} (tight under the optimal class weights). The LP upper bound "
                "rests on Lemma D.13."
            )
    else:
        result.notes.append(
            f"{G.name} has irreps of complex type: Theorem 7.9 does not apply; checked instead that "
            "the group path reproduces modular addition (k = 2)."
        )
        checks, f2 = cyclic_checks(G, max_memory, max_seconds)
        result.checks += checks
        result.fields.update(f2)
    return result


def verify_group_network(
    G: FiniteGroup,
    net: PolyNetwork,
    *,
    max_memory: int = DEFAULT_MAX_MEMORY,
    max_seconds: float | None = None,
    rtol: float | None = None,
) -> VerificationResult:
    """A given network (core ``.npz``, ``k = 2``, ``p = |G|``, elements in :mod:`.groups` order) against the
    max margin of ``G`` (LP value for real-type groups, ``gamma*(n, 2)`` for odd cyclic groups)."""
    if net.k != 2 or net.p != G.order:
        raise InputError(f"a network for {G.name} needs k=2 and p={G.order}; got k={net.k}, p={net.p}")
    irreps = real_irreps(G)
    result = VerificationResult(f"network check on {G.name} (m = {net.m})")
    res = exhaustive_margin(net.normalized(), max_memory, labels=G.product_labels(), max_seconds=max_seconds)
    real = all(abs(frobenius_schur_indicator(G, R) - 1) < REP_TOL for R in irreps)
    if real:
        dims = np.array([R.dim for R in irreps])
        X = character_table(G, irreps)
        lp = gm.solve_class_lp(X, G.order, dims)
        gamma, holds = lp.primal, bool(np.all(gm.condition_values(X, dims) < 0))
        result.fields.update(gamma_star_lp=lp.primal, condition_holds=holds)
        result.checks += single_irrep_checks(net, irreps, np.arange(1, len(irreps)) if holds else None)[0]
    else:
        gamma = theory.gamma_star(G.order, 2) if G.order % 2 else None
    mc, mf = margin_checks(res, gamma, rtol)
    result.checks += [_relabel(c) for c in mc]
    result.fields.update(mf)
    return result
