"""Network files for fuzzing the compact lower end (:mod:`margintheory.engines.fourier_margin`) against the exhaustive
engine: an exact single-frequency cosine network (the construction or a family network of
:mod:`margintheory.core.phase_measures`) written in float64, then changed in one of the ways a real file differs from
the exact network -- rounding-size noise, a neuron scaled by a hair or by a rational or irrational factor, weight
ratios with large coprime denominators, an extra neuron too small to be described, a zeroed or duplicated neuron.

Used by ``tests/test_compact_hardening.py`` (a few examples) and ``benchmarks/fuzz_compact.py`` (many).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from margintheory.core.network import PolyNetwork
from margintheory.core.phase_measures import FAMILIES
from margintheory.core.problems import ModularAddition
from margintheory.engines import fourier_margin as fm

#: (p, k) small enough for the exhaustive engine to decide at once
SIZES = ((3, 2), (5, 1), (5, 2), (5, 3), (7, 2), (7, 3), (9, 2), (11, 2))
KINDS = ("none", "noise", "scale", "rational", "irrational", "coprime", "tiny-neuron", "zero", "duplicate")
#: primes just below the largest weight denominator the recognition tries (1e6): legitimate, pairwise coprime
PRIMES = (999_863, 999_883, 999_907, 999_917, 999_931, 999_953, 999_959, 999_961, 999_979, 999_983)


@dataclass(frozen=True)
class Case:
    network: PolyNetwork
    problem: ModularAddition
    family: str
    kind: str
    size: float

    def __repr__(self) -> str:  # what hypothesis prints for a failing example
        return (f"Case(p={self.problem.p}, k={self.problem.k}, family={self.family!r}, kind={self.kind!r}, "
                f"size={self.size!r}, m={self.network.m})")


def _scaled(U: np.ndarray, W: np.ndarray, i: int, ratio: float, k: int) -> None:
    """Neuron ``i`` times ``ratio^(1/(k+1))``: its weight ``A^(k+1)`` times ``ratio``."""
    f = ratio ** (1.0 / (k + 1))
    U[i] *= f
    W[i] *= f


@st.composite
def compact_cases(draw: st.DrawFn, sizes: tuple[tuple[int, int], ...] = SIZES,
                  kinds: tuple[str, ...] = KINDS) -> Case:
    """One exact cosine network in float64, changed as ``kind`` says (module docstring)."""
    p, k = draw(st.sampled_from(sizes))
    family = draw(st.sampled_from(FAMILIES if k > 1 else ("lemma-c18", "smallest-known")))
    problem = ModularAddition(p, k)
    try:
        exact = fm.construction_cosine_network(problem, family)
    except ValueError:  # a family not defined at this k
        exact = fm.construction_cosine_network(problem, "lemma-c18")
        family = "lemma-c18"
    base = fm.float_network(exact)
    U, W = base.U.copy(), base.W.copy()
    m = len(U)
    kind = draw(st.sampled_from(kinds))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    i = int(rng.integers(m))
    size = 0.0
    if kind == "noise":
        size = draw(st.sampled_from((1e-17, 1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-9)))
        U *= 1 + size * rng.standard_normal(U.shape)
        W *= 1 + size * rng.standard_normal(W.shape)
    elif kind == "scale":
        size = draw(st.sampled_from((1e-15, 1e-13, 1e-11, 1e-6)))
        _scaled(U, W, i, 1 - size, k)
    elif kind == "rational":
        size = draw(st.sampled_from((0.5, 1 / 3, 2 / 7, 3.0)))
        _scaled(U, W, i, size, k)
    elif kind == "irrational":
        size = draw(st.sampled_from((math.sqrt(2), math.pi / 3, math.e)))
        _scaled(U, W, i, size, k)
    elif kind == "coprime":
        size = float(draw(st.integers(2, min(len(PRIMES), m))))
        for j, prime in enumerate(PRIMES[: int(size)]):
            _scaled(U, W, (i + j) % m, 1 / prime, k)
    elif kind == "tiny-neuron":
        size = draw(st.sampled_from((1e-30, 1e-10, 1e-6, 1e-2)))
        zeta = int(rng.integers(1, (p - 1) // 2 + 1))
        x = 2 * np.pi * zeta * np.arange(p) / p
        amp = size * float(np.abs(U).max())
        U = np.concatenate([U, np.stack([amp * np.cos(x)] * k)[None]])
        W = np.concatenate([W, amp * np.cos(x)[None]])
    elif kind == "zero":
        U[i] = 0.0
        W[i] = 0.0
    elif kind == "duplicate":
        U = np.concatenate([U, U[i:i + 1]])
        W = np.concatenate([W, W[i:i + 1]])
    return Case(PolyNetwork(U, W), problem, family, kind, size)
