"""Tasks of the seed papers verified with the same machinery (docs/theory.md sections 7-9).

``TASK_NAMES``, ``add_task_arguments(parser)`` (options of ``verify`` used by the tasks) and ``run_task(args)
-> VerificationResult`` are the interface used by ``margintheory verify``; ``modular-addition`` (the default task)
wraps :mod:`margintheory.verification` and :mod:`margintheory.symbolic.exact`.
"""

from __future__ import annotations

import argparse

from margintheory.checks import VerificationResult
from margintheory.cli import engine_time_limit
from margintheory.errors import InputError
from margintheory.tasks.base import Task

__all__ = ["TASK_NAMES", "TASKS", "Task", "add_task_arguments", "run_task"]


def _max_seconds(args: argparse.Namespace) -> float | None:
    return engine_time_limit(args)


def _max_memory(args: argparse.Namespace) -> int:
    from margintheory.margins import DEFAULT_MAX_MEMORY

    return getattr(args, "max_memory", None) or DEFAULT_MAX_MEMORY


def _load_network(args: argparse.Namespace):
    """``--network`` through :meth:`PolyNetwork.load` (any supported format, ``--names``, the memory budget)."""
    from margintheory.network import PolyNetwork

    return PolyNetwork.load(args.network, names=getattr(args, "names", None), k=getattr(args, "k", None),
                            max_memory=_max_memory(args))


def _run_modular(args: argparse.Namespace) -> VerificationResult:
    """Modular addition with ``k`` inputs: the construction (float or ``--exact``) or a given network."""
    from margintheory import verification
    from margintheory.theory import validate_pk

    rtol = getattr(args, "rtol", None)
    if rtol is not None and not (0 <= rtol < 1):
        raise InputError(f"--rtol must be in [0, 1), got {rtol}")
    if getattr(args, "network", None):
        if getattr(args, "exact", False):
            raise InputError("--exact checks the construction; it cannot be combined with --network")
        fourier_tol = getattr(args, "fourier_tol", 1e-8)
        min_share = getattr(args, "min_share", 0.0)
        if not (0 < fourier_tol < 1) or not (0 <= min_share < 1):
            raise InputError("--fourier-tol must be in (0, 1) and --min-share in [0, 1)")
        net = _load_network(args)
        p = net.p if args.p is None else args.p
        k = net.k if args.k is None else args.k
        validate_pk(p, k)
        return verification.verify_network(net, p, k, max_memory=_max_memory(args), max_seconds=_max_seconds(args),
                                           rtol=rtol, fourier_tolerance=fourier_tol, min_share=min_share)
    if args.p is None or args.k is None:
        raise InputError("--p and --k are required (or give --network FILE.npz)")
    p, k = validate_pk(args.p, args.k)
    if getattr(args, "exact", False):
        from margintheory.symbolic.exact import verify_construction_exact

        return verify_construction_exact(p, k)
    return verification.verify_construction(p, k, max_memory=_max_memory(args), max_seconds=_max_seconds(args))


def _run_parity(args: argparse.Namespace) -> VerificationResult:
    from margintheory.tasks import parity

    rtol = getattr(args, "rtol", None)
    if getattr(args, "network", None):
        net = parity.ParityNetwork.load(args.network, k=args.k, max_memory=_max_memory(args))
        if args.n is not None and args.n != net.n:
            raise InputError(f"{args.network} has n = {net.n} but --n {args.n} was given")
        parity.validate_nk(net.n, net.k)
        return parity.verify_parity(net, construction=False, rtol=rtol)
    if args.n is None or args.k is None:
        raise InputError("--task parity needs --n and --k (or --network FILE.npz)")
    n, k = parity.validate_nk(args.n, args.k)
    return parity.verify_parity(parity.build_parity_construction(n, k), construction=True, rtol=rtol)


def _run_group(args: argparse.Namespace) -> VerificationResult:
    from margintheory.tasks import group_task
    from margintheory.tasks.groups import parse_group

    if not args.group:
        raise InputError("--task group needs --group (S3, S4, S5, S6 or C<n>)")
    G = parse_group(args.group)
    if getattr(args, "network", None):
        return group_task.verify_group_network(
            G,
            _load_network(args),
            max_memory=_max_memory(args),
            max_seconds=_max_seconds(args),
            rtol=getattr(args, "rtol", None),
        )
    return group_task.verify_group(G, max_memory=_max_memory(args), max_seconds=_max_seconds(args))


def _run_cogo(args: argparse.Namespace) -> VerificationResult:
    from margintheory.tasks import cogo_task

    if getattr(args, "network", None):
        return cogo_task.verify_cogo_network(
            _load_network(args), max_memory=_max_memory(args), max_seconds=_max_seconds(args)
        )
    if not args.construction or args.d is None:
        raise InputError("--task cogo needs --construction (F6, F4, F46, memorize) and --d")
    return cogo_task.verify_cogo(
        args.construction,
        args.d,
        nu_angle=args.nu,
        xi_angle=args.xi,
        k0=args.k0,
        max_memory=_max_memory(args),
        max_seconds=_max_seconds(args),
    )


