"""The teaching notebooks in ``proofs_notebooks/``: the percent-format ``.py`` files are the source (jupytext); the
paired ``.ipynb`` must hold the same code.

That every notebook runs top to bottom in a clean ``python3`` kernel is tested once, by the documentation build
(``tests/test_docs.py``): its hook executes each notebook with ``allow_errors=False``, so a failing assert or any
exception in a cell fails the build, and the test checks that every page was rendered with its outputs.
Executing them a second time here cost a minute of the suite's time and tested nothing more.
"""

from pathlib import Path

import jupytext
import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "proofs_notebooks"
SOURCES = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.py"))


def test_at_least_four_notebooks():
    assert len(SOURCES) >= 4


def _code_cells(nb) -> list[str]:
    return [c.source.strip() for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_paired_ipynb_in_sync(source):
    paired = source.with_suffix(".ipynb")
    assert paired.exists(), f"run: jupytext --to ipynb {source.name}"
    assert _code_cells(nbformat.read(paired, as_version=4)) == _code_cells(jupytext.read(source)), \
        f"{paired.name} is stale: run jupytext --to ipynb {source.name}"
