"""The library never sees the command line: no argparse, no ``margintheory.cli``, no flag names in its errors;
tasks take problem objects and typed options; problem objects validate once."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import margintheory
from margintheory import CoGO, GroupComposition, ModularAddition, SparseParity, verify
from margintheory.errors import InputError, RefusedError

PACKAGE = Path(margintheory.__file__).resolve().parent
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _library_modules() -> list[Path]:
    return [f for f in sorted(PACKAGE.rglob("*.py"))
            if f.name != "cli.py" and "commands" not in f.relative_to(PACKAGE).parts]


def _imported_names(tree: ast.AST, path: Path) -> set[str]:
    package = ".".join(("margintheory",) + path.relative_to(PACKAGE).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_walk_finds_the_library():
    files = {f.relative_to(PACKAGE).as_posix() for f in _library_modules()}
    assert {"tasks/modular_addition/checks.py", "verification/__init__.py", "training/trainer.py",
            "solvers/width.py"} <= files
    assert not any(f.startswith("commands/") or f == "cli.py" for f in files)


@pytest.mark.parametrize("path", _library_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_library_module_imports_argparse_or_the_cli(path):
    names = _imported_names(ast.parse(path.read_text()), path)
    forbidden = {n for n in names if n == "argparse" or n.startswith("argparse.")
                 or n in ("margintheory.cli", "margintheory.commands") or n.startswith("margintheory.cli.")
                 or n.startswith("margintheory.commands.")}
    assert not forbidden, f"{path.name} imports {sorted(forbidden)}"


def _raised_strings(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            out += [c.value for c in ast.walk(node.exc) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return out


@pytest.mark.parametrize("path", _library_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_library_errors_name_no_flags(path):
    flags = [s for s in _raised_strings(ast.parse(path.read_text())) if FLAG.search(s)]
    assert not flags, f"{path.name} raises messages naming command-line flags: {flags}"


def test_the_import_walk_catches_a_violation(tmp_path):
    """The walker itself: relative and absolute imports of argparse / the CLI are found."""
    fake = PACKAGE / "tasks" / "fake.py"
    src = "import argparse\nfrom .. import cli\nfrom margintheory.commands._options import byte_size\n"
    names = _imported_names(ast.parse(src), fake)
    assert {"argparse", "margintheory.cli", "margintheory.commands._options"} <= names
    assert _raised_strings(ast.parse("raise InputError(f'--p must be {x}')")) == ["--p must be "]


def test_problem_objects_validate_once_and_are_immutable():
    prob = ModularAddition(7, 3)
    assert prob.parameters() == {"p": 7, "k": 3} and prob.theorem_width == 96 and prob.frequencies == (1, 2, 3)
    assert str(prob.gamma_star_exact) == "1/224" and prob.gamma_star == pytest.approx(1 / 224, rel=1e-15)
    assert prob.hypothesis == "odd-prime" and ModularAddition(9, 2).hypothesis == "odd-composite"
    even = ModularAddition(6, 2)
    assert even.gamma_star is None and even.theorem_width is None and "even" in even.gamma_star_note
    with pytest.raises(dataclasses.FrozenInstanceError):
        prob.p = 11  # type: ignore[misc]
    for bad in [(2, 2), (7, 0), (7.0, 3), (True, 3), ("7", 3)]:
        with pytest.raises(InputError):
            ModularAddition(*bad)
    assert SparseParity(10, 4).theorem_width == 8
    with pytest.raises(InputError):
        SparseParity(3, 5)
    assert GroupComposition("s_4") == GroupComposition("S4") and GroupComposition("S4").order == 24
    with pytest.raises(InputError):
        GroupComposition("Q9")
    with pytest.raises(InputError):
        CoGO(1000, "F6")
    with pytest.raises(InputError):
        CoGO(7, "F7")
    with pytest.raises(InputError):
        CoGO(7, "F6", nu_angle=float("nan"))


def test_library_verify_takes_typed_options_and_refuses_unused_ones():
    res = verify(SparseParity(5, 3))
    assert res.verdict == "verified" and res.task == "parity" and res.parameters == {"n": 5, "k": 3}
    with pytest.raises(InputError, match="exact"):
        verify(SparseParity(5, 3), exact=True)
    with pytest.raises(InputError, match="rtol"):
        verify(ModularAddition(5, 2), rtol=2.0)
    with pytest.raises(InputError, match="network"):
        verify(ModularAddition(5, 2), min_share=0.1)
    with pytest.raises(InputError, match="construction"):
        verify(CoGO(7))
    with pytest.raises(InputError, match="problem"):
        verify((5, 2))  # type: ignore[arg-type]


def test_refusals_name_the_library_budget_and_the_cli_translates_it(capsys):
    with pytest.raises(RefusedError) as exc:
        verify(ModularAddition(31, 4), max_seconds=1e-3)
    assert exc.value.parameter == "max_seconds" and "--" not in str(exc.value)
    from margintheory.cli import main

    assert main(["verify", "--p", "31", "--k", "4", "--max-seconds", "0.001"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "max_seconds" in err and "--force" in err


def test_trainer_progress_is_a_callback():
    """The trainer draws nothing itself: it calls the callback it is given with every recorded row."""
    from margintheory.training.trainer import TrainConfig, train

    rows: list[tuple[int, int]] = []
    train(TrainConfig(p=5, k=2, width=8, steps=6, log_every=2, checkpoint_every=100),
          progress=lambda row, target: rows.append((int(row["step"]), target)))
    assert rows == [(2, 6), (4, 6), (6, 6)]


def test_cli_translates_library_parameters_into_flags(tmp_path, capsys):
    from margintheory.cli import main

    shared = tmp_path / "shared.npz"
    np.savez(shared, emb=np.zeros((5, 5)), out=np.zeros((5, 5)))
    assert main(["verify", "--network", str(shared), "--names", "U=emb.T,W=out.T"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "number of inputs k" in err and "--k" in err
    odd = tmp_path / "odd.npz"
    np.savez(odd, fc=np.zeros((5, 3)))
    assert main(["verify", "--network", str(odd)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and '--names "U=KEY,W=KEY"' in err
