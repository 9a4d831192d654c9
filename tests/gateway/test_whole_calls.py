"""Calls go on the wire whole: over real HTTP, every front streamed, an upstream that cuts a call
at every character position of a Hermes and of a Qwen3-Coder answer (``finish_reason: length``
at the cut). The client never receives a call and is told the output was cut (``length``,
``max_tokens``, ``incomplete``); the complete answer gives exactly the whole answer's call, in
one piece. One gateway serves every position (the cut is named in the request): raw HTTP for
each position, the official SDKs (openai chat and responses, anthropic messages) for a sample.
With ``--stream-arguments``, a call the same upstream chunk opened and cut is not sent either.
While a call is held the stream is kept alive (``ping``, an SSE comment).
"""

from __future__ import annotations

import http.client
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import toolbridge
from tests.budget import examples
from tests.harness import written
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

ARGUMENTS = {"city": "Paris", "days": 3}
LEAD = "Let me check.\n"
ANSWERS = {dialect: LEAD + written(dialect, "get_weather", ARGUMENTS) for dialect in ("hermes", "qwen3_coder")}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
          "required": ["city"]}
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
MESSAGES_TOOLS = [{"name": "get_weather", "input_schema": SCHEMA}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": SCHEMA, "strict": False}]
CUT = {"chat": "length", "messages": "max_tokens", "responses": "incomplete"}
DONE = {"chat": "tool_calls", "messages": "tool_use", "responses": "completed"}


def cutting(body: dict[str, Any]) -> Reply:
    """The upstream: the request's last message says which answer, where to cut it and in which
    chunks (``hermes 40 3``); cut before the end, the answer stops at its length limit."""
    content = body["messages"][-1]["content"]
    dialect, at, chunk = (content if isinstance(content, str) else content[0]["text"]).split()
    text = ANSWERS[dialect]
    n = int(at)
    return Reply(content=text[:n], chunk=int(chunk), finish_reason="length" if n < len(text) else "stop")


@pytest.fixture(scope="module")
def gateway() -> Iterator[Stack]:
    with Stack(cutting, tool_call_parser="auto") as s:
        yield s


@pytest.fixture(scope="module")
def arguments_gateway() -> Iterator[Stack]:
    with Stack(cutting, tool_call_parser="auto", stream_arguments=True) as s:
        yield s


def request(front: str, say: str) -> tuple[str, dict[str, Any]]:
    """The path and streamed body of ``front``'s request saying ``say``."""
    user = [{"role": "user", "content": say}]
    if front == "chat":
        return "/v1/chat/completions", {"model": "m", "messages": user, "tools": CHAT_TOOLS, "stream": True}
    if front == "messages":
        return "/v1/messages", {"model": "m", "max_tokens": 100, "messages": user, "tools": MESSAGES_TOOLS,
                                "stream": True}
    return "/v1/responses", {"model": "m", "input": say, "tools": RESPONSES_TOOLS, "stream": True}


def frames(raw: str) -> list[tuple[str, str]]:
    """The (event name, data) of each SSE event; comments (keep-alives) are listed as ``:``."""
    out = []
    for frame in raw.split("\n\n"):
        if not frame:
            continue
        name, data = "", []
        for line in frame.split("\n"):
            if line.startswith(":"):
                name = name or ":"
            elif line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        out.append((name, "\n".join(data)))
    return out


def outcome(front: str, events: list[tuple[str, str]]) -> tuple[list[tuple[str, Any, int]], str]:
    """The calls a client of ``front`` received (name, arguments, how many events carried them)
    and how the answer ended, read from the events as sent."""
    if front == "chat":
        parts, finish = [], ""
        for _, data in events:
            if data == "[DONE]" or not data:
                continue
            for choice in json.loads(data)["choices"]:
                parts += choice["delta"].get("tool_calls") or ()
                finish = choice.get("finish_reason") or finish
        by_index: dict[int, list[Any]] = {}
        for part in parts:
            by_index.setdefault(part["index"], []).append(part)
        return [(p[0]["function"]["name"], json.loads("".join(q["function"]["arguments"] for q in p)), len(p))
                for p in by_index.values()], finish
    decoded = [(name, json.loads(data)) for name, data in events if name not in (":", "ping")]
    if front == "messages":
        calls, stop = [], ""
        for name, data in decoded:
            if name == "content_block_start" and data["content_block"]["type"] == "tool_use":
                calls.append([data["content_block"]["name"], "", 0])
            elif name == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
                calls[-1][1] += data["delta"]["partial_json"]
                calls[-1][2] += 1
            elif name == "message_delta":
                stop = data["delta"]["stop_reason"]
        return [(c[0], json.loads(c[1]), c[2]) for c in calls], stop
    calls, status = [], ""
    for name, data in decoded:
        if name == "response.output_item.added" and data["item"]["type"] == "function_call":
            calls.append([data["item"]["name"], "", 0])
        elif name == "response.function_call_arguments.delta":
            calls[-1][1] += data["delta"]
            calls[-1][2] += 1
        elif name in ("response.completed", "response.incomplete"):
            status = data["response"]["status"]
    return [(c[0], json.loads(c[1]), c[2]) for c in calls], status


def streamed(connection: http.client.HTTPConnection, front: str, say: str) -> list[tuple[str, str]]:
    path, body = request(front, say)
    connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200
    return frames(response.read().decode())


def positions(dialect: str) -> list[int]:
    """Every cut position of the answer (a sample in the short profile, the ends always kept)."""
    n = len(ANSWERS[dialect])
    every = list(range(n + 1))
    take = examples(n + 1, floor=40)
    if take >= len(every):
        return every
    return sorted({0, n - 1, n, *random.Random(dialect).sample(every, take)})


# A call's own end: once it is written the call is complete, and a length stop after it (inside
# Qwen3-Coder's </tool_call>, which closes the block) does not cut the call.
CALL_END = {"hermes": "</tool_call>", "qwen3_coder": "</function>"}


def kept_at_the_cut(dialect: str, text: str) -> bool:
    """Whether the whole answer cut to ``text`` by the length limit still has a call: exactly
    when the call's own end was written (checked)."""
    kept = bool(toolbridge.parse(text, "auto", CHAT_TOOLS, True).message.get("tool_calls"))
    assert kept == (CALL_END[dialect] in text), f"{dialect} cut to {text!r}: a call {'kept' if kept else 'lost'}"
    return kept


def check_every_cut(s: Stack, sent: Callable[[str, list[tuple[str, Any, int]]], None]) -> None:
    """Each position of each answer on each front: a cut answer has no call and ends as cut;
    the complete one has its call (``sent`` checks how it came), and so has one cut after the
    call's own end (``kept_at_the_cut``): the stream is the whole answer."""
    connection = http.client.HTTPConnection("127.0.0.1", int(s.url.split(":")[2].split("/")[0]), timeout=20)
    try:
        for dialect, text in ANSWERS.items():
            for at in positions(dialect):
                keeps = at < len(text) and kept_at_the_cut(dialect, text[:at])
                for front in CUT:
                    calls, end = outcome(front, streamed(connection, front, f"{dialect} {at} {1 + at % 7}"))
                    where = f"{front}, {dialect} cut at {at}: {text[:at]!r}"
                    if at < len(text) and not keeps:
                        assert calls == [] and end == CUT[front], where
                    else:
                        assert end == DONE[front], where
                        sent(where, calls)
    finally:
        connection.close()


def test_a_cut_call_never_reaches_the_client_on_any_front(gateway: Stack) -> None:
    def whole(where: str, calls: list[tuple[str, Any, int]]) -> None:
        assert calls == [("get_weather", ARGUMENTS, 1)], where  # one piece: one delta

    check_every_cut(gateway, whole)


def test_with_stream_arguments_a_call_cut_within_one_chunk_is_not_sent(arguments_gateway: Stack) -> None:
    """Short call blocks are read when they close (``HOLD_BLOCK``), so every call of these
    answers opens in the chunk that ends it: cut, the same chunk aborts it, and nothing of it
    is sent even when arguments stream as written."""
    def fragments(where: str, calls: list[tuple[str, Any, int]]) -> None:
        assert [(name, args) for name, args, _ in calls] == [("get_weather", ARGUMENTS)], where

    check_every_cut(arguments_gateway, fragments)


# ---------------------------------------------------------------- the SDKs, on a sample


def sample() -> list[tuple[str, int]]:
    out = []
    for dialect, text in ANSWERS.items():
        name = text.index("get_weather")
        out += [(dialect, len(LEAD) + 1), (dialect, name + 5), (dialect, text.index("Paris") + 2),
                (dialect, len(text) - 1), (dialect, len(text))]
    return out


@pytest.mark.parametrize(("dialect", "at"), sample())
def test_the_sdks_see_no_cut_call(gateway: Stack, dialect: str, at: int) -> None:
    say, text = f"{dialect} {at} 2", ANSWERS[dialect]
    kept = at < len(text) and kept_at_the_cut(dialect, text[:at])  # (see check_every_cut)
    complete = at == len(text) or kept
    with gateway.client() as c:
        chunks = list(c.chat.completions.create(model="m", messages=[{"role": "user", "content": say}],
                                                tools=CHAT_TOOLS, stream=True))
        parts = [p for ch in chunks if ch.choices for p in ch.choices[0].delta.tool_calls or ()]
        assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == ("tool_calls" if complete
                                                                                    else "length")
        assert [(p.function.name, json.loads(p.function.arguments)) for p in parts] == (
            [("get_weather", ARGUMENTS)] if complete else [])
        with c.responses.stream(model="m", input=say, tools=RESPONSES_TOOLS) as events:
            response = list(events)[-1].response  # (completed or incomplete)
        calls = [(o.name, json.loads(o.arguments)) for o in response.output if o.type == "function_call"]
        assert calls == ([("get_weather", ARGUMENTS)] if complete else [])
        assert response.status == ("completed" if complete else "incomplete")
    with anthropic.Anthropic(base_url=gateway.url.removesuffix("/v1"), api_key="k", max_retries=0) as a, \
            a.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": say}],
                              tools=MESSAGES_TOOLS) as stream:
        message = stream.get_final_message()
    assert [(b.name, b.input) for b in message.content if b.type == "tool_use"] == (
        [("get_weather", ARGUMENTS)] if complete else [])
    assert message.stop_reason == ("tool_use" if complete else "max_tokens")


