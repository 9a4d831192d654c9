"""Tool results reach the upstream in the order of the calls, on every front, whatever order the
client sends them in; a result that answers no call is a 400 in the front's error shape. Over
real HTTP with the official SDKs: the upstream plays a model that makes three parallel calls,
then checks the order of the results it is given (a template pairs them by position)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

CITIES = ["Paris", "Oslo", "Lima"]
NATIVE = [{"id": f"call_up{i}", "type": "function",
           "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}
          for i, city in enumerate(CITIES)]
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def model(body: dict[str, Any]) -> Reply:
    """Three parallel calls; given the results, an answer that says whether each result sits
    where its call does (what a template that pairs by position shows the model)."""
    messages = body["messages"]
    if not any(m["role"] == "tool" for m in messages):
        return Reply(content="", tool_calls=NATIVE, finish_reason="tool_calls")
    start = max(i for i, m in enumerate(messages) if m.get("tool_calls")) + 1
    calls = messages[start - 1]["tool_calls"]
    results = [m for m in messages[start:] if m["role"] == "tool"]
    paired = all(r["tool_call_id"] == c["id"] and json.loads(c["function"]["arguments"])["city"] in r["content"]
                 for c, r in zip(calls, results, strict=True))
    return Reply(content="paired" if paired else "mispaired")


def sent_results(s: Stack) -> list[str]:
    return [m["content"] for m in s.upstream.requests[-1]["messages"] if m["role"] == "tool"]


def reordered(s: Stack, front: str) -> bool:
    """Whether one request of ``front`` was counted as reordered."""
    assert s.gateway is not None
    return f'toolbridge_results_reordered_total{{front="{front}"}} 1' in s.gateway.metrics.render()


@pytest.mark.parametrize("stream", [False, True])
def test_chat_results_go_upstream_in_call_order(stream: bool) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
    user = [{"role": "user", "content": "Weather in three cities?"}]
    with Stack(model) as s:
        c = s.client()
        first = c.chat.completions.create(model="m", messages=user, tools=tools).choices[0].message
        calls = first.tool_calls
        assert [json.loads(call.function.arguments)["city"] for call in calls] == CITIES
        finished = [calls[2], calls[0], calls[1]]  # the order the tools finished in
        results = [{"role": "tool", "tool_call_id": call.id,
                    "content": f"{json.loads(call.function.arguments)['city']}: sunny"} for call in finished]
        history = [*user, first.model_dump(exclude_none=True), *results]
        if stream:
            text = "".join(chunk.choices[0].delta.content or "" for chunk in c.chat.completions.create(
                model="m", messages=history, tools=tools, stream=True) if chunk.choices)
        else:
            text = c.chat.completions.create(model="m", messages=history, tools=tools).choices[0].message.content
        assert text == "paired"
        assert sent_results(s) == ["Paris: sunny", "Oslo: sunny", "Lima: sunny"]
        assert reordered(s, "chat")
        with pytest.raises(openai.BadRequestError) as refused:
            c.chat.completions.create(model="m", tools=tools, messages=[
                *history[:-1], {"role": "tool", "tool_call_id": "call_unknown", "content": "?"}])
        assert refused.value.body["param"] == "messages[4].tool_call_id"
        assert "answers no call" in refused.value.body["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_messages_results_go_upstream_in_call_order(stream: bool) -> None:
    tools = [{"name": "get_weather", "input_schema": SCHEMA}]
    user = [{"role": "user", "content": "Weather in three cities?"}]
    with Stack(model) as s, anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="k",
                                                max_retries=0, timeout=20) as c:
        first = c.messages.create(model="m", max_tokens=100, messages=user, tools=tools)
        uses = [b for b in first.content if b.type == "tool_use"]
        assert [u.input["city"] for u in uses] == CITIES
        finished = [uses[1], uses[2], uses[0]]
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": f"{u.input['city']}: sunny"}
                   for u in finished]
        history = [*user, {"role": "assistant", "content": first.content},
                   {"role": "user", "content": [*results, {"type": "text", "text": "Go on."}]}]
        if stream:
            with c.messages.stream(model="m", max_tokens=100, messages=history, tools=tools) as events:
                text = "".join(events.text_stream)
        else:
            text = c.messages.create(model="m", max_tokens=100, messages=history, tools=tools).content[0].text
        assert text == "paired"
        assert sent_results(s) == ["Paris: sunny", "Oslo: sunny", "Lima: sunny"]
        assert s.upstream.requests[-1]["messages"][-1] == {"role": "user", "content": "Go on."}
        assert reordered(s, "messages")
        stray = {"type": "tool_result", "tool_use_id": "toolu_unknown", "content": "?"}
        with pytest.raises(anthropic.BadRequestError) as refused:
            c.messages.create(model="m", max_tokens=100, tools=tools, messages=[
                *history[:-1], {"role": "user", "content": [*results, stray]}])
        assert refused.value.body["type"] == "error"
        assert refused.value.body["error"]["type"] == "invalid_request_error"
        assert refused.value.body["error"]["message"].startswith("messages.2.content.3.tool_use_id")


@pytest.mark.parametrize("stream", [False, True])
def test_responses_results_go_upstream_in_call_order(stream: bool) -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": SCHEMA, "strict": False}]
    user = [{"role": "user", "content": "Weather in three cities?"}]
    with Stack(model) as s:
        c = s.client()
        first = c.responses.create(model="m", input=user, tools=tools, store=False)
        calls = [item for item in first.output if item.type == "function_call"]
        assert [json.loads(call.arguments)["city"] for call in calls] == CITIES
        finished = [calls[2], calls[1], calls[0]]
        outputs = [{"type": "function_call_output", "call_id": call.call_id,
                    "output": f"{json.loads(call.arguments)['city']}: sunny"} for call in finished]
        history = [*user, *[item.model_dump(exclude_none=True) for item in first.output], *outputs]
        if stream:
            text = "".join(e.delta for e in c.responses.create(model="m", input=history, tools=tools, store=False,
                                                               stream=True) if e.type == "response.output_text.delta")
        else:
            text = c.responses.create(model="m", input=history, tools=tools, store=False).output_text
        assert text == "paired"
        assert sent_results(s) == ["Paris: sunny", "Oslo: sunny", "Lima: sunny"]
        assert reordered(s, "responses")
        stray = {"type": "function_call_output", "call_id": "call_unknown", "output": "?"}
        with pytest.raises(openai.BadRequestError) as refused:
            c.responses.create(model="m", input=[*history, stray], tools=tools, store=False)
        assert refused.value.body["param"] == "input[7].call_id"


def test_results_for_an_earlier_message_keep_their_place_after_the_ones_in_order() -> None:
    """A run of results is put in the order of the calls of the assistant message just before;
    the order function leaves what does not answer those calls after them, as sent."""
    from toolbridge.gateway.order import in_call_order

    calls = [{"id": "a"}, {"id": "b"}]
    messages = [{"role": "assistant", "tool_calls": calls},
                {"role": "tool", "tool_call_id": "x", "content": "1"},
                {"role": "tool", "tool_call_id": "b", "content": "2"},
                {"role": "tool", "tool_call_id": "a", "content": "3"},
                {"role": "user", "content": "next"},
                {"role": "tool", "tool_call_id": "b", "content": "4"}]
    assert in_call_order(messages) == 1
    assert [m.get("tool_call_id") for m in messages] == [None, "a", "b", "x", None, "b"]
    assert in_call_order(messages) == 0


def test_a_messages_turn_is_ordered_unless_a_user_message_has_two_results() -> None:
    """``Turn.ordered`` (``in_call_order`` is then not run) as the Messages front finds it: only a
    user message with two or more ``tool_result`` blocks makes tool messages in a row; a
    threaded turn's kept history is not looked at, so it is never said to be ordered."""
    from toolbridge.gateway.fronts.messages.request import messages_turn

    uses = [{"type": "tool_use", "id": f"toolu_{i}", "name": "get_weather", "input": {"city": c}}
            for i, c in enumerate(CITIES)]

    def turn(results: int, text: bool) -> Any:
        answered = [{"type": "tool_result", "tool_use_id": u["id"], "content": "sunny"} for u in uses[:results]]
        body = {"model": "m", "max_tokens": 10, "messages": [
            {"role": "user", "content": "Weather?"}, {"role": "assistant", "content": uses[:results]},
            {"role": "user", "content": [*answered, *([{"type": "text", "text": "Go on."}] if text else [])]}]}
        return messages_turn(body, raw=json.dumps(body).encode())

    assert turn(1, False).ordered and turn(1, True).ordered
    assert not turn(2, False).ordered and not turn(3, True).ordered
    assert messages_turn({"max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}).ordered


def _two_results_in_a_row(messages: list[dict[str, Any]]) -> bool:
    return any(a.get("role") == b.get("role") == "tool" for a, b in zip(messages, messages[1:]))


def test_a_responses_turn_is_ordered_when_no_two_results_come_in_a_row() -> None:
    """``Turn.ordered`` as the Responses front finds it, over drawn inputs (messages of every
    role, calls, their outputs, reasoning between): exactly when the messages it sends hold no
    two tool results in a row (a system message between two is lifted out to lead them); with a
    previous response's conversation it is not looked at (never said to be ordered)."""
    from hypothesis import example, given, settings, strategies as st

    from toolbridge.gateway.fronts.responses.request import responses_turn
    from toolbridge.gateway.fronts.responses.sealed import Sealer

    sealer = Sealer(b"k" * 32)
    kinds = st.lists(st.sampled_from(["user", "assistant", "system", "developer", "call", "output", "reasoning"]),
                     max_size=12)

    def items(drawn: list[str]) -> list[dict[str, Any]]:
        out, calls, n = [], [], 0
        for kind in drawn:
            if kind == "call":
                n += 1
                calls.append(f"call_{n}")
                out.append({"type": "function_call", "call_id": f"call_{n}", "name": "get_weather",
                            "arguments": '{"city": "Oslo"}'})
            elif kind == "output" and calls:
                out.append({"type": "function_call_output", "call_id": calls.pop(0), "output": "sunny"})
            elif kind == "reasoning":
                out.append({"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "hm"}]})
            elif kind in ("user", "assistant", "system", "developer"):
                out.append({"type": "message", "role": kind, "content": kind})
        return out

    def body(drawn: list[str], **more: Any) -> dict[str, Any]:
        return {"model": "m", "input": items(drawn), "store": False,
                "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}], **more}

    @settings(max_examples=500, deadline=None)
    @given(kinds)
    @example(["call", "call", "output", "system", "output"])  # (two results around a lifted system message)
    @example(["call", "call", "output", "reasoning", "output"])
    def check(drawn: list[str]) -> None:
        turn = responses_turn(body(drawn), lambda _: [], sealer)
        assert turn.ordered == (not _two_results_in_a_row(turn.messages))
        previous = [{"role": "user", "content": "before"}]
        assert not responses_turn(body(drawn, previous_response_id="resp_1"), lambda _: previous, sealer).ordered

    check()
    assert responses_turn({"model": "m", "input": "hi"}, lambda _: [], sealer).ordered
