"""gpt-oss Harmony: channelled messages, calls to ``functions.NAME``; output continues ``<|start|>assistant``."""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
REASONING = {"reasoning": True}
IN_REASONING = {"reasoning": True, "in_reasoning": True}
THINK = "<|channel|>analysis<|message|>Need the weather.<|end|>"
NEXT = "<|start|>assistant"


def call(name: str, args: str, in_role: bool = False) -> str:
    if in_role:
        return f"{NEXT} to=functions.{name}<|channel|>commentary json<|message|>{args}<|call|>"
    return f"{NEXT}<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"


CASES = [
    Case("single", THINK + call("get_weather", '{"city": "Paris", "days": 2}'),
         [("get_weather", {"city": "Paris", "days": 2})], None, "Need the weather.", tools=WEATHER, options=REASONING),
    Case("recipient-in-role-header", THINK + call("get_weather", '{"city": "Oslo"}', in_role=True),
         [("get_weather", {"city": "Oslo"})], None, "Need the weather.", tools=WEATHER, options=REASONING),
    Case("output-starts-at-recipient", ' to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>'
         '{"city": "Lima"}<|call|>', [("get_weather", {"city": "Lima"})], None, tools=WEATHER),
    Case("parallel", call("get_weather", '{"city": "Oslo"}') + call("search", '{"q": "hotels"}'),
         [("get_weather", {"city": "Oslo"}), ("search", {"q": "hotels"})], None),
    Case("zero-arguments", "<|channel|>commentary to=functions.now <|constrain|>json<|message|>{}<|call|>",
         [("now", {})], None),
    Case("nested-arguments", "<|channel|>commentary to=functions.f<|message|>"
         '{"a": [{"b": "<|call|>"}, 2.5], "c": {"d": null, "e": true}}<|call|>',
         [("f", {"a": [{"b": "<|call|>"}, 2.5], "c": {"d": None, "e": True}})], None),
    Case("preamble-then-call", "<|channel|>commentary<|message|>Checking the forecast.<|end|>"
         + call("get_weather", '{"city": "Rome"}'), [("get_weather", {"city": "Rome"})],
         "Checking the forecast.", tools=WEATHER),
    Case("final-answer", THINK + NEXT + "<|channel|>final<|message|>It is sunny.<|return|>", [], "It is sunny.",
         "Need the weather.", options=REASONING),
    Case("reasoning-starts-in-prompt", "Need the weather.<|end|>" + call("get_weather", '{"city": "Rome"}'),
         [("get_weather", {"city": "Rome"})], None, "Need the weather.", tools=WEATHER, options=IN_REASONING),
    Case("analysis-inline-when-not-split", THINK + NEXT + "<|channel|>final<|message|>Sunny.<|return|>", [],
         THINK + "Sunny."),
    Case("call-in-analysis-channel", "<|channel|>analysis to=functions.get_weather<|message|>{\"city\": \"Rio\"}",
         [("get_weather", {"city": "Rio"})], None, tools=WEATHER, report={"recovered": 1}),
    Case("malformed-json-stays-content", "<|channel|>commentary to=functions.get_weather<|message|>{city}<|call|>",
         [], "<|channel|>commentary to=functions.get_weather<|message|>{city}<|call|>", tools=WEATHER,
         report={"aborted": 1}),
    Case("truncated-mid-arguments", "<|channel|>commentary to=functions.get_weather<|message|>{\"city\": \"R",
         [], "<|channel|>commentary to=functions.get_weather<|message|>{\"city\": \"R", tools=WEATHER,
         report={"truncated": True, "calls": 0}),
    Case("unknown-recipient-stays-content", "<|channel|>commentary to=python <|constrain|>code<|message|>print(1)",
         [], "<|channel|>commentary to=python <|constrain|>code<|message|>print(1)", tools=WEATHER,
         report={"rejected": 1}),
    Case("prose-mentions-markers", "Harmony uses <|channel|> and <|message|>\nbetween headers.", [],
         "Harmony uses <|channel|> and <|message|>\nbetween headers.", report={"rejected": 1}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("gpt_oss", CASES)
