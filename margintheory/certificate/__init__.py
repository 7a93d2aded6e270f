"""Certificates of the max margin: the interval ``[L, U]`` of ``verify`` and the certificate files of ``check``.

* :mod:`margintheory.certificate.checker` -- the independent checker (standard library + python-flint only);
* :mod:`margintheory.certificate.block_sos` -- the torus-reduced SOS program of the block form (Clarabel);
* :mod:`margintheory.certificate.rational_sos` -- exact rounding of the block SOS certificate;
* :mod:`margintheory.certificate.upper_bound` -- the proved upper bound for ``(p, k)`` and its steps;
* :mod:`margintheory.certificate.maxmin` -- the interval ``[L, U]`` wired into the verdict of ``verify``.

Nothing here imports numpy at package import time, so the checker can be loaded alone. Theory:
docs/theory.md#frequency-blocks (the blocks and the proved bound) and docs/theory.md#weak-duality.
"""
