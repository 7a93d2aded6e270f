"""Process-level behaviour of the ``margintheory`` command: standard output kept clean, closed pipes, write failures.

Nothing here knows about the mathematics or about argparse; :func:`margintheory.cli.main` wraps every command in
:func:`clean_stdout` and maps the exceptions to exit codes with :func:`output_failure`.

* **Clean standard output.** While a command runs, file descriptor 1 points at standard error and ``sys.stdout``
  at a private duplicate of the real standard output.  Whatever a compiled library writes with ``printf`` (the
  HiGHS banner, solver logs) therefore lands on stderr, and stdout carries only what the command itself prints: a
  ``--json`` object stays parseable.  The redirection is undone when the command ends.
* **Closed pipes.** ``margintheory verify --json | head -c 10`` closes the pipe early; like ``cat`` or ``grep`` the
  program then ends quietly, with status ``128 + SIGPIPE`` (141, what a shell reports for a tool killed by
  SIGPIPE), no traceback and no "Exception ignored" message at interpreter shutdown.
* **Failed writes.** A write to standard output that fails (``> /dev/full``: no space left on device) is one
  line on stderr and exit status 2.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import signal
import sys
import warnings
from collections.abc import Iterator

from margintheory.runtime.progress import ProgressCallback

#: exit status of a command whose standard output was closed by the reader (a shell's 128 + SIGPIPE)
EXIT_PIPE = 128 + int(getattr(signal, "SIGPIPE", 13))


class StdoutError(OSError):
    """A write to standard output failed (closed pipe, full device, I/O error); ``errno`` is the cause's."""


class _StdoutFile(io.FileIO):
    """The real standard output; a failed write raises :class:`StdoutError` (so it is told apart from a failed
    write of an output file, which names its path)."""

    def write(self, data):  # noqa: ANN001 - same signature as FileIO.write
        try:
            return super().write(data)
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None


def _is_process_stdout(stream: object) -> bool:
    """Whether ``stream`` is the interpreter's own standard output on fd 1 (not a test's capture object)."""
    if stream is not sys.__stdout__ or stream is None:
        return False
    try:
        return bool(stream.fileno() == 1)  # type: ignore[attr-defined, unused-ignore]
    except (OSError, ValueError, AttributeError):
        return False


@contextlib.contextmanager
def clean_stdout() -> Iterator[None]:
    """Route fd 1 to stderr for the duration, and ``sys.stdout`` to a private copy of the real standard output.

    A no-op when ``sys.stdout`` is not the process's fd 1 (e.g. captured by a test harness).  On exit the buffered
    output is flushed (a failure propagates as :class:`OSError`, see :func:`output_failure`) and fd 1 restored.
    """
    if not _is_process_stdout(sys.stdout):
        yield
        return
    original = sys.stdout
    original.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    stream = io.TextIOWrapper(io.BufferedWriter(_StdoutFile(real, "w", closefd=False)), encoding=original.encoding,
                              errors=_output_errors(original.errors), line_buffering=bool(original.line_buffering))
    sys.stdout = stream
    stderr_errors = _degrade_stderr()
    try:
        yield
        stream.flush()
    finally:
        sys.stdout = original
        if stderr_errors is not None:
            with contextlib.suppress(Exception):
                sys.stderr.reconfigure(errors=stderr_errors)  # type: ignore[union-attr]
        try:
            stream.flush()
        except (OSError, ValueError):
            _point_at_devnull(real)  # bytes that could not be written are dropped, not retried at shutdown
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        with contextlib.suppress(OSError, ValueError):
            stream.close()
        os.dup2(real, 1)
        os.close(real)


