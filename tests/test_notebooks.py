"""Every teaching notebook in ``proofs_notebooks/`` runs top to bottom in a clean ``python3`` kernel.

The percent-format ``.py`` files are the source (jupytext); the paired ``.ipynb`` must hold the same code.
A failing assert or any exception in a cell fails the test (nbclient raises ``CellExecutionError``).
"""

from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

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


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_notebook_executes(source, tmp_path):
    nb = jupytext.read(source)
    client = NotebookClient(nb, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
