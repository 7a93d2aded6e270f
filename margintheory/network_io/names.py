"""Which tensors of a file are ``U`` and ``W``: the documented layouts, or an explicit name mapping.

**Explicit mapping** (``--names "U=KEY,W=KEY"``, :class:`NameMap`):

* ``U=KEY`` names a ``(m, k, p)`` tensor; or ``U=KEY1+KEY2+...`` names ``k`` matrices of shape ``(m, p)``, one per
  input position; or ``U=KEY`` names **one** ``(m, p)`` matrix shared by all ``k`` input positions (a model that
  sums one-hot embeddings of its inputs with one embedding table), which needs ``k`` from the caller (``--k``).
* ``W=KEY`` names the ``(m, p)`` output matrix.
* A ``.T`` suffix transposes a matrix (``W=unembed.weight.T`` for a ``(p, m)`` output layer such as
  ``torch.nn.Linear(m, p)``'s weight); a key that itself ends in ``.T`` is found first.
* Keys of nested checkpoints are dotted: ``model.embed.weight`` is ``checkpoint["model"]["embed.weight"]``
  (or ``checkpoint["model"]["embed"]["weight"]``: every split of the dots is tried and must be unique).
* A mapped ``X.weight`` next to a nonzero ``X.bias`` is refused: the papers' network has no biases, and verifying
  the weights without the bias would verify a different function (an all-zero bias is accepted).

**Without a mapping** (:func:`default_names`): top-level ``U`` and ``W`` (this package's files, and the weights of a
checkpoint of ``margintheory train``: :func:`is_training_checkpoint`); otherwise a state
dict, at the top level or under ``state_dict`` / ``model`` / ``model_state_dict`` / ``module`` / ``net``, with
``module.`` / ``model.`` prefixes ignored, in layout A (``U`` (m,k,p) and ``W`` (m,p)) or layout B
(``embed.{j}.weight`` (p,m) for ``j = 0..k-1`` and ``out.weight`` (p,m), as ``torch.nn.Embedding(p, m)`` and
``torch.nn.Linear(m, p, bias=False)`` store them).  Biases are refused: the papers' network has none.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from margintheory.errors import InputError, NetworkFormatError
from margintheory.network_io._tensors import BFLOAT16, LazyTensor, TensorFile, dtype_name
from margintheory.network_io.weights_only_pickle import show

CONTAINERS = ("state_dict", "model", "model_state_dict", "module", "net", "network")
_PREFIXES = ("module.", "model.")
_EMBED = re.compile(r"^embed\.(\d{1,9})\.weight$")


@dataclass(frozen=True)
class KeyRef:
    """One key of a mapping, as written (possibly with a ``.T`` suffix)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class NameMap:
    """``U`` as one key or ``k`` keys joined by ``+``; ``W`` as one key."""

    U: tuple[KeyRef, ...]
    W: KeyRef
    listed: bool = False  # U's keys are one matrix per input position, even when there is one (k = 1)

    @classmethod
    def parse(cls, text: str) -> NameMap:
        """Parse ``"U=KEY[+KEY...],W=KEY"``; any defect is an :class:`InputError` naming the expected form."""
        form = 'expected "U=KEY,W=KEY" (U may be KEY1+KEY2+... ; a .T suffix transposes)'
        found: dict[str, str] = {}
        for part in text.split(","):
            target, sep, value = part.partition("=")
            target, value = target.strip().upper(), value.strip()
            if not sep or target not in ("U", "W") or not value:
                raise InputError(f"name map: cannot read {part.strip()!r}; {form}")
            if target in found:
                raise InputError(f"name map: {target} is given twice")
            found[target] = value
        if set(found) != {"U", "W"}:
            raise InputError(f"name map: missing {' and '.join(sorted({'U', 'W'} - set(found)))}; {form}")
        keys = tuple(KeyRef(k.strip()) for k in found["U"].split("+"))
        if any(not k.text for k in keys) or "+" in found["W"]:
            raise InputError(f"name map: empty key or '+' in W; {form}")
        return cls(keys, KeyRef(found["W"]), listed=len(keys) > 1)

    def __str__(self) -> str:
        return f"U={'+'.join(map(str, self.U))},W={self.W}"


