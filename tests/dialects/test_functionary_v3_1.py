"""Functionary v3.1: ``<function=NAME>{json}</function>`` and raw code after ``<|python_tag|>``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}), tool("python", code={"type": "string"}), tool("noop"),
         tool("query", filter={"type": "object"})]

CASES = [
    Case("single", '<function=get_weather>{"city": "Boston"}</function>', [("get_weather", {"city": "Boston"})],
         None, tools=TOOLS),
    Case("parallel", '<function=get_weather>{"city": "A"}</function><function=get_weather>{"city": "B"}</function>',
         [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})], None, tools=TOOLS, report={"calls": 2}),
    Case("zero-arguments", "<function=noop>{}</function>", [("noop", {})], None, tools=TOOLS),
    Case("nested", '<function=query>{"filter": {"and": [{"k": 1}, {"k": [2, 3]}]}}</function>',
         [("query", {"filter": {"and": [{"k": 1}, {"k": [2, 3]}]}})], None, tools=TOOLS),
    Case("content-before", 'Looking it up. <function=get_weather>{"city": "Reno"}</function>',
         [("get_weather", {"city": "Reno"})], "Looking it up.", tools=TOOLS),
    Case("python-tag-raw-code", '<|python_tag|>import math\nprint(math.pi, "<b>")',
         [("python", {"code": 'import math\nprint(math.pi, "<b>")'})], None, tools=TOOLS),
    Case("python-tag-until-eom", "<|python_tag|>x = 1<|eom_id|>", [("python", {"code": "x = 1"})],
         None, tools=TOOLS),
    Case("malformed", "<function=get_weather>{city: Boston}</function>", [],
         "<function=get_weather>{city: Boston}</function>", tools=TOOLS, report={"calls": 0}),
    Case("truncated", '<function=get_weather>{"city": "Bo', [], '<function=get_weather>{"city": "Bo', tools=TOOLS,
         report={"truncated": True}),
    Case("unknown-tool", '<function=rm>{"path": "/"}</function>', [], '<function=rm>{"path": "/"}</function>',
         tools=TOOLS, report={"rejected": 1}),
    Case("prose-mentions-marker", "Write <function=NAME> then JSON.", [], "Write <function=NAME> then JSON.",
         tools=TOOLS, report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("functionary_v3_1", CASES)
