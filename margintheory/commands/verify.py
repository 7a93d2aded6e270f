"""``margintheory verify``: check the theorem for ``(p, k)`` (the construction) or for a given network.

Wiring only: the checks live in :mod:`margintheory.verification` (float), :mod:`margintheory.symbolic.exact`
(``--exact``) and :mod:`margintheory.tasks` (``--task``).
"""

from __future__ import annotations

import argparse

from margintheory import tasks
from margintheory.cli import add_engine_options, engine_time_limit
from margintheory.errors import InputError
from margintheory.network import PolyNetwork
from margintheory.report import emit
from margintheory.theory import validate_pk

MODULAR = "modular-addition"

SUMMARY_FIELDS = [
    "gamma_star", "gamma_star_exact", "normalized_margin", "relative_error", "width", "frequencies_covered",
    "normalized_correct_logit", "normalized_wrong_logit", "construction_correct_logit", "construction_wrong_logit",
]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "verify",
        help="check the max-margin theorem for (p, k) or for a given network",
        description="Check every claim of Theorem C.22 (Fourier circuits) for modulus p and k inputs, on the "
        "paper's construction or on a network file. Exit codes: 0 verified, 1 refuted, 2 bad input or refused.",
    )
    parser.add_argument("--task", default=MODULAR, choices=tasks.TASK_NAMES,
                        help="task to verify (default %(default)s)")
    parser.add_argument("--p", type=int, help="modulus p (integer >= 3; the papers assume an odd prime)")
    parser.add_argument("--k", type=int, help="number of inputs k (integer >= 1); also the activation degree")
    parser.add_argument("--network", metavar="FILE.npz", help="check this network instead of the construction")
    parser.add_argument("--exact", action="store_true", help="check the construction in exact arithmetic (small p, k)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (verdict + checks)")
    add_engine_options(parser)
    parser.add_argument("--rtol", type=float, default=None,
                        help="relative tolerance for 'equals gamma*' claims on a given network (default: the float64 "
                        "error bound only)")
    parser.add_argument("--fourier-tol", type=float, default=1e-8,
                        help="leakage allowed in the per-neuron Fourier checks of a network (default %(default)s)")
    parser.add_argument("--min-share", type=float, default=0.0,
                        help="leave neurons with norm share <= this out of the per-neuron checks (default 0)")
    tasks.add_task_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.task != MODULAR:
        return emit(tasks.run_task(args), args.json)
    return emit(_modular_result(args), args.json, SUMMARY_FIELDS)


def _modular_result(args: argparse.Namespace):
    from margintheory import verification

    max_seconds = engine_time_limit(args)
    if args.rtol is not None and not (0 <= args.rtol < 1):
        raise InputError(f"--rtol must be in [0, 1), got {args.rtol}")
    if args.network:
        if args.exact:
            raise InputError("--exact checks the construction; it cannot be combined with --network")
        net = PolyNetwork.load(args.network)
        p = net.p if args.p is None else args.p
        k = net.k if args.k is None else args.k
        validate_pk(p, k)
        if not (0 < args.fourier_tol < 1) or not (0 <= args.min_share < 1):
            raise InputError("--fourier-tol must be in (0, 1) and --min-share in [0, 1)")
        return verification.verify_network(net, p, k, max_memory=args.max_memory, max_seconds=max_seconds,
                                           rtol=args.rtol, fourier_tolerance=args.fourier_tol,
                                           min_share=args.min_share)
    if args.p is None or args.k is None:
        raise InputError("--p and --k are required (or give --network FILE.npz)")
    p, k = validate_pk(args.p, args.k)
    if args.exact:
        from margintheory.symbolic.exact import verify_construction_exact

        return verify_construction_exact(p, k)
    return verification.verify_construction(p, k, max_memory=args.max_memory, max_seconds=max_seconds)