def resolve(tree: Any, key: str) -> list[Any]:
    """Every leaf reached by ``key`` when its dots may split the nested mapping keys anywhere."""
    hits: list[Any] = []
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            k = str(k)
            if key == k:
                hits.append(v)
            elif key.startswith(k + "."):
                hits.extend(resolve(v, key[len(k) + 1:]))
    elif isinstance(tree, list):
        head, _, rest = key.partition(".")
        if head.isdigit() and int(head) < len(tree):
            hits.extend([tree[int(head)]] if not rest else resolve(tree[int(head)], rest))
    return hits


def lookup(tf: TensorFile, ref: KeyRef) -> tuple[LazyTensor, bool]:
    """The tensor a key names and whether to transpose it; unknown or ambiguous keys are one clear error."""
    text = ref.text
    hits = resolve(tf.tree, text)
    transpose = False
    if not hits and text.endswith(".T"):
        hits, transpose = resolve(tf.tree, text[:-2]), True
    tensors = [h for h in hits if isinstance(h, LazyTensor)]
    if len(tensors) == 1 and len(hits) == 1:
        t = tensors[0]
        if transpose and len(t.shape) != 2:
            raise NetworkFormatError(f"{tf.path}: {text}: .T transposes matrices, but {t.describe()} is not 2-D")
        return t, transpose
    if len(hits) > 1:
        raise NetworkFormatError(f"{tf.path}: key {text!r} is ambiguous ({len(hits)} entries match)")
    if hits:
        raise NetworkFormatError(f"{tf.path}: key {text!r} names a {type(hits[0]).__name__}, not a tensor")
    names = [n for n in tf.tensors() if len(n) <= 4 * len(text) + 40][:10000]  # bounded work for a hint
    close = difflib.get_close_matches(text.removesuffix(".T"), names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise NetworkFormatError(f"{tf.path}: no tensor {text!r}{hint} (the file holds: {listing(tf)})")


def listing(tf: TensorFile, limit: int = 12) -> str:
    """``name (shape) dtype`` of the first ``limit`` tensors of a file."""
    tensors = list(tf.tensors().values())
    text = ", ".join(t.describe() for t in tensors[:limit])
    return (text + f", ... ({len(tensors)} tensors)") if len(tensors) > limit else (text or "no tensors")


def _check_real(t: LazyTensor, path: str) -> None:
    if t.dtype != BFLOAT16 and np.dtype(t.dtype).kind not in "biuf":
        raise NetworkFormatError(f"{path}: tensor {t.name} has dtype {dtype_name(t.dtype)}; weights must be real")


def _shape(t: LazyTensor, transpose: bool) -> tuple[int, ...]:
    return tuple(reversed(t.shape)) if transpose else tuple(t.shape)


def mapped_uw(tf: TensorFile, names: NameMap, k: int | None = None, *, shared: bool = True
              ) -> tuple[np.ndarray, np.ndarray]:
    """``U`` (m, k, p) and ``W`` (m, p) as :class:`NameMap` says; shapes checked from headers before reading.

    ``shared=False`` (the names of a documented layout, not a mapping the user gave): a ``U`` of shape ``(m, p)``
    is refused instead of being read as one embedding shared by all ``k`` inputs -- a file in this package's layout
    stores ``U`` as ``(m, k, p)``, and a shared embedding is a reading the user must ask for, with a name map."""
    path = tf.path
    w, w_t = lookup(tf, names.W)
    us = [lookup(tf, r) for r in names.U]
    for t, _ in [(w, w_t), *us]:
        _check_real(t, path)
    w_shape = _shape(w, w_t)
    if len(w_shape) != 2:
        raise NetworkFormatError(f"{path}: W={names.W} is {w.describe()}; W must be an (m, p) matrix")
    m, p = w_shape
    u_shapes = [_shape(t, tr) for t, tr in us]
    if len(us) == 1 and len(u_shapes[0]) == 3:
        mode = "stacked"
        if u_shapes[0][0] != m or u_shapes[0][2] != p:
            raise NetworkFormatError(f"{path}: U={names.U[0]} has shape {u_shapes[0]}, W gives (m, p) = {(m, p)}; "
                                     f"U must be (m, k, p) = ({m}, k, {p}){_transpose_hint(w_shape, u_shapes[0])}")
        k_file = u_shapes[0][1]
        if k is not None and k != k_file:
            raise InputError(f"{path}: U={names.U[0]} has k = {k_file} input positions but k = {k} was given")
        k = k_file
    else:
        for ref, shape in zip(names.U, u_shapes, strict=True):
            if shape != (m, p):
                hint = "; append .T to transpose" if shape == (p, m) and m != p else ""
                raise NetworkFormatError(f"{path}: U part {ref} has shape {shape}; each part must be (m, p) = "
                                         f"{(m, p)} like W{hint}")
        if len(us) == 1 and not names.listed:
            mode = "shared"
            k = _require_shared_reading(path, names, u_shapes[0], m, p, k, shared)
        else:
            mode = "list"
            if k is not None and k != len(us):
                raise InputError(f"{path}: U lists {len(us)} matrices (one per input) but k = {k} was given")
            k = len(us)
    _refuse_biases(tf, [names.W, *names.U])
    distinct = list({id(t): t for t, _ in [(w, w_t), *us]}.values())
    built = 0 if mode == "stacked" else 8 * m * k * p  # U assembled from matrices is a new array
    with np.errstate(invalid="ignore", over="ignore"):  # signalling NaNs are reported as non-finite values later
        loaded = [np.asarray(a, dtype=np.float64) for a in tf.load(distinct, extra=built)]
    arrays = dict(zip((id(t) for t in distinct), loaded, strict=True))
    W = arrays[id(w)].T if w_t else arrays[id(w)]
    mats = [arrays[id(t)].T if tr else arrays[id(t)] for t, tr in us]
    if mode == "stacked":
        U = mats[0]
    elif mode == "shared":
        U = np.repeat(mats[0][:, None, :], k, axis=1)
    else:
        U = np.stack(mats, axis=1)
    return U, W


def _require_shared_reading(path: str, names: NameMap, shape: tuple, m: int, p: int, k: int | None,
                            shared: bool) -> int:
    """One ``(m, p)`` matrix read as an embedding shared by all ``k`` inputs: only where a name map asks for it
    (``shared``), and only with ``k`` given (returned)."""
    if not shared:
        raise NetworkFormatError(
            f"{path}: U ({names.U[0]}) has shape {shape}, an (m, p) matrix; without a name map U must "
            f"be (m, k, p) = ({m}, k, {p}), one embedding per input. If it is one embedding shared by all k "
            f"inputs, say so with the name map U={names.U[0]},W={names.W} and the number of inputs k",
            parameter="names")
    if k is None:
        raise InputError(f"{path}: U={names.U[0]} is one (m, p) matrix shared by all input positions; give the "
                         "number of inputs k", parameter="k")
    return k


def _refuse_biases(tf: TensorFile, refs: list[KeyRef]) -> None:
    """A mapped ``X.weight`` whose module also stores a nonzero ``X.bias`` belongs to a model with biases, which is
    not the papers' network: refused rather than verified without its bias (an all-zero bias is accepted)."""
    for ref in refs:
        key = ref.text.removesuffix(".T") if not resolve(tf.tree, ref.text) else ref.text
        if not key.endswith(".weight"):
            continue
        bias = key.removesuffix(".weight") + ".bias"
        hits = [h for h in resolve(tf.tree, bias) if isinstance(h, LazyTensor)]
        if not hits:
            continue
        _check_real(hits[0], tf.path)
        with np.errstate(invalid="ignore"):
            (values,) = tf.load(hits[:1])
        if np.any(np.asarray(values, dtype=np.float64) != 0):
            raise NetworkFormatError(f"{tf.path}: {bias} is a nonzero bias of {key}; the papers' network has no "
                                     "biases, so this model is not the network that would be verified (map a model "
                                     "without biases, or one whose biases are zero)")


def _transpose_hint(w_shape: tuple[int, ...], u_shape: tuple[int, ...]) -> str:
    return "; W may need a .T suffix" if (u_shape[0], u_shape[2]) == tuple(reversed(w_shape)) else ""


def _strip(name: str) -> str:
    changed = True
    while changed:
        changed = False
        for pre in _PREFIXES:
            if name.startswith(pre):
                name, changed = name[len(pre):], True
    return name


#: the training checkpoint of ``margintheory train`` (:mod:`margintheory.training.checkpoint`): ``U``, ``W``, the
#: run's state as a JSON string ``state_json`` (a 0-d unicode array) and the optimizer's moments ``opt__<name>``
CHECKPOINT_STATE = "state_json"
CHECKPOINT_OPTIMIZER_PREFIX = "opt__"
#: moment names of the numpy trainer's optimizers (Adam / AdamW: first and second moments of U and W; GD has none);
#: the jax trainer stores optax's state by its tree paths: ``0.mu.U``, ``0.nu.W``, ... and scalar counts ``0.count``
CHECKPOINT_MOMENTS = ("m_U", "v_U", "m_W", "v_W")


def _optimizer_entry_fits(entry: str, tensor: Any, shapes: Mapping[str, tuple[int, ...]]) -> bool:
    """An ``opt__<entry>`` of a checkpoint: a numpy moment, or an optax leaf (``<path>.U`` / ``<path>.W``), with
    the shape of the weight it belongs to, or an optax scalar (a step count)."""
    if not isinstance(tensor, LazyTensor):
        return False
    if entry in CHECKPOINT_MOMENTS:
        weight = entry[2:]
    elif "." in entry:
        weight = entry.rsplit(".", 1)[1]
        if tuple(tensor.shape) == ():
            return True
    else:
        return False
    return weight in shapes and tuple(tensor.shape) == shapes[weight]


def is_training_checkpoint(top: Mapping[str, Any]) -> bool:
    """Whether the top level of a file is exactly a checkpoint of ``margintheory train``: ``U``, ``W``, a scalar
    string ``state_json`` and only the trainer's optimizer state (numpy or optax names), each moment with the shape
    of the weight it belongs to.  Any other extra tensor leaves the file to the general rules (an unexpected tensor
    is refused there)."""
    u, w, state = top.get("U"), top.get("W"), top.get(CHECKPOINT_STATE)
    if not all(isinstance(x, LazyTensor) for x in (u, w, state)):
        return False
    assert isinstance(state, LazyTensor) and isinstance(u, LazyTensor) and isinstance(w, LazyTensor)
    if state.shape != () or state.dtype == BFLOAT16 or np.dtype(state.dtype).kind != "U":
        return False
    shapes = {"U": tuple(u.shape), "W": tuple(w.shape)}
    for name, t in top.items():
        if name in ("U", "W", CHECKPOINT_STATE):
            continue
        entry = str(name).removeprefix(CHECKPOINT_OPTIMIZER_PREFIX)
        if entry == name or not _optimizer_entry_fits(entry, t, shapes):
            return False
    return True


def default_names(tf: TensorFile) -> NameMap:
    """The :class:`NameMap` of the documented layouts (module docstring), or one error listing the file's tensors.
    A checkpoint of ``margintheory train`` (:func:`is_training_checkpoint`) gives its weights ``U``, ``W``; its
    optimizer state is not read."""
    top = tf.tree if isinstance(tf.tree, Mapping) else {}
    ours = all(n in ("U", "W", "format_version") or str(n).startswith("meta__") for n in top)
    if ours and isinstance(top.get("U"), LazyTensor) and isinstance(top.get("W"), LazyTensor):
        return NameMap((KeyRef("U"),), KeyRef("W"))  # this package's layout (docs/network-files.md)
    if tf.kind == "npz" and is_training_checkpoint(top):
        return NameMap((KeyRef("U"),), KeyRef("W"))  # weights only: the moments and the run state are skipped
    candidates = [(c, top[c]) for c in CONTAINERS if isinstance(top.get(c), Mapping)] + [("", top)]
    first_error: NetworkFormatError | None = None
    for container, sd in candidates:
        stripped: dict[str, str] = {}
        clashes: list[tuple[str, str]] = []
        for name, full in _flat_tensors(sd, container):
            key = _strip(name)
            if key in stripped:
                clashes.append((stripped[key], full))
            stripped.setdefault(key, full)
        if clashes:  # two tensors would be read under one name: which one is meant is not for the file order to say
            shown = "; ".join(f"{a} and {b}" for a, b in clashes[:3])
            first_error = first_error or NetworkFormatError(
                f"{tf.path}: tensors whose names differ only by a prefix ({shown}); choose them with a name map",
                parameter="names")
            continue
        try:
            found = _layout(stripped, tf.path)
        except NetworkFormatError as exc:
            first_error = first_error or exc
            continue
        if found is not None:
            return found
    if first_error is not None:
        raise first_error
    raise NetworkFormatError(
        f"{tf.path}: no network in a documented layout (U (m,k,p) and W (m,p); or embed.{{j}}.weight (p,m) and "
        f"out.weight (p,m)); map its tensors with a name map (the file holds: {listing(tf)})",
        parameter="names",
    )


def _flat_tensors(tree: Any, prefix: str) -> list[tuple[str, str]]:
    out = []
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            full = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, LazyTensor):
                out.append((str(k), full))
            elif isinstance(v, Mapping):
                out.extend((f"{k}.{n}", f) for n, f in _flat_tensors(v, full))
    return out


