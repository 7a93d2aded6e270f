"""``margintheory verify``: check the theorem for a task's construction or for a given network.

Wiring only: the flags are turned into a problem object (:mod:`margintheory.core.problems`) and typed options, and
:func:`margintheory.verification.verify` does the rest (modular addition:
:mod:`margintheory.tasks.modular_addition.checks` in
float64, :mod:`margintheory.symbolic.exact` with ``--exact``; the other tasks' checkers).  Every flag-specific message
is here.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from margintheory import verification as tasks
from margintheory.backends.select import using
from margintheory.commands._options import (
    FAMILY_CHOICES,
    add_backend_options,
    add_engine_options,
    add_network_file_options,
    engine_budget,
    note_unused_engine,
    note_unused_rtol,
    positive_int,
    selected_backend,
)
from margintheory.core.groups import GROUP_NAMES_SHORT
from margintheory.core.problems import CoGO, GroupComposition, ModularAddition, Problem, SparseParity
from margintheory.errors import InputError
from margintheory.presentation.report import emit
from margintheory.runtime.process import say

if TYPE_CHECKING:  # pragma: no cover
    from margintheory.core.network import PolyNetwork
    from margintheory.tasks.parity.checks import ParityNetwork

    Parsed = tuple[Problem, PolyNetwork | ParityNetwork | None]

MODULAR = "modular-addition"

SUMMARY_FIELDS = [
    "gamma_star_exact", "max_margin_interval", "frequencies_covered", "normalized_correct_logit",
    "normalized_wrong_logit", "construction_correct_logit", "construction_wrong_logit",
]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "verify",
        help="check the max-margin theorem for (p, k) or for a given network",
        description="Check every claim of Theorem C.22 (Fourier circuits) for modulus p and k inputs, on the "
        "paper's construction or on a network file; a TASK (or --task) selects another task of the seed papers, "
        "and 'margintheory verify TASK --help' lists that task's options only. "
        "Exit codes: 0 verified, 1 refuted, 2 bad input or refused.",
        add_help=False,
    )
    parser.add_argument("-h", "--help", action=TaskHelp, help="show this help; after a TASK (or --task T): only the "
                        "options of that task")
    parser.add_argument("task_name", nargs="?", choices=tasks.TASK_NAMES, metavar="TASK",
                        help=f"the task: {', '.join(tasks.TASK_NAMES)} (default {MODULAR}); the same as --task")
    parser.add_argument("--task", default=None, choices=tasks.TASK_NAMES,
                        help=f"task to verify (default {MODULAR}; or name it first: 'verify parity --n 10 --k 4')")
    parser.add_argument("--p", type=int, help="modulus p (integer >= 3; the papers assume an odd prime)")
    parser.add_argument("--k", type=int, help="number of inputs k (integer >= 1); also the activation degree")
    parser.add_argument("--network", metavar="FILE",
                        help="check this network instead of the construction: .npz, .safetensors or a PyTorch file "
                        "(.pt/.pth/.bin/.ckpt, read without torch, weights only)")
    add_network_file_options(parser)
    parser.add_argument("--exact", action="store_true", help="check the construction in exact arithmetic (small p, k)")
    parser.add_argument("--family", choices=FAMILY_CHOICES,
                        default=None,
                        help="which construction: Lemma C.18 (default) or a smaller max-margin family")
    add_proof_options(parser)
    parser.add_argument("--exhaustive", action="store_true",
                        help="modular addition: compute the lower end L on all p^k inputs, even where the network's "
                        "Fourier structure proves it without enumeration (docs/theory.md#compact-margin)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the result schema)")
    add_engine_options(parser)
    add_backend_options(parser)
    parser.add_argument("--rtol", type=float, default=None,
                        help="relative tolerance of the margin claims ('equals gamma*', every point on the margin, "
                        "equal wrong logits) on a given network, the same for every engine (default 1e-8; 0: "
                        "equality exactly)")
    parser.add_argument("--fourier-tol", type=float, default=None,
                        help="leakage allowed in the per-neuron Fourier checks of a network (default 1e-8)")
    parser.add_argument("--min-share", type=float, default=None,
                        help="leave neurons with norm share <= this out of the per-neuron checks (default 0)")
    parser.add_argument("--no-certificate", action="store_true",
                        help="modular addition: skip the solver leg (the proved upper bound U of the interval [L, U])")
    parser.add_argument("--certificate", metavar="FILE.json",
                        help="modular addition: write the max-min certificate (re-check it with 'margintheory check')")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --certificate file")
    parser.add_argument("--workers", type=positive_int, default=None, metavar="N",
                        help="split the exhaustive check into prefix ranges over a LocalCluster of N worker processes "
                        "(dask.distributed) and min-reduce them; the same verdict and values")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="split the exhaustive check over the running dask cluster at ADDRESS "
                        "(e.g. tcp://10.0.0.5:8786)")
    add_task_arguments(parser)
    group_options_by_task(parser)
    parser.set_defaults(func=run)
    return parser


def add_proof_options(parser: argparse.ArgumentParser) -> None:
    """Modular addition's proof options: every p at once (odd, or even), the upper end's method, the compact check."""
    parser.add_argument("--every-p", action="store_true",
                        help="modular addition: prove the claims for every odd p at once, as identities in the symbol "
                        "p (needs --k <= 12, no --p; docs/theory.md#every-p)")
    parser.add_argument("--even", action="store_true",
                        help="with --every-p: every even p >= 4 instead, where the max margin is "
                        "gamma*(p, k) (p-1) r/(1 + (p-2) r), r = 2^((k-1)/2) (docs/theory.md#even-p-max-margin)")
    parser.add_argument("--method", choices=("am-gm", "sos"), default=None,
                        help="modular addition: how the upper end bounds the block form g_k: am-gm (default: its exact "
                             "maximum (k+1)^-((k+1)/2), no solver) or sos (the SOS certificate, the cross-check; "
                             "docs/theory.md#every-p)")
    parser.add_argument("--compact", action="store_true",
                        help="modular addition: check the construction with the per-p compact check (the p x p "
                             "table), never as the every-p proof evaluated at p (used where the compact check does "
                             "not fit)")


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the tasks other than modular addition."""
    from margintheory.tasks.cogo.constructions import CONSTRUCTIONS

    g = parser.add_argument_group("task options (--task parity | group | cogo)")
    g.add_argument("--n", type=int, help="parity: number of input bits n (with --k = |S| = activation degree)")
    g.add_argument("--group", help="group: " + GROUP_NAMES_SHORT + " (e.g. S4, D12, 'perm:(0 1 2),(0 1)')")
    g.add_argument("--construction", choices=CONSTRUCTIONS, help="cogo: which construction of the paper")
    g.add_argument("--d", type=int, help="cogo: group order d (Z_d)")
    g.add_argument("--nu", type=float, default=None, metavar="ANGLE",
                   help="cogo F6: nu = exp(i ANGLE) of u_nu (default 0)")
    g.add_argument("--xi", type=float, default=None, metavar="ANGLE",
                   help="cogo F4/F46: xi = exp(i ANGLE) of z_xi (default 0)")
    g.add_argument("--k0", type=positive_int, default=None, help="cogo F46: the order-6 frequency (default 1)")


