"""The Anthropic Messages front, streamed: ``messages.stream`` over real HTTP; streamed and whole
answers compared through the SDK's own parsing, and the event sequence checked as sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.test_fallback import model, model_dir, stack
from tests.gateway.test_messages import (
    CALLS,
    CAPTURES,
    FINAL,
    TOOLS,
    USER,
    agent,
    blocks,
    client,
    create,
)
from toolbridge.gateway.fronts.messages import stream as messages_stream
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")


def stream(s: Stack, messages: list[Any] = USER, **kw: Any) -> tuple[Any, list[Any]]:
    """The SDK's final message and the raw events it saw."""
    kw.setdefault("tools", TOOLS)
    with client(s) as c, c.messages.stream(model="m", max_tokens=1000, messages=messages, **kw) as events:
        seen = list(events)
        return events.get_final_message(), seen


def same(whole: Any, streamed: Any, exact: bool = True) -> None:
    """The two answers are one message: blocks, stop reason and sequence, usage. Not ``exact``:
    the model wrote text after a call, which a stream keeps in its place and a whole answer
    (one text block, as the chat message has one content) puts first: the same text and calls."""
    if exact:
        assert blocks(whole) == blocks(streamed)
    else:
        for kind in ("thinking", "tool_use"):
            assert [p for t, p in blocks(whole) if t == kind] == [p for t, p in blocks(streamed) if t == kind]
        assert "".join(p for t, p in blocks(whole) if t == "text") == \
            "".join(p for t, p in blocks(streamed) if t == "text")
    assert (whole.stop_reason, whole.stop_sequence) == (streamed.stop_reason, streamed.stop_sequence)
    assert whole.usage.model_dump() == streamed.usage.model_dump()
    assert all(b.id.startswith("toolu_") for b in streamed.content if b.type == "tool_use")


def sse(s: Stack, body: dict[str, Any], headers: dict[str, str] | None = None, path: str = "/v1/messages") -> list[
        tuple[str, dict[str, Any]]]:
    """The (event name, data) pairs of a streamed answer, read without the SDK."""
    import urllib.request

    request = urllib.request.Request(s.url.removesuffix("/v1") + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=20) as r:
        assert r.headers["content-type"] == "text/event-stream"
        text = r.read().decode()
    out = []
    for frame in text.split("\n\n"):
        if frame:
            name, data = frame.split("\n")
            out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def check_sequence(events: list[tuple[str, dict[str, Any]]]) -> None:
    """message_start first; each block started, filled and stopped under its own index, in
    order; then message_delta and message_stop; names and types agree."""
    names = [n for n, _ in events if n != "ping"]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert all(n == d["type"] for n, d in events)
    open_index, started = None, 0
    for name, data in events:
        if name == "content_block_start":
            assert open_index is None and data["index"] == started
            open_index, started = data["index"], started + 1
        elif name == "content_block_delta":
            assert data["index"] == open_index
        elif name == "content_block_stop":
            assert data["index"] == open_index
            open_index = None
    assert open_index is None


@pytest.mark.parametrize("dialect", sorted(CALLS))
@pytest.mark.parametrize("chunk", [1, 4, 11])
def test_two_turn_loop_streamed_equals_whole(dialect: str, chunk: int) -> None:
    with Stack(agent(CALLS[dialect], chunk=chunk, reasoning="Paris, then."), tool_call_parser=dialect) as s:
        first, _ = stream(s)
        same(create(s), first)
        assert [t for t, _ in blocks(first)] == ["thinking", "text", "tool_use"]
        assert first.stop_reason == "tool_use" and first.content[0].signature
        assert s.upstream.requests[-2]["stream_options"] == {"include_usage": True}
        history = [*USER, {"role": "assistant", "content": first.content},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[2].id,
                                                 "content": "sunny"}]}]
        second, _ = stream(s, history)
        assert blocks(second) == [("text", FINAL)] and second.stop_reason == "end_turn"
        sent = s.upstream.requests[-1]["messages"]
        assert sent[-1]["tool_call_id"] == sent[-2]["tool_calls"][0]["id"]
        assert sent[-2]["reasoning_content"] == "Paris, then."


