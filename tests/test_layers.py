"""The package draws as layers: every module belongs to one layer, imports only its own layer or lower ones, the
imports form no circle, and the package root stays small (docs/ARCHITECTURE.md draws the same picture).

Every import counts, at module level, inside functions and under ``TYPE_CHECKING``: a lazy import from a lower
layer to a higher one is still a dependency the lower layer cannot be understood without.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "margintheory"

# Lowest first.  A module may import from its own layer and from every layer listed before it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("errors", "_version", "_compat", "data")),
    ("runtime services", ("runtime",)),
    ("I/O and execution", ("network_io", "execution")),
    ("core objects", ("core",)),
    ("array backends", ("backends",)),
    # "engines and proofs" is four layers in this order: a solver may use a certificate, a certificate the symbolic
    # proofs, never the other way (docs/ARCHITECTURE.md)
    ("engines", ("engines",)),
    ("symbolic proofs", ("symbolic",)),
    ("certificates", ("certificate",)),
    ("solvers", ("solvers",)),
    ("tasks", ("tasks",)),
    ("training", ("training",)),
    ("verification", ("verification",)),
    ("presentation", ("presentation",)),
    ("sweeps", ("sweep",)),
    ("reproductions", ("reproduce",)),
    ("commands and entry points", ("commands", "cli", "testing", "torch", "")),
]
MAX_ROOT_MODULES = 8


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    """Index into LAYERS of a dotted ``margintheory...`` name (the longest matching prefix wins)."""
    rest = module.split(".", 1)[1] if "." in module else ""
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = rest == prefix or rest.startswith(prefix + ".") or (prefix == "" and rest == "")
            if matches and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS (and docs/ARCHITECTURE.md)")
    return best


def _resolve(target: str) -> str:
    """The module an import names (``from margintheory.core import theory`` names ``margintheory.core.theory``)."""
    path = PACKAGE.parent / target.replace(".", "/")
    return target if path.with_suffix(".py").exists() or path.is_dir() else target.rsplit(".", 1)[0]


def _imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        targets = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                raise AssertionError(f"{module}: relative import (write the absolute margintheory... name)")
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("margintheory"):
                targets.update(_resolve(f"{node.module}.{alias.name}") for alias in node.names)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == "margintheory")
        targets.discard(module)
    return graph


GRAPH = _imports()


def test_every_module_has_a_layer():
    assert len(GRAPH) > 100 and "margintheory.cli" in GRAPH  # the walk found the package, not an empty graph
    unplaced = []
    for module in GRAPH:
        try:
            _layer(module)
        except AssertionError as exc:
            unplaced.append(str(exc))
    assert not unplaced, "\n".join(unplaced)


def test_lower_layers_never_import_higher_ones():
    upward = [f"{a} ({LAYERS[_layer(a)][0]}) imports {b} ({LAYERS[_layer(b)][0]})"
              for a, targets in GRAPH.items() for b in sorted(targets) if _layer(b) > _layer(a)]
    assert not upward, "\n".join(upward)


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    # a package's __init__ importing its own submodules (and they the package) is not a circle of design
    graph = {a: {b for b in targets if not a.startswith(b + ".") and not b.startswith(a + ".")}
             for a, targets in GRAPH.items()}
    assert not _circles(graph)


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("upward", [("margintheory.core.theory", "margintheory.tasks.parity.checks"),
                                    ("margintheory.engines.margins", "margintheory.verification"),
                                    ("margintheory.certificate.maxmin", "margintheory.solvers.class_weighted"),
                                    ("margintheory.symbolic.every_p", "margintheory.certificate.upper_bound"),
                                    ("margintheory.engines.margins", "margintheory.symbolic.exact")])
def test_an_upward_import_would_be_caught(upward):
    a, b = upward
    assert _layer(b) > _layer(a)


def test_the_package_root_is_small():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= MAX_ROOT_MODULES, modules


def test_the_library_never_imports_the_command_line():
    for module, targets in GRAPH.items():
        if _layer(module) < len(LAYERS) - 1:
            assert not {t for t in targets if t.startswith(("margintheory.cli", "margintheory.commands"))}, module
