"""Conversations and tools the render tests run through every template (our own samples)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).resolve().parents[3] / "shared" / "templates"  # ../shared beside the checkout
SPECIAL = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "city name"},
        "days": {"type": "integer", "description": "how many days ahead"}},
        "required": ["city"]}}}
READ = {"type": "function", "function": {
    "name": "read_file", "description": "Read a text file",
    "parameters": {"type": "object", "properties": {
        "path": {"type": "string", "description": "file path"}}, "required": ["path"]}}}
TOOLS = [WEATHER, READ]


def call(call_id: str, name: str, args: dict[str, Any], *, as_string: bool = True) -> dict[str, Any]:
    arguments: Any = json.dumps(args) if as_string else args
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


USER = {"role": "user", "content": "What is the weather in Paris?"}
CALL_TURN = {"role": "assistant", "content": None,
             "tool_calls": [call("abcDEF123", "get_weather", {"city": "Paris", "days": 2})]}
RESULT = {"role": "tool", "tool_call_id": "abcDEF123", "name": "get_weather",
          "content": "Sunny, 21 C"}

# name -> (messages, tools, extra template variables)
CONVERSATIONS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]] | None, dict[str, Any]]] = {
    "plain": ([{"role": "user", "content": "Hello there."}], None, {}),
    "multi_turn": ([
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Say <b>bold</b> & \"quoted\" \u00e9t\u00e9."},
    ], None, {}),
    "declared": ([USER], TOOLS, {}),
    "call_and_result": ([USER, CALL_TURN, RESULT], TOOLS, {}),
    "call_arguments_object": ([USER, {
        "role": "assistant", "content": "",
        "tool_calls": [call("abcDEF123", "get_weather", {"city": "Paris"}, as_string=False)]},
        RESULT], TOOLS, {}),
    "parallel_and_answer": ([USER, {
        "role": "assistant", "content": "Checking both.",
        "tool_calls": [call("abcDEF123", "get_weather", {"city": "Paris"}),
                       call("ghiJKL456", "read_file", {"path": "notes.txt"})]},
        {"role": "tool", "tool_call_id": "abcDEF123", "content": "Rain"},
        {"role": "tool", "tool_call_id": "ghiJKL456", "content": "buy bread"},
        {"role": "assistant", "content": "Rain in Paris; your note says buy bread."},
        {"role": "user", "content": "Thanks."},
    ], TOOLS, {}),
    "parallel_arguments_object": ([USER, {
        "role": "assistant", "content": "",
        "tool_calls": [call("abcDEF123", "get_weather", {"city": "Paris", "days": 1}, as_string=False),
                       call("ghiJKL456", "read_file", {"path": "a.txt"}, as_string=False)]},
        {"role": "tool", "tool_call_id": "abcDEF123", "name": "get_weather", "content": "Rain"},
        {"role": "tool", "tool_call_id": "ghiJKL456", "name": "read_file", "content": "{\"ok\": true}"},
    ], TOOLS, {}),
    "reasoning": ([
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "reasoning_content": "Add them.", "content": "4"},
        {"role": "user", "content": "And 3+3?"},
    ], None, {}),
    "reasoning_with_call_no_thinking": ([USER, {
        "role": "assistant", "reasoning_content": "I need the weather tool.", "content": None,
        "tool_calls": [call("abcDEF123", "get_weather", {"city": "Paris"})]}, RESULT],
        TOOLS, {"enable_thinking": False}),
}


def template_files() -> list[Path]:
    return sorted(TEMPLATES.glob("**/*.jinja")) if TEMPLATES.is_dir() else []


def label(path: Path) -> str:
    return str(path.relative_to(TEMPLATES))
