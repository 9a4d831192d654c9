"""gemma4: ``<|tool_call>call:NAME{k:v,...}<tool_call|>`` with ``<|"|>``-delimited strings, as the
Gemma 4 chat template renders calls; reasoning in ``<|channel>thought ... <channel|>``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}),
         tool("get_time", tz={"type": "string"})]
R = {"reasoning": True}
Q = '<|"|>'
S, E = "<|tool_call>", "<tool_call|>"

CASES = [
    Case("double-quoted-json-string", f'{S}call:get_time{{tz:"raw \\"quoted\\", a, b"}}{E}',
         [("get_time", {"tz": 'raw "quoted", a, b'})], None, tools=TOOLS),
    Case("double-quoted-escapes", f'{S}call:get_time{{tz:"a\\nb \\u00e9 \\\\"}}{E}',
         [("get_time", {"tz": "a\nb \u00e9 \\"})], None, tools=TOOLS),
    Case("double-quoted-malformed-escape", f'{S}call:get_time{{tz:"a\\qb"}}{E}', [],
         f'{S}call:get_time{{tz:"a\\qb"}}{E}', tools=TOOLS, report={"calls": 0}),
    Case("single", f"{S}call:get_weather{{city:{Q}Paris{Q},days:3}}{E}",
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=TOOLS, report={"calls": 1}),
    Case("parallel-blocks", f"{S}call:get_time{{tz:{Q}CET{Q}}}{E}{S}call:get_weather{{city:{Q}Oslo{Q}}}{E}",
         [("get_time", {"tz": "CET"}), ("get_weather", {"city": "Oslo"})], None, tools=TOOLS),
    Case("two-calls-one-block", f"{S}call:get_time{{tz:{Q}A{Q}}}call:get_time{{tz:{Q}B{Q}}}{E}",
         [("get_time", {"tz": "A"}), ("get_time", {"tz": "B"})], None, tools=TOOLS),
    Case("zero-arguments", f"{S}call:get_status{{}}{E}", [("get_status", {})], None),
    Case("nested", f"{S}call:cfg{{opts:{{theme:{Q}dark{Q},sizes:[1, -2.5, 1.5e3],flags:[]}},on:true,"
         f"off:False,none:null,empty:{{}},list:[{Q}a{Q},{{k:{Q}v{Q}}}]}}{E}",
         [("cfg", {"opts": {"theme": "dark", "sizes": [1, -2.5, 1500.0], "flags": []}, "on": True, "off": False,
                   "none": None, "empty": {}, "list": ["a", {"k": "v"}]})], None),
    Case("strings-are-raw", f'{S}call:write{{text:{Q}a "quoted" \\ {{key: value}}, [x]\nline 2 <b>{Q}}}{E}',
         [("write", {"text": 'a "quoted" \\ {key: value}, [x]\nline 2 <b>'})], None),
    Case("quoted-key", f"{S}call:f{{{Q}my key{Q}:1}}{E}", [("f", {"my key": 1})], None),
    Case("content-before-and-after", f"Let me check. {S}call:get_time{{tz:{Q}UTC{Q}}}{E} Done.",
         [("get_time", {"tz": "UTC"})], "Let me check.  Done.", tools=TOOLS),
    Case("reasoning-before-call",
         f"<|channel>thought\nThe user wants the time.\n<channel|>{S}call:get_time{{tz:{Q}UTC{Q}}}{E}",
         [("get_time", {"tz": "UTC"})], None, "\nThe user wants the time.\n", tools=TOOLS, options=R),
    Case("empty-thought", "<|channel>thought<channel|>Hello.", [], "Hello.", options=R),
    Case("stray-channel-tokens-dropped", "<|channel>thought\nhm<channel|>Done.<channel|>", [], "Done.", "\nhm",
         options=R, report={"repaired": 1}),
    Case("stray-tokens-kept-when-reasoning-inline", "Done.<channel|>", [], "Done.<channel|>"),
    Case("malformed-stays-content", f"{S}call:get_time{{tz {Q}UTC{Q}}}{E}", [],
         f"{S}call:get_time{{tz {Q}UTC{Q}}}{E}", tools=TOOLS, report={"aborted": 1, "calls": 0}),
    Case("not-a-call", f"{S}hello{E}", [], f"{S}hello{E}", report={"rejected": 1}),
    Case("truncated-in-string", f"{S}call:get_weather{{city:{Q}Lon", [], f"{S}call:get_weather{{city:{Q}Lon",
         tools=TOOLS, report={"truncated": True, "calls": 0}),
    Case("close-marker-missing", f"{S}call:get_time{{tz:{Q}UTC{Q}}}", [("get_time", {"tz": "UTC"})], None,
         tools=TOOLS, report={"recovered": 1}),
    Case("unknown-tool", f"{S}call:send{{to:{Q}x{Q}}}{E}", [], f"{S}call:send{{to:{Q}x{Q}}}{E}", tools=TOOLS,
         report={"rejected": 1}),
    Case("prose-mentions-marker", "The <|tool_call> token starts a call.", [],
         "The <|tool_call> token starts a call.", report={"calls": 0}),
    Case("unquoted-string-repaired", f"{S}call:f{{mode:fast}}{E}", [("f", {"mode": "fast"})], None,
         report={"repaired": 1}),
]

# A length stop always wins: a call whose end token never came is cut, never a call; a call that
# the next call followed stands.
_CALL = f"{S}call:get_weather{{city:{Q}Rome{Q}}}"
CASES += [
    Case("length-stop-right-after-the-arguments", _CALL, [], _CALL, tools=TOOLS, cut=True,
         report={"truncated": True, "aborted": 1, "calls": 0}),
    Case("length-stop-inside-the-end-token", _CALL + "<tool_", [], _CALL + "<tool_", tools=TOOLS, cut=True,
         report={"truncated": True, "aborted": 1}),
    Case("length-stop-after-the-end-token-keeps-the-call", _CALL + E, [("get_weather", {"city": "Rome"})], None,
         tools=TOOLS, cut=True),
    Case("length-stop-in-the-second-call-of-a-block", _CALL + f"call:get_time{{tz:{Q}CET{Q}}}",
         [("get_weather", {"city": "Rome"})], f"call:get_time{{tz:{Q}CET{Q}}}", tools=TOOLS, cut=True,
         report={"truncated": True, "aborted": 1}),
    Case("a-failed-second-call-returns-only-its-own-text", _CALL + f"call:get_time{{tz:{Q}CET{Q},,}}{E}",
         [("get_weather", {"city": "Rome"})], f"call:get_time{{tz:{Q}CET{Q},,}}{E}", tools=TOOLS,
         report={"aborted": 1}),
    Case("end-token-missing-at-a-clean-end-is-repaired", _CALL, [("get_weather", {"city": "Rome"})], None,
         tools=TOOLS, report={"recovered": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("gemma4", CASES)
