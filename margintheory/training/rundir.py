"""A training run's output directory: never overwritten without being asked, never written by two runs at once.

* :func:`locked_run_dir` creates the directory if needed and holds an exclusive ``flock`` on it for the whole run
  (the lock is on the directory itself: no lock file is left behind, and the kernel releases it when the process
  ends, however it ends).  A second run into the same directory is refused at once instead of silently losing one
  of the two results.
* :func:`previous_run` describes what a directory already holds (a finished run, or an unfinished one with its
  checkpoint step); :func:`claim_run_dir` refuses to start over it unless the caller resumes it or asked to
  overwrite it (then the previous run's files are removed first, so the directory never mixes two runs).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from margintheory.errors import InputError
from margintheory.runtime import strict_json
from margintheory.runtime.atomic import check_output_dir, check_output_file
from margintheory.training.checkpoint import checkpoint_progress

#: files a run writes (the figures as ``<stem>.png`` / ``<stem>.pdf``)
RUN_FILES = ("network.npz", "initial.npz", "checkpoint.npz", "history.csv", "history.json")
#: every task's figures (modular addition, CoGO: embeddings, frequencies; groups: irreps; parity: neurons; CoGO: loss)
FIGURE_STEMS = ("embeddings", "frequencies", "margin", "irreps", "neurons", "loss")


def run_files(out: Path) -> list[Path]:
    """The files of a run in ``out`` that exist."""
    return [out / n for n in _run_names() if os.path.lexists(out / n)]  # (a dangling link too)


def _run_names() -> list[str]:
    return list(RUN_FILES) + [f"{stem}.{ext}" for stem in FIGURE_STEMS for ext in ("png", "pdf")]


def previous_run(out: Path) -> str | None:
    """A description of the run ``out`` holds (``None`` if it holds none)."""
    if not run_files(out):
        return None
    ck = out / "checkpoint.npz"
    if ck.is_file():  # the checkpoint is the run's latest state (history.json is written when a session ends)
        try:
            step, steps = checkpoint_progress(ck)
        except InputError:
            return "the files of a previous run (checkpoint.npz unreadable)"
        if step >= steps:
            return f"a finished run ({step} steps)"
        return f"an unfinished run (stopped after {step} of {steps} steps)"
    hist = out / "history.json"
    if hist.exists():
        try:
            doc = strict_json.loads(hist.read_text())
            last = doc["history"][-1]["step"] if doc.get("history") else "?"
            if doc.get("finished"):
                return f"a finished run ({last} steps)"
            return f"an unfinished run (stopped after {last} steps)"
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return "the files of a previous run (history.json unreadable)"
    return "the files of a previous run"


@contextlib.contextmanager
def locked_run_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Create ``path`` if needed and hold an exclusive lock on it until the block ends (module docstring); a directory
    created here is removed again when the block fails while it is still empty."""
    out = check_output_dir(path)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"{path}: another run is writing to this directory (it is locked); wait for it to "
                             "end or choose another output directory") from None
        yield out
    except BaseException:
        if created:  # a run that failed before writing anything (a full disk, a refusal) leaves no empty directory
            with contextlib.suppress(OSError):
                out.rmdir()  # (only if empty: whatever the run wrote is kept)
        raise
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def claim_run_dir(out: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse to start a fresh run over a previous one unless resuming or overwriting (call under the lock)."""
    if resume and overwrite:
        raise InputError("resume and overwrite exclude each other: resume continues the previous run, overwrite "
                         "replaces it")
    held = previous_run(out)
    if held is not None and not (resume or overwrite):
        raise InputError(f"{out} already holds {held}; resume it, overwrite it, or choose another output directory")
    for name in _run_names():  # before the work: every file the run writes can be written (or, to overwrite, removed)
        if not (overwrite and (out / name).is_symlink()):  # a link to be removed is not written through
            check_output_file(out / name)  # a FIFO, device, directory or dangling link is refused as such
    if overwrite:
        for f in run_files(out):
            f.unlink()  # regular files and links (the link itself, not what it points to)
