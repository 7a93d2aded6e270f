"""``margintheory verify``: check the theorem for ``(p, k)`` (the construction) or for a given network.

Wiring only: every task, modular addition included, is dispatched through :mod:`margintheory.tasks`, which
calls :mod:`margintheory.verification` (float), :mod:`margintheory.symbolic.exact` (``--exact``) and the other
tasks' checkers.
"""

from __future__ import annotations

import argparse

from margintheory import tasks
from margintheory.cli import add_engine_options, add_network_file_options
from margintheory.report import emit

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
    parser.add_argument("--network", metavar="FILE",
                        help="check this network instead of the construction: .npz, .safetensors or a PyTorch file "
                        "(.pt/.pth/.bin/.ckpt, read without torch, weights only)")
    add_network_file_options(parser)
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
    summary = SUMMARY_FIELDS if args.task == MODULAR else None
    return emit(tasks.run_task(args), args.json, summary)
