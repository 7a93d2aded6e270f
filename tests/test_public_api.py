"""Every import path docs/API.md lists as supported imports and has its names; every deprecated path still works,
warns with its new path, and is the new module itself (docs/API.md, CHANGELOG.md)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from margintheory import _compat

API = (Path(__file__).resolve().parents[1] / "docs" / "API.md").read_text(encoding="utf-8")
SUPPORTED = [(m, re.findall(r"`([\w.]+)`", names))
             for m, names in re.findall(r"^\| `(margintheory[\w.]*)` \| (.+) \|$",
                                        API.split("## Supported")[1].split("## Deprecated")[0], flags=re.M)]


def test_the_table_was_read():
    modules = [m for m, _ in SUPPORTED]
    assert len(modules) >= 25 and "margintheory" in modules and "margintheory.tasks.parity.checks" in modules


@pytest.mark.parametrize(("module", "names"), SUPPORTED, ids=[m for m, _ in SUPPORTED])
def test_supported_path_imports_with_its_names(module, names):
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert names and not missing, f"{module} lacks {missing}"


def test_every_moved_path_is_documented():
    for old, new in _compat.MOVED.items():
        short = old.rsplit(".", 1)[1]
        assert short in API and new.rsplit(".", 1)[1] in API, old


def test_every_moved_path_warns_and_is_the_new_module():
    # a fresh interpreter: the old names must not be in sys.modules already
    code = (
        "import importlib, sys, warnings\n"
        "from margintheory import _compat\n"
        "bad = []\n"
        "for old, new in _compat.MOVED.items():\n"
        "    with warnings.catch_warnings(record=True) as w:\n"
        "        warnings.simplefilter('always')\n"
        "        mod = importlib.import_module(old)\n"
        "    if mod is not importlib.import_module(new): bad.append(old + ' is not ' + new)\n"
        "    if not any(issubclass(x.category, DeprecationWarning) and new in str(x.message) for x in w):\n"
        "        bad.append(old + ' did not warn')\n"
        "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.parametrize(("package", "name"), [("margintheory.tasks.parity", "ParityNetwork"),
                                               ("margintheory.tasks.groups", "symmetric_group"),
                                               ("margintheory.tasks.modular_addition", "verify_network"),
                                               ("margintheory.verification", "verify_construction")])
def test_names_of_old_modules_forward_with_a_warning(package, name):
    mod = importlib.import_module(package)
    with pytest.warns(DeprecationWarning, match=re.escape(_compat.FORWARDED[package])):
        value = getattr(mod, name)
    assert value is getattr(importlib.import_module(_compat.FORWARDED[package]), name)


def test_an_unknown_name_is_still_an_attribute_error():
    import margintheory.tasks.parity as parity

    with pytest.raises(AttributeError):
        parity.no_such_name  # noqa: B018
