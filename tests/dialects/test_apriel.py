"""Apriel 1.5 / 1.6: plain-text reasoning up to ``[BEGIN FINAL RESPONSE]``, ``<tool_calls>[...]</tool_calls>``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("now"), tool("plan", tree={"type": "object"})]
IN_R = {"reasoning": True, "in_reasoning": True}


def calls(*objects: str) -> str:
    return "<tool_calls>[" + ", ".join(objects) + "]</tool_calls>"


CASES = [
    Case("single", calls('{"name": "get_weather", "arguments": {"city": "Oslo"}}'),
         [("get_weather", {"city": "Oslo"})], None, tools=TOOLS),
    Case("parallel", calls('{"name": "now", "arguments": {}}', '{"name": "get_weather", "arguments": {"city": "Rome"}}'),
         [("now", {}), ("get_weather", {"city": "Rome"})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments-with-id", calls('{"name": "now", "arguments": {}, "id": "abc123"}'), [("now", {})], None,
         tools=TOOLS),
    Case("nested", calls('{"name": "plan", "arguments": {"tree": {"a": {"b": [1, {"c": null}]}}}}'),
         [("plan", {"tree": {"a": {"b": [1, {"c": None}]}}})], None, tools=TOOLS),
    Case("reasoning-then-call", "The user wants Oslo.\n[BEGIN FINAL RESPONSE]\n"
         + calls('{"name": "get_weather", "arguments": {"city": "Oslo"}}'),
         [("get_weather", {"city": "Oslo"})], None, "The user wants Oslo.\n", tools=TOOLS, options=IN_R),
    Case("reasoning-then-answer", "Easy.\n[BEGIN FINAL RESPONSE]\nHello!", [], "\nHello!", "Easy.\n", options=IN_R),
    # The template's generation prompt opens the reasoning: the output starts inside it, and the
    # opening phrase, when the output repeats it, is reasoning text like any other.
    Case("reasoning-opener-written", "Here are my reasoning steps:\nThink.\n[BEGIN FINAL RESPONSE]\nHi.", [],
         "\nHi.", "Here are my reasoning steps:\nThink.\n", options={"reasoning": True}),
    Case("starts-in-reasoning", "Plan it.\n[BEGIN FINAL RESPONSE]\n" + calls('{"name": "now", "arguments": {}}'),
         [("now", {})], None, "Plan it.\n", tools=TOOLS, options={"reasoning": True}),
    Case("reasoning-not-split", "Plan it.\n[BEGIN FINAL RESPONSE]\nHi.", [], "Plan it.\n[BEGIN FINAL RESPONSE]\nHi."),
    Case("content-before", "Checking.\n" + calls('{"name": "now", "arguments": {}}'), [("now", {})], "Checking.",
         tools=TOOLS),
    Case("malformed", calls('{"name": "now", "arguments": {,}}'), [], calls('{"name": "now", "arguments": {,}}'),
         tools=TOOLS, report={"calls": 0}),
    Case("truncated", '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Os', [],
         '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Os', tools=TOOLS, report={"truncated": True}),
    Case("unknown-tool", calls('{"name": "deploy", "arguments": {}}'), [], calls('{"name": "deploy", "arguments": {}}'),
         tools=TOOLS, report={"rejected": 1}),
    Case("prose-mentions-marker", "Apriel lists calls in <tool_calls> tags.", [],
         "Apriel lists calls in <tool_calls> tags.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("apriel", CASES)
