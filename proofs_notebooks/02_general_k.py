# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 2. General `k`: the sum-to-product identity, the cosine expansion, counting neurons
#
# The construction of Lemma C.18 (Li et al., Fourier circuits) writes, for each frequency `zeta`,
# `cos_zeta(a_1 + ... + a_k - c)` with the cosine expansion (C.21) as `2^k` products of `k+1` single-frequency
# factors, and each product of the `k` input factors with the sum-to-product identity (Lemma C.16) as a
# signed sum of `k`-th powers of sums, i.e. as neurons.

# %%
import math
from fractions import Fraction

import numpy as np
from IPython.display import Markdown, display

from margintheory.core import theory
from margintheory.core.construction import construction_neuron_specs
from margintheory.engines.margins import input_grid
from margintheory.symbolic import identities
from margintheory.symbolic.exact import exact_construction_logits, per_frequency_cosine_sum_exact

# %% [markdown]
# ## Lemma C.16: `2^k k! x_1...x_k = sum_s (-1)^((k - sum s)/2) (s . x)^k`
# Checked as exact polynomial identities for `k = 1..8`, together with the mirror symmetry `T(s) = T(-s)` that
# lets the construction use only the `2^(k-1)` sign vectors with `s_1 = +1`.

# %%
for k in range(1, 9):
    r = identities.check_sum_to_product(k)
    print(f"k={k}: full sum {r.full_sum_ok}, half-sum {r.half_sum_ok}, mirror {r.mirror_terms_equal}, "
          f"{r.monomials_per_term} monomials per term, {r.seconds:.3f} s")
    assert r.ok

display(Markdown(identities.sum_to_product_derivation(3).render("markdown")))

# %% [markdown]
# The identity at random rational points (exact fractions), as a sanity check independent of the expansion:

# %%
rng = np.random.default_rng(1)
for k in (2, 5, 7):
    x = [Fraction(int(n), int(d)) for n, d in zip(rng.integers(-9, 10, k), rng.integers(1, 10, k), strict=True)]
    lhs = 2**k * math.factorial(k) * math.prod(x)
    rhs = sum(identities.sum_to_product_sign(s) * sum(a * b for a, b in zip(s, x, strict=True)) ** k
              for s in identities.sign_vectors(k))
    print(k, lhs == rhs)
    assert lhs == rhs

# %% [markdown]
# ## The cosine expansion (C.21)
# `cos(a_1 + ... + a_{k+1}) = sum over b in {0,1}^{k+1} with an even number of sines, sign -1 iff that number is
# 2 mod 4`. Exact for `k <= 6`, numerical (with an a-priori float64 tolerance) beyond.

# %%
for k in range(1, 10):
    d = identities.cosine_expansion_derivation(k)
    kinds = {s.check.kind for s in d.steps}
    print(f"k={k}: {len(identities.sine_patterns(k))} terms; checks {sorted(kinds)}; {d.summary()}")
    assert d.all_passed and len(identities.sine_patterns(k)) == 2**k

# %% [markdown]
# ## Counting neurons
# `2^k` terms x `2^(k-1)` neurons per term = `2^(2k-1)` per frequency, `(p-1)/2` frequencies. The paper's
# experiments (Section 4.5, App. C.10.2) quote `m = 2944` (k=4, p=47), `1536` (k=3, p=97), `5632` (k=5, p=23).

# %%
for p, k, quoted in [(47, 4, 2944), (97, 3, 1536), (23, 5, 5632), (7, 3, None)]:
    specs = construction_neuron_specs(p, k)
    per_freq = {z: sum(1 for s in specs if s.frequency == z) for z in theory.frequencies(p)}
    print(f"p={p}, k={k}: {len(specs)} neurons, per frequency {set(per_freq.values())}, paper: {quoted}")
    assert len(specs) == theory.construction_width(p, k) == 2 ** (2 * k - 1) * (p - 1) // 2
    assert set(per_freq.values()) == {2 ** (2 * k - 1)}
    if quoted is not None:
        assert len(specs) == quoted

# %% [markdown]
# The paper's `k = 3` text (proof of Lemma C.17) says "such 56 neurons" per frequency; the count is computed above
# (`2^5 = 32`, consistent with its own total `16(p-1)`).
#
# ## The network function
# Exactly (cyclotomic arithmetic), the unnormalized construction computes
# `f(a, c) = S(a_1 + ... + a_k - c)` with `S(x) = sum_{zeta=1}^{(p-1)/2} cos(2 pi zeta x / p)`:

# %%
p, k = 7, 3
ex = exact_construction_logits(p, k)
S = [per_frequency_cosine_sum_exact(p, x) for x in range(p)]
print("S(x) for x = 0..p-1:", [str(s) for s in S])
labels = input_grid(p, k).sum(axis=1) % p
x = (labels[:, None] - np.arange(p)[None, :]) % p          # a_1 + ... + a_k - c  (mod p)
two_S = np.array([int(2 * s) for s in S])                  # 2 S(x) is an integer
assert ex.all_rational and np.array_equal(2 * ex.numerators, two_S[x] * ex.denominator)
distinct = sorted({Fraction(int(v), ex.denominator) for v in np.unique(ex.numerators)})
print("all", ex.numerators.size, "logits equal S(a_1+...+a_k-c); distinct values:", [str(v) for v in distinct])
assert distinct == [Fraction(-1, 2), Fraction(p - 1, 2)]
