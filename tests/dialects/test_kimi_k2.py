"""Kimi K2: a section of calls, each ``functions.NAME:IDX`` + ``{json}``, as the K2 templates write it."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

SB, SE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
CB, AB, CE = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
FILES = [tool("read_file", path={"type": "string"}), tool("list_dir", path={"type": "string"})]
REASONING = {"reasoning": True}


def call(call_id: str, args: str) -> str:
    return f"{CB}{call_id}{AB}{args}{CE}"


CASES = [
    Case("single", SB + call("functions.get_weather:0", '{"city": "Paris", "days": 2}') + SE,
         [("get_weather", {"city": "Paris", "days": 2})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", SB + call("functions.read_file:0", '{"path": "a.py"}')
         + call("functions.list_dir:1", '{"path": "src"}') + call("functions.read_file:2", '{"path": "b.py"}') + SE,
         [("read_file", {"path": "a.py"}), ("list_dir", {"path": "src"}), ("read_file", {"path": "b.py"})],
         None, tools=FILES),
    Case("zero-arguments", SB + call("functions.now:3", "{}") + SE, [("now", {})], None),
    Case("nested-arguments", SB + call("functions.plan:0", '{"steps": [{"do": "x", "n": [1, 2.5]}, {}], '
                                       '"meta": {"ok": true, "none": null, "s": "<|tool_call_end|>"}}') + SE,
         [("plan", {"steps": [{"do": "x", "n": [1, 2.5]}, {}], "meta": {"ok": True, "none": None,
                                                                       "s": "<|tool_call_end|>"}})], None),
    Case("content-before-and-after", "Let me look.\n" + SB + call("functions.get_weather:7", '{"city": "Oslo"}')
         + SE + "\nDone.", [("get_weather", {"city": "Oslo"})], "Let me look.\n\nDone.", tools=WEATHER),
    Case("spaces-around-markers", "Ok. " + SB + "\n " + CB + " functions.get_weather:0 " + AB
         + ' {"city": "Rome"} ' + CE + " " + SE, [("get_weather", {"city": "Rome"})], "Ok.", tools=WEATHER),
    Case("singular-section-marker", "<|tool_call_section_begin|>" + call("functions.get_weather:0", '{"city": "Kyiv"}')
         + "<|tool_call_section_end|>", [("get_weather", {"city": "Kyiv"})], None, tools=WEATHER),
    Case("section-marker-missing", call("functions.get_weather:0", '{"city": "Lima"}'),
         [("get_weather", {"city": "Lima"})], None, tools=WEATHER),
    Case("reasoning-then-call", "<think>Need the weather.</think>" + SB
         + call("functions.get_weather:0", '{"city": "Baku"}') + SE,
         [("get_weather", {"city": "Baku"})], None, "Need the weather.", tools=WEATHER, options=REASONING),
    Case("reasoning-left-open", "<think>Need the weather." + SB
         + call("functions.get_weather:0", '{"city": "Baku"}') + SE,
         [("get_weather", {"city": "Baku"})], None, "Need the weather.", tools=WEATHER, options=REASONING),
    Case("malformed-json-stays-content", "Hm. " + SB + call("functions.get_weather:0", '{"city": "Baku"') + SE,
         [], "Hm. " + SB + CB + "functions.get_weather:0" + AB + '{"city": "Baku"' + CE + SE,
         tools=WEATHER, report={"aborted": 1, "calls": 0}),
    Case("malformed-id-stays-content", SB + call("get_weather", '{"city": "Baku"}') + SE,
         [], SB + call("get_weather", '{"city": "Baku"}') + SE, tools=WEATHER, report={"rejected": 1}),
    Case("truncated-mid-arguments", "Sure. " + SB + CB + "functions.get_weather:0" + AB + '{"city": "Ba',
         [], "Sure. " + SB + CB + "functions.get_weather:0" + AB + '{"city": "Ba',
         tools=WEATHER, report={"truncated": True, "calls": 0}),
    Case("truncated-after-arguments", SB + CB + "functions.get_weather:0" + AB + '{"city": "Baku"}',
         [("get_weather", {"city": "Baku"})], None, tools=WEATHER, report={"recovered": 1, "truncated": False}),
    Case("first-call-kept-when-second-is-cut", SB + call("functions.get_weather:0", '{"city": "Rome"}')
         + CB + "functions.get_weather:1" + AB + '{"ci',
         [("get_weather", {"city": "Rome"})], CB + "functions.get_weather:1" + AB + '{"ci',
         tools=WEATHER, report={"truncated": True}),
    Case("unknown-tool-stays-content", SB + call("functions.delete_all:0", "{}") + SE,
         [], SB + call("functions.delete_all:0", "{}") + SE, tools=WEATHER, report={"rejected": 1}),
    # An empty section called nothing: no call, no markup left in content (reported, not rejected).
    Case("empty-section-is-dropped", "x" + SB + SE, [], "x", report={"rejected": 0, "repaired": 1}),
    Case("empty-section-with-space-is-dropped", "Reasoning. " + SB + "\n " + SE + " Done.", [], "Reasoning.  Done.",
         report={"rejected": 0, "repaired": 1}),
    Case("empty-section-cut-before-its-end-stays-content", "x" + SB + "\n", [], "x" + SB + "\n",
         cut=True, report={"calls": 0}),
    Case("prose-mentions-markers", "Kimi opens calls with <|tool_calls_section_begin|> and then text.",
         [], "Kimi opens calls with <|tool_calls_section_begin|> and then text.", report={"rejected": 1}),
    # Text inside the section before its first call is dropped (reported) when a call follows.
    Case("noise-before-the-first-call-is-dropped", "A " + SB + " spurious noise " + call("functions.get_weather:0",
         '{"city": "Oslo"} ') + SE, [("get_weather", {"city": "Oslo"})], "A", tools=WEATHER,
         report={"calls": 1, "rejected": 0, "repaired": 1}),
    Case("noise-then-a-malformed-call-stays-content", "A " + SB + " noise " + call("functions.get_weather:0", "nope")
         + SE, [], "A " + SB + " noise " + call("functions.get_weather:0", "nope") + SE, tools=WEATHER,
         report={"calls": 0}),
    Case("noise-then-the-section-end-stays-content", "A " + SB + " noise " + SE + " B", [],
         "A " + SB + " noise " + SE + " B", report={"rejected": 1}),
    Case("dotted-name-in-id", SB + call("functions.os.fs.read:4", '{"path": "/etc"}') + SE,
         [("os__fs__read", {"path": "/etc"})], None, tools=[tool("os__fs__read", path={"type": "string"})]),
]

# A length stop always wins: a call whose end token never came is cut, never a call.
_OPEN = SB + f"{CB}functions.get_weather:0{AB}" + '{"city": "Rome"}'
CASES += [
    Case("length-stop-right-after-the-arguments", _OPEN, [], _OPEN, tools=WEATHER, cut=True,
         report={"truncated": True, "aborted": 1, "calls": 0}),
    Case("length-stop-inside-the-call-end", _OPEN + "<|tool_call_", [], _OPEN + "<|tool_call_", tools=WEATHER,
         cut=True, report={"truncated": True, "aborted": 1}),
    Case("length-stop-after-the-call-end-keeps-the-call", _OPEN + CE + "<|tool_calls_sec",
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER, cut=True),
    Case("call-end-missing-at-a-clean-end-is-repaired", _OPEN, [("get_weather", {"city": "Rome"})], None,
         tools=WEATHER, report={"recovered": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("kimi_k2", CASES)
