"""olmo3: Python calls one per line inside ``<function_calls>...</function_calls>``, JSON's
``true``/``false``/``null`` accepted; reasoning in ``<think>...</think>``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("search", query={"type": "string"})]
R = {"reasoning": True}

CASES = [
    Case("single", "<function_calls>get_weather(city='Paris')</function_calls>",
         [("get_weather", {"city": "Paris"})], None, tools=TOOLS, report={"calls": 1}),
    Case("parallel-lines", "<function_calls>get_weather(city='Oslo')\nsearch(query=\"hotels\")\n</function_calls>",
         [("get_weather", {"city": "Oslo"}), ("search", {"query": "hotels"})], None, tools=TOOLS),
    Case("bracketed-list-too", "<function_calls>[get_weather(city='Oslo'), search(query='x')]</function_calls>",
         [("get_weather", {"city": "Oslo"}), ("search", {"query": "x"})], None, tools=TOOLS),
    Case("zero-arguments", "<function_calls>now()</function_calls>", [("now", {})], None),
    Case("nested-json-literals", "<function_calls>save(doc={'a': [1, {'b': null}], 'ok': true}, off=false)</function_calls>",
         [("save", {"doc": {"a": [1, {"b": None}], "ok": True}, "off": False})], None),
    Case("content-before-and-after", "Let me look.\n<function_calls>search(query='x')</function_calls>\nDone.",
         [("search", {"query": "x"})], "Let me look.\n\nDone.", tools=TOOLS),
    Case("reasoning-before-call",
         "<think>Need the weather.</think>\n<function_calls>get_weather(city='Rome')</function_calls>",
         [("get_weather", {"city": "Rome"})], None, "Need the weather.", tools=TOOLS, options=R),
    Case("malformed-stays-content", "<function_calls>get_weather(Paris)</function_calls>", [],
         "<function_calls>get_weather(Paris)</function_calls>", tools=TOOLS, report={"rejected": 1}),
    Case("truncated", "<function_calls>get_weather(city='Pa", [], "<function_calls>get_weather(city='Pa",
         tools=TOOLS, report={"truncated": True}),
    Case("complete-call-unclosed-block", "<function_calls>get_weather(city='Pa')",
         [("get_weather", {"city": "Pa"})], None, tools=TOOLS, report={"recovered": 1}),
    Case("unknown-tool", "<function_calls>send(to='x')</function_calls>", [],
         "<function_calls>send(to='x')</function_calls>", tools=TOOLS, report={"rejected": 1}),
    Case("prose-mentions-marker", "Calls go in <function_calls> tags.", [], "Calls go in <function_calls> tags.",
         report={"calls": 0}),
    Case("empty-block", "<function_calls></function_calls>", [], "", report={"rejected": 0, "repaired": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("olmo3", CASES)
