"""Muse Glimmer / Spark: recipient-addressed messages; calls are ATEM blocks sent to a tool.

Outputs continue the prompt's ``<|start|>assistant``: the first message's header starts at
`` to=`` (or the caller feeds that prompt tail first), later ones at ``<|start|>``.
"""

from __future__ import annotations

from tests.harness import Case, make_table_tests, tool
from toolbridge.parsing.auto import dialect_for_model

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}),
           tool("read", path={"type": "string"}),
           tool("weather.get", city={"type": "string"})]
CONF = [tool("configure", opts={"type": "object"}, ports={"type": "array", "items": {"type": "integer"}},
             zip={"type": "string"})]
REASONING = {"reasoning": True}


def param(key: str, value: str) -> str:
    return f'<atem:parameter name="{key}">{value}</atem:parameter>\n'


def atem(name: str, *params: str) -> str:
    return f'<atem:function_calls>\n<atem:invoke name="{name}">\n' + "".join(params) + "</atem:invoke>\n</atem:function_calls>"


def message(recipient: str, body: str, end: str = "<|eom|>", start: str = "<|start|>assistant ") -> str:
    return f"{start}to={recipient}<|message|>{body}{end}"


THINK = " to=self<|message|>Need the weather.<|eom|>"

CASES = [
    Case("single", message("get_weather", atem("get_weather", param("city", "Paris"), param("days", "3"))),
         [("get_weather", {"city": "Paris", "days": 3})], None, tools=WEATHER, report={"calls": 1}),
    Case("parallel-one-message-each",
         message("get_weather", atem("get_weather", param("city", "Oslo")))
         + message("get_weather", atem("get_weather", param("city", "Lima"), param("days", "2")), "<|eot|>"),
         [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Lima", "days": 2})], None,
         tools=WEATHER, report={"calls": 2}),
    Case("zero-arguments", message("list_files", atem("list_files")), [("list_files", {})], None),
    Case("nested-json-values",
         message("configure", atem("configure", param("opts", '{"retries": 3, "tls": {"verify": false}}'),
                                   param("ports", "[80, 443]"), param("zip", "02134"))),
         [("configure", {"opts": {"retries": 3, "tls": {"verify": False}}, "ports": [80, 443], "zip": "02134"})],
         None, tools=CONF),
    Case("json-if-it-parses-else-raw-without-tools",
         message("note", atem("note", param("n", "42"), param("flags", '["a"]'), param("text", "hi there"))),
         [("note", {"n": 42, "flags": ["a"], "text": "hi there"})], None),
    Case("reasoning-before-call", THINK + message("get_weather", atem("get_weather", param("city", "Paris"))),
         [("get_weather", {"city": "Paris"})], None, "Need the weather.", tools=WEATHER, options=REASONING),
    Case("reasoning-kept-as-written-when-not-split",
         THINK + message("get_weather", atem("get_weather", param("city", "Paris"))),
         [("get_weather", {"city": "Paris"})], THINK, tools=WEATHER),
    Case("reasoning-then-answer", THINK + message("user", "It is sunny.", "<|eot|>"), [], " It is sunny.",
         "Need the weather.", tools=WEATHER, options=REASONING),
    Case("answer-after-prefilled-header", "<|start|>assistant" + message("user", "Hello.", "<|eot|>", start=" "),
         [], "Hello.", tools=WEATHER),
    Case("call-then-answer",
         message("read", atem("read", param("path", "/etc/hosts"))) + message("user", "Read it.", "<|eot|>"),
         [("read", {"path": "/etc/hosts"})], "Read it.", tools=WEATHER),
    Case("reasoning-ended-by-the-next-header",
         " to=self<|message|>Oslo, then.<|start|>assistant " + message("get_weather", atem("get_weather", param("city", "Oslo")), start=""),
         [("get_weather", {"city": "Oslo"})], None, "Oslo, then.", tools=WEATHER, options=REASONING),
    Case("call-block-inside-the-answer",
         "<|start|>assistant to=user<|message|>Checking. " + atem("get_weather", param("city", "Oslo")) + "<|eot|>",
         [("get_weather", {"city": "Oslo"})], "Checking.", tools=WEATHER),
    Case("doubled-namespace-normalised", message("read.read", atem("read.read", param("path", "a.txt"))),
         [("read", {"path": "a.txt"})], None, tools=WEATHER, report={"repaired": 1}),
    Case("dotted-name-kept", message("weather.get", atem("weather.get", param("city", "Bonn"))),
         [("weather.get", {"city": "Bonn"})], None, tools=WEATHER, report={"repaired": 0}),
    Case("bare-atem-block-without-header", "Checking.\n" + atem("get_weather", param("city", "Rome")),
         [("get_weather", {"city": "Rome"})], "Checking.", tools=WEATHER),
    Case("missing-parameter-close",
         message("get_weather", '<atem:function_calls>\n<atem:invoke name="get_weather">\n'
                 '<atem:parameter name="city">Kyiv\n<atem:parameter name="days">2</atem:parameter>\n'
                 "</atem:invoke>\n</atem:function_calls>"),
         [("get_weather", {"city": "Kyiv\n", "days": 2})], None, tools=WEATHER, report={"repaired": 1}),
    Case("malformed-tool-message-without-block",
         message("get_weather", '{"city": "Paris"}'), [], message("get_weather", '{"city": "Paris"}'),
         tools=WEATHER, report={"rejected": 1, "calls": 0}),
    Case("malformed-header-stays-content", "<|start|>assistant to=user and more words<|message|>hi<|eot|>", [],
         "<|start|>assistant to=user and more words<|message|>hi", tools=WEATHER),
    Case("truncated-mid-value",
         message("get_weather", '<atem:function_calls>\n<atem:invoke name="get_weather">\n'
                 '<atem:parameter name="city">Par', end=""), [],
         message("get_weather", '<atem:function_calls>\n<atem:invoke name="get_weather">\n'
                 '<atem:parameter name="city">Par', end=""), tools=WEATHER, report={"truncated": True, "calls": 0}),
    Case("truncated-in-header", "<|start|>assistant to=get_wea", [], "<|start|>assistant to=get_wea",
         tools=WEATHER, report={"truncated": True}),
    Case("unknown-tool-stays-content", message("delete_all", atem("delete_all", param("path", "/"))), [],
         message("delete_all", atem("delete_all", param("path", "/"))), tools=WEATHER, report={"rejected": 1}),
    Case("prose-mentions-markers",
         "Write <atem:function_calls> around calls; to=user marks the answer.", [],
         "Write <atem:function_calls> around calls; to=user marks the answer.", report={"calls": 0}),
    Case("end-of-text-ends-the-answer", message("user", "Fine.", "<|end_of_text|>", start=" "), [], " Fine.",
         tools=WEATHER),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("muse", CASES)


def test_model_hint() -> None:
    found = dialect_for_model("meta/Muse-Glimmer-8B")
    assert found is not None and found.name == "muse"
