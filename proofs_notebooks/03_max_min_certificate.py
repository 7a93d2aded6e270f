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
# # 3. The max–min certificate: why uniform `q*` and `tau` work
#
# **Weak duality** (Lemma C.6 = Morwani et al. Lemma 7.6). For any distribution `q` over `D_p`, any class weighting
# `tau` and any unit-norm network `theta`,
# `h(theta) <= E_q[g'(theta)] <= max over unit single neurons of E_q[psi'_tau]`, because `E_q[g']` is a sum over
# neurons (homogeneity, `sum lambda_i^(k+1) = 1`). If one network meets the bound with equality, it is a
# max-margin network: a *certificate*. For the construction this happens with `q*` and `tau` both uniform,
# because (i) every point is on the margin, (ii) all wrong-label logits are equal (condition C.1) and
# (iii) every neuron maximizes the uniform single-neuron problem.
#
# Below: `p = 5`, `k = 2`, numerically (float64, tolerances printed), and what breaks when `tau` is not uniform.

# %%
import numpy as np

from margintheory.core import theory
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.engines.fourier import neuron_fourier
from margintheory.engines.margins import class_weighted_margins, exhaustive_margin, input_grid, logits
from margintheory.solvers.class_weighted import class_weighted_single_neuron, kappa_values
from margintheory.solvers.local import multistart_maximise
from margintheory.solvers.objective import PairWeights, SingleNeuronObjective

P, K = 5, 2
X = input_grid(P, K)
y = X.sum(axis=1) % P
gamma = theory.gamma_star(P, K)
print(f"gamma*({P},{K}) = {gamma:.15g}")

# %% [markdown]
# ## (i) and (ii): the construction's margin profile

# %%
net = build_construction(P, K)
res = exhaustive_margin(net)
print(f"h = {res.normalized_margin:.15g}; points on the margin {res.fraction_on_margin:.0%}; "
      f"max wrong-logit spread {res.max_wrong_spread:.1e} (float tolerance {res.logit_error_bound:.1e})")
assert res.fraction_on_margin == 1.0 and res.max_wrong_spread <= 2 * res.logit_error_bound
assert abs(res.normalized_margin - gamma) <= res.normalized_tolerance + 1e-12 * gamma

# %% [markdown]
# Because all wrong logits are equal, `g' = g` at every point **for every** `tau`; so with `q` uniform,
# `E_q[g'] = h` whatever `tau` is. The question is which `tau` makes the single-neuron bound tight.

# %%
rows = np.arange(P**K)


def tau_uniform() -> np.ndarray:
    t = np.full((P**K, P), 1.0 / (P - 1))
    t[rows, y] = 0.0
    return t


def tau_next_label() -> np.ndarray:
    """All weight on the wrong label c = y + 1: a legitimate but non-uniform class weighting."""
    t = np.zeros((P**K, P))
    t[rows, (y + 1) % P] = 1.0
    return t


def neuron_value(x: np.ndarray, tau: np.ndarray) -> float:
    """E_q[psi'_tau] of the unit-normalized single neuron x = (u_1, ..., u_k, w), q uniform (core library)."""
    v = x.reshape(K + 1, P)
    one = PolyNetwork(v[None, :K], v[None, K]).normalized()
    return float(class_weighted_margins(logits(one), y, tau).mean())


for name, tau in [("uniform", tau_uniform()), ("next label", tau_next_label())]:
    value = float(class_weighted_margins(logits(net.normalized()), y, tau).mean())
    print(f"tau {name:>10}: E_q[g'] of the construction = {value:.15g}")
    assert abs(value - gamma) <= res.normalized_tolerance + 1e-12 * gamma

# %% [markdown]
# ## (iii): the single-neuron maximum
# Two independent answers: multi-start local search (any unit neuron's value is a lower bound; 8 seeded BFGS starts
# on the sphere, analytic gradient, `margintheory.solvers.local`) and the library's bracket `[L, U]` for the weights
# `(q, tau)` as arrays (`margintheory.solvers.class_weighted`; the command is
# `margintheory solve --single-neuron --weights FILE.npz`), whose upper end is proved: for these weights Lemma
# C.14's frequency blocks apply and a sum-of-squares certificate is checked in exact rational arithmetic.

# %%
q_uniform = np.full(P**K, 1.0 / P**K)


def local_max(q: np.ndarray, tau: np.ndarray, starts: int = 8) -> tuple[float, np.ndarray]:
    """Best local maximum of E_q[psi'_tau] over unit neurons (a lower bound on the single-neuron maximum)."""
    best = multistart_maximise(SingleNeuronObjective(PairWeights(P, K, q[:, None] * tau)), n_starts=starts, seed=0)
    return best.value, best.x


best_uniform, _ = local_max(q_uniform, tau_uniform())
bracket = class_weighted_single_neuron(P, K, q=q_uniform, tau=tau_uniform())
construction_neurons = [neuron_value(np.concatenate([net.U[i].ravel(), net.W[i]]), tau_uniform())
                        for i in range(net.m)]
print(f"uniform tau: local max {best_uniform:.12g}; bracket [{bracket.lower:.12g}, {bracket.upper:.12g}] "
      f"(upper {bracket.upper_exactness}); every construction neuron {min(construction_neurons):.12g}.."
      f"{max(construction_neurons):.12g}; gamma* {gamma:.12g}")
assert bracket.upper_exactness == "proved" and bracket.lower <= gamma * (1 + 1e-12) <= bracket.upper * (1 + 1e-12)
assert abs(best_uniform - gamma) <= 1e-9 * gamma
assert max(abs(v - gamma) for v in construction_neurons) <= 1e-12 * gamma

