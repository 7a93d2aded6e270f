"""``margintheory derive``: print a machine-checked derivation (wiring only; the mathematics is in
:mod:`margintheory.symbolic`).

* ``derive gamma-star [--k K] [--p P]``: Lemma C.15's bound chain, the closed form of ``gamma*``.
* ``derive identity --k K``: the sum-to-product identity (Lemma C.16) and its half-sum.
* ``derive expansion --k K``: the cosine expansion (C.21).
* ``derive fourier --k K --p P``: Lemma C.14 for symbolic weight vectors.
* ``derive cosine-sum``: the per-frequency sum ``sum_zeta cos(2 pi zeta x/p)`` for all odd ``p``.

Every step carries its check (proved / float with tolerance / argued with reason). ``--json`` prints the result
schema shared by every command (each step a check with its exactness). Exit code 0 when no check failed, 1
otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import shutil
import time

from margintheory.commands._options import positive_int
from margintheory.errors import InputError
from margintheory.runtime.process import stdout_encodes
from margintheory.symbolic.derivation import FORMATS, Derivation

TOPICS = ("gamma-star", "identity", "expansion", "fourier", "cosine-sum")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "derive",
        help="print a machine-checked derivation (gamma*, identities, Fourier reduction)",
        description="Print a derivation whose every step is proved exactly, checked in floating point (with its "
        "tolerance), or labelled as argued (with the reason). Exit codes: 0 all checks passed, 1 a check failed, "
        "2 bad input.",
    )
    parser.add_argument("topic", choices=TOPICS, help="which derivation")
    parser.add_argument("--k", type=positive_int, help="number of inputs k (required for identity/expansion/fourier)")
    parser.add_argument("--p", type=positive_int, help="modulus p (required for fourier; optional for gamma-star)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default %(default)s)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object in the result schema (each step a check with its exactness)")
    parser.set_defaults(func=run)
    return parser


def build_derivation(topic: str, k: int | None, p: int | None) -> Derivation:
    """The derivation for ``topic``; raises :class:`InputError` for missing or invalid parameters."""
    if topic == "gamma-star":
        from margintheory.symbolic.bound_chain import gamma_star_derivation

        return gamma_star_derivation(k=k, p=p)
    if topic == "cosine-sum":
        from margintheory.symbolic.exact import per_frequency_sum_derivation

        return per_frequency_sum_derivation()
    if k is None:
        raise InputError(f"derive {topic} needs --k")
    if topic == "identity":
        from margintheory.symbolic.identities import sum_to_product_derivation

        _limit("k", k, 9)
        return sum_to_product_derivation(k)
    if topic == "expansion":
        from margintheory.symbolic.identities import cosine_expansion_derivation

        _limit("k", k, 12)
        return cosine_expansion_derivation(k)
    if p is None:
        raise InputError("derive fourier needs --p and --k")
    from margintheory.symbolic.fourier_reduction import fourier_derivation, validate_fourier_pk

    if p < 2:
        raise InputError(f"p must be an integer >= 2, got {p}")
    validate_fourier_pk(p, k)
    return fourier_derivation(p, k)


def _limit(name: str, value: int, high: int) -> None:
    if value > high:
        raise InputError(f"--{name} must be <= {high} here, got {value}")


#: the options each topic uses; any other is refused (one rule with verify's: a flag is never silently ignored)
TOPIC_OPTIONS = {"gamma-star": ("k", "p"), "cosine-sum": (), "identity": ("k",), "expansion": ("k",),
                 "fourier": ("k", "p")}


def _reject_foreign_options(args: argparse.Namespace) -> None:
    for flag in ("k", "p"):
        if getattr(args, flag) is not None and flag not in TOPIC_OPTIONS[args.topic]:
            why = " (it is derived for every odd p)" if args.topic == "cosine-sum" else ""
            raise InputError(f"--{flag} is not an option of derive {args.topic}{why}")


def run(args: argparse.Namespace) -> int:
    _reject_foreign_options(args)
    if args.json and args.format != "text":
        raise InputError("--json prints the result schema; it cannot be combined with --format")
    start = time.perf_counter()
    derivation = build_derivation(args.topic, args.k, args.p)
    if args.json:
        from margintheory.presentation.report import emit
        from margintheory.symbolic.derivation import derivation_result

        params = {name: getattr(args, name) for name in TOPIC_OPTIONS[args.topic] if getattr(args, name) is not None}
        return emit(derivation_result(derivation, topic=args.topic, parameters=params,
                                      seconds=time.perf_counter() - start), True)
    width = shutil.get_terminal_size().columns  # COLUMNS when set, else the terminal's, else 80
    print(derivation.render(args.format, width=width if args.format == "text" else None,
                            unicode=stdout_encodes("\u03b3\u2500\u22c5\u239b")))  # sympy's art: ASCII where it must
    return 0 if derivation.all_passed else 1
