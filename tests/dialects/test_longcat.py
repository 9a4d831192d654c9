"""LongCat-Flash: ``<longcat_tool_call>{json}</longcat_tool_call>``, or GLM-style pairs inside the same tags."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("multiply", a={"type": "integer"}, b={"type": "integer"})]
REASONING = {"reasoning": True}

CASES = [
    Case("single", '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>',
         [("get_weather", {"city": "Tokyo"})], None, tools=TOOLS, report={"calls": 1}),
    Case("parallel", '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "A"}}</longcat_tool_call>\n'
         '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "B"}}</longcat_tool_call>',
         [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})], None, tools=TOOLS),
    Case("zero-arguments", '<longcat_tool_call>{"name": "now", "arguments": {}}</longcat_tool_call>', [("now", {})], None),
    Case("nested-arguments", '<longcat_tool_call>\n{"name": "f", "arguments": {"a": {"b": [1, "x"]}}}\n</longcat_tool_call>',
         [("f", {"a": {"b": [1, "x"]}})], None),
    Case("key-value-form", "<longcat_tool_call>multiply<longcat_arg_key>a</longcat_arg_key>\n<longcat_arg_value>12"
         "</longcat_arg_value>\n<longcat_arg_key>b</longcat_arg_key>\n<longcat_arg_value>3</longcat_arg_value>\n"
         "</longcat_tool_call>", [("multiply", {"a": 12, "b": 3})], None, tools=TOOLS),
    Case("reasoning-then-call", '<think>Weather.</think><longcat_tool_call>{"name": "get_weather", "arguments": '
         '{"city": "X"}}</longcat_tool_call>', [("get_weather", {"city": "X"})], None, "Weather.", tools=TOOLS,
         options=REASONING),
    Case("content-around", 'Let me check.\n<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Y"}}'
         "</longcat_tool_call>\nHere is the result.", [("get_weather", {"city": "Y"})],
         "Let me check.\n\nHere is the result.", tools=TOOLS),
    Case("truncated", '<longcat_tool_call>{"name": "get_weather", "arguments": {', [],
         '<longcat_tool_call>{"name": "get_weather", "arguments": {', tools=TOOLS, report={"truncated": True}),
    Case("malformed-stays-content", "Some text with <longcat_tool_call>invalid json", [],
         "Some text with <longcat_tool_call>invalid json", report={"calls": 0}),
    Case("unknown-tool-stays-content", '<longcat_tool_call>{"name": "nope", "arguments": {}}</longcat_tool_call>', [],
         '<longcat_tool_call>{"name": "nope", "arguments": {}}</longcat_tool_call>', tools=TOOLS, report={"rejected": 1}),
    Case("arguments-not-an-object", '<longcat_tool_call>{"name": "f", "arguments": "not a dict"}</longcat_tool_call>', [],
         '<longcat_tool_call>{"name": "f", "arguments": "not a dict"}</longcat_tool_call>', report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("longcat", CASES)
