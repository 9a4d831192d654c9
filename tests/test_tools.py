"""The tools layer: name resolution tiers, schema coercion, deref, validation, bad tools; and the
StreamParser options that use it (``validate``, ``reject_invalid``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.harness import check_events, seq_ids, tool
from toolbridge import (
    CallRejected,
    ConfigError,
    Invalid,
    MessageBuilder,
    StreamParser,
    Text,
    ToolCallBegin,
    Toolset,
    parse,
)
from toolbridge.tools import coerce, deref, is_plain_string

# ---------------------------------------------------------------- name resolution

RESOLVE = [
    # offered names, written name, resolved name (None: not a call), tier
    (["get_weather"], "get_weather", "get_weather", "exact"),
    (["a.b", "a__b"], "a.b", "a.b", "exact"),
    (["get_weather"], "functions.get_weather", "get_weather", "prefix"),
    (["get_weather"], "function.get_weather", "get_weather", "prefix"),
    (["search"], "tools.search", "search", "prefix"),
    (["os__fs__read"], "os.fs.read", "os__fs__read", "separators"),
    (["os.fs.read"], "os__fs__read", "os.fs.read", "separators"),
    (["os__fs__read"], "os/fs:read", "os__fs__read", "separators"),
    (["os__fs__read"], "functions.os.fs.read", "os__fs__read", "separators"),
    (["functions.lookup"], "lookup", "functions.lookup", "separators"),
    (["get_weather"], "Get-Weather", "get_weather", "loose"),
    (["get_weather"], "GET_WEATHER", "get_weather", "loose"),
    (["get-weather"], "get__weather", "get-weather", "loose"),
    (["get_weather", "Get_Weather"], "get-weather", None, "ambiguous"),
    (["a__b", "a/b"], "a.b", None, "ambiguous"),
    (["get_weather"], "get_time", None, "unknown"),
    (["get_weather"], "functions.", None, "unknown"),
    (["get_weather"], "getweather", None, "unknown"),
    ([], "anything", None, "unknown"),
]


@pytest.mark.parametrize(("offered", "written", "name", "how"), RESOLVE)
def test_resolve(offered: list[str], written: str, name: str | None, how: str) -> None:
    found = Toolset([tool(n) for n in offered]).resolve(written)
    assert (found.name, found.how) == (name, how)


# ---------------------------------------------------------------- coercion

ROOT: dict[str, Any] = {
    "$defs": {
        "Zip": {"type": "string"},
        "Count": {"$ref": "#/$defs/Int"},
        "Int": {"type": "integer"},
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "label": {"type": "string"}},
        },
    },
    "definitions": {"Flag": {"type": "boolean"}},
}

COERCE: list[tuple[str, dict[str, Any] | None, Any]] = [
    # raw text, parameter schema (refs resolve against ROOT), typed value
    ("02134", {"type": "string"}, "02134"),
    ("  spaced \n", {"type": "string"}, "  spaced \n"),
    ("true", {"type": "string"}, "true"),
    ("[1, 2]", {"type": "string"}, "[1, 2]"),
    ("42", {"type": "integer"}, 42),
    (" -7\n", {"type": "integer"}, -7),
    ("4.0", {"type": "integer"}, 4),
    ("4.5", {"type": "integer"}, "4.5"),
    ("02134", {"type": "integer"}, "02134"),
    ("2.5", {"type": "number"}, 2.5),
    ("3", {"type": "number"}, 3),
    ("1e3", {"type": "number"}, 1000.0),
    ("true", {"type": "boolean"}, True),
    ("False", {"type": "boolean"}, False),
    ("yes", {"type": "boolean"}, "yes"),
    ("null", {"type": "null"}, None),
    ("None", {"type": "null"}, None),
    ("[1, 2, 3]", {"type": "array"}, [1, 2, 3]),
    ("(1, 2)", {"type": "array"}, [1, 2]),
    ('[{\\"id\\": 1}]', {"type": "array"}, [{"id": 1}]),
    ('["1.5", 2]', {"type": "array", "items": {"type": "number"}}, [1.5, 2]),
    ('{"a": {"b": [true]}}', {"type": "object"}, {"a": {"b": [True]}}),
    ("{'a': True, 'b': None}", {"type": "object"}, {"a": True, "b": None}),
    (
        '{"n": "5", "s": "5"}',
        {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}},
        {"n": 5, "s": "5"},
    ),
    ("null", {"type": ["integer", "null"]}, None),
    ("3", {"type": ["integer", "null"]}, 3),
    ("5", {"type": ["string", "integer"]}, 5),
    ("five", {"type": ["string", "integer"]}, "five"),
    ("false", {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, False),
    ("8", {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, 8),
    ("7", {"oneOf": [{"$ref": "#/$defs/Int"}, {"type": "null"}]}, 7),
    ("hello", {"oneOf": [{"type": "integer"}, {"type": "string"}]}, "hello"),
    ("5", {"anyOf": [{"type": "string"}, {}]}, 5),
    ("red", {"enum": ["red", "green"]}, "red"),
    ("1", {"enum": ["1", "2"]}, "1"),
    ("2", {"enum": [1, 2, 3]}, 2),
    ("3", {"const": 3}, 3),
    ("02134", {"$ref": "#/$defs/Zip"}, "02134"),
    ("12", {"$ref": "#/$defs/Count"}, 12),
    ("true", {"$ref": "#/definitions/Flag"}, True),
    ('{"x": "1.5", "label": "2"}', {"$ref": "#/$defs/Point"}, {"x": 1.5, "label": "2"}),
    ('[{"x": "0"}]', {"type": "array", "items": {"$ref": "#/$defs/Point"}}, [{"x": 0}]),
    ("2.5", {"type": "float"}, 2.5),
    ("5", {"type": "str"}, "5"),
    ("5", {"type": "int"}, 5),
    ("true", {"type": "bool"}, True),
    ("[1]", {"type": "list"}, [1]),
    # no schema (no tools, or an undeclared parameter): JSON-looking values are typed
    ("5", None, 5),
    ("1.5", None, 1.5),
    ("true", None, True),
    ("null", None, None),
    ('{"a": [1]}', None, {"a": [1]}),
    ("hello world", None, "hello world"),
    ("02134", None, "02134"),
    ("[1, 2", None, "[1, 2"),
    ("", None, ""),
    ("5", {}, 5),
]


@pytest.mark.parametrize(("raw", "schema", "want"), COERCE)
def test_coerce(raw: str, schema: dict[str, Any] | None, want: Any) -> None:
    got = coerce(raw, schema, ROOT)
    assert got == want and type(got) is type(want), f"{got!r}"


IS_PLAIN_STRING = [
    ({"type": "string"}, True),
    ({"type": "str"}, True),
    ({"type": "string", "maxLength": 3}, True),
    ({"enum": ["a", "b"]}, True),
    ({"const": "x"}, True),
    ({"anyOf": [{"type": "string"}, {"type": "string", "format": "uri"}]}, True),
    ({"type": ["string", "null"]}, False),
    ({"enum": ["a", 1]}, False),
    ({"anyOf": [{"type": "string"}, {}]}, False),
    ({"type": "integer"}, False),
    ({}, False),
    (None, False),
]


@pytest.mark.parametrize(("schema", "want"), IS_PLAIN_STRING)
def test_is_plain_string(schema: dict[str, Any] | None, want: bool) -> None:
    assert is_plain_string(schema) is want


DEREF_ROOT: dict[str, Any] = {
    "$defs": {
        "A": {"$ref": "#/$defs/B"},
        "B": {"type": "integer"},
        "Loop": {"$ref": "#/$defs/Loop"},
    },
    "definitions": {"a/b": {"type": "string"}, "N": {"type": "number"}},
}
DEREF = [
    ({"type": "boolean"}, {"type": "boolean"}),
    ({"$ref": "#/$defs/B"}, {"type": "integer"}),
    ({"$ref": "#/$defs/A"}, {"type": "integer"}),
    ({"$ref": "#/definitions/N"}, {"type": "number"}),
    ({"$ref": "#/definitions/a~1b"}, {"type": "string"}),
    ({"$ref": "#/$defs/Missing"}, {}),
    ({"$ref": "https://example.com/schema.json#/x"}, {}),
    ("not a schema", {}),
]


@pytest.mark.parametrize(("schema", "want"), DEREF)
def test_deref(schema: Any, want: dict[str, Any]) -> None:
    assert deref(schema, DEREF_ROOT) == want


def test_deref_of_a_cycle_terminates() -> None:
    assert isinstance(deref({"$ref": "#/$defs/Loop"}, DEREF_ROOT), dict)


# ---------------------------------------------------------------- validation

SCHEMA_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "book",
            "parameters": {
                "type": "object",
                "properties": {
                    "seats": {"type": "integer", "minimum": 1},
                    "who": {"type": "string"},
                    "price": {"type": "float"},
                    "note": {"type": "str"},
                },
                "required": ["seats"],
            },
        },
    },
    {
        "name": "flat",
        "parameters": {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/X"}},
            "$defs": {"X": {"type": "boolean"}},
        },
    },
    {"type": "function", "function": {"name": "broken_schema", "parameters": {"type": 5}}},
    {"type": "function", "function": {"name": "no_params"}},
]
VALIDATE = [
    ("book", {"seats": 2, "who": "Ann"}, 0),
    ("book", {"seats": 2, "price": 9.5, "note": "aisle"}, 0),
    ("book", {"seats": "2"}, 1),
    ("book", {"seats": 0}, 1),
    ("book", {"who": "Ann"}, 1),
    ("book", {"seats": 1, "price": "cheap"}, 1),
    ("book", {"seats": 1, "note": 5}, 1),
    ("book", {"seats": "x", "who": 3}, 2),
    ("flat", {"x": True}, 0),
    ("flat", {"x": "yes"}, 1),
    ("broken_schema", {"anything": 1}, 0),
    ("no_params", {"anything": 1}, 0),
]


@pytest.mark.parametrize(("name", "arguments", "errors"), VALIDATE)
def test_validate(name: str, arguments: dict[str, Any], errors: int) -> None:
    got = Toolset(SCHEMA_TOOLS).validate(name, arguments)
    assert isinstance(got, tuple) and len(got) == errors, got
    assert all(isinstance(e, str) and e for e in got)


def test_param_schema_follows_ref_and_misses_undeclared() -> None:
    tools = Toolset(SCHEMA_TOOLS)
    assert tools.param_schema("flat", "x") == {"type": "boolean"}
    assert tools.param_schema("flat", "y") is None
    assert tools.param_schema("nope", "x") is None


BAD_TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "f"}},
    "get_weather",
    None,
    [1],
    [{"type": "function"}],
    [{"type": "function", "function": {"name": ""}}],
    [{"type": "function", "function": {"name": 7}}],
    [{"type": "function", "function": "f"}],
    [{"type": "function", "function": {"name": "f", "parameters": ["a"]}}],
    [{"type": "function", "function": {"name": "f", "parameters": "object"}}],
]


@pytest.mark.parametrize("tools", BAD_TOOLS, ids=range(len(BAD_TOOLS)))
def test_invalid_tools_raise_config_error(tools: Any) -> None:
    with pytest.raises(ConfigError):
        Toolset(tools)
    if tools is not None:
        with pytest.raises(ConfigError):
            StreamParser("hermes", tools)
        with pytest.raises(ConfigError):
            parse("hi", "qwen3_coder", tools)


def test_unknown_dialect_and_feed_after_close_raise_config_error() -> None:
    with pytest.raises(ConfigError):
        StreamParser("no_such_dialect")
    parser = StreamParser("hermes")
    parser.close()
    with pytest.raises(ConfigError):
        parser.feed("more")


# ---------------------------------------------------------------- validate / reject_invalid

BOOK = [tool("book", seats={"type": "integer"}, who={"type": "string"})]
VALID_1 = '<tool_call>\n{"name": "book", "arguments": {"seats": 1}}\n</tool_call>'
INVALID = '<tool_call>\n{"name": "book", "arguments": {"seats": "many"}}\n</tool_call>'
VALID_2 = '<tool_call>\n{"name": "book", "arguments": {"seats": 2, "who": "Bo"}}\n</tool_call>'
XML_INVALID = (
    "<tool_call>\n<function=book>\n<parameter=who>\nAnn\n</parameter>\n<parameter=seats>\nmany\n"
    "</parameter>\n</function>\n</tool_call>"
)
XML_VALID = (
    "<tool_call>\n<function=book>\n<parameter=who>\nBo\n</parameter>\n<parameter=seats>\n3\n"
    "</parameter>\n</function>\n</tool_call>"
)


def feed(
    dialect: str, text: str, chunks: list[str] | None = None, **options: Any
) -> tuple[Any, Any, list[Any]]:
    parser = StreamParser(dialect, BOOK, call_id=seq_ids, **options)
    events: list[Any] = []
    for chunk in chunks if chunks is not None else [text]:
        events += parser.feed(chunk)
    events += parser.close()
    builder = MessageBuilder(dialect)
    builder.add(events)
    check_events(events, builder.message)
    return builder.message, builder.report, events


def calls(message: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls", [])
    ]


@pytest.mark.parametrize(
    ("dialect", "text", "bad"),
    [
        ("hermes", INVALID, {"seats": "many"}),
        ("qwen3_coder", XML_INVALID, {"who": "Ann", "seats": "many"}),
    ],
)
def test_validate_reports_invalid_and_keeps_the_call(
    dialect: str, text: str, bad: dict[str, Any]
) -> None:
    message, report, events = feed(dialect, text)
    assert calls(message) == [("call_0", "book", bad)]
    invalid = [ev for ev in events if isinstance(ev, Invalid)]
    assert len(invalid) == 1 and invalid[0].index == 0 and invalid[0].errors
    assert [entry["index"] for entry in report.invalid] == [0]
    message, report, events = feed(dialect, text, validate=False)
    assert calls(message) == [("call_0", "book", bad)]
    assert not report.invalid and not any(isinstance(ev, Invalid) for ev in events)


@pytest.mark.parametrize(
    ("dialect", "text", "invalid", "want"),
    [
        (
            "hermes",
            VALID_1 + "\n" + INVALID + "\n" + VALID_2,
            INVALID,
            [("call_0", "book", {"seats": 1}), ("call_1", "book", {"seats": 2, "who": "Bo"})],
        ),
        (
            "hermes",
            INVALID + "\n" + VALID_2,
            INVALID,
            [("call_0", "book", {"seats": 2, "who": "Bo"})],
        ),
        (
            "qwen3_coder",
            XML_INVALID + "\n" + XML_VALID,
            XML_INVALID,
            [("call_0", "book", {"who": "Bo", "seats": 3})],
        ),
    ],
)
@pytest.mark.parametrize("per_character", [False, True], ids=["whole", "per-character"])
def test_reject_invalid_turns_the_call_into_content(
    dialect: str, text: str, invalid: str, want: list[Any], per_character: bool
) -> None:
    message, report, events = feed(
        dialect, text, list(text) if per_character else None, reject_invalid=True
    )
    assert calls(message) == want
    assert invalid in message["content"]
    assert [r["text"] for r in report.rejected] == [invalid]
    assert report.calls == len(want) and not report.truncated
    rejected = next(i for i, ev in enumerate(events) if isinstance(ev, CallRejected))
    begun = [ev.index for ev in events if isinstance(ev, ToolCallBegin)]
    assert begun == list(range(len(want))), "the rejected call must not have been begun"
    assert "".join(ev.text for ev in events[rejected:] if isinstance(ev, Text)).startswith(invalid)
