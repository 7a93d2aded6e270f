"""``margintheory schema``: print the JSON Schema (draft 2020-12) of every ``--json`` result.

Wiring only: the schema is the package data file read by :func:`margintheory.presentation.schema.schema_text`.
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "schema",
        help="print the JSON Schema of the --json results",
        description="Print the JSON Schema (draft 2020-12) that the --json output of verify (every task), solve, "
        "analyze, check and derive follows: common fields (task, parameters, gamma_star, normalized_margin, "
        "ratio_to_gamma_star, relative_error, width, verdict, exit_code, checks, seconds, version, notes), "
        "task-specific details and an optional certificate.",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from margintheory.presentation.schema import schema_text

    sys.stdout.write(schema_text())
    return 0
