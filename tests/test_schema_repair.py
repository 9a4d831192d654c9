"""Schema repair: arguments typed by the tool's schema in every dialect, losslessly, each repair
reported with its path; the same streamed or whole; ``coerce=False`` turns it off."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbridge import parse
from toolbridge.dialects import dialect_names, get_dialect

from .harness import Case, run

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "metric": {"type": "boolean"},
        "ratio": {"type": "number"},
        "unit": {"enum": ["Celsius", "Fahrenheit"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "where": {"type": "object", "properties": {"lat": {"type": "number"}, "zip": {"type": "string"}}},
        "limit": {"type": "integer"},
        "note": {"type": "string"},
    },
    "required": ["city"],
}
TOOLS = [{"type": "function", "function": {"name": "forecast", "parameters": SCHEMA}}]


def hermes(arguments: str) -> str:
    return '<tool_call>{"name": "forecast", "arguments": ' + arguments + "}</tool_call>"


@pytest.mark.parametrize("written, typed, paths", [
    ('{"city": "Paris", "days": "2"}', {"city": "Paris", "days": 2}, ["days"]),
    ('{"city": "Paris", "metric": "true", "ratio": "0.5"}', {"city": "Paris", "metric": True, "ratio": 0.5},
     ["metric", "ratio"]),
    ('{"city": 75001}', {"city": "75001"}, ["city"]),
    ('{"city": "Paris", "unit": "celsius"}', {"city": "Paris", "unit": "Celsius"}, ["unit"]),
    ('{"city": "Paris", "tags": "sunny"}', {"city": "Paris", "tags": ["sunny"]}, ["tags"]),
    ('{"city": "Paris", "where": "{\\"lat\\": \\"48.8\\"}"}', {"city": "Paris", "where": {"lat": 48.8}}, ["where"]),
    ('{"city": "Paris", "where": {"lat": "48.8", "zip": 75001}}', {"city": "Paris", "where": {"lat": 48.8, "zip": "75001"}},
     ["where.lat", "where.zip"]),
    ('{"city": "Paris", "limit": ""}', {"city": "Paris"}, ["limit"]),
    ('{"city": "Paris", "days": 2, "note": "x"}', {"city": "Paris", "days": 2, "note": "x"}, []),
])
def test_json_dialects_type_by_schema(written: str, typed: dict[str, Any], paths: list[str]) -> None:
    for dialect in ("hermes", "auto"):
        result = parse(hermes(written), dialect, tools=TOOLS)
        call = result.message["tool_calls"][0]["function"]
        assert json.loads(call["arguments"]) == typed
        assert [r["path"] for r in result.report.repaired if "path" in r] == paths
        if not paths:
            assert call["arguments"] == written  # nothing to repair: the model's own text


@pytest.mark.parametrize("written", [
    '{"city": "Paris", "days": "two"}',  # no lossless fit: kept, and invalid
    '{"city": "Paris", "tags": "[1, 2"}',  # an array written as broken text is not guessed
    '{"city": "Paris", "unit": "kelvin"}',
])
def test_nothing_is_guessed(written: str) -> None:
    result = parse(hermes(written), "hermes", tools=TOOLS)
    assert json.loads(result.message["tool_calls"][0]["function"]["arguments"]) == json.loads(written)
    assert result.report.invalid and not result.report.repaired


def test_an_empty_required_value_stays_and_is_invalid() -> None:
    tools = [{"type": "function", "function": {"name": "forecast", "parameters": {**SCHEMA, "required": ["days"]}}}]
    text = "<tool_call>\n<function=forecast>\n<parameter=days>\n</parameter>\n</function>\n</tool_call>"
    result = parse(text, "qwen3_coder", tools=tools)
    assert json.loads(result.message["tool_calls"][0]["function"]["arguments"]) == {"days": ""}
    assert result.report.invalid


def test_an_empty_optional_xml_value_is_left_out_and_reported() -> None:
    text = ("<tool_call>\n<function=forecast>\n<parameter=city>\nParis\n</parameter>\n"
            "<parameter=limit>\n</parameter>\n</function>\n</tool_call>")
    result = parse(text, "qwen3_coder", tools=TOOLS)
    assert json.loads(result.message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert result.report.repaired == [{"index": 0, "path": "limit", "what": "empty value for a non-string type left out"}]


def test_coerce_false_keeps_the_text() -> None:
    result = parse(hermes('{"city": "Paris", "days": "2"}'), "hermes", tools=TOOLS, coerce=False)
    assert result.message["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris", "days": "2"}'
    assert result.report.invalid and not result.report.repaired


RENDERED = sorted(n for n in {get_dialect(x).name for x in dialect_names()} if get_dialect(n).render is not None)


@pytest.mark.parametrize("name", RENDERED)
def test_every_dialect_types_alike_streamed_or_whole(name: str) -> None:
    """Each renderer writes values of the wrong JSON type; every dialect returns them typed."""
    text = get_dialect(name).render([("forecast", {"city": 75001, "days": "3", "metric": "false"})])
    case = Case("typed", text, tools=TOOLS)
    whole = run(case, name, [text])[0]
    calls = whole.get("tool_calls") or []
    assert calls, f"{name}: no call in {text!r}"
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": "75001", "days": 3, "metric": False}
    for n in (1, 2, 5):
        assert run(case, name, [text[i : i + n] for i in range(0, len(text), n)])[0] == whole
