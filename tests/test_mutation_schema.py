"""The result schema (``margintheory/presentation/result.schema.json``) pinned by documents it must accept and
documents it must
reject, and a mutation test of the schema itself: every constraint of the file is weakened or tightened in turn
(an enum value dropped, a required key dropped, a type removed, a bound moved, a branch of ``anyOf``/``allOf``
removed...), and some document below must change its verdict for each such mutant.  A constraint no document
notices (such as ``certificate.lower_exactness`` accepting any string) fails the test by name.

This module is also the test selection of the mutation gate's ``schema`` area (``tools/mutation.sh schema``), which
mutates :mod:`margintheory.presentation.schema` with mutmut; the JSON mutants are counted here (mutmut reads only
Python)."""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import pytest

from margintheory.core.checks import Check, VerificationResult
from margintheory.presentation import schema

CHECK = {"name": "n" * 30, "statement": "the claim", "expected": 1, "measured": 1, "tolerance": 1e-9, "passed": True,
         "exactness": "proved", "detail": "", "informational": False, "premises": ["other row", "Lemma C.6"],
         "assumes": ["Lemma C.6"]}
CERTIFICATE = {"lower": 0.1, "upper": 0.2, "relative_gap": 1.0, "lower_exactness": "proved",
               "upper_exactness": "proved", "lower_exact": "1/10", "upper_exact": "-1/5", "lower_method": "fourier",
               "lower_how": "h", "steps": [{"x": 1}]}
BASE = {"task": "t", "title": "title", "parameters": {"p": 5}, "gamma_star": 0.1, "gamma_star_note": "",
        "normalized_margin": 0.1, "ratio_to_gamma_star": 1.0, "relative_error": 0.0, "width": 0,
        "verdict": "verified", "exit_code": 0, "checks": [CHECK], "seconds": 0.0, "version": "v", "notes": ["a"],
        "details": {"d": [1]}, "certificate": CERTIFICATE}


def _doc(top: dict | None = None, check: dict | None = None, cert: dict | None = None,
         drop: tuple[str, str] | None = None) -> dict:
    """``BASE`` with top-level, check and certificate fields replaced (``drop``: (part, key) removed)."""
    d = copy.deepcopy(BASE)
    d.update(top or {})
    if "checks" not in (top or {}):
        d["checks"] = [dict(CHECK, **(check or {}))]
    if "certificate" not in (top or {}):
        d["certificate"] = dict(CERTIFICATE, **(cert or {}))
    if drop is not None:
        part, key = drop
        {"top": d, "check": d["checks"][0] if d["checks"] else {}, "cert": d["certificate"]}[part].pop(key)
    return d


EXACTNESS = ["proved", "certified", "float", "argued"]

ACCEPT = [
    _doc(),
    *[_doc(check={"exactness": e, "detail": "why"}) for e in EXACTNESS],
    *[_doc(cert={"lower_exactness": e, "upper_exactness": e}) for e in EXACTNESS],
    _doc({"gamma_star": None, "gamma_star_note": "no closed form", "ratio_to_gamma_star": None,
          "relative_error": None, "normalized_margin": None, "width": None, "seconds": None}),
    _doc({"verdict": "refuted", "exit_code": 1, "checks": [], "notes": [], "details": {}}),
    # incomplete (a sweep with failed cells): 2 whatever the cells that ran say
    _doc({"verdict": "refuted", "exit_code": 2}), _doc({"exit_code": 2}),
    _doc({"verdict": "not-applicable", "exit_code": 2}),
    _doc({"verdict": "undecided", "exit_code": 2}),
    _doc({"verdict": "not-applicable", "exit_code": 1}),
    _doc({"verdict": "not-applicable", "exit_code": 0, "width": 3, "seconds": 2.5, "relative_error": 0.5}),
    _doc({"gamma_star": None, "gamma_star_note": "x", "ratio_to_gamma_star": None}),  # a reason of one character
    _doc(check={"exactness": "argued", "detail": "x"}),
    *[_doc(check={"tolerance": t}) for t in (None, "inf", "-inf", "nan", 0, -1)],
    _doc(check={"expected": "a", "measured": [1, "b"], "name": "x"}),
    _doc(drop=("check", "statement")),
    _doc(drop=("top", "certificate")),
    *[_doc(cert={"relative_gap": g}) for g in ("inf", "nan", -1)],
    *[_doc(cert={"lower_exact": r, "upper_exact": r}) for r in (None, "3", "-12/345", "0")],
    _doc(cert={"lower_method": "exhaustive"}),
    _doc(check={"premises": [], "assumes": []}),  # a row that rests on nothing
    _doc(check={"premises": ["x"], "assumes": ["y"]}),  # names of one character
]

