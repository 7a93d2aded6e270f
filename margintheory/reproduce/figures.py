"""The papers' figures, drawn from a recipe's trained runs (PNG and PDF, written atomically).

Modular addition reuses the trainer's figures (:mod:`margintheory.training.figures`: embeddings with their cosine
interpolation and power spectra as in Morwani et al. Fig. 7.1a-b and Li et al. Fig. 4.1; the margin over training
as in Fig. 7.1c; dominant frequencies and max power as in Li et al. Fig. 4.2) and adds the panels that compare
runs: neurons per frequency (Morwani et al. Fig. D.1), the max-power histograms of Fig. 7.4, and the lambda sweep.
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


DRAWERS: dict[str, Callable[[Recipe, Outcomes, Path], list[Path]]] = {
    "morwani-fig7.1": _morwani_fig71, "morwani-fig7.4": _morwani_fig74,
    "fourier-circuits-fig4.1": _fourier_circuits, "fourier-circuits-figC.1": _fourier_circuits,
    "fourier-circuits-figC.3": _fourier_circuits, "lambda-sweep": _lambda_sweep,
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
