"""``margintheory analyze [TASK] NETWORK ...``: how close is a (trained) network to a max-margin one?

Wiring only: :func:`margintheory.training.analysis.analyze` (modular addition: ``analyze_network``, built on
``verify_network``; parity, group, cogo: their task packages' ``analysis`` modules; ``--activation relu``: the
ReLU measurements) for the checks, :meth:`margintheory.core.network.PolyNetwork.load` /
:meth:`~margintheory.tasks.parity.checks.ParityNetwork.load` for loading (``.npz``, ``.safetensors`` or a PyTorch
file, read without torch; ``--names`` maps other layouts) and :mod:`margintheory.training.figures` /
:mod:`margintheory.training.task_figures` for ``--plots``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from margintheory.backends.select import using
from margintheory.commands._options import (
    add_backend_options,
    add_engine_options,
    add_network_file_options,
    engine_time_limit,
    nonzero_network,
    note_unused_engine,
    selected_backend,
)
from margintheory.core.groups import GROUP_NAMES_SHORT
from margintheory.errors import InputError
from margintheory.presentation.report import emit
from margintheory.runtime import strict_json
from margintheory.runtime.atomic import check_output_dir, check_output_file
from margintheory.runtime.process import say

SUMMARY_FIELDS = [
    "theorem_width", "fraction_sparse",
    "weighted_fraction_sparse", "fraction_optimal", "weighted_fraction_optimal", "phase_residual_max",
    "frequency_histogram", "frequency_tv_to_construction", "frequencies_covered", "frequencies_covered_at_tolerance",
    "construction_normalized_margin", "ratio_to_construction", "multidim_dft_min_real",
]


TASKS = ("modular-addition", "parity", "group", "cogo")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "analyze",
        help="measure how close a network is to the max-margin characterisation",
        description="Modular addition (default; --p, --k): normalized margin vs gamma*, per-neuron Fourier sparsity "
        "and phase residuals, fraction of neurons in the optimal single-neuron set, frequency histogram, "
        "multidimensional DFT (Lemma C.20) and a comparison with the construction. parity (--n, --k): margin vs "
        "gamma* and Thm 7.8's characterization of the neurons. group (--group): margin vs the class LP and Thm "
        "7.9, the irrep power of each neuron, all irreps used. cogo: the loss, the per-frequency solution orders "
        "and the constructions they factorize into (Tian Table 2). --activation relu: a ReLU network's margin and "
        "Fourier / irrep statistics (no claim: not-applicable). NETWORK is a .npz or .safetensors file (arrays "
        "U (m,k,p), W (m,p); parity U (m,n), W (m,2), S (k,)) or a PyTorch file (.pt/.pth/.bin/.ckpt; read without "
        "torch, weights only: tensors U and W, or embed.{j}.weight (p,m) and out.weight (p,m); --names maps any "
        "other layout). Exit codes: 0 verified, 1 refuted, 2 bad input.",
    )
    parser.add_argument("task_name", nargs="?", choices=TASKS, metavar="TASK",
                        help="the task: modular-addition (default), parity, group, cogo")
    parser.add_argument("network", metavar="NETWORK", help="network file (.npz, .safetensors, .pt/.pth/.bin/.ckpt)")
    parser.add_argument("--task", default=None, choices=TASKS, help="the task (the same as TASK)")
    add_network_file_options(parser)
    parser.add_argument("--p", type=int, default=None, help="modular addition: modulus p")
    parser.add_argument("--k", type=int, default=None, help="modular addition: number of inputs k; parity: |S|")
    parser.add_argument("--n", type=int, default=None, help="parity: number of input bits n (default: the network's)")
    parser.add_argument("--group", default=None, help="group: " + GROUP_NAMES_SHORT)
    parser.add_argument("--d", type=int, default=None, help="cogo: the order d of Z_d (default: the network's)")
    parser.add_argument("--activation", choices=("power", "relu"), default="power",
                        help="power: the task's polynomial network (default); relu: a ReLU network")
    parser.add_argument("--loss-tol", type=float, default=None,
                        help="cogo: the loss over all pairs a trained network may keep (default 1e-3)")
    parser.add_argument("--output-scale", type=float, default=None,
                        help="cogo: the s of the loss ||P1perp(s f - e_y)||^2 the network was trained on, when not "
                        "Eq. 1's 1/(2d) (train cogo --output-scale)")
    parser.add_argument("--plots", metavar="DIR", help="write the one-page summary, embedding and frequency (and "
                        "margin-history) figures to DIR, each as PNG and PDF")
    parser.add_argument("--json", action="store_true", help="print one JSON object (verdict + checks)")
    add_engine_options(parser)
    add_backend_options(parser)
    parser.add_argument("--rtol", type=float, default=None,
                        help="relative tolerance for 'equals gamma*' claims (default 1e-6: a trained network is "
                        "max-margin only to its optimizer's accuracy; 0: the float64 error bound only, as verify)")
    parser.add_argument("--tolerance", type=float, default=1e-2,
                        help="Fourier tolerance of the sparsity / optimal-set measurements (default %(default)s)")
    parser.add_argument("--no-construction", action="store_true", help="skip the comparison with the construction")
    parser.add_argument("--exhaustive", action="store_true",
                        help="compute the margin over all p^k inputs even when the network's Fourier structure "
                        "gives it without enumeration")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from margintheory.training.analysis import TRAINED_NETWORK_RTOL, analyze

    if args.rtol is not None and not (0 <= args.rtol < 1):
        raise InputError(f"--rtol must be in [0, 1), got {args.rtol}")
    rtol = TRAINED_NETWORK_RTOL if args.rtol is None else args.rtol
    if args.plots is not None:
        _check_plot_paths(Path(args.plots))
    backend = selected_backend(args)
    problem, net = _problem_and_network(args)
    with using(backend):
        result = analyze(problem, net, activation=args.activation, max_memory=args.max_memory,
                         max_seconds=engine_time_limit(args), rtol=rtol, tolerance=args.tolerance,
                         compare_construction=not args.no_construction, title=f"analysis of {args.network}",
                         exhaustive=args.exhaustive, loss_tol=args.loss_tol, output_scale=args.output_scale)
        note_unused_engine(args, result)
        if args.plots is not None:
            result.fields["figures"] = [str(p) for p in _plots(problem, net, Path(args.network), Path(args.plots),
                                                               args)]
            for figure in result.fields["figures"]:
                say(f"wrote {figure}")
    result.parameters.update(network=args.network, tolerance=args.tolerance, rtol=rtol)
    return emit(result, args.json, SUMMARY_FIELDS if args.task == "modular-addition" else None)


#: the size options of each task
SIZE_OPTIONS = {"modular-addition": ("p", "k"), "parity": ("n", "k"), "group": ("group",), "cogo": ("d",)}


def _problem_and_network(args: argparse.Namespace):  # noqa: ANN202 - (Problem, PolyNetwork | ParityNetwork)
    """The task's problem object and the loaded network; an option of another task is refused."""
    from margintheory.core.network import PolyNetwork
    from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, SparseParity

    first, flag = args.task_name, args.task
    if first is not None and flag is not None and first != flag:
        raise InputError(f"the task is given twice: {first!r} and --task {flag}")
    args.task = task = first or flag or "modular-addition"
    for other, names in SIZE_OPTIONS.items():
        for name in names:
            if getattr(args, name) is not None and name not in SIZE_OPTIONS[task]:
                raise InputError(f"--{name} is not an option of analyze {task} (it belongs to analyze {other})")
    for flag in ("loss_tol", "output_scale"):
        if getattr(args, flag) is not None and task != "cogo":
            raise InputError(f"--{flag.replace('_', '-')} applies to analyze cogo only")
    if args.output_scale is not None and not 0 < args.output_scale < float("inf"):
        raise InputError(f"--output-scale must be positive and finite, got {args.output_scale}")
    if task == "parity":
        from margintheory.tasks.parity.checks import ParityNetwork

        pnet = nonzero_network(ParityNetwork.load(args.network, k=args.k, max_memory=args.max_memory), args.network)
        if args.n is not None and args.n != pnet.n:
            raise InputError(f"{args.network} has n = {pnet.n} but --n {args.n} was given")
        return SparseParity(pnet.n, pnet.k), pnet
    if task == "group" and args.group is None:
        raise InputError(f"analyze group needs --group ({GROUP_NAMES_SHORT})")
    k = args.k if task == "modular-addition" else 2
    net = nonzero_network(PolyNetwork.load(args.network, names=args.names, k=k, max_memory=args.max_memory,
                                           max_seconds=engine_time_limit(args)), args.network)
    if task == "modular-addition":  # p and k from the network where not given, as verify --network infers them
        return ModularAddition(net.p if args.p is None else args.p, net.k if args.k is None else args.k), net
    if net.k != 2:
        raise InputError(f"{args.network} has k = {net.k} inputs; a {task} network has 2")
    if task == "group":
        problem = GroupComposition(args.group)
        if net.p != problem.order:
            raise InputError(f"{args.network} has p = {net.p} symbols; {problem.group} has order {problem.order}")
        return problem, net
    if args.d is not None and args.d != net.p:
        raise InputError(f"{args.network} has d = {net.p} but --d {args.d} was given")
    return CoGO(net.p), net


