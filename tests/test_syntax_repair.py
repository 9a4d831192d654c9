"""Syntax repair, opt-in (``repair=True``): the common JSON slips read, each reported, streamed
exactly as whole; off by default, where the same text is not a call."""

from __future__ import annotations

import json

import pytest

from toolbridge import parse

from .harness import Case, check_case, split, tool

TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}, ok={"type": "boolean"})]

CASES = [
    ("hermes", "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Paris', 'days': 2,},}</tool_call>",
     {"city": "Paris", "days": 2}, ["single-quoted string", "trailing comma dropped"]),
    ("hermes", '<tool_call>{"name": "get_weather", "arguments": {city: "Paris", ok: True}}</tool_call>',
     {"city": "Paris", "ok": True}, ["unquoted key quoted", "Python's True read as true"]),
    ("hermes", '<tool_call>{"name": "get_weather", "arguments": {"city": "it\'s \\"x\\"", "days": None}}</tool_call>',
     {"city": 'it\'s "x"', "days": None}, ["Python's None read as null"]),
    ("hermes", '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 2',
     {"city": "Paris", "days": 2}, ["call not closed at end of output"]),
    ("mistral", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": [1, 2,],}', {"city": "Paris", "days": [1, 2]},
     ["trailing comma dropped"]),
    ("kimi_k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
     "{'city': 'Oslo', 'ok': False}<|tool_call_end|><|tool_calls_section_end|>", {"city": "Oslo", "ok": False},
     ["single-quoted string", "Python's False read as false"]),
    ("llama3_json", "{'name': 'get_weather', 'parameters': {'city': 'Rome',}}", {"city": "Rome"},
     ["single-quoted string", "trailing comma dropped"]),
]


@pytest.mark.parametrize("dialect, text, arguments, whats", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_slips_are_read_and_reported(dialect: str, text: str, arguments: dict, whats: list[str]) -> None:
    result = parse(text, dialect, tools=TOOLS, repair=True)
    calls = result.message.get("tool_calls") or []
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [arguments]
    assert set(whats) <= {r["what"] for r in result.report.repaired}
    case = Case("slip", text, calls=[("get_weather", arguments)], content=None, tools=TOOLS, options={"repair": True})
    for chunks in ([text], list(text), split(text, list(range(3, len(text), 5)))):
        check_case(case, dialect, chunks)  # the fragments join into exactly the repaired JSON
    off = parse(text, dialect, tools=TOOLS)
    assert not off.message.get("tool_calls"), "repair is opt-in"


def test_a_required_argument_still_decides_a_cut() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"]}}}]
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"'
    result = parse(text, "hermes", tools=tools, repair=True)
    assert not result.message.get("tool_calls") and result.finish_reason == "length"
    assert not parse(text + ', "days": 2', "hermes", tools=tools, repair=True, cut=True).message.get("tool_calls")
