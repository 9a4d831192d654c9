"""Qwen2.5-Coder-0.5B-Instruct on llama-cpp-python's server, behind ``toolbridge serve``, driven
by the official SDKs on every front, streamed and not, through a two-turn tool loop; and with
``--upstream-api completions`` (toolbridge renders the prompt from the model's own template).

This model writes its call in a markdown JSON fence (or bare), not the ``<tool_call>`` its
template asks for; the engine alone returns it as content. What is asserted is what holds on
prompts it reliably gets right at temperature 0: the first turn is a native call of the offered
tool with schema-valid arguments; the second turn, with the tool's result, is accepted and
well-formed (any call in it offered and valid; the result reached the prompt). Its exact words
are not asserted.

llama-cpp-python's chat endpoint refuses an assistant turn whose ``content`` is null (OpenAI
allows it), which the Anthropic and Responses fronts write for a turn of calls alone: the gateway
sends it ``content: ""`` instead (``upstream.quirks``), so the loop runs on both endpoints.

The server keeps its default ``interrupt_requests``: it ends a running stream with ``[DONE]`` the
moment another request reaches it. The gateways' background model-list refresh (``GET
/v1/models`` every minute) did, and one gateway's refresh cut another's stream: the client got a
normal answer of one token (``{"``). A gateway no longer refreshes the list of llama-cpp-python's
server (``upstream.models.FIXED``), and a stream cut so ends with an error (``pipeline.UNFINISHED``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import jsonschema
import openai
import pytest

from toolbridge.bench.model import Serve

pytestmark = pytest.mark.model

PARAMETERS = {"type": "object", "properties": {"city": {"type": "string", "description": "the city name"}},
              "required": ["city"]}
NAME, DESCRIPTION = "get_weather", "Get the current weather for a city"
QUESTION = "What is the weather in Paris right now?"
RESULT = '{"temperature_c": 18, "conditions": "sunny"}'
CALL_TOKENS, ANSWER_TOKENS = 60, 40
COMPLETIONS = ("--upstream-api", "completions", "--chat-template", "{template}")


def _valid(name: str, arguments: dict[str, Any]) -> None:
    assert name == NAME
    jsonschema.validate(arguments, PARAMETERS)
    assert arguments["city"].strip().lower() == "paris"


# ---------------------------------------------------------------- Chat Completions


def _chat(client: openai.OpenAI, messages: list[dict[str, Any]], stream: bool, max_tokens: int) -> Any:
    tools = [{"type": "function", "function": {"name": NAME, "description": DESCRIPTION, "parameters": PARAMETERS}}]
    kwargs: dict[str, Any] = {"model": "qwen2.5-coder-0.5b-instruct", "messages": messages, "tools": tools,
                              "temperature": 0, "max_tokens": max_tokens}
    if not stream:
        return client.chat.completions.create(**kwargs)
    with client.chat.completions.stream(**kwargs, stream_options={"include_usage": True}) as events:
        return events.get_final_completion()


@pytest.fixture
def closing() -> Iterator[Callable[[Any], Any]]:
    """``closing(client)``: the client, closed after the test whatever its outcome."""
    clients: list[Any] = []
    yield lambda client: clients.append(client) or client
    for client in clients:
        client.close()


def _chat_loop(gateway: Serve, stream: bool, closing: Callable[[Any], Any]) -> None:
    client = closing(openai.OpenAI(base_url=gateway.url, api_key="sk-local", max_retries=0, timeout=300))
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    first = _chat(client, messages, stream, CALL_TOKENS)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls", choice.message
    calls = choice.message.tool_calls
    assert calls and len(calls) == 1
    _valid(calls[0].function.name, json.loads(calls[0].function.arguments))
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": calls[0].id, "content": RESULT})
    second = _chat(client, messages, stream, ANSWER_TOKENS)
    if not stream:  # (llama-cpp-python's server counts no usage in a stream)
        assert second.usage.prompt_tokens > first.usage.prompt_tokens  # the call and its result were sent
    answer = second.choices[0]
    for call in answer.message.tool_calls or ():
        _valid(call.function.name, json.loads(call.function.arguments))
    assert answer.message.tool_calls or answer.message.content


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_front(serve: Callable[..., Serve], stream: bool, closing: Callable[[Any], Any]) -> None:
    _chat_loop(serve(), stream, closing)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chat_front_completions_mode(serve: Callable[..., Serve], stream: bool,
                                     closing: Callable[[Any], Any]) -> None:
    _chat_loop(serve(*COMPLETIONS), stream, closing)


# ---------------------------------------------------------------- Anthropic Messages


def _messages(client: anthropic.Anthropic, messages: list[dict[str, Any]], stream: bool, max_tokens: int) -> Any:
    kwargs: dict[str, Any] = {"model": "qwen2.5-coder-0.5b-instruct", "max_tokens": max_tokens,
                              "messages": messages, "extra_body": {"temperature": 0},
                              "tools": [{"name": NAME, "description": DESCRIPTION, "input_schema": PARAMETERS}]}
    if not stream:
        return client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as events:
        return events.get_final_message()


@pytest.mark.parametrize("api", ["chat", "completions"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_anthropic_front(serve: Callable[..., Serve], stream: bool, api: str,
                         closing: Callable[[Any], Any]) -> None:
    gateway = serve(*COMPLETIONS) if api == "completions" else serve()
    client = closing(anthropic.Anthropic(base_url=gateway.url.removesuffix("/v1"), api_key="sk-local",
                                         max_retries=0, timeout=300))
    messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    first = _messages(client, messages, stream, CALL_TOKENS)
    assert first.stop_reason == "tool_use", first.content
    uses = [b for b in first.content if b.type == "tool_use"]
    assert len(uses) == 1
    _valid(uses[0].name, uses[0].input)
    messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id,
                                                  "content": RESULT}]})
    second = _messages(client, messages, stream, ANSWER_TOKENS)
    if not stream:
        assert second.usage.input_tokens > first.usage.input_tokens
    for block in second.content:
        if block.type == "tool_use":
            _valid(block.name, block.input)
    assert second.content


# ---------------------------------------------------------------- OpenAI Responses


def _respond(client: openai.OpenAI, items: list[Any], stream: bool, max_tokens: int) -> Any:
    kwargs: dict[str, Any] = {"model": "qwen2.5-coder-0.5b-instruct", "input": items, "temperature": 0,
                              "max_output_tokens": max_tokens, "store": False,
                              "tools": [{"type": "function", "name": NAME, "description": DESCRIPTION,
                                         "parameters": PARAMETERS, "strict": False}]}
    if not stream:
        return client.responses.create(**kwargs)
    with client.responses.stream(**kwargs) as events:
        return events.get_final_response()


@pytest.mark.parametrize("stream, api", [(False, "chat"), (False, "completions"), (True, "chat"),
                                         (True, "completions")],
                         ids=["whole-chat", "whole-completions", "streamed-chat", "streamed-completions"])
def test_responses_front(serve: Callable[..., Serve], stream: bool, api: str,
                         closing: Callable[[Any], Any]) -> None:
    gateway = serve(*COMPLETIONS) if api == "completions" else serve()
    client = closing(openai.OpenAI(base_url=gateway.url, api_key="sk-local", max_retries=0, timeout=300))
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    first = _respond(client, items, stream, CALL_TOKENS)
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == 1, first.output
    _valid(calls[0].name, json.loads(calls[0].arguments))
    items += [item.model_dump(exclude_none=True) for item in first.output]
    items.append({"type": "function_call_output", "call_id": calls[0].call_id, "output": RESULT})
    second = _respond(client, items, stream, ANSWER_TOKENS)
    if not stream:
        assert second.usage.input_tokens > first.usage.input_tokens
    for item in second.output:
        if item.type == "function_call":
            _valid(item.name, json.loads(item.arguments))
    assert second.output


# ---------------------------------------------------------------- constraint under auto


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_constraint_under_auto_reaches_the_fenced_call(serve: Callable[..., Serve], api: str,
                                                       closing: Callable[[Any], Any]) -> None:
    """The model's fenced call, under --constrain always (drifted openers constrained, the
    default): the grammar is applied by the engine and the call is native and valid."""
    flags = ("--constrain", "always", "--chat-template", "{template}")
    gateway = serve(*flags, *(("--upstream-api", "completions") if api == "completions" else ()))
    client = closing(openai.OpenAI(base_url=gateway.url, api_key="sk-local", max_retries=0, timeout=300))
    tools = [{"type": "function", "function": {"name": NAME, "description": DESCRIPTION, "parameters": PARAMETERS}}]
    answer = client.chat.completions.with_raw_response.create(
        model="qwen2.5-coder-0.5b-instruct", messages=[{"role": "user", "content": QUESTION}], tools=tools,
        temperature=0, max_tokens=CALL_TOKENS)
    assert answer.headers["x-toolbridge-constraint"].startswith("applied (llama-cpp-python grammar")
    calls = answer.parse().choices[0].message.tool_calls
    assert calls and len(calls) == 1
    _valid(calls[0].function.name, json.loads(calls[0].function.arguments))
