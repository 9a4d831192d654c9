"""Constraint under ``tool_choice: auto`` that reaches the openers recovery reads besides the
dialect's marker (a fenced JSON call, a bare one), judged by llama.cpp's own grammar sampler.

``drift="constrain"``: a fenced or bare call is a call of an offered tool with valid arguments
(whole grammar and lazy: its triggers include the drifted openers); ``drift="steer"``: prose
holds no fence and does not start as a call, so the canonical marker is the only way to call.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbridge.constrain import compile_tools, gbnf
from toolbridge.errors import ConfigError

from .llamacpp import Checker, tiny_model

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: make engines sets it up")
pytest.importorskip("gguf", reason="gguf is not installed: the tiny test model cannot be written")

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CANONICAL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
FENCED = '```json\n{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Paris"\n  }\n}\n```'
BARE = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
CASES = [  # (text, accepted constrained, accepted steered)
    ("It is sunny today.", True, True),
    (CANONICAL, True, True),
    ("Let me check.\n" + CANONICAL, True, True),
    (FENCED, True, False),
    ("Sure:\n" + FENCED, True, False),
    (BARE, True, False),
    ('```json\n{"name": "get_weather", "arguments": {"town": "Paris"}}\n```', False, False),  # invalid arguments
    ('```json\n{"name": "schedule_meeting", "arguments": {}}\n```', False, False),  # not offered
    ('{"name": "get_weather", "arguments": {}}', False, False),  # a required argument missing
    ("Here:\n```python\nprint(1)\n```", True, False),  # a fence that is no call: prose, unless steered
]


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Checker]:
    check = Checker(tiny_model(tmp_path_factory.mktemp("drift") / "tiny.gguf"))
    yield check
    check.close()


@pytest.mark.parametrize("text, constrained, steered", CASES)
def test_whole_grammar(checker: Checker, text: str, constrained: bool, steered: bool) -> None:
    for drift, want in (("constrain", constrained), ("steer", steered)):
        grammar = gbnf(compile_tools("hermes", TOOLS, drift=drift))
        assert checker.accepts(grammar, text) is want, (drift, text)
    assert checker.accepts(gbnf(compile_tools("hermes", TOOLS)), FENCED)  # off: a fence is free prose


@pytest.mark.parametrize("text", [FENCED, "Sure:\n" + FENCED, BARE, CANONICAL])
def test_lazy_grammar_triggers_on_drifted_openers(checker: Checker, text: str) -> None:
    constraint = compile_tools("hermes", TOOLS, drift="constrain")
    assert constraint.lazy_triggers == ("<tool_call>", "```json", '{"name"')
    assert checker.accepts(gbnf(constraint, lazy=True), text, constraint.lazy_triggers)
    bad = text.replace('"city"', '"town"')
    assert not checker.accepts(gbnf(constraint, lazy=True), bad, constraint.lazy_triggers)


def test_drift_is_only_for_auto_and_json_object_dialects() -> None:
    required = compile_tools("hermes", TOOLS, tool_choice="required", drift="constrain")
    assert required.lazy_triggers == required.triggers and "```" not in gbnf(required)
    other = compile_tools("qwen3_coder", TOOLS, drift="constrain")
    assert gbnf(other) == gbnf(compile_tools("qwen3_coder", TOOLS))
    with pytest.raises(ConfigError):
        compile_tools("hermes", TOOLS, drift="sideways")
