"""Cohere Command R+: ``Action:`` then a fenced JSON list of ``{"tool_name", "parameters"}``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool
from toolbridge.dialects import get_dialect

TOOLS = [tool("internet_search", query={"type": "string"}), tool("clock"), tool("tabulate", rows={"type": "array"})]


def action(body: str) -> str:
    return "Action:\n```json\n" + body + "\n```"


CASES = [
    Case("single", action('[\n    {\n        "tool_name": "internet_search",\n        "parameters": {\n'
                          '            "query": "aurora forecast"\n        }\n    }\n]'),
         [("internet_search", {"query": "aurora forecast"})], None, tools=TOOLS),
    Case("parallel", action('[{"tool_name": "clock", "parameters": {}}, '
                            '{"tool_name": "internet_search", "parameters": {"query": "q"}}]'),
         [("clock", {}), ("internet_search", {"query": "q"})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments", action('[{"tool_name": "clock", "parameters": {}}]'), [("clock", {})], None, tools=TOOLS),
    Case("nested", action('[{"tool_name": "tabulate", "parameters": {"rows": [[1, "a"], {"k": [true]}]}}]'),
         [("tabulate", {"rows": [[1, "a"], {"k": [True]}]})], None, tools=TOOLS),
    Case("plan-before", "Plan: I will search.\n" + action('[{"tool_name": "clock", "parameters": {}}]'),
         [("clock", {})], "Plan: I will search.", tools=TOOLS),
    Case("turn-tokens-dropped-when-asked", "<|CHATBOT_TOKEN|>Hello!<|END_OF_TURN_TOKEN|>", [], "Hello!",
         options={"drop_tokens": get_dialect("command_r_plus").end_tokens}),
    Case("turn-tokens-never-reach-content", "<|CHATBOT_TOKEN|>Hello!<|END_OF_TURN_TOKEN|>", [], "Hello!"),
    Case("one-object-not-a-list", action('{"tool_name": "clock", "parameters": {}}'), [("clock", {})], None,
         tools=TOOLS),
    Case("fence-of-prose-is-content", "Action:\n```json\nno calls here\n```", [],
         "Action:\n```json\nno calls here\n```", report={"calls": 0}),
    Case("malformed", action('[{"tool_name": "clock", "parameters": {]}]'), [],
         action('[{"tool_name": "clock", "parameters": {]}]'), tools=TOOLS, report={"calls": 0}),
    Case("truncated", 'Action:\n```json\n[{"tool_name": "internet_search", "parameters": {"query": "au', [],
         'Action:\n```json\n[{"tool_name": "internet_search", "parameters": {"query": "au', tools=TOOLS,
         report={"truncated": True}),
    Case("directly-answer-not-offered", action('[{"tool_name": "directly_answer", "parameters": {}}]'), [],
         action('[{"tool_name": "directly_answer", "parameters": {}}]'), tools=TOOLS, report={"rejected": 1}),
    Case("prose-mentions-action", "Action: none needed, the answer is 4.", [],
         "Action: none needed, the answer is 4."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("command_r_plus", CASES)
