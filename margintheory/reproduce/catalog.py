"""The recipes: each training experiment of the papers, transcribed from the paper's text (docs/reproductions.md).

Settings are the paper's (section named in ``where``); a setting the paper does not state is listed in the recipe's
``unstated`` with the value used instead.  Readings of the claims' words as numbers (``reading``) are ours and are
printed with every result.
"""

from __future__ import annotations

from margintheory.errors import InputError
from margintheory.reproduce.recipes import Claim, Recipe, RunSpec

# -- Morwani et al. (arXiv:2311.07568), App. D.2 ----------------------------------------------------------------
_MORWANI_MILESTONES = tuple(range(1000, 10001, 1000))  # lr 0.05 doubled ten times, to 51.2 (App. D.2.1)
_GROUP_MILESTONES = (200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2400, 2600, 5000, 10000)
_MORWANI_UNSTATED = ("initialization: not stated; Gaussian with standard deviation 1/sqrt(p) (the trainer's)",
                     "seeds: not stated; seed 0",
                     "split: not stated; the full dataset D_p (the theorems are about the full population)")

MORWANI_QUADRATIC = RunSpec(
    label="quadratic", task="modular-addition", sizes={"p": 71, "k": 2, "width": 500}, optimizer="gd", lr=0.05,
    steps=40000, lam=1e-4, regularizer="norm-power", schedule="doubling", milestones=_MORWANI_MILESTONES,
    log_every=100)
MORWANI_RELU = RunSpec(
    label="relu", task="modular-addition", sizes={"p": 71, "k": 2, "width": 500}, activation="relu", optimizer="gd",
    lr=0.05, steps=40000, lam=1e-4, regularizer="l2", schedule="doubling", milestones=_MORWANI_MILESTONES,
    log_every=100)

def _approaches(tolerance: float, steps: str) -> str:
    """The reading of "the margin approaches gamma*" (a limit, which a finite run cannot show): the ratio at the
    run's last step, after the paper's ``steps``, at least ``1 - tolerance``; nothing is extrapolated."""
    return (f"normalized margin / gamma* at the run's last step, after the paper's {steps} steps, >= 1 - tolerance "
            f"= {1 - tolerance:g} (tolerance {tolerance:g}); a margin still rising at that step is judged where it "
            "stands, not extrapolated (the best ratio during training and its step are in the detail)")



def _weighed_max_power(level: float) -> str:
    """The reading of "max power almost 1 for all the neurons": every neuron weighed by its norm share."""
    return (f"share of ||theta||^(k+1) in neurons whose embedding vectors all have max power >= {level:g} (each "
            "neuron weighed by its norm share, as the network's function weighs it: a neuron of negligible norm, "
            "which the paper's histogram cannot show, neither holds nor breaks the claim); >= 1 - tolerance; the "
            "count and norm share of the neurons below are in the detail")


_MAX_POWER_READING = ("max normalized power (one-sided: +j and -j folded) of every embedding vector u_j of every "
                      "neuron")

