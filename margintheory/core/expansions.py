"""The two algebraic expansions behind the construction of Li et al., Fourier circuits (arXiv:2402.09469;
docs/theory.md#construction): the sum-to-product identity of Lemma C.16 and the cosine expansion (C.21).

They are pure identities on sign and sine/cosine patterns, used both by the explicit construction
(:mod:`margintheory.core.construction`) and by the per-frequency phase measures
(:mod:`margintheory.core.phase_measures`).
"""

from __future__ import annotations

import itertools


def sum_to_product_terms(k: int) -> list[tuple[tuple[int, ...], int]]:
    """Lemma C.16: ``2^k k! prod_j x_j = sum_{s in {+-1}^k} (-1)^((k - sum s)/2) (sum_j s_j x_j)^k``.

    Returns the ``2^k`` pairs ``(s, sign)`` with ``sign = (-1)^((k - sum s)/2)`` (= ``(-1)^{#(-1) in s}``).
    """
    return [(s, (-1) ** ((k - sum(s)) // 2)) for s in itertools.product((1, -1), repeat=k)]


def half_sum_to_product_terms(k: int) -> list[tuple[tuple[int, ...], int]]:
    """The half-sum the construction uses: ``2^(k-1) k! prod_j x_j = sum_{s: s_1 = +1} sign(s) (s . x)^k``.

    Valid because ``sign(-s) (-s . x)^k = sign(s) (s . x)^k``; ``2^(k-1)`` terms.
    """
    return [(s, sign) for s, sign in sum_to_product_terms(k) if s[0] == 1]


def cosine_expansion_terms(k: int) -> list[tuple[tuple[int, ...], int]]:
    """Equation (C.21): ``cos(x_1 + ... + x_{k+1}) = sum_b sign(b) prod_i [cos if b_i = 0 else sin](x_i)``.

    ``b`` ranges over ``{0,1}^(k+1)`` with an even number ``|b|`` of sines; ``sign(b) = -1`` iff ``|b| = 2 mod 4``.
    Returns the ``2^k`` pairs ``(b, sign)``.
    """
    out = []
    for b in itertools.product((0, 1), repeat=k + 1):
        n_sin = sum(b)
        if n_sin % 2 == 0:
            out.append((b, -1 if n_sin % 4 == 2 else 1))
    return out
