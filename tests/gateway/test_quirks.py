"""What a known upstream refuses of a valid request is sent as it takes it, to it alone
(``upstream.quirks``), end to end: the official SDKs -> toolbridge -> a scripted upstream.

llama-cpp-python's server answers 500 to an assistant message whose ``content`` is null (its
request model wants a string), which the Messages and Responses fronts write for a turn of calls
alone, and a Chat Completions client may send. The scripted upstream refuses it as that server
does; listed as llama-cpp-python's (``owned_by: "me"``), the second turn of a tool loop goes
through on every front with ``content: ""``; listed as another server's, the message goes as it is.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from tests.harness import tool
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

WEATHER = tool("get_weather", city={"type": "string"})
PARAMETERS = WEATHER["function"]["parameters"]
QUESTION = "What is the weather in Paris?"
ARGUMENTS = '{"city": "Paris"}'
ANSWER = "Sunny in Paris."
# What llama-cpp-python 0.3.36 answers (its pydantic error, shortened).
REFUSAL = ("1 validation error: {'type': 'string_type', 'loc': ('body', 'messages', 1, "
           "'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid string', "
           "'input': None}")


def refusing_null(body: dict[str, Any]) -> Reply:
    """The answer to a tool result, unless an assistant message's content is null (refused)."""
    if any(m.get("role") == "assistant" and "content" in m and m["content"] is None for m in body["messages"]):
        return Reply(status=500, error=REFUSAL)
    return Reply(content=ANSWER)


def chat(s: Stack) -> str:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ARGUMENTS}}
    answer = s.client().chat.completions.create(model="replay", tools=[WEATHER], messages=[
        {"role": "user", "content": QUESTION}, {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}])
    return answer.choices[0].message.content or ""


def responses(s: Stack) -> str:
    answer = s.client().responses.create(
        model="replay", store=False, tools=[{"type": "function", "name": "get_weather", "parameters": PARAMETERS,
                                            "strict": False}],
        input=[{"role": "user", "content": QUESTION},
               {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": ARGUMENTS},
               {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}])
    return answer.output_text


def messages(s: Stack) -> str:
    with anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="sk-test", max_retries=0,
                             timeout=20) as client:
        answer = client.messages.create(
            model="replay", max_tokens=50, tools=[{"name": "get_weather", "input_schema": PARAMETERS}],
            messages=[{"role": "user", "content": QUESTION},
                      {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                                         "input": json.loads(ARGUMENTS)}]},
                      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                    "content": "sunny"}]}])
    return "".join(b.text for b in answer.content if b.type == "text")


FRONTS = [chat, responses, messages]


def sent(s: Stack) -> dict[str, Any]:
    """The assistant message of the one request the upstream received."""
    (body,) = s.upstream.requests
    (message,) = [m for m in body["messages"] if m["role"] == "assistant"]
    return message  # type: ignore[no-any-return]


@pytest.mark.parametrize("front", FRONTS, ids=[f.__name__ for f in FRONTS])
def test_llama_cpp_python_is_sent_empty_content_for_a_turn_of_calls(front: Any) -> None:
    s = Stack(refusing_null)
    s.upstream.models["data"][0]["owned_by"] = "me"  # type: ignore[index]
    with s:
        assert front(s) == ANSWER
        message = sent(s)
    assert message["content"] == "" and message["tool_calls"][0]["function"]["name"] == "get_weather"


@pytest.mark.parametrize("owner", ["vllm", "llamacpp", None], ids=["vllm", "llama.cpp", "unknown"])
def test_other_upstreams_are_sent_the_null_content(owner: str | None) -> None:
    s = Stack(lambda body: Reply(content=ANSWER))
    if owner is not None:
        s.upstream.models["data"][0]["owned_by"] = owner  # type: ignore[index]
    with s:
        assert chat(s) == ANSWER
        assert sent(s)["content"] is None


def test_the_kind_may_be_given() -> None:
    with Stack(refusing_null, upstream_kind="llama-cpp-python") as s:
        assert chat(s) == ANSWER
        assert sent(s)["content"] == ""
