"""DeepSeek V4 / V4.1 DSML: ``<｜DSML｜tool_calls>`` (V4.1: ``<｜DSML｜ calls>``) blocks of invokes.

Outputs are written the way the DeepSeek-V4 chat template renders calls; V4.1 rows put a space
after the bars.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

D = "｜DSML｜"
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
TODO = [tool("todo", items={"type": "array", "items": {"type": "object"}}, note={"type": "string"})]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}


def param(k: str, v: str, string: bool = True, d: str = D) -> str:
    return f'<{d}parameter name="{k}" string="{"true" if string else "false"}">{v}</{d}parameter>\n'


def invoke(name: str, *params: str, d: str = D) -> str:
    return f'<{d}invoke name="{name}">\n' + "".join(params) + f"</{d}invoke>\n"


def block(*invokes: str, d: str = D, tag: str = "tool_calls") -> str:
    return f"<{d}{tag}>\n" + "".join(invokes) + f"</{d}{tag}>"


CASES = [
    Case("single", block(invoke("get_weather", param("city", "Paris"), param("days", "3", False))),
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel-with-self-closing",
         block(invoke("get_weather", param("city", "Oslo")), f'<{D}invoke name="now"/>\n'),
         [("get_weather", {"city": "Oslo"}), ("now", {})], None),
    Case("zero-arguments", block(invoke("now")), [("now", {})], None),
    Case("nested-array-of-objects",
         block(invoke("todo", param("items", '[{"t": "milk", "done": false}, {"t": "dog", "tags": ["a"]}]', False),
                      param("note", "multi\nline\n"))),
         [("todo", {"items": [{"t": "milk", "done": False}, {"t": "dog", "tags": ["a"]}], "note": "multi\nline\n"})],
         None, tools=TODO),
    Case("content-before", "Final answer.\n" + block(invoke("get_weather", param("city", "Nice"))),
         [("get_weather", {"city": "Nice"})], "Final answer.", tools=WEATHER),
    Case("reasoning-then-call", "<think>Check it.</think>" + block(invoke("get_weather", param("city", "Bonn"))),
         [("get_weather", {"city": "Bonn"})], None, "Check it.", tools=WEATHER, options=REASONING),
    Case("block-opened-inside-reasoning", "I will call it now.\n" + block(invoke("get_weather", param("city", "Ulm"))),
         [("get_weather", {"city": "Ulm"})], None, "I will call it now.\n", tools=WEATHER, options=IN_REASONING),
    Case("v41-spaced-spelling",
         block(invoke("get_weather", param("city", "Graz", d=D + " "), d=D + " "), d=D + " ", tag="calls"),
         [("get_weather", {"city": "Graz"})], None, tools=WEATHER),
    Case("function-calls-block-is-v32-only", block(invoke("now"), tag="function_calls"), [],
         block(invoke("now"), tag="function_calls")),
    Case("missing-invoke-close", f"<{D}tool_calls>\n" + f'<{D}invoke name="now">\n' + f"</{D}tool_calls>",
         [("now", {})], None, report={"repaired": 1}),
    Case("malformed-parameter-without-name",
         block(f'<{D}invoke name="get_weather">\n<{D}parameter string="true">X</{D}parameter>\n</{D}invoke>\n'), [],
         block(f'<{D}invoke name="get_weather">\n<{D}parameter string="true">X</{D}parameter>\n</{D}invoke>\n'),
         tools=WEATHER, report={"calls": 0}),
    Case("truncated-in-invoke-tag", f'<{D}tool_calls>\n<{D}invoke name="get_w', [],
         f'<{D}tool_calls>\n<{D}invoke name="get_w', tools=WEATHER, report={"truncated": True}),
    Case("truncated-after-complete-parameter",
         f'<{D}tool_calls>\n<{D}invoke name="get_weather">\n' + param("city", "Oslo"),
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER, report={"recovered": 1}),
    Case("unknown-tool-stays-content", block(invoke("shutdown")), [], block(invoke("shutdown")), tools=WEATHER,
         report={"rejected": 1}),
    Case("prose-mentions-markers", f"The block starts with <{D}tool_calls> and lists invokes.", [],
         f"The block starts with <{D}tool_calls> and lists invokes.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("deepseek_v4", CASES)
