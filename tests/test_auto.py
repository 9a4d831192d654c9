"""``dialect="auto"``: the dialect recognised from the output, streamed like any other.

The table runs through the shared harness (whole, per character, random chunkings, the delta
checker); ``report["detected"]`` names the dialect recognised. Then: every dialect's own rendering
comes back through auto, prose is never held beyond a possible marker, and the model-name hints.
"""

from __future__ import annotations

import json

import pytest

from tests.harness import Case, make_table_tests, tool
from toolbridge import StreamParser, Text, parse
from toolbridge.parsing.auto import AutoParser, candidate_dialects, dialect_for_model, model_for, needs_hint
from toolbridge.dialects import dialect_names, get_dialect

WEATHER = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
PY = [tool("python", code={"type": "string"})]
R = {"reasoning": True}

CASES = [
    Case("hermes-after-prose",
         'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}\n</tool_call>',
         [("get_weather", {"city": "Oslo", "days": 2})], "Checking.", tools=WEATHER,
         report={"detected": "hermes", "calls": 1}),
    Case("qwen3-coder-xml",
         "<tool_call>\n<function=get_weather>\n<parameter=city>\nLima\n</parameter>\n"
         "<parameter=days>\n4\n</parameter>\n</function>\n</tool_call>",
         [("get_weather", {"city": "Lima", "days": 4})], None, tools=WEATHER,
         report={"detected": "qwen3_coder"}),
    Case("glm-arg-keys",
         "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Pune</arg_value>\n</tool_call>",
         [("get_weather", {"city": "Pune"})], None, tools=WEATHER, report={"calls": 1}),
    Case("mistral-args-form", '[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}',
         [("get_weather", {"city": "Rome"})], None, tools=WEATHER, report={"detected": "mistral"}),
    Case("llama3-bare-json", '{"name": "get_weather", "parameters": {"city": "Kyiv"}}',
         [("get_weather", {"city": "Kyiv"})], None, tools=WEATHER, report={"detected": "llama3_json"}),
    Case("llama3-semicolon-list",
         '{"name": "get_weather", "parameters": {"city": "A"}}; {"name": "get_weather", "parameters": {"city": "B"}}',
         [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})], None, tools=WEATHER,
         report={"detected": "llama3_json"}),
    Case("llama3-type-function-member",
         '<|python_tag|>{"type": "function", "name": "get_weather", "parameters": {"city": "Kyiv"}}',
         [("get_weather", {"city": "Kyiv"})], None, tools=WEATHER, report={"detected": "llama3_json"}),
    Case("llama3-bare-type-function-member", '{"type": "function", "name": "get_weather", "parameters": {"days": 2}}',
         [("get_weather", {"days": 2})], None, tools=WEATHER, report={"detected": "llama3_json"}),
    Case("qwen3-coder-value-mentions-its-tags",
         "<tool_call>\n<function=python>\n<parameter=code>\nprint('</parameter>')\nx = '<parameter=y>'\n"
         "s = '</function>'\n</parameter>\n</function>\n</tool_call>",
         [("python", {"code": "print('</parameter>')\nx = '<parameter=y>'\ns = '</function>'"})], None, tools=PY,
         report={"detected": "qwen3_coder"}),
    Case("glm-value-mentions-the-close-tag",
         "<tool_call>python\n<arg_key>code</arg_key>\n<arg_value>print('</tool_call>')</arg_value>\n</tool_call>",
         [("python", {"code": "print('</tool_call>')"})], None, tools=PY, report={"calls": 1}),
    Case("pythonic-list", '[get_weather(city="Bern", days=1)]',
         [("get_weather", {"city": "Bern", "days": 1})], None, tools=WEATHER, report={"detected": "pythonic"}),
    Case("kimi-sections",
         "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
         '{"city": "Baku"}<|tool_call_end|><|tool_calls_section_end|>',
         [("get_weather", {"city": "Baku"})], None, tools=WEATHER, report={"detected": "kimi_k2"}),
    Case("deepseek-v31",
         "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
         '{"city": "Doha"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
         [("get_weather", {"city": "Doha"})], None, tools=WEATHER),
    Case("harmony-with-analysis",
         "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
         'to=functions.get_weather <|constrain|>json<|message|>{"city": "Nice"}<|call|>',
         [("get_weather", {"city": "Nice"})], None, "Need weather.", tools=WEATHER, options=R,
         report={"detected": "gpt_oss"}),
    Case("minicpm-function-name-attr",
         'Sure.\n<function name="get_weather"><param name="city">Graz</param></function>',
         [("get_weather", {"city": "Graz"})], "Sure.", tools=WEATHER, report={"detected": "minicpm5"}),
    Case("think-then-call",
         '<think>Weather for Oslo.</think>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
         [("get_weather", {"city": "Oslo"})], None, "Weather for Oslo.", tools=WEATHER, options=R,
         report={"detected": "hermes"}),
    Case("starts-inside-reasoning",
         'plan it</think>[get_weather(city="Ulm")]', [("get_weather", {"city": "Ulm"})], None, "plan it",
         tools=WEATHER, options={"reasoning": True, "in_reasoning": True}, report={"detected": "pythonic"}),
    Case("thoughts-kept-then-bare-list",
         '<think>ok</think>[{"name": "get_weather", "arguments": {"city": "Bonn"}}]',
         [("get_weather", {"city": "Bonn"})], "<think>ok</think>", tools=WEATHER, report={"calls": 1}),
    Case("mistral-think-names-family",
         "[THINK]Use the tool.[/THINK]" + '[TOOL_CALLS]get_weather[ARGS]{"city": "Riga"}',
         [("get_weather", {"city": "Riga"})], None, "Use the tool.", tools=WEATHER, options=R,
         report={"detected": "mistral"}),
    Case("hint-decides-shared-marker",
         "thinking <tool_call>\n<function=python>\n<parameter=code>\nx()\n</parameter>\n</function>\n</tool_call>"
         "\n</think>\n<tool_call>\n<function=python>\n<parameter=code>\ny()\n</parameter>\n</function>\n</tool_call>",
         [("python", {"code": "y()"})], None,
         "thinking <tool_call>\n<function=python>\n<parameter=code>\nx()\n</parameter>\n</function>\n</tool_call>\n",
         tools=PY, options={"reasoning": True, "in_reasoning": True, "model": "nvidia/Nemotron-3-Nano-30B"},
         report={"detected": "nemotron_v3"}),
    # ---------------------------------------------------------------- prose stays prose
    Case("tag-mentioned-in-prose", "Wrap it in a <tool_call> tag, then [1] and {x}.",
         [], "Wrap it in a <tool_call> tag, then [1] and {x}.", tools=WEATHER, report={"detected": None}),
    Case("code-fence-prose", "Run:\n```python\nprint(1 < 2)\n```\n", [], "Run:\n```python\nprint(1 < 2)\n```\n",
         tools=WEATHER, report={"detected": None}),
    Case("angle-brackets", "if a <b and c> d: <tool_call>", [], "if a <b and c> d: <tool_call>",
         report={"detected": None}),
    Case("prose-starting-with-bracket", "[1] See the note.", [], "[1] See the note.", tools=WEATHER),
    # ---------------------------------------------------------------- malformed, unknown, truncated
    # (content, and reported as the dialect pinned reports it: a call to an unoffered name is never silent)
    Case("unknown-tool-stays-content",
         '<tool_call>\n{"name": "delete_all", "arguments": {}}\n</tool_call>',
         [], '<tool_call>\n{"name": "delete_all", "arguments": {}}\n</tool_call>', tools=WEATHER,
         report={"detected": "hermes", "rejected": 1}),
    Case("malformed-json-stays-content", '<tool_call>\n{"name": get_weather}\n</tool_call>', [],
         '<tool_call>\n{"name": get_weather}\n</tool_call>', tools=WEATHER),
    Case("truncated-in-arguments", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Os',
         [], '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Os', tools=WEATHER,
         report={"truncated": True, "detected": "hermes"}),
    # A call cut inside a tag: the claimant that began it wins and its text comes back whole
    # (the trial used to stop at the aborted block, and the tag's tail was lost).
    Case("qwen3-coder-cut-inside-a-parameter-tag", "<tool_call>\n<function=get_weather>\n<parameter=city", [],
         "<tool_call>\n<function=get_weather>\n<parameter=city", tools=WEATHER,
         report={"truncated": True, "detected": "qwen3_coder"}),
    Case("qwen3-coder-cut-inside-a-second-parameter-tag", "<tool_call>\n<function=get_weather>\n<parameter=city>\n"
         "Oslo\n</parameter>\n<parameter=da", [],
         "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=da",
         tools=WEATHER, report={"truncated": True}),
    Case("qwen3-coder-cut-in-a-tag-at-a-length-stop", "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=ci",
         [], "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=ci", tools=WEATHER, cut=True,
         report={"truncated": True}),
    Case("second-marker-after-a-prose-one",
         'A <tool_call> tag looks like this:\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
         [("get_weather", {"city": "Oslo"})], "A <tool_call> tag looks like this:", tools=WEATHER,
         report={"detected": "hermes"}),
]