@pytest.mark.parametrize("text", [
    "".join(f'<tool_call>{{"name": "read_file", "arguments": {{"path": "f{i}"}}}}</tool_call>\n' for i in range(3)),
    '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call> and then some prose',
    "Compare: a <b> c, x < y, and <tool_call> is how I would call a tool.",
    "",
])
def test_streamed_equals_whole(text: str) -> None:
    with Stack(lambda b: Reply(content=text, chunk=3), tool_call_parser="hermes") as s:
        streamed, _ = stream(s)
        same(create(s), streamed, exact="then some prose" not in text)
        if "then some prose" in text:
            assert [t for t, _ in blocks(streamed)] == ["tool_use", "text"], "the model's order"


def test_native_calls_stream_as_tool_use_blocks() -> None:
    native = [{"id": f"call_n{i}", "type": "function",
               "function": {"name": "read_file", "arguments": json.dumps({"path": f"/{i}"})}} for i in range(2)]
    for quirk in ("", "whole", "id_every_chunk", "no_index", "object_arguments"):
        with Stack(lambda b, q=quirk: Reply(content="", tool_calls=native, quirk=q, finish_reason="tool_calls"),
                   tool_call_parser="hermes") as s:
            streamed, _ = stream(s)
            assert blocks(streamed) == [("tool_use", ("read_file", {"path": f"/{i}"})) for i in range(2)], quirk
            same(create(s), streamed)


def test_events_follow_the_api_and_a_call_comes_whole() -> None:
    long_path = "/src/" + "deep/" * 40 + "file.py"
    text = f'Reading.\n<tool_call>{{"name": "read_file", "arguments": {{"path": "{long_path}"}}}}</tool_call> Done.'
    with Stack(lambda b: Reply(content=text, chunk=5), tool_call_parser="hermes") as s:
        events = sse(s, {"model": "m", "max_tokens": 100, "messages": USER, "tools": TOOLS, "stream": True})
    check_sequence(events)
    names = [n for n, _ in events]
    at = [d.get("content_block", {}).get("type") for _, d in events].index("tool_use")
    assert names[at:at + 3] == ["content_block_start", "content_block_delta", "content_block_stop"]
    assert events[at][1]["content_block"]["name"] == "read_file" and events[at][1]["content_block"]["input"] == {}
    assert json.loads(events[at + 1][1]["delta"]["partial_json"]) == {"path": long_path}
    assert [d["delta"]["type"] for n, d in events if n == "content_block_delta"].count("input_json_delta") == 1
    assert names.count("content_block_delta") > 2, "the text streams as written"
    assert events[-2][1]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}