# ---------------------------------------------------------------- a long call held


@pytest.mark.parametrize("front", sorted(CUT))
def test_the_stream_stays_alive_while_a_long_call_is_held(monkeypatch: pytest.MonkeyPatch, front: str) -> None:
    """A call of 3,000 characters written over 30 paced chunks: nothing of it can be sent until
    it ends, so the front's keep-alive goes out meanwhile (an SSE comment, or Messages' ping),
    after the text before the call; then the call comes whole."""
    from toolbridge.gateway.fronts import chat
    from toolbridge.gateway.fronts.messages import stream as messages_stream
    from toolbridge.gateway.fronts.responses import stream as responses_stream

    for module in (chat, messages_stream, responses_stream):
        monkeypatch.setattr(module, "IDLE_SECONDS", 0.01)
    content = "x" * 3000
    text = LEAD + written("hermes", "get_weather", {"city": content})
    with Stack(lambda b: Reply(content=text, chunk=100, pace=0.02), tool_call_parser="hermes") as s:
        connection = http.client.HTTPConnection("127.0.0.1", int(s.url.split(":")[2].split("/")[0]), timeout=20)
        events = streamed(connection, front, "write it")
        connection.close()
    alive = ":" if front != "messages" else "ping"
    text_at = min(i for i, (_, data) in enumerate(events) if "Let me check." in data)
    marker = {"chat": '"tool_calls"', "messages": '"type":"tool_use"', "responses": '"type":"function_call"'}[front]
    call_at = min(i for i, (_, data) in enumerate(events) if marker in data)
    held = [name for name, _ in events[text_at:call_at]]
    assert held.count(alive) >= 2, "kept alive between the text and the call it held"
    calls, end = outcome(front, events)
    assert calls == [("get_weather", {"city": content}, 1)] and end == DONE[front]


