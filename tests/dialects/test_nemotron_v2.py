"""Nemotron Nano v2: ``<TOOLCALL>[...]</TOOLCALL>`` after optional ``<think>`` (its chat template)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]
IN_REASONING = {"reasoning": True, "in_reasoning": True}

CASES = [
    Case("single", '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>',
         [("get_weather", {"city": "Paris"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", '<TOOLCALL>[{"name": "get_time", "arguments": {}}, '
         '{"name": "get_weather", "arguments": {"city": "Oslo"}}]</TOOLCALL>',
         [("get_time", {}), ("get_weather", {"city": "Oslo"})], None, tools=WEATHER),
    Case("zero-arguments", '<TOOLCALL>[{"name": "get_time", "arguments": {}}]</TOOLCALL>', [("get_time", {})], None,
         tools=WEATHER),
    Case("nested-arguments", '<TOOLCALL>[{"name": "f", "arguments": {"q": {"r": ["]</TOOLCALL>", 2]}}}]</TOOLCALL>',
         [("f", {"q": {"r": ["]</TOOLCALL>", 2]}})], None),
    Case("reasoning-then-call", 'I should check.\n</think>\n\n<TOOLCALL>[{"name": "get_time", "arguments": {}}]</TOOLCALL>',
         [("get_time", {})], None, "I should check.\n", tools=WEATHER, options=IN_REASONING),
    Case("content-after", '<TOOLCALL>[{"name": "get_time", "arguments": {}}]</TOOLCALL>Done.', [("get_time", {})],
         "Done.", tools=WEATHER),
    Case("section-close-missing-at-end", '<TOOLCALL>[{"name": "get_time", "arguments": {}}]', [("get_time", {})],
         None, tools=WEATHER, report={"recovered": 1}),
    Case("truncated", '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Pa', [],
         '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Pa', tools=WEATHER, report={"truncated": True}),
    Case("malformed-stays-content", "<TOOLCALL>[oops]</TOOLCALL>", [], "<TOOLCALL>[oops]</TOOLCALL>",
         report={"rejected": 1}),
    Case("unknown-tool-stays-content", '<TOOLCALL>[{"name": "nope", "arguments": {}}]</TOOLCALL>', [],
         '<TOOLCALL>[{"name": "nope", "arguments": {}}]</TOOLCALL>', tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-marker", "Calls go in <TOOLCALL> tags.", [], "Calls go in <TOOLCALL> tags."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("nemotron_v2", CASES)
