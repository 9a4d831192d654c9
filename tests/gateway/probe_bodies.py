"""Valid requests of every front, rich in fields, and the wrong-typed values a careless or
hostile client puts in their place: what ``test_wrong_types`` draws from."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

IMAGE = "data:image/png;base64,AAAA"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
          "required": ["city"]}
ARGS = '{"city": "Rome"}'

CHAT = {
    "model": "m", "max_tokens": 50, "temperature": 0.5, "stop": ["STOP"], "parallel_tool_calls": True,
    "tool_choice": "auto", "stream": False,
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}, {"type": "image_url", "image_url": {"url": IMAGE}}]},
        {"role": "assistant", "content": None, "reasoning_content": "look it up", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ARGS}},
            {"id": "call_2", "type": "custom", "custom": {"name": "patch", "input": "*** Begin"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": "Thanks"}],
    "tools": [
        {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": SCHEMA,
                                          "strict": False}},
        {"type": "custom", "custom": {"name": "patch", "description": "Patch.", "format": {"type": "text"}}}],
}

MESSAGES = {
    "model": "m", "max_tokens": 100, "temperature": 0.5, "top_p": 0.9, "top_k": 5, "stop_sequences": ["STOP"],
    "stream": False, "system": [{"type": "text", "text": "Be brief."}], "metadata": {"user_id": "u"},
    "thinking": {"type": "enabled", "budget_tokens": 50}, "output_config": {"effort": "low"},
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": False},
    "tools": [{"name": "get_weather", "description": "Weather.", "input_schema": SCHEMA, "strict": False}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather?"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                                     {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "look", "signature": "sig"},
                                          {"type": "text", "text": "Checking."},
                                          {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Rome"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False,
                                      "content": [{"type": "text", "text": "sunny"}]},
                                     {"type": "text", "text": "Thanks"}]}],
}

COUNT = {k: v for k, v in MESSAGES.items() if k not in ("max_tokens", "stream", "thinking")}

RESPONSES = {
    "model": "m", "instructions": "Be brief.", "max_output_tokens": 50, "temperature": 0.5, "top_p": 0.9,
    "tool_choice": "auto", "parallel_tool_calls": True, "store": True, "stream": False,
    "reasoning": {"effort": "low", "summary": "auto"}, "text": {"format": {"type": "text"}, "verbosity": "low"},
    "metadata": {"k": "v"}, "include": ["reasoning.encrypted_content"], "previous_response_id": None,
    "tools": [
        {"type": "function", "name": "get_weather", "description": "Weather.", "parameters": SCHEMA, "strict": False},
        {"type": "custom", "name": "patch", "description": "Patch.", "format": {"type": "text"}},
        {"type": "namespace", "name": "fs", "tools": [{"type": "function", "name": "read", "parameters": {"type": "object"}}]},
        {"type": "web_search"}],
    "input": [
        {"type": "message", "role": "developer", "content": "Use tools."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"},
                                                         {"type": "input_image", "image_url": IMAGE, "detail": "low"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look"}],
         "content": [{"type": "reasoning_text", "text": "look"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": ARGS},
        {"type": "function_call", "call_id": "call_3", "name": "read", "namespace": "fs", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "call_3", "output": "file"},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "patch", "input": "*** Begin"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "ok"}]},
        {"role": "user", "content": "Thanks"}],
}

BASES = {"chat": CHAT, "messages": MESSAGES, "count": COUNT, "responses": RESPONSES}
PATHS = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "count": "/v1/messages/count_tokens",
         "responses": "/v1/responses"}


def nested(levels: int) -> Any:
    value: Any = "x"
    for i in range(levels):
        value = {"a": value} if i % 2 else [value]
    return value


MISSING = object()  # in place of a value: the key is left out (an array item taken out)
# Values of the wrong type for nearly any field: scalars of each JSON type, empty and non-empty
# arrays and objects, objects that look like parts or tools, and nesting past the bound.
WRONG: list[Any] = [None, 0, -1, 1.5, True, False, "", "x", [], ["x"], [1], [None], [[]], {}, {"type": 5},
                    {"type": "text"}, {"a": {"b": [1]}}, [{"type": None}], nested(200), 10**20, "\u0000", MISSING]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into ``value``: each key of each object and each index of each array."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*prefix, index)
            yield from paths(inner, (*prefix, index))


def replaced(base: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A copy of ``base`` with ``value`` at ``path`` (``MISSING``: without it)."""
    body = copy.deepcopy(base)
    target = body
    for key in path[:-1]:
        target = target[key]
    if value is MISSING:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return body