MORWANI_FIG71 = Recipe(
    name="morwani-fig7.1", paper="morwani", where="Fig. 7.1 and Fig. D.1 (settings: App. D.2.1)",
    summary="mod-71 addition, width 500, full-batch gradient descent: quadratic neurons become single-frequency "
            "cosines, every frequency is used about equally, and the normalized L_{2,3} margin approaches gamma*; "
            "ReLU neurons become nearly single-frequency",
    runs=(MORWANI_QUADRATIC, MORWANI_RELU),
    claims=(
        Claim("margin-to-gamma", "margin -> gamma* (Fig. 7.1c)",
              "for the quadratic activation, the network asymptotically reaches the maximum L_{2,3} margin predicted "
              "by the analysis (Fig. 7.1c; Thm 7.7: gamma* = sqrt(2/27) / (p^(1/2) (p-1)))",
              _approaches(1e-3, "40 000"), 1e-3, ("quadratic",)),
        Claim("single-frequency", "single-frequency (7.1b)",
              "quadratic neurons are single-frequency cosines (Fig. 7.1b; Thm 7.7 part 1)",
              "share of ||theta||^3 in neurons whose u, v, w all have max normalized power >= 0.99; "
              ">= 1 - tolerance", 1e-3, ("quadratic",)),
        Claim("all-frequencies", "every frequency used (D.1b)",
              "every frequency 1..(p-1)/2 is used by some neuron (Thm 7.7 part 2; Fig. D.1b)",
              "frequencies that are the dominant frequency of a neuron whose vectors all have max power >= 0.9",
              None, ("quadratic",)),
        Claim("frequency-uniform", "frequencies near uniform (D.1)",
              "for both ReLU and quadratic activation the distribution of neurons over frequencies is close to "
              "uniform (Fig. D.1)", "total-variation distance of the neurons' dominant frequencies to uniform; "
              "'close' read as <= tolerance (reported, not deciding)", 0.1, ("quadratic", "relu"),
              informational=True),
        Claim("relu-max-power", "ReLU near single-freq. (7.1a)",
              "ReLU neurons' embeddings are close to single-frequency cosines (Fig. 7.1a)",
              f"median {_MAX_POWER_READING} of the ReLU network (reported)", None, ("relu",), informational=True),
    ),
    figure="embeddings and power spectra of random neurons (7.1a, b), the normalized margin over training with "
           "gamma* (7.1c), neurons per frequency (D.1)",
    unstated=_MORWANI_UNSTATED + ("ReLU network: the quadratic network's architecture with ReLU activation; "
                                  "'L_2 regularization of 1e-4' read as 1e-4 ||theta||_2^2 / 2",),
)

MORWANI_FIG74 = Recipe(
    name="morwani-fig7.4", paper="morwani", where="Fig. 7.4 (settings: App. D.2.1)",
    summary="the max normalized power of the embeddings at initialization (spread out) and after training: about "
            "0.9 for ReLU, almost exactly 1 for the quadratic network",
    runs=(MORWANI_QUADRATIC, MORWANI_RELU),
    claims=(
        Claim("max-power-init", "init: max power spread (7.4a)",
              "initially the maximum power is randomly distributed (Fig. 7.4a)",
              f"quantiles of the {_MAX_POWER_READING} at initialization (reported); random read as a median < 0.9",
              None, ("quadratic",),
              informational=True),
        Claim("relu-max-power", "ReLU: max power ~0.9 (7.4b)",
              "for the ReLU network the final distribution of maximum power is concentrated around 0.9: nearly "
              "1-sparse in frequency space but not quite (Fig. 7.4b)",
              f"median {_MAX_POWER_READING} in [0.8, 0.99): around 0.9 and below 1", None, ("relu",)),
        Claim("max-power-all", "quadratic: max power ~1 (7.4c)",
              "for the quadratic network the final maximum power is almost exactly 1 for all the neurons, as the "
              "max-margin analysis predicts (Fig. 7.4c)",
              _weighed_max_power(0.99), 1e-3, ("quadratic",), threshold=0.99),
    ),
    figure="histograms of the max normalized power: initialization, ReLU and quadratic after training (7.4a-c)",
    unstated=MORWANI_FIG71.unstated,
)

MORWANI_FIG75 = Recipe(
    name="morwani-fig7.5", paper="morwani", where="Fig. 7.5 (settings: App. D.2.2)",
    summary="(10, 4) sparse parity, x^4 network of width 40, gradient descent with L_{2,5} regularization: the "
            "normalized margin approaches Thm 7.8's gamma* and the largest neurons have Thm 7.8's form",
    runs=(RunSpec(label="x4", task="parity", sizes={"n": 10, "k": 4, "width": 40}, optimizer="gd", lr=0.1,
                  steps=30000, lam=1e-3, regularizer="norm-power", log_every=100),),
    claims=(
        Claim("parity-margin", "margin -> gamma* (7.5b)",
              "the normalized L_{2,5} margin approaches the theoretical maximum gamma* = k! sqrt(2 (k+1)^-(k+1)) "
              "(Fig. 7.5b; Thm 7.8)", _approaches(1e-3, "30 000"), 1e-3),
        Claim("parity-support", "neurons of Thm 7.8 form (7.5a)",
              "neurons with ||u_i|| > 0 are supported on S with |u_i[j]| = ||w_i|| and w_i in the span of "
              "[1, -1] (Fig. 7.5a; Thm 7.8 part 1)",
              "share of ||theta||^5 in neurons meeting Thm 7.8's conditions within 1e-2 (relative); "
              ">= 1 - tolerance", 1e-3),
    ),
    figure="the largest neurons' weights (7.5a) and the normalized L_{2,5} margin over training (7.5b)",
    unstated=("relevant bits S: not stated; the first k bits (the task is symmetric under relabelling)",
              "initialization and seed: not stated; the trainer's, seed 0", "split: the full 2^n inputs"),
)


