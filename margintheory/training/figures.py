"""Figures of a trained network (matplotlib, Agg backend; every figure as PNG and PDF, written atomically).

* :func:`plot_embeddings` - like Li et al.'s Fig. 4.1 / C.1: for a few neurons, the weights ``u_1..u_k, w`` (dots) with
  their trigonometric (cosine) interpolation, the unique function of period ``p`` with the same DFT
  (frequencies ``-(p-1)/2..(p-1)/2``), and the one-sided power spectrum.
* :func:`plot_frequency_distribution` - like Li et al. Fig. 4.2: histogram of the neurons' dominant frequencies and
  the distribution of the max normalized power of the embeddings at initialization vs at the end.
* :func:`plot_margin_history` - like Morwani et al. Fig. 7.1c: normalized margin over training with the ``gamma*`` line.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import SupportsFloat

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from margintheory import theory  # noqa: E402
from margintheory.atomic import atomic_write_bytes  # noqa: E402
from margintheory.fourier import dft, neuron_fourier, one_sided_power  # noqa: E402
from margintheory.margins import MarginResult  # noqa: E402
from margintheory.network import PolyNetwork  # noqa: E402
from margintheory.training.metrics import fourier_summary, norm_shares  # noqa: E402

VECTOR_COLORS = ("tab:red", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:olive")


def save_figure(fig: plt.Figure, stem: str | os.PathLike[str]) -> list[Path]:
    """Write ``stem.png`` and ``stem.pdf`` atomically; returns the paths."""
    out = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=130, bbox_inches="tight")
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
    covered = sum(1 for z in freqs if counts[z] > 0)
    ax.set_title(f"(a) frequencies at the end: {covered}/{len(freqs)} used", fontsize=9)
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
        ax.set_title(f"({letter}) {label}: mean {mp.mean():.3f}; large neurons: mean {mp[big].mean():.3f}, "
                     f"min {mp[big].min():.3f}", fontsize=8)
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
    steps = np.array([h["step"] for h in history], dtype=float)
    nm = np.array([_num(h["normalized_margin"]) for h in history])
    gamma = theory.gamma_star(p, k) if p % 2 else None
    fig, (ax, ax3, ax2) = plt.subplots(1, 3, figsize=(15, 3.6))
    ax.plot(steps, nm, color="tab:blue", label="normalized margin")
    if gamma is not None:
        ax.axhline(gamma, color="tab:red", ls="--", label=f"gamma* = {gamma:.4g}")
        ax.set_ylim(max(float(np.nanmin(nm)), -gamma) - 0.05 * gamma, 1.12 * gamma)
        ax.set_title(f"final margin / gamma* = {nm[-1] / gamma:.4f}", fontsize=9)
    ax.set_xlabel("step")
    ax.set_ylabel("h(theta / ||theta||_{2,k+1})")
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
    for key, label, color in (("mean_max_power", "mean max normalized power", "tab:green"),
                              ("weighted_max_power", "same, weighted by norm share", "tab:cyan"),
                              ("train_acc", "train accuracy", "tab:gray"), ("test_acc", "test accuracy", "tab:olive")):
        vals = np.array([_num(h.get(key)) for h in history])
        if np.isfinite(vals).any():
            ax2.plot(steps, vals, color=color, label=label)
    ax2.set_ylim(-0.02, 1.05)
    ax2.set_xlabel("step")
    ax2.legend(fontsize=8, loc="lower right")
    fig.suptitle(title or f"training p={p}, k={k}", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, stem)


def plot_summary(net: PolyNetwork, margins: MarginResult, stem: str | os.PathLike[str], title: str = "",
                 tolerance: float = 1e-2) -> list[Path]:
    """One-page summary of a network: (a) distribution of the normalized margins of all ``p^k`` points relative to
    ``gamma*``; (b) each neuron's dominant frequency and phase residual ``theta_u1+...+theta_uk-theta_w`` (the phase
    condition of Lemma C.15 is the zero line; marker area = norm share, colour = Fourier sparsity); (c) the share of
    ``||theta||^(k+1)`` per frequency against the construction's uniform share (Lemma C.18); (d) the neurons' norm
    shares, sorted, with their cumulative sum."""
    from matplotlib.lines import Line2D

    p, k, m = net.p, net.k, net.m
    gamma = theory.gamma_star(p, k) if p % 2 else None
    ref = gamma if gamma else abs(margins.normalized_margin) or 1.0
    ref_name = r"$\gamma^*$" if gamma else "min margin"
    nf = neuron_fourier(net, tolerance)
    share = norm_shares(net)
    sparsity = nf.max_power.min(axis=1)
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.2))

    ax = axes[0, 0]
    x = margins.margins / margins.normalization / ref
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= 1e-9 * max(1.0, abs(hi)):
        ax.bar([lo], [x.size], width=0.02, color="tab:blue")
        ax.set_xlim(lo - 0.25, lo + 0.25)
        ax.text(0.03, 0.95, f"all {x.size:,} points at {lo:.12g} {ref_name}\n(spread {hi - lo:.1e})",
                transform=ax.transAxes, va="top", fontsize=9)
    else:
        ax.hist(x, bins=60, color="tab:blue")
        ax.set_yscale("log")
    ax.axvline(1.0, color="tab:red", ls="--", lw=1, label=f"{ref_name} = {ref:.6g}")
    ax.axvline(lo, color="black", ls=":", lw=1, label=f"min = {lo:.9g} {ref_name}")
    ax.set_xlabel(f"normalized margin of a point / {ref_name}")
    ax.set_ylabel("points")
    ax.set_title(f"(a) margins of all p^k = {x.size:,} points", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")

    ax = axes[0, 1]
    jitter = np.random.default_rng(0).uniform(-0.18, 0.18, size=m)
    sc = ax.scatter(nf.frequency + jitter, nf.phase_residual, s=12 + 240 * share / max(share.max(), 1e-300),
                    c=sparsity, cmap="viridis", vmin=0, vmax=1, alpha=0.8, edgecolors="k", linewidths=0.3)
    ax.axhline(0.0, color="tab:red", lw=1)
    band = np.sqrt(tolerance) * 2 * np.pi
    ax.axhspan(-band, band, color="tab:red", alpha=0.08)
    ax.set_ylim(-np.pi - 0.2, np.pi + 0.2)
    ax.set_yticks([-np.pi, -np.pi / 2, 0, np.pi / 2, np.pi], [r"$-\pi$", r"$-\pi/2$", "0", r"$\pi/2$", r"$\pi$"])
    ax.set_xticks(range(0, p // 2 + 1))
    ax.set_xlim(-0.5, p // 2 + 0.5)
    ax.set_xlabel("dominant frequency of the neuron (jittered)")
    ax.set_ylabel(r"$\theta_{u_1}+\dots+\theta_{u_k}-\theta_w$ (mod $2\pi$)")
    inside = int(nf.in_optimal_set.sum())
    ax.set_title(f"(b) phase condition (red line): {inside}/{m} neurons in the optimal set", fontsize=10)
    cb = fig.colorbar(sc, ax=ax, fraction=0.046, pad=0.02)
    cb.set_label("min max normalized power (1 = single frequency)", fontsize=8)
    ax.legend(handles=[Line2D([], [], ls="", marker="o", color="gray", label="area = norm share")], fontsize=8,
              loc="lower right")

    ax = axes[1, 0]
    freqs = theory.frequencies(p)
    mass = np.bincount(nf.frequency, weights=share, minlength=p // 2 + 1)
    ax.bar(np.arange(mass.size), mass, color="tab:green", label="share of the norm budget")
    if freqs:
        ax.axhline(1.0 / len(freqs), color="tab:red", ls="--", lw=1, label="construction: uniform")
    used = sum(1 for z in freqs if mass[z] > 0)
    ax.set_xticks(range(mass.size))
    ax.set_xlabel("frequency")
    ax.set_ylabel(r"$\sum_i \|\theta_i\|^{k+1} / \|\theta\|^{k+1}$")
    ax.set_title(f"(c) norm share per frequency: {used}/{len(freqs)} frequencies used", fontsize=10)
    ax.legend(fontsize=8)

    ax = axes[1, 1]
    order = np.sort(share)[::-1]
    ranks = np.arange(1, m + 1)
    ax.semilogy(ranks, np.maximum(order, 1e-300), "o-", ms=3, color="tab:purple", label="neuron's share")
    ax.axhline(1.0 / m, color="gray", ls=":", lw=1, label="1/m (all equal)")
    ax.set_ylim(max(order.min(), 1e-12) / 3, 1.5)
    ax.set_xlabel("neurons, largest share first")
    ax.set_ylabel("norm share")
    twin = ax.twinx()
    twin.plot(ranks, np.cumsum(order), color="tab:orange", label="cumulative")
    twin.set_ylim(0, 1.05)
    twin.set_ylabel("cumulative share", color="tab:orange")
    half = int(np.searchsorted(np.cumsum(order), 0.99) + 1)
    ax.set_title(f"(d) norm shares: {half} of {m} neurons hold 99%", fontsize=10)
    lines = ax.get_legend_handles_labels()
    extra = twin.get_legend_handles_labels()
    ax.legend(lines[0] + extra[0], lines[1] + extra[1], fontsize=8, loc="center right")

    ratio = f"{margins.normalized_margin / gamma:.12g}" if gamma else "n/a (even p)"
    fig.suptitle(title or f"p = {p}, k = {k}, m = {m}: normalized margin / gamma* = {ratio}", fontsize=12)
    fig.tight_layout()
    return save_figure(fig, stem)


def _num(v: object) -> float:
    """A history value as a float: ``None`` is nan; non-finite values are stored as strings (``"inf"``)."""
    if v is None:
        return float("nan")
    if isinstance(v, str | SupportsFloat):
        return float(v)
    raise TypeError(f"history value {v!r} is not a number")


def training_figures(out_dir: str | os.PathLike[str]) -> list[Path]:
    """All three figures of a ``margintheory train`` output directory (``network.npz``, ``initial.npz``, history)."""
    out = Path(out_dir)
    final = PolyNetwork.load(out / "network.npz")
    initial = PolyNetwork.load(out / "initial.npz") if (out / "initial.npz").exists() else None
    doc = json.loads((out / "history.json").read_text())
    cfg = doc["config"]
    tag = f"p={cfg['p']}, k={cfg['k']}, m={cfg['width']}, {doc['history'][-1]['step']} steps"
    written = plot_embeddings(final, out / "embeddings", title=f"trained neurons ({tag})")
    written += plot_frequency_distribution(final, out / "frequencies", initial, title=f"frequencies ({tag})")
    written += plot_margin_history(doc["history"], cfg["p"], cfg["k"], out / "margin", title=f"training ({tag})")
    return written
