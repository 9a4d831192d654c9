"""Functionary v3.2: ``RECIPIENT\\n`` parts after the prompt's ``>>>``; ``all`` is visible text."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("python", code={"type": "string"}), tool("noop"),
         tool("query", filter={"type": "object"})]

CASES = [
    Case("single-call-first", 'get_weather\n{"city": "Paris"}', [("get_weather", {"city": "Paris"})], None,
         tools=TOOLS),
    Case("text-then-call", 'all\nLet me look that up.>>>get_weather\n{"city": "Lyon"}',
         [("get_weather", {"city": "Lyon"})], "Let me look that up.", tools=TOOLS),
    Case("parallel", 'get_weather\n{"city": "A"}>>>get_weather\n{"city": "B"}',
         [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments", "noop\n{}", [("noop", {})], None, tools=TOOLS),
    Case("nested", 'query\n{"filter": {"or": [{"a": null}, {"b": [true]}]}}',
         [("query", {"filter": {"or": [{"a": None}, {"b": [True]}]}})], None, tools=TOOLS),
    Case("python-raw-code", 'python\nfor i in range(3):\n    print(i, ">>")',
         [("python", {"code": 'for i in range(3):\n    print(i, ">>")'})], None, tools=TOOLS),
    Case("text-only", "all\nHello there!\nHow can I help?", [], "Hello there!\nHow can I help?"),
    Case("prompt-marker-repeated", '>>>get_weather\n{"city": "Nice"}', [("get_weather", {"city": "Nice"})], None,
         tools=TOOLS),
    Case("malformed-arguments", "get_weather\ncity=Paris", [], "get_weather\ncity=Paris", tools=TOOLS,
         report={"calls": 0}),
    Case("truncated", 'get_weather\n{"city": "Pa', [], 'get_weather\n{"city": "Pa', tools=TOOLS,
         report={"truncated": True}),
    Case("unknown-tool", 'send\n{"to": "x"}', [], 'send\n{"to": "x"}', tools=TOOLS, report={"rejected": 1}),
    Case("prose-without-recipient", "Sure thing, here you go.", [], "Sure thing, here you go.", tools=TOOLS,
         report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("functionary_v3_2", CASES)