def run(args: argparse.Namespace) -> int:
    args.task = chosen_task(args)
    _reject_foreign_options(args)
    _check_tolerances(args)
    backend = selected_backend(args)
    problem, network = problem_from_args(args)
    options = {"rtol": args.rtol, **engine_budget(args)}
    if args.exact:
        options["exact"] = True
    if args.family:
        options["family"] = args.family
    if args.exhaustive:
        options["exhaustive"] = True
    if args.fourier_tol is not None:
        options["fourier_tolerance"] = args.fourier_tol
    if args.min_share is not None:
        options["min_share"] = args.min_share
    if args.no_certificate:
        options["certificate"] = False
    if args.method is not None:
        options["upper_method"] = args.method
    if args.compact:
        options["compact"] = True
    with using(backend):
        result = _verify_where(args, problem, network, options)
        note_unused_engine(args, result)
        note_unused_rtol(args, result)
        if args.certificate is not None and isinstance(problem, ModularAddition) and problem.p % 2 == 0:
            from margintheory.solvers.even_p import write_even_p_certificate

            not_written = write_even_p_certificate(result, args.certificate, args.overwrite,
                                                   max_memory=args.max_memory, problem=problem)
        elif args.certificate is not None:
            from margintheory.certificate.maxmin import write_certificate_for
            from margintheory.core.network import PolyNetwork as Net

            not_written = write_certificate_for(result, args.certificate, args.overwrite, max_memory=args.max_memory,
                                                network=network if isinstance(network, Net) else None,
                                                problem=problem if isinstance(problem, ModularAddition) else None,
                                                method=args.method or "am-gm")
            say(not_written or f"wrote {args.certificate}")
    if args.network:
        result.parameters["network"] = args.network
    summary = SUMMARY_FIELDS if args.task == MODULAR else ["max_margin_interval"]
    if args.every_p:
        from margintheory.tasks.modular_addition.every_p import EVERY_P_FIELDS as summary
    if args.every_p and args.even:
        from margintheory.tasks.modular_addition.every_even_p import EVERY_EVEN_P_FIELDS as summary
    return emit(result, args.json, summary)


