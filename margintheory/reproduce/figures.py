"""The papers' figures, drawn from a recipe's trained runs (PNG and PDF, written atomically).

The trainer's figures are reused (:mod:`margintheory.training.figures`: embeddings with their cosine interpolation
and power spectra as in Morwani et al. Fig. 7.1a-b and Li et al. Fig. 4.1; the margin over training as in Figs.
7.1c, 7.5b, 7.6a; dominant frequencies and max power as in Li et al. Fig. 4.2; :mod:`margintheory.training.
task_figures`: the largest parity neurons of Fig. 7.5a, the irreps of Figs. 7.6b-d, D.2, D.3, CoGO's loss) and this
module adds the panels that compare runs: neurons per frequency (Morwani et al. Fig. D.1), the max-power histograms
of Fig. 7.4, the lambda sweep, CoGO's nodes per frequency (Tian Fig. 2) and its solution orders and constructions
against Table 2 (Fig. 3 top, Fig. 10).
:func:`draw_recipe` draws a recipe's figures into a directory and returns the files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from margintheory.core import theory
from margintheory.reproduce.claims import dominant_frequencies, embedding_max_power
from margintheory.reproduce.recipes import Recipe
from margintheory.reproduce.runs import RunOutcome
from margintheory.training import figures as tf

Outcomes = dict[str, list[RunOutcome]]


def _first(outcomes: Outcomes, label: str) -> RunOutcome | None:
    runs = outcomes.get(label) or []
    return runs[0] if runs else None


def _size_text(o: RunOutcome) -> str:
    s = o.spec.sizes
    return f"p={s['p']}, k={s['k']}, m={s['width']}, {o.spec.steps} steps, seed {o.seed}"


def _morwani_fig71(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    written: list[Path] = []
    for label, panel in (("relu", "(a) ReLU"), ("quadratic", "(b) quadratic")):
        o = _first(outcomes, label)
        if o is not None:
            written += tf.plot_embeddings(o.network, out / f"{rec.name}-embeddings-{label}", count=4,
                                          title=f"{rec.name} {panel}: embeddings and power spectra ({_size_text(o)})")
    quad = _first(outcomes, "quadratic")
    if quad is not None:
        written += tf.plot_margin_history(quad.history, quad.spec.sizes["p"], quad.spec.sizes["k"],
                                          out / f"{rec.name}-margin",
                                          title=f"{rec.name} (c): normalized L_2,3 margin ({_size_text(quad)})")
    runs = [o for label in ("relu", "quadratic") if (o := _first(outcomes, label)) is not None]
    if runs:
        written += _frequency_counts(runs, out / f"{rec.name}-frequencies", f"{rec.name} (Fig. D.1)")
    return written


def _frequency_counts(runs: list[RunOutcome], stem: Path, title: str) -> list[Path]:
    """Morwani et al. Fig. D.1: neurons per dominant frequency, one panel per run."""
    plt = tf.plt
    fig, axes = plt.subplots(1, len(runs), figsize=(4.6 * len(runs), 3.0), squeeze=False)
    for ax, o in zip(axes[0], runs, strict=True):
        freqs = theory.frequencies(o.network.p)
        dom = dominant_frequencies(o.network)
        counts = [int(np.sum(dom == f)) for f in freqs]
        ax.bar(freqs, counts, color="tab:blue")
        ax.axhline(o.network.m / len(freqs), color="tab:red", ls=":", lw=1, label="uniform")
        ax.set_xlabel("frequency")
        ax.set_ylabel("neurons")
        ax.set_title(f"{o.spec.label}: {_size_text(o)}", fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return tf.save_figure(fig, stem)


def _morwani_fig74(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    """Fig. 7.4: max normalized power of the embeddings at initialization, ReLU and quadratic after training."""
    panels = []
    quad, relu = _first(outcomes, "quadratic"), _first(outcomes, "relu")
    if quad is not None:
        panels.append(("(a) initialization", embedding_max_power(quad.initial).ravel(), "tab:gray"))
    if relu is not None:
        panels.append(("(b) ReLU, after training", embedding_max_power(relu.network).ravel(), "tab:orange"))
    if quad is not None:
        panels.append(("(c) quadratic, after training", embedding_max_power(quad.network).ravel(), "tab:green"))
    if not panels:
        return []
    plt = tf.plt
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.0), squeeze=False)
    bins = np.linspace(0, 1, 41)
    for ax, (label, values, color) in zip(axes[0], panels, strict=True):
        ax.hist(values, bins=bins, color=color)
        ax.set_xlim(0, 1.02)
        ax.set_xlabel("max normalized power of u_j (one-sided)")
        ax.set_ylabel("embedding vectors")
        ax.set_title(f"{label}: median {np.median(values):.3f}", fontsize=9)
    fig.suptitle(f"{rec.name}: {_size_text(quad or relu)}", fontsize=10)  # type: ignore[arg-type]
    fig.tight_layout()
    return tf.save_figure(fig, out / f"{rec.name}-max-power")


def _fourier_circuits(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    o = _first(outcomes, rec.labels[0])
    if o is None:
        return []
    where = rec.where.split(" (")[0]
    written = tf.plot_embeddings(o.network, out / f"{rec.name}-embeddings", count=4,
                                 title=f"{rec.name} ({where.split(' and ')[0]}): {_size_text(o)}")
    written += tf.plot_frequency_distribution(o.network, out / f"{rec.name}-frequencies", o.initial,
                                              title=f"{rec.name} ({where.split(' and ')[-1]}): {_size_text(o)}")
    return written


def _lambda_sweep(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    """``1 - gamma_lambda / gamma*`` against ``lambda`` per ``k`` (a gap at or below 0 is drawn at 1e-16), with
    each run's relative gradient norm."""
    series: dict[int, list[tuple[float, float, float]]] = {}
    for runs in outcomes.values():
        for o in runs:
            g = theory.gamma_star(o.spec.sizes["p"], o.spec.sizes["k"])
            gap = 1.0 - float(o.analysis["normalized_margin"]) / g
            grad = float(o.analysis["details"].get("relative_gradient_norm", np.nan))
            series.setdefault(o.spec.sizes["k"], []).append((o.spec.lam, gap, grad))
    if not series:
        return []
    plt = tf.plt
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    for k, rows in sorted(series.items()):
        rows.sort()
        lam = np.array([r[0] for r in rows])
        ax.loglog(lam, np.maximum([r[1] for r in rows], 1e-16), "o-", label=f"k = {k}")
        ax2.loglog(lam, [r[2] for r in rows], "s--", label=f"k = {k}")
    ax.set_xlabel("lambda")
    ax.set_ylabel("1 - gamma_lambda / gamma*")
    ax.set_title("gap to the max margin (<= 0 drawn at 1e-16)", fontsize=9)
    ax2.set_xlabel("lambda")
    ax2.set_ylabel("||grad L|| / ||grad of the data term||")
    ax2.set_title("stationarity of the trained network", fontsize=9)
    for a in (ax, ax2):
        a.legend(fontsize=8)
    fig.suptitle(f"{rec.name}: Wei et al.'s limit (Lemma 4.7)", fontsize=10)
    fig.tight_layout()
    return tf.save_figure(fig, out / f"{rec.name}-gap")


