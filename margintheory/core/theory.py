"""Closed forms proved in the papers (nothing here is *checked*; the checkers live elsewhere).

References (docs/theory.md#references):

* ``gamma*``: Lemma C.15 / Theorem 4.9 (C.22) of Li et al., Fourier circuits (arXiv:2402.09469),
  special cases Morwani et al. Thm 7.7 (k=2) and Lemma C.11 (k=3).
* width ``2^(2k-1) (p-1)/2``: Lemma C.18.
* optimal neuron ``beta = sqrt(2/((k+1)p))``: Lemma C.15.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp

from margintheory.errors import InputError

P_SYM, K_SYM = sp.symbols("p k", positive=True, integer=True)


def validate_pk(p: object, k: object, *, p_min: int = 3) -> tuple[int, int]:
    """Return ``(p, k)`` as ints or raise :class:`InputError` with one clear sentence."""
    return int_at_least("p", p, p_min), int_at_least("k", k, 1)


def int_at_least(name: str, value: object, low: int) -> int:
    """``value`` as an int (Python or sympy integer, not bool) if it is ``>= low``, else :class:`InputError`."""
    if isinstance(value, sp.Integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise InputError(f"{name} must be an integer >= {low}, got {value}")
    return value


def is_prime(n: int) -> bool:
    """Primality of ``n`` (sympy's deterministic test for the sizes used here)."""
    return bool(sp.isprime(n))


def hypothesis_status(p: int) -> str:
    """``"odd-prime"`` (the papers' hypothesis), ``"odd-composite"`` (not assumed, still checked) or ``"even"``."""
    if p % 2 == 0:
        return "even"
    return "odd-prime" if is_prime(p) else "odd-composite"


def gamma_star_symbolic() -> sp.Expr:
    """``gamma*(p, k) = 2 k! / ((2k+2)^((k+1)/2) (p-1) p^((k-1)/2))`` with ``p, k`` as sympy symbols."""
    p, k = P_SYM, K_SYM
    return 2 * sp.factorial(k) / ((2 * k + 2) ** ((k + 1) / sp.Integer(2)) * (p - 1) * p ** ((k - 1) / sp.Integer(2)))


def gamma_star_exact(p: int, k: int) -> sp.Expr:
    """Exact ``gamma*`` for given ``(p, k)`` (Lemma C.15); an algebraic number in simplified radical form."""
    return gamma_star_exact_of(*validate_pk(p, k))


def gamma_star(p: int, k: int) -> float:
    """``gamma*`` as float64, computed directly in floating point (not via sympy)."""
    return gamma_star_of(*validate_pk(p, k))


# The ``*_of`` forms take integers already validated (by a problem object, margintheory.core.problems, which calls them
# once); the public forms above validate first.


@lru_cache(maxsize=256)
def gamma_star_exact_of(p: int, k: int) -> sp.Expr:
    """:func:`gamma_star_exact` for validated integers.  ``nsimplify`` tidies the radicals but matches numerically
    (it returns ``0`` for ``gamma*`` below its tolerance, e.g. ``p ~ 10^12``, ``k = 8``), so its result is kept
    only when its square equals the exact value's square (``gamma*^2`` is rational), else the exact value itself."""
    exact = gamma_star_symbolic().subs({P_SYM: p, K_SYM: k})
    tidy = sp.nsimplify(exact)
    return tidy if tidy.is_positive and sp.expand(tidy**2) == sp.expand(exact**2) else sp.radsimp(exact)


def gamma_star_of(p: int, k: int) -> float:
    """:func:`gamma_star` for validated integers."""
    return 2.0 * math.factorial(k) / ((2 * k + 2) ** ((k + 1) / 2) * (p - 1) * p ** ((k - 1) / 2))


def gamma_star_k2_form(p: int | sp.Expr = P_SYM) -> sp.Expr:
    """The ``k = 2`` form quoted by Morwani et al. Thm 7.7: ``sqrt(2/27) / (sqrt(p) (p-1))``."""
    return sp.sqrt(sp.Rational(2, 27)) / (sp.sqrt(p) * (p - 1))


def gamma_star_k3_form(p: int | sp.Expr = P_SYM) -> sp.Expr:
    """The ``k = 3`` form of Lemma C.11: ``3 / (16 p (p-1))``."""
    return sp.Integer(3) / (16 * p * (p - 1))


def construction_width(p: int, k: int) -> int:
    """Neurons in the construction of Lemma C.18: ``2^(2k-1) (p-1)/2``.

    For even ``p`` (outside the theorem) the same recipe uses the frequencies ``1..p/2-1``; the count is then
    ``2^(2k-1) (p/2 - 1)``.
    """
    return construction_width_of(*validate_pk(p, k))


def construction_width_of(p: int, k: int) -> int:
    """:func:`construction_width` for validated integers."""
    return 2 ** (2 * k - 1) * ((p - 1) // 2)  # len(frequencies(p)), without building the list


def frequencies(p: int) -> list[int]:
    """The frequencies ``1 .. (p-1)/2`` of the theorem (``1 .. floor((p-1)/2)`` for even ``p``)."""
    return list(range(1, (p - 1) // 2 + 1))


def optimal_neuron_beta(p: int, k: int) -> float:
    """Amplitude ``beta = sqrt(2/((k+1) p))`` of a unit-norm optimal single neuron (Lemma C.15)."""
    return math.sqrt(2.0 / ((k + 1) * p))


# Sparse parity (Morwani et al., "Feature emergence via margin maximization", arXiv:2311.07568, Section 7)

MAX_PARITY_N = 22  # 2^22 inputs: the exhaustive parity check stays a few seconds


def validate_nk(n: object, k: object) -> tuple[int, int]:
    """``1 <= k <= n <= MAX_PARITY_N`` as ints, else :class:`InputError`."""
    n_int, k_int = _integer("n", n), _integer("k", k)
    if not 1 <= k_int <= n_int <= MAX_PARITY_N:
        raise InputError(f"sparse parity needs 1 <= k <= n <= {MAX_PARITY_N}; got n={n}, k={k}")
    return n_int, k_int


def _integer(name: str, v: object) -> int:
    """``v`` as an int (Python or numpy integer, not bool), else :class:`InputError`."""
    if isinstance(v, bool) or not isinstance(v, int | np.integer):
        raise InputError(f"{name} must be an integer, got {v!r}")
    return int(v)


def gamma_star_parity(k: int) -> float:
    """``k! sqrt(2 (k+1)^-(k+1))`` (Thm 7.8), float64."""
    return math.factorial(k) * math.sqrt(2.0 * (k + 1.0) ** -(k + 1))


# Group composition (Theorem 7.9 of Morwani et al., arXiv:2311.07568)


def gamma_star_theorem79(order: int, dims: np.ndarray) -> float:
    """``2 / (3 sqrt(3|G|) sum_{R != 1} d_R^2.5)`` (Thm 7.9), float64."""
    return 2.0 / (3.0 * math.sqrt(3.0 * order) * float(np.sum(dims[1:] ** 2.5)))


def theorem79_width(dims: np.ndarray) -> int:
    """``2 sum_{R != 1} d_R^3`` neurons (Thm 7.9 / Lemma D.15)."""
    return int(2 * np.sum(dims[1:] ** 3))
