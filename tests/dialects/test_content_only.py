"""Templates with no tool syntax: content, except a bare (or fenced) JSON call object."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("now")]
REASONING = {"reasoning": True}

CASES = [
    Case("plain-answer", "Hi there!\nHow can I help?", [], "Hi there!\nHow can I help?"),
    Case("single", '{"name": "get_weather", "parameters": {"city": "Oslo"}}', [("get_weather", {"city": "Oslo"})],
         None, tools=TOOLS, report={"calls": 1}),
    Case("arguments-key", ' {"name": "get_weather", "arguments": {"city": "Bergen"}}',
         [("get_weather", {"city": "Bergen"})], None, tools=TOOLS),
    Case("parallel-fenced", 'Two calls.\n```json\n{"name": "now", "arguments": {}}\n```\n```json\n'
         '{"name": "get_weather", "arguments": {"city": "Bod\\u00f8"}}\n```',
         [("now", {}), ("get_weather", {"city": "Bodø"})], "Two calls.", tools=TOOLS),
    Case("zero-arguments", '{"name": "now", "arguments": {}}', [("now", {})], None, tools=TOOLS),
    Case("nested-arguments", '{"name": "plan", "arguments": {"a": [1, {"b": "} {"}], "c": {"d": false}}}',
         [("plan", {"a": [1, {"b": "} {"}], "c": {"d": False}})], None),
    Case("reasoning-then-call", '<think>Weather first.</think>{"name": "get_weather", "arguments": {"city": "Oslo"}}',
         [("get_weather", {"city": "Oslo"})], None, "Weather first.", tools=TOOLS, options=REASONING),
    Case("name-alone-is-an-answer", '{"name": "Ada"}', [], '{"name": "Ada"}'),
    Case("json-in-prose-is-prose", 'The call looks like {"name": "now", "arguments": {}} in JSON.', [],
         'The call looks like {"name": "now", "arguments": {}} in JSON.', tools=TOOLS),
    Case("fence-with-other-json-is-content", '```json\n{"a": 1}\n```', [], '```json\n{"a": 1}\n```'),
    Case("malformed-stays-content", '{"name": "now", "arguments": {"x": tru}}', [],
         '{"name": "now", "arguments": {"x": tru}}', tools=TOOLS, report={"aborted": 1}),
    Case("truncated-mid-arguments", '{"name": "get_weather", "arguments": {"city": "Os', [],
         '{"name": "get_weather", "arguments": {"city": "Os', tools=TOOLS, report={"truncated": True}),
    Case("unknown-tool-stays-content", '{"name": "rm", "arguments": {"path": "/"}}', [],
         '{"name": "rm", "arguments": {"path": "/"}}', tools=TOOLS, report={"rejected": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("content_only", CASES)
