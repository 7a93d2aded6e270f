"""Small functions: no function in ``margintheory/`` is longer than :data:`MAX_LINES` lines (an ast walk, so nested
functions and methods count too), except the few listed in :data:`JUSTIFIED` with the reason."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "margintheory"
MAX_LINES = 60

#: (module, function) -> why it stays one function
JUSTIFIED = {
    ("network_io/weights_only_pickle.py", "run"): (
        "the restricted unpickler's opcode dispatch: one branch per allowed opcode, read top to bottom against "
        "pickle.py when auditing what a weights-only file can do; splitting it would scatter the allow-list"
    ),
}


def long_functions(max_lines: int = MAX_LINES) -> dict[tuple[str, str], int]:
    """``(module, function) -> lines`` of every function longer than ``max_lines`` (decorators excluded)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > max_lines:
                    out[(path.relative_to(PACKAGE).as_posix(), node.name)] = lines
    return out


def test_no_function_is_longer_than_60_lines():
    found = long_functions()
    unjustified = {key: n for key, n in found.items() if key not in JUSTIFIED}
    assert not unjustified, f"functions over {MAX_LINES} lines (split them, or justify here): {unjustified}"
    stale = set(JUSTIFIED) - set(found)
    assert not stale, f"justified but no longer long (remove from JUSTIFIED): {stale}"


def test_the_walk_sees_long_functions(tmp_path, monkeypatch):
    """The measure itself: a 61-line function is reported, a 60-line one is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(59))
    (tmp_path / "m.py").write_text(f"def ok():\n{body}\n\n\ndef long():\n{body}\n    return x0\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path, raising=False)
    import tests.test_function_length as me

    monkeypatch.setattr(me, "PACKAGE", tmp_path)
    assert me.long_functions() == {("m.py", "long"): 61}
