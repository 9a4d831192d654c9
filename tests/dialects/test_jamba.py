"""Jamba 1.5: ``<tool_calls>[...]</tool_calls>`` (vLLM's Jamba parser; Jamba ships no template here)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]

CASES = [
    Case("single", ' <tool_calls>[\n    {"name": "get_weather", "arguments": {"city": "Dallas"}}\n]</tool_calls>',
         [("get_weather", {"city": "Dallas"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", '<tool_calls>[{"name": "get_time", "arguments": {}}, {"name": "get_time", "arguments": {}}]'
         "</tool_calls>", [("get_time", {}), ("get_time", {})], None, tools=WEATHER),
    Case("zero-arguments", '<tool_calls>[{"name": "get_time"}]</tool_calls>', [("get_time", {})], None, tools=WEATHER),
    Case("nested-arguments", '<tool_calls>[{"name": "f", "arguments": {"a": [[1], {"b": "c"}]}}]</tool_calls>',
         [("f", {"a": [[1], {"b": "c"}]})], None),
    Case("content-before", 'Sure! <tool_calls>[{"name": "get_time", "arguments": {}}]</tool_calls>',
         [("get_time", {})], "Sure!", tools=WEATHER),
    Case("truncated", '<tool_calls>[{"name": "get_weather", "arguments": {"city"', [],
         '<tool_calls>[{"name": "get_weather", "arguments": {"city"', tools=WEATHER, report={"truncated": True}),
    Case("empty-list-is-an-empty-section", "<tool_calls>[]</tool_calls>", [], "",
         report={"rejected": 0, "repaired": 1}),
    Case("empty-list-without-its-close-stays-content", "<tool_calls>[] and", [], "<tool_calls>[] and",
         report={"rejected": 1}),
    Case("malformed-stays-content", '<tool_calls>[{"name": "get_time", "arguments": {}}, oops]</tool_calls>',
         [("get_time", {})], ", oops]</tool_calls>", tools=WEATHER, report={"rejected": 1}),
    Case("unknown-tool-stays-content", '<tool_calls>[{"name": "nope", "arguments": {}}]</tool_calls>', [],
         '<tool_calls>[{"name": "nope", "arguments": {}}]</tool_calls>', tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-marker", "Jamba writes <tool_calls> first.", [], "Jamba writes <tool_calls> first."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("jamba", CASES)
