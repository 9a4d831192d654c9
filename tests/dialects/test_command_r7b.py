"""Cohere Command R7B / Command A: ``<|START_ACTION|>[...]<|END_ACTION|>``, thinking and response blocks."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool
from toolbridge.dialects import get_dialect

TOOLS = [tool("search", query={"type": "string"}), tool("todo_list", todos={"type": "array"}), tool("clock")]
R = {"reasoning": True}
# What the gateway passes when it asks an upstream to keep special tokens.
DROP = {"drop_tokens": get_dialect("command_r7b").end_tokens}
A0, A1 = "<|START_ACTION|>", "<|END_ACTION|>"


def item(i: int, name: str, params: str) -> str:
    return f'    {{"tool_call_id": "{i}", "tool_name": "{name}", "parameters": {params}}}'


def action(*items: str) -> str:
    return A0 + "[\n" + ",\n".join(items) + "\n]" + A1


CASES = [
    Case("single", action(item(0, "search", '{"query": "fjords"}')), [("search", {"query": "fjords"})], None,
         tools=TOOLS),
    Case("parallel", action(item(0, "clock", "{}"), item(1, "search", '{"query": "tides"}')),
         [("clock", {}), ("search", {"query": "tides"})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments", action(item(0, "clock", "{}")), [("clock", {})], None, tools=TOOLS),
    Case("nested", action(item(0, "todo_list", '{"todos": [{"t": "milk", "tags": ["shop"]}, "walk dog"]}')),
         [("todo_list", {"todos": [{"t": "milk", "tags": ["shop"]}, "walk dog"]})], None, tools=TOOLS),
    Case("thinking-then-action", "<|START_THINKING|>I should search.<|END_THINKING|>"
         + action(item(0, "search", '{"query": "x"}')), [("search", {"query": "x"})], None, "I should search.",
         tools=TOOLS, options=R),
    Case("thinking-then-response", "<|START_THINKING|>Easy.<|END_THINKING|><|START_RESPONSE|>Hi there!<|END_RESPONSE|>",
         [], "Hi there!", "Easy.", options={**R, **DROP}),
    Case("command-a-text-block", "<|START_TEXT|>Hello, world!<|END_TEXT|>", [], "Hello, world!", options=DROP),
    Case("thinking-stays-content-when-reasoning-off",
         "<|START_THINKING|>hm<|END_THINKING|><|START_RESPONSE|>Hi<|END_RESPONSE|>", [],
         "<|START_THINKING|>hm<|END_THINKING|>Hi", options=DROP),
    Case("wrappers-and-end-tokens-never-reach-content", "<|START_RESPONSE|>Hi<|END_RESPONSE|><|END_OF_TURN_TOKEN|>",
         [], "Hi"),
    Case("one-object-not-a-list", A0 + '{"tool_name": "search", "parameters": {"query": "x"}}' + A1,
         [("search", {"query": "x"})], None, tools=TOOLS),
    Case("one-object-then-the-answer", A0 + '{"tool_call_id": "0", "tool_name": "clock", "parameters": {}}' + A1
         + "<|START_RESPONSE|>Done.<|END_RESPONSE|>", [("clock", {})], "Done.", tools=TOOLS),
    Case("key-order-name-first", A0 + '[{"tool_name": "clock", "parameters": {}, "tool_call_id": "0"}]' + A1,
         [("clock", {})], None, tools=TOOLS),
    Case("malformed", action(item(0, "search", '{"query": }')), [], action(item(0, "search", '{"query": }')),
         tools=TOOLS, report={"calls": 0}),
    Case("truncated", A0 + '[\n    {"tool_call_id": "0", "tool_name": "search", "parameters": {"query": "fj', [],
         A0 + '[\n    {"tool_call_id": "0", "tool_name": "search", "parameters": {"query": "fj', tools=TOOLS,
         report={"truncated": True}),
    Case("unknown-tool", action(item(0, "direct-injected-document", "{}")), [],
         action(item(0, "direct-injected-document", "{}")), tools=TOOLS, report={"rejected": 1}),
    Case("prose-mentions-action", "Cohere models write an Action: list of calls.", [],
         "Cohere models write an Action: list of calls."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("command_r7b", CASES)