#: the figures written by --plots (each as .png and .pdf; those of the task); existing ones are replaced (atomically)
FIGURE_STEMS = ("summary", "embeddings", "frequencies", "margin", "irreps", "neurons")


def _check_plot_paths(out: Path) -> None:
    """Before the work: the directory can be created or written, and no figure name is taken by a device, a FIFO
    or a directory (a regular file there is an earlier figure and is replaced)."""
    check_output_dir(out)
    for stem in FIGURE_STEMS:
        for ext in ("png", "pdf"):
            check_output_file(out / f"{stem}.{ext}")


def _plots(problem, net, network_path: Path, out: Path, args: argparse.Namespace) -> list[Path]:  # noqa: ANN001
    """The one-page summary, embeddings and frequency figures; the margin curve and init-vs-end too when
    ``margintheory train`` wrote ``history.json`` / ``initial.npz`` next to the network.  Other tasks and ReLU
    networks: :func:`margintheory.training.task_figures.analysis_figures`."""
    from margintheory.core.network import PolyNetwork
    from margintheory.engines.margins import exhaustive_margin
    from margintheory.training import figures

    if args.task != "modular-addition" or args.activation == "relu":
        from margintheory.training.task_figures import analysis_figures

        return analysis_figures(problem, net, network_path, out, args.activation)

    here = network_path.parent
    initial = PolyNetwork.load(here / "initial.npz") if (here / "initial.npz").is_file() else None
    if initial is not None and initial.U.shape != net.U.shape:
        initial = None
    margins = exhaustive_margin(net, args.max_memory, max_seconds=engine_time_limit(args))
    summary, embeddings, frequencies, margin = (out / stem for stem in FIGURE_STEMS[:4])
    written = figures.plot_summary(net, margins, summary, tolerance=args.tolerance)
    written += figures.plot_embeddings(net, embeddings)
    written += figures.plot_frequency_distribution(net, frequencies, initial)
    history, why_not = run_history(net, network_path, margins.normalized_margin, margins.normalized_tolerance)
    if history is not None:
        written += figures.plot_margin_history(history, net.p, net.k, margin)
    elif why_not:
        say(f"margin figure not drawn: {why_not}")
    return written