def _verify_where(args: argparse.Namespace, problem: Problem, network, options: dict):  # noqa: ANN001, ANN202
    """``tasks.verify`` in this process, or with its exhaustive pass split over a dask cluster (``--workers`` /
    ``--scheduler``: :mod:`margintheory.engines.split_margin`)."""
    if args.workers is None and not args.scheduler:
        return tasks.verify(problem, network=network, **options)
    from margintheory.engines.split_margin import SplitMarginEngine
    from margintheory.execution.executors import open_executor
    from margintheory.tasks.modular_addition.checks import margin_engine

    with open_executor(workers=args.workers, scheduler=args.scheduler) as executor, \
            margin_engine(SplitMarginEngine(executor)):
        result = tasks.verify(problem, network=network, **options)
    if result.margin is None or result.margin.method != "fourier":
        result.notes.append(f"the exhaustive pass ran in prefix ranges on {executor.description}, min-reduced")
    return result



def problem_from_args(args: argparse.Namespace) -> Parsed:
    """The problem object (and the loaded network, or ``None``) that the flags describe."""
    return {MODULAR: _modular, "parity": _parity, "group": _group, "cogo": _cogo}[args.task](args)


def load_network(args: argparse.Namespace) -> PolyNetwork:
    """``--network`` in any supported format, with ``--names``, the memory budget and the time budget (parsing)."""
    from margintheory.commands._options import engine_time_limit, nonzero_network
    from margintheory.core.network import PolyNetwork

    return nonzero_network(PolyNetwork.load(args.network, names=args.names, k=args.k, max_memory=args.max_memory,
                                            max_seconds=engine_time_limit(args)), args.network)


def _modular(args: argparse.Namespace) -> Parsed:
    if args.every_p:
        from margintheory.core.problems import ModularAdditionEveryP

        if args.p is not None or args.network:
            raise InputError("--every-p proves the claims for every odd p at once: give --k only, not --p or --network")
        if args.k is None:
            raise InputError("--every-p needs --k (1..12)")
        return ModularAdditionEveryP(args.k, even=args.even), None
    if args.even:
        raise InputError("--even goes with --every-p (the max margin at every even p at once); for one even p give "
                         "--p P")
    if args.network:
        net = load_network(args)
        return ModularAddition(net.p if args.p is None else args.p, net.k if args.k is None else args.k), net
    if args.p is None or args.k is None:
        raise InputError("--p and --k are required (or give --network FILE.npz)")
    return ModularAddition(args.p, args.k), None


def _parity(args: argparse.Namespace) -> Parsed:
    from margintheory.tasks.parity.checks import ParityNetwork

    if args.network:
        from margintheory.commands._options import nonzero_network

        net = nonzero_network(ParityNetwork.load(args.network, k=args.k, max_memory=args.max_memory), args.network)
        if args.n is not None and args.n != net.n:
            raise InputError(f"{args.network} has n = {net.n} but --n {args.n} was given")
        return SparseParity(net.n, net.k), net
    if args.n is None or args.k is None:
        raise InputError("--task parity needs --n and --k (or --network FILE.npz)")
    return SparseParity(args.n, args.k), None


def _group(args: argparse.Namespace) -> Parsed:
    if not args.group:
        raise InputError(f"--task group needs --group ({GROUP_NAMES_SHORT})")
    problem = GroupComposition(args.group)
    if not args.network:
        return problem, None
    net = load_network(args)
    if net.k != 2 or net.p != problem.order:
        raise InputError(f"a network for {problem.group} needs k=2 and p={problem.order}; {args.network} has "
                         f"k={net.k}, p={net.p}")
    return problem, net


