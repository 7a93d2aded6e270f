"""The JSON Schema (draft 2020-12) of every result: ``result.schema.json``, shipped inside the package.

``result_schema()`` returns it as a dict, ``validate_result(obj)`` checks a result (a
:class:`~margintheory.core.checks.VerificationResult` or its ``to_dict()``) against it with :mod:`jsonschema` and raises
:class:`jsonschema.ValidationError` on the first violation.  ``margintheory schema`` prints the file.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from margintheory.core.checks import VerificationResult

SCHEMA_FILE = "result.schema.json"


def schema_text() -> str:
    """The schema file's text, exactly as installed."""
    return resources.files("margintheory.presentation").joinpath(SCHEMA_FILE).read_bytes().decode()  # UTF-8


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return dict(json.loads(schema_text()))


def result_schema() -> dict[str, Any]:
    """The result schema as a (fresh) dict."""
    return json.loads(json.dumps(_schema()))


def validate_result(result: VerificationResult | dict[str, Any]) -> dict[str, Any]:
    """Validate ``result`` (after a JSON round trip, as a reader of ``--json`` sees it); return the JSON object."""
    import jsonschema

    obj = result.to_dict() if isinstance(result, VerificationResult) else result
    obj = json.loads(json.dumps(obj, allow_nan=False))
    jsonschema.Draft202012Validator(_schema()).validate(obj)  # (the schema has no "format" keyword to assert)
    return obj
