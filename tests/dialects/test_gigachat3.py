"""GigaChat 3 / 3.1: one JSON call object in a ``function call`` message or after ``<|function_call|>``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

MEM = [tool("remember", key={"type": "string"}, value={}), tool("get_weather", city={"type": "string"}),
       tool("clock")]
ROLE = "<|message_sep|>\n\nfunction call<|role_sep|>\n"
MARK = "<|function_call|>"

CASES = [
    Case("single-v3", ROLE + '{"name": "get_weather", "arguments": {"city": "Kazan"}}',
         [("get_weather", {"city": "Kazan"})], None, tools=MEM, report={"calls": 1, "repaired": 0}),
    Case("single-v31-with-content", "Проверю." + MARK + '{"name": "get_weather", "arguments": {"city": "Omsk"}}',
         [("get_weather", {"city": "Omsk"})], "Проверю.", tools=MEM),
    Case("zero-arguments", MARK + '{"name": "clock", "arguments": {}}', [("clock", {})], None, tools=MEM),
    Case("nested", ROLE + '{"name": "remember", "arguments": {"key": "prefs", "value": {"short": true, '
         '"langs": ["ru", "en"]}}}', [("remember", {"key": "prefs", "value": {"short": True, "langs": ["ru", "en"]}})],
         None, tools=MEM),
    Case("end-of-message-consumed", "Ok." + ROLE + '{"name": "clock", "arguments": {}}<|message_sep|>\n\n',
         [("clock", {})], "Ok.", tools=MEM),
    Case("eos-consumed", MARK + '{"name": "clock", "arguments": {}}</s>', [("clock", {})], None, tools=MEM),
    Case("two-call-messages", ROLE + '{"name": "clock", "arguments": {}}' + ROLE
         + '{"name": "get_weather", "arguments": {"city": "Tver"}}',
         [("clock", {}), ("get_weather", {"city": "Tver"})], None, tools=MEM, report={"calls": 2}),
    Case("text-after-call", MARK + '{"name": "clock", "arguments": {}} and then some', [("clock", {})],
         "and then some", tools=MEM),
    Case("malformed-stays-content", ROLE + '{"name": "clock", "arguments": {oops}}', [],
         ROLE + '{"name": "clock", "arguments": {oops}}', tools=MEM, report={"calls": 0}),
    Case("arguments-not-json", MARK + '{"name": "clock", "arguments": "now"}', [],
         MARK + '{"name": "clock", "arguments": "now"}', tools=MEM, report={"calls": 0, "aborted": 1}),
    Case("truncated", MARK + '{"name": "get_weather", "arguments": {"city": "Ufa', [],
         MARK + '{"name": "get_weather", "arguments": {"city": "Ufa', tools=MEM, report={"truncated": True}),
    Case("unknown-tool", MARK + '{"name": "transfer", "arguments": {"sum": 5}}', [],
         MARK + '{"name": "transfer", "arguments": {"sum": 5}}', tools=MEM, report={"rejected": 1}),
    Case("prose-mentions-function-call", "The function call role carries the call.", [],
         "The function call role carries the call."),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("gigachat3", CASES)
