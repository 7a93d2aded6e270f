"""Checkpoints: parameters, optimizer moments, random-generator state, step counter and history in one ``.npz``.

Written atomically (:func:`margintheory.runtime.atomic.atomic_write_bytes`: temporary file + rename), so an interruption
while saving leaves the previous checkpoint intact.  Layout (its names defined once in
:mod:`margintheory.network_io.names`, which also reads the weights of a checkpoint): arrays ``U``, ``W``,
``opt__<name>`` (optimizer moments) and ``state_json`` (a 0-d unicode array holding the JSON of
:class:`TrainState` minus the arrays).
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from margintheory.errors import InputError
from margintheory.network_io.names import CHECKPOINT_OPTIMIZER_PREFIX as OPT
from margintheory.network_io.names import CHECKPOINT_STATE as STATE
from margintheory.runtime import strict_json
from margintheory.runtime.atomic import atomic_write_bytes

CHECKPOINT_VERSION = 1


@dataclass
class TrainState:
    """Everything needed to continue a run exactly where it stopped."""

    config: dict[str, Any]
    U: np.ndarray
    W: np.ndarray
    step: int
    opt_t: int
    moments: dict[str, np.ndarray]
    rng_state: dict[str, Any]
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0


def save_checkpoint(path: str | os.PathLike[str], state: TrainState) -> None:
    """Serialize ``state`` to ``path`` atomically."""
    meta = {
        "version": CHECKPOINT_VERSION, "config": state.config, "step": state.step, "opt_t": state.opt_t,
        "rng_state": state.rng_state, "history": state.history, "seconds": state.seconds,
        "cpu_seconds": state.cpu_seconds,
    }
    arrays = {"U": state.U, "W": state.W, STATE: np.array(json.dumps(meta))}
    arrays.update({OPT + k: v for k, v in state.moments.items()})
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)  # numeric arrays and a JSON string only: never a pickle
    atomic_write_bytes(path, buf.getvalue())


def checkpoint_progress(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(step, steps)``: how far the checkpointed run is and how far its configuration goes, from ``state_json``
    alone (the arrays are not read); :class:`InputError` when ``path`` is not a readable checkpoint."""
    from margintheory.network_io import LazyTensor, open_tensor_file

    try:
        with open_tensor_file(path, kind="npz") as tf:
            state = tf.tree.get(STATE)
            if not isinstance(state, LazyTensor):
                raise InputError(f"{path}: not a training checkpoint (no {STATE})")
            meta = strict_json.loads(str(tf.load([state])[0]))
        return int(meta["step"]), int(meta["config"]["steps"])
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a readable training checkpoint ({type(exc).__name__}: {exc})") from None


def load_checkpoint(path: str | os.PathLike[str]) -> TrainState:
    """Read a checkpoint written by :func:`save_checkpoint`; a damaged file raises :class:`InputError`.

    Read through :mod:`margintheory.network_io` like every network file: regular files only, ``.npy`` headers
    first, sizes within the memory budget before any data is read, never a pickle."""
    from margintheory.network_io import LazyTensor, open_tensor_file

    try:
        with open_tensor_file(path, kind="npz") as tf:
            top = {n: t for n, t in tf.tree.items() if isinstance(t, LazyTensor)}
            missing = [n for n in (STATE, "U", "W") if n not in top]
            if missing:
                raise InputError(f"{path}: not a readable training checkpoint (missing {missing})")
            names = [STATE, "U", "W"] + sorted(n for n in top if n.startswith(OPT))
            data = dict(zip(names, tf.load([top[n] for n in names]), strict=True))
        meta = strict_json.loads(str(data[STATE]))
    except InputError as exc:
        text = str(exc).removeprefix(f"{path}: ")
        if "checkpoint" not in text:
            text = f"not a readable training checkpoint ({text})"
        raise InputError(f"{path}: {text}") from None
    except (ValueError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable training checkpoint ({type(exc).__name__}: {exc})") from None
    U, W = np.array(data["U"]), np.array(data["W"])
    moments = {n[len(OPT):]: np.array(a) for n, a in data.items() if n.startswith(OPT)}
    if not isinstance(meta, dict):
        raise InputError(f"{path}: not a readable training checkpoint (state_json is not an object)")
    if meta.get("version") != CHECKPOINT_VERSION:
        raise InputError(f"{path}: unsupported checkpoint version {meta.get('version')!r}")
    return TrainState(meta["config"], U, W, int(meta["step"]), int(meta["opt_t"]), moments, meta["rng_state"],
                      list(meta["history"]), float(meta["seconds"]), float(meta.get("cpu_seconds", 0.0)))
