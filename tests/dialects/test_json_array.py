"""SGLang's generic JSON-array format: the whole answer is ``[{"name": ..., "parameters": ...}, ...]``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", location={"type": "string"}), tool("search", query={"type": "string"})]

CASES = [
    Case("single", '[{"name": "get_weather", "parameters": {"location": "Tokyo"}}]',
         [("get_weather", {"location": "Tokyo"})], None, tools=TOOLS, report={"calls": 1}),
    Case("parallel", '[\n  {"name": "search", "parameters": {"query": "a"}},\n  {"name": "search", "parameters": '
         '{"query": "b"}}\n]', [("search", {"query": "a"}), ("search", {"query": "b"})], None, tools=TOOLS),
    Case("zero-arguments", '[{"name": "search", "parameters": {}}]', [("search", {})], None, tools=TOOLS),
    Case("nested-arguments", '[{"name": "f", "parameters": {"a": {"b": "has } and ] inside"}}}]',
         [("f", {"a": {"b": "has } and ] inside"}})], None),
    Case("leading-whitespace", ' \n\n [{"name": "search", "parameters": {"query": "x"}}]  ',
         [("search", {"query": "x"})], None, tools=TOOLS),
    Case("fenced", '```json\n[{"name": "search", "parameters": {"query": "x"}}]\n```', [("search", {"query": "x"})],
         None, tools=TOOLS),
    Case("close-missing-at-end", '[{"name": "search", "parameters": {"query": "x"}}', [("search", {"query": "x"})],
         None, tools=TOOLS, report={"recovered": 1}),
    Case("second-call-cut-keeps-first", '[{"name": "search", "parameters": {"query": "x"}},{"name": "get_weather"',
         [("search", {"query": "x"})], '{"name": "get_weather"', tools=TOOLS, report={"truncated": True}),
    Case("malformed-stays-content", '[{"name": "search", "parameters": {"query": "x"[{}}}]', [],
         '[{"name": "search", "parameters": {"query": "x"[{}}}]', tools=TOOLS, report={"aborted": 1}),
    Case("unknown-tool-stays-content", '[{"name": "nope", "parameters": {}}]', [],
         '[{"name": "nope", "parameters": {}}]', tools=TOOLS, report={"rejected": 1}),
    Case("prose-is-prose", "No tools needed [really].", [], "No tools needed [really]."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("json_array", CASES)
