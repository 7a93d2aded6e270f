"""Checks of the computed real irreducible representations of a finite group: the facts of Morwani et al.
App. D.8 and Lemma D.10 that the group task relies on (docs/theory.md#group-representations).

Homomorphism and orthogonality of every ``R(g)``, the count of irreps against the conjugacy classes, characters
constant on classes, the real type (Frobenius-Schur indicator 1, the hypothesis of Thm 7.9), and then either the
real-type identities (Theorem D.5, Lemma D.10, Theorem D.8) or their complex-type analogues.
"""

from __future__ import annotations

import numpy as np

from margintheory.core.checks import Check, bool_check
from margintheory.core.groups import FiniteGroup
from margintheory.core.representations import (
    Irrep,
    character_inner_products,
    character_table,
    class_function_error,
    frobenius_schur_indicator,
    generators,
    homomorphism_error,
    orthogonality_error,
    schur_orthogonality_error,
)

REP_TOL = 1e-11


def representation_checks(G: FiniteGroup, irreps: list[Irrep]) -> tuple[list[Check], dict]:
    """Lemma D.10 / Theorem D.5 / D.8-D.9 on the computed irreps: homomorphism, orthogonality, characters."""
    dims = np.array([R.dim for R in irreps])
    classes = G.conjugacy_classes()
    ip = character_inner_products(G, irreps)
    fs = np.array([frobenius_schur_indicator(G, R) for R in irreps])
    real_type = bool(np.all(np.abs(fs - 1) < REP_TOL))
    checks = _basic_checks(G, irreps, classes, fs, real_type)
    if real_type:
        checks += _real_type_checks(G, irreps, classes, ip, dims)
    else:
        checks += _complex_type_checks(G, ip, fs, dims)
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


def _basic_checks(
    G: FiniteGroup, irreps: list[Irrep], classes: list[np.ndarray], fs: np.ndarray, real_type: bool
) -> list[Check]:
    """Group axioms, homomorphism, orthogonality, irrep count, class functions, real type (any group)."""
    gens = generators(G)
    hom = max(homomorphism_error(G, R, gens) for R in irreps)
    orth = max(orthogonality_error(R) for R in irreps)
    n_complex = int(sum(2 if abs(f) < 0.5 else 1 for f in fs))  # quaternionic (-2): one complex irrep
    axioms = G.check_axioms() if G.order <= 120 else {"associative": None}
    class_err = class_function_error(G, irreps)
    return [
        bool_check(
            "group table",
            all(v is not False for v in axioms.values()),
            exactness="proved",
            detail=f"{axioms}"
            + (
                ""
                if G.order <= 120
                else " (associativity of permutation composition not re-checked exhaustively above order 120)"
            ),
            statement="group table: Latin square with identity, associative"),
        Check(name="R is a homomorphism", expected=0.0, measured=hom, tolerance=REP_TOL, passed=hom <= REP_TOL,
              exactness="float", detail=f"{len(gens)} generator(s); max abs error",
              statement="R(g s) = R(g) R(s) for all g and generators s (hence a homomorphism)"),
        Check(name="R(g) orthogonal", expected=0.0, measured=orth, tolerance=REP_TOL, passed=orth <= REP_TOL,
              exactness="float", detail="max |R^T R - I|", statement="R(g) orthogonal"),
        Check(name="number of irreps", expected=len(classes), measured=n_complex, tolerance=None,
              passed=len(classes) == n_complex, exactness="proved",
              detail="a real irrep of complex type splits into two complex irreps",
              statement="complex irreps counted (real and quaternionic type 1, complex type 2) = number of conjugacy "
                        "classes"),
        Check(name="class functions", expected=0.0, measured=class_err, tolerance=REP_TOL, passed=class_err <= REP_TOL,
              exactness="float", statement="characters constant on conjugacy classes"),
        bool_check(
            "irreps of real type",
            real_type,
            tolerance=REP_TOL,
            detail=f"indicators {(np.round(fs, 12) + 0.0).tolist()}",  # + 0.0: no -0.0
            informational=True,
            statement="all irreps of real type (Frobenius-Schur indicator 1; Thm 7.9's hypothesis)"),
    ]