test_whole, test_per_character, test_random_chunkings = make_table_tests("auto", CASES)


def _primary() -> list[str]:
    return sorted({get_dialect(n).name for n in dialect_names() if get_dialect(n).render})


CALLS = [("get_weather", {"city": "Paris", "days": 3}), ("search", {"query": "a b", "filters": {"lang": ["en"]}})]
TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"}),
         tool("search", query={"type": "string"}, filters={"type": "object"})]


@pytest.mark.parametrize("name", _primary())
def test_every_dialect_comes_back_through_auto(name: str) -> None:
    text = get_dialect(name).render(CALLS)  # type: ignore[misc]
    # A dialect whose every answer may be a call is only tried when the model's name says so.
    model = model_for(name) if needs_hint(get_dialect(name)) else None
    result = parse(text, "auto", TOOLS, model=model)
    got = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in result.message["tool_calls"]]
    assert got == CALLS, (result.report.detected, text)
    detected = get_dialect(result.report.detected)
    assert detected is get_dialect(name) or detected.render(CALLS) == text or _same_syntax(detected, name)


def _same_syntax(detected: object, name: str) -> bool:
    """Families that write calls alike (GLM 4.5 and 4.7 differ in whitespace only)."""
    return parse(get_dialect(name).render(CALLS), detected, TOOLS).message.get("tool_calls") is not None  # type: ignore[arg-type]


