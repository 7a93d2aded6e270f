"""Figures of a training run on sparse parity, a finite group or CoGO (matplotlib, Agg backend; PNG and PDF), and
:func:`training_figures`, the figures of any run directory.

* :func:`plot_group_irreps` - Morwani et al. Fig. 7.6 (b)-(d) / D.2 / D.3: neurons per dominant irrep against the
  construction's ``2 d_R^3`` per irrep (Lemma D.15), and the max irrep power of the embedding vectors at
  initialization and at the end;
* :func:`plot_parity_neurons` - Morwani et al. Fig. 7.5 (a): the weights ``u_i`` and ``w_i`` of the neurons with the
  largest norm, the support ``S`` marked;
* :func:`plot_loss_history` - CoGO (Tian Fig. 3, top left): training loss and train / test accuracy per step;
* the margin history of every task: :func:`margintheory.training.figures.plot_history` (Figs. 7.5 and 7.6 (a)).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from margintheory.core.network import PolyNetwork  # noqa: E402
from margintheory.core.representations import Irrep  # noqa: E402
from margintheory.runtime import strict_json
from margintheory.tasks.groups.training import irrep_power  # noqa: E402
from margintheory.tasks.parity.checks import ParityNetwork  # noqa: E402
from margintheory.training.figures import (  # noqa: E402
    _num,
    modular_training_figures,
    plot_embeddings,
    plot_frequency_distribution,
    plot_history,
    save_figure,
)
from margintheory.training.tasks import problem_of, training_task  # noqa: E402


def plot_group_irreps(final: PolyNetwork, irreps: list[Irrep], stem: str | os.PathLike[str],
                      initial: PolyNetwork | None = None, title: str = "") -> list[Path]:
    """(b) neurons per dominant irrep (bars) and the construction's share ``d_R^3 / sum d^3`` (dots, Lemma D.15:
    ``2 d_R^3`` neurons per irrep); (c)/(d) the max irrep power of ``u``, ``v`` at initialization and at the end."""
    panels = 3 if initial is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.4 * panels, 3.3))
    end = irrep_power(final.U, final.W, irreps)
    counts = np.bincount(end.dominant, minlength=len(irreps))
    names = [f"{R.name}\n(d={R.dim})" for R in irreps]
    ax = axes[0]
    ax.bar(np.arange(len(irreps)), counts, color="tab:blue", label="trained network")
    dims = np.array([R.dim for R in irreps], dtype=float)
    share = np.where(np.arange(len(irreps)) == 0, 0.0, dims**3) / np.sum(dims[1:] ** 3)
    ax.plot(np.arange(len(irreps)), share * final.m, "o", color="tab:red", label="construction's share")
    ax.set_xticks(np.arange(len(irreps)), names, fontsize=7)
    ax.set_ylabel("neurons")
    covered = end.covered()
    ax.set_title(f"(b) dominant irrep: {len(covered)}/{len(irreps) - 1} non-trivial irreps in a sparse neuron",
                 fontsize=8)
    ax.legend(fontsize=7)
    bins = np.linspace(0, 1, 41)
    nets = ([("initialization", initial, "tab:gray")] if initial is not None else []) + [("end", final, "tab:green")]
    for ax, (label, net, color) in zip(axes[1:], nets, strict=True):
        ip = irrep_power(net.U, net.W, irreps)
        values = ip.vector_max[:, :2].ravel()
        ax.hist(values, bins=bins, color=color)
        ax.set_xlim(0, 1.02)
        ax.set_xlabel("max normalized irrep power of u, v")
        ax.set_ylabel("embedding vectors")
        letter = "c" if label == "initialization" else chr(ord("b") + panels - 1)
        ax.set_title(f"({letter}) {label}: mean {values.mean():.3f}, min {values.min():.3f}", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, stem)


def plot_parity_neurons(net: ParityNetwork, stem: str | os.PathLike[str], count: int = 6,
                        title: str = "") -> list[Path]:
    """The ``count`` neurons of largest norm: ``u_i`` per input bit (the support ``S`` in red) and ``w_i``."""
    order = np.argsort(-net.neuron_norms())[: min(count, net.m)]
    fig, axes = plt.subplots(len(order), 2, figsize=(9, 1.5 * len(order) + 0.6), squeeze=False,
                             gridspec_kw={"width_ratios": [4, 1]})
    on_s = np.isin(np.arange(net.n), net.S)
    scale = float(np.abs(np.concatenate([net.U[order].ravel(), net.W[order].ravel()])).max()) or 1.0
    for row, i in enumerate(order):
        ax = axes[row, 0]
        ax.bar(np.arange(net.n), net.U[i], color=np.where(on_s, "tab:red", "tab:gray"))
        ax.set_ylim(-1.1 * scale, 1.1 * scale)
        ax.set_ylabel(f"neuron {i}", fontsize=8)
        ax.set_xticks(np.arange(net.n) if row == len(order) - 1 else [])
        ax.tick_params(labelsize=7)
        ax2 = axes[row, 1]
        ax2.bar([0, 1], net.W[i], color="tab:blue")
        ax2.set_ylim(-1.1 * scale, 1.1 * scale)
        ax2.set_xticks([0, 1], ["w(+1)", "w(-1)"] if row == len(order) - 1 else ["", ""], fontsize=7)
        ax2.tick_params(labelsize=7)
        if row == 0:
            ax.set_title("u_i by input bit (support S in red)", fontsize=9)
            ax2.set_title("w_i", fontsize=9)
    axes[-1, 0].set_xlabel("input bit j")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, stem)


def plot_loss_history(history: list[dict], stem: str | os.PathLike[str], title: str = "") -> list[Path]:
    """Training loss (log scale) and train / test accuracy per step."""
    steps = np.array([h["step"] for h in history], dtype=float)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
    for key, label, color in (("loss", "objective", "tab:blue"), ("data_loss", "data loss", "tab:orange")):
        vals = np.array([_num(h.get(key)) for h in history])
        ok = np.isfinite(vals) & (vals > 0)
        if ok.any():
            ax.semilogy(steps[ok], vals[ok], color=color, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (training points)")
    ax.legend(fontsize=8)
    for key, label, color in (("train_acc", "train accuracy", "tab:gray"), ("test_acc", "test accuracy", "tab:olive")):
        vals = np.array([_num(h.get(key)) for h in history])
        if np.isfinite(vals).any():
            ax2.plot(steps, vals, color=color, label=label)
    ax2.set_ylim(-0.02, 1.05)
    ax2.set_xlabel("step")
    ax2.legend(fontsize=8, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, stem)


def training_figures(out_dir: str | os.PathLike[str]) -> list[Path]:
    """The figures of a ``margintheory train`` output directory (``network.npz``, ``initial.npz``, history): for
    modular addition the embeddings, frequencies and margin figures
    (:func:`~margintheory.training.figures.modular_training_figures`), for the other tasks
    :func:`task_training_figures`."""

    out = Path(out_dir)
    doc = strict_json.loads((out / "history.json").read_text())
    if doc["config"].get("task", "modular-addition") == "modular-addition":
        return modular_training_figures(out, doc)
    return task_training_figures(out, doc)


def task_training_figures(out: Path, doc: dict[str, Any]) -> list[Path]:
    """The figures of a run directory of the parity, group or CoGO task (``doc``: its ``history.json``)."""
    cfg = doc["config"]
    task = training_task(problem_of(cfg["task"], cfg["problem"]))
    history = doc["history"]
    tag = f"{task.label()}, m={cfg['width']}, {history[-1]['step']} steps"
    relu = cfg.get("activation", "power") == "relu"
    tag += ", ReLU" if relu else ""
    L = "2" if relu else {"parity": "k+1", "group": "3", "cogo": "3"}[task.task]
    written = plot_history(history, doc.get("gamma_star"), out / "margin", f"training ({tag})", norm_label=L)
    final = task.network(*_arrays(out / "network.npz"))
    initial = task.network(*_arrays(out / "initial.npz")) if (out / "initial.npz").exists() else None
    if task.task == "parity":
        written += plot_parity_neurons(final, out / "neurons", title=f"largest neurons ({tag})")
    elif task.task == "group":
        written += plot_group_irreps(final, task.irreps, out / "irreps", initial,  # type: ignore[attr-defined]
                                     title=f"irreps of the neurons ({tag})")
    else:
        written += plot_embeddings(final, out / "embeddings", title=f"trained neurons ({tag})")
        written += plot_frequency_distribution(final, out / "frequencies", initial, title=f"frequencies ({tag})")
        written += plot_loss_history(history, out / "loss", title=f"projected MSE ({tag})")
    return written


def _arrays(path: Path) -> tuple[np.ndarray, np.ndarray]:
    from margintheory.network_io import read_arrays

    arrays = read_arrays(path, ("U", "W"))
    return np.asarray(arrays["U"], dtype=np.float64), np.asarray(arrays["W"], dtype=np.float64)


def analysis_figures(problem: Any, net: Any, network_path: Path, out: Path, activation: str) -> list[Path]:
    """``analyze --plots`` for parity, a group, CoGO or a ReLU network: the task's structure figure (at
    initialization too when ``initial.npz`` of the same shape sits next to the network) and the margin history when
    the run's ``history.json`` (or the checkpoint) is this network's."""
    task = training_task(problem)
    here = network_path.parent
    initial = None
    if (here / "initial.npz").is_file():
        U, W = _arrays(here / "initial.npz")
        initial = task.network(U, W) if U.shape == net.U.shape and W.shape == net.W.shape else None
    tag = f"{task.label()}, m={net.U.shape[0]}" + (", ReLU" if activation == "relu" else "")
    if task.task == "parity":
        written = plot_parity_neurons(net, out / "neurons", title=f"largest neurons ({tag})")
    elif task.task == "group":
        written = plot_group_irreps(net, task.irreps, out / "irreps", initial,  # type: ignore[attr-defined]
                                    title=f"irreps of the neurons ({tag})")
    else:
        written = plot_embeddings(net, out / "embeddings", title=f"neurons ({tag})")
        written += plot_frequency_distribution(net, out / "frequencies", initial, title=f"frequencies ({tag})")
    history = _own_history(network_path, task, net, activation)
    gamma = task.gamma_star(net.U.shape[0]) if activation == "power" else None
    if history is not None:
        L = "2" if activation == "relu" else "k+1"
        written += plot_history(history, gamma, out / "margin", f"training ({tag})", norm_label=L)
    return written


def _own_history(network_path: Path, task: Any, net: Any, activation: str) -> list[dict] | None:
    """The history of the run that ended in ``net``: a checkpoint's own, or ``history.json`` next
    to the file when its task, problem, width and activation are the network's and its last row's norm is the
    network's (to ``1e-9``, relative); else ``None``."""

    from margintheory.errors import InputError
    from margintheory.training.checkpoint import load_checkpoint
    from margintheory.training.metrics import network_norm

    try:
        return load_checkpoint(network_path).history or None
    except InputError:
        pass
    hist = network_path.parent / "history.json"
    try:
        doc = strict_json.loads(hist.read_text())
        cfg, history = doc["config"], doc["history"]
        same = (cfg.get("task"), cfg.get("problem"), cfg.get("width"), cfg.get("activation", "power")) == (
            task.task, task.parameters(), net.U.shape[0], activation)
        norm = network_norm(net.U, net.W, task.network_spec(activation).homogeneity)
        if same and abs(float(history[-1]["norm"]) - norm) <= 1e-9 * norm:
            return list(history)
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    return None
