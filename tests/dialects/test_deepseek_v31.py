"""DeepSeek V3.1: ``NAME<｜tool▁sep｜>{json}`` per call inside a section; ``<think>`` reasoning."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

SB, SE, CB, CE, SEP = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
IN_REASONING = {"reasoning": True, "in_reasoning": True}


def call(name: str, args: str) -> str:
    return f"{CB}{name}{SEP}{args}{CE}"


CASES = [
    Case("single", SB + call("get_weather", '{"city": "Paris", "days": 3}') + SE,
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", SB + call("get_weather", '{"city": "Paris"}') + call("get_time", '{"tz": "CET"}') + SE,
         [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})], None),
    Case("zero-arguments", SB + call("now", "{}") + SE, [("now", {})], None),
    Case("nested-arguments", SB + call("f", '{"a": {"b": [1, -2e3, "x<｜tool▁call▁end｜>"]}, "t": true}') + SE,
         [("f", {"a": {"b": [1, -2000.0, "x<｜tool▁call▁end｜>"]}, "t": True})], None),
    Case("content-before-and-after", "CONTENT" + SB + call("get_weather", '{"city": "Rome"}') + SE + " after",
         [("get_weather", {"city": "Rome"})], "CONTENT after", tools=WEATHER),
    Case("reasoning-before-call", "REASONING</think>" + SB + call("get_weather", '{"city": "Rome"}') + SE,
         [("get_weather", {"city": "Rome"})], None, "REASONING", tools=WEATHER, options=IN_REASONING),
    # V3.1 calls tools only in non-thinking mode: a section written while thinking is thought.
    Case("call-section-inside-reasoning-is-reasoning",
         "Maybe " + SB + call("get_weather", '{"city": "Oslo"}') + SE + " or not.</think>"
         + SB + call("get_weather", '{"city": "Rome"}') + SE,
         [("get_weather", {"city": "Rome"})], None,
         "Maybe " + SB + call("get_weather", '{"city": "Oslo"}') + SE + " or not.", tools=WEATHER, options=IN_REASONING),
    Case("underscore-spelling", (SB + call("get_weather", '{"city": "Rome"}') + SE).replace("▁", "_"),
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER),
    Case("spaces-between-specials", SB + " " + CB + "get_weather" + SEP + ' {"city": "Rome"} ' + CE + " " + SE,
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER),
    Case("malformed-json-stays-content", SB + call("get_weather", "{city: Rome}") + SE,
         [], SB + call("get_weather", "{city: Rome}") + SE, tools=WEATHER, report={"aborted": 1}),
    Case("truncated-mid-arguments", "x" + SB + CB + "get_weather" + SEP + '{"city": "Ro', [],
         "x" + SB + CB + "get_weather" + SEP + '{"city": "Ro', tools=WEATHER, report={"truncated": True}),
    Case("truncated-after-arguments", SB + CB + "get_weather" + SEP + '{"city": "Rome"}<｜tool▁ca',
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER, report={"recovered": 1}),
    Case("unknown-tool-stays-content", SB + call("rm_rf", "{}") + SE, [], SB + call("rm_rf", "{}") + SE,
         tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-markers", "Calls start with <｜tool▁call▁begin｜> in V3.1.", [],
         "Calls start with <｜tool▁call▁begin｜> in V3.1.", report={"rejected": 1}),
]

# A length stop always wins: a call whose end token never came is cut, never a call.
_OPEN = SB + f"{CB}get_weather{SEP}" + '{"city": "Rome"}'
CASES += [
    Case("length-stop-right-after-the-arguments", _OPEN, [], _OPEN, tools=WEATHER, cut=True,
         report={"truncated": True, "aborted": 1, "calls": 0}),
    Case("length-stop-inside-the-call-end", _OPEN + "<｜tool▁call▁e", [], _OPEN + "<｜tool▁call▁e", tools=WEATHER,
         cut=True, report={"truncated": True, "aborted": 1}),
    Case("length-stop-after-the-call-end-keeps-the-call", _OPEN + CE, [("get_weather", {"city": "Rome"})], None,
         tools=WEATHER, cut=True),
    Case("length-stop-keeps-the-first-of-two-calls", _OPEN + CE + call("get_weather", '{"city": "Oslo"}')[:-3],
         [("get_weather", {"city": "Rome"})], call("get_weather", '{"city": "Oslo"}')[:-3], tools=WEATHER, cut=True,
         report={"truncated": True, "aborted": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("deepseek_v31", CASES)
