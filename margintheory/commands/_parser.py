"""The argument parser class of every command (argparse only: importing it loads nothing else)."""

from __future__ import annotations

import argparse
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (``margintheory verify: error: ...; see --help``), exit 2, like every other error;
    sub-command parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def command_parser(module: str) -> argparse.ArgumentParser:
    """The top-level parser with the one command of ``margintheory.commands.<module>`` (for running a command's
    parsing inside the library, e.g. a sweep cell, without the console entry point)."""
    import importlib

    parser = OneLineParser(prog="margintheory")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    importlib.import_module(f"margintheory.commands.{module}").add_parser(sub)
    return parser
