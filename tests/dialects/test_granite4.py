"""Granite 4.x: one JSON object per ``<tool_call>`` block (the Granite 4.0 / 4.1 chat templates)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]

CASES = [
    Case("single", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
         [("get_weather", {"city": "Paris"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>\n'
         '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Kyiv"}}\n</tool_call>',
         [("get_time", {}), ("get_weather", {"city": "Kyiv"})], None, tools=WEATHER),
    Case("zero-arguments", '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>', [("get_time", {})],
         None, tools=WEATHER),
    Case("nested-arguments", '<tool_call>{"name": "f", "arguments": {"x": [{"y": [1, 2]}], "z": {}}}</tool_call>',
         [("f", {"x": [{"y": [1, 2]}], "z": {}})], None),
    Case("arguments-as-string",
         '<tool_call> {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"} </tool_call>',
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER, report={"repaired": 1}),
    Case("content-around", 'Here: \n<tool_call>{"name": "get_time", "arguments": {}}</tool_call> Done.',
         [("get_time", {})], "Here: \n Done.", tools=WEATHER),
    Case("close-missing-at-end", '<tool_call>\n{"name": "get_time", "arguments": {}}', [("get_time", {})], None,
         tools=WEATHER, report={"recovered": 1}),
    Case("truncated", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Os', [],
         '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Os', tools=WEATHER, report={"truncated": True}),
    Case("malformed-stays-content", "<tool_call>\nnot json\n</tool_call>", [], "<tool_call>\nnot json\n</tool_call>",
         report={"rejected": 1}),
    Case("unknown-tool-stays-content", '<tool_call>{"name": "nope", "arguments": {}}</tool_call>', [],
         '<tool_call>{"name": "nope", "arguments": {}}</tool_call>', tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-marker", "Wrap calls in <tool_call> tags.", [], "Wrap calls in <tool_call> tags."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("granite4", CASES)