def _layout(sd: dict[str, str], path: str) -> NameMap | None:
    if "U" in sd and "W" in sd:
        extra = sorted(set(sd) - {"U", "W"})
        if extra:
            raise NetworkFormatError(f"{path}: unexpected tensors {show(extra)} next to U and W (layout A has only U, "
                                     "W); select the weights with a name map \"U=KEY,W=KEY\"", parameter="names")
        return NameMap((KeyRef(sd["U"]),), KeyRef(sd["W"]))
    embeds = {int(m.group(1)): full for name, full in sd.items() if (m := _EMBED.match(name))}
    if not embeds or "out.weight" not in sd:
        return None
    biases = sorted(n for n in sd if n.endswith(".bias"))
    if biases:
        raise NetworkFormatError(f"{path}: bias tensors {show(biases)} are not part of the papers' network (no "
                                 "biases)")
    k = len(embeds)
    if sorted(embeds) != list(range(k)):
        raise NetworkFormatError(f"{path}: embeddings must be numbered 0..{k - 1}, found {show(sorted(embeds))}")
    extra = sorted(set(sd) - {n for n in sd if _EMBED.match(n)} - {"out.weight"})
    if extra:
        raise NetworkFormatError(f"{path}: unexpected tensors {show(extra)} in layout B (embed.{{j}}.weight, "
                                 "out.weight)")
    return NameMap(tuple(KeyRef(embeds[j] + ".T") for j in range(k)), KeyRef(sd["out.weight"] + ".T"), listed=True)