def test_prose_is_not_held() -> None:
    words = "Paris is sunny today, with a light wind from the west and no rain expected at all.".split(" ")
    parser = AutoParser(TOOLS)
    first = parser.feed(words[0])  # the answer's first word: no opener can start with "P"
    assert first == [Text(words[0])]
    for word in words[1:]:
        assert parser.feed(" " + word) == [Text(" " + word)]
    assert parser.close() == [] and parser.detected is None


def test_only_a_possible_marker_is_held() -> None:
    parser = AutoParser(TOOLS)
    assert parser.feed("Hi. a <too") == [Text("Hi. a ")]
    assert parser.feed("k> b") == [Text("<took> b")]


def test_stream_parser_auto_is_an_auto_parser() -> None:
    assert isinstance(StreamParser("auto", TOOLS), AutoParser)


@pytest.mark.parametrize("model, dialect", [
    ("Qwen/Qwen3.6-35B-A3B", "qwen3_coder"), ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3_coder"),
    ("Qwen/Qwen3-8B", "hermes"), ("zai-org/GLM-4.5-Air", "glm45"), ("zai-org/GLM-4.7", "glm47"),
    ("moonshotai/Kimi-K2-Instruct", "kimi_k2"), ("deepseek-ai/DeepSeek-V3.1", "deepseek_v31"),
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek_r1"), ("openai/gpt-oss-20b", "gpt_oss"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama3_json"), ("meta-llama/Llama-4-Scout-17B", "pythonic"),
    ("mistralai/Devstral-Small-2505", "mistral"), ("MiniMaxAI/MiniMax-M2", "minimax_m2"),
    ("google/gemma-4-27b-it", "gemma4"), ("ibm-granite/granite-4.0-h-small", "granite4"),
    ("my-own-model", None),
])
def test_model_hints(model: str, dialect: str | None) -> None:
    found = dialect_for_model(model)
    assert (found.name if found else None) == dialect


def test_hint_goes_first() -> None:
    assert candidate_dialects("zai-org/GLM-4.5")[0].name == "glm45"
    assert candidate_dialects(None)[0].name == "hermes"
