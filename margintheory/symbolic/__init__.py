"""Symbolic derivations and exact verification: every proof step of docs/theory.md sections 3-4 as a
machine-checked object.

* :mod:`.derivation`        the ``Derivation`` / ``Step`` objects (checks: proved | float | argued).
* :mod:`.cyclotomic`        exact arithmetic in ``Q(omega_N)`` with integer vectors.
* :mod:`.identities`        Lemma C.16 (sum-to-product) and (C.21) (cosine expansion).
* :mod:`.fourier_reduction` Lemma C.14 for symbolic weight vectors.
* :mod:`.bound_chain`       Lemma C.15 with ``p`` and ``k`` as symbols: the closed form of ``gamma*``.
* :mod:`.exact`             exact verification of the Lemma C.18 construction; the per-frequency cosine sum.
"""
