"""JSON read strictly: an object that names one key twice is refused.

Python's :func:`json.loads` keeps the *last* value of a repeated key, silently: a certificate, a safetensors header
(tensor offsets, the class weights' and the networks' metadata) or a checkpoint's state with ``"k": 3`` and, further
on, ``"k": 4`` would be read as whichever came last, while another reader (RFC 8259 leaves the behaviour open) may
take the first.  Every JSON document the package reads from a file goes through :func:`loads`, which raises
:class:`DuplicateKeyError` (a ``ValueError``, so the readers' one-line errors report it) naming the key.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKeyError(ValueError):
    """A JSON object names a key more than once."""


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of :func:`json.loads`: the object as a dict, or :class:`DuplicateKeyError`."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"duplicate key {key[:80]!r} in a JSON object (which value is meant is not "
                                    "for the reader to guess)")
        out[key] = value
    return out


def loads(text: str | bytes) -> Any:
    """:func:`json.loads` that refuses a repeated key (:class:`DuplicateKeyError`)."""
    return json.loads(text, object_pairs_hook=unique_object)
