"""Citations: published papers by lemma / equation number and links into docs/theory.md only.

No internal tracking numbers ("issue 3"), no pointer to a theory file that is not in the repository, no names of
the paper-text files the developers read, no line numbers of those texts ("Shi 8038"): a reader can look none of
them up.  The scan covers the package, README, docs (and the docs-site tools), notebooks, benchmarks, tests and CI, and
the text that ``margintheory derive`` prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("margintheory", "docs", "proofs_notebooks", "benchmarks", "tests", "tools", ".ci", "README.md", "mkdocs.yml",
           "pyproject.toml")
SUFFIXES = {".py", ".md", ".ipynb", ".txt", ".json", ".toml", ".cfg", ".yml", ".yaml", ""}
SKIP_DIRS = {"__pycache__", ".ipynb_checkpoints"}

FORBIDDEN = {
    "internal tracking number": re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE),
    "paper-folder file number": re.compile(r"\bfile\s+00\d\b", re.IGNORECASE),
    "paper-folder file name": re.compile(r"\b00\d_[0-9a-f]{8,}\b|shared/papers"),
    "pointer to THEORY.md": re.compile(r"THEORY\.md"),
    "paper-text line number after an author": re.compile(
        r"\b(?:Shi|Edelman|Tian)(?:'s)?(?:\s+thesis)?,?\s+(?:lines?\s+|l\.\s*)?~?\d{3,5}\b"
    ),
    "paper-text line number": re.compile(r"\blines?\s+~?\d{2,5}\b", re.IGNORECASE),
}

# Each pattern must catch what it is for (so that a broken pattern cannot make the scan pass silently) ...
CAUGHT = {
    "internal tracking number": ["(issue 3)", "issues 3-6", "Issue #12"],
    "paper-folder file number": ["Tian, file 002", "(file 003)"],
    "paper-folder file name": ["003_f43d5cd3f489e262.txt", "../shared/papers"],
    "pointer to THEORY.md": ["THEORY.md section 2"],
    "paper-text line number after an author": ["Lemma C.14 (Shi 8038)", "Edelman 1558", "Shi thesis, 8083",
                                               "Shi line 8378", "Tian 356"],
    "paper-text line number": ["(line 1603)", "lines 140-153", "line ~8384", "Edelman D.2.1 at line 4790"],
}
# ... and must not fire on the citations the project uses.
ALLOWED = ["Lemma C.14, (C.10)", "Morwani et al. Thm 7.7", "Theorem C.22 = Theorem 4.9", "arXiv:2402.09469",
           "docs/theory.md#lemma-c14", "Eq. 65", "Table D.1", "App. D.2.1", "line length", "p = 1558"]


def _files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        if not path.exists():
            continue
        if path.is_file():
            files.append(path)
            continue
        for f in sorted(path.rglob("*")):
            if f.is_file() and f.suffix in SUFFIXES and not SKIP_DIRS.intersection(f.parts):
                files.append(f)
    return [f for f in files if f.resolve() != Path(__file__).resolve()]


def _hits(text: str) -> list[tuple[str, str]]:
    return [(what, m.group(0)) for what, pattern in FORBIDDEN.items() for m in pattern.finditer(text)]


@pytest.mark.parametrize("what", sorted(FORBIDDEN))
def test_each_pattern_catches_its_examples(what):
    for example in CAUGHT[what]:
        assert FORBIDDEN[what].search(example), (what, example)


def test_patterns_leave_proper_citations_alone():
    assert [(text, _hits(text)) for text in ALLOWED if _hits(text)] == []


def test_scan_covers_the_repository():
    files = {f.relative_to(ROOT).as_posix() for f in _files()}
    for expected in ("README.md", "docs/theory.md", "margintheory/core/theory.py",
                     "margintheory/symbolic/bound_chain.py",
                     "benchmarks/bench_tasks.py"):
        assert expected in files
    assert any(f.endswith(".ipynb") for f in files)


def test_no_internal_numbers_file_names_or_line_numbers():
    found = []
    for f in _files():
        for lineno, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            found += [f"{f.relative_to(ROOT)}:{lineno}: {what}: {hit!r}" for what, hit in _hits(line)]
    assert not found, "cite the paper's lemma/equation numbers and docs/theory.md instead:\n" + "\n".join(found)


def test_derive_output_cites_lemmas_not_lines():
    from margintheory.symbolic.bound_chain import gamma_star_derivation
    from margintheory.symbolic.exact import per_frequency_sum_derivation
    from margintheory.symbolic.fourier_reduction import fourier_derivation
    from margintheory.symbolic.identities import cosine_expansion_derivation, sum_to_product_derivation

    texts = [gamma_star_derivation(k=3, p=5).render("text"), per_frequency_sum_derivation(p_max=7).render("text"),
             fourier_derivation(3, 2).render("text"), sum_to_product_derivation(3).render("text"),
             cosine_expansion_derivation(2).render("text")]
    assert [hit for text in texts for hit in _hits(text)] == []
    assert all("Lemma C." in text or "(C." in text for text in texts)


def test_theory_page_has_the_anchors_the_code_links():
    page = (ROOT / "docs" / "theory.md").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', page))
    linked = set()
    for f in _files():
        linked |= set(re.findall(r"theory\.md#([a-z0-9-]+)", f.read_text(encoding="utf-8", errors="replace")))
    assert linked, "nothing links into docs/theory.md"
    assert sorted(linked - anchors) == []
    for ref in ("arXiv:2402.09469", "arXiv:2311.07568", "arXiv:2410.01779", "arXiv:1810.05369"):
        assert ref in page
