"""The fuzzer's quick profile (every dialect and auto), and every failure it found, minimised.

The long run is ``make fuzz`` (``python -m tests.fuzz``, 20,000 inputs per dialect).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from toolbridge import parse
from toolbridge.dialects import dialect_names, get_dialect

from . import fuzz

NAMES = sorted({get_dialect(n).name for n in dialect_names()})
QUICK = 40  # inputs per dialect: ~2,400 inputs, half of them also through auto


@pytest.mark.parametrize("name", NAMES)
def test_quick_profile(name: str) -> None:
    counts, failures = fuzz.fuzz([name], QUICK, seed=7)
    assert counts[name] == QUICK
    assert not failures, "\n".join(map(str, failures[:5]))


@dataclass
class Regression:
    id: str
    dialect: str
    text: str
    options: dict[str, Any] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] | None = None  # expected calls, when it matters
    content: str | None = None  # expected content, when it matters
    report: dict[str, int] = field(default_factory=dict)  # expected report list lengths


BIG = "9" * 5000
DEEP = "[" * 1000 + "]" * 1000
M3 = "]<]minimax[>["  # MiniMax M3's line prefix
WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 9999'

REGRESSIONS = [
    Regression("auto-tool-call-storm", "auto", "<tool_call>" * 400, content="<tool_call>" * 400),
    Regression("auto-function-storm", "auto", "<function=f>" * 400, content="<function=f>" * 400),
    # (once quadratic: each marker's trials read all the rest of the text, and a refused one was
    # still closed, which read it again; tests/test_linear.py checks the growth)
    Regression("auto-tool-calls-list-storm", "auto", '<tool_calls>[{"' + "<tool_calls>" * 600,
               content='<tool_calls>[{"' + "<tool_calls>" * 600),
    Regression("auto-open-key-tool-call-eot-storm", "auto",
               '[{"name": "get_weather", "argume' + "<tool_call><|eot_id|><|eot_id|>" * 300,
               content='[{"name": "get_weather", "argume' + "<tool_call>" * 300),
    # (a call that began, then broke, in a block held whole to the end of a stream: auto's
    # trial stopped at the block as at a refusal, and the text after the break was lost)
    Regression("auto-mistral-lone-object-broken", "auto",
               'Let me look that up for you. [TOOL_CALLS]{"name": "get_weather", "arguments": {"city": x"Paris"}}',
               calls=[], content='Let me look that up for you. [TOOL_CALLS]{"name": "get_weather", '
                                 '"arguments": {"city": x"Paris"}}', report={"aborted": 1}),
    Regression("hermes-big-int", "hermes",
               '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome", "days": ' + BIG + "}}</tool_call>",
               calls=[("get_weather", {"city": "Rome", "days": BIG})], report={"repaired": 1, "invalid": 1}),
    Regression("auto-big-int", "auto",
               '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome", "days": -' + BIG + "}}</tool_call>",
               calls=[("get_weather", {"city": "Rome", "days": "-" + BIG})]),
    Regression("kimi-big-int", "kimi_k2",
               "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
               '{"city": "Rome", "days": ' + BIG + "}<|tool_call_end|><|tool_calls_section_end|>",
               calls=[("get_weather", {"city": "Rome", "days": BIG})]),
    Regression("gemma4-big-int", "gemma4",
               '<|tool_call>call:get_weather{city:<|"|>Rome<|"|>,days:' + BIG + "}<tool_call|>",
               calls=[("get_weather", {"city": "Rome", "days": BIG})]),
    Regression("qwen3-coder-deep-value", "qwen3_coder",
               "<tool_call>\n<function=search>\n<parameter=n>\n" + DEEP + "\n</parameter>\n</function>\n</tool_call>",
               calls=[("search", {"n": DEEP})], report={"invalid": 1}),
    Regression("glm45-deep-value", "glm45",
               "<tool_call>search\n<arg_key>n</arg_key>\n<arg_value>" + DEEP + "</arg_value>\n</tool_call>",
               calls=[("search", {"n": DEEP})], report={"invalid": 1}),
    Regression("hermes-deep-arguments", "hermes",
               '<tool_call>{"name": "search", "arguments": {"n": ' + DEEP + "}}</tool_call>",
               calls=[], report={"aborted": 1}),
    Regression("gpt-oss-empty-recipient", "gpt_oss",
               "<|start|>assistant<|channel|>commentary to=functions.<|message|>|", calls=[]),
    Regression("mistral-arguments-twice", "mistral",
               '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "a"}, "arguments": {"city": "b"}}]',
               calls=[], report={"aborted": 1}),
    Regression("mistral-space-before-json", "mistral", '[TOOL_CALLS]get_weather {"city": "Rome"}',
               calls=[("get_weather", {"city": "Rome"})]),
    Regression("mistral-space-after-args", "auto", "[TOOL_CALLS]get_time[ARGS] {}", calls=[("get_time", {})]),
    Regression("gpt-oss-end-start-in-reasoning", "gpt_oss", "x<|end|><|start|>",
               {"reasoning": True, "in_reasoning": True}, content="<|start|>"),
    Regression("auto-end-start-in-reasoning", "auto", "x<|end|><|start|>",
               {"reasoning": True, "in_reasoning": True}, content="<|start|>"),
    Regression("auto-empty-in-reasoning", "auto", "", {"reasoning": True, "in_reasoning": True}, content=""),
    Regression("auto-winner-keeps-refused-blocks", "auto",
               "<|action_start|><|plugin|>\n" + WEATHER + "<|action_start|> <|plugin|>" * 50,
               content="<|action_start|><|plugin|>\n" + WEATHER + "<|action_start|> <|plugin|>" * 50),
    Regression("gpt-oss-header-window", "gpt_oss",
               "<|channel|><annel|>" + "<|channel|>" * 17 + "t to=functions.get_weather<|channel|>commentary json"
               '<|message|>{"city": "Oslo"}', {"reasoning": True}, calls=[("get_weather", {"city": "Oslo"})]),
    Regression("hunyuan-v3-angle-in-name", "hunyuan_v3",
               "<tool_call>search<<tool_sep><arg_key>q</arg_key><arg_value>x</arg_value></tool_call>", calls=[]),
    Regression("gemma4-long-name", "gemma4", "<|tool_call>call:" + "get_" * 80 + "{}<tool_call|>", {"reasoning": True},
               calls=[]),
    Regression("gemma4-deep", "gemma4", "<|tool_call>call:search{n:" + "[" * 300 + "]" * 300 + "}<tool_call|>",
               calls=[], report={"aborted": 1}),
    Regression("minimax-m3-deep", "minimax_m3",
               M3 + "<tool_call>\n" + M3 + '<invoke name="search">\n' + (M3 + "<a>") * 300 + "x" + (M3 + "</a>") * 300
               + "\n" + M3 + "</invoke>\n" + M3 + "</tool_call>", calls=[], report={"aborted": 1}),
    Regression("gemma4-trailing-comma", "gemma4", "<|tool_call>call:search{n:[1,]}<tool_call|>", calls=[]),
    Regression("functiongemma-trailing-comma", "functiongemma", "<start_function_call>call:search{n:{m:[l,]}}",
               calls=[]),
    Regression("apertus-escaped-key-split", "apertus", '<|tools_prefix|>[{"get_weather":{"":""}},{"search":{"\\"":'),
    Regression("deepseek-v3-escaped-key-split", "deepseek_v3",
               '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json{"\\"it'),
    Regression("auto-judges-only-the-first-block", "auto", "<|start|>to=self<|message|><atem:invoke name=",
               {"reasoning": True, "in_reasoning": True}),
    Regression("auto-long-glm-name-fails-where-it-crosses-the-limit", "auto",
               "<tool_call>get_weather<arg_key><tool_call>S" + "EOS][" * 60),
    Regression("pythonic-long-name-fails-where-it-crosses-the-limit", "pythonic", "[" + "a" * 300 + "(x=1)]"),
    Regression("hermes-nan", "hermes", '<tool_call>{"name": "search", "arguments": {"q": NaN}}</tool_call>', calls=[]),
]
TOOLS_FOR = {"get_time": {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}}


@pytest.mark.parametrize("case", REGRESSIONS, ids=[r.id for r in REGRESSIONS])
def test_regression(case: Regression) -> None:
    tools = fuzz.TOOLS + list(TOOLS_FOR.values())
    for n in (len(case.text) or 1, 1, 2, 3, 7, 64):
        chunks = [case.text[i : i + n] for i in range(0, len(case.text), n)]
        why = fuzz.check(case.dialect, case.text, chunks, case.options, time_bound=5.0)
        assert why is None, why
    result = parse(case.text, case.dialect, tools=tools, **case.options)
    message = result.message
    if case.calls is not None:
        got = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls", [])]
        assert got == case.calls
    if case.content is not None:
        assert (message.get("content") or "") == case.content
    for key, count in case.report.items():
        assert len(getattr(result.report, key)) == count, (key, result.report)


@pytest.mark.parametrize("text", [
    'Action: ```json{"tool_name":"get_weather","parameters":{',
    'Action: ```json{"tool_name":"get_weather","parameters":{"city":"x"}}```',
])
def test_a_marker_inside_a_longer_one_still_being_written(text: str) -> None:
    """Found by the fuzzer (seed 0, Command R+ input 2786): a stream that stopped at ``Action: ```
    `` found the complete ``` ``` ``` `` (Hermes' fence) inside Command R+'s ``Action: ```json``
    and let ``Action: `` go as reasoning before it, where the whole parse read the longer marker.
    Every split in two and one character at a time read as the whole."""
    options = {"reasoning": True, "in_reasoning": True}
    for chunks in [list(text), *([text[:k], text[k:]] for k in range(1, len(text)))]:
        assert fuzz.check("auto", text, chunks, options, 5.0) is None, chunks
