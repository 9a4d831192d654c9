"""The quick schema check the gateway validates arguments with: never more lenient than
jsonschema, and taken for the schemas tools declare."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from toolbridge._quickcheck import quick_check
from toolbridge.tools import Toolset

FLAT = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "where"},
        "line": {"type": "integer"},
        "ratio": {"type": "number"},
        "force": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "extra": {"type": ["object", "null"]},
    },
    "required": ["path"],
}

CASES: list[tuple[dict[str, Any], Any, bool | None]] = [
    # (schema, instance, quick answer: True valid, False ask jsonschema, None no quick check)
    (FLAT, {"path": "a"}, True),
    (FLAT, {"path": "a", "line": 3, "ratio": 0.5, "force": False, "tags": ["x"], "unit": "c",
            "extra": None}, True),
    (FLAT, {"path": "a", "other": 1}, True),
    (FLAT, {"line": 3}, False),  # required key missing
    (FLAT, {"path": 1}, False),
    (FLAT, {"path": "a", "line": True}, False),  # a boolean is not an integer
    (FLAT, {"path": "a", "line": 1.0}, False),  # left to jsonschema (drafts differ)
    (FLAT, {"path": "a", "unit": "k"}, False),
    (FLAT, {"path": "a", "tags": ["x", 2]}, False),
    (FLAT, ["path"], False),
    ({}, {"anything": [1]}, True),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": False}, {"a": 1}, True),
    ({"type": "object", "properties": {"a": {}}, "additionalProperties": False}, {"b": 1}, False),
    ({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, {}, True),
    ({"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}}, {"a": "x"}, False),
    ({"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}}, {"a": "xy"}, True),
    ({"properties": {"d": {"type": "integer", "minimum": 1, "maximum": 14}}}, {"d": 3}, True),
    ({"properties": {"d": {"type": "integer", "minimum": 1, "maximum": 14}}}, {"d": 15}, False),
    ({"properties": {"d": {"minimum": 1}}}, {"d": True}, True),  # a boolean is not a number
    ({"properties": {"d": {"exclusiveMaximum": 2.5}}}, {"d": 2.5}, False),
    ({"properties": {"t": {"type": "array", "maxItems": 1}}}, {"t": [1, 2]}, False),
    ({"properties": {"d": {"minimum": "1"}}}, {"d": 3}, None),  # not a number: jsonschema's call
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}}, {"a": "x"}, None),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}, {"a": 1}, None),
    ({"type": "object", "properties": {"a": {"type": "strng"}}}, {"a": 1}, None),
    ({"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"}, {}, None),
    ({"type": "object", "properties": {"a": {"enum": [1, 2]}}}, {"a": 1}, None),
]


@pytest.mark.parametrize("schema, instance, expected", CASES)
def test_quick_check(schema: dict[str, Any], instance: Any, expected: bool | None) -> None:
    check = quick_check(schema)
    assert (None if check is None else check(instance)) is expected
    if expected:
        assert not list(jsonschema.Draft202012Validator(schema).iter_errors(instance))


def test_toolset_words_the_errors_the_quick_check_leaves() -> None:
    tools = Toolset([{"type": "function", "function": {"name": "f", "parameters": FLAT}}])
    assert tools.validate("f", {"path": "a", "line": 2}) == ()
    assert tools.validate("f", {"line": 2}) == ("(root): 'path' is a required property",)
    assert tools.validate("f", {"path": "a", "line": 1.0}) == ()  # integral number: jsonschema's call


TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from("abc"), inner, max_size=3), max_leaves=8)


def _schemas(depth: int) -> st.SearchStrategy[dict[str, Any]]:
    keys: dict[str, st.SearchStrategy[Any]] = {
        "type": TYPES | st.lists(TYPES, max_size=3),
        "required": st.lists(st.sampled_from("abc"), max_size=2),
        "enum": st.lists(st.text(max_size=2), max_size=3),
        "additionalProperties": st.booleans(),
        "description": st.text(max_size=3),
        "minLength": st.integers(0, 2),
        "maxLength": st.integers(0, 3),
        "minItems": st.integers(0, 2),
        "maxItems": st.integers(0, 2),
        "minimum": st.integers(-2, 2) | st.floats(-2, 2),
        "maximum": st.integers(-2, 2) | st.floats(-2, 2),
        "exclusiveMinimum": st.integers(-2, 2),
        "exclusiveMaximum": st.floats(-2, 2),
    }
    if depth:
        keys["properties"] = st.dictionaries(st.sampled_from("abc"), _schemas(depth - 1), max_size=3)
        keys["items"] = _schemas(depth - 1)
    return st.fixed_dictionaries({}, optional=keys)


@settings(max_examples=examples(600), deadline=None)
@given(_schemas(2), VALUES)
def test_quick_check_is_never_more_lenient_than_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    check = quick_check(schema)
    if check is not None and check(instance):
        assert not list(jsonschema.Draft202012Validator(schema).iter_errors(instance))
