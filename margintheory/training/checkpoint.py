"""Checkpoints: parameters, optimizer moments, random-generator state, step counter and history in one ``.npz``.

Written atomically (:func:`margintheory.atomic.atomic_write_bytes`: temporary file + rename), so an interruption
while saving leaves the previous checkpoint intact.  Layout: arrays ``U``, ``W``, ``opt__<name>`` (optimizer
moments) and ``state_json`` (a 0-d unicode array holding the JSON of :class:`TrainState` minus the arrays).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from margintheory.atomic import atomic_write_bytes
from margintheory.errors import InputError

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
    arrays = {"U": state.U, "W": state.W, "state_json": np.array(json.dumps(meta))}
    arrays.update({"opt__" + k: v for k, v in state.moments.items()})
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)  # numeric arrays and a JSON string only: never a pickle
    atomic_write_bytes(path, buf.getvalue())


def load_checkpoint(path: str | os.PathLike[str]) -> TrainState:
    """Read a checkpoint written by :func:`save_checkpoint`; a damaged file raises :class:`InputError`."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["state_json"]))
            U, W = data["U"].copy(), data["W"].copy()
            moments = {n[len("opt__"):]: data[n].copy() for n in data.files if n.startswith("opt__")}
    except FileNotFoundError:
        raise InputError(f"{path}: no such checkpoint") from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable training checkpoint ({type(exc).__name__}: {exc})") from None
    if meta.get("version") != CHECKPOINT_VERSION:
        raise InputError(f"{path}: unsupported checkpoint version {meta.get('version')!r}")
    return TrainState(meta["config"], U, W, int(meta["step"]), int(meta["opt_t"]), moments, meta["rng_state"],
                      list(meta["history"]), float(meta["seconds"]), float(meta.get("cpu_seconds", 0.0)))
