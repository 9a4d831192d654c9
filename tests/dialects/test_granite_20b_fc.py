"""granite-20b-functioncalling: ``<function_call> {json}`` before each call (its chat template)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]

CASES = [
    Case("single", '<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}',
         [("get_weather", {"city": "Paris"})], None, tools=WEATHER, report={"calls": 1, "recovered": 0}),
    Case("parallel", '<function_call> {"name": "get_time", "arguments": {}}\n'
         '<function_call> {"name": "get_weather", "arguments": {"city": "Rome"}}',
         [("get_time", {}), ("get_weather", {"city": "Rome"})], None, tools=WEATHER, report={"calls": 2}),
    Case("zero-arguments", '<function_call> {"name": "get_time", "arguments": {}}', [("get_time", {})], None,
         tools=WEATHER),
    Case("nested-arguments", '<function_call> {"name": "f", "arguments": {"a": [{"b": true}], "c": {"d": "e"}}}',
         [("f", {"a": [{"b": True}], "c": {"d": "e"}})], None),
    Case("content-before-and-after", 'Checking.\n<function_call> {"name": "get_time", "arguments": {}}\nDone.',
         [("get_time", {})], "Checking.\nDone.", tools=WEATHER),
    Case("array-is-not-this-format", '<function_call> [{"name": "get_time", "arguments": {}}]', [],
         '<function_call> [{"name": "get_time", "arguments": {}}]', tools=WEATHER, report={"rejected": 1}),
    Case("bare-object-is-not-a-call", '{"name": "get_time", "arguments": {}}', [],
         '{"name": "get_time", "arguments": {}}', tools=WEATHER),
    Case("name-not-a-string", '<function_call> {"name": 123}', [], '<function_call> {"name": 123}',
         report={"calls": 0}),
    Case("truncated", '<function_call> {"name": "get_time", "arguments": {', [],
         '<function_call> {"name": "get_time", "arguments": {', tools=WEATHER, report={"truncated": True}),
    Case("unknown-tool-stays-content", '<function_call> {"name": "no_function", "arguments": {}}', [],
         '<function_call> {"name": "no_function", "arguments": {}}', tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-marker", "Use <function_call> to call.", [], "Use <function_call> to call."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("granite_20b_fc", CASES)
