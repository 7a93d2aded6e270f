"""Pages of the documentation site generated at build time (mkdocs hooks; see mkdocs.yml).

The written pages (the home page, commands, findings, measured figures, ...) are real files of ``docs/``; the README
is the repository's short front page and is not part of the site.

* ``cli.md``: every sub-command's usage and options, read from ``margintheory.cli.build_parser()``.
* ``api/*.md``: one page per sub-package with a mkdocstrings directive per module (found by walking the package).
* ``notebooks/*.ipynb``: the jupytext sources of ``proofs_notebooks/`` executed with nbclient (two at a time; any
  error in a cell fails the build) and rendered with their outputs by mkdocs-jupyter; their tables of contents are
  pointed at the headings' real anchors (:func:`fix_notebook_toc`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "proofs_notebooks"
PACKAGE = ROOT / "margintheory"
API_GROUPS = {
    "core": ("Core objects: closed forms, problems, networks, results, constructions", ["core", "errors"]),
    "runtime": ("Run-time services: atomic files, budgets, progress, streams", ["runtime"]),
    "network_io": ("Network files", ["network_io", "torch"]),
    "engines": ("Margin engines and array backends", ["engines", "backends"]),
    "symbolic": ("Exact derivations", ["symbolic"]),
    "solvers": ("Solvers", ["solvers"]),
    "certificate": ("Certificates: the proved upper bound, certificate files and their checker", ["certificate"]),
    "backends": ("Array backends: numpy + numba, JAX (CPU, GPU)", ["backends"]),
    "training": ("Training and analysis", ["training"]),
    "tasks": ("Tasks: modular addition, parity, groups, CoGO", ["tasks"]),
    "verification": ("Verification, presentation and the command line", ["verification", "presentation", "cli"]),
    "testing": ("Hypothesis strategies", ["testing"]),
    "sweep": ("Sweeps: grids of runs on dask.distributed, the results store, the split check",
              ["execution", "sweep"]),
    "reproduce": ("Reproductions: the papers' experiments as recipes", ["reproduce"]),
}
_tmp: list[Path] = []


def _option_row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}`"
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        arg = "{" + ", ".join(map(str, action.choices)) + "}"
    elif action.nargs == 0:
        arg = ""
    else:
        arg = str(action.metavar or action.dest.upper())
    helptext = parser._get_formatter()._expand_help(action) if action.help else ""
    default = "" if action.default in (None, False, argparse.SUPPRESS) or action.nargs == 0 else f"`{action.default}`"
    cell = lambda s: s.replace("|", "\\|").replace("\n", " ")  # noqa: E731
    return f"| {names} | {cell(arg)} | {cell(default)} | {cell(helptext)} |"


def cli_page() -> str:
    from margintheory.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = ["# Command line", "", "Generated from the argparse parsers of `margintheory` when the site is built.",
             "Exit codes: 0 verified, 1 refuted, 2 bad input / refused / solver failure.", "",
             "```text", parser.format_usage().strip(), "```", ""]
    for name, sp in sub.choices.items():
        lines += _command_section(f"margintheory {name}", sp, "##")
    return "\n".join(lines)


def _command_section(title: str, sp: argparse.ArgumentParser, level: str) -> list[str]:
    """A command's usage and option table; a command with sub-commands (``sweep``) gets one sub-section each."""
    lines = [f"{level} `{title}`", "", (sp.description or "").strip(), "", "```text", sp.format_usage().strip(), "```",
             ""]
    nested = [a for a in sp._actions if isinstance(a, argparse._SubParsersAction)]
    options = [a for a in sp._actions if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]
    if options:
        lines += ["| option | argument | default | meaning |", "|---|---|---|---|"]
        lines += [_option_row(sp, a) for a in options]
        lines.append("")
    for action in nested:
        for name, inner in action.choices.items():
            lines += _command_section(f"{title} {name}", inner, level + "#")
    return lines


def _modules(name: str) -> list[str]:
    """``margintheory.<name>`` and, for a sub-package, its public modules (files not starting with ``_``)."""
    path = PACKAGE / name
    if path.with_suffix(".py").exists():
        return [f"margintheory.{name}"]
    mods = [f"margintheory.{name}"]
    for file in sorted(path.rglob("*.py")):
        rel = file.relative_to(PACKAGE).with_suffix("")
        if not any(part.startswith("_") for part in rel.parts):
            mods.append("margintheory." + ".".join(rel.parts))
    return mods


def api_page(key: str) -> str:
    title, names = API_GROUPS[key]
    lines = [f"# {title}", ""]
    for name in names:
        for mod in _modules(name):
            lines += [f"::: {mod}", ""]
    return "\n".join(lines)


