"""Which array backend runs the kernels: the choice (backend name, device), its checks, and the context carrying it.

The exhaustive engine (:func:`margintheory.engines.margins.exhaustive_margin`) asks :func:`current` which backend to use
when its caller names none; a command line selects one for the duration of a command with :func:`using`, so the
layers in between (tasks, verification, analysis) never know which backend runs.

* ``numpy`` (default, the light install): numpy with the numba-compiled chunk kernels of
  :mod:`margintheory.backends.numpy_engine`; CPU only.
* ``jax``: :mod:`margintheory.backends.jax_engine` (and :mod:`margintheory.backends.jax_training` for the trainer),
  jit-compiled XLA kernels on the CPU or a GPU.  ``jax`` is imported only when this backend is chosen.

Every verdict is computed in float64: the JAX modules enable 64-bit types with the thread-local context manager
``jax.enable_x64(True)`` around each of their entry points, never with the global ``jax.config`` switch, so
importing or using margintheory does not change how the caller's own JAX code computes.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from margintheory.errors import InputError

BACKENDS = ("numpy", "jax")
DEVICES = ("cpu", "gpu")


@dataclass(frozen=True)
class Backend:
    """A backend name and the kind of device it runs on (``numpy`` runs on the CPU only)."""

    name: str = "numpy"
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.name not in BACKENDS:
            raise InputError(f"unknown backend {self.name!r}; choose one of {', '.join(BACKENDS)}")
        if self.device not in DEVICES:
            raise InputError(f"unknown device {self.device!r}; choose one of {', '.join(DEVICES)}")
        if self.name == "numpy" and self.device != "cpu":
            raise InputError(f"the numpy backend runs on the CPU only; choose the jax backend for the {self.device}")

    @property
    def label(self) -> str:
        return f"{self.name} ({self.device})"


def choose(name: str | None = None, device: str | None = None) -> Backend:
    """The backend for a name and a device, either possibly unset: the device defaults to the CPU, the name to
    ``jax`` for a GPU and ``numpy`` otherwise."""
    device = device or "cpu"
    return Backend(name or ("jax" if device == "gpu" else "numpy"), device)


_CURRENT: contextvars.ContextVar[Backend | None] = contextvars.ContextVar("margintheory_backend", default=None)


def current() -> Backend:
    """The backend selected by the innermost :func:`using` block (``numpy`` on the CPU outside any)."""
    return _CURRENT.get() or Backend()


def resolve(backend: Backend | str | None) -> Backend:
    """``backend`` itself, a backend named by a string (on the CPU), or :func:`current` for ``None``."""
    if backend is None:
        return current()
    if isinstance(backend, str):
        return choose(backend)
    return backend


@contextlib.contextmanager
def using(backend: Backend | str | None) -> Iterator[Backend]:
    """Run the block with ``backend`` as :func:`current`; checks first that it is installed and its device exists
    (:class:`~margintheory.errors.InputError` otherwise, before any work)."""
    chosen = resolve(backend)
    check_available(chosen)
    token = _CURRENT.set(chosen)
    try:
        yield chosen
    finally:
        _CURRENT.reset(token)


def import_jax() -> Any:
    """The ``jax`` module (imported here, lazily); a missing install is an :class:`InputError` naming the extra."""
    try:
        import jax
    except ImportError:
        raise InputError("the jax backend needs the jax package: pip install 'margintheory[jax]' "
                         "(or 'margintheory[gpu]' for CUDA GPUs)") from None
    return jax


def float64(fn: Callable) -> Callable:
    """Decorator: run ``fn`` with JAX's 64-bit types enabled in this thread only (the context manager
    ``jax.enable_x64(True)``, JAX >= 0.8), whatever the process-wide ``jax_enable_x64`` setting is."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with import_jax().enable_x64(True):
            return fn(*args, **kwargs)

    return wrapped


def devices(backend: Backend) -> list[Any]:
    """The JAX devices of ``backend``'s kind (all of them: the engine shards its chunks over several)."""
    jax = import_jax()
    platforms = os.environ.get("JAX_PLATFORMS")
    try:
        found = list(jax.devices(backend.device))
    except Exception:  # noqa: BLE001 - jax raises RuntimeError, or AssertionError for a JAX_PLATFORMS it cannot start
        found = []
    if not found:
        try:
            available = ", ".join(sorted({d.platform for d in jax.devices()}))
        except Exception as exc:  # noqa: BLE001 - no platform starts at all (e.g. JAX_PLATFORMS names a missing one)
            why = type(exc).__name__ + (f": {str(exc).splitlines()[0]}" if str(exc).strip() else "")
            raise InputError(f"jax could not start a platform (JAX_PLATFORMS={platforms!r}, {why}); unset "
                             "JAX_PLATFORMS or install the platform's plugin") from None
        where = f"; JAX_PLATFORMS={platforms!r} limits it" if platforms else ""
        raise InputError(f"no {backend.device.upper()} is visible to jax (it sees: {available}{where}); for a "
                         "GPU install 'margintheory[gpu]' (jax with CUDA) on a machine with an NVIDIA GPU")
    return found


def check_available(backend: Backend) -> None:
    """Raise :class:`InputError` unless ``backend`` can run here (numpy always can; jax needs the package, and a GPU
    for ``device='gpu'``)."""
    if backend.name == "jax":
        devices(backend)


def describe(backend: Backend) -> str:
    """``'numpy+numba (cpu)'`` or ``'jax 0.x on cuda:0, cuda:1'``: what actually ran, for results and benchmarks."""
    if backend.name == "numpy":
        from margintheory.backends.kernels import HAVE_NUMBA

        return f"numpy{'+numba' if HAVE_NUMBA else ''} (cpu)"
    jax = import_jax()
    found = devices(backend)
    kinds = sorted({getattr(d, "device_kind", d.platform) for d in found})
    return f"jax {jax.__version__} on {len(found)} x {', '.join(kinds)} ({backend.device})"