#: the codec error handler of the command's output (:func:`ascii_fallback`)
ASCII_FALLBACK = "margintheory-ascii"
#: what a character that the output's encoding lacks is written as (others: their letters without accents, the name
#: of a Greek letter, else ``?``)
ASCII_SPELLING = {
    "\u2500": "-", "\u2501": "-", "\u2502": "|", "\u2503": "|", "\u2264": "<=", "\u2265": ">=", "\u2260": "!=",
    "\u2248": "~", "\u00d7": "x", "\u00b7": ".", "\u2026": "...", "\u2212": "-", "\u2013": "-", "\u2014": "--",
    "\u2192": "->", "\u2190": "<-", "\u21d2": "=>", "\u221a": "sqrt", "\u221e": "inf", "\u2211": "sum",
    "\u220f": "prod", "\u2016": "||", "\u00b1": "+/-", "\u2208": " in ", "\u2200": "for all ", "\u2202": "d",
    "\u22c5": "*", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2022": "*", "\u2713": "ok",
    "\u2717": "x",
    "\u00b2": "^2", "\u00b3": "^3", "\u00b9": "^1", "\u2070": "^0", "\u2074": "^4", "\u2075": "^5", "\u2076": "^6",
    "\u2077": "^7", "\u2078": "^8", "\u2079": "^9", "\u207b": "^-", "\u2080": "_0", "\u2081": "_1", "\u2082": "_2",
    "\u2083": "_3", "\u2084": "_4", "\u2085": "_5", "\u2086": "_6", "\u2087": "_7", "\u2088": "_8", "\u2089": "_9",
}


def ascii_spelling(char: str) -> str:
    """``char`` in ASCII: :data:`ASCII_SPELLING`, a Greek letter's name (``gamma``), the letters of its
    compatibility decomposition (``e`` for ``é``), else ``?``."""
    import unicodedata

    if char in ASCII_SPELLING:
        return ASCII_SPELLING[char]
    name = unicodedata.name(char, "")
    if name.startswith(("GREEK SMALL LETTER ", "GREEK CAPITAL LETTER ")) and len(name.split()) == 4:
        word = name.split()[-1].lower()
        return word if "SMALL" in name else word.capitalize()
    return unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode() or "?"


