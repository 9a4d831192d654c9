"""MiniMax M1: ``<tool_calls>`` then one JSON object per line then ``</tool_calls>`` (its chat template)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]
REASONING = {"reasoning": True}

CASES = [
    Case("single", '<tool_calls>\n{"name": "get_weather", "arguments": {"city": "Miami"}}\n</tool_calls>',
         [("get_weather", {"city": "Miami"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", '<tool_calls>\n{"name": "get_time", "arguments": {}}\n'
         '{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_calls>',
         [("get_time", {}), ("get_weather", {"city": "Oslo"})], None, tools=WEATHER, report={"calls": 2}),
    Case("zero-arguments", '<tool_calls>\n{"name": "get_time"}\n</tool_calls>', [("get_time", {})], None,
         tools=WEATHER),
    Case("nested-multiline", '<tool_calls>\n{\n  "name": "f",\n  "arguments": {"a": {"b": [1, 2]}}\n}\n</tool_calls>',
         [("f", {"a": {"b": [1, 2]}})], None),
    Case("reasoning-then-call", '<think>Use the tool.</think>\nOk. <tool_calls>\n{"name": "get_time", "arguments": {}}\n'
         "</tool_calls>", [("get_time", {})], "\nOk.", "Use the tool.", tools=WEATHER, options=REASONING),
    Case("section-inside-reasoning-is-reasoning",
         '<think>Maybe <tool_calls>\n{"name": "get_time"}\n</tool_calls> first.</think>Checking.<tool_calls>\n'
         '{"name": "get_weather", "arguments": {"city": "Lima"}}\n</tool_calls>',
         [("get_weather", {"city": "Lima"})], "Checking.",
         'Maybe <tool_calls>\n{"name": "get_time"}\n</tool_calls> first.', tools=WEATHER, options=REASONING),
    Case("content-after", 'Hello world<tool_calls>\n{"name": "get_time"}\n</tool_calls>done', [("get_time", {})],
         "Hello worlddone", tools=WEATHER),
    Case("close-missing-at-end", '<tool_calls>\n{"name": "get_time", "arguments": {}}', [("get_time", {})], None,
         tools=WEATHER, report={"recovered": 1}),
    Case("truncated", '<tool_calls>\n{"name": "get_weather", "arguments": {"ci', [],
         '<tool_calls>\n{"name": "get_weather", "arguments": {"ci', tools=WEATHER, report={"truncated": True}),
    Case("malformed-line-stays-content", '<tool_calls>\n{"name": "get_time", "arguments": {}}\n{not json at all}\n'
         '{"name": "get_weather", "arguments": {"city": "Quito"}}\n</tool_calls>',
         [("get_time", {}), ("get_weather", {"city": "Quito"})], "{not json at all}", tools=WEATHER,
         report={"repaired": 1}),
    Case("unknown-tool-line-stays-content", '<tool_calls>\n{"name": "get_time"}\n{"name": "nope", "arguments": {"a": 1}}\n'
         '{"name": "get_time"}\n</tool_calls>', [("get_time", {}), ("get_time", {})],
         '{"name": "nope", "arguments": {"a": 1}}', tools=WEATHER, report={"repaired": 1}),
    Case("nameless-line-before-close", '<tool_calls>\n{"name": "get_time"}\n{"arguments": {}}</tool_calls> ok',
         [("get_time", {})], '{"arguments": {}} ok', tools=WEATHER),
    Case("first-line-malformed-rejects-the-block", '<tool_calls>\n{oops}\n{"name": "get_time"}\n</tool_calls>', [],
         '<tool_calls>\n{oops}\n{"name": "get_time"}\n</tool_calls>', tools=WEATHER, report={"rejected": 1}),
    Case("broken-arguments-end-the-block", '<tool_calls>\n{"name": "get_time"}\n{"name": "get_weather", "arguments": {"city": x}}\n'
         '</tool_calls>', [("get_time", {})], '{"name": "get_weather", "arguments": {"city": x}}\n</tool_calls>',
         tools=WEATHER, report={"aborted": 1}),
    Case("cut-off-after-a-call", '<tool_calls>\n{"name": "get_time"}\n{"name": "get_wea', [("get_time", {})],
         '{"name": "get_wea', tools=WEATHER, report={"truncated": True}),
    Case("unknown-tool-stays-content", '<tool_calls>\n{"name": "nope", "arguments": {}}\n</tool_calls>', [],
         '<tool_calls>\n{"name": "nope", "arguments": {}}\n</tool_calls>', tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-marker", "Respond with <tool_calls></tool_calls> tags.", [],
         "Respond with <tool_calls></tool_calls> tags.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("minimax_m1", CASES)
