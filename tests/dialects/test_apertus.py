"""Apertus: ``<|tools_prefix|>[{NAME: {args}}, ...]<|tools_suffix|>``, ``<|inner_prefix|>`` reasoning."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("get_time", city={"type": "string"}), tool("ping"),
         tool("store", record={"type": "object"})]
P, S = "<|tools_prefix|>", "<|tools_suffix|>"
R = {"reasoning": True}

CASES = [
    Case("single", P + '[{"get_weather": {"city": "Bern"}}]' + S, [("get_weather", {"city": "Bern"})], None,
         tools=TOOLS, report={"calls": 1, "repaired": 0}),
    Case("parallel", P + '[{"get_weather": {"city": "Chur"}}, {"get_time": {"city": "Chur"}}]' + S,
         [("get_weather", {"city": "Chur"}), ("get_time", {"city": "Chur"})], None, tools=TOOLS,
         report={"calls": 2}),
    Case("zero-arguments", P + '[{"ping": {}}]' + S, [("ping", {})], None, tools=TOOLS),
    Case("nested", P + '[{"store": {"record": {"ids": [1, 2], "meta": {"ok": true, "s": "a]}"}}}}]' + S,
         [("store", {"record": {"ids": [1, 2], "meta": {"ok": True, "s": "a]}"}}})], None, tools=TOOLS),
    Case("content-before-and-after", "Let me check. " + P + '[{"ping": {}}]' + S + "Done.", [("ping", {})],
         "Let me check. Done.", tools=TOOLS),
    Case("reasoning-then-call", "<|inner_prefix|>Weather in Bern.<|inner_suffix|>" + P
         + '[{"get_weather": {"city": "Bern"}}]' + S, [("get_weather", {"city": "Bern"})], None, "Weather in Bern.",
         tools=TOOLS, options=R),
    Case("missing-suffix-at-end", P + '[{"ping": {}}]', [("ping", {})], None, tools=TOOLS, report={"recovered": 1}),
    Case("complete-arguments-cut-before-brace", P + '[{"get_weather": {"city": "Sion"}}', [("get_weather", {"city": "Sion"})],
         None, tools=TOOLS, report={"recovered": 1}),
    Case("malformed-two-keys", P + '[{"name": "ping", "arguments": {}}]' + S, [],
         P + '[{"name": "ping", "arguments": {}}]' + S, report={"calls": 0}),
    Case("truncated", P + '[{"get_weather": {"city": "Zu', [], P + '[{"get_weather": {"city": "Zu', tools=TOOLS,
         report={"truncated": True, "calls": 0}),
    Case("unknown-after-known", P + '[{"ping": {}}, {"format_disk": {}}]' + S, [("ping", {})],
         '{"format_disk": {}}]' + S, tools=TOOLS, report={"calls": 1, "rejected": 1}),
    Case("unknown-tool", P + '[{"format_disk": {}}]' + S, [], P + '[{"format_disk": {}}]' + S, tools=TOOLS,
         report={"rejected": 1}),
    Case("prose-with-brackets", "Lists look like [{a: 1}] in docs.", [], "Lists look like [{a: 1}] in docs."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("apertus", CASES)
