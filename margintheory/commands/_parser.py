"""The argument parser class of every command (argparse only: importing it loads nothing else)."""

from __future__ import annotations

import argparse
import re
import sys
import weakref
from typing import NoReturn


class _Once:
    """Mixin of the single-valued actions: an option given twice (``--p 5 --p 7``) is a usage error instead of
    silently taking the last value.  The namespaces an action has filled are remembered by weak reference (a
    namespace is unhashable), so that parsing again into a fresh namespace starts afresh."""

    def __call__(self, parser, namespace, values, option_string=None):  # argparse's signature
        seen = self.__dict__.setdefault("_filled", {})
        ref = seen.get(id(namespace))
        if ref is not None and ref() is namespace:
            parser.error(f"argument {'/'.join(self.option_strings)}: given more than once (the second time as "
                         f"{option_string}{'' if values is None or values == [] else ' ' + _shown(values)}); give "
                         "it once")
        seen[id(namespace)] = weakref.ref(namespace)
        super().__call__(parser, namespace, values, option_string)  # type: ignore[misc, unused-ignore]


def _shown(values: object) -> str:
    return " ".join(map(str, values)) if isinstance(values, list) else str(values)


class _StoreOnce(_Once, argparse._StoreAction):
    pass


class _StoreConstOnce(_Once, argparse._StoreConstAction):
    pass


class _StoreTrueOnce(_Once, argparse._StoreTrueAction):
    pass


class _StoreFalseOnce(_Once, argparse._StoreFalseAction):
    pass


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line (``margintheory verify: error: ...; see --help``), exit 2, like every other error;
    sub-command parsers inherit the class.  An option that takes one value (or a flag) may be given once only."""

    def __init__(self, *args, **kwargs) -> None:  # argparse's signature
        super().__init__(*args, **kwargs)
        for name, cls in ((None, _StoreOnce), ("store", _StoreOnce), ("store_const", _StoreConstOnce),
                          ("store_true", _StoreTrueOnce), ("store_false", _StoreFalseOnce)):
            self.register("action", name, cls)

    def error(self, message: str) -> NoReturn:
        message = _unknown_option_before(self, message) or message
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):  # argparse's signature
        """As argparse's, but an unrecognized argument is reported by the (sub-)command it was given to
        (``margintheory verify: error: unrecognized arguments: --bogus``), not by the top-level parser."""
        _ARGV[:] = list(sys.argv[1:] if args is None else args)
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            _innermost(self, ns).error(f"unrecognized arguments: {' '.join(extras)}")
        return ns


#: the arguments being parsed (for the message of an optional positional that took an unknown option's value)
_ARGV: list[str] = []


def _unknown_option_before(parser: argparse.ArgumentParser, message: str) -> str | None:
    """``verify --bogus 3`` made argparse read ``3`` as the optional positional TASK ("invalid choice: '3'"): when
    the word follows an option this parser does not have, say that instead."""
    match = re.match(r"argument [A-Z_]+: invalid choice: '(.*)' \(", message)
    if match is None or match.group(1) not in _ARGV:
        return None
    at = _ARGV.index(match.group(1))
    before = _ARGV[at - 1] if at > 0 else ""
    name = before.split("=", 1)[0]
    if before.startswith("-") and name not in parser._option_string_actions:
        return f"unrecognized arguments: {before} {match.group(1)}"
    return None


def _innermost(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> argparse.ArgumentParser:
    """The sub-command parser that ``ns`` was parsed by (following nested sub-commands such as ``sweep verify``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(ns, action.dest, None) or "")
            if chosen is not None:
                return _innermost(chosen, ns)
    return parser


def command_parser(module: str) -> argparse.ArgumentParser:
    """The top-level parser with the one command of ``margintheory.commands.<module>`` (for running a command's
    parsing inside the library, e.g. a sweep cell, without the console entry point)."""
    import importlib

    parser = OneLineParser(prog="margintheory")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    importlib.import_module(f"margintheory.commands.{module}").add_parser(sub)
    return parser
