"""functiongemma: ``<start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>``, as
the FunctionGemma chat template renders calls; no reasoning."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

TOOLS = [tool("get_weather", location={"type": "string"}), tool("get_time", timezone={"type": "string"})]
S, E, Q = "<start_function_call>", "<end_function_call>", "<escape>"

CASES = [
    Case("double-quoted-json-string", f'{S}call:get_time{{timezone:"Europe/\\"Paris\\""}}{E}',
         [("get_time", {"timezone": 'Europe/"Paris"'})], None, tools=TOOLS),
    Case("single", f"{S}call:get_weather{{location:{Q}London{Q}}}{E}", [("get_weather", {"location": "London"})],
         None, tools=TOOLS),
    Case("parallel", f"{S}call:get_weather{{location:{Q}A{Q}}}{E}{S}call:get_time{{timezone:{Q}UTC{Q}}}{E}",
         [("get_weather", {"location": "A"}), ("get_time", {"timezone": "UTC"})], None, tools=TOOLS),
    Case("zero-arguments", f"{S}call:ping{{}}{E}", [("ping", {})], None),
    Case("numbers", f"{S}call:multiply{{a:12234585,b:48838483920}}{E}", [("multiply", {"a": 12234585, "b": 48838483920})],
         None),
    Case("nested", f"{S}call:f{{o:{{l:[{Q}x{Q},2,true]}}}}{E}", [("f", {"o": {"l": ["x", 2, True]}})], None),
    Case("content-before", f"Let me check. {S}call:get_time{{timezone:{Q}UTC{Q}}}{E}",
         [("get_time", {"timezone": "UTC"})], "Let me check.", tools=TOOLS),
    Case("malformed", f"{S}call:get_time{{timezone:{Q}UTC{Q}]{E}", [], f"{S}call:get_time{{timezone:{Q}UTC{Q}]{E}",
         tools=TOOLS, report={"aborted": 1}),
    Case("truncated", f"{S}call:get_time{{timezone:{Q}UT", [], f"{S}call:get_time{{timezone:{Q}UT", tools=TOOLS,
         report={"truncated": True}),
    Case("unknown-tool", f"{S}call:send{{to:{Q}x{Q}}}{E}", [], f"{S}call:send{{to:{Q}x{Q}}}{E}", tools=TOOLS,
         report={"rejected": 1}),
    Case("prose-mentions-marker", f"Calls start with {S} tokens.", [], f"Calls start with {S} tokens."),
    Case("escape-marker-split", f"{S}call:f{{s:{Q}a<esc b{Q}}}{E}", [("f", {"s": "a<esc b"})], None),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("functiongemma", CASES)
