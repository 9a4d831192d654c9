"""Conversations and tools the render tests run through every template (our own samples)."""

from __future__ import annotations

import copy
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


def parts(*texts: str) -> list[dict[str, str]]:
    """Content as a list of text parts (as Qwen Code and other clients send every message)."""
    return [{"type": "text", "text": text} for text in texts]


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

# OpenAI-shaped tool loops as agents send them: arguments as JSON strings, contents as text parts,
# a call turn's content null. Only get_weather is called in the first: read_file's declaration is
# what shows that a template wrote the tools.
LOOPS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]] | None, dict[str, Any]]] = {
    "loop_text_parts": ([
        {"role": "system", "content": parts("You are terse.")},
        {"role": "user", "content": parts("What is the weather in Paris?")},
        {"role": "assistant", "content": None,
         "tool_calls": [call("abcDEF123", "get_weather", {"city": "Paris", "days": 2})]},
        {"role": "tool", "tool_call_id": "abcDEF123", "content": parts("Sunny, 21 C")},
    ], TOOLS, {}),
    "loop_parallel_parts": ([
        {"role": "user", "content": parts("Weather in Paris, and", "what do my notes say?")},
        {"role": "assistant", "content": parts("Checking both."),
         "tool_calls": [call("abcDEF123", "get_weather", {"city": "Paris"}),
                        call("ghiJKL456", "read_file", {"path": "notes.txt"})]},
        {"role": "tool", "tool_call_id": "abcDEF123", "name": "get_weather",
         "content": parts("Rain")},
        {"role": "tool", "tool_call_id": "ghiJKL456", "name": "read_file",
         "content": parts("line1", "line2")},
        {"role": "assistant", "content": "Rain in Paris; your notes say line1, line2."},
        {"role": "user", "content": parts("Thanks.")},
    ], TOOLS, {}),
}


def served(messages: list[dict[str, Any]], shape: str) -> list[dict[str, Any]]:
    """What a server gives the template for ``messages`` (``transformers``' input in the parity
    tests): null content as "", text parts joined by newlines, arguments in ``shape``."""
    out = []
    for message in copy.deepcopy(messages):
        content = message.get("content", "")
        if content is None:
            message["content"] = ""
        elif isinstance(content, list):
            message["content"] = "\n".join(part["text"] for part in content)
        for tool_call in message.get("tool_calls") or ():
            function = tool_call["function"]
            if shape == "object" and isinstance(function["arguments"], str):
                function["arguments"] = json.loads(function["arguments"])
            elif shape == "string" and not isinstance(function["arguments"], str):
                function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)
        out.append(message)
    return out


def template_files() -> list[Path]:
    return sorted(TEMPLATES.glob("**/*.jinja")) if TEMPLATES.is_dir() else []


def label(path: Path) -> str:
    return str(path.relative_to(TEMPLATES))
