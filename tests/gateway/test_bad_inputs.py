"""Input the real APIs refuse, refused by every front over real HTTP: one row per case, each a
400 (404 for an unknown Messages path) in the front's own error shape whose message names the
field's path in the front's spelling, and nothing sent upstream.

Rows go through the official SDKs (which send whatever dicts they are given and raise on the
error status); a body nested hundreds of levels deep goes as raw HTTP, since an SDK's own
recursive walk of its arguments is not what is tested. Every Messages row is also sent to
``/v1/messages/count_tokens``, which must refuse it with the same message: one validation.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

USER = [{"role": "user", "content": "hi"}]
BAD_SCHEMA = {"type": "object", "properties": {"city": {"type": "town"}}}
M_TOOL = {"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
R_TOOL = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
C_TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}


def deep(levels: int, leaf: Any = 1) -> Any:
    """A value nesting ``levels`` objects (``{"a": {"a": ... leaf}}``)."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def called(tool_input: Any) -> list[dict[str, Any]]:
    """A Messages conversation whose assistant called a tool with ``tool_input``, and its result."""
    return [*USER, {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                                       "input": tool_input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]}]


@dataclass
class Case:
    id: str
    front: str  # chat, responses, messages, count (count_tokens), path (a raw path)
    body: dict[str, Any]
    field: str | None  # the path the message begins with (OpenAI: also the param)
    status: int = 400
    raw: bool = False  # sent as raw HTTP (too deep for an SDK's own walk)


