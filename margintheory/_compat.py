"""Import paths of earlier releases, kept for one minor release with a ``DeprecationWarning``.

Version 0.1.0 had the core modules at the package root (``margintheory.theory``, ``margintheory.network``, ...)
and the tasks as flat modules (``margintheory.tasks.parity``, ``margintheory.tasks.cogo_task``, ...).  They moved
into layer packages (docs/ARCHITECTURE.md); ``import margintheory.theory`` still works in 0.2.x and warns with the
new path.  The old paths are removed in 0.3.0 (CHANGELOG.md, docs/API.md).

The aliases are a meta-path finder: the old module name becomes the new module object itself (``sys.modules`` holds
the same object under both names), so a monkeypatch through either name affects both, as before the move.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

REMOVED_IN = "0.3.0"

# old dotted name -> new dotted name (0.1.0 -> 0.2.0)
MOVED: dict[str, str] = {
    "margintheory._kernels": "margintheory.backends.kernels",
    "margintheory.checks": "margintheory.core.checks",
    "margintheory.construction": "margintheory.core.construction",
    "margintheory.network": "margintheory.core.network",
    "margintheory.phase_measures": "margintheory.core.phase_measures",
    "margintheory.problems": "margintheory.core.problems",
    "margintheory.theory": "margintheory.core.theory",
    "margintheory.symbolic.cyclotomic": "margintheory.core.cyclotomic",
    "margintheory.tasks.representations": "margintheory.core.representations",
    "margintheory.fourier": "margintheory.engines.fourier",
    "margintheory.margins": "margintheory.engines.margins",
    "margintheory.report": "margintheory.presentation.report",
    "margintheory.schema": "margintheory.presentation.schema",
    "margintheory.atomic": "margintheory.runtime.atomic",
    "margintheory.budget": "margintheory.runtime.budget",
    "margintheory.process": "margintheory.runtime.process",
    "margintheory.progress": "margintheory.runtime.progress",
    "margintheory.tasks.base": "margintheory.verification.base",
    "margintheory.tasks.modular_addition_compact": "margintheory.tasks.modular_addition.compact",
    "margintheory.tasks.group_task": "margintheory.tasks.groups.task",
    "margintheory.tasks.group_margin": "margintheory.tasks.groups.margin",
    "margintheory.tasks.group_condition_checks": "margintheory.tasks.groups.condition_checks",
    "margintheory.tasks.group_construction_checks": "margintheory.tasks.groups.construction_checks",
    "margintheory.tasks.group_representation_checks": "margintheory.tasks.groups.representation_checks",
    "margintheory.tasks.cogo_task": "margintheory.tasks.cogo.task",
    "margintheory.tasks.cogo_algebra": "margintheory.tasks.cogo.algebra",
    "margintheory.tasks.cogo_algebra_checks": "margintheory.tasks.cogo.algebra_checks",
    "margintheory.tasks.cogo_constructions": "margintheory.tasks.cogo.constructions",
    "margintheory.tasks.cogo_lemma1_checks": "margintheory.tasks.cogo.lemma1_checks",
    "margintheory.tasks.cogo_margin": "margintheory.tasks.cogo.margin",
}

# Old modules whose name is now a package: their public names are read from the package's main module, with the
# same warning (``from margintheory.tasks.parity import ParityNetwork`` keeps working).
FORWARDED: dict[str, str] = {
    "margintheory.tasks.modular_addition": "margintheory.tasks.modular_addition.checks",
    "margintheory.tasks.parity": "margintheory.tasks.parity.checks",
    "margintheory.tasks.groups": "margintheory.core.groups",
    "margintheory.verification": "margintheory.tasks.modular_addition.checks",
}


def moved_warning(old: str, new: str, stacklevel: int = 3) -> None:
    warnings.warn(f"{old} moved to {new} in margintheory 0.2.0; the old path is removed in {REMOVED_IN}",
                  DeprecationWarning, stacklevel=stacklevel)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        moved_warning(module.__name__, self.new)
        # the import system returns what sys.modules holds after exec: the new module, under the old name too
        sys.modules[module.__name__] = importlib.import_module(self.new)


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        return None if new is None else importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())


def forwarded_attribute(package: str, name: str) -> object:
    """A package's module-level ``__getattr__`` for the names its 0.1.0 module had (``AttributeError`` otherwise)."""
    target = FORWARDED[package]
    if name.startswith("__"):
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module = importlib.import_module(target)
    if not hasattr(module, name):
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    moved_warning(f"{package}.{name}", f"{target}.{name}", stacklevel=4)  # the caller of __getattr__
    return getattr(module, name)
