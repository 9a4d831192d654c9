"""Step-3 steptml: invokes inside ``<｜tool_calls_begin｜>`` sections with per-call markers."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
TYPED = [tool("f", s={"type": "string"}, n={"type": "number"}, o={"type": "object"}, b={"type": "boolean"})]
REASONING = {"reasoning": True}


def call(name: str, *params: tuple[str, str], sep: bool = True) -> str:
    body = "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in params)
    head = "<｜tool_call_begin｜>" + ("function<｜tool_sep｜>" if sep else "")
    return f'{head}<steptml:invoke name="{name}">{body}</steptml:invoke><｜tool_call_end｜>'


def section(*calls: str) -> str:
    return "<｜tool_calls_begin｜>" + "".join(calls) + "<｜tool_calls_end｜>"


CASES = [
    Case("single", section(call("get_weather", ("city", "Tokyo"), ("days", "2"))),
         [("get_weather", {"city": "Tokyo", "days": 2})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", section(call("get_weather", ("city", "Oslo")), call("get_weather", ("city", "Lima"))),
         [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Lima"})], None, tools=WEATHER),
    Case("without-function-sep", section(call("get_weather", ("city", "Rome"), sep=False)),
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER),
    Case("zero-arguments", section(call("refresh")), [("refresh", {})], None),
    Case("nested-and-typed",
         section(call("f", ("s", "3.14"), ("n", "3.14"), ("o", '{"a": [1, {"b": null}]}'), ("b", "true"))),
         [("f", {"s": "3.14", "n": 3.14, "o": {"a": [1, {"b": None}]}, "b": True})], None, tools=TYPED),
    Case("content-around", "Let me check.\n\n" + section(call("get_weather", ("city", "Kyoto"))) + "\n\nOne moment.",
         [("get_weather", {"city": "Kyoto"})], "Let me check.\n\n\n\nOne moment.", tools=WEATHER),
    Case("reasoning-then-call", "<think>Tokyo weather.</think>" + section(call("get_weather", ("city", "Tokyo"))),
         [("get_weather", {"city": "Tokyo"})], None, "Tokyo weather.", tools=WEATHER, options=REASONING),
    Case("ascii-bar-spelling",
         '<|tool_calls_begin|><|tool_call_begin|>function<|tool_sep|><steptml:invoke name="refresh">'
         "</steptml:invoke><|tool_call_end|><|tool_calls_end|>",
         [("refresh", {})], None),
    Case("escaped-looking-strings-kept", section(call("f", ("s", 'C:\\Users\\a "b"\nline2'))),
         [("f", {"s": 'C:\\Users\\a "b"\nline2'})], None, tools=TYPED),
    Case("malformed-text-in-section", "<｜tool_calls_begin｜>get_weather(city=Paris)<｜tool_calls_end｜>", [],
         "<｜tool_calls_begin｜>get_weather(city=Paris)<｜tool_calls_end｜>", report={"rejected": 1}),
    Case("truncated-after-invoke-tag", '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="func">', [],
         '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="func">', report={"truncated": True}),
    Case("unknown-tool-stays-content", section(call("reboot")), [], section(call("reboot")), tools=WEATHER,
         report={"rejected": 1}),
    Case("call-markers-without-section-are-prose",
         '<｜tool_call_begin｜><steptml:invoke name="func"></steptml:invoke><｜tool_call_end｜>', [],
         '<｜tool_call_begin｜><steptml:invoke name="func"></steptml:invoke><｜tool_call_end｜>'),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("step3", CASES)
