"""Keep native solver banners off the process's standard output.

highspy prints its licence banner from C++ on file descriptor 1 when a ``Highs`` object is created, before any
option (``output_flag``) can be passed; under ``--json`` that text would precede the JSON document.  The context
manager below points descriptor 1 at ``/dev/null`` for the duration of a solver call (Python's ``sys.stdout`` is
flushed first and is untouched otherwise).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def native_stdout_silenced() -> Iterator[None]:
    """Redirect file descriptor 1 to ``/dev/null`` while the block runs (no-op if descriptor 1 is unusable)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                yield
            finally:
                os.dup2(saved, 1)
    finally:
        os.close(saved)
