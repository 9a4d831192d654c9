"""Anthropic message threads (``thread``: create / continue), end to end: the ``anthropic`` SDK's
own helpers (``beta.messages.tool_runner``, ``beta.messages.thread().send`` / ``.stream``) ->
toolbridge -> a scripted upstream that checks what the model was shown, over HTTP on loopback.
Each test also reads what the SDK sent, so a pass means the follow-ups really were continues."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.gateway.test_messages import raw
from tests.gateway.test_responses import stacks  # noqa: F401  (stacks: a gateway per config, a fixture)
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")

SYSTEM = "You are Zed, the weather desk. Be terse."
QUESTION = {"role": "user", "content": "Weather in Paris, then Rome?"}
CITIES = ["Paris", "Rome"]
BETA = "message-threads-2026-08-12"


def hermes(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def shown(body: dict[str, Any]) -> str:
    """What the model was shown, checked: the system prompt first, the question, and each earlier
    call answered by its result; an answer saying what is missing otherwise."""
    messages = body["messages"]
    if messages[0] != {"role": "system", "content": SYSTEM}:
        return "MISSING: the system prompt"
    if messages[1] != {"role": "user", "content": QUESTION["content"]}:
        return "MISSING: the question"
    for i, message in enumerate(messages[2:], 2):
        if message["role"] == "tool" and messages[i - 1].get("tool_calls", [{}])[-1].get("id") != \
                message["tool_call_id"]:
            return f"MISSING: the call that result {i} answers"
    return ""


def weather_agent(calls: int, reasoning: str | None = None) -> Callable[[dict[str, Any]], Reply]:
    """An upstream model: ``calls`` tool calls one after the other, each once it saw the result
    of the one before, then the answer naming every result it saw."""
    def script(body: dict[str, Any]) -> Reply:
        missing = shown(body)
        if missing:
            return Reply(content=missing)
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if len(results) < calls:
            call = hermes("get_weather", {"city": CITIES[len(results)]})
            return Reply(content=f"Checking {CITIES[len(results)]}.\n" + call, reasoning=reasoning, chunk=5)
        return Reply(content="Answer: " + "; ".join(results), chunk=5)
    return script


@anthropic.beta_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


class Client:
    """An ``anthropic.Anthropic`` client on the gateway that keeps the bodies it sends."""

    def __init__(self, s: Stack, api_key: str = "sk-test") -> None:
        self.sent: list[dict[str, Any]] = []
        http = anthropic.DefaultHttpxClient(event_hooks={"request": [self._record]})
        self.sdk = anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key=api_key, max_retries=0,
                                       timeout=20, http_client=http)

    def _record(self, request: Any) -> None:
        if request.url.path == "/v1/messages":
            self.sent.append({"body": json.loads(request.content), "beta": request.headers.get("anthropic-beta")})

    def close(self) -> None:
        self.sdk.close()


@pytest.fixture
def clients() -> Iterator[Callable[..., Client]]:
    made: list[Client] = []

    def make(s: Stack, api_key: str = "sk-test") -> Client:
        made.append(Client(s, api_key))
        return made[-1]

    yield make
    for c in made:
        c.close()


def continued(sent: list[dict[str, Any]], replies: list[str]) -> None:
    """The SDK created a thread on its first request and continued it from each reply after."""
    first = sent[0]["body"]
    assert first["thread"] == {"type": "create"} and first["system"] == SYSTEM and BETA in sent[0]["beta"]
    for follow_up, previous in zip(sent[1:], replies, strict=True):
        body = follow_up["body"]
        assert body["thread"] == {"type": "continue", "previous_message_id": previous}
        assert "system" not in body and "tools" not in body, "the thread keeps them"
        assert len(body["messages"]) == 1, "only the new turn is sent"


# ---------------------------------------------------------------- the tool runner


@pytest.mark.parametrize("calls", [1, 2], ids=["two-turn", "three-turn"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_tool_runner_loops_over_a_thread(stacks: Any, clients: Any, calls: int, stream: bool) -> None:
    s = stacks(weather_agent(calls))
    c = clients(s)
    runner = c.sdk.beta.messages.tool_runner(model="m", max_tokens=200, system=SYSTEM, messages=[QUESTION],
                                             tools=[get_weather], stream=stream)
    replies = [item.get_final_message() if stream else item for item in runner]
    assert [r.stop_reason for r in replies] == ["tool_use"] * calls + ["end_turn"]
    assert replies[-1].content[-1].text == "Answer: " + "; ".join(f"sunny in {c}" for c in CITIES[:calls])
    continued(c.sent, [r.id for r in replies[:-1]])
    assert len(s.upstream.requests[-calls - 1:]) == calls + 1


@pytest.mark.parametrize("stream_arguments", [False, True])
def test_a_streamed_thread_keeps_the_reasoning_and_the_calls_as_sent(stacks: Any, clients: Any,
                                                                      stream_arguments: bool) -> None:
    """What a stream sent (its thinking, its calls, whole or in fragments) is what the next turn
    shows the upstream."""
    s = stacks(weather_agent(2, reasoning="The user wants two cities."), stream_arguments=stream_arguments)
    c = clients(s)
    runner = c.sdk.beta.messages.tool_runner(model="m", max_tokens=200, system=SYSTEM, messages=[QUESTION],
                                             tools=[get_weather], stream=True)
    replies = [item.get_final_message() for item in runner]
    assert replies[-1].content[-1].text.startswith("Answer: sunny in Paris; sunny in Rome")
    continued(c.sent, [r.id for r in replies[:-1]])
    last = s.upstream.requests[-1]["messages"]
    assistants = [m for m in last if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in assistants] == ["The user wants two cities."] * 2
    assert [json.loads(m["tool_calls"][0]["function"]["arguments"]) for m in assistants] == \
        [{"city": "Paris"}, {"city": "Rome"}]
    assert [m["content"] for m in assistants] == ["Checking Paris.", "Checking Rome."]


# ---------------------------------------------------------------- the thread helper


def remembering(body: dict[str, Any]) -> Reply:
    """An upstream model that answers from what it was shown: the system prompt's name and each
    user message it saw, in order."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else "no system prompt"
    users = [m["content"] for m in messages if m["role"] == "user"]
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    return Reply(content=json.dumps({"system": system, "users": users, "answers": len(answers)}), chunk=7)


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
def test_thread_follow_ups_show_the_model_the_system_prompt_and_the_history(stacks: Any, clients: Any,
                                                                             stream: bool) -> None:
    s = stacks(remembering)
    c = clients(s)
    thread = c.sdk.beta.messages.thread(model="m", max_tokens=200, system=SYSTEM)
    said = ["My name is Ann.", "I live in Oslo.", "What do you know?"]
    replies = []
    for text in said:
        if stream:
            with thread.stream({"role": "user", "content": text}) as events:
                replies.append(events.get_final_message())
        else:
            replies.append(thread.send({"role": "user", "content": text}))
    seen = json.loads(replies[-1].content[0].text)
    assert seen == {"system": SYSTEM, "users": said, "answers": 2}
    continued(c.sent, [r.id for r in replies[:-1]])
    assert len(thread.messages) == 6