# ---------------------------------------------------------------- --stream-arguments, in process


def translated(chunks: list[tuple[str, str | None]], stream_arguments: bool) -> tuple[list[Any], str]:
    """The call deltas and finish reason the chat front makes of upstream chunks (content,
    finish reason), the request offering ``get_weather`` and ``read_file``."""
    from toolbridge.gateway.fronts.chat import StreamTranslator, plan_request
    from toolbridge.gateway.turn import Settings

    tools = [*CHAT_TOOLS, {"type": "function", "function": {"name": "read_file", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}}}}]
    plan = plan_request({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": tools,
                         "stream": True}, Settings("hermes", stream_arguments=stream_arguments))
    translator = StreamTranslator(plan)
    out = []
    for content, finish in chunks:
        out += translator.feed({"id": "c", "created": 1, "model": "m", "choices": [
            {"index": 0, "delta": {"content": content}, "finish_reason": finish}]})
    out += translator.finish()
    parts = [p for c in out for ch in c["choices"] for p in ch["delta"].get("tool_calls") or ()]
    return parts, [ch["finish_reason"] for c in out for ch in c["choices"] if ch["finish_reason"]][-1]


LONG = 'Reading.\n<tool_call>{"name": "read_file", "arguments": {"path": "' + "a" * 300


@pytest.mark.parametrize("stream_arguments", [False, True])
def test_a_call_the_finishing_chunk_opens_and_the_cut_aborts_is_not_sent(stream_arguments: bool) -> None:
    """The upstream's last chunk carries both the opening of a long call and ``length``: its
    events wait for the close, which aborts the call, so its opening never goes out."""
    assert translated([(LONG[:20], None), (LONG[20:], "length")], stream_arguments) == ([], "length")


def test_with_stream_arguments_a_call_opened_before_the_finishing_chunk_cannot_be_taken_back() -> None:
    parts, finish = translated([(LONG[:20], None), (LONG[20:], None), ("aaa", "length")], True)
    assert parts and parts[0]["function"]["name"] == "read_file" and finish == "length"
    assert translated([(LONG[:20], None), (LONG[20:], None), ("aaa", "length")], False) == ([], "length")


def test_what_a_stream_holds_is_bounded_by_max_answer() -> None:
    """A call longer than ``--max-answer`` characters cannot be held to be checked: the stream
    ends with the error event, after the text before it, and nothing of the call."""
    text = LEAD + written("hermes", "get_weather", {"city": "x" * 3000})
    with Stack(lambda b: Reply(content=text, chunk=50), tool_call_parser="hermes", max_answer=2000) as s:
        connection = http.client.HTTPConnection("127.0.0.1", int(s.url.split(":")[2].split("/")[0]), timeout=20)
        events = streamed(connection, "chat", "write it")
        connection.close()
    last = json.loads(events[-1][1])
    assert last["error"]["code"] == "answer_too_large" and "--max-answer" in last["error"]["message"]
    assert not [data for _, data in events if '"tool_calls"' in data]
    assert any("Let me check." in data for _, data in events)