def _group_recipe(name: str, group: str, width: int, where: str, **run: object) -> Recipe:
    figure = name.rsplit("-", 1)[-1].replace("fig", "Fig. ")
    short = figure.removeprefix("Fig. ")
    run.setdefault("optimizer", "gd")
    spec = RunSpec(label=group, task="group", sizes={"group": group, "width": width}, lr=0.05,
                   regularizer="norm-power", schedule="doubling", log_every=100,
                   hardware="gpu" if group == "S5" else "cpu", **run)  # type: ignore[arg-type]
    return Recipe(
        name=name, paper="morwani", where=where,
        summary=f"the quadratic network on {group} x {group} -> {group}: the normalized L_{{2,3}} margin approaches "
                "Thm 7.9's gamma*; every neuron is spanned by one irreducible representation; higher-dimensional "
                "representations have more neurons",
        runs=(spec,),
        claims=(
            Claim("group-margin", f"margin -> gamma* ({short}a)",
                  f"the normalized L_{{2,3}} margin approaches the theoretical maximum ({figure}a; Thm 7.9)",
                  _approaches(1e-3, f"{run['steps']:,}".replace(",", " ")), 1e-3),
            Claim("single-irrep", f"single-irrep neurons ({short}d)",
                  f"after training all neurons are concentrated in a single representation ({figure}d; Thm 7.9 "
                  "part 1)", "share of ||theta||^3 in neurons whose irrep power fraction is >= 0.99; "
                  ">= 1 - tolerance", 1e-3),
            Claim("all-irreps", "every irrep used (Thm 7.9)",
                  "every non-trivial representation spans some neuron (Thm 7.9 part 2)",
                  "non-trivial irreps that are the dominant irrep of a neuron with power fraction >= 0.9"),
            Claim("irrep-dimension-counts", f"larger irreps, more ({short}b)",
                  f"higher dimensional representations have more neurons, as in the construction ({figure}b)",
                  "neurons per irrep non-decreasing in the irrep's dimension", None, informational=True),
            Claim("irrep-power-init", f"init: power spread ({short}c)",
                  f"at initialization the irrep power is random ({figure}c)",
                  "quantiles of the irrep power fraction (reported); random read as a median < 0.9", None,
                  informational=True),
        ),
        figure="normalized margin over training (a), neurons per irrep (b), irrep power at initialization and at "
               "the end (c, d)",
        unstated=("initialization and seed: not stated; the trainer's, seed 0",
                  "irrep basis: the real irreducible representations computed by margintheory.core.representations"),
    )


MORWANI_FIGD2 = _group_recipe("morwani-figD.2", "S3", 30, "Fig. D.2 (settings: App. D.2.3)", steps=50000,
                              lam=1e-7, milestones=_GROUP_MILESTONES)
MORWANI_FIGD3 = _group_recipe("morwani-figD.3", "S4", 200, "Fig. D.3 (settings: App. D.2.3)", steps=50000,
                              lam=1e-7, milestones=_GROUP_MILESTONES)
MORWANI_FIG76 = _group_recipe("morwani-fig7.6", "S5", 2000, "Fig. 7.6 (settings: App. D.2.3)", steps=75000,
                              lam=1e-5, milestones=tuple(range(3000, 24001, 3000)), batch_size=1000,
                              optimizer="sgd")


