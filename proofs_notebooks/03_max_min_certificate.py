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
# **Weak duality** (Lemma C.6 = Morwani et al. Lemma 7.6). For any distribution `q` over `D_p`, any class weighting `tau`
# and any unit-norm network `theta`,
# `h(theta) <= E_q[g'(theta)] <= max over unit single neurons of E_q[psi'_tau]`, because `E_q[g']` is a sum over
# neurons (homogeneity, `sum lambda_i^(k+1) = 1`). If one network meets the bound with equality, it is a
# max-margin network: a *certificate*. For the construction this happens with `q*` and `tau` both uniform,
# because (i) every point is on the margin, (ii) all wrong-label logits are equal (condition C.1) and
# (iii) every neuron maximizes the uniform single-neuron problem.
#
# Below: `p = 5`, `k = 2`, numerically (float64, tolerances printed), and what breaks when `tau` is not uniform.

# %%
import numpy as np
from scipy.optimize import minimize

from margintheory.core import theory
from margintheory.core.construction import build_construction
from margintheory.core.network import PolyNetwork
from margintheory.engines.margins import class_weighted_margins, exhaustive_margin, input_grid, logits

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
# ## (iii): the single-neuron maximum, by multi-start local search
# Local maxima give lower bounds on the single-neuron maximum; 24 seeded starts (BFGS on the sphere).


# %%
def single_neuron_max(tau: np.ndarray, starts: int = 24, seed: int = 0) -> tuple[float, np.ndarray]:
    rng = np.random.default_rng(seed)
    best, arg = -np.inf, None
    for _ in range(starts):
        r = minimize(lambda x: -neuron_value(x, tau), rng.standard_normal((K + 1) * P), method="BFGS",
                     options={"gtol": 1e-10})
        if -r.fun > best:
            best, arg = -r.fun, r.x / np.linalg.norm(r.x)
    return best, arg


best_uniform, _ = single_neuron_max(tau_uniform())
construction_neurons = [neuron_value(np.concatenate([net.U[i].ravel(), net.W[i]]), tau_uniform())
                        for i in range(net.m)]
print(f"uniform tau: local max {best_uniform:.12g}; every construction neuron {min(construction_neurons):.12g}.."
      f"{max(construction_neurons):.12g}; gamma* {gamma:.12g}")
assert abs(best_uniform - gamma) <= 1e-7 * gamma
assert max(abs(v - gamma) for v in construction_neurons) <= 1e-12 * gamma

# %% [markdown]
# With uniform `tau` the single-neuron maximum is `gamma*` and the construction attains it: the bound is tight,
# the construction is max-margin, and (Lemma C.6) *every* max-margin network uses only optimal neurons.
#
# ## What breaks when `tau` is not uniform
# Put all weight on the wrong label `y + 1`. Weak duality still holds, but the single-neuron bound is no longer
# tight, and the construction's neurons are no longer single-neuron maximizers:

# %%
best_next, x_next = single_neuron_max(tau_next_label())
construction_next = [neuron_value(np.concatenate([net.U[i].ravel(), net.W[i]]), tau_next_label())
                     for i in range(net.m)]
print(f"tau = next label: single-neuron local max {best_next:.12g} = {best_next / gamma:.4f} gamma*")
print(f"  construction neurons: {min(construction_next):.6g} .. {max(construction_next):.6g}")
print(f"  weak duality: h(construction) = {res.normalized_margin:.12g} <= {best_next:.12g}")
assert best_next > 1.01 * gamma                   # the bound from (q, tau) is loose: no certificate
assert res.normalized_margin <= best_next          # weak duality still holds
assert max(construction_next) < best_next - 1e-6   # construction neurons do not maximize this tau-problem

# %% [markdown]
# The maximizer for the non-uniform `tau` is a network that cannot put every point on its margin: its neurons
# are tuned to separate `y` from `y + 1` only. Its own margin is far below `gamma*`:

# %%
one = PolyNetwork(x_next.reshape(K + 1, P)[None, :K], x_next.reshape(K + 1, P)[None, K])
h_next = exhaustive_margin(one).normalized_margin
print(f"margin of the tau-optimal neuron as a network: {h_next:.6g} (gamma* = {gamma:.6g})")
assert h_next < gamma
