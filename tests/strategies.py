"""Hypothesis strategies shared by the test modules."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from margintheory.network import PolyNetwork

odd_moduli = st.sampled_from([3, 5, 7, 9, 11, 13, 15])
finite = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def networks(draw, p=None, k=None, max_m: int = 6) -> PolyNetwork:
    """A random dense network with small shapes (p in 3..7, k in 1..3 unless given)."""
    p = draw(st.integers(3, 7)) if p is None else p
    k = draw(st.integers(1, 3)) if k is None else k
    m = draw(st.integers(1, max_m))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return PolyNetwork(rng.normal(size=(m, k, p)), rng.normal(size=(m, p)))


def real_vectors(n: int):
    return arrays(np.float64, n, elements=finite)
