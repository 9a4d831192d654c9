"""Mistral: ``[TOOL_CALLS]`` + JSON array (Nemo) or ``NAME[CALL_ID]ID[ARGS]{json}`` (v11+), ``[THINK]``.

Outputs follow the Mistral Nemo, Mistral Small 3.2, Devstral and Ministral 3 chat templates.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}), tool("get_time")]
REASONING = {"reasoning": True}

CASES = [
    Case("single-v11", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}', [("get_weather", {"city": "Paris"})], None,
         tools=WEATHER, report={"calls": 1}),
    Case("call-id", '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Oslo"}',
         [("get_weather", {"city": "Oslo"})], None, tools=WEATHER),
    Case("args-token-dropped", '[TOOL_CALLS]get_weather{"city": "Rome"}', [("get_weather", {"city": "Rome"})], None,
         tools=WEATHER),
    Case("parallel-v11", '[TOOL_CALLS]get_time[ARGS]{}[TOOL_CALLS]get_weather[ARGS]{"city": "Lima"}',
         [("get_time", {}), ("get_weather", {"city": "Lima"})], None, tools=WEATHER, report={"calls": 2}),
    Case("array-form",
         '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Bern"}, "id": "abcdefghi"}, '
         '{"name": "get_time", "arguments": {}, "id": "bcdefghij"}]',
         [("get_weather", {"city": "Bern"}), ("get_time", {})], None, tools=WEATHER),
    Case("zero-arguments", "[TOOL_CALLS]get_time[ARGS]{}", [("get_time", {})], None, tools=WEATHER),
    Case("nested-arguments", '[TOOL_CALLS]plan[ARGS]{"legs": [{"from": "A", "to": ["B", "C"]}], "meta": {"ok": true}}',
         [("plan", {"legs": [{"from": "A", "to": ["B", "C"]}], "meta": {"ok": True}})], None),
    Case("content-before", 'Let me check.[TOOL_CALLS]get_time[ARGS]{}', [("get_time", {})], "Let me check.",
         tools=WEATHER),
    Case("reasoning-then-call", '[THINK]The user wants the time.[/THINK][TOOL_CALLS]get_time[ARGS]{}',
         [("get_time", {})], None, "The user wants the time.", tools=WEATHER, options=REASONING),
    Case("think-is-content-when-reasoning-off", "[THINK]hm[/THINK]Hello.", [], "[THINK]hm[/THINK]Hello."),
    # Magistral Small 2506 reasons in plain-text tags (its system prompt asks for them): split the
    # same way as [THINK], as auto splits them.
    Case("magistral-plain-think-then-call", "<think>\nThe user wants the time.\n</think>\n\nSure."
         "[TOOL_CALLS]get_time[ARGS]{}", [("get_time", {})], "\n\nSure.", "\nThe user wants the time.\n",
         tools=WEATHER, options=REASONING),
    Case("magistral-plain-think-opened-by-the-prompt", "Time.</think>It is noon.", [], "It is noon.", "Time.",
         options={"reasoning": True, "in_reasoning": True}),
    Case("magistral-plain-think-quotes-a-call", '<think>I could write [TOOL_CALLS]get_time[ARGS]{}.</think>Noon.',
         [], "Noon.", "I could write [TOOL_CALLS]get_time[ARGS]{}.", tools=WEATHER, options=REASONING),
    Case("plain-think-is-content-when-reasoning-off", "<think>hm</think>Hello.", [], "<think>hm</think>Hello."),
    Case("string-with-marker-text", '[TOOL_CALLS]echo[ARGS]{"text": "[TOOL_CALLS]x[ARGS]{}"}',
         [("echo", {"text": "[TOOL_CALLS]x[ARGS]{}"})], None),
    Case("no-arguments-is-truncated", "[TOOL_CALLS]get_time", [], "[TOOL_CALLS]get_time", tools=WEATHER,
         report={"truncated": True, "calls": 0}),
    Case("truncated-arguments", '[TOOL_CALLS]get_weather[ARGS]{"city": "Par', [],
         '[TOOL_CALLS]get_weather[ARGS]{"city": "Par', tools=WEATHER, report={"truncated": True, "calls": 0}),
    Case("malformed-array-stays-content", "[TOOL_CALLS] [not valid json]", [], "[TOOL_CALLS] [not valid json]",
         report={"rejected": 1}),
    Case("unknown-tool-stays-content", '[TOOL_CALLS]send_mail[ARGS]{"to": "x"}', [],
         '[TOOL_CALLS]send_mail[ARGS]{"to": "x"}', tools=WEATHER, report={"rejected": 1}),
    Case("unknown-in-array-keeps-earlier-calls",
         '[TOOL_CALLS][{"name": "get_time", "arguments": {}}, {"name": "send_mail", "arguments": {}}]',
         [("get_time", {})], '{"name": "send_mail", "arguments": {}}]', tools=WEATHER, report={"rejected": 1}),
    Case("prose-after-marker", "[TOOL_CALLS] I cannot call tools right now.", [],
         "[TOOL_CALLS] I cannot call tools right now.", report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("mistral", CASES)
