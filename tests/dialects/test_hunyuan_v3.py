"""Hunyuan v3: ``<tool_calls>`` holding ``<tool_call>NAME<tool_sep>`` + key/value pairs."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("get_current_date"),
         tool("plan", steps={"type": "array"})]


def call(name: str, *pairs: tuple[str, str]) -> str:
    body = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in pairs)
    return f"<tool_call>{name}<tool_sep>\n{body}</tool_call>"


def calls(*blocks: str) -> str:
    return "<tool_calls>\n" + "\n".join(blocks) + "\n</tool_calls>"


CASES = [
    Case("single", calls(call("get_weather", ("city", "Shenzhen"), ("days", "3"))),
         [("get_weather", {"city": "Shenzhen", "days": 3})], None, tools=TOOLS),
    Case("parallel-in-one-wrapper", calls(call("get_weather", ("city", "Xiamen")), call("get_current_date")),
         [("get_weather", {"city": "Xiamen"}), ("get_current_date", {})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments-inline", "<tool_calls><tool_call>get_current_date<tool_sep></tool_call></tool_calls>",
         [("get_current_date", {})], None, tools=TOOLS),
    Case("nested-array-value", calls(call("plan", ("steps", '[{"do": "pack"}, {"do": ["fly", "rest"]}]'))),
         [("plan", {"steps": [{"do": "pack"}, {"do": ["fly", "rest"]}]})], None, tools=TOOLS),
    Case("content-before-and-after", "Checking." + calls(call("get_current_date")) + "\nDone.",
         [("get_current_date", {})], "Checking.\nDone.", tools=TOOLS),
    Case("reasoning-before-call", "<think>Date first.</think>" + calls(call("get_current_date")),
         [("get_current_date", {})], None, "Date first.", tools=TOOLS, options={"reasoning": True}),
    Case("bare-tool-call-without-wrapper", call("get_weather", ("city", "Hefei")),
         [("get_weather", {"city": "Hefei"})], None, tools=TOOLS),
    Case("bare-calls-then-wrapper-close",
         call("get_current_date") + "\n" + call("get_weather", ("city", "Hefei")) + "\n</tool_calls>\nDone.",
         [("get_current_date", {}), ("get_weather", {"city": "Hefei"})], "\nDone.", tools=TOOLS,
         report={"calls": 2}),
    Case("bare-call-then-prose", call("get_current_date") + "\n\nAfter that, lunch.",
         [("get_current_date", {})], "\n\nAfter that, lunch.", tools=TOOLS),
    Case("second-call-unknown-keeps-first",
         calls(call("get_current_date"), call("launch", ("x", "1"))),
         [("get_current_date", {})],
         "\n<tool_call>launch<tool_sep>\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n</tool_calls>",
         tools=TOOLS, report={"calls": 1, "rejected": 1}),
    Case("malformed-name", "<tool_calls>\n<tool_call>get weather now<tool_sep>\n</tool_call>\n</tool_calls>", [],
         "<tool_calls>\n<tool_call>get weather now<tool_sep>\n</tool_call>\n</tool_calls>", tools=TOOLS,
         report={"calls": 0}),
    Case("truncated-value", "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Nan",
         [], "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Nan", tools=TOOLS,
         report={"truncated": True, "calls": 0}),
    Case("wrapper-close-missing-at-end", "<tool_calls>\n" + call("get_current_date") + "\n",
         [("get_current_date", {})], None, tools=TOOLS, report={"recovered": 1}),
    Case("unknown-tool", calls(call("launch", ("x", "1"))), [], calls(call("launch", ("x", "1"))), tools=TOOLS,
         report={"rejected": 1}),
    Case("prose-mentions-marker", "Hunyuan opens calls with <tool_calls> and <tool_call>.", [],
         "Hunyuan opens calls with <tool_calls> and <tool_call>.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("hunyuan_v3", CASES)
