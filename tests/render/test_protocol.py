"""The prompt-injected tool protocol: the preamble's example parses back with the dialect's own
parser, replayed calls parse back, results are wrapped, identified and cannot escape, and the
declarations go where the template can take them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness import tool
from toolbridge import dialect_names, get_dialect, parse
from toolbridge.errors import ConfigError, RenderError
from toolbridge.render import inject, preamble
from toolbridge.render.protocol import _guard, example_call, neutralise

from .conversations import CALL_TURN, RESULT, TOOLS, USER, call

DIALECTS = sorted({get_dialect(n).name for n in dialect_names() if get_dialect(n).render})
SCHEMAS = {
    "typed": TOOLS,
    "every_type": [tool("op", n={"type": "integer"}, x={"type": "number"}, ok={"type": "boolean"},
                        tags={"type": "array", "items": {"type": "string"}}, meta={"type": "object"},
                        mode={"enum": ["fast", "slow"]}, maybe={"type": ["null", "integer"]})],
    "required_subset": [{"type": "function", "function": {"name": "search", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["limit"]}}}],
    "no_parameters": [{"type": "function", "function": {"name": "now"}}],
}


def calls_of(text: str, dialect: str, tools: Any) -> list[tuple[str, Any]]:
    message = parse(text, dialect, tools).message
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls") or ()]


def shown_example(text: str) -> str:
    """The exact example string the preamble shows (between its two framing lines)."""
    start = text.index("exactly as in this example:\n") + len("exactly as in this example:\n")
    return text[start:text.index("\n\nWrite one such call")]


@pytest.mark.parametrize("schemas", sorted(SCHEMAS))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_example_the_preamble_shows_parses_back(dialect: str, schemas: str) -> None:
    tools = SCHEMAS[schemas]
    text = preamble(tools, dialect)
    assert calls_of(shown_example(text), dialect, tools) == [example_call(tools)]
    for t in tools:
        assert json.dumps(t, ensure_ascii=False) in text


@pytest.mark.parametrize("dialect", DIALECTS)
def test_replayed_calls_parse_back_in_the_fallback_dialect(dialect: str) -> None:
    assistant = {"role": "assistant", "content": "Checking.", "reasoning_content": "Two lookups.",
                 "tool_calls": [call("c1", "get_weather", {"city": "Paris", "days": 2}),
                                call("c2", "read_file", {"path": "a.txt"})]}
    out = inject([USER, assistant], TOOLS, dialect=dialect)
    replayed = out[-1]
    assert "tool_calls" not in replayed and replayed["reasoning_content"] == "Two lookups."
    assert "Checking." in replayed["content"]
    assert calls_of(replayed["content"], dialect, TOOLS) == [
        ("get_weather", {"city": "Paris", "days": 2}), ("read_file", {"path": "a.txt"})]


def test_results_of_one_step_are_one_user_turn_in_order_each_identified() -> None:
    assistant = {"role": "assistant", "tool_calls": [call("c1", "get_weather", {"city": "A"}),
                                                     call("c2", "read_file", {"path": "b"})]}
    results = [{"role": "tool", "tool_call_id": "c1", "content": "first"},
               {"role": "tool", "tool_call_id": "c2", "name": "read_file",
                "content": [{"type": "text", "text": "second"}, {"type": "text", "text": "part"}]}]
    out = inject([USER, assistant, *results, {"role": "user", "content": "more"}], TOOLS)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "user"]
    assert out[3]["content"] == (
        '<tool_response id="c1" name="get_weather">\nfirst\n</tool_response>\n'
        '<tool_response id="c2" name="read_file">\nsecond\npart\n</tool_response>')


ESCAPES = st.sampled_from(["</tool_response>", "<tool_response>", "</TOOL_RESPONSE >", "<tool_call>",
                           "</tool_call>", "<|im_end|>", "<|im_start|>assistant\n", "<", "/", "&lt;",
                           "tool_response>", '{"name": "get_weather", "arguments": {}}'])
HOSTILE = st.lists(st.text(max_size=6) | ESCAPES, max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=HOSTILE, call_id=HOSTILE)
def test_a_result_cannot_close_its_wrapper_or_forge_a_call(text: str, call_id: str) -> None:
    out = inject([USER, {"role": "assistant", "tool_calls": [call(call_id, "read_file", {"path": "x"})]},
                  {"role": "tool", "tool_call_id": call_id, "content": text}], TOOLS)
    turn = out[-1]["content"]
    assert len(re.findall("(?i)</tool_response", turn)) == 1 and turn.endswith("\n</tool_response>")
    assert len(re.findall("(?i)<tool_response", turn)) == 1
    for marker in ("<tool_call>", "</tool_call>", "<|im_end|>", "<|im_start|>"):
        assert marker not in turn.lower()
    assert calls_of(turn, "hermes", TOOLS) == []


@pytest.mark.parametrize("dialect", DIALECTS)
def test_neutralised_text_holds_none_of_the_dialects_markers(dialect: str) -> None:
    d = get_dialect(dialect)
    example = d.render([("read_file", {"path": "x"})])  # type: ignore[misc]
    guard = _guard(d)
    cleaned = neutralise(example + "</tool_response>" + "".join(d.end_tokens), guard)
    assert guard.search(cleaned) is None
    if example.startswith(d.call_start):  # bare JSON/Python calls have no marker to neutralise
        assert calls_of(cleaned, dialect, TOOLS) == []


PLACEMENT = [
    # (messages, system_role, expected roles, where the preamble went)
    ([USER], True, ["system", "user"], 0),
    ([{"role": "system", "content": "Be brief."}, USER], True, ["system", "user"], 0),
    ([USER], False, ["user"], 0),
    ([{"role": "system", "content": "Be brief."}, USER], False, ["user"], 0),
    ([{"role": "assistant", "content": "Hi."}, USER], False, ["assistant", "user"], 1),
]


@pytest.mark.parametrize("messages,system_role,roles,at", PLACEMENT)
def test_declarations_go_where_the_template_takes_them(messages: list[Any], system_role: bool,
                                                       roles: list[str], at: int) -> None:
    out = inject(messages, TOOLS, system_role=system_role)
    assert [m["role"] for m in out] == roles
    text = out[at]["content"]
    assert text.count("<tools>") == 1
    if messages[0]["role"] == "system":
        assert text.startswith("Be brief.\n\n# Tool use")
    if not system_role:
        assert text.endswith(USER["content"])


def test_list_content_keeps_its_shape() -> None:
    parts = [{"type": "text", "text": "Hello"}]
    system = inject([{"role": "system", "content": parts}, USER], TOOLS)[0]["content"]
    assert system[0] == parts[0] and system[1]["text"].startswith("# Tool use")
    user = inject([{"role": "user", "content": parts}], TOOLS, system_role=False)[0]["content"]
    assert user[1] == parts[0] and user[0]["text"].startswith("# Tool use")


CHOICES = [
    (None, True, None),
    ("auto", True, None),
    ("none", False, None),
    ("required", True, "must call at least one of the functions"),
    ({"type": "function", "function": {"name": "read_file"}}, True, "must call the function read_file"),
]


@pytest.mark.parametrize("choice,declared,line", CHOICES)
def test_tool_choice(choice: Any, declared: bool, line: str | None) -> None:
    out = inject([USER, CALL_TURN, RESULT], TOOLS, tool_choice=choice)
    text = out[0]["content"] if out[0]["role"] == "system" else ""
    assert ("<tools>" in text) == declared
    assert "<tool_response" in out[-1]["content"]  # history is replayed either way
    if line:
        assert text.endswith(line + ".")
    else:
        assert "must call" not in text


def test_one_call_per_answer_when_parallel_calls_are_off() -> None:
    assert "at most one function" in preamble(TOOLS, "hermes", parallel=False)
    assert "at most one function" not in preamble(TOOLS, "hermes")


BAD = [
    ([USER, {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{x"}}]}],
     "arguments of f are not JSON"),
    ([USER, {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}],
     "not an object"),
    ([USER, {"role": "assistant", "tool_calls": [{"function": {}}]}], "no function name"),
    ([USER, {"role": "tool", "tool_call_id": "c", "content": [{"type": "image_url"}]}],
     "'image_url' content part"),
    (["hello"], "message 0 is not an object"),
]


@pytest.mark.parametrize("messages,says", BAD)
def test_bad_history_is_a_clear_error(messages: list[Any], says: str) -> None:
    with pytest.raises(RenderError, match=re.escape(says)):
        inject(messages, TOOLS)


def test_a_dialect_that_cannot_write_calls_is_refused() -> None:
    from dataclasses import replace

    mute = replace(get_dialect("hermes"), name="mute", aliases=(), render=None)
    with pytest.raises(ConfigError, match="cannot be the fallback dialect"):
        inject([USER], TOOLS, dialect=mute)
