"""CoGO's networks against the max margin (Tian, arXiv:2410.01779; docs/theory.md#cogo-margin): a CoGO network
on ``Z_d`` is a ``k = 2`` polynomial network, so its ``L_{2,3}``-normalized margin is measured and compared with
``gamma*(d, 2)``; neither paper states a relation, so every check here is informational.
"""

from __future__ import annotations

import math

from margintheory.core import theory
from margintheory.core.checks import Check
from margintheory.tasks.cogo import constructions as cc
from margintheory.tasks.cogo.algebra import to_network
from margintheory.tasks.modular_addition.checks import verify_network


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
        c.reported("core: ")
        for c in core.checks
    ]
    margin = core.margin  # verify_network always measures the margin (typed: never read from fields by key)
    nm = margin.value if margin is not None else math.nan
    g = theory.gamma_star(d, 2) if d % 2 else None
    tol = (margin.error_bound if margin is not None else 0.0) + 1e-14 * abs(nm)
    if con.name == "memorize":
        expect = memorization_margin(d)
        checks.append(
            Check(name="margin (memorization)", expected=expect, measured=nm, tolerance=tol,
                  passed=abs(nm - expect) <= tol, exactness="float", detail="= gamma* sqrt(2/(d-1)) for odd d",
                  informational=True,
                  statement="normalized margin = 2 / (3 sqrt(3 d) (d-1)^1.5) (derived here, see memorization_margin)")
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