# ---------------------------------------------------------------- the answers the SDK recovers from


def test_an_unknown_thread_is_404_thread_not_found_and_the_sdk_replays(stacks: Any, clients: Any) -> None:
    """The API's 404: ``not_found_error`` with ``details.error_code`` (what the SDK reads). A
    thread evicted from the store (here by a second one, the store holding one) is replayed whole
    by the SDK, and the model sees the whole conversation."""
    s = stacks(remembering, responses_store=1)
    status, _, body = raw(s, "/v1/messages", {
        "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
        "thread": {"type": "continue", "previous_message_id": "msg_" + "0" * 24}})
    assert status == 404 and body["type"] == "error"
    assert body["error"]["type"] == "not_found_error"
    assert body["error"]["details"] == {"error_code": "thread_not_found"}
    c = clients(s)
    first = c.sdk.beta.messages.thread(model="m", max_tokens=200, system=SYSTEM)
    first.send({"role": "user", "content": "My name is Ann."})
    c.sdk.beta.messages.thread(model="m", max_tokens=200).send({"role": "user", "content": "other"})
    upstream_before = len(s.upstream.requests)
    reply = first.send({"role": "user", "content": "Who am I?"})
    assert json.loads(reply.content[0].text) == {"system": SYSTEM, "users": ["My name is Ann.", "Who am I?"],
                                                 "answers": 1}
    lost, replayed = c.sent[-2]["body"], c.sent[-1]["body"]
    assert lost["thread"]["type"] == "continue" and replayed["thread"] == {"type": "create"}
    assert len(replayed["messages"]) == 3 and replayed["system"] == SYSTEM
    assert len(s.upstream.requests) == upstream_before + 1, "the 404 reached no upstream"


def test_a_thread_is_continued_once(stacks: Any, clients: Any) -> None:
    """Once a turn continued a reply, that reply is gone: the thread holds one copy of its
    conversation, and continuing the same reply again is the 404 the SDK replays from."""
    s = stacks(remembering, responses_store=8)
    thread = clients(s).sdk.beta.messages.thread(model="m", max_tokens=200, system=SYSTEM)
    first = thread.send({"role": "user", "content": "one"})
    thread.send({"role": "user", "content": "two"})
    thread.send({"role": "user", "content": "three"})
    status, _, metrics = raw(s, "/metrics", None, method="GET")
    assert "\ntoolbridge_responses_stored 1\n" in metrics, "one kept turn per thread"
    status, _, body = raw(s, "/v1/messages", {
        "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "branch"}],
        "thread": {"type": "continue", "previous_message_id": first.id}}, {"x-api-key": "sk-test"})
    assert status == 404 and body["error"]["details"]["error_code"] == "thread_not_found"


