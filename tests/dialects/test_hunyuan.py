"""Hunyuan: ``<tool_calls>`` + JSON array (A13B chat template) or ``NAME<tool_sep>`` key/value pairs."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("get_time")]
REASONING = {"reasoning": True}

CASES = [
    Case("single-array", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>',
         [("get_weather", {"city": "Boston"})], None, tools=TOOLS, report={"calls": 1}),
    Case("parallel-array", '<tool_calls>[{"name": "get_time", "arguments": {}}, '
         '{"name": "get_weather", "arguments": {"city": "Xian", "days": 2}}]</tool_calls>',
         [("get_time", {}), ("get_weather", {"city": "Xian", "days": 2})], None, tools=TOOLS),
    Case("single-pairs", "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key>"
         "<arg_value>Tokyo</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call></tool_calls>",
         [("get_weather", {"city": "Tokyo", "days": 3})], None, tools=TOOLS),
    Case("zero-arguments-pairs", "<tool_calls>\n<tool_call>get_time<tool_sep>\n</tool_call>\n</tool_calls>",
         [("get_time", {})], None, tools=TOOLS),
    Case("nested-arguments", '<tool_calls>[{"name": "f", "arguments": {"a": {"b": [true, null]}}}]</tool_calls>',
         [("f", {"a": {"b": [True, None]}})], None),
    Case("reasoning-then-answer", '<think>Look it up.</think>\n<answer><tool_calls>[{"name": "get_time", '
         '"arguments": {}}]</tool_calls></answer>', [("get_time", {})], "\n<answer></answer>", "Look it up.",
         tools=TOOLS, options=REASONING),
    Case("content-before", 'I will call the tool now. <tool_calls>[{"name": "get_time", "arguments": {}}]</tool_calls>',
         [("get_time", {})], "I will call the tool now.", tools=TOOLS),
    Case("truncated", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Bo', [],
         '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Bo', tools=TOOLS, report={"truncated": True}),
    Case("malformed-stays-content", "<tool_calls>oops</tool_calls>", [], "<tool_calls>oops</tool_calls>",
         report={"rejected": 1}),
    Case("unknown-tool-stays-content", '<tool_calls>[{"name": "nope", "arguments": {}}]</tool_calls>', [],
         '<tool_calls>[{"name": "nope", "arguments": {}}]</tool_calls>', tools=TOOLS, report={"rejected": 1}),
    Case("unknown-call-between-known-pairs",
         "<tool_calls><tool_call>get_time<tool_sep></tool_call><tool_call>nope<tool_sep><arg_key>a</arg_key>"
         "<arg_value>1</arg_value></tool_call><tool_call>get_weather<tool_sep><arg_key>city</arg_key>"
         "<arg_value>Oslo</arg_value></tool_call></tool_calls>",
         [("get_time", {}), ("get_weather", {"city": "Oslo"})],
         "<tool_call>nope<tool_sep><arg_key>a</arg_key><arg_value>1</arg_value></tool_call>", tools=TOOLS,
         report={"calls": 2, "rejected": 1}),
    Case("prose-mentions-marker", "Format calls as <tool_calls>[...]</tool_calls>.", [],
         "Format calls as <tool_calls>[...]</tool_calls>.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("hunyuan", CASES)
