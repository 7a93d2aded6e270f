"""The README is a short front page (what the package is, the two set-up commands, a tour with one example per
command, where to go next) and the reference is on the documentation site (``docs/*.md``).  Checked here without
building anything: its length, the two commands that ``.ci/run`` and a new user copy, one example per command, links
that reach files of the repository, and a date on every section of measured figures.  (The site itself is built and
its links and anchors checked by tests/test_docs.py.)"""

from __future__ import annotations

import re
from pathlib import Path

from margintheory.cli import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def test_the_readme_is_short_and_has_the_two_commands():
    lines = README.splitlines()
    assert len(lines) <= 300, len(lines)
    commands = {}
    for marker in ("main-command", "test-command"):
        # what .ci/run's awk reads: the first line starting with "pip install" after the marker
        after = README.split(f"<!-- {marker} -->", 1)[1]
        commands[marker] = next(line for line in after.splitlines() if line.startswith("pip install"))
    assert commands["main-command"] == "pip install . && margintheory verify --p 7 --k 3"
    assert commands["test-command"].startswith('pip install ".[test,docs]" && python -m pytest')
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "<!-- test-command -->" in ci and "README.md" in ci


def test_the_tour_has_an_example_of_every_command():
    tour = README.split("## A ten-minute tour", 1)[1].split("\n## ", 1)[0]
    for name in COMMANDS:
        assert f"$ margintheory {name}" in tour, name


def test_links_of_the_readme_reach_files_of_the_repository():
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [link.split("#", 1)[0] for link in links if not re.match(r"[a-z]+://", link)]
    assert len(local) > 10
    missing = [link for link in local if link and not (ROOT / link).exists()]
    assert not missing, missing


def test_every_section_of_measured_figures_says_when():
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    assert len(sections) >= 10
    undated = [s.splitlines()[0] for s in sections if not DATE.search(s) and "not measured" not in s.splitlines()[0]]
    assert not undated, undated