def test_without_a_store_a_thread_is_400_thread_unsupported_request(stacks: Any, clients: Any) -> None:
    """With ``--responses-store 0`` the gateway keeps no thread: 400 ``thread_unsupported_request``;
    the tool runner then sends the whole conversation without ``thread``, and the thread helper
    (``unsupported_request_behavior="error"``, its default) raises it."""
    s = stacks(weather_agent(1), responses_store=0)
    status, _, body = raw(s, "/v1/messages", {
        "model": "m", "max_tokens": 10, "messages": [QUESTION], "thread": {"type": "create"}})
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["details"] == {"error_code": "thread_unsupported_request"}
    c = clients(s)
    runner = c.sdk.beta.messages.tool_runner(model="m", max_tokens=200, system=SYSTEM, messages=[QUESTION],
                                             tools=[get_weather])
    assert list(runner)[-1].content[-1].text == "Answer: sunny in Paris"
    assert [("thread" in sent["body"]) for sent in c.sent] == [True, False, False]
    assert len(c.sent[-1]["body"]["messages"]) == 3, "the whole conversation"
    with pytest.raises(anthropic.BadRequestError) as refused:
        c.sdk.beta.messages.thread(model="m", max_tokens=200).send({"role": "user", "content": "hi"})
    assert refused.value.error_code == "thread_unsupported_request"


def test_a_continue_that_repeats_system_or_tools_is_refused(stacks: Any, clients: Any) -> None:
    s = stacks(remembering)
    kept = clients(s).sdk.beta.messages.thread(model="m", max_tokens=50, system=SYSTEM).send(
        {"role": "user", "content": "hi"})
    for key, value in (("system", "again"), ("tools", [{"name": "t", "input_schema": {"type": "object"}}])):
        status, _, body = raw(s, "/v1/messages", {
            "model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}], key: value,
            "thread": {"type": "continue", "previous_message_id": kept.id}}, {"x-api-key": "sk-test"})
        assert status == 400 and body["error"]["message"].startswith(key), body
    status, _, body = raw(s, "/v1/messages", {"model": "m", "max_tokens": 10, "messages": [QUESTION],
                                               "thread": {"type": "resume"}})
    assert status == 400 and body["error"]["message"].startswith("thread.type")


# ---------------------------------------------------------------- scopes


def test_another_credential_cannot_continue_a_thread(stacks: Any, clients: Any) -> None:
    """Without ``--api-key`` each credential has its threads: another's reply id is answered as an
    unknown one, and the upstream never sees the owner's conversation under another key. A
    thread is no stored response either (``GET /v1/responses/{id}``: 404)."""
    s = stacks(remembering)
    a, b = clients(s, "tenant-a"), clients(s, "tenant-b")
    kept = a.sdk.beta.messages.thread(model="m", max_tokens=50, system=SYSTEM).send(
        {"role": "user", "content": "secret plans"})
    sent = len(s.upstream.requests)
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "go on"}],
            "thread": {"type": "continue", "previous_message_id": kept.id}}
    theirs = raw(s, "/v1/messages", body, {"x-api-key": "tenant-b"})
    nobodys = raw(s, "/v1/messages", {**body, "thread": {"type": "continue", "previous_message_id": "msg_x"}},
                  {"x-api-key": "tenant-b"})
    assert theirs[0] == nobodys[0] == 404
    assert theirs[2]["error"]["details"] == nobodys[2]["error"]["details"] == {"error_code": "thread_not_found"}
    assert len(s.upstream.requests) == sent, "no continuation reached the upstream"
    assert raw(s, f"/v1/responses/{kept.id}", None, {"x-api-key": "tenant-a"}, method="GET")[0] == 404
    status, _, answer = raw(s, "/v1/messages", body, {"x-api-key": "tenant-a"})
    assert status == 200 and json.loads(answer["content"][0]["text"])["users"] == ["secret plans", "go on"]


def test_with_a_gateway_key_its_holders_share_one_scope(stacks: Any, clients: Any) -> None:
    """With ``--api-key`` every client holds the one key, so they share one scope (as stored
    responses do); without the key nothing is answered."""
    s = stacks(remembering, api_key="gateway-key")
    kept = clients(s, "gateway-key").sdk.beta.messages.thread(model="m", max_tokens=50, system=SYSTEM).send(
        {"role": "user", "content": "hi"})
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "again"}],
            "thread": {"type": "continue", "previous_message_id": kept.id}}
    assert raw(s, "/v1/messages", body, {"authorization": "Bearer wrong"})[0] == 401
    status, _, answer = raw(s, "/v1/messages", body, {"authorization": "Bearer gateway-key"})
    assert status == 200 and json.loads(answer["content"][0]["text"])["users"] == ["hi", "again"]
