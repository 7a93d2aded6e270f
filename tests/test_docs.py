"""The documentation site builds offline with ``mkdocs build --strict`` (warnings are errors) and holds what it
promises: its written pages (``docs/*.md``: home, commands, network files, findings, measured figures, ...), the CLI
reference generated from the parsers, the API reference from the docstrings and the notebooks with their outputs.

Needs the ``docs`` extra (the README's test command installs it); skipped without mkdocs.
"""

from __future__ import annotations

import html as htmllib
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("mkdocs", reason="docs extra not installed: pip install '.[docs]'")
pytest.importorskip("mkdocs_jupyter", reason="docs extra not installed: pip install '.[docs]'")

ROOT = Path(__file__).resolve().parent.parent


def _text(path: Path) -> str:
    html = path.read_text(encoding="utf-8")
    html = re.sub(r"<script.*?</script>|<style.*?</style>", "", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def build_site(out: Path) -> Path:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING -" not in proc.stderr, proc.stderr[-4000:]
    return out


def test_the_documentation_site(tmp_path):
    """One test item builds the site (about a minute, the notebooks executed) and runs every check on it: separate
    items would build it once per parallel test worker."""
    site = build_site(tmp_path / "site")
    failures = []
    for check in (check_pages_exist, check_cli_reference_is_generated_from_the_parsers,
                  check_notebooks_are_rendered_with_their_outputs, check_home_findings_benchmarks_and_api,
                  check_internal_links_and_anchors_resolve):
        try:
            check(site)
        except AssertionError as exc:
            failures.append(f"{check.__name__}: {exc}")
    assert not failures, "\n".join(failures)


def check_pages_exist(site: Path) -> None:
    for page in ("index.html", "theory/index.html", "findings/index.html", "benchmarks/index.html",
                 "commands/index.html", "network-files/index.html", "results/index.html", "backends/index.html",
                 "sweeps/index.html", "smallest-networks/index.html", "python/index.html", "checks/index.html",
                 "failures/index.html", "cli/index.html", "TRAINING/index.html", "api/core/index.html",
                 "api/network_io/index.html", "api/testing/index.html", "notebooks/01_k2_from_scratch/index.html"):
        assert (site / page).stat().st_size > 1000, page


def check_cli_reference_is_generated_from_the_parsers(site: Path) -> None:
    from margintheory.cli import COMMANDS, build_parser

    text = _text(site / "cli" / "index.html")
    for name in COMMANDS:
        assert f"margintheory {name}" in text
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, parser in sub.choices.items():
        for action in parser._actions:
            for flag in [] if action.__class__.__name__ == "_HelpAction" else action.option_strings:
                assert flag in text, f"{name} {flag} missing from the CLI reference"


def check_notebooks_are_rendered_with_their_outputs(site: Path) -> None:
    text = _text(site / "notebooks" / "01_k2_from_scratch" / "index.html")
    assert "best of 200 random unit neurons" in text  # printed by a cell, not present in the source
    for nb in sorted((ROOT / "proofs_notebooks").glob("[0-9][0-9]_*.py")):
        html = (site / "notebooks" / nb.stem / "index.html").read_text(encoding="utf-8")
        assert "jp-OutputArea-output" in html, f"{nb.stem} rendered without outputs"


def check_home_findings_benchmarks_and_api(site: Path) -> None:
    home = _text(site / "index.html")
    assert "gamma*(p, k)" in home and "Network files" in home and "157.8 s" in home
    findings = _text(site / "findings" / "index.html")
    assert "-1/2" in findings and "Findings" in findings
    assert "bare GEMM" in _text(site / "benchmarks" / "index.html")
    assert "weights-only" in _text(site / "network-files" / "index.html")
    assert "max_margin_interval" in _text(site / "commands" / "index.html")
    api = _text(site / "api" / "network_io" / "index.html")
    assert "read_network_arrays" in api and "weights-only" in api
    assert "perturbed_constructions" in _text(site / "api" / "testing" / "index.html")
    assert ":class:" not in api  # Sphinx roles are rendered as code


def check_internal_links_and_anchors_resolve(site: Path) -> None:
    """Every relative link and image of every page reaches a file of the site, and every #fragment an id of its
    target page (the notebooks' tables of contents once pointed at anchors their headings did not have).
    ``404.html`` is left out: mkdocs writes its links from the server root."""
    pages = [p for p in site.rglob("*.html") if p.name != "404.html" or p.parent != site]
    ids = {p: set(re.findall(r'\sid="([^"]+)"', p.read_text(encoding="utf-8"))) for p in pages}
    broken = []
    for page in pages:
        for url in re.findall(r'\s(?:href|src)="([^"]*)"', page.read_text(encoding="utf-8")):
            parts = urlsplit(htmllib.unescape(url))
            if parts.scheme or url.startswith(("//", "mailto:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {url}")
            elif parts.fragment and target in ids and parts.fragment not in ids[target]:
                broken.append(f"{page.relative_to(site)}: {url} (no such anchor)")
    assert len(pages) > 15 and not broken, broken[:20]
