"""A stream the upstream ends early with ``[DONE]`` is an error, never a short answer.

llama-cpp-python's server (``interrupt_requests``, on by default) ends a running stream when
another request reaches it, even a ``GET /v1/models``: it sends ``data: [DONE]`` after the chunk
it was writing, with no ``finish_reason``. Found by the real-model tests (tests/model), where the
answer came back as its first token (``{"``) and a normal end; here the scripted upstream ends
its stream the same way after one chunk, on every front, in both upstream modes, streamed
through the official SDKs. Each must end with its API's error event naming the cut.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway.test_fallback import model_dir
from tests.harness import tool
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.text import TextReplayUpstream
from toolbridge.gateway.replay.upstream import Reply

WEATHER = tool("get_weather", city={"type": "string"})
CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
QUESTION = "What is the weather in Paris right now?"
CUT = "without a finish reason"  # what the error says


def interrupted(body: dict[str, Any]) -> Reply:
    """The model's call, ended after its first chunk (``{"``) as llama-cpp-python ends it."""
    return Reply(content=CALL, chunk=2, cut_after=1, fault="interrupted")


def stack(api: str, tmp_path: Path) -> Stack:
    if api == "chat":
        return Stack(interrupted, tool_call_parser="auto")
    s = Stack(interrupted, upstream_api="completions", model_dir=model_dir(tmp_path), tool_fallback=True)
    s.upstream = TextReplayUpstream(interrupted)
    return s


def chat(s: Stack) -> str:
    with pytest.raises(openai.APIError) as failed:
        list(s.client().chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}], stream=True,
            tools=[WEATHER]))
    return failed.value.message


def responses(s: Stack) -> str:
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER["function"]["parameters"]}]
    with s.client().responses.stream(model="m", input=QUESTION, tools=tools) as stream:  # type: ignore[arg-type]
        events = list(stream)
    error, last = events[-2:]
    assert error.type == "error" and last.type == "response.failed", [e.type for e in events]
    assert last.response.error is not None and last.response.error.code == "upstream_error"
    return error.message  # type: ignore[no-any-return]


def messages(s: Stack) -> str:
    client = anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="sk-test", max_retries=0, timeout=20)
    tools = [{"name": "get_weather", "input_schema": WEATHER["function"]["parameters"]}]
    try:
        with pytest.raises(anthropic.APIStatusError) as failed:
            with client.messages.stream(model="m", max_tokens=60, tools=tools,  # type: ignore[arg-type]
                                        messages=[{"role": "user", "content": QUESTION}]) as stream:
                stream.get_final_message()
    finally:
        client.close()
    assert failed.value.body["error"]["type"] == "api_error"
    return failed.value.body["error"]["message"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("api", ["chat", "completions"])
@pytest.mark.parametrize("front", [chat, responses, messages], ids=["chat", "responses", "messages"])
def test_a_stream_ended_without_its_finish_is_an_error_event(tmp_path: Path, front: Any, api: str) -> None:
    with stack(api, tmp_path) as s:
        message = front(s)
        assert len(s.upstream.requests) == 1
    assert CUT in message and "interrupt_requests" in message


@pytest.mark.parametrize("owner, refreshed", [("me", False), ("vllm", True)], ids=["llama-cpp-python", "vllm"])
def test_the_model_list_is_not_fetched_again_from_llama_cpp_python(owner: str, refreshed: bool) -> None:
    """The gateway's own background fetch of ``/v1/models`` would cut the stream llama-cpp-python's
    server is writing (its listing, ``owned_by: "me"``, is fixed at its start anyway); another
    server's listing is fetched every ``--models-refresh`` seconds as before."""
    s = Stack(lambda b: Reply(content="a paced answer, long enough for a refresh", chunk=4, pace=0.05),
              models_refresh=0.1)
    s.upstream.models["data"][0]["owned_by"] = owner  # type: ignore[index]
    s.upstream.interrupts = owner == "me"
    with s:
        chunks = s.client().chat.completions.create(model="replay", stream=True,
                                                    messages=[{"role": "user", "content": QUESTION}])
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "a paced answer, long enough for a refresh"
        assert (s.upstream.models_probes > 1) is refreshed