REJECT = [
    *[_doc(drop=("top", key)) for key in BASE if key != "certificate"],
    *[_doc(drop=("check", key)) for key in CHECK if key != "statement"],
    *[_doc(drop=("cert", key)) for key in CERTIFICATE],
    [], "result", None,  # not an object
    _doc({"gamma_star_note": "x", "ratio_to_gamma_star": None}, drop=("top", "gamma_star")),
    _doc(check={"detail": "why"}, drop=("check", "exactness")),
    _doc({"verdict": "not-applicable", "exit_code": 3}),
    _doc({"exit_code": 2}, drop=("top", "verdict")),  # no verdict: not even the exit code that every verdict allows
    _doc({"p": 5}),  # task values belong under details
    _doc(check={"extra": 1}),
    # types
    *[_doc({key: value}) for key, value in (
        ("task", 1), ("title", None), ("parameters", []), ("gamma_star", "0.1"), ("gamma_star_note", None),
        ("normalized_margin", "x"), ("ratio_to_gamma_star", "1"), ("relative_error", "0"), ("width", 1.5),
        ("width", "3"), ("verdict", "ok"), ("exit_code", 3), ("exit_code", True), ("checks", {}),
        ("checks", [1]),
        ("seconds", "1"), ("version", 1), ("notes", "a"), ("notes", [1]), ("details", []), ("certificate", []))],
    *[_doc(check={key: value}) for key, value in (
        ("name", 1), ("statement", 1), ("tolerance", "x"), ("tolerance", "Infinity"), ("tolerance", [1]),
        ("passed", 1), ("exactness", "exact"), ("exactness", None), ("detail", None), ("informational", "no"),
        ("premises", "a row"), ("premises", [1]), ("premises", [""]), ("premises", ["a", "a"]), ("premises", None),
        ("assumes", "an argument"), ("assumes", [None]), ("assumes", [""]), ("assumes", ["a", "a"]))],
    *[_doc(cert={key: value}) for key, value in (
        ("lower", "0.1"), ("lower", None), ("upper", "0.2"), ("relative_gap", "x"), ("relative_gap", None),
        ("lower_exactness", "exact"), ("lower_exactness", "maybe"), ("lower_exactness", None),
        ("upper_exactness", "exact"), ("lower_exact", "0.25"), ("lower_exact", 1), ("upper_exact", "1/"),
        ("lower_method", "brute"), ("lower_method", None), ("lower_how", ""), ("lower_how", None),
        ("upper_exact", "/2"), ("upper_exact", "1/-2"), ("upper_exact", " 1"), ("upper_exact", "1/2 "),
        ("upper_exact", "1/2/3"), ("upper_exact", 0.5), ("steps", {}))],
    # bounds and lengths
    _doc({"relative_error": -0.1}), _doc({"width": -1}), _doc({"seconds": -0.5}),
    _doc({"task": ""}), _doc({"version": ""}), _doc(check={"name": ""}), _doc(check={"name": "n" * 31}),
    # conditional rules
    _doc(check={"exactness": "argued", "detail": ""}),  # an argument without its reason
    _doc({"gamma_star": None, "gamma_star_note": "", "ratio_to_gamma_star": None}),  # null without a reason
    _doc({"gamma_star": None, "gamma_star_note": "why", "ratio_to_gamma_star": 1.0}),
    _doc({"verdict": "verified", "exit_code": 1}), _doc({"verdict": "refuted", "exit_code": 0}),
]


def _validator(s: dict) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(s)


def test_the_schema_accepts_and_rejects_the_documents_it_should():
    v = _validator(schema.result_schema())
    accepted = [i for i, d in enumerate(REJECT) if v.is_valid(d)]
    rejected = [i for i, d in enumerate(ACCEPT) if not v.is_valid(d)]
    assert accepted == [] and rejected == []
    assert schema.result_schema()["$defs"]["exactness"]["enum"] == EXACTNESS


