"""FireFunction v2: a space, then ``functools[...]`` after the content."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_stock", ticker={"type": "string"}), tool("market_open"), tool("order", spec={"type": "object"})]

CASES = [
    Case("single", ' functools[{"name": "get_stock", "arguments": {"ticker": "NVDA"}}]',
         [("get_stock", {"ticker": "NVDA"})], None, tools=TOOLS),
    Case("parallel", ' functools[{"name": "get_stock", "arguments": {"ticker": "A"}}, '
         '{"name": "get_stock", "arguments": {"ticker": "B"}}]',
         [("get_stock", {"ticker": "A"}), ("get_stock", {"ticker": "B"})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments", ' functools[{"name": "market_open", "arguments": {}}]', [("market_open", {})], None,
         tools=TOOLS),
    Case("nested", ' functools[{"name": "order", "arguments": {"spec": {"legs": [{"qty": 2, "px": 1.5e2}]}}}]',
         [("order", {"spec": {"legs": [{"qty": 2, "px": 150.0}]}})], None, tools=TOOLS),
    Case("content-before", 'Sure. functools[{"name": "market_open", "arguments": {}}]', [("market_open", {})],
         "Sure.", tools=TOOLS),
    Case("arguments-as-string", ' functools[{"name": "get_stock", "arguments": "{\\"ticker\\": \\"IBM\\"}"}]',
         [("get_stock", {"ticker": "IBM"})], None, tools=TOOLS, report={"repaired": 1}),
    Case("malformed", ' functools[{"name": "get_stock" "arguments": {}}]', [],
         ' functools[{"name": "get_stock" "arguments": {}}]', tools=TOOLS, report={"calls": 0}),
    Case("truncated", ' functools[{"name": "get_stock", "arguments": {"ticker": "NV', [],
         ' functools[{"name": "get_stock", "arguments": {"ticker": "NV', tools=TOOLS, report={"truncated": True}),
    Case("unknown-tool", ' functools[{"name": "wire_money", "arguments": {}}]', [],
         ' functools[{"name": "wire_money", "arguments": {}}]', tools=TOOLS, report={"rejected": 1}),
    Case("known-then-unknown", ' functools[{"name": "market_open", "arguments": {}}, '
         '{"name": "wire_money", "arguments": {}}]', [("market_open", {})],
         ' {"name": "wire_money", "arguments": {}}]', tools=TOOLS, report={"calls": 1, "rejected": 1}),
    Case("prose", "Python's functools is handy.", [], "Python's functools is handy."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("firefunction_v2", CASES)