def _cogo(args: argparse.Namespace) -> Parsed:
    if args.network:
        net = load_network(args)
        if net.k != 2:
            raise InputError(f"CoGO networks have k = 2 inputs; {args.network} has k = {net.k}")
        if args.d is not None and args.d != net.p:
            raise InputError(f"{args.network} has d = {net.p} but --d {args.d} was given")
        return CoGO(net.p), net
    if not args.construction or args.d is None:
        raise InputError("--task cogo needs --construction (F6, F4, F46, memorize) and --d")
    if not 3 <= args.d <= CoGO.MAX_D:
        raise InputError(f"--d must be an integer in 3..{CoGO.MAX_D}, got {args.d}")
    return CoGO(args.d, args.construction, nu_angle=args.nu or 0.0, xi_angle=args.xi or 0.0, k0=args.k0 or 1), None


def _check_tolerances(args: argparse.Namespace) -> None:
    if args.rtol is not None and not (0 <= args.rtol < 1):
        raise InputError(f"--rtol must be in [0, 1), got {args.rtol}")
    if args.fourier_tol is not None and not (0 < args.fourier_tol < 1):
        raise InputError(f"--fourier-tol must be in (0, 1), got {args.fourier_tol}")
    if args.min_share is not None and not (0 <= args.min_share < 1):
        raise InputError(f"--min-share must be in [0, 1), got {args.min_share}")
    if (args.fourier_tol is not None or args.min_share is not None) and not args.network:
        raise InputError("--fourier-tol and --min-share apply to a network given with --network")


#: the options of verify that only some tasks use, and which task uses which
TASK_SPECIFIC = ("p", "k", "n", "group", "construction", "d", "nu", "xi", "k0", "exact", "family", "rtol",
                 "fourier_tol", "min_share", "names", "workers", "scheduler", "backend", "device", "exhaustive",
                 "every_p", "even", "method", "compact")
TASK_OPTIONS = {
    MODULAR: {"p", "k", "exact", "family", "rtol", "fourier_tol", "min_share", "names", "workers", "scheduler",
              "backend", "device", "exhaustive", "every_p", "even", "method", "compact"},
    "parity": {"n", "k", "rtol"},
    "group": {"group", "k", "rtol", "names", "backend", "device"},
    "cogo": {"construction", "d", "nu", "xi", "k0", "k", "names"},
}


def _reject_foreign_options(args: argparse.Namespace) -> None:
    """Options of ``verify`` that a task does not use are refused rather than silently ignored."""
    name = args.task
    if name != MODULAR and (args.certificate is not None or args.no_certificate or args.overwrite):
        raise InputError("--certificate, --no-certificate and --overwrite apply to --task modular-addition only")
    if args.overwrite and args.certificate is None:
        raise InputError("--overwrite applies to the --certificate file; no --certificate was given")
    if args.certificate is not None:
        from margintheory.certificate.maxmin import check_output_path

        if args.no_certificate:
            raise InputError("--certificate needs the solver leg; it cannot be combined with --no-certificate")
        check_output_path(args.certificate, args.overwrite)  # refused before any work
    if args.exact and args.network:
        raise InputError("--exact checks the construction; it cannot be combined with --network")
    if getattr(args, "names", None) is not None and not args.network:
        raise InputError("--names maps the tensors of a network file; it applies with --network")
    if args.exact and (args.backend or args.device):
        raise InputError("--exact computes in exact arithmetic; --backend and --device choose the float64 engine")
    if args.exact and args.exhaustive:
        raise InputError("--exact already evaluates every input exactly; --exhaustive applies to the float64 checks")
    if getattr(args, "every_p", False):
        _reject_every_p_options(args)
    if args.family and args.network:
        raise InputError("--family chooses a construction; it cannot be combined with --network")
    if args.workers is not None and args.scheduler:
        raise InputError("--scheduler uses a running cluster; --workers starts a local one: give one of them")
    if args.exact and (args.workers is not None or args.scheduler):
        raise InputError("--workers / --scheduler split the float64 exhaustive check; --exact does not make one")
    for flag in TASK_SPECIFIC:  # one rule: a flag the chosen task does not use is refused, never ignored
        if _given(args, flag) and flag not in TASK_OPTIONS[name]:
            hint = {"cogo": " (use --d)", "group": " (use --group)", "parity": " (use --n and --k)"}.get(name, "")
            hint = hint if flag == "p" else ""
            raise InputError(f"--{flag.replace('_', '-')} is not an option of --task {name}{hint}")
    if name in ("group", "cogo") and args.k not in (None, 2):
        raise InputError(f"--task {name} uses quadratic networks with two inputs: --k must be 2 or omitted")
    if name == "cogo":
        _reject_cogo_angles(args)


