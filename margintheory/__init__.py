"""margintheory: verify the max-margin theory of one-hidden-layer polynomial networks.

Public API (the command line is a thin layer over it)::

    from margintheory import verify, ModularAddition
    result = verify(ModularAddition(7, 3))        # VerificationResult: verdict, checks, common fields
    result.verdict, result.normalized_margin, result.gamma_star, result.to_dict()
    solve(ModularAddition(5, 2), SolveOptions(method="single-neuron"))   # the numeric bracket, same result shape

Layers, lowest first (docs/ARCHITECTURE.md; ``tests/test_layers.py`` enforces that none imports a higher one):

* ``runtime``       atomic files, memory/time budgets, progress, process streams.
* ``network_io``    network files (``.npz``, ``.safetensors``, PyTorch without torch).
* ``core``          closed forms (``theory``), problem objects, the network, the result shape (``checks``), the
                    construction of Lemmas C.16-C.18 and the per-frequency phase measures.
* ``backends``      array kernels; ``engines`` (exhaustive margin, Fourier tools), ``symbolic``, ``certificate``,
                    ``solvers``: engines and proofs.
* ``tasks``         modular addition, parity, groups, CoGO; ``training``; ``verification`` (``verify``).
* ``presentation``  tables and the JSON Schema; ``cli`` / ``commands`` the command line (the only modules that know
                    about flags).
"""


from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from margintheory import _compat
from margintheory._version import __version__

_compat.install()  # the 0.1.0 import paths, deprecated (docs/API.md)

__all__ = [
    "Check", "CoGO", "GroupComposition", "ModularAddition", "ModularAdditionEveryP", "PolyNetwork", "SolveOptions",
    "SparseParity", "VerificationResult",
    "__version__", "construction_width", "gamma_star", "gamma_star_exact", "result_schema", "solve", "validate_result",
    "verify",
]

# The public names are imported on first use (PEP 562), so that ``import margintheory`` -- and the command line's
# start-up -- does not load numpy and sympy before the command line can handle Ctrl-C.
_LAZY = {"Check": "margintheory.core.checks", "VerificationResult": "margintheory.core.checks",
         "PolyNetwork": "margintheory.core.network", "CoGO": "margintheory.core.problems",
         "GroupComposition": "margintheory.core.problems", "ModularAddition": "margintheory.core.problems",
         "ModularAdditionEveryP": "margintheory.core.problems",
         "SparseParity": "margintheory.core.problems", "result_schema": "margintheory.presentation.schema",
         "validate_result": "margintheory.presentation.schema", "verify": "margintheory.verification",
         "solve": "margintheory.verification.solving", "SolveOptions": "margintheory.verification.solving",
         "construction_width": "margintheory.core.theory", "gamma_star": "margintheory.core.theory",
         "gamma_star_exact": "margintheory.core.theory"}

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.core.checks import Check, VerificationResult
    from margintheory.core.network import PolyNetwork
    from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, ModularAdditionEveryP, SparseParity
    from margintheory.core.theory import construction_width, gamma_star, gamma_star_exact
    from margintheory.presentation.schema import result_schema, validate_result
    from margintheory.verification import verify
    from margintheory.verification.solving import SolveOptions, solve


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'margintheory' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
