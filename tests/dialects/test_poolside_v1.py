"""Poolside v1: GLM-style ``NAME`` + ``<arg_key>``/``<arg_value>`` pairs inside ``<tool_call>``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", location={"type": "string"}, count={"type": "integer"}, options={"type": "object"}),
         tool("search", query={"type": "string"}), tool("now")]


def call(name: str, *pairs: tuple[str, str]) -> str:
    body = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in pairs)
    return f"<tool_call>{name}\n{body}</tool_call>"


CASES = [
    Case("keys-holding-markup", call("set_item", ("items<0>", "x"), ("a>b", "2")),
         [("set_item", {"items<0>": "x", "a>b": 2})], None),
    Case("a-key-may-not-hold-the-next-pair", call("set_item", ("city<arg_value>x", "y")), [],
         call("set_item", ("city<arg_value>x", "y")), report={"calls": 0}),
    Case("single", call("get_weather", ("location", "San Francisco")),
         [("get_weather", {"location": "San Francisco"})], None, tools=TOOLS, report={"calls": 1}),
    Case("parallel", call("get_weather", ("location", "NYC")) + "\n" + call("search", ("query", "pizza")),
         [("get_weather", {"location": "NYC"}), ("search", {"query": "pizza"})], None, tools=TOOLS),
    Case("zero-arguments", "<tool_call>now</tool_call>", [("now", {})], None, tools=TOOLS),
    Case("nested-and-typed", call("get_weather", ("count", "3"), ("options", '{"verbose": true, "days": [1, 2]}')),
         [("get_weather", {"count": 3, "options": {"verbose": True, "days": [1, 2]}})], None, tools=TOOLS),
    Case("string-kept-verbatim", call("search", ("query", "  tacos\n")), [("search", {"query": "  tacos\n"})], None,
         tools=TOOLS),
    Case("content-before", "Sure, checking now. " + call("search", ("query", "tacos")),
         [("search", {"query": "tacos"})], "Sure, checking now.", tools=TOOLS),
    Case("reasoning-then-call", "<think>Search it.</think>" + call("search", ("query", "x")),
         [("search", {"query": "x"})], None, "Search it.", tools=TOOLS, options={"reasoning": True}),
    Case("key-without-value-is-dropped", "<tool_call>search\n<arg_key>query</arg_key>\n</tool_call>",
         [("search", {})], None, tools=TOOLS, report={"calls": 1, "repaired": 1}),
    Case("key-without-value-then-next-key", "<tool_call>get_weather <arg_key>location</arg_key>"
         "<arg_key>count</arg_key><arg_value>7</arg_value></tool_call>",
         [("get_weather", {"count": 7})], None, tools=TOOLS, report={"repaired": 1}),
    Case("valueless-call-then-next-call", "<tool_call>search<arg_key>query</arg_key></tool_call>"
         + call("get_weather", ("location", "Lima")),
         [("search", {}), ("get_weather", {"location": "Lima"})], None, tools=TOOLS),
    Case("key-running-into-a-tag-is-malformed", "<tool_call>search\n<arg_key>query<arg_value>x</arg_value></tool_call>",
         [], "<tool_call>search\n<arg_key>query<arg_value>x</arg_value></tool_call>", tools=TOOLS, report={"calls": 0}),
    Case("truncated-after-valueless-key", "<tool_call>search\n<arg_key>query</arg_key>", [],
         "<tool_call>search\n<arg_key>query</arg_key>", tools=TOOLS, report={"truncated": True}),
    Case("no-name-is-malformed", "<tool_call><arg_key>k</arg_key><arg_value>v</arg_value></tool_call>", [],
         "<tool_call><arg_key>k</arg_key><arg_value>v</arg_value></tool_call>", tools=TOOLS, report={"rejected": 1}),
    Case("truncated-mid-value", "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>San Fr", [],
         "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>San Fr", tools=TOOLS,
         report={"truncated": True}),
    Case("complete-call-then-truncated-one",
         call("get_weather", ("location", "NYC")) + "\n<tool_call>search\n<arg_key>q",
         [("get_weather", {"location": "NYC"})], "\n<tool_call>search\n<arg_key>q", tools=TOOLS,
         report={"truncated": True, "calls": 1}),
    Case("unknown-tool-stays-content", call("nonexistent_fn", ("x", "1")), [], call("nonexistent_fn", ("x", "1")),
         tools=TOOLS, report={"rejected": 1}),
    Case("prose-mentions-markers", "Pairs look like <arg_key>k</arg_key><arg_value>v</arg_value>.", [],
         "Pairs look like <arg_key>k</arg_key><arg_value>v</arg_value>.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("poolside_v1", CASES)
