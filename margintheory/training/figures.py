"""Figures of a trained network (matplotlib, Agg backend; every figure as PNG and PDF, written atomically).

* :func:`plot_embeddings` - like Li et al.'s Fig. 4.1 / C.1: for a few neurons, the weights ``u_1..u_k, w`` (dots) with
  their trigonometric (cosine) interpolation, the unique function of period ``p`` with the same DFT
  (frequencies ``-(p-1)/2..(p-1)/2``), and the one-sided power spectrum.
* :func:`plot_frequency_distribution` - like Li et al. Fig. 4.2: histogram of the neurons' dominant frequencies and
  the distribution of the max normalized power of the embeddings at initialization vs at the end.
* :func:`plot_margin_history` - like Morwani et al. Fig. 7.1c: normalized margin over training with the ``gamma*`` line.
* :func:`plot_summary` / :func:`summary_figure` - one column-wide page for a paper: margins of all points, the phase
  condition per neuron, norm share per frequency and per neuron.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, SupportsFloat, cast

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from margintheory.core import theory  # noqa: E402
from margintheory.core.network import PolyNetwork  # noqa: E402
from margintheory.engines.fourier import dft, neuron_fourier, one_sided_power  # noqa: E402
from margintheory.engines.margins import MarginResult  # noqa: E402
from margintheory.runtime.atomic import atomic_write_bytes  # noqa: E402
from margintheory.training.metrics import SPARSE_THRESHOLD, fourier_summary, norm_shares  # noqa: E402

VECTOR_COLORS = ("tab:red", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:olive")


def save_figure(fig: plt.Figure, stem: str | os.PathLike[str], dpi: int = 130) -> list[Path]:
    """Write ``stem.png`` (at ``dpi``) and ``stem.pdf`` atomically; returns the paths."""
    out = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=dpi, bbox_inches="tight", pad_inches=0.02)
        path = Path(f"{stem}.{ext}")
        atomic_write_bytes(path, buf.getvalue())
        out.append(path)
    plt.close(fig)
    return out


def cosine_interpolation(v: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``(1/p) sum_{|j| <= p/2} v^(j) e^{2 pi i j t / p}``: equals ``v`` at integer ``t`` (real for odd ``p``)."""
    p = v.shape[-1]
    F = dft(v)
    j = np.arange(p)
    j = np.where(j > p // 2, j - p, j)
    return (F[None, :] * np.exp(2j * np.pi * np.outer(t, j) / p)).sum(axis=1).real / p


def pick_neurons(net: PolyNetwork, count: int, seed: int = 0) -> np.ndarray:
    """``count`` random neurons (seeded) among those with ``||theta_i|| >= max/2`` (the neurons that carry weight)."""
    r = net.neuron_norms()
    active = np.flatnonzero(r >= 0.5 * r.max())
    pool = active if active.size >= count else np.argsort(-r)[:count]
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(pool, size=min(count, pool.size), replace=False))