def ascii_fallback(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the characters an encoding cannot write, spelled in ASCII (:func:`ascii_spelling`), so
    that output to an ASCII terminal or ``PYTHONIOENCODING=ascii`` degrades instead of failing."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start:exc.end]
    return "".join(ascii_spelling(c) for c in text), exc.end


def stdout_encodes(text: str) -> bool:
    """Whether standard output's encoding can write ``text`` (else output is better drawn in ASCII to begin with)."""
    import codecs

    try:
        codecs.encode(text, getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeError, LookupError):
        return False
    return True


def _output_errors(errors: str | None) -> str:
    """``strict`` (what a pipe or a file gets) becomes :data:`ASCII_FALLBACK`; an explicit choice (``PYTHONIOENCODING
    =ascii:replace``) is kept."""
    import codecs

    codecs.register_error(ASCII_FALLBACK, ascii_fallback)
    return ASCII_FALLBACK if errors in (None, "strict") else errors


def _degrade_stderr() -> str | None:
    """Standard error spells what its encoding lacks in ASCII too (Python's default there writes ``\\u03b3``);
    returns the previous error handler, ``None`` if unchanged."""
    previous = getattr(sys.stderr, "errors", None)
    if previous not in ("strict", "backslashreplace") or not hasattr(sys.stderr, "reconfigure"):
        return None
    try:
        sys.stderr.reconfigure(errors=_output_errors("strict"))
    except Exception:  # noqa: BLE001 - a replaced stderr that cannot be reconfigured keeps its handler
        return None
    return previous


def _point_at_devnull(fd: int) -> None:
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def silence_stdout() -> None:
    """Point fd 1 (and ``sys.stdout``) at ``/dev/null``: after a write failure nothing more may be attempted,
    and the interpreter's final flush at shutdown must not fail a second time."""
    _point_at_devnull(1)
    if _is_process_stdout(sys.__stdout__):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.__stdout__.flush()  # type: ignore[union-attr]  # now goes to /dev/null


def flush_stdout() -> None:
    """Flush ``sys.stdout`` (raises :class:`OSError` when the write fails)."""
    if sys.stdout is not None:
        sys.stdout.flush()


def output_failure(exc: OSError) -> tuple[int, str | None]:
    """Exit status and message for a failed write to standard output.

    A closed pipe (``EPIPE``) is not an error of the program: quiet exit, :data:`EXIT_PIPE`.  Anything else
    (``ENOSPC`` on ``/dev/full``, ``EIO``, ...) is reported as one line, exit 2.
    """
    silence_stdout()
    if isinstance(exc, BrokenPipeError) or exc.errno == errno.EPIPE:
        return EXIT_PIPE, None
    reason = exc.strerror or str(exc)
    return 2, f"cannot write to standard output: {reason}"


def say(line: str) -> None:
    """Print one line on stderr; a stderr that cannot be written to is ignored (nowhere left to report)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


@contextlib.contextmanager
def progress_reporter(enabled: bool | None = None) -> Iterator[ProgressCallback | None]:
    """A rich progress display on stderr, or ``None`` when stderr is not a terminal (``enabled=None``: decide by
    ``isatty``).  The callback is thread-safe and throttled (at most ten refreshes a second); a display that is
    never called prints nothing."""
    if enabled is None:
        enabled = _stderr_is_terminal()
    if not enabled:
        yield None
        return
    import threading
    import time

    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    display = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
                       TimeElapsedColumn(), TimeRemainingColumn(), console=Console(file=sys.stderr), transient=True,
                       redirect_stdout=False, redirect_stderr=False)  # stdout carries only results
    tasks: dict[str, object] = {}
    lock = threading.Lock()
    last = [0.0]

    def report(what: str, done: float, total: float | None) -> None:
        now = time.monotonic()
        with lock:
            if what in tasks and now - last[0] < 0.1 and (total is None or done < total):
                return
            last[0] = now
            if what not in tasks:
                if not display.live.is_started:
                    display.start()
                tasks[what] = display.add_task(what, total=total)
            display.update(tasks[what], completed=done, total=total)  # type: ignore[arg-type]

    try:
        yield report
    finally:
        if display.live.is_started:
            display.stop()


#: seconds between two progress lines when stderr is not a terminal (:class:`Heartbeat`); the environment variable
#: ``MARGINTHEORY_PROGRESS_SECONDS`` sets another interval (a positive number of seconds)
HEARTBEAT_SECONDS = 30.0


def heartbeat_interval() -> float:
    """:data:`HEARTBEAT_SECONDS`, or ``MARGINTHEORY_PROGRESS_SECONDS`` when that is a positive number."""
    try:
        value = float(os.environ.get("MARGINTHEORY_PROGRESS_SECONDS", ""))
    except ValueError:
        return HEARTBEAT_SECONDS
    return value if 0 < value < float("inf") else HEARTBEAT_SECONDS


class Heartbeat:
    """Plain progress lines on stderr for a log file or a batch system (stderr not a terminal, where a progress bar
    cannot be drawn): every :func:`heartbeat_interval` seconds, one line ``PREFIX: STATUS (N s elapsed)`` with the
    latest status given to :meth:`update` -- also when nothing changed, so that a silent minute means a stuck job,
    not a slow one.  A job shorter than the interval prints nothing.  Use as a context manager (a daemon thread)."""

    def __init__(self, prefix: str, status: str = "running", interval: float | None = None) -> None:
        import threading
        import time

        self.prefix = prefix
        self.interval = heartbeat_interval() if interval is None else interval
        self._status = status
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="margintheory-heartbeat", daemon=True)
        self._start = time.monotonic()

    def update(self, status: str) -> None:
        """The status the next line will show (thread-safe, cheap)."""
        with self._lock:
            self._status = status

    def _run(self) -> None:
        import time

        while not self._stop.wait(self.interval):
            with self._lock:
                status = self._status
            say(f"{self.prefix}: {status} ({time.monotonic() - self._start:.0f} s elapsed)")

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------- termination signals

#: the signals that end a command as Ctrl-C does (what ``timeout``, SLURM, container runtimes and a closed terminal
#: send); SIGINT itself is Python's KeyboardInterrupt
TERMINATION_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, delivered as Ctrl-C is: a :class:`KeyboardInterrupt` (so every ``except
    KeyboardInterrupt`` that saves state -- ``train``'s checkpoint, a sweep's claims, an atomic write's temporary
    file -- runs), carrying the signal; the command then exits ``128 + signum`` (143 for SIGTERM, 129 for SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def add_interrupt_note(exc: BaseException, text: str) -> None:
    """Add ``text`` to the notes of an interrupt on its way out (what was saved, how to resume): PEP 678's
    ``__notes__``, which :func:`interrupt_message` prints (``BaseException.add_note`` needs Python 3.11)."""
    notes = getattr(exc, "__notes__", None)
    if not isinstance(notes, list):
        notes = []
        exc.__notes__ = notes  # type: ignore[attr-defined, unused-ignore]
    notes.append(text)


def interrupt_exit_status(exc: BaseException) -> int:
    """130 for Ctrl-C, ``128 + signum`` for a :class:`Terminated`."""
    return 128 + exc.signum if isinstance(exc, Terminated) else 130


def interrupt_message(exc: BaseException) -> str:
    """``interrupted`` (Ctrl-C) or ``terminated by SIGTERM``, then the notes the work added on its way out (what it
    saved, how to resume), on one line."""
    what = f"terminated by {signal.Signals(exc.signum).name}" if isinstance(exc, Terminated) else "interrupted"
    notes = [" ".join(str(n).split()) for n in getattr(exc, "__notes__", []) if str(n).strip()]
    return "; ".join([what, *(notes or [NOTHING_SAVED])])


#: what an interrupted command that keeps no state of its own says (its output files are written whole at the end,
#: atomically, so none is half-written)
NOTHING_SAVED = "no output file was left half-written; rerun the same command to start again"


def raise_on_termination() -> dict[int, object]:
    """From now on SIGTERM and SIGHUP raise :class:`Terminated` in the main thread (once: a repeated signal while the
    work saves its state is ignored, so that the save completes; SIGKILL still ends the process).  Returns the
    previous handlers (for :func:`restore_handlers`); nothing changes outside the main thread."""
    _RECEIVED.clear()

    def terminate(signum: int, frame: object) -> None:
        if _RECEIVED:
            return
        _RECEIVED.append(signum)
        raise Terminated(signum)

    return install_handlers(terminate)


#: the termination signal received since :func:`raise_on_termination` (at most one)
_RECEIVED: list[int] = []


def received_termination() -> Terminated | None:
    """The :class:`Terminated` that :func:`raise_on_termination` raised, if a signal came: a native library that
    calls back into Python (Clarabel importing SciPy's LAPACK) may turn the exception raised in its callback into
    its own error (pyo3's ``PanicException``), and the command must still end as terminated, not as a defect."""
    return Terminated(_RECEIVED[0]) if _RECEIVED else None


def install_handlers(handler: object, signals: tuple[int, ...] = TERMINATION_SIGNALS) -> dict[int, object]:
    """Install ``handler`` for ``signals``; returns the previous handlers (empty outside the main thread)."""
    previous: dict[int, object] = {}
    for signum in signals:
        try:
            previous[signum] = signal.signal(signum, handler)  # type: ignore[arg-type]
        except (ValueError, TypeError, OSError):  # not the main thread
            continue
    return previous


def restore_handlers(previous: dict[int, object]) -> None:
    """Undo :func:`raise_on_termination` / :func:`install_handlers`."""
    for signum, handler in previous.items():
        with contextlib.suppress(ValueError, TypeError, OSError):
            signal.signal(signum, handler)  # type: ignore[arg-type]


#: Python modules that compiled solvers import lazily from inside a solve (Clarabel's Rust code loads SciPy's
#: BLAS/LAPACK bindings on its first factorisation): a signal handled while that import runs raises inside the native
#: call, which Clarabel turns into a Rust panic (a multi-line backtrace, exit 1)
NATIVE_LAZY_IMPORTS = ("scipy.linalg.cython_blas", "scipy.linalg.cython_lapack")


def load_native_imports() -> None:
    """Import :data:`NATIVE_LAZY_IMPORTS` now, in Python, so that a native solver finds them loaded and runs no
    Python code while it solves: Ctrl-C, SIGTERM and SIGHUP then reach the program when the solve returns."""
    import importlib

    for name in NATIVE_LAZY_IMPORTS:
        importlib.import_module(name)


# ---------------------------------------------------------------- native work in a child process

class NativeFailure(MemoryError):
    """A native library ended the process it ran in (a Rust allocation failure aborts, ``SIGABRT``): raised in the
    parent with the child's last line, so that the command says it in one line and exits 2."""


def run_isolated(fn, *args):  # noqa: ANN001, ANN201 - any picklable function and result
    """``fn(*args)`` in a forked child process, its result sent back by pipe: a native library that aborts when an
    allocation fails (Clarabel, written in Rust: "memory allocation of N bytes failed", then ``SIGABRT``) ends the
    child only, and the parent raises :class:`NativeFailure` with that line.  The child's standard error is kept in a
    temporary file (its abort message would otherwise be a second line) and copied to ours when it succeeds.
    Ctrl-C, SIGTERM or SIGHUP in the parent kill the child at once (a native call cannot be interrupted) and
    propagate.  Where ``fork`` is not available the call runs in this process.

    The child is made with :func:`os.fork`, not :class:`multiprocessing.Process`: multiprocessing refuses children
    to a *daemonic* process ("daemonic processes are not allowed to have children"), and every worker process of a
    dask LocalCluster is one, so the protection would be lost exactly where cells run unattended.  multiprocessing's
    rule is there because a daemonic process is killed when its parent ends, orphaning its own children; here the
    child asks the kernel to kill it when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``), is killed by
    the parent on any exception, and is always reaped, so no orphan is left behind."""
    import pickle
    import tempfile

    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX
        return fn(*args)
    parent = os.getpid()
    receive, send = os.pipe()
    with tempfile.TemporaryFile() as err:
        with warnings.catch_warnings():
            # JAX (when a JAX backend was used earlier in this process) and Python >= 3.12 warn at every fork of a
            # multithreaded process (a dask worker is one); the child runs only the native solve and never touches
            # the other threads, and the warning would be a second line on stderr (or, under "error" filters, an
            # exception in a fork hook)
            warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
            warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks",
                                    category=DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (coverage is not collected there)
            try:
                os.close(receive)
                _isolated_child(send, err.fileno(), parent, fn, args)
            finally:
                os._exit(70)  # (only reached if the child itself failed to report)
        os.close(send)
        try:
            data = _read_to_end(receive)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _reap(pid)
            raise
        finally:
            os.close(receive)
        code = _reap(pid)
        if not data:
            raise NativeFailure(_child_death(code, err))
        _replay(err)
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


def _read_to_end(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _reap(pid: int) -> int | None:
    """Wait for the child ``pid``; its exit code (negative: the signal that ended it), ``None`` if already reaped."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return None
        except InterruptedError:  # pragma: no cover - retried by Python itself since PEP 475
            continue
        return os.waitstatus_to_exitcode(status)


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when its parent ends (``prctl(PR_SET_PDEATHSIG)``); elsewhere nothing."""
    if not sys.platform.startswith("linux"):  # pragma: no cover
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    if os.getppid() != parent:  # the parent ended before the request took effect
        os._exit(70)


def _isolated_child(send: int, err_fd: int, parent: int, fn, args) -> None:  # noqa: ANN001 - see run_isolated
    import faulthandler
    import pickle

    for signum in (signal.SIGINT, *TERMINATION_SIGNALS):  # the parent decides; it kills this process if it must
        signal.signal(signum, signal.SIG_IGN)
    _die_with_parent(parent)
    faulthandler.disable()  # (an abort's Python dump would bury the library's own last line)
    os.dup2(err_fd, 2)
    try:
        result = (True, fn(*args))
    except Exception as exc:  # noqa: BLE001 - sent to the parent, which raises it
        result = (False, exc)
    try:
        data = pickle.dumps(result)
    except Exception as exc:  # noqa: BLE001 - an unpicklable result or exception: its type and message instead
        data = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    with contextlib.suppress(OSError):  # a parent that stopped listening has been interrupted and kills us
        view = memoryview(data)
        while view:
            view = view[os.write(send, view):]
    os.close(send)
    os._exit(0)


def _child_death(code: int | None, err) -> str:  # noqa: ANN001 - a binary file
    err.seek(0)
    lines = [line.strip() for line in err.read().decode(errors="replace").splitlines() if line.strip()]
    how = f"died with {signal.Signals(-code).name}" if code is not None and code < 0 else f"exited with {code}"
    said = f" ({lines[-1][:200]})" if lines else ""
    return f"the native solver's process {how}{said}"


def _replay(err) -> None:  # noqa: ANN001 - a binary file
    err.seek(0)
    data = err.read()
    if data:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(data.decode(errors="replace"))
            sys.stderr.flush()
