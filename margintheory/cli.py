"""The ``margintheory`` command: argument parsing and wiring only (no mathematics here).

Each sub-command lives in ``margintheory/commands/<name>.py`` and exposes
``add_parser(subparsers) -> argparse.ArgumentParser`` (which sets ``func=run``) and ``run(args) -> int``.
Exit codes: 0 verified, 1 refuted, 2 bad input / refused / solver failure.  Expected errors
(:class:`~margintheory.errors.MarginTheoryError`) are printed as one line, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from margintheory import __version__
from margintheory.errors import MarginTheoryError

COMMANDS = ("verify", "derive", "solve", "train", "analyze")


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
        print(f"margintheory {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"margintheory {args.command}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"margintheory {args.command}: error: out of memory; lower --max-memory", file=sys.stderr)
        return 2
    return code


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--max-memory``, ``--max-seconds`` and ``--force``: the budget of the exhaustive margin engine."""
    from margintheory.margins import DEFAULT_MAX_MEMORY, DEFAULT_MAX_SECONDS

    parser.add_argument("--max-memory", type=byte_size, default=DEFAULT_MAX_MEMORY, metavar="BYTES",
                        help="memory budget of the exhaustive engine, e.g. 2G (default 2 GiB)")
    parser.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS,
                        help="refuse runs estimated to take longer (default %(default)s s)")
    parser.add_argument("--force", action="store_true", help="run even if the time estimate exceeds --max-seconds")


def add_network_file_options(parser: argparse.ArgumentParser) -> None:
    """``--names``: which tensors of a network file are ``U`` and ``W`` (see :mod:`margintheory.network_io.names`)."""
    parser.add_argument(
        "--names", metavar="U=KEY,W=KEY", type=name_map,
        help="map the tensors of a state dict or checkpoint: U names a (m,k,p) tensor, k (m,p) matrices joined by "
        "'+', or one (m,p) matrix shared by all inputs (needs --k); W names the (m,p) output matrix; a .T suffix "
        "transposes; nested checkpoint keys are dotted (model.embed.weight). "
        'Example: --names "U=model.embed.weight.T,W=model.unembed.weight.T"',
    )


def name_map(text: str):
    """argparse type: a :class:`~margintheory.network_io.names.NameMap` (a bad mapping is a usage error, exit 2)."""
    from margintheory.errors import InputError
    from margintheory.network_io.names import NameMap

    try:
        return NameMap.parse(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--names: ")) from None


def engine_time_limit(args: argparse.Namespace) -> float | None:
    """The engine's time limit from :func:`add_engine_options` (``None`` with ``--force``)."""
    return None if getattr(args, "force", False) else getattr(args, "max_seconds", None)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (argparse turns the ValueError into a usage error, exit 2)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def byte_size(text: str) -> int:
    """argparse type: a byte count such as ``2147483648``, ``512M``, ``2G``."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = 1
    if t and t[-1] in units:
        mult, t = units[t[-1]], t[:-1]
    try:
        value = int(float(t) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a byte size: {text!r} (use e.g. 2G, 512M or 1000000)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
