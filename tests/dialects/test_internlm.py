"""InternLM2: ``<|action_start|><|plugin|>\\n{json}<|action_end|>`` (the InternLM2 tool chat template)."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]

CASES = [
    Case("single", '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>',
         [("get_weather", {"city": "Tokyo"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", '<|action_start|><|plugin|>\n{"name": "get_time", "arguments": {}}<|action_end|>'
         '<|action_start|><|plugin|>\n{"name": "get_time", "arguments": {}}<|action_end|>',
         [("get_time", {}), ("get_time", {})], None, tools=WEATHER),
    Case("zero-arguments", '<|action_start|><|plugin|>{"name": "get_time", "parameters": {}}<|action_end|>',
         [("get_time", {})], None, tools=WEATHER),
    Case("nested-arguments", '<|action_start|><|plugin|>\n{"name": "f", "parameters": {"a": [{"b": {}}]}}<|action_end|>',
         [("f", {"a": [{"b": {}}]})], None),
    Case("space-between-specials", '<|action_start|> <|plugin|>\n{"name": "get_time", "parameters": {}}<|action_end|>',
         [("get_time", {})], None, tools=WEATHER),
    Case("content-before", 'Let me check. <|action_start|><|plugin|>{"name": "get_time", "parameters": {}}<|action_end|>',
         [("get_time", {})], "Let me check.", tools=WEATHER),
    Case("end-missing-at-end", '<|action_start|><|plugin|>\n{"name": "get_time", "parameters": {}}', [("get_time", {})],
         None, tools=WEATHER, report={"recovered": 1}),
    Case("truncated", '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"ci', [],
         '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"ci', tools=WEATHER,
         report={"truncated": True}),
    Case("malformed-stays-content", "<|action_start|><|plugin|>\nsearch the web<|action_end|>", [],
         "<|action_start|><|plugin|>\nsearch the web<|action_end|>", report={"rejected": 1}),
    Case("unknown-tool-stays-content", '<|action_start|><|plugin|>{"name": "nope", "parameters": {}}<|action_end|>', [],
         '<|action_start|><|plugin|>{"name": "nope", "parameters": {}}<|action_end|>', tools=WEATHER,
         report={"rejected": 1}),
    Case("prose-mentions-marker", "InternLM writes <|action_start|> first.", [], "InternLM writes <|action_start|> first."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("internlm", CASES)