TASKS: dict[str, Task] = {
    "modular-addition": Task(
        "modular-addition",
        "all p^k inputs (a_1..a_k) in Z_p^k, label a_1+...+a_k mod p",
        "one-hot per input",
        "x^k (k = number of inputs)",
        "p",
        "L_{2,k+1}",
        "gamma* = 2 k! / ((2k+2)^((k+1)/2) (p-1) p^((k-1)/2))",
        ("Lemma C.18",),
        "Li et al., Fourier circuits (arXiv:2402.09469), Thm 4.9 / C.22",
        _run_modular,
    ),
    "parity": Task(
        "parity",
        "all 2^n inputs x in {+1,-1}^n, label prod_{j in S} x_j, |S| = k",
        "x itself (u . x)",
        "x^k",
        "2",
        "L_{2,k+1}",
        "gamma* = k! sqrt(2 (k+1)^-(k+1)) for m >= 2^(k-1)",
        ("2^(k-1) neurons (D.7)",),
        "Morwani et al. (arXiv:2311.07568), Thm 7.8, proof App. D.7",
        _run_parity,
    ),
    "group": Task(
        "group",
        "all |G|^2 pairs (a, b), label ab",
        "one-hot per input (k = 2, p = |G|)",
        "x^2",
        "|G|",
        "L_{2,3}",
        "gamma* = 2 / (3 sqrt(3|G|) sum_{R != 1} d_R^2.5) if sum_R d_R^1.5 chi_R(C) < 0 for all C != e",
        ("2 sum d_R^3 neurons (Lemma D.15)", "class-LP network"),
        "Morwani et al. (arXiv:2311.07568), Thm 7.9, App. D.8-D.9",
        _run_group,
    ),
    "cogo": Task(
        "cogo",
        "all d^2 pairs (a, b) in Z_d^2, label a+b mod d",
        "one-hot per input (k = 2, p = d)",
        "x^2",
        "d",
        "squared loss on zero-mean outputs (Eq. 1); L_{2,3} for the margin",
        "zero loss under Lemma 1's 0/1-sets",
        ("F6", "F4", "F46", "memorize"),
        "Tian, CoGO (arXiv:2410.01779), Thm 1, Lemma 1, Cor. 2-5",
        _run_cogo,
    ),
}
TASK_NAMES: tuple[str, ...] = tuple(TASKS)


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    """Task options of ``verify`` (``--p --k --network --json --max-memory --force ...`` belong to
    ``verify``)."""
    from margintheory.tasks.cogo_constructions import CONSTRUCTIONS

    g = parser.add_argument_group("task options (--task parity | group | cogo)")
    g.add_argument(
        "--n", type=int, help="parity: number of input bits n (with --k = |S| = activation degree)"
    )
    g.add_argument("--group", help="group: S3, S4, S5, S6 or C<n> (e.g. C7)")
    g.add_argument("--construction", choices=CONSTRUCTIONS, help="cogo: which construction of the paper")
    g.add_argument("--d", type=int, help="cogo: group order d (Z_d)")
    g.add_argument(
        "--nu",
        type=float,
        default=0.0,
        metavar="ANGLE",
        help="cogo F6: nu = exp(i ANGLE) of u_nu (default %(default)s)",
    )
    g.add_argument(
        "--xi",
        type=float,
        default=0.0,
        metavar="ANGLE",
        help="cogo F4/F46: xi = exp(i ANGLE) of z_xi (default %(default)s)",
    )
    g.add_argument("--k0", type=int, default=1, help="cogo F46: the order-6 frequency (default %(default)s)")


def run_task(args: argparse.Namespace) -> VerificationResult:
    """Dispatch ``args.task`` to its :class:`Task`."""
    task = TASKS.get(getattr(args, "task", None))
    if task is None:
        raise InputError(f"unknown task {getattr(args, 'task', None)!r}; choose from {', '.join(TASK_NAMES)}")
    _reject_foreign_options(args)
    return task.run(args)


def _reject_foreign_options(args: argparse.Namespace) -> None:
    """Options of ``verify`` that a task does not use are refused rather than silently ignored."""
    name = args.task
    if name == "modular-addition":
        return
    if getattr(args, "exact", False):
        raise InputError(f"--exact applies to --task modular-addition only, not {name}")
    if getattr(args, "p", None) is not None:
        hint = {"cogo": " (use --d)", "group": " (use --group)", "parity": " (use --n and --k)"}[name]
        raise InputError(f"--p is not an option of --task {name}{hint}")
    if name in ("group", "cogo") and getattr(args, "k", None) not in (None, 2):
        raise InputError(f"--task {name} uses quadratic networks with two inputs: --k must be 2 or omitted")