def test_events_follow_the_api_and_calls_stream_as_written() -> None:
    long_path = "/src/" + "deep/" * 40 + "file.py"
    text = f'Reading.\n<tool_call>{{"name": "read_file", "arguments": {{"path": "{long_path}"}}}}</tool_call>'
    with Stack(lambda b: Reply(content=text, chunk=5), tool_call_parser="hermes", stream_arguments=True) as s:
        events = sse(s, {"model": "m", "max_tokens": 100, "messages": USER, "tools": TOOLS, "stream": True})
    check_sequence(events)
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use"]
    assert starts[1]["name"] == "read_file" and starts[1]["input"] == {} and starts[1]["id"].startswith("toolu_")
    fragments = [d["delta"]["partial_json"] for n, d in events
                 if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta"]
    assert len(fragments) > 20, "streamed as the model writes it, not at the end"
    assert json.loads("".join(fragments)) == {"path": long_path}
    assert events[-2][1]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert events[-2][1]["usage"]["output_tokens"] == 20 and events[-2][1]["usage"]["input_tokens"] == 10
    start = events[0][1]["message"]
    assert start["id"].startswith("msg_") and start["content"] == [] and start["stop_reason"] is None
    assert set(start["usage"]) == {"input_tokens", "output_tokens", "cache_creation_input_tokens",
                                   "cache_read_input_tokens"}


def test_a_call_cut_by_the_limit_ends_with_max_tokens() -> None:
    cut = 'Reading.\n<tool_call>{"name": "read_file", "arguments": {"path": "/etc/ho'
    with Stack(lambda b: Reply(content=cut, finish_reason="length", chunk=4), tool_call_parser="hermes") as s:
        streamed, _ = stream(s)
        events = sse(s, {"model": "m", "max_tokens": 100, "messages": USER, "tools": TOOLS, "stream": True})
    assert streamed.stop_reason == "max_tokens"
    check_sequence(events)
    assert events[-2][1]["delta"]["stop_reason"] == "max_tokens"
    assert blocks(streamed) == [("text", cut)], "no tool_use block: the cut call never reached the client"
    assert not [d for n, d in events if n == "content_block_start" and d["content_block"]["type"] == "tool_use"]


def test_ping_while_the_upstream_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(messages_stream, "IDLE_SECONDS", 0.02)
    with Stack(lambda b: Reply(content="slow answer", chunk=4, pace=0.15), tool_call_parser="hermes") as s:
        events = sse(s, {"model": "m", "max_tokens": 100, "messages": USER, "stream": True})
        streamed, _ = stream(s)
    assert [n for n, _ in events].count("ping") >= 2
    check_sequence(events)
    assert blocks(streamed) == [("text", "slow answer")]


def test_a_failure_after_the_stream_began_is_an_error_event() -> None:
    with Stack(lambda b: Reply(content="a long answer that is cut", chunk=2, cut_after=4),
               tool_call_parser="hermes") as s:
        with pytest.raises(anthropic.APIStatusError) as failed:
            stream(s)
        assert failed.value.body["type"] == "error" and failed.value.body["error"]["type"] == "api_error"


@pytest.mark.parametrize("stream_arguments", [False, True])
def test_a_call_that_broke_after_it_began_ends_with_max_tokens(stream_arguments: bool) -> None:
    """The client is told the output was cut, as the API does when its limit falls inside a
    tool_use; the whole answer has the call as text. By default nothing of the call was sent:
    the stream is the whole answer; with --stream-arguments its opening went out (a block longer
    than one chunk) and cannot be taken back."""
    malformed = 'Reading.\n<tool_call>{"name": "read_file", "arguments": {"path": "' + "a" * 200 + '", </tool_call>'
    with Stack(lambda b: Reply(content=malformed), tool_call_parser="hermes", stream_arguments=stream_arguments) as s:
        streamed, _ = stream(s)
        whole = create(s)
    assert streamed.stop_reason == whole.stop_reason == "max_tokens"
    assert blocks(whole) == [("text", malformed)]
    if stream_arguments:
        assert [t for t, _ in blocks(streamed)] == ["text", "tool_use", "text"]
        assert "".join(b.text for b in streamed.content if b.type == "text").endswith(malformed[8:])
    else:
        assert blocks(streamed) == blocks(whole)


def test_an_error_before_the_stream_keeps_its_status() -> None:
    with Stack(lambda b: Reply(status=529, error="overloaded"), tool_call_parser="hermes") as s:
        with pytest.raises(anthropic.APIStatusError) as failed:
            stream(s)
        assert failed.value.status_code == 529 and failed.value.body["error"]["message"] == "overloaded"


def test_claude_codes_streamed_request() -> None:
    path = CAPTURES / "claude-code-1-first-turn.json"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    capture = json.loads(path.read_text())
    call = "<tool_call>\n<function=Read>\n<parameter=file_path>\n/w/x.txt\n</parameter>\n</function>\n</tool_call>"
    headers = {k: v for k, v in capture["headers"].items() if k.lower().startswith(("anthropic-", "x-app"))}
    with Stack(lambda b: Reply(content=call, reasoning="Read it."), tool_call_parser="qwen3_coder") as s:
        events = sse(s, capture["body"], headers, capture["path"])
    check_sequence(events)
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["thinking", "tool_use"] and starts[1]["name"] == "Read"


@pytest.mark.parametrize("streamed", [False, True])
def test_every_upstream_kind(tmp_path: Path, streamed: bool) -> None:
    """The completions mode with the injected protocol, and a chat upstream that refuses tools
    (retried with the protocol), behind this front: the loop as a Messages client sees it."""
    weather = [TOOLS[1]]
    for config in ({"upstream_api": "completions", "model_dir": model_dir(tmp_path), "tool_fallback": True},
                   {"tool_fallback": True}):
        with stack(model(refuse_tools="model_dir" not in config), **config) as s:
            ask = (lambda m: stream(s, m, tools=weather)[0]) if streamed else (lambda m: create(s, m, tools=weather))
            first = ask(USER)
            assert blocks(first) == [("text", "Let me check."), ("tool_use", ("get_weather", {"city": "Paris", "days": 3}))]
            history = [*USER, {"role": "assistant", "content": first.content},
                       {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[1].id,
                                                     "content": "sunny"}]}]
            second = ask(history)
            assert blocks(second) == [("text", "Sunny in Paris for 3 days.")], config


