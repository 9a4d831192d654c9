"""MiniCPM 5: bare ``<function name=...>`` elements with ``<param name=...>`` values (CDATA allowed).

Outputs are written the way the openbmb/MiniCPM5 chat template renders calls.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, date={"type": "string"})]
SUM = [tool("sum_values", nums={"type": "array", "items": {"type": "number"}}, exact={"type": "boolean"},
            meta={"type": "object"})]
HTML = [tool("html", markup={"type": "string"})]
REASONING = {"reasoning": True}


def fn(name: str, *params: tuple[str, str]) -> str:
    return f'<function name="{name}">' + "".join(f'<param name="{k}">{v}</param>' for k, v in params) + "</function>"


CASES = [
    Case("single", fn("get_weather", ("city", "上海"), ("date", "2024-06-27")),
         [("get_weather", {"city": "上海", "date": "2024-06-27"})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel-with-text-between",
         "Head\n" + fn("get_weather", ("city", "北京")) + "\nTXT\n" + fn("sum_values", ("nums", "[7, 8]")) + "\nTail",
         [("get_weather", {"city": "北京"}), ("sum_values", {"nums": [7, 8]})], "Head\n\nTXT\n\nTail",
         tools=WEATHER + SUM, report={"calls": 2}),
    Case("zero-arguments", fn("noop"), [("noop", {})], None),
    Case("nested-values", fn("sum_values", ("nums", "[1, 2.5]"), ("exact", "false"), ("meta", '{"k": {"v": [null]}}')),
         [("sum_values", {"nums": [1, 2.5], "exact": False, "meta": {"k": {"v": [None]}}})], None, tools=SUM),
    Case("cdata-value-holds-close-tag", fn("html", ("markup", '<![CDATA[<a href="/x">hi</a> </param> & more\n]]>')),
         [("html", {"markup": '<a href="/x">hi</a> </param> & more\n'})], None, tools=HTML),
    Case("plain-ampersand-value", fn("get_weather", ("city", "A & B")), [("get_weather", {"city": "A & B"})], None,
         tools=WEATHER),
    Case("indented-parameters",
         '<function name="get_weather">\n  <param name="city">北京</param>\n  <param name="date">today</param>\n'
         "</function>",
         [("get_weather", {"city": "北京", "date": "today"})], None, tools=WEATHER),
    Case("reasoning-then-call", "<think>\nNeed weather.\n</think>\n\n" + fn("get_weather", ("city", "Rome")),
         [("get_weather", {"city": "Rome"})], None, "\nNeed weather.\n", tools=WEATHER, options=REASONING),
    Case("param-without-name-is-malformed", fn("get_weather") .replace("</function>", "<param>X</param></function>"),
         [], '<function name="get_weather"><param>X</param></function>', tools=WEATHER, report={"calls": 0}),
    Case("duplicate-param-is-malformed", fn("get_weather", ("city", "A"), ("city", "B")), [],
         fn("get_weather", ("city", "A"), ("city", "B")), tools=WEATHER, report={"calls": 0}),
    Case("truncated-in-cdata", '<function name="html"><param name="markup"><![CDATA[<b>bo', [],
         '<function name="html"><param name="markup"><![CDATA[<b>bo', tools=HTML, report={"truncated": True}),
    Case("truncated-after-complete-param", '<function name="get_weather"><param name="city">Oslo</param>',
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER, report={"recovered": 1}),
    Case("unknown-tool-stays-content", fn("unknown", ("x", "1")) + "\n", [], fn("unknown", ("x", "1")) + "\n", tools=WEATHER,
         report={"rejected": 1}),
    Case("prose-mentions-function-tag", 'Call it as <function name="tool"> with params.', [],
         'Call it as <function name="tool"> with params.', report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("minicpm5", CASES)
