"""Llama 3.x / 4 JSON calls: objects at the answer's start or after <|python_tag|>, ``;``-separated.

Outputs follow the Llama 3.3 and Llama 4 JSON chat templates; built-in tools as the Llama 3.1
prompt format documents them (``<|python_tag|>TOOL.call(...)<|eom_id|>``).
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}), tool("get_time")]
SEARCH = [tool("brave_search", query={"type": "string"})]

CASES = [
    Case("single", '{"name": "get_weather", "parameters": {"city": "Oslo", "days": 2}}',
         [("get_weather", {"city": "Oslo", "days": 2})], None, tools=WEATHER, report={"calls": 1}),
    Case("python-tag", '<|python_tag|>{"name": "get_weather", "arguments": {"city": "Lima"}}',
         [("get_weather", {"city": "Lima"})], None, tools=WEATHER),
    Case("parallel-semicolons",
         '{"name": "get_weather", "parameters": {"city": "Oslo"}}; {"name": "get_time", "parameters": {}};'
         '{"name": "get_weather", "parameters": {"city": "Rome"}}',
         [("get_weather", {"city": "Oslo"}), ("get_time", {}), ("get_weather", {"city": "Rome"})], None,
         tools=WEATHER, report={"calls": 3}),
    Case("parallel-adjacent-llama4",
         '{"name": "get_time", "parameters": {}}{"name": "get_weather", "parameters": {"city": "Pune"}}',
         [("get_time", {}), ("get_weather", {"city": "Pune"})], None, tools=WEATHER),
    Case("parallel-python-tags",
         '<|python_tag|>{"name": "get_time", "parameters": {}}<|python_tag|>{"name": "get_time", "parameters": {}}',
         [("get_time", {}), ("get_time", {})], None, tools=WEATHER),
    Case("zero-arguments", '<|python_tag|>{"name": "get_time"}', [("get_time", {})], None, tools=WEATHER),
    Case("nested-arguments",
         '{"name": "plan", "parameters": {"stops": [{"city": "Oslo", "tags": ["a", "b"]}], "opts": {"x": null, "y": 1.5e2}}}',
         [("plan", {"stops": [{"city": "Oslo", "tags": ["a", "b"]}], "opts": {"x": None, "y": 150.0}})], None),
    Case("content-after", '{"name": "get_time", "parameters": {}} Let me know if you need more.',
         [("get_time", {})], "Let me know if you need more.", tools=WEATHER),
    Case("content-before-tag", "Checking now. <|python_tag|>{\"name\": \"get_time\", \"parameters\": {}}",
         [("get_time", {})], "Checking now.", tools=WEATHER),
    Case("built-in-tool", '<|python_tag|>brave_search.call(query="weather in Oslo")<|eom_id|>',
         [("brave_search", {"query": "weather in Oslo"})], None, tools=SEARCH),
    Case("bare-name-only-object-is-an-answer", '{"name": "Ada Lovelace"}', [], '{"name": "Ada Lovelace"}',
         report={"calls": 0}),
    Case("json-inside-prose-is-prose", 'The payload is {"name": "get_time", "parameters": {}} as shown.',
         [], 'The payload is {"name": "get_time", "parameters": {}} as shown.', tools=WEATHER),
    Case("malformed-stays-content", '{"name": "get_time", "parameters": {oops}}', [],
         '{"name": "get_time", "parameters": {oops}}', tools=WEATHER, report={"aborted": 1, "calls": 0}),
    Case("truncated", '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Os', [],
         '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Os', tools=WEATHER,
         report={"truncated": True, "calls": 0}),
    Case("second-call-truncated-keeps-first",
         '{"name": "get_time", "parameters": {}}; {"name": "get_weather", "parameters": {"ci',
         [("get_time", {})], '{"name": "get_weather", "parameters": {"ci', tools=WEATHER, report={"truncated": True}),
    Case("unknown-tool-stays-content", '{"name": "send_mail", "parameters": {"to": "a@b.c"}}', [],
         '{"name": "send_mail", "parameters": {"to": "a@b.c"}}', tools=WEATHER, report={"rejected": 1}),
    # Meta's Llama 3.1/3.2 prompt-format documentation shows calls with a "type" member first.
    Case("type-function-member-first", '{"type": "function", "name": "get_weather", "parameters": {"city": "Oslo"}}',
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER, report={"calls": 1}),
    Case("type-function-after-python-tag",
         '<|python_tag|>{"type": "function", "name": "get_time", "parameters": {}}; '
         '{"type": "function", "name": "get_weather", "parameters": {"city": "Rome", "days": 3}}',
         [("get_time", {}), ("get_weather", {"city": "Rome", "days": 3})], None, tools=WEATHER, report={"calls": 2}),
    Case("type-function-member-later", '{"name": "get_time", "type": "function", "parameters": {}}',
         [("get_time", {})], None, tools=WEATHER),
    Case("type-function-without-tools", '{"type": "function", "name": "lookup", "parameters": {"q": "x"}}',
         [("lookup", {"q": "x"})], None),
    Case("type-of-another-kind-is-an-answer", '{"type": "object", "name": "get_time", "parameters": {}}', [],
         '{"type": "object", "name": "get_time", "parameters": {}}', tools=WEATHER, report={"calls": 0}),
    Case("type-member-alone-is-an-answer", '{"type": "function"}', [], '{"type": "function"}', report={"calls": 0}),
    Case("prose-mentions-python-tag", "Llama writes <|python_tag|> before a call.", [],
         "Llama writes <|python_tag|> before a call.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("llama3_json", CASES)