CASES = [
    # ---- Responses
    Case("responses reasoning content a string", "responses",
         {"input": [{"type": "reasoning", "content": "think"}, *USER]}, "input[0].content"),
    Case("responses reasoning summary an object", "responses",
         {"input": [{"type": "reasoning", "summary": {"text": "t"}}, *USER]}, "input[0].summary"),
    Case("responses reasoning summary part a string", "responses",
         {"input": [{"type": "reasoning", "summary": ["t"]}, *USER]}, "input[0].summary[0]"),
    Case("responses tool name a list", "responses", {"input": "hi", "tools": [{**R_TOOL, "name": ["f"]}]},
         "tools[0].name"),
    Case("responses tool name an object", "responses", {"input": "hi", "tools": [{**R_TOOL, "name": {"f": 1}}]},
         "tools[0].name"),
    Case("responses duplicate tool names", "responses", {"input": "hi", "tools": [R_TOOL, R_TOOL]}, "tools[1].name"),
    Case("responses output without a call", "responses",
         {"input": [*USER, {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}]},
         "input[1].call_id"),
    Case("responses output before its call", "responses",
         {"input": [*USER, {"type": "function_call_output", "call_id": "call_1", "output": "x"},
                    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}],
          "tools": [R_TOOL]}, "input[1].call_id"),
    Case("responses strict tool with an invalid schema", "responses",
         {"input": "hi", "tools": [{**R_TOOL, "parameters": BAD_SCHEMA}]}, "tools[0].parameters"),
    Case("responses input nested 300 deep", "responses",
         {"input": [{"role": "user", "content": [{"type": "input_text", "text": "x", "extra": deep(300)}]}]},
         "input[0].content[0].extra.a", raw=True),
    # ---- Messages (each also sent to count_tokens: see test_count_tokens_refuses_the_same)
    Case("messages tool_use.input nested 300 deep", "messages", {"messages": called(deep(300))},
         "messages.1.content.0.input.a", raw=True),
    Case("messages tool_use.input nested past 128", "messages", {"messages": called(deep(130))},
         "messages.1.content.0.input.a", raw=True),
    Case("messages content part nested past 128", "messages",
         {"messages": [{"role": "user", "content": [{"type": "text", "text": "x", "citations": deep(130)}]}]},
         "messages.0.content.0.citations.a", raw=True),
    Case("messages tool schema nested 300 deep", "messages",
         {"messages": USER, "tools": [{**M_TOOL, "input_schema": {"type": "object", "properties": deep(300)}}]},
         "tools.0.input_schema.properties.a", raw=True),
    Case("messages empty text block", "messages",
         {"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}, "messages.0.content.0.text"),
    Case("messages empty system text block", "messages",
         {"messages": USER, "system": [{"type": "text", "text": ""}]}, "system.0.text"),
    Case("messages empty text block in a tool result", "messages",
         {"messages": [*called({"city": "Rome"})[:2], {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": ""}]}]}],
          "tools": [M_TOOL]}, "messages.2.content.0.content.0.text"),
    Case("messages empty content list", "messages", {"messages": [{"role": "user", "content": []}]},
         "messages.0.content"),
    Case("messages empty content before the last message", "messages",
         {"messages": [*USER, {"role": "assistant", "content": ""}, *USER]}, "messages.1.content"),
    Case("messages duplicate tool names", "messages", {"messages": USER, "tools": [M_TOOL, M_TOOL]}, "tools.1.name"),
    Case("messages strict tool with an invalid schema", "messages",
         {"messages": USER, "tools": [{**M_TOOL, "strict": True, "input_schema": BAD_SCHEMA}]},
         "tools.0.input_schema"),
    Case("messages tool_result answering no tool_use", "messages",
         {"messages": [*USER, {"role": "assistant", "content": "ok"}, {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}]},
         "messages.2.content.0.tool_use_id"),
    Case("unknown path under /v1/messages/", "path", {"path": "/v1/messages/batches"}, None, status=404),
    Case("unknown deeper path under /v1/messages/", "path", {"path": "/v1/messages/count_tokens/x"}, None, status=404),
    # ---- Chat Completions
    Case("chat duplicate tool names", "chat", {"messages": USER, "tools": [C_TOOL, C_TOOL]}, "tools[1].function.name"),
    Case("chat tool message answering no call", "chat",
         {"messages": [*USER, {"role": "tool", "tool_call_id": "call_1", "content": "x"}]},
         "messages[1].tool_call_id"),
    Case("chat tool message answering another call", "chat",
         {"messages": [*USER, {"role": "assistant", "content": None, "tool_calls": [
             {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "call_2", "content": "x"}], "tools": [C_TOOL]},
         "messages[2].tool_call_id"),
    Case("chat tool message after a user message", "chat",
         {"messages": [*USER, {"role": "assistant", "content": None, "tool_calls": [
             {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "call_1", "content": "x"}, *USER,
             {"role": "tool", "tool_call_id": "call_1", "content": "x"}], "tools": [C_TOOL]},
         "messages[4].tool_call_id"),
    Case("chat strict tool with an invalid schema", "chat",
         {"messages": USER, "tools": [{"type": "function", "function": {
             "name": "get_weather", "strict": True, "parameters": BAD_SCHEMA}}]}, "tools[0].function.parameters"),
    Case("chat content nested 300 deep", "chat",
         {"messages": [{"role": "user", "content": [{"type": "text", "text": "x", "extra": deep(300)}]}]},
         "messages[0].content[0].extra.a", raw=True),
]


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with Stack(lambda body: Reply(content="fine")) as s:
        yield s


def answer(stack: Stack, case: Case, front: str | None = None) -> tuple[int, str, Any]:
    """Send ``case`` (to ``front``, else its own): the status, content type and decoded body."""
    front = front or case.front
    body = {"model": "m", **case.body}
    if front == "messages":
        body.setdefault("max_tokens", 100)
    if case.raw or front == "path":
        return _raw(stack, front, body)
    try:
        _sdk(stack, front, body)
    except (openai.APIStatusError, anthropic.APIStatusError) as exc:
        return exc.status_code, exc.response.headers["content-type"], exc.response.json()
    raise AssertionError(f"{case.id}: accepted")


PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages",
         "count": "/v1/messages/count_tokens"}


def _raw(stack: Stack, front: str, body: dict[str, Any]) -> tuple[int, str, Any]:
    assert stack.gateway is not None and stack.gateway.server is not None
    conn = http.client.HTTPConnection("127.0.0.1", stack.gateway.server.port, timeout=20)
    try:
        path = body.pop("path") if front == "path" else PATHS[front]
        conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        got = conn.getresponse()
        return got.status, got.getheader("content-type") or "", json.loads(got.read())
    finally:
        conn.close()


def _sdk(stack: Stack, front: str, body: dict[str, Any]) -> None:
    if front in ("chat", "responses"):
        client = stack.client()
        create: Callable[..., Any] = (client.chat.completions.create if front == "chat"
                                      else client.responses.create)
        create(**body)
        return
    with anthropic.Anthropic(base_url=stack.url.removesuffix("/v1"), api_key="k", max_retries=0,
                             timeout=20) as client:
        if front == "count":
            body.pop("max_tokens", None)
            client.messages.count_tokens(**body)
        else:
            client.messages.create(**body)


def check_shape(case: Case, status: int, kind: str, error: Any) -> str:
    """The error body is the front's own shape; returns its message."""
    assert kind == "application/json", (case.id, kind)
    if case.front in ("messages", "count", "path"):
        assert set(error) == {"type", "error", "request_id"} and error["type"] == "error", (case.id, error)
        assert error["request_id"].startswith("req_"), (case.id, error)  # (as the API's: the header's)
        assert set(error["error"]) == {"type", "message"}, (case.id, error)
        expected = "not_found_error" if status == 404 else "invalid_request_error"
        assert error["error"]["type"] == expected, (case.id, error)
        return error["error"]["message"]  # type: ignore[no-any-return]
    assert set(error) == {"error"} and set(error["error"]) == {"message", "type", "param", "code"}, (case.id, error)
    assert error["error"]["type"] == "invalid_request_error", (case.id, error)
    if case.field is not None:
        assert error["error"]["param"].startswith(case.field), (case.id, error)
    return error["error"]["message"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_refused_in_the_fronts_shape_naming_the_field(stack: Stack, case: Case) -> None:
    before = len(stack.upstream.requests)
    status, kind, error = answer(stack, case)
    assert status == case.status, (case.id, status, error)
    message = check_shape(case, status, kind, error)
    if case.field is not None:
        assert message.startswith(case.field), (case.id, message)
    else:
        assert case.body["path"] in message, (case.id, message)
    assert len(stack.upstream.requests) == before, "nothing refused reaches the upstream"


@pytest.mark.parametrize("case", [c for c in CASES if c.front == "messages"], ids=lambda c: c.id)
def test_count_tokens_refuses_the_same(stack: Stack, case: Case) -> None:
    messages = answer(stack, case)
    counted = answer(stack, Case(case.id, "count", case.body, case.field, case.status, case.raw), "count")
    assert counted[2].pop("request_id") != messages[2].pop("request_id"), "one id per request"
    assert counted == messages


@pytest.mark.parametrize("front, body", [
    ("messages", {"messages": [*USER, {"role": "assistant", "content": ""}]}),  # a prefill may be empty
    ("messages", {"messages": called(deep(120))}),  # within the bound: level 6 plus 120
    ("chat", {"messages": [*USER, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}},
        {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "x"},
        {"role": "tool", "tool_call_id": "call_1", "content": "y"}], "tools": [C_TOOL]}),
    ("chat", {"messages": USER, "tools": [{"type": "function", "function": {
        "name": "get_weather", "strict": True, "parameters": {"type": "object", "properties": {"n": {"type": "int"}}}}}]}),
    ("responses", {"input": [*USER, {"type": "function_call", "call_id": "call_1", "name": "get_weather",
                                     "arguments": "{}"},
                             {"type": "function_call_output", "call_id": "call_1", "output": "x"}],
                   "tools": [R_TOOL]}),
])
def test_what_the_apis_take_is_served(stack: Stack, front: str, body: dict[str, Any]) -> None:
    """The other side of each rule: these pass (a schema type name written by mistake, ``int``,
    is read as what it means, as when arguments are checked)."""
    status, _, answered = _raw(stack, front, {"model": "m", "max_tokens": 100, **body} if front == "messages"
                               else {"model": "m", **body})
    assert status == 200, answered


def test_an_output_may_answer_a_call_of_the_previous_response() -> None:
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    with Stack(lambda body: Reply(content="fine" if body["messages"][-1]["role"] == "tool" else call),
               tool_call_parser="hermes") as s:
        client = s.client()
        first = client.responses.create(model="m", input="Weather?", tools=[R_TOOL])
        made = [item for item in first.output if item.type == "function_call"][0]
        second = client.responses.create(model="m", previous_response_id=first.id, tools=[R_TOOL], input=[
            {"type": "function_call_output", "call_id": made.call_id, "output": "sunny"}])
        assert second.output_text == "fine"
        with pytest.raises(openai.BadRequestError, match="input\\[0\\].call_id"):
            client.responses.create(model="m", previous_response_id=first.id, tools=[R_TOOL], input=[
                {"type": "function_call_output", "call_id": made.call_id + "x", "output": "sunny"}])