def _real_type_checks(
    G: FiniteGroup, irreps: list[Irrep], classes: list[np.ndarray], ip: np.ndarray, dims: np.ndarray
) -> list[Check]:
    """Theorem D.5 (``sum d_R^2 = |G|``), Lemma D.10 (1)-(4), Theorem D.8 (orthonormal characters)."""
    sq = int(np.sum(dims**2))
    schur = schur_orthogonality_error(irreps)
    ch = float(np.abs(ip - np.eye(len(irreps))).max())
    return [
        Check(name="sum d_R^2 = |G| (D.5)", expected=G.order, measured=sq, tolerance=None, passed=sq == G.order,
              exactness="proved", statement="sum d_R^2 = |G| (Theorem D.5)"),
        Check(name="entry orthogonality (D.10)", expected=0.0, measured=schur, tolerance=REP_TOL,
              passed=schur <= REP_TOL, exactness="float", detail="max deviation relative to |G|",
              statement="matrix-entry orthogonality B^T B = diag(|G|/d_R) (Lemma D.10 (1)-(2))"),
        Check(name="characters orthonormal (D.8)", expected=0.0, measured=ch, tolerance=REP_TOL, passed=ch <= REP_TOL,
              exactness="float", statement="characters orthonormal (Theorem D.8)"),
        _class_sum_check(G, irreps, classes),
    ]


def _complex_type_checks(G: FiniteGroup, ip: np.ndarray, fs: np.ndarray, dims: np.ndarray) -> list[Check]:
    """The same identities when some real irreps are of complex or quaternionic type: ``<chi_R, chi_R>`` is 1, 2 or
    4 (real, complex, quaternionic; Frobenius-Schur indicator of the realified character 1, 0, -2), and a realified
    irrep of real dimension ``D`` stands for two complex irreps of dimension ``D/2`` (complex type) or one
    (quaternionic type)."""
    norms = np.where(np.abs(fs - 1) < 0.5, 1.0, np.where(np.abs(fs) < 0.5, 2.0, 4.0))
    expect = np.diag(norms)
    dev = float(np.abs(ip - expect).max())
    complex_dims = np.where(norms == 1.0, dims, dims / 2)
    copies = np.where(norms == 2.0, 2.0, 1.0)
    sq = float(np.sum(copies * complex_dims**2))
    return [
        Check(name="<chi_R, chi_S>", expected=0.0, measured=dev, tolerance=REP_TOL, passed=dev <= REP_TOL,
              exactness="float", detail=f"max |<chi_R, chi_S> - delta n_R|, n_R = {norms.astype(int).tolist()}",
              statement="<chi_R,chi_S> = 0 (R != S); 1, 2 or 4 for real, complex or quaternionic type"),
        Check(name="sum d^2 = |G| (complex)", expected=G.order, measured=sq, tolerance=REP_TOL,
              passed=abs(sq - G.order) <= REP_TOL, exactness="float",
              detail="a realified irrep of real dimension D: two complex irreps of dimension D/2 (complex type), one "
                     "(quaternionic type)",
              statement="sum over complex irreps of d^2 = |G|"),
    ]


def _class_sum_check(G: FiniteGroup, irreps: list[Irrep], classes: list[np.ndarray]) -> Check:
    """Lemma D.10 (3)-(4): class sums of off-diagonal entries vanish; of diagonal entries are equal."""
    err = 0.0
    for R in irreps:
        for cl in classes:
            S = R.mats[cl].sum(axis=0)
            off = S - np.diag(np.diag(S))
            err = max(err, float(np.abs(off).max()), float(np.ptp(np.diag(S))))
    return Check(name="class sums (D.10 (3)-(4))", expected=0.0, measured=err, tolerance=REP_TOL * G.order,
                 passed=err <= REP_TOL * G.order, exactness="float",
                 statement="class sums: off-diagonal 0, diagonal independent of position (Lemma D.10 (3)-(4))")