def plot_embeddings(net: PolyNetwork, stem: str | os.PathLike[str], count: int = 4, seed: int = 0,
                    title: str = "") -> list[Path]:
    """Li et al. Fig. 4.1: weights with cosine interpolation (left columns) and one-sided power spectra (right)."""
    p, k = net.p, net.k
    idx = pick_neurons(net, count, seed)
    vecs = np.concatenate([net.U, net.W[:, None, :]], axis=1)
    names = [f"u{j + 1}" for j in range(k)] + ["w"]
    fig, axes = plt.subplots(len(idx), k + 2, figsize=(2.6 * (k + 2), 1.9 * len(idx)), squeeze=False)
    x = np.arange(p)
    t = np.linspace(0, p - 1, 400)
    P = one_sided_power(vecs[idx])
    for row, i in enumerate(idx):
        for col in range(k + 1):
            ax = axes[row, col]
            ax.plot(t, cosine_interpolation(vecs[i, col], t), color="lightsteelblue", lw=2)
            ax.plot(x, vecs[i, col], "o", color=VECTOR_COLORS[col % len(VECTOR_COLORS)], ms=3)
            ax.set_xticks([] if row < len(idx) - 1 else [0, p - 1])
            ax.tick_params(labelsize=7)
            if row == 0:
                ax.set_title(f"{names[col]}[x]", fontsize=9)
            if col == 0:
                ax.set_ylabel(f"neuron {i}", fontsize=8)
        ax = axes[row, k + 1]
        share = P[row] / np.maximum(P[row].sum(axis=-1, keepdims=True), 1e-300)
        width = 0.8 / (k + 1)
        for col in range(k + 1):
            ax.bar(np.arange(share.shape[-1]) + (col - k / 2) * width, share[col], width=width,
                   color=VECTOR_COLORS[col % len(VECTOR_COLORS)], label=names[col])
        ax.set_ylim(0, 1.45)
        ax.set_yticks([0, 0.5, 1])
        ax.tick_params(labelsize=7)
        if row == 0:
            ax.set_title("normalized power by frequency", fontsize=9)
            ax.legend(fontsize=6, ncol=k + 1, loc="upper right")
        if row == len(idx) - 1:
            ax.set_xlabel("frequency j (one-sided)", fontsize=8)
    fig.suptitle(title or f"neuron weights and their Fourier power (p={p}, k={k}, m={net.m})", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, stem)


