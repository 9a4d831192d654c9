"""Seed-OSS: Qwen3-Coder XML inside ``<seed:tool_call>``, values inline, ``<seed:think>`` reasoning.

Outputs are written the way the ByteDance Seed-OSS chat template renders calls.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", location={"type": "string"}, unit={"type": "string"}, days={"type": "integer"})]
SUM = [tool("calculate_sum", numbers={"type": "array", "items": {"type": "number"}}, opts={"type": "object"})]
PATCH_TOOL = [tool("apply_patch", input={"type": "string"}),
              tool("edit", path={"type": "string"}, n={"type": "integer"})]
PATCH = ("*** Begin Patch\n*** Update File: t.py\n@@\n-x = '<parameter=a>1</parameter>'\n"
         "+x = '<parameter=a>2</parameter>\\n'\n+# </function> closes it\n*** End Patch")
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}


def call(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params)
    return f"<seed:tool_call>\n<function={name}>\n{body}</function>\n</seed:tool_call>"


CASES = [
    Case("single", call("get_weather", ("location", "Barcelona, Spain"), ("days", "2")),
         [("get_weather", {"location": "Barcelona, Spain", "days": 2})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel", call("get_weather", ("location", "Oslo")) + "\n" + call("get_weather", ("location", "Rome")),
         [("get_weather", {"location": "Oslo"}), ("get_weather", {"location": "Rome"})], None, tools=WEATHER),
    Case("zero-arguments", "<seed:tool_call>\n<function=now>\n</function>\n</seed:tool_call>", [("now", {})], None),
    Case("nested", call("calculate_sum", ("numbers", "[1, 2, 3]"), ("opts", '{"round": {"digits": 2}}')),
         [("calculate_sum", {"numbers": [1, 2, 3], "opts": {"round": {"digits": 2}}})], None, tools=SUM),
    Case("value-newlines-kept", call("get_weather", ("location", "\nMulti\nline\n")),
         [("get_weather", {"location": "\nMulti\nline\n"})], None, tools=WEATHER),
    Case("content-before", "I'll check.\n" + call("get_weather", ("location", "Paris")),
         [("get_weather", {"location": "Paris"})], "I'll check.", tools=WEATHER),
    Case("reasoning-then-call",
         "<seed:think>Budget fine.<seed:cot_budget_reflect>used 10</seed:cot_budget_reflect></seed:think>"
         + call("get_weather", ("location", "Paris")),
         [("get_weather", {"location": "Paris"})], None,
         "Budget fine.<seed:cot_budget_reflect>used 10</seed:cot_budget_reflect>", tools=WEATHER, options=REASONING),
    Case("call-quoted-in-reasoning",
         "Format would be " + call("get_weather", ("location", "Nice")) + " so.</seed:think>"
         + call("get_weather", ("location", "Lyon")),
         [("get_weather", {"location": "Lyon"})], None,
         "Format would be " + call("get_weather", ("location", "Nice")) + " so.", tools=WEATHER,
         options=IN_REASONING, report={"calls": 1}),
    Case("thinking-is-content-when-not-extracted",
         "<seed:think>As " + call("get_weather", ("location", "Nice")) + "?</seed:think>"
         + call("get_weather", ("location", "Lyon")),
         [("get_weather", {"location": "Lyon"})],
         "<seed:think>As " + call("get_weather", ("location", "Nice")) + "?</seed:think>", tools=WEATHER,
         report={"calls": 1}),
    Case("unclosed-thinking-not-extracted", "<seed:think>still going " + call("get_weather", ("location", "Nice")),
         [], "<seed:think>still going " + call("get_weather", ("location", "Nice")), tools=WEATHER,
         report={"calls": 0}),
    Case("qwen-think-tag-is-content", "<think>x</think>ok", [], "<think>x</think>ok", options=REASONING),
    Case("malformed-text-in-wrapper", "<seed:tool_call>\nget_weather(Paris)\n</seed:tool_call>", [],
         "<seed:tool_call>\nget_weather(Paris)\n</seed:tool_call>", report={"rejected": 1}),
    Case("truncated-mid-array", "<seed:tool_call>\n<function=calculate_sum>\n<parameter=numbers>[1,\n", [],
         "<seed:tool_call>\n<function=calculate_sum>\n<parameter=numbers>[1,\n", tools=SUM,
         report={"truncated": True, "calls": 0}),
    Case("unknown-tool-stays-content", call("format_disk", ("d", "c")), [], call("format_disk", ("d", "c")),
         tools=WEATHER, report={"rejected": 1}),
    Case("patch-mentioning-the-tags-inline", call("apply_patch", ("input", PATCH)),
         [("apply_patch", {"input": PATCH})], None, tools=PATCH_TOOL, report={"calls": 1, "repaired": 0}),
    Case("close-tag-inline-is-value-text", call("edit", ("path", "a</parameter>b"), ("n", "1")),
         [("edit", {"path": "a</parameter>b", "n": 1})], None, tools=PATCH_TOOL),
    Case("parameter-tag-inline-invents-no-argument", call("edit", ("path", "a<parameter=n>7")),
         [("edit", {"path": "a<parameter=n>7"})], None, tools=PATCH_TOOL),
    Case("prose-mentions-markers", "Use <seed:tool_call> blocks.", [], "Use <seed:tool_call> blocks.",
         report={"calls": 0}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("seed_oss", CASES)