# -- mutants of the schema file ------------------------------------------------------------------------------------

_BOUNDS = ("minimum", "minLength", "maxLength")
_DROPPED = ("enum", "const", "type", "pattern", "$ref", "additionalProperties", "items", "then", "required",
            "anyOf", "allOf", "if", *_BOUNDS)


def _nodes(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, dict]]:
    """Every schema object in the file with its path (descriptions and annotations are not schemas)."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    yield from _nodes(sub, (*path, key, name))
            elif key in ("items", "if", "then", "else", "not", "additionalProperties"):
                yield from _nodes(value, (*path, key))
            elif key in ("anyOf", "allOf", "oneOf"):
                for i, sub in enumerate(value):
                    yield from _nodes(sub, (*path, key, i))


def _at(root: dict, path: tuple) -> dict:
    for key in path:
        root = root[key]
    return root


_TAGS = {"type": "?type", "additionalProperties": "+extra", "required": "-missing"}


def schema_mutants(original: dict) -> Iterator[tuple[str, dict, str]]:
    """``(description, mutated schema, hint)``: each keyword dropped; each enum value, type, required key,
    property, ``anyOf``/``allOf`` branch dropped in turn; each bound moved by one either way.  ``hint`` names the
    fields the mutant is about (the path, the dropped item, a tag of :func:`_changed`)."""
    for path, node in list(_nodes(original)):
        where = "/".join(map(str, path)) or "(top)"

        rule = max((i + 2 for i, key in enumerate(path) if key in ("allOf", "anyOf")), default=0)
        context = json.dumps(_at(original, path[:rule])) if rule else ""  # the whole rule a mutant is inside

        def mutant(change, what, item=None, key=None, path=path, where=where, context=context):
            m = copy.deepcopy(original)
            change(_at(m, path))
            return f"{where}: {what}", m, f"{where} {what} {json.dumps(item)} {_TAGS.get(key, '')} {context}"

        for key in _DROPPED:
            if key in node:
                yield mutant(lambda n, key=key: n.pop(key), f"drop {key}", node[key], key)
        for key in ("enum", "required", "anyOf", "allOf"):
            if isinstance(node.get(key), list) and len(node[key]) > 1:
                for i, item in enumerate(node[key]):
                    yield mutant(lambda n, key=key, i=i: n[key].pop(i), f"drop {key}[{i}] = {json.dumps(item)[:40]}",
                                 item, key)
        if isinstance(node.get("type"), list):
            for i, t in enumerate(node["type"]):
                yield mutant(lambda n, i=i: n["type"].pop(i), f"drop type {t}")
        for name in node.get("properties", {}):
            yield mutant(lambda n, name=name: n["properties"].pop(name), f"drop property {name}")
        for key in _BOUNDS:
            if key in node:
                for delta in (-1, 1):
                    yield mutant(lambda n, key=key, delta=delta: n.update({key: n[key] + delta}),
                                 f"{key} {node[key]} -> {node[key] + delta}")
        if node.get("additionalProperties") is False:
            yield mutant(lambda n: n.update(additionalProperties=True), "additionalProperties true", None,
                         "additionalProperties")
        if "const" in node:
            yield mutant(lambda n: n.update(const=not n["const"] if isinstance(n["const"], bool) else
                                           ("x" if isinstance(n["const"], str) else n["const"] + 1)), "change const")


#: mutants that accept and reject the same documents as the schema, with the reason (an auditor's list)
EQUIVALENT: dict[str, str] = {}


#: the fields whose values a definition of ``$defs`` validates
_USES = {"exactness": {"exactness", "lower_exactness", "upper_exactness"}, "real": {"tolerance", "relative_gap"},
         "rational": {"lower_exact", "upper_exact"}, "check": set(CHECK) | {"checks"},
         "certificate": set(CERTIFICATE) | {"certificate"}}
_KEYWORDS = {"properties", "drop", "type", "required", "enum", "allOf", "anyOf", "if", "then", "defs", "items",
             "minLength", "maxLength", "minimum", "const", "change", "pattern", "additionalProperties", "true", "ref",
             "top", "null", "string", "number", "integer", "object", "array", "boolean", "property"}


def _changed(doc: Any) -> set[str]:
    """The fields in which ``doc`` differs from ``BASE`` (top level, its check, its certificate), with the tags
    ``?type`` (a part is not an object), ``+extra`` (a field added) and ``-missing`` (a field left out)."""
    def diff(a: Any, b: dict, part: str) -> set[str]:
        if not isinstance(a, dict):
            return {part, "?type"}
        keys = {k for k in set(a) | set(b) if json.dumps(a.get(k, "-")) != json.dumps(b.get(k, "-"))}
        return keys | ({"+extra"} if set(a) - set(b) else set()) | ({"-missing"} if set(b) - set(a) else set())

    out = diff(doc, BASE, "top") - {"checks", "certificate"}
    checks = doc.get("checks") if isinstance(doc, dict) else None
    if isinstance(checks, list) and checks:
        out |= diff(checks[0], CHECK, "checks")
    elif isinstance(doc, dict):
        out |= {"checks"} | ({"?type"} if not isinstance(checks, list) else set())
    if isinstance(doc, dict):
        out |= diff(doc["certificate"], CERTIFICATE, "certificate") if "certificate" in doc else {"certificate"}
    return out


def _closeness(hint: str) -> Callable[[tuple], int]:
    """How likely a document is to tell a mutant from the schema: 2 for each field it changes (or tag it has) that
    the mutant's ``hint`` names, 1 for each field it changes that a definition named there validates."""
    named = set(re.findall(r"[?+-]?[A-Za-z_]+", hint)) - _KEYWORDS
    used = set().union(*(_USES.get(w, set()) for w in named))
    return lambda doc: 2 * len(doc[2] & (named - set(_USES))) + len(doc[2] & used)