def api_index() -> str:
    lines = ["# API reference", "", "Generated from the docstrings when the site is built; every function cites the",
             "lemma it implements (see [the theory page](../theory.md)).", ""]
    lines += [f"* [{title}]({key}.md)" for key, (title, _) in API_GROUPS.items()]
    return "\n".join(lines) + "\n"


def execute_notebooks(out_dir: Path) -> list[Path]:
    """Run every jupytext source of ``proofs_notebooks/`` in a fresh kernel; write the executed ``.ipynb``."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    def run(source: Path) -> Path:
        nb = jupytext.read(source)
        NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
        target = out_dir / "notebooks" / source.with_suffix(".ipynb").name
        nbformat.write(nb, target)
        return target

    sources = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
    (out_dir / "notebooks").mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(run, sources))


@event_priority(50)  # before mkdocs-jupyter's on_files, which turns the notebooks into pages
def on_files(files: Files, config) -> Files:  # noqa: ANN001 - mkdocs passes its config object
    pages = {"cli.md": cli_page(), "api/index.md": api_index()}
    pages.update({f"api/{key}.md": api_page(key) for key in API_GROUPS})
    for uri, content in pages.items():
        files.append(File.generated(config, uri, content=content))
    out = Path(tempfile.mkdtemp(prefix="margintheory-docs-"))
    _tmp.append(out)
    for nb in execute_notebooks(out):
        files.append(File(f"notebooks/{nb.name}", str(out), config["site_dir"], config["use_directory_urls"]))
    return files


_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(~?)([\w.]+)</code>")


_AUTOREF = re.compile(r"<autoref (?P<attrs>[^>]*)>(?P<title>.*?)</autoref>", flags=re.S)
_IDENTIFIER = re.compile(r'identifier="([^"]*)"')


def _literal_ref(m: re.Match[str]) -> str:
    if re.search(r"\boptional\b", m.group("attrs")):
        return m.group(0)  # a signature or type cross-reference of mkdocstrings: left to autorefs
    ident = _IDENTIFIER.search(m.group("attrs"))
    return f"[{m.group('title')}][{ident.group(1) if ident else ''}]"


_HEADING = re.compile(r'<h([1-6])\b[^>]*\bid="([^"]+)"[^>]*>(.*?)</h\1>', flags=re.S)
_ANCHOR_LINK = re.compile(r'<a class="anchor-link"[^>]*>.*?</a>', flags=re.S)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _within(small: list[str], big: list[str]) -> bool:
    rest = iter(big)
    return all(word in rest for word in small)  # ``small`` is a subsequence of ``big``


def _toc_entries(items) -> list:  # noqa: ANN001 - mkdocs AnchorLink objects
    return [e for item in items for e in [item, *_toc_entries(item.children)]]


def fix_notebook_toc(html: str, toc) -> int:  # noqa: ANN001 - mkdocs TableOfContents
    """Point a notebook page's table of contents at its headings' anchors; returns the number of entries changed.

    mkdocs-jupyter builds the table of contents from the Markdown source and drops code spans and math from the
    headings (``with `k = 2`, from scratch`` becomes ``with , from scratch``, anchor ``...-with-from-scratch``) while
    nbconvert's heading ids keep them (``...-with-k-2-from-scratch``): every such entry linked nowhere. Each entry
    is matched, in order, to the next heading with the same id, else the next whose id contains the entry's words in
    order, and takes that heading's id and full text."""
    headings = [(m.group(2), m.group(3)) for m in _HEADING.finditer(html)]
    changed, start = 0, 0
    for entry in _toc_entries(toc):
        rest = range(start, len(headings))
        j = next((i for i in rest if headings[i][0] == entry.id), None)
        if j is None:
            j = next((i for i in rest if _within(_words(entry.id), _words(headings[i][0]))), None)
        if j is None:
            continue
        if headings[j][0] != entry.id:
            entry.id, entry.title = headings[j][0], _ANCHOR_LINK.sub("", headings[j][1]).strip()
            changed += 1
        start = j + 1
    return changed


def on_page_content(html: str, page, config, files) -> str:  # noqa: ANN001
    """Docstrings cite objects with Sphinx roles (``:class:`~a.b.C```): show them as code (``C`` for ``~``).

    Docstrings are plain text with formulas, where ``G[r][s]`` is an index, not a Markdown reference link: such
    non-optional cross-references (mkdocstrings' own, for signatures, are marked optional) are put back as text.
    Notebook pages get their table of contents fixed (:func:`fix_notebook_toc`)."""
    if page.file.src_uri.endswith(".ipynb"):
        fix_notebook_toc(html, page.toc)
    html = _AUTOREF.sub(_literal_ref, html)
    return _ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>", html)


def on_post_build(config) -> None:  # noqa: ANN001
    while _tmp:
        shutil.rmtree(_tmp.pop(), ignore_errors=True)