def test_stop_sequence_streamed_when_the_upstream_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge.gateway.replay.upstream as replay

    plain = replay.stream_chunks

    def naming(reply: Reply, body: dict[str, Any], pieces: list[str] | None = None) -> list[dict[str, Any]]:
        chunks = plain(reply, body, pieces)
        for chunk in chunks:
            for choice in chunk["choices"]:
                if choice["finish_reason"]:
                    choice["matched_stop"] = "END"  # as SGLang names the stop string that matched
        return chunks

    monkeypatch.setattr(replay, "stream_chunks", naming)
    with Stack(lambda b: Reply(content="one two", chunk=2), tool_call_parser="hermes") as s:
        streamed, _ = stream(s, stop_sequences=["END"])
    assert (streamed.stop_reason, streamed.stop_sequence) == ("stop_sequence", "END")
    assert blocks(streamed) == [("text", "one two")]


@pytest.mark.parametrize("kind", ["cut", "broken"])
def test_a_call_opened_then_cut_is_not_repeated_as_text_after_its_block(kind: str) -> None:
    """With --stream-arguments a call's block opens before the call ends. When the call is then
    cut by the limit, the block stays (it cannot be taken back) and the message ends with
    max_tokens; the call's markup never follows it as a text block. A call that broke instead
    (malformed, the model going on after it) keeps its text after the block: what of it is
    markup and what the model's next words is not known."""
    opening = 'Reading.\n<tool_call>{"name": "read_file", "arguments": {"path": "' + "a" * 200
    if kind == "cut":
        reply = Reply(content=opening, finish_reason="length")
    else:
        reply = Reply(content=opening + '", </tool_call> Sorry.')
    with Stack(lambda b: reply, tool_call_parser="hermes", stream_arguments=True) as s:
        streamed, _ = stream(s)
        events = sse(s, {"model": "m", "max_tokens": 100, "messages": USER, "tools": TOOLS, "stream": True})
    check_sequence(events)
    kinds = [t for t, _ in blocks(streamed)]
    assert streamed.stop_reason == "max_tokens"
    assert kinds == (["text", "tool_use", "text"] if kind == "broken" else ["text", "tool_use"]), blocks(streamed)
    texts = [b.text for b in streamed.content if b.type == "text"]
    assert texts[0] == "Reading."
    if kind == "cut":
        assert len(texts) == 1 and streamed.content[1].name == "read_file"
    else:
        assert texts[1].endswith("</tool_call> Sorry.")


def test_message_start_carries_the_input_count_and_message_delta_the_upstreams() -> None:
    """``message_start`` has the request's input tokens as count_tokens counts them (here the
    estimate); the upstream's own count, when it reports one, comes in ``message_delta``; without
    one, the first count stands."""
    body = {"model": "m", "max_tokens": 100, "messages": USER, "tools": TOOLS, "system": "Be terse. " * 40}
    with Stack(lambda b: Reply(content="Sunny.", usage={"prompt_tokens": 321, "completion_tokens": 2,
                                                        "total_tokens": 323}), tool_call_parser="hermes") as s:
        with client(s) as c:
            counted = c.messages.count_tokens(**{k: v for k, v in body.items() if k != "max_tokens"}).input_tokens
        events = sse(s, {**body, "stream": True})
        streamed, _ = stream(s, system=body["system"])
    start, delta = events[0][1]["message"]["usage"], events[-2][1]["usage"]
    assert start["input_tokens"] == counted > 100 and start["output_tokens"] == 0
    assert delta["input_tokens"] == 321 and streamed.usage.input_tokens == 321
    with Stack(lambda b: Reply(content="Sunny.", usage={}), tool_call_parser="hermes") as s:  # no counts
        events = sse(s, {**body, "stream": True})
    assert events[0][1]["message"]["usage"]["input_tokens"] == events[-2][1]["usage"]["input_tokens"] == counted
