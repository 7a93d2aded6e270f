"""margintheory: verify the max-margin theory of one-hidden-layer polynomial networks.

Public API (the command line is a thin layer over it)::

    from margintheory import verify, ModularAddition
    result = verify(ModularAddition(7, 3))        # VerificationResult: verdict, checks, common fields
    result.verdict, result.normalized_margin, result.gamma_star, result.to_dict()

Layers (see docs/ARCHITECTURE.md):

* ``theory``        closed forms that the papers *prove* (exact sympy and float).
* ``problems``      problem objects (``ModularAddition``, ``SparseParity``, ``GroupComposition``, ``CoGO``):
                    parameters validated once, closed forms cached.
* ``network``       the polynomial network object, its norm, ``.npz`` I/O.
* ``construction``  the explicit max-margin network of Lemmas C.16-C.18.
* ``margins``       the exhaustive margin engine (checker).
* ``fourier``       DFT-based checkers (Lemma C.14, C.20, Def. of the optimal neuron set).
* ``checks``        the common ``Check`` / ``VerificationResult`` shape of every verdict; ``schema`` its JSON Schema.
* ``verification``  wiring of theory + objects + checkers into verdicts; ``tasks`` every task behind ``verify``.
* ``report``        presentation; ``cli`` / ``commands`` the command line (the only modules that know about flags).
"""


from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from margintheory._version import __version__

__all__ = [
    "Check", "CoGO", "GroupComposition", "ModularAddition", "PolyNetwork", "SparseParity", "VerificationResult",
    "__version__", "construction_width", "gamma_star", "gamma_star_exact", "result_schema", "validate_result",
    "verify",
]

# The public names are imported on first use (PEP 562), so that ``import margintheory`` -- and the command line's
# start-up -- does not load numpy and sympy before the command line can handle Ctrl-C.
_LAZY = {"Check": "margintheory.checks", "VerificationResult": "margintheory.checks",
         "PolyNetwork": "margintheory.network", "CoGO": "margintheory.problems",
         "GroupComposition": "margintheory.problems", "ModularAddition": "margintheory.problems",
         "SparseParity": "margintheory.problems", "result_schema": "margintheory.schema",
         "validate_result": "margintheory.schema", "verify": "margintheory.tasks",
         "construction_width": "margintheory.theory", "gamma_star": "margintheory.theory",
         "gamma_star_exact": "margintheory.theory"}

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.checks import Check, VerificationResult
    from margintheory.network import PolyNetwork
    from margintheory.problems import CoGO, GroupComposition, ModularAddition, SparseParity
    from margintheory.schema import result_schema, validate_result
    from margintheory.tasks import verify
    from margintheory.theory import construction_width, gamma_star, gamma_star_exact


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'margintheory' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