def run_history(net, network_path: Path, margin: float, tolerance: float) -> tuple[list[dict] | None, str]:
    """The history of the training run that ended in ``net``, or ``None`` and why not (``""``: there is none).

    A checkpoint of ``margintheory train`` carries its own history.  Otherwise ``history.json`` next to the file is
    that run's when its configuration has the network's ``p``, ``k`` and width and its last row's normalized margin
    is the network's (``margin``, within the engine's float64 bound ``tolerance`` plus ``1e-9`` relative): a
    history of an earlier session, or of another network, is not drawn as this one's."""
    from margintheory.training.checkpoint import load_checkpoint

    try:
        return load_checkpoint(network_path).history or None, ""
    except InputError:
        pass  # not a checkpoint: a network file
    hist = network_path.parent / "history.json"
    if not hist.is_file():
        return None, ""
    try:
        doc = strict_json.loads(hist.read_text())
        config, history = doc["config"], doc["history"]
        shape = (config["p"], config["k"], config["width"])
        last = float(history[-1]["normalized_margin"])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        return None, f"{hist} is not a readable history ({type(exc).__name__}: {exc})"
    if shape != (net.p, net.k, net.m):
        return None, f"{hist} is the history of a run with (p, k, width) = {shape}, not {(net.p, net.k, net.m)}"
    if not abs(last - margin) <= tolerance + 1e-9 * abs(margin):
        return None, (f"{hist} ends at step {history[-1].get('step')} with normalized margin {last:.12g}; this "
                      f"network's is {margin:.12g} (the history is another session's)")
    return history, ""
