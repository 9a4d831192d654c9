"""pythonic (Llama 3.2/4, ToolACE): a Python list of calls where the answer starts, or inside
Llama 4's ``<|python_start|>...<|python_end|>``; written as the vLLM llama3.2/llama4 pythonic
templates render calls."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}),
           tool("get_time", tz={"type": "string"})]

CASES = [
    Case("single", "[get_weather(city='Paris', days=3)]", [("get_weather", {"city": "Paris", "days": 3})], None,
         tools=WEATHER, report={"calls": 1}),
    Case("parallel", '[get_weather(city="Oslo"), get_time(tz=\'CET\'),get_weather(city="Lima", days=-2)]',
         [("get_weather", {"city": "Oslo"}), ("get_time", {"tz": "CET"}), ("get_weather", {"city": "Lima", "days": -2})],
         None, tools=WEATHER, report={"calls": 3}),
    Case("zero-arguments", "[list_files()]", [("list_files", {})], None),
    Case("nested-and-literals",
         "[create(spec={'owner': {'login': 'zoë', 'id': 7}, 'tags': ('a', \"b\")}, ok=True, none=None, "
         "j=[true, false, null], f=1.5e3, s='it\\'s \"q\"\\n')]",
         [("create", {"spec": {"owner": {"login": "zoë", "id": 7}, "tags": ["a", "b"]}, "ok": True, "none": None,
                      "j": [True, False, None], "f": 1500.0, "s": "it's \"q\"\n"})], None),
    Case("brackets-and-parens-inside-strings", "[run(code='print(a[0]) # ) ] }', note=\"[x(\")]",
         [("run", {"code": "print(a[0]) # ) ] }", "note": "[x("})], None),
    Case("keyword-names", "[import(from='a', lambda=1,)]", [("import", {"from": "a", "lambda": 1})], None),
    Case("dotted-name", "[calendar.create_event(title='demo')]", [("calendar.create_event", {"title": "demo"})], None),
    Case("python-tag-with-content-around",
         "Checking. <|python_start|>[get_weather(city='Rome')]<|python_end|> Done.",
         [("get_weather", {"city": "Rome"})], "Checking.  Done.", tools=WEATHER),
    Case("leading-whitespace", "\n  [get_time(tz='UTC')]\n", [("get_time", {"tz": "UTC"})], None, tools=WEATHER),
    Case("content-after-list", "[get_time(tz='UTC')] Here it comes.", [("get_time", {"tz": "UTC"})],
         " Here it comes.", tools=WEATHER),
    # ---------------------------------------------------------------- prose is prose
    Case("prose-bracket-mid-text", "See [get_weather(city='Paris')] in the docs.", [],
         "See [get_weather(city='Paris')] in the docs.", tools=WEATHER, report={"calls": 0, "rejected": 0}),
    Case("prose-markdown-link", "[Wikipedia](https://www.wikipedia.org) is a site.", [],
         "[Wikipedia](https://www.wikipedia.org) is a site.", report={"calls": 0}),
    Case("prose-number-list", "[1, 2, 3] are numbers", [], "[1, 2, 3] are numbers"),
    Case("prose-python-tag-without-list", "<|python_start|>print('hi')<|python_end|>", [],
         "<|python_start|>print('hi')", report={"rejected": 1}),
    # ---------------------------------------------------------------- malformed and truncated
    Case("positional-argument-is-malformed", "[get_weather('Paris')]", [], "[get_weather('Paris')]",
         tools=WEATHER, report={"rejected": 1, "calls": 0}),
    Case("expression-is-malformed", "[f(a=1+2)]", [], "[f(a=1+2)]", report={"rejected": 1}),
    Case("unbalanced", "[f(a=[1)]", [], "[f(a=[1)]", report={"rejected": 1}),
    Case("truncated-mid-string", "[get_weather(city='Par", [], "[get_weather(city='Par", tools=WEATHER,
         report={"truncated": True, "calls": 0}),
    Case("complete-call-unclosed-list", "[get_weather(city='Baku')", [("get_weather", {"city": "Baku"})], None,
         tools=WEATHER, report={"recovered": 1, "truncated": False}),
    Case("second-call-truncated", "[get_time(tz='UTC'), get_weather(city=",
         [("get_time", {"tz": "UTC"})], ", get_weather(city=", tools=WEATHER, report={"truncated": True, "calls": 1}),
    Case("unknown-tool-stays-content", "[send_email(to='x@y.z')]", [], "[send_email(to='x@y.z')]", tools=WEATHER,
         report={"rejected": 1}),
    Case("end-token-is-a-special", "[get_time(tz='UTC')]<|eot_id|>", [("get_time", {"tz": "UTC"})], None,
         tools=WEATHER, options={"drop_tokens": ("<|eot_id|>",)}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("pythonic", CASES)
