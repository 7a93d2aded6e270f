"""Loading networks trained elsewhere: the ``.npz`` layout of :mod:`margintheory.network` or a PyTorch state dict.

PyTorch state dicts (read only when ``torch`` is importable; it is an optional dependency) may use either layout;
a leading ``module.`` / ``model.`` prefix (DataParallel, wrappers) is ignored:

* **A** - two parameters named ``U`` with shape ``(m, k, p)`` and ``W`` with shape ``(m, p)``
  (``f(a)[c] = sum_i (sum_j U[i, j, a_j])^k W[i, c]``);
* **B** - ``k`` embeddings ``embed.0.weight ... embed.{k-1}.weight`` (``torch.nn.Embedding(p, m)``, shape ``(p, m)``)
  and an output layer ``out.weight`` (``torch.nn.Linear(m, p, bias=False)``, shape ``(p, m)``).
  A bias (``out.bias``, ``embed.*.bias``) is refused: the papers' network has none.

The mapping :func:`state_dict_to_network` works on any mapping of names to arrays (numpy or torch tensors), so
it is tested without torch.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from margintheory.errors import InputError, NetworkFormatError
from margintheory.network import PolyNetwork

TORCH_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt")
_PREFIXES = ("module.", "model.")
_EMBED = re.compile(r"^embed\.(\d+)\.weight$")


def _strip(name: str) -> str:
    changed = True
    while changed:
        changed = False
        for pre in _PREFIXES:
            if name.startswith(pre):
                name, changed = name[len(pre):], True
    return name


def _to_numpy(x: Any, name: str) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor
        x = x.detach().cpu().numpy()
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise NetworkFormatError(f"tensor {name!r} is not a real numeric array (dtype {arr.dtype})")
    return arr


def state_dict_to_network(state: Mapping[str, Any]) -> PolyNetwork:
    """Map a state dict in layout A or B (module docstring) to a :class:`PolyNetwork`; anything else is an error."""
    sd = {_strip(str(k)): v for k, v in state.items()}
    if "U" in sd and "W" in sd:
        extra = sorted(set(sd) - {"U", "W"})
        if extra:
            raise NetworkFormatError(f"unexpected tensors {extra} next to 'U' and 'W' (layout A has only U, W)")
        return PolyNetwork(_to_numpy(sd["U"], "U"), _to_numpy(sd["W"], "W"))
    biases = sorted(k for k in sd if k.endswith(".bias"))
    if biases:
        raise NetworkFormatError(f"bias tensors {biases} are not part of the papers' network (no biases)")
    embeds = {int(m.group(1)): k for k in sd if (m := _EMBED.match(k))}
    if not embeds or "out.weight" not in sd:
        raise NetworkFormatError(
            f"unrecognized state dict (tensors {sorted(sd)}); expected layout A ('U' (m,k,p), 'W' (m,p)) or B "
            "('embed.0.weight'.. (p,m) and 'out.weight' (p,m))"
        )
    k = len(embeds)
    if sorted(embeds) != list(range(k)):
        raise NetworkFormatError(f"embeddings must be numbered 0..{k - 1}, found {sorted(embeds)}")
    extra = sorted(set(sd) - set(embeds.values()) - {"out.weight"})
    if extra:
        raise NetworkFormatError(f"unexpected tensors {extra} in layout B")
    mats = [_to_numpy(sd[embeds[j]], embeds[j]) for j in range(k)]
    out = _to_numpy(sd["out.weight"], "out.weight")
    for j, e in enumerate(mats):
        if e.ndim != 2 or e.shape != mats[0].shape:
            raise NetworkFormatError(f"embed.{j}.weight has shape {e.shape}, expected {mats[0].shape} (p, m)")
    if out.ndim != 2 or out.shape != mats[0].shape:
        raise NetworkFormatError(f"out.weight has shape {out.shape}, expected (p, m) = {mats[0].shape}")
    U = np.stack([e.T for e in mats], axis=1)  # (m, k, p)
    return PolyNetwork(U, out.T)


def load_network(path: str | os.PathLike[str]) -> PolyNetwork:
    """A network from ``.npz`` (:meth:`PolyNetwork.load`) or, when torch is installed, a PyTorch state dict file."""
    path = Path(path)
    if path.suffix.lower() not in TORCH_SUFFIXES:
        return PolyNetwork.load(path)
    try:
        import torch
    except ImportError:
        raise InputError(f"{path}: reading a PyTorch file needs torch, which is not installed; export the "
                         "weights as .npz with arrays U (m,k,p) and W (m,p) instead") from None
    if not path.exists():
        raise NetworkFormatError(f"{path}: no such file")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for damaged files
        raise NetworkFormatError(f"{path}: not a readable PyTorch state dict ({type(exc).__name__}: {exc})") from None
    if isinstance(state, Mapping) and "state_dict" in state and isinstance(state["state_dict"], Mapping):
        state = state["state_dict"]
    if not isinstance(state, Mapping):
        raise NetworkFormatError(f"{path}: expected a state dict (a mapping of names to tensors)")
    try:
        return state_dict_to_network(state)
    except NetworkFormatError as exc:
        raise NetworkFormatError(f"{path}: {exc}") from None
