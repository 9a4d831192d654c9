"""Granite 3.x: ``<|tool_call|>`` followed by a JSON array of calls (the Granite 3.3 chat template)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]
REASONING = {"reasoning": True}

CASES = [
    Case("single", '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
         [("get_weather", {"city": "Paris"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel-indented",
         '<|tool_call|>[\n    {\n        "name": "get_weather",\n        "arguments": {"city": "Oslo"}\n    },\n'
         '    {\n        "name": "get_time",\n        "arguments": {}\n    }\n]',
         [("get_weather", {"city": "Oslo"}), ("get_time", {})], None, tools=WEATHER, report={"calls": 2}),
    Case("zero-arguments", '<|tool_call|>[{"name": "get_time", "arguments": {}}]', [("get_time", {})], None,
         tools=WEATHER),
    Case("nested-arguments", '<|tool_call|>[{"name": "f", "arguments": {"a": {"b": [1, {"c": null}]}}}]',
         [("f", {"a": {"b": [1, {"c": None}]}})], None),
    Case("granite30-spelling", '<tool_call>[{"name": "get_time", "arguments": {}}]', [("get_time", {})], None,
         tools=WEATHER),
    Case("content-before", 'Sure.<|tool_call|>[{"name": "get_time", "arguments": {}}]', [("get_time", {})], "Sure.",
         tools=WEATHER),
    Case("reasoning-then-call", '<think>Need the time.</think><|tool_call|>[{"name": "get_time", "arguments": {}}]',
         [("get_time", {})], None, "Need the time.", tools=WEATHER, options=REASONING),
    Case("response-wrapper-after-reasoning", "<think>Greet back.</think><response>Hello!\nHow can I help?</response>",
         [], "Hello!\nHow can I help?", "Greet back.", options=REASONING),
    Case("response-wrapper-unclosed-at-end", "<think>Short.</think><response>Hi there", [], "Hi there", "Short.",
         options=REASONING),
    Case("response-wrapper-inline-without-extraction", "<think>Greet.</think><response>Hello!</response>", [],
         "<think>Greet.</think><response>Hello!</response>"),
    Case("response-tag-in-prose-inline-reasoning", "Answers go in <response> tags.", [],
         "Answers go in <response> tags."),
    Case("a-lone-object-stands-for-the-list", '<|tool_call|> {"name": "get_time", "arguments": {}}',
         [("get_time", {})], None, tools=WEATHER),
    Case("a-lone-object-for-an-unoffered-tool-stays-content", '<|tool_call|> {"name": "rm_rf", "arguments": {}}', [],
         '<|tool_call|> {"name": "rm_rf", "arguments": {}}', tools=WEATHER, report={"rejected": 1}),
    Case("truncated", '<|tool_call|>[{"name": "get_weather", "arguments": {"ci', [],
         '<|tool_call|>[{"name": "get_weather", "arguments": {"ci', tools=WEATHER, report={"truncated": True}),
    Case("array-close-missing-at-end", '<|tool_call|>[{"name": "get_time", "arguments": {}}', [("get_time", {})], None,
         tools=WEATHER, report={"recovered": 1}),
    Case("unknown-tool-stays-content", '<|tool_call|>[{"name": "nope", "arguments": {}}]', [],
         '<|tool_call|>[{"name": "nope", "arguments": {}}]', tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-marker", "Granite emits <|tool_call|> before its calls.", [],
         "Granite emits <|tool_call|> before its calls.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("granite", CASES)
