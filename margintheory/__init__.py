"""margintheory: verify the max-margin theory of one-hidden-layer polynomial networks.

Layers (see README "Architecture"):

* ``theory``        closed forms that the papers *prove* (exact sympy and float).
* ``network``       the polynomial network object, its norm, ``.npz`` I/O.
* ``construction``  the explicit max-margin network of Lemmas C.16-C.18.
* ``margins``       the exhaustive margin engine (checker).
* ``fourier``       DFT-based checkers (Lemma C.14, C.20, Def. of the optimal neuron set).
* ``checks``        the common ``Check`` / ``VerificationResult`` shape of every verdict.
* ``verification``  wiring of theory + objects + checkers into verdicts.
* ``report``/``cli`` presentation only.
"""

from margintheory.network import PolyNetwork
from margintheory.theory import construction_width, gamma_star, gamma_star_exact

__all__ = ["PolyNetwork", "gamma_star", "gamma_star_exact", "construction_width"]
__version__ = "0.1.0"
