"""The ``margintheory`` command: argument parsing and wiring only (no mathematics here).

Each sub-command lives in ``margintheory/commands/<name>.py`` and exposes
``add_parser(subparsers) -> argparse.ArgumentParser`` (which sets ``func=run``) and ``run(args) -> int``;
options shared by several commands are in ``margintheory/commands/_options.py``.  Only this module and
``commands/`` know about argparse and flags; the library takes typed parameters.
Exit codes: 0 verified, 1 refuted (``train``: the run diverged), 2 bad input / refused / solver failure / output
that cannot be written, 130 interrupted (Ctrl-C), 141 standard output closed by the reader (``| head``).
Expected errors (:class:`~margintheory.errors.MarginTheoryError`) are printed as one line, never as a traceback.
This module imports nothing heavy at start-up (the commands' modules are imported inside :func:`main`), so that
Ctrl-C at any moment is handled.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys

from margintheory._version import __version__
from margintheory.commands._parser import OneLineParser
from margintheory.errors import MarginTheoryError
from margintheory.runtime import progress
from margintheory.runtime.process import (
    StdoutError,
    clean_stdout,
    flush_stdout,
    install_handlers,
    interrupt_exit_status,
    interrupt_message,
    output_failure,
    progress_reporter,
    raise_on_termination,
    received_termination,
    restore_handlers,
    say,
)

COMMANDS = ("verify", "derive", "solve", "train", "analyze", "schema", "check", "sweep", "reproduce")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every available command, or of the command ``only`` alone (its module is the only one
    imported: ``margintheory check`` then loads neither numpy nor cvxpy, which the commands that compute import)."""
    parser = OneLineParser(
        prog="margintheory",
        description="Verify the max-margin theory of polynomial networks on algebraic tasks.",
    )
    parser.add_argument("--version", action="version", version=f"margintheory {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in [only] if only is not None else available_commands():
        importlib.import_module(f"margintheory.commands.{name}").add_parser(sub)
    return parser


def requested_command(argv: list[str]) -> str | None:
    """The command named by ``argv`` when it is the first argument (no top-level option before it) and available."""
    if not argv or argv[0] not in COMMANDS:
        return None
    return argv[0] if argv[0] in available_commands(argv[0]) else None


def available_commands(*names: str) -> list[str]:
    """The sub-commands (of ``names``, default all) whose modules are installed (a missing module is skipped, any
    other error propagates).

    ``tests/test_cli.py`` asserts that every entry of ``COMMANDS`` is available in a complete install.
    """
    found = []
    for name in names or COMMANDS:
        try:
            importlib.import_module(f"margintheory.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"margintheory.commands.{name}":
                raise
            continue
        found.append(name)
    return found


def main(argv: list[str] | None = None) -> int:
    """Run one command; every expected failure is one line on stderr (module docstring for the exit codes).

    The whole run, argument parsing and imports included, happens inside
    :func:`margintheory.runtime.process.clean_stdout` (C-level output of libraries goes to stderr) and under the
    handlers below, so that neither a closed pipe, a
    full disk, nor Ctrl-C during start-up ends in a traceback.
    """
    state: dict[str, str] = {"command": ""}
    _main_module_for_spawned_processes()
    previous = _exit_at_once_on_interrupt(state)
    previous_termination = install_handlers(_exit_at_once(state))
    try:
        with clean_stdout():
            code = _dispatch(argv, state)
            flush_stdout()
    except StdoutError as exc:
        code, message = output_failure(exc)
        if message:
            say(f"{_prefix(state)}: error: {message}")
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP (runtime.process.Terminated): the work has saved
        say(f"{_prefix(state)}: {interrupt_message(exc)}")
        code = interrupt_exit_status(exc)
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a native library's own error (pyo3 PanicException) around a signal
        code = _native_failure(exc, state)
    finally:
        _set_interrupt_handler(previous)
        restore_handlers(previous_termination)
    return code


def _main_module_for_spawned_processes() -> None:
    """Have processes that multiprocessing *spawns* (a dask LocalCluster's workers, ``sweep --workers N``) import
    this module, not the console script that called :func:`main`.

    A spawned process first runs its parent's ``__main__`` file again (as ``__mp_main__``); a console script written
    without an ``if __name__ == "__main__"`` guard then runs the whole command again in every worker, which starts
    its own cluster ("An attempt has been made to start a new process before the current process has finished its
    bootstrapping phase", "Nanny failed to start").  A ``__main__`` module with a ``__spec__`` is imported by name
    instead, so the script is given this module's spec (whose own call of :func:`main` is guarded).  Nothing changes
    when ``__main__`` is anything else (``python -m margintheory.cli``, a user's program)."""
    import importlib.util

    entry = sys.modules.get("__main__")
    if entry is None or getattr(entry, "__spec__", None) is not None or getattr(entry, "main", None) is not main:
        return
    with contextlib.suppress(Exception):
        entry.__spec__ = importlib.util.find_spec(__name__)


def _native_failure(exc: BaseException, state: dict[str, str]) -> int:
    """An exception that is not an ``Exception`` (pyo3's ``PanicException``): a signal that landed in a native
    library's call back into Python (then the command ends as terminated or interrupted), or a defect (one line,
    exit 2)."""
    stopped = received_termination() or (KeyboardInterrupt() if "KeyboardInterrupt" in str(exc) else None)
    if stopped is not None:
        say(f"{_prefix(state)}: {interrupt_message(stopped)}")
        return interrupt_exit_status(stopped)
    say(f"{_prefix(state)}: internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:400]}")
    return 2


def _exit_at_once_on_interrupt(state: dict[str, str]) -> object:
    """During start-up (parsing, importing the command and its libraries) Ctrl-C ends the process at once with one
    line and status 130: nothing has been computed or written yet, and a KeyboardInterrupt raised inside an import
    can be caught and printed as a traceback by compiled code that then carries on (seen under load: the traceback
    was printed and the command ran to the end).  :func:`_dispatch` restores Python's KeyboardInterrupt before the
    command runs, so that the work can clean up (``train`` saves its checkpoint).  Returns the previous handler."""
    return _set_interrupt_handler(_exit_at_once(state))


def _exit_at_once(state: dict[str, str]):  # noqa: ANN202 - a signal handler
    """The start-up handler of SIGINT, SIGTERM and SIGHUP: one line, exit ``128 + signum`` (130 for Ctrl-C)."""

    def interrupted(signum: int, frame: object) -> None:
        what = "interrupted" if signum == signal.SIGINT else f"terminated by {signal.Signals(signum).name}"
        say(f"{_prefix(state)}: {what}")
        os._exit(128 + signum)

    return interrupted


def _set_interrupt_handler(handler: object) -> object:
    """Install ``handler`` for SIGINT (only possible in the main thread: elsewhere nothing changes)."""
    try:
        return signal.signal(signal.SIGINT, handler)  # type: ignore[arg-type]
    except (ValueError, TypeError):  # not the main thread, or no previous Python-level handler to restore
        return None


def _prefix(state: dict[str, str]) -> str:
    return f"margintheory {state['command']}".rstrip()


def _dispatch(argv: list[str] | None, state: dict[str, str]) -> int:
    """Parse and run; expected failures become one line and exit code 2 (``SystemExit`` of argparse is kept)."""
    args = None
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(requested_command(argv))
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # usage errors (2), --help / --version (0): argparse has printed its message
            return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        state["command"] = str(args.command)
        _set_interrupt_handler(signal.default_int_handler)  # the work may now clean up on Ctrl-C,
        raise_on_termination()  # and on SIGTERM / SIGHUP alike (main restores the previous handlers)
        with progress_reporter() as callback, progress.reporting(callback):
            return int(args.func(args))
    except MarginTheoryError as exc:
        also = "".join(f"; and {other}{_hint(other, args)}" for other in getattr(exc, "also", []))
        say(f"{_prefix(state)}: error: {exc}{_hint(exc, args)}{also}")
        return exc.exit_code
    except MemoryError as exc:  # (also runtime.process.NativeFailure: a native solver that aborted in its child)
        hint = ("; the size check passed, so the machine has less free memory than --max-memory allows: free memory "
                "or lower --max-memory") if hasattr(args, "max_memory") else ""
        said = f" ({' '.join(str(exc).split())[:300]})" if str(exc) else ""
        say(f"{_prefix(state)}: error: out of memory{said}{hint}")
        return 2
    except StdoutError:
        raise
    except OSError as exc:  # an output or input file that cannot be written or read (full disk, permissions, ...)
        where = f"{exc.filename}: " if exc.filename else ""
        say(f"{_prefix(state)}: error: {where}{exc.strerror or exc}")
        return 2
    except Exception as exc:  # a defect: one line and exit 2, never a traceback's exit 1 (which reads as refuted)
        say(f"{_prefix(state)}: internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:400]} (a defect "
            "of margintheory: please report it with the command; MARGINTHEORY_TRACEBACK=1 prints the traceback)")
        if os.environ.get("MARGINTHEORY_TRACEBACK"):
            import traceback

            traceback.print_exc()
        return 2


def _hint(exc: MarginTheoryError, args: argparse.Namespace | None) -> str:
    """The flag advice for the library parameter the error names -- only if this command has that flag."""
    from margintheory.commands._options import FLAG_ATTRIBUTES, flag_hint

    parameter = getattr(exc, "parameter", None)
    if parameter is None or args is None or not hasattr(args, FLAG_ATTRIBUTES.get(parameter, parameter)):
        return ""
    return flag_hint(parameter)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