def _run_tag(o: RunOutcome) -> str:
    size = ", ".join(f"{k}={v}" for k, v in o.spec.sizes.items())
    return f"{size}, {o.spec.steps} steps, seed {o.seed}"


def _morwani_fig75(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    """Fig. 7.5: the largest neurons (a) and the normalized L_{2,5} margin over training (b)."""
    from margintheory.training.task_figures import plot_parity_neurons

    o = _first(outcomes, rec.labels[0])
    if o is None:
        return []
    tag = _run_tag(o)
    written = plot_parity_neurons(o.network, out / f"{rec.name}-neurons", title=f"{rec.name} (a): {tag}")
    return written + tf.plot_history(o.history, o.analysis.get("gamma_star"), out / f"{rec.name}-margin",
                                     f"{rec.name} (b): {tag}", norm_label="k+1")


def _morwani_groups(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    """Figs. 7.6, D.2, D.3: the margin over training (a), neurons per irrep (b), irrep power at initialization and
    at the end (c, d)."""
    from margintheory.core.problems import GroupComposition
    from margintheory.core.representations import real_irreps
    from margintheory.training.task_figures import plot_group_irreps

    o = _first(outcomes, rec.labels[0])
    if o is None:
        return []
    tag = _run_tag(o)
    written = tf.plot_history(o.history, o.analysis.get("gamma_star"), out / f"{rec.name}-margin",
                              f"{rec.name} (a): {tag}", norm_label="3")
    irreps = real_irreps(GroupComposition(o.spec.sizes["group"]).G)
    return written + plot_group_irreps(o.network, irreps, out / f"{rec.name}-irreps", o.initial,
                                       title=f"{rec.name} (b-d): {tag}")


def _cogo_node_strength(o: RunOutcome) -> np.ndarray:
    """``(frequencies 1..(d-1)/2, nodes)``: ``(|z[a,k,j]|^2 + |z[b,k,j]|^2)^(1/2)`` (the salient-node measure of
    :mod:`margintheory.tasks.cogo.factorization`), nodes sorted by their strongest frequency."""
    from margintheory.tasks.cogo.algebra import from_network

    z = from_network(o.network).z
    half = (z.shape[1] - 1) // 2
    strength = np.sqrt(np.abs(z[0, 1 : half + 1]) ** 2 + np.abs(z[1, 1 : half + 1]) ** 2)
    order = np.lexsort((-strength.max(axis=0), strength.argmax(axis=0)))
    return strength[:, order]


def _cogo_fig2(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    """Fig. 2: the nodes' weight per frequency, one panel per run (with and without the R_* term)."""
    runs = [o for label in rec.labels if (o := _first(outcomes, label)) is not None]
    if not runs:
        return []
    plt = tf.plt
    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 2.2 * len(runs) + 0.5), squeeze=False)
    for ax, o in zip(axes[:, 0], runs, strict=True):
        strength = _cogo_node_strength(o)
        image = ax.imshow(strength, aspect="auto", cmap="viridis")
        orders = [s["order"] for s in o.analysis["details"]["per_frequency"]]
        ax.set_yticks(range(strength.shape[0]), [f"k={k + 1}" for k in range(strength.shape[0])], fontsize=7)
        ax.set_xlabel("hidden node (sorted by its strongest frequency)")
        ax.set_title(f"run {o.spec.label}: nodes per frequency {orders} ({_run_tag(o)})", fontsize=8)
        fig.colorbar(image, ax=ax, label="|z_a|, |z_b| (rms)")
    fig.suptitle(f"{rec.name}: input weights per frequency and node", fontsize=10)
    fig.tight_layout()
    return tf.save_figure(fig, out / f"{rec.name}-nodes")


def _cogo_orders(rec: Recipe, outcomes: Outcomes, out: Path) -> list[Path]:
    """Fig. 3 (top) / Fig. 10: the distribution of per-frequency solution orders per run, and (Table 2) the shares
    of the factorable solutions per construction against the paper's."""
    from margintheory.tasks.cogo.factorization import CONSTRUCTIONS

    groups = {label: runs for label in rec.labels if (runs := outcomes.get(label))}
    if not groups:
        return []
    plt = tf.plt
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    width = 0.8 / len(groups)
    paper = next((c.paper_value for c in rec.claims if c.kind == "cogo-constructions"), None) or {}
    for i, (label, runs) in enumerate(groups.items()):
        sols = [s for o in runs for s in o.analysis["details"]["per_frequency"]]
        orders = np.bincount([s["order"] for s in sols], minlength=9)[:9]
        ax.bar(np.arange(9) + i * width, orders / max(1, len(sols)), width, label=f"{label} ({len(runs)} seeds)")
        kinds = [s["construction"] for s in sols if s["construction"] is not None]
        shares = [kinds.count(c) / max(1, len(kinds)) for c in CONSTRUCTIONS]
        ax2.bar(np.arange(len(CONSTRUCTIONS)) + i * width, shares, width, label=f"{label} (measured)")
        row = paper.get(int(label[1:])) if label[1:].isdigit() else None
        if row:
            ax2.errorbar(np.arange(len(CONSTRUCTIONS)) + i * width, [row[c][0] / 100 for c in CONSTRUCTIONS],
                         yerr=[row[c][1] / 100 for c in CONSTRUCTIONS], fmt="k_", ms=10, capsize=2)
    ax.set_xlabel("order of the per-frequency solution (nodes)")
    ax.set_ylabel("share of (seed, frequency) solutions")
    ax.legend(fontsize=7)
    ax2.set_xticks(np.arange(len(CONSTRUCTIONS)), CONSTRUCTIONS, fontsize=7)
    ax2.set_ylabel("share of factorable solutions")
    ax2.set_title("bars: measured; black: Table 2 (mean +- sd over 5 seeds)", fontsize=8)
    ax2.legend(fontsize=7)
    fig.suptitle(f"{rec.name}: solution orders and constructions", fontsize=10)
    fig.tight_layout()
    written = tf.save_figure(fig, out / f"{rec.name}-orders")
    from margintheory.training.task_figures import plot_loss_history

    first = next(iter(groups.values()))[0]
    return written + plot_loss_history(first.history, out / f"{rec.name}-loss", f"{rec.name}: {_run_tag(first)}")


DRAWERS: dict[str, Callable[[Recipe, Outcomes, Path], list[Path]]] = {
    "morwani-fig7.1": _morwani_fig71, "morwani-fig7.4": _morwani_fig74, "morwani-fig7.5": _morwani_fig75,
    "morwani-figD.2": _morwani_groups, "morwani-figD.3": _morwani_groups, "morwani-fig7.6": _morwani_groups,
    "fourier-circuits-fig4.1": _fourier_circuits, "fourier-circuits-figC.1": _fourier_circuits,
    "fourier-circuits-figC.3": _fourier_circuits, "lambda-sweep": _lambda_sweep, "cogo-fig2": _cogo_fig2,
    "cogo-fig3": _cogo_orders, "cogo-table2": _cogo_orders,
}


def draw_recipe(rec: Recipe, outcomes: Outcomes, out: str | os.PathLike[str]) -> list[Path]:
    """The figures of ``rec`` from its finished runs into ``out`` (none for a recipe whose runs have no trainer in
    this version)."""
    draw = DRAWERS.get(rec.name)
    if draw is None or not any(outcomes.values()):
        return []
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    return draw(rec, outcomes, folder)
