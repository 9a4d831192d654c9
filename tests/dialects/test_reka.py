"""Reka Edge: one JSON object per call in ``<tool_call>`` tags (the Reka-Edge template's layout)."""

from __future__ import annotations

import json
from typing import Any

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_temperature", location={"type": "string"}, unit={"type": "string"})]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}


def call(name: str, args: Any = None, key: str = "arguments") -> str:
    obj = {"name": name} if args is None else {"name": name, key: args}
    return "<tool_call>\n" + json.dumps(obj, ensure_ascii=False) + "\n</tool_call>\n"


CASES = [
    Case("single", call("get_temperature", {"location": "Beijing"}),
         [("get_temperature", {"location": "Beijing"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", call("get_temperature", {"location": "Beijing"}) + call("get_temperature", {"location": "Xi'an"}),
         [("get_temperature", {"location": "Beijing"}), ("get_temperature", {"location": "Xi'an"})], None,
         tools=WEATHER, report={"calls": 2}),
    Case("zero-arguments", call("now", {}), [("now", {})], None),
    Case("nested", call("plan", {"steps": [{"do": "a", "with": {"x": [1, None]}}], "ok": True}),
         [("plan", {"steps": [{"do": "a", "with": {"x": [1, None]}}], "ok": True})], None),
    Case("parameters-key", call("get_temperature", {"location": "Oslo"}, key="parameters"),
         [("get_temperature", {"location": "Oslo"})], None, tools=WEATHER),
    Case("close-tag-inside-string", call("echo", {"text": "</tool_call> is the tag"}),
         [("echo", {"text": "</tool_call> is the tag"})], None),
    Case("content-before", "Two tools are needed.\n\n" + call("get_temperature", {"location": "Oslo"}),
         [("get_temperature", {"location": "Oslo"})], "Two tools are needed.", tools=WEATHER),
    Case("reasoning-then-call", "Need Oslo.\n</think>\n\n" + call("get_temperature", {"location": "Oslo"}),
         [("get_temperature", {"location": "Oslo"})], None, "Need Oslo.\n", tools=WEATHER, options=IN_REASONING),
    Case("call-quoted-in-reasoning",
         "Maybe " + call("get_temperature", {"location": "Rome"}) + "no, Oslo.\n</think>\n\n"
         + call("get_temperature", {"location": "Oslo"}),
         [("get_temperature", {"location": "Oslo"})], None,
         "Maybe " + call("get_temperature", {"location": "Rome"}) + "no, Oslo.\n", tools=WEATHER,
         options=IN_REASONING, report={"calls": 1}),
    Case("think-split", "<think>hm</think>Hi", [], "Hi", "hm", options=REASONING),
    Case("malformed-json", "<tool_call>\n{\"name\": \"now\", \"arguments\": {oops}}\n</tool_call>", [],
         "<tool_call>\n{\"name\": \"now\", \"arguments\": {oops}}\n</tool_call>", report={"calls": 0}),
    Case("truncated-arguments", '<tool_call>\n{"name": "get_temperature", "arguments": {"location": "Be', [],
         '<tool_call>\n{"name": "get_temperature", "arguments": {"location": "Be', tools=WEATHER,
         report={"truncated": True, "calls": 0}),
    Case("unknown-tool-stays-content", call("wipe", {"all": True}), [], call("wipe", {"all": True}), tools=WEATHER,
         report={"rejected": 1}),
    Case("prose-mentions-marker", "Calls go in <tool_call> tags.", [], "Calls go in <tool_call> tags.",
         report={"calls": 0}),
    Case("end-token-dropped", call("now", {}) + "<sep>", [("now", {})], None, options={"drop_tokens": ("<sep>",)}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("reka", CASES)
