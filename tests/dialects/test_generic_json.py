"""llama.cpp's generic format: the whole answer is a ``tool_calls``/``tool_call``/``response`` envelope."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("now")]
REASONING = {"reasoning": True}

CASES = [
    Case("single", '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon", "days": 3}, "id": "7"}]}',
         [("get_weather", {"city": "Lyon", "days": 3})], None, tools=TOOLS, report={"calls": 1}),
    Case("parallel", '{\n  "tool_calls": [\n    {"name": "get_weather", "arguments": {"city": "Nice"}},\n'
         '    {"name": "now", "arguments": {}}\n  ]\n}',
         [("get_weather", {"city": "Nice"}), ("now", {})], None, tools=TOOLS),
    Case("one-call-key", '{"tool_call": {"name": "get_weather", "arguments": {"city": "Metz"}}}',
         [("get_weather", {"city": "Metz"})], None, tools=TOOLS),
    Case("zero-arguments", '{"tool_call": {"name": "now", "arguments": {}}}', [("now", {})], None, tools=TOOLS),
    Case("nested-arguments", '{"tool_calls": [{"name": "plan", "arguments": {"steps": [{"n": [1, {"x": "}]"}]}], '
         '"ok": null}}]}', [("plan", {"steps": [{"n": [1, {"x": "}]"}]}], "ok": None})], None),
    Case("response-is-content", '{"response": "Sunny, \\"warm\\" and\\nbright."}', [],
         'Sunny, "warm" and\nbright.'),
    Case("calls-with-empty-content", '{"tool_calls": [{"name": "now", "arguments": {}}], "content": ""}',
         [("now", {})], None, tools=TOOLS),
    Case("reasoning-before-the-envelope", '<think>Need the time.</think>\n{"tool_call": {"name": "now", '
         '"arguments": {}}}', [("now", {})], None, "Need the time.", tools=TOOLS, options=REASONING),
    Case("fenced-envelope", 'Calling.\n```json\n{"tool_call": {"name": "now", "arguments": {}}}\n```',
         [("now", {})], "Calling.", tools=TOOLS),
    Case("other-json-is-content", '{"temperature": 21}', [], '{"temperature": 21}', report={"rejected": 1}),
    Case("object-in-prose-is-content", 'Use {"tool_call": 1} to call.', [], 'Use {"tool_call": 1} to call.'),
    Case("malformed-stays-content", '{"tool_calls": [{"name": "now", "arguments": {]}]}', [],
         '{"tool_calls": [{"name": "now", "arguments": {]}]}', tools=TOOLS, report={"aborted": 1}),
    Case("truncated-mid-arguments", '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Ly', [],
         '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Ly', tools=TOOLS,
         report={"truncated": True, "calls": 0}),
    Case("cut-after-a-complete-call-keeps-it", '{"tool_calls": [{"name": "now", "arguments": {}}, {"name": "get_',
         [("now", {})], '{"name": "get_', tools=TOOLS, report={"truncated": True}),
    Case("unknown-tool-stays-content", '{"tool_call": {"name": "drop_db", "arguments": {}}}', [],
         '{"tool_call": {"name": "drop_db", "arguments": {}}}', tools=TOOLS, report={"rejected": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("generic_json", CASES)