# -- Li et al., "Fourier circuits" (arXiv:2402.09469), Sec. 5 and App. C.10 --------------------------------------
_FC_STEPS = 100_000
_FC_UNSTATED = (
    f"steps: not stated (up to three days on one A100; the code it builds on trains until stopped); {_FC_STEPS} "
    "steps",
    "'regularization strength lambda 0.005' with AdamW: read as AdamW's decoupled weight decay 0.005 (the "
    "code's weight_decay), not a penalty term",
    "schedule after the 10 warm-up steps: not stated; constant (as in the code it builds on)",
    "initialization: not stated; Gaussian with standard deviation 1/sqrt(p) (the trainer's)",
)


def _fourier_recipe(name: str, k: int, p: int, width: int, where: str, companion: str) -> Recipe:
    tag = companion.removeprefix("Fig. ")
    spec = RunSpec(label=f"k{k}", task="modular-addition", sizes={"p": p, "k": k, "width": width}, optimizer="adamw",
                   lr=5e-3, steps=_FC_STEPS, weight_decay=0.005, warmup=10, batch_size=1024, train_fraction=0.5,
                   seeds=(0, 1, 2), log_every=1000, hardware="gpu")
    return Recipe(
        name=name, paper="fourier-circuits", where=where,
        summary=f"{k}-sum mod {p}, width {width} = 2^(2k-2) (p-1), AdamW on half of the p^k points: every neuron "
                "becomes a single-frequency cosine and every frequency is used",
        runs=(spec,),
        claims=(
            Claim("single-frequency", "single-frequency (L4.10)",
                  f"the trained networks have single-frequency hidden neurons ({where.split(' (')[0]}; Lemma 4.10)",
                  "share of ||theta||^(k+1) in neurons whose u_1..u_k, w all have max normalized power >= 0.99; "
                  ">= 1 - tolerance, for every seed", 1e-3),
            Claim("max-power-all", f"max power ~1, all ({tag}c)",
                  f"the embeddings of the final trained network are one-sparse: maximum normalized power almost 1 "
                  f"for all neurons ({companion}c)",
                  f"{_weighed_max_power(0.9)}, for every seed", 1e-3, threshold=0.9),
            Claim("all-frequencies", f"every frequency used ({tag}a)",
                  f"the network learns all frequencies of the Fourier spectrum ({companion}a; Lemma 4.11)",
                  "frequencies that are the dominant frequency of a neuron whose vectors all have max power >= 0.9, "
                  "for every seed"),
            Claim("frequency-uniform", f"frequencies ~uniform ({tag}a)",
                  f"an almost uniform distribution over all frequencies, as in the construction ({companion}a)",
                  "total-variation distance of the neurons' dominant frequencies to uniform; 'almost uniform' "
                  "read as <= tolerance (reported, not deciding)", 0.1, informational=True),
            Claim("max-power-init", f"init: power spread ({tag}b)",
                  f"the maximum normalized power at random initialization ({companion}b)",
                  "quantiles of the max power (reported); random read as a median < 0.9", None,
                  informational=True),
            Claim("margin-to-gamma", "margin / gamma* (Thm 4.9)",
                  "the max-margin characterisation the figures illustrate (Theorem 4.9); the figures do not claim "
                  "the trained network's margin", "normalized margin over all p^k points / gamma* (reported)", None,
                  informational=True),
        ),
        figure=f"embeddings with their cosine interpolation and power spectra ({where.split(' (')[0]}), dominant "
               f"frequencies and max power at initialization and at the end ({companion})",
        unstated=_FC_UNSTATED,
    )


FOURIER_FIG41 = _fourier_recipe("fourier-circuits-fig4.1", 4, 47, 2944, "Fig. 4.1 and Fig. 4.2 (settings: App. "
                                "C.10.1)", "Fig. 4.2")
FOURIER_FIGC1 = _fourier_recipe("fourier-circuits-figC.1", 3, 97, 1536, "Fig. C.1 and Fig. C.2 (settings: App. "
                                "C.10.1)", "Fig. C.2")
FOURIER_FIGC3 = _fourier_recipe("fourier-circuits-figC.3", 5, 23, 5632, "Fig. C.3 and Fig. C.4 (settings: App. "
                                "C.10.1)", "Fig. C.4")

