from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]

CASES = [
    Case("single", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
         [("get_weather", {"city": "Paris"})], None, tools=WEATHER),
    Case("prose", "a <b> c, x < y", [], "a <b> c, x < y"),
    Case("close-tag-in-string", '<tool_call>{"name": "f", "arguments": {"s": "</tool_call>"}}</tool_call>',
         [("f", {"s": "</tool_call>"})], None),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("hermes", CASES)