def plot_frequency_distribution(final: PolyNetwork, stem: str | os.PathLike[str],
                                initial: PolyNetwork | None = None, title: str = "") -> list[Path]:
    """Li et al. Fig. 4.2: (a) dominant-frequency histogram, (b)/(c) max normalized power of the embeddings u_j."""
    p = final.p
    fs = fourier_summary(final.U, final.W)
    panels = 3 if initial is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.2))
    freqs = theory.frequencies(p)
    counts = np.bincount(fs.dominant_frequency, minlength=p // 2 + 1)
    ax = axes[0]
    ax.bar(np.arange(counts.size), counts, color="tab:blue")
    ax.set_xlabel("dominant frequency")
    ax.set_ylabel("neurons")
    ax.set_ylim(0, 1.45 * max(1, int(counts.max())))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    dominant = sum(1 for z in freqs if counts[z] > 0)
    ax.set_title(f"(a) at the end: {dominant}/{len(freqs)} frequencies dominant in some neuron,\n"
                 f"{fs.frequencies_covered}/{len(freqs)} in a sparse one (every vector's max power "
                 f">= {SPARSE_THRESHOLD:g}: 'frequencies covered')", fontsize=8)
    mass = np.bincount(fs.dominant_frequency, weights=norm_shares(final), minlength=p // 2 + 1)
    twin = ax.twinx()
    twin.plot(np.arange(mass.size), mass, "o", color="tab:red", ms=4, label="share of ||theta||^(k+1)")
    twin.axhline(1.0 / len(freqs), color="tab:red", ls=":", lw=1, label="construction: uniform")
    twin.set_ylim(0, 1.45 * max(float(mass.max()), 1.0 / len(freqs)))
    twin.set_ylabel("norm share", color="tab:red")
    twin.legend(fontsize=7, loc="upper right")
    bins = np.linspace(0, 1, 41)
    nets = ([("initialization", initial, "tab:gray")] if initial is not None else []) + [("end", final, "tab:green")]
    for ax, (label, net, color) in zip(axes[1:], nets, strict=True):
        mp, big = _embedding_max_power(net)
        ax.hist([mp[big], mp[~big]], bins=bins, stacked=True, color=[color, "tab:orange"],
                label=["neurons with ||theta_i|| >= max/10", "smaller neurons"])
        ax.set_xlim(0, 1.02)
        ax.set_xlabel("max normalized power of u_j (one-sided)")
        ax.set_ylabel("embedding vectors")
        ax.legend(fontsize=7, loc="upper left")
        letter = "b" if label == "initialization" else chr(ord("a") + panels - 1)
        recorded = fourier_summary(net.U, net.W).mean_max_power
        ax.set_title(f"({letter}) {label}: mean over the u_j {mp.mean():.3f} (large neurons {mp[big].mean():.3f}, "
                     f"min {mp[big].min():.3f});\nover the u_j and w ('mean max power'): {recorded:.3f}", fontsize=8)
    fig.suptitle(title or f"frequency usage and sparsity (p={p}, k={final.k}, m={final.m})", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, stem)


def _embedding_max_power(net: PolyNetwork) -> tuple[np.ndarray, np.ndarray]:
    """Max normalized power of every ``u_{i,j}`` and whether neuron ``i`` has at least a tenth of the largest norm."""
    P = one_sided_power(net.U)  # (m, k, h)
    tot = P.sum(axis=-1)
    mp = np.where(tot > 0, P.max(axis=-1) / np.where(tot > 0, tot, 1.0), 0.0)
    r = net.neuron_norms()
    big = np.repeat(r >= 0.1 * r.max(), net.k)
    return mp.ravel(), big


def plot_margin_history(history: list[dict], p: int, k: int, stem: str | os.PathLike[str],
                        title: str = "") -> list[Path]:
    """Morwani et al. Fig. 7.1c: normalized margin vs step with the ``gamma*`` line; right: sparsity and accuracy."""
    return plot_history(history, theory.gamma_star(p, k) if p % 2 else None, stem,
                        title or f"training p={p}, k={k}")


#: the structure statistics drawn on the right of :func:`plot_history` (those the history has)
STRUCTURE_CURVES = (
    ("mean_max_power", "mean max normalized power", "tab:green"),
    ("weighted_max_power", "same, weighted by norm share", "tab:cyan"),
    ("mean_max_irrep_power", "mean max irrep power", "tab:green"),
    ("weighted_max_irrep_power", "same, weighted by norm share", "tab:cyan"),
    ("weight_on_support", "share of ||U||^2 on the support S", "tab:green"),
    ("weighted_characterized", "norm share of Thm 7.8 neurons", "tab:cyan"),
    ("train_acc", "train accuracy", "tab:gray"), ("test_acc", "test accuracy", "tab:olive"),
)


def plot_history(history: list[dict], gamma: float | None, stem: str | os.PathLike[str], title: str,
                 norm_label: str = "k+1") -> list[Path]:
    """Normalized margin vs step with the ``gamma*`` line (Morwani et al. Figs. 7.1c, 7.5, 7.6a), the gap to
    ``gamma*`` on a log scale, and the task's structure statistics and accuracies (:data:`STRUCTURE_CURVES`)."""
    steps = np.array([h["step"] for h in history], dtype=float)
    nm = np.array([_num(h["normalized_margin"]) for h in history])
    fig, (ax, ax3, ax2) = plt.subplots(1, 3, figsize=(15, 3.6))
    ax.plot(steps, nm, color="tab:blue", label="normalized margin")
    if gamma is not None:
        ax.axhline(gamma, color="tab:red", ls="--", label=f"gamma* = {gamma:.4g}")
        ax.set_ylim(max(float(np.nanmin(nm)), -gamma) - 0.05 * gamma, 1.12 * gamma)
        ax.set_title(f"final margin / gamma* = {nm[-1] / gamma:.4f}", fontsize=9)
    ax.set_xlabel("step")
    ax.set_ylabel(f"h(theta / ||theta||_{{2,{norm_label}}})")
    ax.legend(fontsize=8, loc="lower right")
    if gamma is not None:
        gap = 1.0 - nm / gamma
        ok = gap > 0
        ax3.semilogy(steps[ok], gap[ok], color="tab:purple")
        ax3.set_xlabel("step")
        ax3.set_ylabel("1 - margin / gamma*")
        ax3.set_title(f"gap to gamma* (final {gap[-1]:.2e})", fontsize=9)
    else:
        ax3.axis("off")
    for key, label, color in STRUCTURE_CURVES:
        vals = np.array([_num(h.get(key)) for h in history])
        if np.isfinite(vals).any():
            ax2.plot(steps, vals, color=color, label=label)
    ax2.set_ylim(-0.02, 1.05)
    ax2.set_xlabel("step")
    ax2.legend(fontsize=8, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, stem)


#: Matplotlib settings of the summary figure: sized for one column of a two-column paper (3.5 in wide), 7 pt
#: text at that size, thin lines, vector PDF and a 300 dpi PNG.
SUMMARY_STYLE: dict[str, Any] = {
    "figure.constrained_layout.w_pad": 0.02, "figure.constrained_layout.h_pad": 0.03,
    "figure.constrained_layout.wspace": 0.06, "figure.constrained_layout.hspace": 0.06,
    "font.size": 7, "axes.titlesize": 7, "axes.labelsize": 7, "xtick.labelsize": 6, "ytick.labelsize": 6,
    "legend.fontsize": 6, "axes.linewidth": 0.6, "xtick.major.width": 0.6, "ytick.major.width": 0.6,
    "xtick.major.size": 2.5, "ytick.major.size": 2.5, "lines.linewidth": 1.0, "pdf.fonttype": 42,
    "axes.titlepad": 3.0, "axes.labelpad": 2.0, "legend.frameon": True, "legend.framealpha": 0.85,
    "legend.edgecolor": "none", "legend.handlelength": 1.5, "legend.borderpad": 0.3,
}
SUMMARY_SIZE = (3.5, 3.9)  # inches
SUMMARY_DPI = 300


def plot_summary(net: PolyNetwork, margins: MarginResult, stem: str | os.PathLike[str], title: str = "",
                 tolerance: float = 1e-2) -> list[Path]:
    """Write :func:`summary_figure` as ``stem.pdf`` and a 300 dpi ``stem.png``; returns the paths."""
    return save_figure(summary_figure(net, margins, title, tolerance), stem, dpi=SUMMARY_DPI)


def summary_figure(net: PolyNetwork, margins: MarginResult, title: str = "", tolerance: float = 1e-2) -> plt.Figure:
    """One-page summary of a network, one column wide (3.5 in, text of 5.5 to 7.5 pt).

    (a) the normalized margins of all ``p^k`` points as a histogram of their relative deviation from ``gamma*``
    (``gamma*`` of Theorem C.22 of Li, Liang, Shi, Song, Zhou, "Fourier circuits in neural networks",
    arXiv:2402.09469; for even ``p``, where it is not defined, from the smallest margin), with the float64 error
    bound of the margin as a band; (b) each neuron's dominant frequency and phase residual
    ``theta_u1+...+theta_uk-theta_w`` against the phase condition of Lemma C.15 (the zero line; the band is the
    tolerance of the optimal-set check; marker area = norm share, colour = the smallest fraction of a weight
    vector's power at its dominant frequency); (c) each frequency's share of ``||theta||^(k+1)`` against the
    construction's uniform share (Lemma C.18); (d) the cumulative norm share of the neurons, largest first,
    against equal shares."""
    p, k, m = net.p, net.k, net.m
    nf = neuron_fourier(net, tolerance)
    share = norm_shares(net)
    with plt.rc_context(cast(Any, SUMMARY_STYLE)):
        fig, axes = plt.subplots(2, 2, figsize=SUMMARY_SIZE, layout="constrained")
        gamma = _summary_margins(axes[0, 0], margins, p, k)
        _summary_phases(fig, axes[0, 1], nf, share, tolerance)
        _summary_frequency_shares(axes[1, 0], nf, share, p)
        _summary_concentration(axes[1, 1], share)
        if gamma is not None:
            ratio = margins.normalized_margin / gamma
            what = rf"min margin / $\gamma^*$ = {ratio:.6g}" if abs(ratio - 1) >= 1e-4 else \
                rf"min margin / $\gamma^*$ = 1 {'-' if ratio < 1 else '+'} {abs(ratio - 1):.1e}"
        else:
            what = f"normalized margin {margins.normalized_margin:.4g} (p even: no $\\gamma^*$)"
        fig.suptitle(title or f"p = {p}, k = {k}, m = {m}: {what}", fontsize=7.5)
    return fig


def _summary_margins(ax: plt.Axes, margins: MarginResult, p: int, k: int) -> float | None:
    """Panel (a); returns ``gamma*`` (``None`` for even ``p``)."""
    gamma = theory.gamma_star(p, k) if p % 2 else None
    normalized = margins.margins / margins.normalization
    # relative to gamma*; for even p (no gamma*) the normalized margins themselves, against their minimum
    dev = normalized / gamma - 1.0 if gamma else normalized
    band = margins.normalized_tolerance / (gamma or 1.0)
    size = max(float(np.abs(dev).max()), band, 1e-300)
    exponent = int(np.floor(np.log10(size))) if size < 1e-2 else 0
    unit = 10.0**exponent  # deviations of 1e-11 are shown as 1.4 (x 1e-11), never as an offset text
    dev, band = dev / unit, band / unit
    lo, hi = float(dev.min()), float(dev.max())
    centre = 0.0 if gamma else lo
    width = max(hi - lo, abs(lo - centre), abs(hi - centre), band)
    single = hi - lo <= 0.05 * width
    if single:  # one value (up to rounding): a single bar of visible width
        ax.bar([(lo + hi) / 2], [dev.size], width=0.08 * width, color="tab:blue")
        ax.set_xlim(min(lo, centre) - 1.6 * width, max(hi, centre) + 1.6 * width)
    else:
        ax.hist(dev, bins=min(40, max(10, int(np.sqrt(dev.size)))), color="tab:blue")
    ax.axvspan(centre - band, centre + band, color="tab:red", alpha=0.2, lw=0, label="float64 error bound")
    scale = rf" ($\times 10^{{{exponent}}}$)" if exponent else ""
    if gamma:
        ax.axvline(0.0, color="tab:red", ls="--", lw=0.8, label=rf"$\gamma^*$ = {gamma:.4g}")
        ax.set_xlabel(rf"margin / $\gamma^*$ $-$ 1{scale}")
    else:
        ax.axvline(lo, color="tab:red", ls="--", lw=0.8, label=f"min = {lo * unit:.4g}")
        ax.set_xlabel(f"normalized margin{scale}")
    ax.set_ylabel("points")
    ax.set_ylim(0, (dev.size if single else ax.get_ylim()[1]) * 1.45)
    ax.set_title(f"(a) margins of {dev.size:,} points", loc="left")
    ax.legend(loc="upper left", fontsize=5.5)
    return gamma


def _summary_phases(fig: plt.Figure, ax: plt.Axes, nf, share: np.ndarray, tolerance: float) -> None:  # noqa: ANN001
    """Panel (b): the phase condition of Lemma C.15."""
    p, m = nf.p, share.size
    jitter = np.random.default_rng(0).uniform(-0.22, 0.22, size=m)
    sizes = 2 + 40 * share / max(float(share.max()), 1e-300)
    sc = ax.scatter(nf.frequency + jitter, nf.phase_residual / np.pi, s=sizes, c=nf.max_power.min(axis=1),
                    cmap="viridis", vmin=0, vmax=1, alpha=0.85, edgecolors="k", linewidths=0.2, zorder=3)
    band = np.sqrt(tolerance) * 2  # the phase tolerance of the optimal-set check, in units of pi
    ax.axhspan(-band, band, color="tab:red", alpha=0.12, lw=0)
    ax.axhline(0.0, color="tab:red", lw=0.8)
    ax.set_ylim(-1.05, 1.05)
    ax.set_yticks([-1, -0.5, 0, 0.5, 1], [r"$-\pi$", r"$-\pi/2$", "0", r"$\pi/2$", r"$\pi$"])
    top = max(p // 2, int(nf.frequency.max()) if m else 1)
    ax.set_xlim(0.4 if nf.frequency.min() > 0 else -0.6, top + 0.6)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
    ax.set_xlabel("dominant frequency of the neuron")
    ax.set_ylabel(r"$\theta_{u_1}+\dots+\theta_{u_k}-\theta_w$")
    ax.set_title(f"(b) phases: {int(nf.in_optimal_set.sum())}/{m} optimal", loc="left")
    cb = fig.colorbar(sc, ax=ax, fraction=0.08, pad=0.02, aspect=22, shrink=0.85, anchor=(0.0, 0.0),
                      ticks=[0, 0.25, 0.5, 0.75, 1])
    cb.set_label("power at the dominant frequency", fontsize=5.5, labelpad=1)
    cb.ax.tick_params(labelsize=5.5, width=0.5, length=2)
    cb.outline.set_linewidth(0.5)


def _summary_frequency_shares(ax: plt.Axes, nf, share: np.ndarray, p: int) -> None:  # noqa: ANN001
    """Panel (c): norm share per frequency against the construction's uniform share (Lemma C.18)."""
    freqs = theory.frequencies(p)
    mass = np.bincount(nf.frequency, weights=share, minlength=p // 2 + 1)
    first = 0 if mass[0] > 0 else 1
    x = np.arange(first, mass.size)
    ax.bar(x, mass[first:], width=0.75, color="tab:green", label="network")
    if freqs:
        ax.axhline(1.0 / len(freqs), color="tab:red", ls="--", lw=0.8, label="construction")
    used = sum(1 for z in freqs if mass[z] > 0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
    ax.set_xlim(first - 0.6, mass.size - 0.4)
    ax.set_ylim(0, max(float(mass.max()), 1.0 / max(len(freqs), 1)) * 1.5)
    ax.set_xlabel("frequency")
    ax.set_ylabel(r"share of $\|\theta\|^{k+1}$")
    ax.set_title(f"(c) {used}/{len(freqs)} with norm share", loc="left")
    ax.legend(loc="best", fontsize=5.5)


def _summary_concentration(ax: plt.Axes, share: np.ndarray) -> None:
    """Panel (d): cumulative norm share of the neurons, largest first, against equal shares."""
    m = share.size
    cum = np.concatenate([[0.0], np.cumsum(np.sort(share)[::-1])])
    ranks = np.arange(m + 1)
    ax.plot(ranks, cum, color="tab:purple", label="network", drawstyle="steps-post" if m <= 12 else "default")
    ax.plot([0, m], [0, 1], color="gray", ls=":", lw=0.8, label="equal shares")
    n99 = int(np.searchsorted(cum[1:], 0.99) + 1)
    ax.axhline(0.99, color="gray", lw=0.4)
    ax.plot([n99], [cum[n99]], "o", ms=2.5, color="tab:purple")
    ax.set_xlim(0, m)
    ax.set_ylim(0, 1.04)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
    ax.set_xlabel("neurons, largest norm share first")
    ax.set_ylabel("cumulative norm share")
    ax.set_title(f"(d) 99% of norm in {n99}/{m}", loc="left")
    ax.legend(loc="lower right", fontsize=5.5)


def _num(v: object) -> float:
    """A history value as a float: ``None`` is nan; non-finite values are stored as strings (``"inf"``)."""
    if v is None:
        return float("nan")
    if isinstance(v, str | SupportsFloat):
        return float(v)
    raise TypeError(f"history value {v!r} is not a number")


def modular_training_figures(out: Path, doc: dict[str, Any]) -> list[Path]:
    """The embeddings, frequencies and margin figures of a modular-addition run directory (``doc``: its
    ``history.json``); every task's: :func:`margintheory.training.task_figures.training_figures`."""
    cfg = doc["config"]
    final = PolyNetwork.load(out / "network.npz")
    initial = PolyNetwork.load(out / "initial.npz") if (out / "initial.npz").exists() else None
    tag = f"p={cfg['p']}, k={cfg['k']}, m={cfg['width']}, {doc['history'][-1]['step']} steps"
    relu = cfg.get("activation", "power") == "relu"
    tag += ", ReLU" if relu else ""
    written = plot_embeddings(final, out / "embeddings", title=f"trained neurons ({tag})")
    written += plot_frequency_distribution(final, out / "frequencies", initial, title=f"frequencies ({tag})")
    gamma = doc.get("gamma_star") if "gamma_star" in doc else theory.gamma_star(cfg["p"], cfg["k"])
    written += plot_history(doc["history"], gamma, out / "margin", f"training ({tag})",
                            norm_label="2" if relu else "k+1")
    return written
