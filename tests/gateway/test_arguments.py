"""Arguments an agent can execute, over real HTTP with the openai SDK: calls typed by the tool's
schema (and reported in the header), ``--no-coerce``, and an upstream that stopped at its length
limit never yielding a finished call, streamed or not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

TOOLS = [{"type": "function", "function": {"name": "forecast", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"]}}}]
USER = [{"role": "user", "content": "weather?"}]


def answer(stack: Stack, stream: bool) -> tuple[list[tuple[str, Any]], str | None]:
    client = stack.client()
    if not stream:
        c = client.chat.completions.create(model="m", messages=USER, tools=TOOLS)
        calls = c.choices[0].message.tool_calls or []
        return [(x.function.name, json.loads(x.function.arguments)) for x in calls], c.choices[0].finish_reason
    parts: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    finish = None
    for chunk in client.chat.completions.create(model="m", messages=USER, tools=TOOLS, stream=True):
        for p in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
            names[p.index] = names.get(p.index, "") + (p.function.name or "")
            parts.setdefault(p.index, []).append(p.function.arguments or "")
        finish = (chunk.choices[0].finish_reason if chunk.choices else None) or finish
    return [(names[i], json.loads("".join(parts[i]))) for i in sorted(parts)], finish


@pytest.mark.parametrize("stream", [False, True])
def test_recovered_arguments_are_typed_by_the_schema(stream: bool) -> None:
    text = '<tool_call>{"name": "forecast", "arguments": {"city": 75001, "days": "2"}}</tool_call>'
    with Stack(lambda body: Reply(content=text), tool_call_parser="hermes") as s:
        assert answer(s, stream) == ([("forecast", {"city": "75001", "days": 2})], "tool_calls")
        raw = s.client().chat.completions.with_raw_response.create(model="m", messages=USER, tools=TOOLS)
        assert "repaired=2; invalid=0" in raw.headers["x-toolbridge-calls"]


@pytest.mark.parametrize("stream", [False, True])
def test_no_coerce_keeps_the_text(stream: bool) -> None:
    text = '<tool_call>{"name": "forecast", "arguments": {"city": "Rome", "days": "2"}}</tool_call>'
    with Stack(lambda body: Reply(content=text), tool_call_parser="hermes", no_coerce=True) as s:
        assert answer(s, stream) == ([("forecast", {"city": "Rome", "days": "2"})], "tool_calls")


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_length_stop_never_yields_a_finished_call(stream: bool) -> None:
    """Every argument is there, only the close tags are missing: cut by the limit, not a call."""
    text = "<tool_call>\n<function=forecast>\n<parameter=city>\nRome\n</parameter>\n<parameter=days>\n2\n</parameter>\n"
    for finish, expected in (("length", ([], "length")), ("stop", ([("forecast", {"city": "Rome", "days": 2})], "tool_calls"))):
        with Stack(lambda body, f=finish: Reply(content=text, finish_reason=f), tool_call_parser="qwen3_coder") as s:
            calls, got = answer(s, stream)
            assert got == expected[1], finish
            if not (stream and got == "length"):  # streamed, the opening was sent: length discards it
                assert calls == expected[0], finish
