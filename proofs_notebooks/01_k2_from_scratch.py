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
# # 1. Modular addition with `k = 2`, from scratch
#
# We follow the proof of the max-margin theorem for two inputs (Morwani et al., arXiv:2311.07568;
# the `k = 2` case of Li et al., Fourier circuits, arXiv:2402.09469; see `docs/theory.md`) and check every step
# with `margintheory`:
#
# 1. the data set `D_p`,
# 2. the single-neuron problem (class-weighted margin with uniform `q` and `tau`),
# 3. its Fourier reduction (Lemma C.14),
# 4. the bound `gamma* = sqrt(2/27) / (sqrt(p) (p-1))` (Lemma C.15, Morwani et al. Thm 7.7),
# 5. the `4(p-1)`-neuron network of Lemma C.18 and its margin — in floating point and in exact arithmetic.
#
# Nothing below is copied from the paper: every value is computed by the library.

# %%
import math

import numpy as np
from IPython.display import Markdown, display

from margintheory.core import theory
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import class_weighted_margins, exhaustive_margin, input_grid, logits
from margintheory.symbolic.bound_chain import gamma_star_derivation
from margintheory.symbolic.exact import verify_construction_exact
from margintheory.symbolic.fourier_reduction import check_fourier_reduction, fourier_derivation

P, K = 7, 2
rng = np.random.default_rng(0)

# %% [markdown]
# ## The data
# All `p^2` pairs `(a_1, a_2)` with label `(a_1 + a_2) mod p`.

# %%
X = input_grid(P, K)
y = X.sum(axis=1) % P
print(X.shape, "first rows:", X[:3].tolist(), "labels:", y[:3].tolist())
assert X.shape == (P**K, K) and len({tuple(r) for r in X.tolist()}) == P**K

# %% [markdown]
# ## The single-neuron problem
# One neuron `(u_1, u_2, w)` computes `f(a)[c] = (u_1[a_1] + u_2[a_2])^2 w[c]`. With `q` uniform over `D_p` and
# `tau` uniform over the wrong labels, the objective is the mean class-weighted margin
# `E_q[f[y] - mean_{c != y} f[c]]`. The network is 3-homogeneous, so we evaluate it at unit norm.


# %%
def single_neuron_objective(u: np.ndarray, w: np.ndarray) -> float:
    """E_q[g'] of the one-neuron network (u, w), normalized to unit L2 norm (core library calls only)."""
    net = PolyNetwork(u[None], w[None]).normalized()
    return float(class_weighted_margins(logits(net), y).mean())


def optimal_neuron(zeta: int, phases: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Lemma C.15's neuron: beta cos(theta_i + 2 pi zeta a/p), w with phase theta_1 + ... + theta_k."""
    a = np.arange(P)
    beta = theory.optimal_neuron_beta(P, K)
    u = np.stack([beta * np.cos(t + 2 * np.pi * zeta * a / P) for t in phases])
    w = beta * np.cos(sum(phases) + 2 * np.pi * zeta * a / P)
    return u, w


gamma = theory.gamma_star(P, K)
best = single_neuron_objective(*optimal_neuron(2, (0.3, -1.1)))
randoms = [single_neuron_objective(rng.standard_normal((K, P)), rng.standard_normal(P)) for _ in range(200)]
print(f"gamma*           = {gamma:.15g}")
print(f"optimal neuron   = {best:.15g}")
print(f"best of 200 random unit neurons = {max(randoms):.6g}")
assert abs(best - gamma) <= 1e-12 * gamma
assert max(randoms) < gamma

# %% [markdown]
# ## Fourier reduction (Lemma C.14)
# With the DFT `f^(j) = sum_x f(x) e^{-2 pi i j x/p}`, the objective equals
# `k!/((p-1) p^k) sum_{j != 0} w^(-j) u_1^(j) u_2^(j)`: the squares `u_1^2 w`, `u_2^2 w` drop out.
# First exactly, with symbolic weights (p = 5 keeps the printout short):

# %%
d = fourier_derivation(5, 2)
display(Markdown(d.render("markdown")))
assert d.all_passed and check_fourier_reduction(P, K).matches

# %% [markdown]
# and numerically at random neurons for `p = 7`, with numpy's FFT:

# %%
for _ in range(5):
    u, w = rng.standard_normal((K, P)), rng.standard_normal(P)
    norm2 = (u**2).sum() + (w**2).sum()
    u, w = u / math.sqrt(norm2), w / math.sqrt(norm2)
    U, W = np.fft.fft(u, axis=1), np.fft.fft(w)
    j = np.arange(1, P)
    fourier = math.factorial(K) / ((P - 1) * P**K) * (W[(-j) % P] * U[:, j].prod(axis=0)).sum()
    direct = single_neuron_objective(u, w)
    print(f"direct {direct:+.12f}   Fourier {fourier.real:+.12f}   |imag| {abs(fourier.imag):.1e}")
    assert abs(direct - fourier.real) < 1e-12 and abs(fourier.imag) < 1e-12

# %% [markdown]
# ## The bound (Lemma C.15) and the `k = 2` form
# Every step of the chain is labelled: proved (sympy), float (random inputs, with the tolerance) or argued.

# %%
d = gamma_star_derivation(k=K, p=P)
display(Markdown(d.render("markdown")))
assert d.all_passed
assert theory.gamma_star_exact(P, 2) == theory.gamma_star_k2_form(P).simplify()

# %% [markdown]
# ## The `4(p-1)`-neuron network and its margin
# Lemma C.18 with `k = 2`: `2^(2k-1) = 8` neurons per frequency, `(p-1)/2` frequencies.

# %%
net = build_construction(P, K)
res = exhaustive_margin(net)
print(f"width {net.m} = 4(p-1) = {4 * (P - 1)}")
print(f"normalized margin {res.normalized_margin:.15g} vs gamma* {gamma:.15g} "
      f"(float tolerance {res.normalized_tolerance:.1e})")
print(f"fraction of points on the margin: {res.fraction_on_margin}, max wrong-logit spread {res.max_wrong_spread:.1e}")
assert net.m == 4 * (P - 1)
assert abs(res.normalized_margin - gamma) <= res.normalized_tolerance + 1e-12 * gamma

# %% [markdown]
# The same in exact arithmetic (cyclotomic field): the margin *equals* `gamma*`.

# %%
exact = verify_construction_exact(P, K)
print(exact.verdict, exact.fields["normalized_margin_exact"], "=", exact.fields["gamma_star_exact"])
print("correct-label logit", exact.fields["construction_correct_logit_exact"],
      "| wrong-label logit", exact.fields["construction_wrong_logit_exact"], "(the paper says 0)")
assert exact.verdict == "verified" and exact.fields["relative_error_exact"] == "0"
