"""``toolbridge demo --front anthropic``: the demo's agent loop as an Anthropic Messages client.

The same upstreams and samples as ``demo`` (the gateway with its defaults in front of a
replaying upstream); the official ``anthropic`` SDK drives ``POST /v1/messages``: ask with
tools, get a ``tool_use`` block, send its ``tool_result``, get the answer; once whole
(``messages.create``) and once streamed (``messages.stream``, the SSE events counted by name).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, TextIO

from ..gateway.replay.stack import Stack
from .demo import ANSWER, CALL, RESULT, TOOLS, Front

# The API's own event names (the SDK's stream also yields events it derives: text, input_json).
API_EVENTS = frozenset({"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                        "message_delta", "message_stop"})


def messages_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool as this API declares it."""
    function = tool["function"]
    return {"name": function["name"], "description": function["description"],
            "input_schema": function["parameters"]}


MESSAGES_TOOLS = [messages_tool(t) for t in TOOLS]


def client(stack: Stack) -> Any:
    """An ``anthropic.Anthropic`` client for the stack's gateway (its base URL without ``/v1``)."""
    import anthropic

    return anthropic.Anthropic(base_url=stack.url.removesuffix("/v1"), api_key="demo", max_retries=0,
                               timeout=20)


def turn(client: Any, messages: list[Any], stream: bool) -> dict[str, Any]:
    """One message as the client sees it: its blocks, stop reason, and the events or header."""
    if not stream:
        raw = client.messages.with_raw_response.create(model="demo", max_tokens=1024, messages=messages,
                                                       tools=MESSAGES_TOOLS)
        return {"message": raw.parse(), "seen": f"x-toolbridge-calls: {raw.headers.get('x-toolbridge-calls', '')}"}
    with client.messages.stream(model="demo", max_tokens=1024, messages=messages, tools=MESSAGES_TOOLS) as events:
        names = Counter(event.type for event in events if event.type in API_EVENTS)
        message = events.get_final_message()
    counts = ", ".join(f"{name} x{n}" for name, n in names.items())
    return {"message": message, "seen": f"events: {counts}"}


def loop(client: Any, stream: bool, out: TextIO) -> bool:
    """The two turns; True when the client got the expected call and answer."""
    messages: list[Any] = [{"role": "user", "content": "The config tests fail. Find out why."}]
    first = turn(client, messages, stream)
    message = first["message"]
    out.write(f"    client got   : stop_reason={message.stop_reason}, {first['seen']}\n")
    for block in message.content:
        shown = {"text": lambda b: repr(b.text), "thinking": lambda b: repr(b.thinking),
                 "tool_use": lambda b: f"{b.name}({json.dumps(b.input)})  id={b.id}"}[block.type](block)
        out.write(f"                   {block.type} {shown}\n")
    calls = [b for b in message.content if b.type == "tool_use"]
    if not calls:
        return False
    messages += [{"role": "assistant", "content": message.content},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0].id,
                                               "content": RESULT}]}]
    second = turn(client, messages, stream)["message"]
    text = "".join(b.text for b in second.content if b.type == "text")
    out.write(f"    tool result  : {RESULT!r}\n    client got   : {text!r} (stop_reason={second.stop_reason})\n")
    ok = [(b.name, b.input) for b in calls] == [("run_tests", CALL)] and message.stop_reason == "tool_use"
    return ok and text == ANSWER and second.stop_reason == "end_turn"


FRONT: Front = ("anthropic", client, loop, "tool_use blocks")