def _reject_every_p_options(args: argparse.Namespace) -> None:
    """``--every-p`` proves identities in ``p`` exactly with both ends: the options about one ``p``, a network file,
    float64 engines or the per-(p, k) certificate file do not apply."""
    for flag in ("exact", "exhaustive", "rtol", "certificate", "no_certificate", "overwrite", "workers", "scheduler",
                 "backend", "device", "names", "compact"):
        if _given(args, flag):
            raise InputError(f"--{flag.replace('_', '-')} does not apply to --every-p (an exact proof for every odd p "
                             "with both ends; the certificate file is per (p, k))")


def _given(args: argparse.Namespace, flag: str) -> bool:
    value = getattr(args, flag, None)
    return value is not None and value is not False


def _reject_cogo_angles(args: argparse.Namespace) -> None:
    """``--nu`` belongs to F6, ``--xi`` to F4 / F46, ``--k0`` to F46, and none of them to a given --network."""
    uses = {"nu": ("F6",), "xi": ("F4", "F46"), "k0": ("F46",)}
    for flag, constructions in uses.items():
        if _given(args, flag) and (args.network or args.construction not in constructions):
            what = "--network" if args.network else f"--construction {args.construction}"
            raise InputError(f"--{flag} applies to --construction {' / '.join(constructions)} only, not {what}")
    if args.network and args.construction:
        raise InputError("--construction chooses a construction; it cannot be combined with --network")


# -- per-task help: 'verify TASK --help' (or 'verify --task TASK --help') lists the options of that task only ------

#: options only modular addition uses besides those of TASK_OPTIONS (the certificate leg)
MODULAR_ONLY = ("no_certificate", "certificate", "overwrite")
TASK_TITLES = {MODULAR: "modular addition (the default task)", "parity": "sparse parity (Thm 7.8)",
               "group": "finite groups (Thm 7.9)", "cogo": "CoGO's constructions"}


def chosen_task(args: argparse.Namespace) -> str:
    """The task named first (``verify parity ...``) or by ``--task`` (the old spelling), default modular addition;
    both given and different is a usage error."""
    first, flag = getattr(args, "task_name", None), getattr(args, "task", None)
    if first is not None and flag is not None and first != flag:
        raise InputError(f"the task is given twice: {first!r} and --task {flag}")
    return first or flag or MODULAR


def tasks_using(dest: str) -> tuple[str, ...]:
    """The tasks that use an option (every task for the common ones)."""
    if dest in MODULAR_ONLY:
        return (MODULAR,)
    if dest in TASK_SPECIFIC:
        return tuple(t for t in tasks.TASK_NAMES if dest in TASK_OPTIONS[t])
    return tuple(tasks.TASK_NAMES)


def group_options_by_task(parser: argparse.ArgumentParser) -> None:
    """Move every option that only one task uses into that task's titled group (the full help then reads task by
    task); options of several tasks stay under "options"."""
    groups = {name: parser.add_argument_group(f"{TASK_TITLES[name]}: verify {name} --help") for name in
              tasks.TASK_NAMES}
    for container in list(parser._action_groups):
        if container in groups.values():
            continue
        for action in list(container._group_actions):
            users = tasks_using(action.dest)
            if len(users) == 1 and action.option_strings:
                container._group_actions.remove(action)
                groups[users[0]]._group_actions.append(action)
        if not container._group_actions and container.title not in ("positional arguments", "options"):
            parser._action_groups.remove(container)


def task_help(parser: argparse.ArgumentParser, task: str) -> str:
    """The help of ``verify`` with only the options ``task`` uses (usage line included)."""
    shown = [a for a in parser._actions if a.dest not in ("task", "task_name") and task in tasks_using(a.dest)]
    formatter = parser.formatter_class(prog=f"{parser.prog} {task}")
    formatter.add_usage(None, shown, [])
    formatter.add_text(f"Check the claims for the task {task} ({TASK_TITLES[task]}). The same as '{parser.prog} "
                       f"--task {task} ...'; '{parser.prog} --help' lists every task's options.")
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a in shown]
        if actions:
            formatter.start_section(group.title)
            formatter.add_arguments(actions)
            formatter.end_section()
    return formatter.format_help()


class TaskHelp(argparse._HelpAction):
    """``-h``: the full help, or the chosen task's options only when a task was named before it."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001 - argparse's signature
        task = getattr(namespace, "task_name", None) or getattr(namespace, "task", None)
        if task is None:
            parser.print_help()
        else:
            parser._print_message(task_help(parser, task), sys.stdout)
        parser.exit()