def test_every_schema_mutant_is_caught_by_some_document():
    """Each mutant is tried on the documents that touch the mutated place first (a first difference kills it), then
    on all of them."""
    original = schema.result_schema()
    docs = [(d, True, _changed(d)) for d in ACCEPT] + [(d, False, _changed(d)) for d in REJECT]
    survivors = []
    n = 0
    for what, mutated, hint in schema_mutants(original):
        n += 1
        v = _validator(mutated)
        # (a stable sort: the recent killers first among equals)
        for doc in sorted(docs, key=_closeness(hint), reverse=True):
            if v.is_valid(doc[0]) != doc[1]:
                docs.insert(0, docs.pop(docs.index(doc)))
                break
        else:
            survivors.append(what)
    assert n > 200
    assert sorted(survivors) == sorted(EQUIVALENT), f"{len(survivors)} of {n} schema mutants survive: {survivors}"


# -- margintheory.presentation.schema
# -------------------------------------------------------------------------------------------


def test_schema_text_is_the_file_and_result_schema_a_fresh_copy():
    from importlib import resources

    raw = resources.files("margintheory.presentation").joinpath("result.schema.json").read_bytes()
    assert schema.schema_text() == raw.decode("utf-8") and json.loads(schema.schema_text()) == schema.result_schema()
    a = schema.result_schema()
    a["required"].clear()
    assert schema.result_schema()["required"], "result_schema() must not hand out the cached dict"
    assert '"format"' not in schema.schema_text()  # no format keyword: nothing for a format checker to assert


def _result() -> VerificationResult:
    return VerificationResult(title="t", task="modular-addition", checks=[Check(name="c", expected=1, measured=1,
                                                                                tolerance=0.0, passed=True)],
                              fields={"gamma_star": 0.1, "normalized_margin": 0.1, "seconds": 0.5})


def test_validate_result_takes_a_result_or_its_dict_and_rejects_non_finite_numbers():
    r = _result()
    out = schema.validate_result(r)
    assert out == json.loads(json.dumps(r.to_dict())) and out["verdict"] == "verified"
    assert schema.validate_result(r.to_dict()) == out
    d = r.to_dict()
    d["seconds"] = math.nan
    with pytest.raises(ValueError):  # JSON has no NaN: a result must not carry one outside the "real" strings
        schema.validate_result(d)
    d["seconds"] = -1.0
    with pytest.raises(jsonschema.ValidationError):
        schema.validate_result(d)
    tup = r.to_dict()
    tup["notes"] = ("a tuple", "is a JSON array")
    assert schema.validate_result(tup)["notes"] == ["a tuple", "is a JSON array"]
