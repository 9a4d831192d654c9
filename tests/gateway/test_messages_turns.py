"""The Anthropic Messages front across turns: count_tokens, ids, the reasoning round trip, and
what the gateway reports (provenance header, metrics by front)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.gateway.test_fallback import tokenizer_model_dir
from tests.gateway.test_messages import CALLS, TOOLS, USER, agent, client, create, raw
from toolbridge.gateway.fronts.messages.ids import tool_use_id, upstream_id
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")


def count(s: Stack, **kw: Any) -> tuple[int, str]:
    with client(s) as c:
        answer = c.messages.with_raw_response.count_tokens(model="m", **kw)
        return answer.parse().input_tokens, answer.headers["x-toolbridge-token-count"]


# ---------------------------------------------------------------- count_tokens


def test_count_tokens_estimates_without_a_tokenizer() -> None:
    with Stack(lambda b: Reply(content="unused"), tool_call_parser="hermes") as s:
        small, how = count(s, messages=[{"role": "user", "content": "x"}])
        assert how == "estimate" and small >= 1
        big, _ = count(s, messages=USER, tools=TOOLS, system="You are terse. " * 50)
        assert big > small + 150
        assert s.upstream.requests == [], "counted here, not upstream"


def test_count_tokens_uses_the_models_tokenizer(tmp_path: Path) -> None:
    folder, expected = tokenizer_model_dir(tmp_path)
    messages = [{"role": "user", "content": "Hi there, how are you?"}]
    with Stack(lambda b: Reply(content="unused"), model_dir=folder, upstream_api="completions") as s:
        assert count(s, messages=messages, system="Be brief.") == (expected, "tokenizer")


def test_count_tokens_refuses_what_messages_refuses() -> None:
    with Stack(lambda b: Reply(content="unused"), tool_call_parser="hermes") as s:
        status, _, answer = raw(s, "/v1/messages/count_tokens", {
            "model": "m", "messages": USER, "tools": [{"type": "web_search_20250305", "name": "web_search"}]})
        assert status == 400 and answer["type"] == "error" and answer["error"]["message"].startswith("tools.0.type")
        status, _, answer = raw(s, "/v1/messages/count_tokens", {"model": "m"})
        assert status == 400 and answer["error"]["message"].startswith("messages")


# ---------------------------------------------------------------- ids


@given(st.text(min_size=1, max_size=80))
def test_a_tool_use_id_carries_the_upstream_id(call_id: str) -> None:
    client_id = tool_use_id(call_id)
    assert client_id.startswith("toolu_") and all(c.isalnum() or c in "_-" for c in client_id)
    assert upstream_id(client_id) == call_id


def test_ids_of_other_origins_pass_as_they_are() -> None:
    for foreign in ("toolu_01A09q90qw90lq917835lq9", "call_abc", "toolu_", "toolu_12345678b%%%"):
        assert upstream_id(foreign) == foreign


def test_ids_stay_unique_and_map_back_over_many_turns() -> None:
    """An upstream that numbers its calls from 0 every turn (as Kimi's do): the client still
    sees distinct ids, and each turn's history reaches the upstream with the upstream's own."""
    native = [{"id": "functions.read_file:0", "type": "function",
               "function": {"name": "read_file", "arguments": '{"path": "/a"}'}}]

    def script(body: dict[str, Any]) -> Reply:
        if len(body["messages"]) > 8:
            return Reply(content="done")
        return Reply(content="", tool_calls=native, finish_reason="tool_calls")

    with Stack(script, tool_call_parser="kimi_k2") as s:
        history: list[Any] = list(USER)
        seen = set()
        while True:
            answer = create(s, history)
            if answer.stop_reason != "tool_use":
                break
            call = answer.content[0]
            assert call.id not in seen
            seen.add(call.id)
            history += [{"role": "assistant", "content": answer.content},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                      "content": "A"}]}]
        sent = s.upstream.requests[-1]["messages"]
        assert len(seen) == 4
        assert {m["tool_call_id"] for m in sent if m["role"] == "tool"} == {"functions.read_file:0"}


# ---------------------------------------------------------------- reasoning history


@pytest.mark.parametrize("drop", [False, True])
def test_reasoning_history_round_trip_and_the_flag(drop: bool) -> None:
    with Stack(agent(CALLS["hermes"], reasoning="Paris first."), tool_call_parser="hermes",
               drop_reasoning_history=drop) as s:
        first = create(s)
        history = [*USER, {"role": "assistant", "content": first.content},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[2].id,
                                                 "content": "sunny"}]}]
        create(s, history)
        assistant = s.upstream.requests[-1]["messages"][-2]
        assert ("reasoning_content" in assistant) is not drop
        chat = [*USER, {"role": "assistant", "content": "x", "reasoning_content": "hmm", "reasoning": "hmm"},
                {"role": "user", "content": "go on"}]
        s.client().chat.completions.create(model="m", messages=chat)
        sent = s.upstream.requests[-1]["messages"][1]
        assert ("reasoning_content" in sent and "reasoning" in sent) is not drop, "every front"


# ---------------------------------------------------------------- reporting


def test_provenance_header_and_metrics_by_front() -> None:
    with Stack(agent(CALLS["qwen3_coder"]), tool_call_parser="qwen3_coder") as s:
        with client(s) as c:
            answer = c.messages.with_raw_response.create(model="m", max_tokens=100, messages=USER, tools=TOOLS)
        assert answer.headers["x-toolbridge-calls"].startswith("native=0; content=1; reasoning=0")
        with client(s) as c, c.messages.stream(model="m", max_tokens=100, messages=USER, tools=TOOLS) as events:
            assert events.get_final_message().stop_reason == "tool_use"
        s.client().chat.completions.create(model="m", messages=USER, tools=[
            {"type": "function", "function": {"name": t["name"], "parameters": t["input_schema"]}} for t in TOOLS])
        text = urllib.request.urlopen(s.url.removesuffix("/v1") + "/metrics").read().decode()
        assert 'toolbridge_tool_calls_total{front="messages",source="content"} 2' in text
        assert 'toolbridge_tool_calls_total{front="chat",source="content"} 1' in text
        assert 'toolbridge_requests_total{endpoint="/v1/messages",status="200"} 2' in text


def test_the_estimate_is_never_zero() -> None:
    with Stack(lambda b: Reply(content="unused"), tool_call_parser="hermes") as s:
        status, head, answer = raw(s, "/v1/messages/count_tokens",
                                   {"model": "m", "messages": [{"role": "user", "content": " "}]})
        assert status == 200 and answer == {"input_tokens": answer["input_tokens"]} and answer["input_tokens"] >= 1
        assert head["x-toolbridge-token-count"] == "estimate"
        assert json.dumps(answer)


# ---------------------------------------------------------------- strict tools


@pytest.mark.parametrize("streamed", [False, True])
def test_strict_tools_follow_the_invalid_policy(streamed: bool) -> None:
    from tests.gateway.test_invalid_policy import MISSING, model

    tool = {"name": "get_weather", "strict": True, "input_schema": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}

    def ask(s: Stack) -> Any:
        with client(s) as c:
            if not streamed:
                return c.messages.create(model="m", max_tokens=100, messages=USER, tools=[tool])
            with c.messages.stream(model="m", max_tokens=100, messages=USER, tools=[tool]) as events:
                return events.get_final_message()

    with Stack(model(), tool_call_parser="hermes") as s:  # pass: a strict tool's bad call is refused
        with pytest.raises(anthropic.APIStatusError, match=MISSING):
            ask(s)
    with Stack(model(), tool_call_parser="hermes", on_invalid="retry") as s:
        got = ask(s)
        assert [(b.name, b.input) for b in got.content if b.type == "tool_use"] == \
            [("get_weather", {"city": "Paris", "days": 3})]
        assert got.stop_reason == "tool_use" and len(s.upstream.requests) == 2
