"""Options shared by several sub-commands, argparse types, and the translation of library terms into flags.

The library (everything outside ``cli.py`` and ``commands/``) never names a flag: its errors name the library
parameter that would lift them (:attr:`margintheory.errors.MarginTheoryError.parameter`); :func:`flag_hint` turns
that into the command line's advice.
"""

from __future__ import annotations

import argparse

from margintheory.backends import select as backends
from margintheory.core.checks import VerificationResult
from margintheory.runtime.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_SECONDS

#: library parameter -> what to do on the command line
FLAG_HINTS = {
    "max_memory": "raise --max-memory",
    "max_seconds": "pass --force to run it anyway (or raise --max-seconds)",
    "time_limit": "raise --time-limit",
    "names": 'the name map is --names "U=KEY,W=KEY"',
    "k": "give it with --k",
    "overwrite": "pass --overwrite to replace it",
    "certificate": "pass --no-certificate to verify without it",
    "workers": "use fewer --workers",
}
#: library parameter -> the attribute a command's arguments must have for the advice to apply (default: the same)
FLAG_ATTRIBUTES = {"certificate": "no_certificate"}


def flag_hint(parameter: str | None) -> str:
    """``"; raise --max-memory"`` for ``parameter="max_memory"``, ``""`` when there is nothing to add."""
    hint = FLAG_HINTS.get(parameter or "")
    return f"; {hint}" if hint else ""


def add_engine_options(parser: argparse.ArgumentParser, *, max_seconds: float | None = None) -> None:
    """``--max-memory``, ``--max-seconds`` and ``--force``: the budget a command's work is estimated against
    before it starts (``max_seconds``: the command's default time limit, else 900 s)."""
    parser.add_argument("--max-memory", type=byte_size, default=DEFAULT_MAX_MEMORY, metavar="BYTES",
                        help="refuse work whose estimated memory exceeds this, e.g. 2G (default 2 GiB)")
    parser.add_argument("--max-seconds", type=positive_float, default=max_seconds or DEFAULT_MAX_SECONDS,
                        help="refuse runs estimated to take longer (default %(default)s s)")
    parser.add_argument("--force", action="store_true", help="run even if the time estimate exceeds --max-seconds")


#: the ``--family`` choices (``margintheory.core.phase_measures.FAMILIES``, repeated here so that building the
#: parsers imports no numpy; ``tests/test_cli.py`` pins the two equal)
FAMILY_CHOICES = ("lemma-c18", "cyclic-lattice", "parity-design", "smallest-known")


def add_backend_options(parser: argparse.ArgumentParser, *, dtype: bool = False) -> None:
    """``--backend`` and ``--device`` (and ``--dtype`` for training): where the array kernels run.  Unset, they
    are the numpy backend on the CPU; ``--device gpu`` alone means the jax backend."""
    group = parser.add_argument_group("backend (docs/backends.md)")
    group.add_argument("--backend", choices=backends.BACKENDS, default=None,
                       help="array backend: numpy (default; numba-compiled kernels) or jax (jit-compiled XLA kernels; "
                       "install margintheory[jax]); verdicts are float64 on both")
    group.add_argument("--device", choices=backends.DEVICES, default=None,
                       help="cpu (default) or gpu (jax with CUDA, install margintheory[gpu]; implies --backend jax; "
                       "all GPUs of the machine are used)")
    if dtype:
        group.add_argument("--dtype", choices=("float32", "float64"), default=None,
                           help="training arithmetic (default float64; float32 needs --backend jax); the recorded "
                           "margins are always recomputed in float64")


def selected_backend(args: argparse.Namespace) -> backends.Backend:
    """The backend :func:`add_backend_options` selects, checked (installed, device present) before any work."""
    chosen = backends.choose(getattr(args, "backend", None), getattr(args, "device", None))
    backends.check_available(chosen)
    return chosen


def note_unused_engine(args: argparse.Namespace, result: VerificationResult) -> None:
    """Say so when a requested engine setting (``--backend``/``--device``/``--workers``/``--scheduler``) had nothing
    to run: the compact lower end enumerates no input, so no exhaustive engine ran (``--exhaustive`` forces one)."""
    asked = [f"--{name} {getattr(args, name)}" for name in ("backend", "device", "workers", "scheduler")
             if getattr(args, name, None)]
    if asked and result.margin is not None and result.margin.method == "fourier":
        result.fields["engine_backend"] = "none: the compact lower end enumerates no input"
        result.notes.append(f"{', '.join(asked)} not used: the lower end was computed from the network's Fourier "
                            "structure without enumerating inputs; --exhaustive runs the exhaustive engine there")


def note_unused_rtol(args: argparse.Namespace, result: VerificationResult) -> None:
    """Say so when ``--rtol`` had nothing to loosen: an exact (proved) margin is compared with ``gamma*`` exactly."""
    if getattr(args, "rtol", None) is not None and result.margin is not None and result.margin.exactness == "proved":
        result.notes.append(f"--rtol {args.rtol:g} not used: the margin is exact and is compared with gamma* "
                            "exactly (no tolerance to loosen)")


def add_network_file_options(parser: argparse.ArgumentParser) -> None:
    """``--names``: which tensors of a network file are ``U`` and ``W`` (see :mod:`margintheory.network_io.names`)."""
    parser.add_argument(
        "--names", metavar="U=KEY,W=KEY", type=name_map,
        help="map the tensors of a state dict or checkpoint: U names a (m,k,p) tensor, k (m,p) matrices joined by "
        "'+', or one (m,p) matrix shared by all inputs (needs --k); W names the (m,p) output matrix; a .T suffix "
        "transposes; nested checkpoint keys are dotted (model.embed.weight). "
        'Example: --names "U=model.embed.weight.T,W=model.unembed.weight.T"',
    )


def name_map(text: str):
    """argparse type: a :class:`~margintheory.network_io.names.NameMap` (a bad mapping is a usage error, exit 2)."""
    from margintheory.errors import InputError
    from margintheory.network_io.names import NameMap

    try:
        return NameMap.parse(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("name map: ")) from None


def engine_time_limit(args: argparse.Namespace) -> float | None:
    """The engine's time limit from :func:`add_engine_options` (``None`` with ``--force``)."""
    return None if getattr(args, "force", False) else getattr(args, "max_seconds", None)


def engine_budget(args: argparse.Namespace) -> dict[str, float | int | None]:
    """``max_memory`` / ``max_seconds`` keyword arguments of the library from :func:`add_engine_options`."""
    return {"max_memory": args.max_memory, "max_seconds": engine_time_limit(args)}


def _int_at_least(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be a {what} integer, got {text}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (argparse turns the error into a usage error, exit 2)."""
    return _int_at_least(text, 1, "positive")


def nonneg_int(text: str) -> int:
    """argparse type: an integer >= 0 (seeds)."""
    return _int_at_least(text, 0, "non-negative")


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def byte_size(text: str) -> int:
    """argparse type: a byte count such as ``2147483648``, ``512M``, ``2G``."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = 1
    if t and t[-1] in units:
        mult, t = units[t[-1]], t[:-1]
    try:
        value = int(float(t) * mult)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"not a byte size: {text!r} (use e.g. 2G, 512M or 1000000)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def nonzero_network(net, path: str):  # noqa: ANN001, ANN201 - a PolyNetwork or a ParityNetwork, returned
    """``net`` read from ``path``, or one line naming the file when it is the zero network (it has no normalized
    margin: the message used to name no file)."""
    from margintheory.errors import NetworkFormatError

    if net.norm() == 0:
        raise NetworkFormatError(f"{path}: the zero network (every weight 0) has no normalized margin")
    return net
