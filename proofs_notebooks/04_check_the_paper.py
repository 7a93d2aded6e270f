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
# # 4. Check the paper yourself
#
# Choose `(p, k)` below and re-run: the verifier builds the construction, computes its margin (float64 and
# exact), and each statement of the text is compared with the computed value. References: Li et al.,
# Fourier circuits (arXiv:2402.09469), Appendix C, and Morwani et al. (arXiv:2311.07568); see `docs/theory.md`.

# %%
import sympy as sp

from margintheory.core import theory
from margintheory.core.construction import construction_neuron_specs
from margintheory.presentation.report import render_text
from margintheory.symbolic.exact import per_frequency_cosine_sum_exact, verify_construction_exact
from margintheory.symbolic.fourier_reduction import check_fourier_reduction
from margintheory.tasks.modular_addition.checks import verify_construction

# %% [markdown]
# Your choice of `(p, k)` (the exact check is fast up to about `p = 13, k = 3` or `p = 7, k = 4`):

# %%
P, K = 7, 3   # try e.g. (5, 2), (11, 3), (9, 2) (odd composite), (5, 4)

# %% [markdown]
# ## The verifier, in floating point and in exact arithmetic

# %%
float_result = verify_construction(P, K)
render_text(float_result)
exact_result = verify_construction_exact(P, K)
render_text(exact_result)
assert exact_result.verdict == "verified" or theory.hypothesis_status(P) == "even"

# %% [markdown]
# ## The statements of the text against the computation

# %%
rows = []


def compare(statement: str, where: str, stated, computed, agree: bool) -> None:
    rows.append((statement, where, str(stated), str(computed), "agrees" if agree else "DIFFERS"))


gamma_exact = sp.sympify(exact_result.fields["normalized_margin_exact"])
closed = theory.gamma_star_exact(P, K)
compare("gamma* = 2k!/((2k+2)^((k+1)/2)(p-1)p^((k-1)/2))", "Lemma C.15", closed, gamma_exact,
        sp.simplify(closed - gamma_exact) == 0)
if K == 2:
    compare("gamma* = sqrt(2/27)/(sqrt(p)(p-1))", "Morwani Thm 7.7", theory.gamma_star_k2_form(P),
            gamma_exact, sp.simplify(theory.gamma_star_k2_form(P) - gamma_exact) == 0)
if K == 3:
    compare("gamma* = 3/(16 p (p-1))", "Lemma C.11", theory.gamma_star_k3_form(P), gamma_exact,
            sp.simplify(theory.gamma_star_k3_form(P) - gamma_exact) == 0)
width = len(construction_neuron_specs(P, K))
compare("width 2^(2k-1)(p-1)/2", "Lemma C.18", 2 ** (2 * K - 1) * (P - 1) // 2, width,
        width == 2 ** (2 * K - 1) * (P - 1) // 2)
if K == 3:
    per_frequency = width // ((P - 1) // 2)
    compare("'such 56 neurons' per frequency (k = 3)", "Lemma C.17 proof", 56, per_frequency, per_frequency == 56)
correct = sp.Rational(exact_result.fields["construction_correct_logit_exact"])
wrong = sp.Rational(exact_result.fields["construction_wrong_logit_exact"])
compare("f = (p-1)/2 on the correct label", "Lemma C.17/C.18", sp.Rational(P - 1, 2), correct,
        correct == sp.Rational(P - 1, 2))
compare("f = 0 on every wrong label", "Lemma C.17/C.18", 0, wrong, wrong == 0)
compare("sum_{zeta=1}^{(p-1)/2} cos(2 pi zeta x/p) = 0 for x != 0", "Lemma C.17 proof", 0,
        per_frequency_cosine_sum_exact(P, 1), per_frequency_cosine_sum_exact(P, 1) == 0)
P_ = sp.Symbol("p")
compare("1 - 1/(p-1) = p/(p-1)", "(C.9)", "identity", sp.simplify(1 - 1 / (P_ - 1) - P_ / (P_ - 1)),
        sp.simplify(1 - 1 / (P_ - 1) - P_ / (P_ - 1)) == 0)
if P ** (K + 1) <= 60_000:
    compare("only the fully mixed monomial survives", "Lemma C.14", True,
            check_fourier_reduction(P, K).only_fully_mixed_survives, check_fourier_reduction(P, K).matches)
compare("every point on the margin, all wrong labels equal", "Lemma C.18 proof", True,
        exact_result.fields["all_on_margin"] and exact_result.fields["wrong_logits_equal"],
        exact_result.fields["all_on_margin"] and exact_result.fields["wrong_logits_equal"])

width_col = max(len(r[0]) for r in rows)
for r in rows:
    print(f"{r[0]:<{width_col}}  {r[1]:<22} stated {r[2]:<16} computed {r[3]:<18} {r[4]}")

# %% [markdown]
# The `DIFFERS` rows (for odd `p`) are errors in the text: the wrong-label value (the per-frequency cosine sum at
# `x != 0`) is `-1/2`, not `0` (its conclusion — all wrong labels equal, margin `p/2` before normalization — is
# unaffected); `1 - 1/(p-1)` should read `1 + 1/(p-1)`; and for `k = 3` the construction uses 32 neurons per
# frequency, not 56. The main theorem (`gamma*`, width, certificate) agrees exactly.

# %%
verdicts = {r[0]: r[4] for r in rows}
assert verdicts["gamma* = 2k!/((2k+2)^((k+1)/2)(p-1)p^((k-1)/2))"] == "agrees"
assert verdicts["f = 0 on every wrong label"] == "DIFFERS" and wrong == sp.Rational(-1, 2)
assert verdicts["1 - 1/(p-1) = p/(p-1)"] == "DIFFERS"
assert abs(float_result.fields["normalized_margin"] - float(gamma_exact)) <= 1e-12 * float(gamma_exact)
