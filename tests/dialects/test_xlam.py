"""xLAM: a bare JSON call array as the answer, or after ``[TOOL_CALLS]``, ``<tool_call>``, a fence, ``</think>``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]
REASONING = {"reasoning": True}

CASES = [
    Case("single", '[{"name": "get_weather", "arguments": {"city": "Dallas"}}]', [("get_weather", {"city": "Dallas"})],
         None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", '[{"name": "get_time", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "Orlando"}}]',
         [("get_time", {}), ("get_weather", {"city": "Orlando"})], None, tools=WEATHER),
    Case("zero-arguments", '[{"name": "get_time", "arguments": {}}]', [("get_time", {})], None, tools=WEATHER),
    Case("nested-arguments", '[{"name": "f", "arguments": {"a": [{"b": {"c": [1, 2.5]}}]}}]',
         [("f", {"a": [{"b": {"c": [1, 2.5]}}]})], None),
    Case("tool-calls-marker-at-start", '[TOOL_CALLS][{"name": "get_time", "arguments": {}}]', [("get_time", {})],
         None, tools=WEATHER),
    Case("fenced-after-content", 'I\'ll help.\n```json\n[{"name": "get_time", "arguments": {}}]\n```',
         [("get_time", {})], "I'll help.", tools=WEATHER),
    Case("tagged", 'Checking.<tool_call>[{"name": "get_time", "arguments": {}}]</tool_call>', [("get_time", {})],
         "Checking.", tools=WEATHER),
    Case("after-think-reasoning-off", '<think>Easy.</think>[{"name": "get_time", "arguments": {}}]',
         [("get_time", {})], "<think>Easy.</think>", tools=WEATHER),
    Case("after-think-reasoning-on", '<think>Easy.</think>[{"name": "get_time", "arguments": {}}]',
         [("get_time", {})], None, "Easy.", tools=WEATHER, options=REASONING),
    Case("truncated", '[{"name": "get_weather", "arguments": {"city": "Dal', [],
         '[{"name": "get_weather", "arguments": {"city": "Dal', tools=WEATHER, report={"truncated": True}),
    Case("plain-list-answer-is-content", "[1, 2, 3]", [], "[1, 2, 3]"),
    Case("array-inside-prose-is-prose", 'The answer is [{"name": "get_time", "arguments": {}}].', [],
         'The answer is [{"name": "get_time", "arguments": {}}].', tools=WEATHER),
    Case("code-fence-is-content", "```python\nprint([1])\n```", [], "```python\nprint([1])\n```"),
    Case("unknown-tool-stays-content", '[{"name": "nope", "arguments": {}}]', [],
         '[{"name": "nope", "arguments": {}}]', tools=WEATHER, report={"rejected": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("xlam", CASES)
