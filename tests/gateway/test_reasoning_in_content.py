"""Reasoning an upstream wrote inside the content (``--reasoning-in-content``), on every front,
whole and streamed: the official SDKs -> toolbridge -> a replaying upstream that sends the
model's ``<think>...</think>`` as content, over HTTP on loopback. One table of answers; each
front's own reading (the SDKs' final objects) is brought to (reasoning, text, calls, finish)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

MODEL = "Qwen/Qwen3-8B"  # auto's hint: hermes calls, <think> reasoning
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CAPTURES = Path(__file__).resolve().parents[3] / "shared" / "captures"


@dataclass(frozen=True)
class Case:
    content: str  # what the upstream returns as content
    reasoning: str  # expected: the reasoning the client gets
    text: str  # expected: its text (white space at its end aside)
    calls: tuple[str, ...] = ()  # expected: the names of its calls
    finish: str = "stop"  # expected: stop, length or tool_calls (each front's own word for it)
    asked: bool = False  # the request asks for thinking
    flag: str = "auto"  # --reasoning-in-content
    upstream_reasoning: str | None = None  # the upstream's own reasoning_content beside
    cut: bool = False  # the upstream stopped at its length limit
    native: bool = False  # the upstream read the call itself (a tool parser, no reasoning parser)


CASES = {
    "opens": Case("<think>I should greet.</think>\n\nHello there.", "I should greet.", "Hello there."),
    "opens_after_space": Case("\n <think>\n Short.</think>Hi.", "Short.", "Hi."),
    "asked_opens": Case("<think>Greet back.</think>Hello!", "Greet back.", "Hello!", asked=True),
    # The template wrote <think> into the prompt (Qwen3 thinking models, DeepSeek-R1): only the close.
    "close_only_asked": Case("The user greets me.\n</think>\n\nHello!", "The user greets me.\n", "Hello!",
                             asked=True),
    "close_only_not_asked": Case("The user greets me.\n</think>\n\nHello!", "",
                                 "The user greets me.\n</think>\n\nHello!"),
    "close_only_on": Case("Plan it.</think>Done.", "Plan it.", "Done.", flag="on"),
    "mid_answer": Case("Wrap it in a <think> tag: <think>x</think>.", "",
                       "Wrap it in a <think> tag: <think>x</think>."),
    "asked_plain": Case("Just an answer, no thoughts.", "", "Just an answer, no thoughts.", asked=True),
    "then_call": Case("<think>Need the weather.</think>\n" + CALL, "Need the weather.", "", ("get_weather",),
                      "tool_calls"),
    "close_only_then_call": Case("Need the weather.</think>\n\n" + CALL, "Need the weather.", "",
                                 ("get_weather",), "tool_calls", asked=True),
    "native_call": Case("<think>Need the weather.</think>\n\n", "Need the weather.", "", ("get_weather",),
                        "tool_calls", native=True),
    "cut_in_reasoning": Case("<think>Still weighing the options and", "Still weighing the options and", "",
                             finish="length", cut=True),
    "also_native": Case("<think>Same thought.</think>The answer.", "Same thought.", "The answer.",
                        upstream_reasoning="Same thought."),
    # An upstream that runs a reasoning parser: its reasoning as it is, the content as text.
    "upstream_parser_asked": Case("The answer.", "Thought first.", "The answer.", asked=True,
                                  upstream_reasoning="Thought first."),
    "asked_call_no_think": Case("Let me check.\n" + CALL, "", "Let me check.", ("get_weather",), "tool_calls",
                                asked=True),
    # Qwen3 with thinking off writes an empty block: no thinking block, no white space ahead.
    "empty_block": Case("<think>\n\n</think>\n\nHello.", "", "Hello."),
    "off": Case("<think>Hidden?</think>Shown.", "", "<think>Hidden?</think>Shown.", flag="off"),
}
TOOL_CASES = {"then_call", "close_only_then_call", "native_call", "asked_call_no_think"}
NATIVE = [{"id": "call_up1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]


def script(body: dict[str, Any]) -> Reply:
    """The upstream: the answer of the case the user's message names."""
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    name = user if isinstance(user, str) else "".join(p.get("text", "") for p in user)
    case = CASES.get(name.strip(), Case("<think>Capture.</think>The answer.", "", ""))
    return Reply(content=case.content, reasoning=case.upstream_reasoning, chunk=3,
                 tool_calls=NATIVE if case.native else None,
                 finish_reason="length" if case.cut else "stop")


@pytest.fixture(scope="module")
def stacks() -> Iterator[dict[str, Stack]]:
    made = {flag: Stack(script, reasoning_in_content=flag) for flag in ("auto", "on", "off")}
    for s in made.values():
        s.__enter__()
    yield made
    for s in made.values():
        s.__exit__(None, None, None)


def _want(case: Case) -> tuple[str, str, tuple[str, ...], str]:
    return case.reasoning, case.text.rstrip(), case.calls, case.finish


# ---------------------------------------------------------------- Chat Completions


