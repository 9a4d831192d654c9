"""Kimi K3 (XTML): a ``tools`` block of ``call`` elements with ``argument`` children, all special tokens."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool
from toolbridge import get_dialect

O, C, S = "<|open|>", "<|close|>", "<|sep|>"
TOOLS_OPEN, TOOLS_CLOSE = f"{O}tools{S}", f"{C}tools{S}"
WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
FILES = [tool("read_file", path={"type": "string"}), tool("list_dir", path={"type": "string"})]
REASONING = {"reasoning": True}
DROP = {"drop_tokens": get_dialect("kimi_k3").end_tokens}  # the upstream kept special tokens


def arg(key: str, value: str, kind: str = "string") -> str:
    return f'{O}argument key="{key}" type="{kind}"{S}{value}{C}argument{S}'


def call(name: str, *args: str, index: int = 1) -> str:
    return f'{O}call tool="{name}" index="{index}"{S}' + "".join(args) + f"{C}call{S}"


def block(*calls: str) -> str:
    return TOOLS_OPEN + "".join(calls) + TOOLS_CLOSE


CASES = [
    Case("single", block(call("get_weather", arg("city", "Paris"), arg("days", "3", "integer"))),
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", block(call("read_file", arg("path", "a.py")), call("list_dir", arg("path", "src"), index=2),
                           call("read_file", arg("path", "b.py"), index=3)),
         [("read_file", {"path": "a.py"}), ("list_dir", {"path": "src"}), ("read_file", {"path": "b.py"})],
         None, tools=FILES),
    Case("zero-arguments", block(call("now")), [("now", {})], None),
    Case("nested-json-arguments", block(call("plan", arg("steps", '[{"do": "x", "n": [1, 2.5]}]', "array"),
                                             arg("meta", '{"ok": true, "none": null}', "object"))),
         [("plan", {"steps": [{"do": "x", "n": [1, 2.5]}], "meta": {"ok": True, "none": None}})], None),
    Case("string-type-keeps-digits-and-lines", block(call("note", arg("code", "02134"), arg("text", "a\n<b>\n"))),
         [("note", {"code": "02134", "text": "a\n<b>\n"})], None),
    Case("escaped-attributes", block(f'{O}call tool="lookup" index="1"{S}'
                                     f'{O}argument key="q&amp;a" type="string"{S}R&amp;D{C}argument{S}{C}call{S}'),
         [("lookup", {"q&a": "R&amp;D"})], None),
    Case("prefilled-response-then-call", "Let me check." + f"{C}response{S}" + block(call("get_weather",
         arg("city", "Oslo"))), [("get_weather", {"city": "Oslo"})], "Let me check.", tools=WEATHER, options=DROP),
    Case("response-block-is-content", f"{O}response{S}Hello there.{C}response{S}{C}message{S}", [], "Hello there.",
         options=DROP),
    Case("end-tokens-never-reach-content", f"Hi.{C}response{S}{C}message{S}", [], "Hi."),
    Case("reasoning-then-response-then-call", f"{O}think{S}Need the weather.{C}think{S}{O}response{S}"
         f"On it.{C}response{S}" + block(call("get_weather", arg("city", "Baku"))),
         [("get_weather", {"city": "Baku"})], "On it.", "Need the weather.", tools=WEATHER, options=REASONING | DROP),
    Case("spaces-between-special-tokens", f"{O} tools {S}" + f'{O} call tool="get_weather" index="1" {S}'
         f'{O} argument key="city" type="string"{S}Rome{C} argument {S}{C} call{S}{C}tools {S}',
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER),
    Case("tools-block-missing", call("get_weather", arg("city", "Lima")), [("get_weather", {"city": "Lima"})],
         None, tools=WEATHER),
    Case("argument-without-key-stays-content", "Hm. " + block(call("get_weather", f'{O}argument type="string"{S}x{C}argument{S}')),
         [], "Hm. " + block(call("get_weather", f'{O}argument type="string"{S}x{C}argument{S}')), tools=WEATHER,
         report={"aborted": 1, "calls": 0}),
    Case("json-argument-not-json-is-kept-and-flagged", block(call("plan", arg("steps", "[1, 2", "array"))),
         [("plan", {"steps": "[1, 2"})], None, tools=[tool("plan", steps={"type": "array"})], report={"invalid": 1}),
    Case("truncated-mid-argument", "Sure. " + TOOLS_OPEN + f'{O}call tool="get_weather" index="1"{S}'
         + f'{O}argument key="city" type="string"{S}Ba', [],
         "Sure. " + TOOLS_OPEN + f'{O}call tool="get_weather" index="1"{S}' + f'{O}argument key="city" type="string"{S}Ba',
         tools=WEATHER, report={"truncated": True, "calls": 0}),
    Case("first-call-kept-when-second-is-cut", TOOLS_OPEN + call("get_weather", arg("city", "Rome"))
         + f'{O}call tool="get_weather" index="2"{S}{O}argument key="ci',
         [("get_weather", {"city": "Rome"})], f'{O}call tool="get_weather" index="2"{S}{O}argument key="ci',
         tools=WEATHER, report={"truncated": True}),
    Case("prose-mentions-the-tools-opener", f"The token {TOOLS_OPEN} opens a section. Nothing follows.", [],
         f"The token {TOOLS_OPEN} opens a section. Nothing follows.", report={"rejected": 1}),
    Case("reasoning-left-open-before-the-call", "Weather needed." + block(call("get_weather", arg("city", "Tunis"))),
         [("get_weather", {"city": "Tunis"})], None, "Weather needed.", tools=WEATHER,
         options={"reasoning": True, "in_reasoning": True}),
    Case("response-opened-inside-prompt-opened-reasoning-ends-it", f"Weather, then answer.{O}response{S}It is sunny."
         f"{C}response{S}{C}message{S}", [], "It is sunny.", "Weather, then answer.",
         options={"reasoning": True, "in_reasoning": True}),
    Case("response-opened-inside-reasoning-then-call", f"{O}think{S}Need it.{O}response{S}Checking."
         + block(call("get_weather", arg("city", "Quito"))), [("get_weather", {"city": "Quito"})], "Checking.",
         "Need it.", tools=WEATHER, options=REASONING),
    Case("response-close-inside-reasoning-stays-reasoning", f"Plan.{C}response{S}More plan.{C}think{S}Done.", [],
         "Done.", "Plan.More plan.", options={"reasoning": True, "in_reasoning": True}),
    Case("response-opener-without-reasoning-split-is-dropped", f"Thinking.{O}response{S}Answer.", [],
         "Thinking.Answer."),
    # An argument close inside a value is value text unless the layout places one there (the
    # next argument, the call's or the block's close, the next call or the end follow it).
    Case("argument-close-inside-a-value", block(call("f", arg("a", f"y{C}argument{S} x"))),
         [("f", {"a": f"y{C}argument{S} x"})], None, report={"calls": 1, "repaired": 0}),
    Case("argument-close-at-a-value-start-then-another-argument",
         block(call("write_file", arg("content", f"{C}argument{S} is how args end"), arg("path", "x.txt"))),
         [("write_file", {"content": f"{C}argument{S} is how args end", "path": "x.txt"})], None),
    Case("argument-close-then-white-space-then-the-call-close",
         block(call("f", arg("a", "y") + " \n ")),
         [("f", {"a": "y"})], None),
    Case("argument-close-quoted-twice", block(call("f", arg("a", f"{C}argument{S}{C}argument{S}z"))),
         [("f", {"a": f"{C}argument{S}{C}argument{S}z"})], None),
    Case("unknown-tool-stays-content", block(call("delete_all")), [], block(call("delete_all")), tools=WEATHER,
         report={"rejected": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("kimi_k3", CASES)

# Under ``auto`` the response channel's opener ends a prompt-opened reasoning too (the family's
# ``Dialect.answer_opens``), whatever follows it.
AUTO_CASES = [
    Case("auto-response-opened-inside-prompt-opened-reasoning-ends-it", f"Weather, then answer.{O}response{S}"
         f"It is sunny.{C}response{S}{C}message{S}", [], "It is sunny.", "Weather, then answer.",
         options={"reasoning": True, "in_reasoning": True}),
    Case("auto-response-only", f"{O}response{S}Hello world{C}response{S}{C}message{S}", [], "Hello world",
         options={"reasoning": True, "in_reasoning": True}),
    Case("auto-response-opened-inside-reasoning-then-call", f"Need it.{O}response{S}Checking.{C}response{S}"
         + block(call("get_weather", arg("city", "Oslo"))), [("get_weather", {"city": "Oslo"})], "Checking.",
         "Need it.", tools=WEATHER, options={"reasoning": True, "in_reasoning": True}),
]

test_auto_whole, test_auto_per_character, test_auto_random_chunkings = make_table_tests("auto", AUTO_CASES)