# %% [markdown]
# With uniform `tau` the single-neuron maximum is `gamma*` and the construction attains it: the bound is tight,
# the construction is max-margin, and (Lemma C.6) *every* max-margin network uses only optimal neurons.
#
# ## What breaks when `tau` is not uniform
# Put all weight on the wrong label `y + 1`. Weak duality still holds, but the single-neuron bound is no longer
# tight, and the construction's neurons are no longer single-neuron maximizers. This `tau` is still
# *translation-invariant* (`tau[x, y + d]` depends on `d` only), so the frequency reduction survives with one factor
# per frequency, `kappa(j) = sum_d t(d) (1 - omega^(j d))` (docs/theory.md, section 3.5), and the bracket is again
# proved. Its maximum sits on the frequency with the largest `|kappa(j)|`; since `sum_j kappa(j) = p` for every
# `t`, only the uniform `t` (all `kappa(j) = p/(p-1)`) keeps every frequency optimal.

# %%
best_next, x_next = local_max(q_uniform, tau_next_label())
next_bracket = class_weighted_single_neuron(P, K, q=q_uniform, tau=tau_next_label())
kappa = kappa_values(np.eye(P)[1])  # t(d) = [d = 1]
construction_next = [neuron_value(np.concatenate([net.U[i].ravel(), net.W[i]]), tau_next_label())
                     for i in range(net.m)]
print("|kappa(j)|, j = 1..(p-1)/2:", np.round(np.abs(kappa[1:(P - 1) // 2 + 1]), 6), f"(uniform: {P / (P - 1)})")
print(f"tau = next label: bracket [{next_bracket.lower:.12g}, {next_bracket.upper:.12g}] "
      f"({next_bracket.upper_exactness}) = {next_bracket.lower / gamma:.4f} gamma*, at frequency "
      f"{next_bracket.weights['best_frequency']}; local max {best_next:.12g}")
print(f"  construction neurons: {min(construction_next):.6g} .. {max(construction_next):.6g}")
print(f"  weak duality: h(construction) = {res.normalized_margin:.12g} <= {next_bracket.lower:.12g}")
closed = gamma * (P - 1) / P * 2 * np.cos(np.pi / (2 * P))  # gamma* (p-1)/p max_j |1 - omega^j|
assert next_bracket.upper_exactness == "proved"
assert next_bracket.lower <= closed * (1 + 1e-12) <= next_bracket.upper * (1 + 1e-12)
assert best_next <= next_bracket.upper and best_next > 1.01 * gamma  # the bound from (q, tau) is loose
assert res.normalized_margin <= next_bracket.lower                  # weak duality still holds
assert max(construction_next) < best_next - 1e-6                     # construction neurons do not maximize it

# %% [markdown]
# The maximizer for the non-uniform `tau` is a network that cannot put every point on its margin: its neurons
# are tuned to separate `y` from `y + 1` only. Its own margin is far below `gamma*`:

# %%
one = PolyNetwork(x_next.reshape(K + 1, P)[None, :K], x_next.reshape(K + 1, P)[None, K])
h_next = exhaustive_margin(one).normalized_margin
print(f"margin of the tau-optimal neuron as a network: {h_next:.6g} (gamma* = {gamma:.6g})")
assert h_next < gamma

# %% [markdown]
# ## When `q` is not uniform: the frequencies couple
# Weight the inputs with `a_1 = 0` twice as much (`p = 3`, `k = 2`, `tau` uniform). Now `(G w)_a` depends on `a`,
# not only on the label `y(a)`: the monomials of `(u_1[a_1] + u_2[a_2])^2` that miss an input no longer average out,
# and the reduction to frequency blocks does not apply (the package decides this exactly on the arrays). The bracket
# then comes from the first-level SOS certificate of a quartic form (`w` eliminated: `|M(u)|^2` in the `k p = 6`
# input weights), solved by SCS, rounded to rationals and checked in exact integers -- `proved` for the arrays as
# given (docs/theory.md#quartic-sos). The maximizer is no longer a pure cosine: its input vectors carry a constant
# (frequency-0) part.

# %%
P3 = 3
X3 = input_grid(P3, K)
q_skewed = np.where(X3[:, 0] == 0, 2.0, 1.0)
q_skewed /= q_skewed.sum()
tau3 = np.full((P3**K, P3), 1.0 / (P3 - 1))
tau3[np.arange(P3**K), X3.sum(axis=1) % P3] = 0.0
skewed = class_weighted_single_neuron(P3, K, q=q_skewed, tau=tau3, n_starts=8)
power = neuron_fourier(skewed.maximiser_network()).max_power[0]
gamma3 = theory.gamma_star(P3, K)
print(f"q skewed: translation-invariant {skewed.weights['translation_invariant']}; method {skewed.method}; bracket "
      f"[{skewed.lower:.12g}, {skewed.upper:.12g}] ({skewed.upper_exactness}) = {skewed.lower / gamma3:.4f} gamma*")
print("max normalized power of u_1, u_2, w:", np.round(power, 4))
assert not skewed.weights["translation_invariant"] and skewed.method == "quartic-sos"
assert skewed.upper_exactness == "proved" and skewed.exact_upper is not None
assert skewed.lower <= skewed.upper and skewed.relative_gap < 1e-6 and skewed.lower > gamma3
assert power[:K].min() < 0.99  # the inputs' vectors are not single-frequency