def chat(s: Stack, name: str, case: Case, stream: bool) -> tuple[str, str, tuple[str, ...], str]:
    kw: dict[str, Any] = {"reasoning_effort": "high"} if case.asked else {}
    if name in TOOL_CASES:
        kw["tools"] = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
    c = s.client()
    messages = [{"role": "user", "content": name}]
    if not stream:
        choice = c.chat.completions.create(model=MODEL, messages=messages, **kw).choices[0]
        message = choice.message
        calls = tuple(t.function.name for t in message.tool_calls or ())
        reasoning = getattr(message, "reasoning_content", None) or ""
        return reasoning, (message.content or "").rstrip(), calls, choice.finish_reason
    reasoning, text, names, finish = "", "", [], None
    for chunk in c.chat.completions.create(model=MODEL, messages=messages, stream=True, **kw):
        for choice in chunk.choices:
            delta = choice.delta
            reasoning += getattr(delta, "reasoning_content", None) or ""
            text += delta.content or ""
            names += [t.function.name for t in delta.tool_calls or () if t.function and t.function.name]
            finish = choice.finish_reason or finish
    return reasoning, text.rstrip(), tuple(names), finish


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("name", CASES)
def test_chat(stacks: dict[str, Stack], name: str, stream: bool) -> None:
    case = CASES[name]
    assert chat(stacks[case.flag], name, case, stream) == _want(case)


# ---------------------------------------------------------------- Anthropic Messages

_STOP = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


def messages(s: Stack, name: str, case: Case, stream: bool) -> tuple[str, str, tuple[str, ...], str]:
    kw: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": 1024}} if case.asked else {}
    if name in TOOL_CASES:
        kw["tools"] = [{"name": "get_weather", "input_schema": SCHEMA}]
    with anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="sk-test", max_retries=0,
                             timeout=20) as c:
        ask = {"model": MODEL, "max_tokens": 2000, "messages": [{"role": "user", "content": name}], **kw}
        if stream:
            with c.messages.stream(**ask) as events:
                message = events.get_final_message()
        else:
            message = c.messages.create(**ask)
    kinds = [b.type for b in message.content]
    # Reasoning comes first, as one thinking block; never a thinking block with nothing in it.
    assert kinds.count("thinking") <= 1 and (kinds.index("thinking") == 0 if "thinking" in kinds else True)
    reasoning = "".join(b.thinking for b in message.content if b.type == "thinking")
    text = "".join(b.text for b in message.content if b.type == "text")
    calls = tuple(b.name for b in message.content if b.type == "tool_use")
    return reasoning, text.rstrip(), calls, _STOP[message.stop_reason]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("name", CASES)
def test_messages(stacks: dict[str, Stack], name: str, stream: bool) -> None:
    case = CASES[name]
    assert messages(stacks[case.flag], name, case, stream) == _want(case)


# ---------------------------------------------------------------- OpenAI Responses


def responses(s: Stack, name: str, case: Case, stream: bool) -> tuple[str, str, tuple[str, ...], str]:
    kw: dict[str, Any] = {"reasoning": {"effort": "medium"}} if case.asked else {}
    if name in TOOL_CASES:
        kw["tools"] = [{"type": "function", "name": "get_weather", "parameters": SCHEMA}]
    c = s.client()
    if stream:  # (the SDK's get_final_response wants response.completed; a cut ends incomplete)
        with c.responses.stream(model=MODEL, input=name, **kw) as events:
            ends = [e.response for e in events if e.type in ("response.completed", "response.incomplete")]
        assert len(ends) == 1
        response = ends[0]
    else:
        response = c.responses.create(model=MODEL, input=name, **kw)
    reasoning = "".join(part.text for item in response.output if item.type == "reasoning"
                        for part in item.content or ())
    calls = tuple(item.name for item in response.output if item.type == "function_call")
    finish = "length" if response.status == "incomplete" else ("tool_calls" if calls else "stop")
    return reasoning, response.output_text.rstrip(), calls, finish


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("name", CASES)
def test_responses(stacks: dict[str, Stack], name: str, stream: bool) -> None:
    case = CASES[name]
    assert responses(stacks[case.flag], name, case, stream) == _want(case)


# ---------------------------------------------------------------- Claude Code


@pytest.mark.parametrize("thinking", [{"type": "enabled", "budget_tokens": 4096}, {"type": "adaptive"}],
                         ids=["enabled", "adaptive"])
def test_claude_code_thinking_block(stacks: dict[str, Stack], thinking: dict[str, Any]) -> None:
    """Claude Code's own first request (its capture; thinking enabled, or adaptive as it sends by
    default), streamed: the model's <think> text arrives as a thinking block, the answer as text,
    and no text delta carries the reasoning or its tags."""
    path = CAPTURES / "claude-code-1-first-turn.json"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared captures)")
    body = {**json.loads(path.read_text())["body"], "thinking": thinking}
    from tests.gateway.test_messages_stream import check_sequence, sse

    events = sse(stacks["auto"], body, path="/v1/messages?beta=true")
    check_sequence(events)
    starts = [d["content_block"]["type"] for n, d in events if n == "content_block_start"]
    assert starts == ["thinking", "text"]
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert "".join(d.get("thinking", "") for d in deltas) == "Capture."
    text = "".join(d.get("text", "") for d in deltas)
    assert text == "The answer."
    assert any(d["type"] == "signature_delta" for d in deltas)
