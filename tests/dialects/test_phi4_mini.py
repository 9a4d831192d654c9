"""Phi-4-mini: ``functools[...]`` JSON call lists with no closing marker."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("get_time", tz={"type": "string"}), tool("refresh"),
         tool("index", doc={"type": "object"})]

CASES = [
    Case("single", 'functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
         [("get_weather", {"city": "Tokyo"})], None, tools=TOOLS, report={"repaired": 0}),
    Case("parallel-multiline", 'functools[\n  {"name": "get_weather", "arguments": {"city": "Osaka"}},\n'
         '  {"name": "get_time", "arguments": {"tz": "Asia/Tokyo"}}\n]',
         [("get_weather", {"city": "Osaka"}), ("get_time", {"tz": "Asia/Tokyo"})], None, tools=TOOLS,
         report={"calls": 2}),
    Case("zero-arguments", 'functools[{"name": "refresh", "arguments": {}}]', [("refresh", {})], None, tools=TOOLS),
    Case("nested", 'functools[{"name": "index", "arguments": {"doc": {"path": "C:\\\\x", "tags": [["a"], []]}}}]',
         [("index", {"doc": {"path": "C:\\x", "tags": [["a"], []]}})], None, tools=TOOLS),
    Case("content-around", 'Let me check.\nfunctools[{"name": "refresh", "arguments": {}}]\nAnything else?',
         [("refresh", {})], "Let me check.\n\nAnything else?", tools=TOOLS),
    Case("empty-list-is-an-empty-section", "functools[] This is just text", [], " This is just text",
         report={"calls": 0, "rejected": 0, "repaired": 1}),
    Case("list-of-prose-is-content", "functools[ This is just text ]", [], "functools[ This is just text ]",
         report={"calls": 0}),
    Case("malformed-element", 'functools[{"name": "refresh", "arguments": {]}]', [],
         'functools[{"name": "refresh", "arguments": {]}]', tools=TOOLS, report={"calls": 0}),
    Case("truncated", 'functools[{"name": "get_weather", "arguments": {"city": "Na', [],
         'functools[{"name": "get_weather", "arguments": {"city": "Na', tools=TOOLS, report={"truncated": True}),
    Case("complete-call-missing-bracket", 'functools[{"name": "refresh", "arguments": {}}',
         [("refresh", {})], None, tools=TOOLS, report={"recovered": 1}),
    Case("unknown-tool", 'functools[{"name": "shutdown", "arguments": {}}]', [],
         'functools[{"name": "shutdown", "arguments": {}}]', tools=TOOLS, report={"rejected": 1}),
    Case("prose-mentions-word", "The functools module has partial.", [], "The functools module has partial."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("phi4_mini", CASES)
