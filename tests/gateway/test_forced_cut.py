"""A forced tool choice (``required``, ``any``, a named tool) whose call the upstream cut at its
token limit: the cut wins over the unmet choice on every front, streamed and not (``length``,
``max_tokens``, ``incomplete`` with ``max_output_tokens``), as OpenAI's API and vLLM answer; and
every 5xx the gateway makes itself says ``x-should-retry: false``, so the SDKs ask once. The
official SDKs over real HTTP are the judges."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.test_messages import TOOLS as MESSAGES_TOOLS
from tests.gateway.test_messages import USER as MESSAGES_USER
from tests.gateway.test_messages import client as messages_client
from tests.gateway.test_responses import TOOLS, USER
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

CUT = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par'
CHAT_USER = [{"role": "user", "content": USER}]
CHAT_TOOLS = [{"type": "function", "function": {"name": t["name"], "parameters": t["parameters"]}} for t in TOOLS]
CHOICES = {  # front -> the forced choices in its spelling
    "chat": ["required", {"type": "function", "function": {"name": "get_weather"}}],
    "responses": ["required", {"type": "function", "name": "get_weather"}],
    "messages": [{"type": "any"}, {"type": "tool", "name": "get_weather"}],
}


def cut_stack(content: str = CUT) -> Stack:
    return Stack(lambda b: Reply(content=content, finish_reason="length"), tool_call_parser="hermes")


@pytest.mark.parametrize("choice", CHOICES["responses"])
def test_responses_stream_with_a_forced_choice_cut_short_is_incomplete(choice: Any) -> None:
    with cut_stack() as s, s.client() as c:
        with c.responses.stream(model="m", input=USER, tools=TOOLS, tool_choice=choice) as events:
            got = list(events)  # (get_final_response wants response.completed: the last event's)
        seen, final = [e.type for e in got], got[-1].response
        whole = c.responses.create(model="m", input=USER, tools=TOOLS, tool_choice=choice)
    assert seen[-1] == "response.incomplete" and "error" not in seen
    for response in (final, whole):
        assert response.status == "incomplete"
        assert response.incomplete_details.reason == "max_output_tokens"
        assert [(i.type, i.status) for i in response.output] == [("message", "incomplete")]
        assert response.output[0].content[0].text == CUT  # the cut call stays text, never a call


@pytest.mark.parametrize("choice", CHOICES["chat"])
def test_chat_with_a_forced_choice_cut_short_is_length(choice: Any) -> None:
    with cut_stack() as s, s.client() as c:
        whole = c.chat.completions.create(model="m", messages=CHAT_USER, tools=CHAT_TOOLS, tool_choice=choice)
        chunks = list(c.chat.completions.create(model="m", messages=CHAT_USER, tools=CHAT_TOOLS,
                                                tool_choice=choice, stream=True))
    assert whole.choices[0].finish_reason == "length" and not whole.choices[0].message.tool_calls
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices and ch.choices[0].finish_reason] == ["length"]
    assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == CUT
    assert not any(ch.choices[0].delta.tool_calls for ch in chunks if ch.choices)


@pytest.mark.parametrize("choice", CHOICES["messages"])
def test_messages_with_a_forced_choice_cut_short_is_max_tokens(choice: Any) -> None:
    with cut_stack() as s, messages_client(s) as c:
        whole = c.messages.create(model="m", max_tokens=50, messages=MESSAGES_USER, tools=MESSAGES_TOOLS,
                                  tool_choice=choice)
        with c.messages.stream(model="m", max_tokens=50, messages=MESSAGES_USER, tools=MESSAGES_TOOLS,
                               tool_choice=choice) as events:
            streamed = events.get_final_message()
    for message in (whole, streamed):
        assert message.stop_reason == "max_tokens"
        assert [b.type for b in message.content] == ["text"] and message.content[0].text == CUT


def test_cut_before_any_call_under_a_forced_choice_is_length_too() -> None:
    """The limit fell while the model was still writing prose: no call began, and the answer is
    the cut, not a missing call."""
    with cut_stack("Let me think about which city you mean and") as s, s.client() as c:
        whole = c.chat.completions.create(model="m", messages=CHAT_USER, tools=CHAT_TOOLS, tool_choice="required")
        final = c.responses.create(model="m", input=USER, tools=TOOLS, tool_choice="required")
    assert whole.choices[0].finish_reason == "length"
    assert final.status == "incomplete" and final.output[0].status == "incomplete"


def test_an_unmet_choice_not_cut_is_still_502_and_asked_once() -> None:
    """The answer ended (``stop``) without the call: 502 ``tool_choice_unmet`` with
    ``x-should-retry: false``; SDKs that retry 5xx twice by default send it once."""
    with Stack(lambda b: Reply(content="No call."), tool_call_parser="hermes") as s, \
            s.client(max_retries=2) as c, \
            anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="k", max_retries=2) as m:
        with pytest.raises(openai.APIStatusError) as failed:
            c.responses.create(model="m", input=USER, tools=TOOLS, tool_choice="required")
        assert failed.value.status_code == 502 and failed.value.body["code"] == "tool_choice_unmet"
        assert failed.value.response.headers["x-should-retry"] == "false"
        assert len(s.upstream.requests) == 1
        with pytest.raises(anthropic.APIStatusError) as refused:
            m.messages.create(model="m", max_tokens=50, messages=MESSAGES_USER, tools=MESSAGES_TOOLS,
                              tool_choice={"type": "any"})
        assert refused.value.status_code == 502 and refused.value.response.headers["x-should-retry"] == "false"
        assert len(s.upstream.requests) == 2


def test_an_upstream_that_cannot_be_reached_is_asked_once() -> None:
    """The gateway's own 502 (nothing answers at the upstream's address) is not retried."""
    with Stack(lambda b: Reply(content="unused"), upstream="http://127.0.0.1:9/v1") as s, \
            s.client(max_retries=2) as c:
        with pytest.raises(openai.APIStatusError) as failed:
            c.chat.completions.create(model="m", messages=CHAT_USER)
    assert failed.value.status_code == 502 and failed.value.response.headers["x-should-retry"] == "false"


def test_an_upstreams_own_5xx_keeps_the_sdks_rule() -> None:
    """The upstream's own 503 is passed on without the header: retrying it is the SDK's call."""
    with Stack(lambda b: Reply(status=503, error="busy"), tool_call_parser="hermes") as s, \
            s.client(max_retries=1) as c:
        with pytest.raises(openai.APIStatusError) as failed:
            c.chat.completions.create(model="m", messages=CHAT_USER)
        assert failed.value.status_code == 503 and "x-should-retry" not in failed.value.response.headers
        assert len(s.upstream.requests) == 2