# -- Wei et al.'s limit: gamma_lambda -> gamma* as lambda -> 0 ---------------------------------------------------
LAMBDAS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4)


def _lambda_runs() -> tuple[RunSpec, ...]:
    runs = []
    for k, p, width, steps in ((2, 23, 176, 4000), (3, 11, 320, 3000)):
        for lam in LAMBDAS:
            runs.append(RunSpec(label=f"k{k}-lambda{lam:g}", task="modular-addition",
                                sizes={"p": p, "k": k, "width": width}, optimizer="adam", lr=5e-3, steps=steps,
                                lam=lam, regularizer="norm", schedule="cosine", warmup=10, log_every=steps // 100))
    return tuple(runs)


LAMBDA_SWEEP = Recipe(
    name="lambda-sweep", paper="fourier-circuits",
    where="Lemma 4.7 (Wei et al.'s Thm 4.1, also Thm 7.1 of Morwani et al.): a sweep no paper plots",
    summary="train the papers' objective CE + lambda ||theta||_{2,k+1} to (near) stationarity for decreasing lambda "
            "(k = 2, p = 23 and k = 3, p = 11, twice the theorem's width): the normalized margin gamma_lambda of the "
            "regularized optimum tends to gamma* as lambda -> 0",
    runs=_lambda_runs(),
    claims=(
        Claim("lambda-limit", "gamma_lambda -> gamma* (L4.7)",
              "as lambda -> 0 the normalized margin of the regularized loss's global minimizer tends to the max "
              "margin gamma* (Lemma 4.7, Thm 7.1 of Morwani et al.; Wei et al. Thm 4.1)",
              "at the smallest lambda, normalized margin / gamma* >= 1 - tolerance, for each k (a trained "
              "network stands in for the global minimizer: its stationarity is reported)", 1e-3),
        Claim("lambda-monotone", "gap shrinks as lambda falls",
              "the gap 1 - gamma_lambda / gamma* shrinks as lambda decreases (the limit's direction)",
              "gap non-increasing along decreasing lambda within 1e-9, for each k (reported: at a fixed step "
              "budget the optimizer's accuracy, not lambda, can set the gap)", None, informational=True),
    ),
    figure="1 - gamma_lambda / gamma* against lambda for each k, with each run's relative gradient norm",
    cites=("morwani", "wei"),
    unstated=("not an experiment of the papers: sizes, optimizer (Adam, the trainer's defaults) and steps are ours",),
)


# -- Tian, CoGO (arXiv:2410.01779), Sec. 7 and App. H ------------------------------------------------------------
_COGO_UNSTATED = (
    "'Adam with weight decay': read as Adam with the decay added to the gradient (an L2 penalty lam ||theta||^2 / 2, "
    "lam = the weight decay), as torch.optim.Adam's weight_decay does",
    "'10k epochs' with no batch size stated: 10 000 full-batch steps on the training split",
    "Adam's betas: not stated; PyTorch's defaults (0.9, 0.999)",
    "parametrization: the paper's code trains Eq. 1 without its 1/(2d); the recipe trains that run at Eq. 1's scale, "
    "where CoGO's constructions and the factorization are stated (theta = c phi, c = (2d)^(1/3): Adam's step "
    "c x 0.01, the decay 5e-5 / c^2, as RunSpec.trainer_settings derives; Eq. 1 taken literally with lr 0.01 and "
    "decay 5e-5 collapses to the zero network at d = 71 within 100 steps, measured)",
    "initialization: not stated (the code initializes as PyTorch's layers); the trainer's Gaussian of standard "
    "deviation 1/sqrt(d) at the code's scale, c / sqrt(d) at Eq. 1's",
)
#: Table 2 as printed: per d, % not order-4/6; % non-factorable order-4, order-6; factorization error (1e-2)
#: order-4, order-6; shares (%) of the factorable ones: z_{nu=i} * z_xi, z_{nu=i} * z_{syn,alpha beta},
#: z_nu * z_syn, others (mean +- standard deviation over 5 seeds)
TABLE2 = {
    23: {"not_order_4_6": (0.0, 0.0), "non_factorable": ((0.0, 0.0), (5.71, 5.71)),
         "factorization_error_1e-2": ((0.05, 0.01), (4.80, 0.96)),
         "shares": {"z_nu=i * z_xi": (47.07, 1.88), "z_nu=i * z_syn,ab": (11.31, 1.76), "z_nu * z_syn": (39.80, 2.11),
                    "other": (1.82, 1.82)}},
    71: {"not_order_4_6": (0.0, 0.0), "non_factorable": ((0.0, 0.0), (0.0, 0.0)),
         "factorization_error_1e-2": ((0.03, 0.0), (5.02, 0.25)),
         "shares": {"z_nu=i * z_xi": (72.57, 0.70), "z_nu=i * z_syn,ab": (4.00, 1.14), "z_nu * z_syn": (21.14, 2.14),
                    "other": (2.29, 1.07)}},
    127: {"not_order_4_6": (0.0, 0.0), "non_factorable": ((1.50, 0.92), (0.0, 0.0)),
          "factorization_error_1e-2": ((0.26, 0.14), (0.93, 0.18)),
          "shares": {"z_nu=i * z_xi": (82.96, 0.39), "z_nu=i * z_syn,ab": (2.25, 0.64), "z_nu * z_syn": (14.13, 0.87),
                     "other": (0.66, 0.66)}},
}


def _cogo_run(label: str, d: int, width: int, seeds: tuple[int, ...], **extra: object) -> RunSpec:
    return RunSpec(label=label, task="cogo", sizes={"d": d, "width": width}, optimizer="adam", lr=0.01,
                   steps=10000, loss="mse", seeds=seeds, log_every=100, betas=(0.9, 0.999), parametrization="code",
                   **extra)  # type: ignore[arg-type]


COGO_FIG2 = Recipe(
    name="cogo-fig2", paper="cogo", where="Fig. 2 (settings: Sec. 7)",
    summary="d = 7, q = 20 hidden nodes, Adam on the l2 loss: every frequency +-k is carried by exactly 6 hidden "
            "nodes (order 6); without the R_* term of Eq. 3, by exactly 3 (z_syn)",
    runs=(_cogo_run("full", 7, 20, (0,), train_fraction=1.0, lam=5e-5, regularizer="l2"),
          _cogo_run("no-R*", 7, 20, (0,), train_fraction=1.0, lam=5e-5, regularizer="l2", objective="no-r-star")),
    claims=(
        Claim("cogo-order-count", "6 nodes per frequency (top)",
              "for each frequency +-k there are exactly 6 hidden nodes representing it (Fig. 2 top; Corollary 2)",
              "hidden nodes whose input weights at frequency k reach 0.2 x the largest there (the salient nodes of "
              "margintheory.tasks.cogo.factorization), for every k",
              None, ("full",), paper_value=6),
        Claim("cogo-order-count", "3 nodes without R_* (bottom)",
              "optimizing Eq. 3 without its last term, each frequency has exactly 3 hidden nodes, the solution "
              "z_syn = rho(u_syn) of Table 1 (Fig. 2 bottom)", "as above, for every k", None, ("no-R*",),
              paper_value=3),
    ),
    figure="|z[p,k,j]| per frequency and hidden node, with and without the R_* term (Fig. 2)",
    unstated=_COGO_UNSTATED + ("weight decay for Fig. 2: not stated; 5e-5 (Sec. 7 trains 'with weight decays'; "
                               "Table 2's value)", "split: not stated; all d^2 pairs",
                               "seed: not stated; seed 0"),
)

COGO_FIG3 = Recipe(
    name="cogo-fig3", paper="cogo", where="Fig. 3 (settings: Sec. 7)",
    summary="d = 23, q = 1024: after 10k epochs the per-frequency solution orders concentrate at 4 and 6, "
            "sum_k r_kkk tends to d - 1 and the off-diagonal potentials to 0",
    runs=(_cogo_run("d23", 23, 1024, (0,), train_fraction=0.9, lam=5e-5, regularizer="l2"),),
    claims=(
        Claim("cogo-orders", "orders concentrate at 4 and 6",
              "after 10k epochs the distribution of solution orders is concentrated at 4 and 6 (Fig. 3 top middle; "
              "Corollaries 2 and 4)", "share of frequencies whose order is 4 or 6 >= 1 - tolerance", 0.05),
        Claim("cogo-potentials", "sum r_kkk -> d - 1",
              "the sum of the diagonal r_kkk converges towards d - 1 while the off-diagonal r_k1k2k converge "
              "towards 0 (Fig. 3 top right)", "|sum_{k != 0} r_kkk - (d - 1)| / (d - 1) <= tolerance; the largest "
              "off-diagonal |r_k1k2k| is reported", 0.05),
    ),
    figure="training curves, the distribution of solution orders, and sum_k r_kkk over training (Fig. 3 top)",
    unstated=_COGO_UNSTATED + ("weight decay for Fig. 3: not stated; 5e-5 (Table 2's)", "seed: not stated; 0"),
)

COGO_TABLE2 = Recipe(
    name="cogo-table2", paper="cogo", where="Table 2 and Fig. 10 (settings: Sec. 7; search: App. H)",
    summary="q = 512, weight decay 5e-5, d in {23, 71, 127}, 5 seeds: about 95% of the per-frequency solutions "
            "are order 4 or 6 and factor into 2 x 2 or 2 x 3 ring products matching CoGO's constructions",
    runs=tuple(_cogo_run(f"d{d}", d, 512, (0, 1, 2, 3, 4), train_fraction=0.9, lam=5e-5, regularizer="l2",
                         hardware="gpu" if d == 127 else "cpu") for d in (23, 71, 127)),
    claims=(
        Claim("cogo-orders", "solutions of order 4 or 6",
              "gradient-descent solutions are of order 4 or 6 at each frequency (Table 2, '% not order-4/6' = 0)",
              "share of (seed, frequency) solutions of order 4 or 6 >= 1 - tolerance, per d", 0.05,
              paper_value={d: row["not_order_4_6"] for d, row in TABLE2.items()}),
        Claim("cogo-factorable", "~95% factorable",
              "around 95% of the order-4 and order-6 solutions factor into 2 x 2 and 2 x 3 ring products with small "
              "factorization error (Table 2; App. H's exhaustive search)",
              "share of order-4/6 solutions factoring with relative rank-one residual <= 0.1 >= 1 - tolerance, "
              "per d", 0.05, paper_value={d: row["non_factorable"] for d, row in TABLE2.items()}),
        Claim("cogo-constructions", "~98% match CoGO constructions",
              "CoGO predicts ~98% of the structure of the empirical solutions: factors match z_{nu=i} * z_xi, "
              "z_{nu=i} * z_{syn,alpha beta} or z_nu * z_syn up to conjugation and normalization (Table 2)",
              "share of factorable solutions matched to a construction (invariants within 10%, "
              "App. H) >= 1 - tolerance, per d; the shares per construction against Table 2's are in the detail",
              0.05, paper_value={d: row["shares"] for d, row in TABLE2.items()}),
    ),
    figure="solution orders per d and the shares per construction against Table 2",
    unstated=_COGO_UNSTATED,
)

# -- Chughtai, Chan, Nanda (arXiv:2302.03025): which irreps, across seeds (a question, not a figure) ----------
#: (run label, group, width, control): the widths are at least the package's max-margin construction's (34, 126,
#: 236); the control A5-m80 is below it
_UNIVERSALITY_RUNS = (("D5", "D5", 40, False), ("S4", "S4", 140, False), ("A5", "A5", 240, False),
                      ("A5-m80", "A5", 80, True))
_UNIVERSALITY_STEPS = 3000
_NARROW = ("a control below the width of the package's max-margin construction of A5 (236 neurons): whether the "
           "irreps still match when that construction does not fit in the network")


def _short(label: str) -> str:
    """``A5 m=80`` for the run ``A5-m80`` (a claim's name)."""
    return label.replace("-m", " m=")


def _universality_claims() -> tuple[Claim, ...]:
    irreps = tuple(
        Claim("universality-irreps", f"{_short(label)}: irreps = max-margin's",
              f"the irreps a norm-regularized quadratic network of width {width} trained on {group} uses, over "
              "seeds, are those of the max-margin solution (Morwani et al. Thm 7.9 and App. D.9: the class LP's "
              "irreps; Chughtai et al. ask which irreps networks learn and whether seeds agree)"
              + (f"; {_NARROW}" if control else ""),
              "an irrep is used when it carries >= 0.05 of ||theta||^3 (each neuron's irrep power fractions "
              "weighted by its norm share, trivial irrep included); Jaccard index of the used set and the LP's "
              "irreps, worst seed; = 1 for every seed" + (" (reported, not deciding)" if control else ""), None,
              (label,), informational=control, threshold=0.05)
        for label, group, width, control in _UNIVERSALITY_RUNS)
    margins = tuple(
        Claim("universality-margin", f"{_short(label)}: margin / max",
              f"how close the trained {group} networks of width {width} come to the max margin (the premise of "
              "comparing their irreps with the max-margin solution's)",
              "normalized L_{2,3} margin / the class LP's max margin of the group, worst seed (reported)", None,
              (label,), informational=True)
        for label, group, width, control in _UNIVERSALITY_RUNS)
    return irreps + margins


UNIVERSALITY_GROUPS = Recipe(
    name="universality-groups", paper="chughtai",
    where="which irreps networks learn on a group, and whether seeds agree (the paper's question), asked of "
          "Morwani et al.'s max-margin solution (Thm 7.9, App. D.9)",
    summary="quadratic networks on D_5, S_4 and A_5, 3 seeds each, Adam on cross-entropy + 1e-5 ||theta||_{2,3}^3: "
            "the irreps each network uses (mass >= 0.05 of ||theta||^3) against the class LP's irreps; for A_5 "
            "Thm 7.9's condition fails and the LP leaves the 5-dimensional irrep out; A_5 again at width 80, "
            "below the max-margin construction's 236, as a control",
    runs=tuple(RunSpec(label=label, task="group", sizes={"group": group, "width": width}, optimizer="adam",
                       lr=0.01, steps=_UNIVERSALITY_STEPS, lam=1e-5, regularizer="norm-power", seeds=(0, 1, 2),
                       log_every=100) for label, group, width, _ in _UNIVERSALITY_RUNS),
    claims=_universality_claims(),
    figure="none",
    unstated=("the whole recipe is ours, sized for one CPU core in minutes: Chughtai et al. train one-layer MLPs "
              "and transformers (ReLU, AdamW, weight decay) on other groups and sizes; here the package's quadratic "
              "network (the one Thm 7.9 is about), widths 40 (D5), 140 (S4), 240 (A5): each at least the width of the "
              "package's max-margin construction of the group (34, 126 and 236: verify's construction_width), so "
              "that the max-margin solution is within the network's reach; and A5 at width 80 as a control",
              "optimizer: Adam, learning rate 0.01, 3000 full-batch steps, seeds 0, 1, 2 (Morwani et al.'s group "
              "recipes use gradient descent with a doubling schedule for 50 000 steps: out of this recipe's budget)",
              "regularization: lam ||theta||_{2,3}^3 with lam = 1e-5 (Morwani et al.'s L_{2,3}; App. D.2.3 uses "
              "1e-7 with 50 000 steps)",
              "'used' read as >= 0.05 of ||theta||^3; the max-margin irreps are the class LP's (irreps_used_by_lp "
              "of verify(GroupComposition(g)))"),
    cites=("morwani",),
)

#: every recipe, by name
RECIPES: dict[str, Recipe] = {r.name: r for r in (
    MORWANI_FIG71, MORWANI_FIG74, MORWANI_FIG75, MORWANI_FIGD2, MORWANI_FIGD3, MORWANI_FIG76, FOURIER_FIG41,
    FOURIER_FIGC1, FOURIER_FIGC3, LAMBDA_SWEEP, COGO_FIG2, COGO_FIG3, COGO_TABLE2,
    UNIVERSALITY_GROUPS)}


def recipe(name: str) -> Recipe:
    """The recipe called ``name`` (one line naming the recipes when there is none)."""
    if name not in RECIPES:
        raise InputError(f"no recipe {name!r}; the recipes are {', '.join(RECIPES)}")
    return RECIPES[name]
