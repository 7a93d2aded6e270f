"""``analyze`` for a (trained) CoGO network on ``Z_d`` (Tian, arXiv:2410.01779, Sec. 7): is it a global optimizer,
and which of the paper's constructions is it made of?

* the checks of :func:`~margintheory.tasks.cogo.task.verify_cogo_network` (Theorem 1's loss against a forward pass,
  Lemma 1's 0/1-sets, the core max-margin checks, all informational) -- except that its deciding claim, the loss
  over all ``d^2`` pairs, is checked at the stated ``loss_tol`` rather than at zero: weight decay keeps a trained
  network's loss above zero;
* per frequency (:mod:`.factorization`): the order of the solution (Fig. 3 middle, Fig. 4: orders 4 and 6), whether
  it factorizes as 2 x 2 or 2 x 3 (the factorization error), and the construction it matches (Table 2's columns),
  with the shares Table 2 reports.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

from margintheory.core.checks import Check, VerificationResult
from margintheory.core.network import PolyNetwork
from margintheory.core.problems import CoGO
from margintheory.engines.margins import DEFAULT_MAX_MEMORY
from margintheory.tasks.cogo.factorization import (
    CONSTRUCTIONS,
    FACTOR_TOL,
    MATCH_TOL,
    SALIENT_THRESHOLD,
    FrequencySolution,
    frequency_solutions,
)
from margintheory.tasks.cogo.task import verify_cogo_network

#: default tolerance of "the loss is zero" for a trained network (the projected MSE of Eq. 1 over all pairs; the
#: zero network's loss is ``(d - 1) / d``)
TRAINED_LOSS_TOL = 1e-3


def solution_table(solutions: list[FrequencySolution]) -> dict:
    """Table 2's quantities: orders, the shares not of order 4 / 6 and not factorable, the mean factorization
    error per order, and the share of each construction among the factorable solutions."""
    n = len(solutions)
    orders = Counter(s.order for s in solutions)
    four_six = [s for s in solutions if s.order in (4, 6)]
    factorable = [s for s in four_six if s.construction is not None]
    shares = {name: sum(s.construction == name for s in factorable) / len(factorable) if factorable else math.nan
              for name in CONSTRUCTIONS}
    table: dict = {
        "solution_orders": {int(o): int(c) for o, c in sorted(orders.items())},
        "share_not_order_4_6": 1 - len(four_six) / n if n else math.nan,
        "share_factorable": len(factorable) / len(four_six) if four_six else math.nan,
        "construction_shares": shares,
        "per_frequency": [{"k": s.k, "order": s.order, "factorization_error": s.factor_error,
                           "construction": s.construction, "match_error": s.match_error} for s in solutions],
    }
    for order in (4, 6):
        these = [s for s in four_six if s.order == order]
        table[f"share_non_factorable_order_{order}"] = (
            sum(s.construction is None for s in these) / len(these) if these else math.nan)
        errs = [s.factor_error for s in these if s.construction is not None and s.factor_error is not None]
        table[f"factorization_error_order_{order}"] = sum(errs) / len(errs) if errs else math.nan
    return table


def _mean_error_text(table: dict, order: int) -> str:
    """The mean factorization error of the factorable solutions of ``order``, or ``none`` and why (no solution of
    that order, or none of them factorable): a mean over no solution is not a number to print."""
    value = table[f"factorization_error_order_{order}"]
    if not math.isnan(value):
        return f"{value:.3g}"
    count = table["solution_orders"].get(order, 0)
    return (f"none (no solution of order {order})" if not count else
            f"none ({count} solution{'s' if count != 1 else ''} of order {order}, none factorable)")


def factorization_checks(table: dict, threshold: float, factor_tol: float, match_tol: float) -> list[Check]:
    """Informational rows: every frequency of order 4 or 6; every such solution factorable; every factorable one a
    construction of the paper (Tian reports about 95 % and 98 %)."""
    other = table["construction_shares"]["other"]
    named = math.nan if math.isnan(other) else 1 - other
    orders = ", ".join(f"{c} of order {o}" for o, c in table["solution_orders"].items())
    return [
        Check(name="orders 4 and 6 (Cor. 2, 4)", expected=0.0, measured=table["share_not_order_4_6"], tolerance=None,
              passed=table["share_not_order_4_6"] == 0, exactness="float", informational=True,
              detail=f"per frequency: {orders}; salient nodes: input weights >= {threshold:g} x the largest",
              statement="share of frequencies whose solution is not of order 4 or 6"),
        Check(name="factorable (Table 2)", expected=1.0, measured=table["share_factorable"], tolerance=factor_tol,
              passed=table["share_factorable"] == 1, exactness="float", informational=True,
              detail=f"2 x 2 or 2 x 3 ring product with relative rank-one residual <= {factor_tol:g}; mean errors "
                     f"order 4: {_mean_error_text(table, 4)}, order 6: {_mean_error_text(table, 6)}",
              statement="share of the order-4 / order-6 solutions that factorize (Def. 5)"),
        Check(name="matches a construction", expected=1.0, measured=named, tolerance=match_tol,
              passed=named == 1, exactness="float", informational=True,
              detail="; ".join(f"{k}: {v:.3g}" for k, v in table["construction_shares"].items())
              if not math.isnan(named) else "none: no solution of order 4 or 6 factorizes",
              statement="share of the factorable solutions matching z_nu=i * z_xi, z_nu=i * z_syn,ab or "
                        "z_nu * z_syn (Table 2)"),
    ]


def analyze_cogo_network(net: PolyNetwork, *, loss_tol: float = TRAINED_LOSS_TOL,
                         threshold: float = SALIENT_THRESHOLD, factor_tol: float = FACTOR_TOL,
                         match_tol: float = MATCH_TOL, output_scale: float | None = None,
                         max_memory: int = DEFAULT_MAX_MEMORY, max_seconds: float | None = None,
                         title: str | None = None) -> VerificationResult:
    """The module docstring's checks and measurements for a quadratic network on ``Z_d``.  ``output_scale``: the
    network was trained on ``||P1perp(s f - e_y)||^2`` with this ``s`` (1 in Tian's code): it is analysed as the
    network of Eq. 1 (``s = 1/(2d)``) with the same outputs, its weights scaled by ``(2 d s)^(1/3)``."""
    if output_scale is not None:
        net = net.scaled((2 * net.p * output_scale) ** (1 / 3))
    result = verify_cogo_network(net, max_memory=max_memory, max_seconds=max_seconds)
    problem = CoGO(net.p)
    result.fields.update(width=net.m, gamma_star=problem.gamma_star, gamma_star_note=problem.gamma_star_note)
    if title:
        result.title = title
    loss = float(result.fields["loss"])
    for i, c in enumerate(result.checks):
        if c.name == "loss = 0":
            result.checks[i] = replace(c, name="loss ~ 0", tolerance=loss_tol, passed=loss <= loss_tol,
                                       detail=f"{c.detail}; a trained network: loss <= {loss_tol:g}",
                                       statement="the network is (near) a global optimizer: its loss over all d^2 "
                                                 f"pairs is at most {loss_tol:g} (Theorem 1; 0 at the optimizers)")
    table = solution_table(frequency_solutions(net, threshold=threshold, factor_tol=factor_tol,
                                               match_tol=match_tol))
    result.checks += factorization_checks(table, threshold, factor_tol, match_tol)
    result.fields.update(table, salient_threshold=threshold, factor_tolerance=factor_tol, match_tolerance=match_tol)
    shares = ", ".join(f"{k} {100 * v:.1f}%" for k, v in table["construction_shares"].items() if v == v)
    result.notes.append(f"loss over all {net.p}^2 pairs {loss:.6g}; solution orders {table['solution_orders']}; "
                        f"factorable {100 * table['share_factorable']:.1f}% of the order-4/6 solutions; "
                        f"constructions among them: {shares or 'none'}")
    return result
