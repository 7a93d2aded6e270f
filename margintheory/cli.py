"""The ``margintheory`` command: argument parsing and wiring only (no mathematics here).

Each sub-command lives in ``margintheory/commands/<name>.py`` and exposes
``add_parser(subparsers) -> argparse.ArgumentParser`` (which sets ``func=run``) and ``run(args) -> int``;
options shared by several commands are in ``margintheory/commands/_options.py``.  Only this module and
``commands/`` know about argparse and flags; the library takes typed parameters.
Exit codes: 0 verified, 1 refuted, 2 bad input / refused / solver failure.  Expected errors
(:class:`~margintheory.errors.MarginTheoryError`) are printed as one line, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from margintheory._version import __version__
from margintheory.commands._options import flag_hint
from margintheory.errors import MarginTheoryError

COMMANDS = ("verify", "derive", "solve", "train", "analyze", "schema", "check")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="margintheory",
        description="Verify the max-margin theory of polynomial networks on algebraic tasks.",
    )
    parser.add_argument("--version", action="version", version=f"margintheory {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in available_commands():
        importlib.import_module(f"margintheory.commands.{name}").add_parser(sub)
    return parser


def available_commands() -> list[str]:
    """The sub-commands whose modules are installed (a missing module is skipped, any other error propagates).

    ``tests/test_cli.py`` asserts that every entry of ``COMMANDS`` is available in a complete install.
    """
    found = []
    for name in COMMANDS:
        try:
            importlib.import_module(f"margintheory.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"margintheory.commands.{name}":
                raise
            continue
        found.append(name)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args))
    except MarginTheoryError as exc:
        print(f"margintheory {args.command}: error: {exc}{flag_hint(exc.parameter)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"margintheory {args.command}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"margintheory {args.command}: error: out of memory; lower --max-memory", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
