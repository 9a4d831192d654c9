"""The one pass that both types and checks a whole call's arguments for a tool whose schema only
states its members' types (``argtyper.typed_and_valid`` with ``Toolset.types_only``): where it
answers yes, the two passes it stands for (``already_typed`` and ``Toolset.validate``) answer so
too; where it does not know, the parser asks them, so a whole call reads the same either way."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbridge import freeform
from toolbridge._quickcheck import member_types
from toolbridge.parsing.argtyper import already_typed, typed_and_valid
from toolbridge.parsing.parser import parse, parse_message
from toolbridge.tools import Toolset

EDIT = {"type": "object", "properties": {"path": {"type": "string", "description": "where"},
                                         "line": {"type": "integer"}, "ratio": {"type": "number"},
                                         "force": {"type": "boolean"}},
        "required": ["path"]}
DRAFT7 = {**EDIT, "$schema": "http://json-schema.org/draft-07/schema#", "additionalProperties": False}
MIXED = {"type": "object", "properties": {"path": {"type": "string"}, "mode": {"type": "string", "enum": ["r", "w"]},
                                          "tags": {"type": "array", "items": {"type": "string"}}},
         "required": ["path"]}


@pytest.mark.parametrize(("schema", "types"), [
    (EDIT, ({"path": (str,), "line": (int,), "ratio": (int, float), "force": (bool,)}, ["path"])),
    (DRAFT7, ({"path": (str,), "line": (int,), "ratio": (int, float), "force": (bool,)}, ["path"])),
    ({"properties": {"a": {"type": ["string", "null"]}}}, ({"a": (str, type(None))}, [])),  # no root type
    (MIXED, ({"path": (str,)}, ["path"])),  # the enum and the array are not of a type alone
    ({"type": "object"}, ({}, [])),
    ({**EDIT, "$schema": "http://example.com/mine"}, None),  # a draft the quick check does not know
    ({**EDIT, "additionalProperties": {"type": "string"}}, None),
    ({**EDIT, "minProperties": 1}, None),
    ({**EDIT, "type": "array"}, None),
    ({**EDIT, "required": "path"}, None),
    ({**EDIT, "$defs": {}}, None),
    ([], None),
])
def test_member_types(schema: Any, types: Any) -> None:
    assert member_types(schema) == types


def _tools(schema: dict[str, Any]) -> Toolset:
    return Toolset([{"type": "function", "function": {"name": "f", "parameters": schema}}])


# (schema, arguments as written, whether the one pass answers yes)
CASES: list[tuple[dict[str, Any], str, bool]] = [
    (EDIT, '{"path": "a", "line": 3, "ratio": 0.5, "force": true}', True),
    (EDIT, '{"path": "a"}', True),
    (EDIT, '{}', False),  # the required member missing: invalid
    (EDIT, '{"line": 3}', False),
    (EDIT, '{"path": "a", "line": "3"}', False),  # to type
    (EDIT, '{"path": "a", "line": true}', False),  # a boolean is not an integer
    (EDIT, '{"path": "a", "line": 3.0}', False),
    (EDIT, '{"path": "a", "ratio": 1}', False),  # an integer for a number: valid, but not of the one type
    (EDIT, '{"path": 5}', False),  # to type (a number read as a string)
    (EDIT, '{"path": "a", "other": 1}', False),  # a member not declared
    (EDIT, '{"path":"a"}', False),  # not laid out as feed writes it
    (EDIT, '{\n  "path": "a"\n}', False),
    (EDIT, '{"path": "\\u00e9", "line": 3}', True),  # escapes are the text's: as written
    (DRAFT7, '{"path": "a", "force": false}', True),
    (DRAFT7, '{"path": "a", "x": 1}', False),  # closed: invalid
    (MIXED, '{"path": "a"}', True),
    (MIXED, '{"path": "a", "mode": "r"}', False),  # an enum: asked member by member
    (MIXED, '{"path": "a", "tags": ["x"]}', False),
]


@pytest.mark.parametrize(("schema", "text", "yes"), CASES)
def test_typed_and_valid(schema: dict[str, Any], text: str, yes: bool) -> None:
    tools = _tools(schema)
    value = json.loads(text)
    types = tools.types_only("f")
    assert types is not None
    assert typed_and_valid(types, text, value) is yes
    if yes:
        assert already_typed(schema, text, value, tools.settled_members("f"))
        assert tools.validate("f", value) == ()


@pytest.mark.parametrize(("schema"), [
    {"type": "object", "properties": {"mode": {"type": "string", "enum": ["r"]}}},  # no member of a type alone
    {"type": "object", "properties": {"n": {"type": "int"}}},  # a Python name: typed as integer, not settled
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}},  # no quick check
    {"type": "object", "properties": {"a": {"type": "string"}}, "$defs": {}},
    {"type": "object"},  # no properties: nothing to type
])
def test_types_only_none(schema: dict[str, Any]) -> None:
    assert _tools(schema).types_only("f") is None


def test_no_types_only_for_freeform() -> None:
    tools = Toolset([{"type": "function", "function": {"name": "f", "parameters": EDIT}}],
                    {"f": freeform.Format()})
    assert tools.types_only("f") is None


def _qwen(params: dict[str, str]) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"Done.\n<tool_call>\n<function=f>\n{body}</function>\n</tool_call>"


def _hermes(arguments: str) -> str:
    return f'Done.\n<tool_call>\n{{"name": "f", "arguments": {arguments}}}\n</tool_call>'


WHOLE = [(schema, "hermes", _hermes(text)) for schema, text, _ in CASES] + [
    (schema, "qwen3_coder", _qwen(params)) for schema in (EDIT, DRAFT7, MIXED) for params in (
        {"path": "a", "line": "3"}, {"path": "a", "line": "x"}, {"line": "3"}, {"path": "a", "ratio": "2"},
        {"path": "a", "force": "true"}, {"path": "a", "other": "1"}, {"path": "a", "mode": "R"},
        {"path": "a", "tags": '["x"]'}, {"path": "a", "line": " 7 "}, {"path": "a", "line": ""})]


@pytest.mark.parametrize(("schema", "dialect", "text"), WHOLE)
def test_whole_call_reads_the_same_without_the_one_pass(monkeypatch: pytest.MonkeyPatch, schema: dict[str, Any],
                                                       dialect: str, text: str) -> None:
    def read() -> tuple[Any, Any]:
        found = parse(text, dialect, _tools(schema))
        return parse_message(text, dialect, _tools(schema), call_id=lambda i: f"call_{i}"), (
            found.message.get("content"), [c["function"] for c in found.message.get("tool_calls", [])],
            found.report.invalid, found.report.repaired)

    fast = read()
    monkeypatch.setattr(Toolset, "types_only", lambda self, tool: None)
    assert read() == fast
