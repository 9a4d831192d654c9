"""What a known upstream refuses of a valid Chat Completions request, and how it is sent instead.

The upstream's kind is read from its model list (``upstream.kind``, ``Models.kind``) or given
(``--upstream-kind``); every other upstream is sent the request as it is.

- llama-cpp-python's server (0.3.36) refuses an assistant message whose ``content`` is null,
  500 with its request model's "Input should be a valid string" (it takes one without
  ``content``, or with ``""``), though OpenAI allows it and the Messages and Responses fronts write
  it for a turn of tool calls alone: to it, such a message is sent with ``content: ""``. Only to
  it: an empty string is not null to every chat template (some render ``""`` where they skip a
  null, DeepSeek's among them).
"""

from __future__ import annotations

from typing import Any

EMPTY_FOR_NULL = frozenset({"llama-cpp-python"})  # kinds sent "" for a calling turn's null content


def adapt(kind: str | None, body: dict[str, Any]) -> None:
    """``body`` (a chat request) written as the upstream of ``kind`` takes it."""
    if kind in EMPTY_FOR_NULL:
        fill_call_content(body)


def fill_call_content(body: dict[str, Any]) -> None:
    """Give the assistant messages of ``body`` that carry tool calls and a null content an
    empty one. The message list is replaced, not changed: it may be the client's, and its JSON text
    may be kept for sending (``Plan.texts``: the list is then re-encoded)."""
    messages = body.get("messages")
    if isinstance(messages, list) and any(_calls_alone(m) for m in messages):
        body["messages"] = [{**m, "content": ""} if _calls_alone(m) else m for m in messages]


def _calls_alone(message: Any) -> bool:
    return (isinstance(message, dict) and message.get("role") == "assistant"
            and "content" in message and message["content"] is None and bool(message.get("tool_calls")))
