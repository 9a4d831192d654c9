"""DeepSeek V3.2 DSML: ``<｜DSML｜function_calls>`` blocks of invokes with ``string=`` parameters.

Outputs are written the way the DeepSeek-V3.2 chat template renders calls.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

D = "｜DSML｜"
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
SEARCH = [tool("search", query={"type": "string"}, topn={"type": "integer"}, filters={"type": "object"})]
SCORE = [tool("score", value={"type": "integer"})]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}


def param(k: str, v: str, string: bool = True) -> str:
    return f'<{D}parameter name="{k}" string="{"true" if string else "false"}">{v}</{D}parameter>\n'


def invoke(name: str, *params: str) -> str:
    return f'<{D}invoke name="{name}">\n' + "".join(params) + f"</{D}invoke>\n"


def block(*invokes: str, tag: str = "function_calls") -> str:
    return f"<{D}{tag}>\n" + "".join(invokes) + f"</{D}{tag}>"


CASES = [
    Case("single", block(invoke("get_weather", param("city", "Paris"), param("days", "3", False))),
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", block(invoke("get_weather", param("city", "Oslo")), invoke("get_weather", param("city", "Lima"))),
         [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Lima"})], None, tools=WEATHER,
         report={"calls": 2}),
    Case("zero-arguments", block(invoke("now")), [("now", {})], None),
    Case("self-closing-invoke", block(f'<{D}invoke name="now"/>\n'), [("now", {})], None),
    Case("nested-json-parameter",
         block(invoke("search", param("query", "a \"b\" <c>"), param("filters", '{"lang": ["en", "fr"], "safe": true}',
                                                                      False))),
         [("search", {"query": 'a "b" <c>', "filters": {"lang": ["en", "fr"], "safe": True}})], None, tools=SEARCH),
    Case("string-attribute-types-without-tools",
         block(invoke("f", param("a", "42"), param("b", "42", False), param("c", "[1, 2]", False))),
         [("f", {"a": "42", "b": 42, "c": [1, 2]})], None),
    Case("schema-wins-over-string-attribute", block(invoke("score", param("value", "7"))),
         [("score", {"value": 7})], None, tools=SCORE, report={"invalid": 0}),
    Case("json-object-body", block(f'<{D}invoke name="search">\n{{"query": "x", "topn": 2}}\n</{D}invoke>\n'),
         [("search", {"query": "x", "topn": 2})], None, tools=SEARCH),
    Case("arguments-wrapper-unwrapped",
         block(invoke("get_weather", param("arguments", '{"city": "Rome", "days": 1}', False))),
         [("get_weather", {"city": "Rome", "days": 1})], None, tools=WEATHER, report={"repaired": 1}),
    Case("input-wrapper-as-string-unwrapped", block(invoke("get_weather", param("input", '{"city": "Rome"}'))),
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER),
    Case("content-before-and-after", "Let me look.\n\n" + block(invoke("get_weather", param("city", "Nice"))) + "\nOK",
         [("get_weather", {"city": "Nice"})], "Let me look.\n\n\nOK", tools=WEATHER),
    Case("reasoning-then-call",
         "<think>Need the weather.</think>\n\n" + block(invoke("get_weather", param("city", "Bonn"))),
         [("get_weather", {"city": "Bonn"})], None, "Need the weather.", tools=WEATHER, options=REASONING),
    Case("call-ends-open-reasoning", "Weather first." + block(invoke("get_weather", param("city", "Bonn"))),
         [("get_weather", {"city": "Bonn"})], None, "Weather first.", tools=WEATHER, options=IN_REASONING),
    Case("ascii-bars-variant",
         '<|DSML|function_calls>\n<|DSML|invoke name="now">\n</|DSML|invoke>\n</|DSML|function_calls>',
         [("now", {})], None),
    Case("malformed-invoke-tag", block(f"<{D}invoke>\n" + param("city", "X") + f"</{D}invoke>\n"), [],
         block(f"<{D}invoke>\n" + param("city", "X") + f"</{D}invoke>\n"), tools=WEATHER,
         report={"rejected": 1, "calls": 0}),
    Case("truncated-mid-value", f'<{D}function_calls>\n<{D}invoke name="get_weather">\n'
         f'<{D}parameter name="city" string="true">Par', [],
         f'<{D}function_calls>\n<{D}invoke name="get_weather">\n<{D}parameter name="city" string="true">Par',
         tools=WEATHER, report={"truncated": True, "calls": 0}),
    Case("unknown-tool-stays-content", block(invoke("rm_rf", param("path", "/"))), [],
         block(invoke("rm_rf", param("path", "/"))), tools=WEATHER, report={"rejected": 1}),
    Case("v4-block-is-not-v32", block(invoke("now"), tag="tool_calls"), [], block(invoke("now"), tag="tool_calls")),
    Case("prose-mentions-markers", f"Write <{D}invoke name=...> inside a block.", [],
         f"Write <{D}invoke name=...> inside a block.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("deepseek_v32", CASES)
