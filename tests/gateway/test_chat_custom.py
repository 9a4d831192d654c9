"""Custom (freeform) tools through the Chat Completions front, end to end with the official
``openai`` SDK: ``{"type": "custom", "custom": {"name", "description", "format"}}`` tools, calls
returned as ``{"type": "custom", "custom": {"name", "input"}}`` whole and streamed, and earlier
custom calls sent upstream as the function calls the model made."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionMessageCustomToolCall, ChatCompletionMessageFunctionToolCall

from tests.gateway.test_responses import (  # noqa: F401  (stacks is a fixture)
    GRAMMAR,
    PATCHES,
    WRITERS,
    metric,
    native,
    stacks,
    written,
)
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

PATCH_TOOL = {"type": "custom", "custom": {"name": "apply_patch", "description": "Edit files with a patch."}}
# The Chat Completions API nests a grammar: {"type": "grammar", "grammar": {"syntax", "definition"}}.
GRAMMAR_TOOL = {"type": "custom", "custom": {"name": "apply_patch", "description": "Edit files with a patch.",
                                             "format": {"type": "grammar", "grammar": {"syntax": "lark",
                                                                                       "definition": GRAMMAR}}}}
# The flat shape (as the Responses API has it), which the chat front reads.
FLAT_GRAMMAR_TOOL = {"type": "custom", "custom": {
    "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark", "definition": GRAMMAR}}}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
USER = [{"role": "user", "content": "Add hello.txt"}]
SOURCES = (*sorted(WRITERS), "native")  # how the model gives its call


def patch_reply(source: str, text: str, chunk: int = 3, key: str = "input") -> tuple[Reply, str]:
    """A reply calling apply_patch with ``text``, and the parser to read it with."""
    if source == "native":
        call = native("apply_patch", {key: text}, "call_up0")
        return Reply(content="", tool_calls=[call], finish_reason="tool_calls", chunk=chunk), "hermes"
    dialect, ascii_only = WRITERS[source]
    return Reply(content="Patching.\n" + written(dialect, "apply_patch", {key: text}, ascii_only), chunk=chunk), dialect


def create(s: Stack, messages: list[Any] = USER, **kw: Any) -> Any:
    kw.setdefault("tools", [PATCH_TOOL, WEATHER])
    with s.client() as c:
        return c.chat.completions.create(model="m", messages=messages, **kw)


def sse(s: Stack, **kw: Any) -> list[dict[str, Any]]:
    """The chunks of a streamed answer as sent (the SDK's delta type has no ``custom`` field)."""
    body = {"model": "m", "messages": USER, "tools": [PATCH_TOOL, WEATHER], "stream": True, **kw}
    request = urllib.request.Request(s.url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as r:
        frames = r.read().decode().removesuffix("\n\n").split("\n\n")
    assert frames[-1] == "data: [DONE]"
    return [json.loads(f.removeprefix("data: ")) for f in frames[:-1]]


def call_deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [tc for c in chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls") or ()]


@pytest.mark.parametrize("patch", sorted(PATCHES))
@pytest.mark.parametrize("source", SOURCES)
def test_a_whole_answer_returns_a_custom_call(stacks: Any, source: str, patch: str) -> None:
    reply, dialect = patch_reply(source, PATCHES[patch])
    s = stacks(lambda b: reply, tool_call_parser=dialect)
    got = create(s)
    choice = got.choices[0]
    [call] = choice.message.tool_calls
    assert isinstance(call, ChatCompletionMessageCustomToolCall) and call.type == "custom"
    assert call.custom.name == "apply_patch" and call.custom.input == PATCHES[patch]
    assert call.id and choice.finish_reason == "tool_calls"
    if source == "native":
        assert call.id == "call_up0"
    offered = s.upstream.requests[-1]["tools"]
    assert offered[0] == {"type": "function", "function": {
        "name": "apply_patch", "description": "Edit files with a patch.", "parameters": {
            "type": "object", "required": ["input"], "properties": {"input": {
                "type": "string", "description": "The tool's raw input text, exactly as the tool reads it."}}}}}
    assert offered[1] == WEATHER


def test_custom_and_function_calls_in_one_answer(stacks: Any) -> None:
    text = written("hermes", "get_weather", {"city": "Rome"}) + written("hermes", "apply_patch", {"patch": "x\n"})
    s = stacks(lambda b: Reply(content=text))
    weather, patch = create(s).choices[0].message.tool_calls
    assert isinstance(weather, ChatCompletionMessageFunctionToolCall)
    assert (weather.function.name, json.loads(weather.function.arguments)) == ("get_weather", {"city": "Rome"})
    assert isinstance(patch, ChatCompletionMessageCustomToolCall) and patch.custom.input == "x\n"


@pytest.mark.parametrize("source", SOURCES)
def test_a_streamed_custom_call_comes_whole_in_one_delta(stacks: Any, source: str) -> None:
    text = PATCHES["tricky"]
    reply, dialect = patch_reply(source, text, chunk=2)
    s = stacks(lambda b: reply, tool_call_parser=dialect)
    [call] = call_deltas(sse(s))
    assert set(call) == {"index", "id", "type", "custom"} and call["type"] == "custom" and call["id"]
    assert call["custom"] == {"name": "apply_patch", "input": text}
    with s.client() as c:  # the SDK keeps the field it does not know as an attribute
        chunks = list(c.chat.completions.create(model="m", messages=USER, tools=[PATCH_TOOL], stream=True))
    [got] = [tc for ch in chunks if ch.choices for tc in ch.choices[0].delta.tool_calls or ()]
    assert got.type == "custom" and got.custom == {"name": "apply_patch", "input": text}
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == "tool_calls"


@pytest.mark.parametrize("source", SOURCES)
def test_with_stream_arguments_a_custom_call_gives_its_input_in_pieces(stacks: Any, source: str) -> None:
    text = PATCHES["tricky"]
    reply, dialect = patch_reply(source, text, chunk=2)
    s = stacks(lambda b: reply, tool_call_parser=dialect, stream_arguments=True)
    deltas = call_deltas(sse(s))
    first, rest = deltas[0], deltas[1:]
    assert first["type"] == "custom" and first["custom"]["name"] == "apply_patch" and first["id"]
    assert first["custom"].get("input", "") == "" and "function" not in first
    assert all(set(d) == {"index", "custom"} and set(d["custom"]) == {"input"} for d in rest), rest[:3]
    assert "".join(d["custom"]["input"] for d in rest) == text
    assert len(rest) > len(text) // 8, "as the model writes it"
    with s.client() as c:  # the SDK keeps the field it does not know as an attribute
        chunks = list(c.chat.completions.create(model="m", messages=USER, tools=[PATCH_TOOL], stream=True))
    calls = [tc for ch in chunks if ch.choices for tc in ch.choices[0].delta.tool_calls or ()]
    assert calls[0].type == "custom" and calls[0].custom["name"] == "apply_patch"
    assert "".join(tc.custom.get("input", "") for tc in calls) == text
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == "tool_calls"


@pytest.mark.parametrize("arguments", [
    {"patch": "ls\n"},
    {"input": "ls\n", "reason": "why"},
    pytest.param({"reason": "why", "input": "ls\n"}),
    pytest.param({"input": 123}),
])
def test_odd_custom_arguments_stream_as_they_are_whole(stacks: Any, arguments: dict[str, Any]) -> None:
    s = stacks(lambda b: Reply(content=written("hermes", "apply_patch", arguments), chunk=3))
    [whole] = create(s).choices[0].message.tool_calls
    deltas = call_deltas(sse(s))
    assert "".join(d["custom"].get("input", "") for d in deltas) == whole.custom.input


def test_function_calls_stream_as_before_beside_a_custom_one(stacks: Any) -> None:
    text = written("hermes", "apply_patch", {"input": "a\n"}) + written("hermes", "get_weather", {"city": "Rome"})
    s = stacks(lambda b: Reply(content=text, chunk=3))
    deltas = call_deltas(sse(s, tools=[PATCH_TOOL, {**WEATHER, "function": {**WEATHER["function"], "strict": False}}]))
    by_index: dict[int, list[dict[str, Any]]] = {}
    for d in deltas:
        by_index.setdefault(d["index"], []).append(d)
    assert "".join(d["custom"].get("input", "") for d in by_index[0]) == "a\n"
    assert by_index[1][0]["type"] == "function" and by_index[1][0]["function"]["name"] == "get_weather"
    assert json.loads("".join(d["function"]["arguments"] for d in by_index[1])) == {"city": "Rome"}


def test_an_earlier_custom_call_goes_upstream_as_its_function(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content="Done."))
    history = [*USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "custom", "custom": {"name": "apply_patch", "input": PATCHES["tricky"]}},
        {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Patched."},
        {"role": "tool", "tool_call_id": "call_2", "content": "Sunny."}]
    assert create(s, history).choices[0].message.content == "Done."
    sent = s.upstream.requests[-1]["messages"]
    assert sent[1]["tool_calls"][0] == {"id": "call_1", "type": "function", "function": {
        "name": "apply_patch", "arguments": json.dumps({"input": PATCHES["tricky"]}, ensure_ascii=False)}}
    assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == {"input": PATCHES["tricky"]}
    assert sent[1]["tool_calls"][1]["function"] == {"name": "get_weather", "arguments": '{"city": "Rome"}'}
    assert sent[2:] == history[2:]


@pytest.mark.parametrize("tool, param", [
    ({"type": "custom", "custom": {"description": "no name"}}, "tools[0].custom.name"),
    ({"type": "custom"}, "tools[0].custom.name"),
    ({"type": "custom", "custom": {"name": "p", "format": {"type": "json"}}}, "tools[0].custom.format"),
])
def test_a_malformed_custom_tool_is_a_400(stacks: Any, tool: dict[str, Any], param: str) -> None:
    s = stacks(lambda b: Reply(content="ok"))
    with pytest.raises(openai.BadRequestError) as refused:
        create(s, tools=[tool])
    assert refused.value.body["param"] == param


def test_a_history_custom_call_without_input_is_a_400(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content="ok"))
    history = [*USER, {"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "p"}}]},
               {"role": "tool", "tool_call_id": "c", "content": "x"}]
    with pytest.raises(openai.BadRequestError) as refused:
        create(s, history)
    assert refused.value.body["param"] == "messages[1].tool_calls[0].custom"


def test_a_grammar_in_the_chat_completions_shape_is_accepted(stacks: Any) -> None:
    s = stacks(lambda b: Reply(content=written("hermes", "apply_patch", {"input": PATCHES["add"]})))
    [call] = create(s, tools=[GRAMMAR_TOOL]).choices[0].message.tool_calls
    assert call.custom.input == PATCHES["add"]
    assert "lark grammar" in s.upstream.requests[-1]["tools"][0]["function"]["description"]


def test_a_call_that_breaks_the_grammar_is_counted_or_refused(stacks: Any) -> None:
    bad = written("hermes", "apply_patch", {"input": "not a patch"})
    s = stacks(lambda b: Reply(content=bad))
    before = metric(s, "toolbridge_invalid_arguments_total")
    with s.client() as c:
        raw = c.chat.completions.with_raw_response.create(model="m", messages=USER, tools=[FLAT_GRAMMAR_TOOL])
    assert "invalid=1" in raw.headers["x-toolbridge-calls"]
    assert raw.parse().choices[0].message.tool_calls[0].custom.input == "not a patch"
    assert metric(s, "toolbridge_invalid_arguments_total") == before + 1
    good = stacks(lambda b: Reply(content=written("hermes", "apply_patch", {"input": PATCHES["add"]})))
    with good.client() as c:
        raw = c.chat.completions.with_raw_response.create(model="m", messages=USER, tools=[FLAT_GRAMMAR_TOOL])
    assert "invalid=0" in raw.headers["x-toolbridge-calls"]
    strict = stacks(lambda b: Reply(content=bad), on_invalid="reject")
    with pytest.raises(openai.APIStatusError) as refused:
        create(strict, tools=[FLAT_GRAMMAR_TOOL])
    assert refused.value.status_code == 502 and refused.value.body["code"] == "invalid_tool_arguments"
