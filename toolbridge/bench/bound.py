"""The least a translating gateway must do for `toolbridge bench --plain`'s requests, on the
gateway's own HTTP stack: a lower bound for what any correct gateway costs, not a gateway.

One process serves the three fronts' paths for non-streamed requests of the bench's shape (a
system text, one user text, function tools, hermes answers) and nothing else:

- in: the request decoded; Messages' ``system``/``messages`` or Responses' ``instructions``/
  ``input`` made chat messages; the tools made chat tools once per distinct tools text (as the
  gateway caches them); the upstream body encoded;
- out: the answer decoded; the first ``<tool_call>...</tool_call>`` read with one orjson
  decode (its arguments encoded again by orjson), its name looked up and its arguments checked against the tool's ``required`` and
  property types; the answer written in the front's shape with fresh ids (Responses: the
  request fields a response repeats).

What it leaves out, and any real gateway must do: checking the request's fields and types
(every one, with a 400 naming it), nesting limits, tool_choice forms, model names, stores,
streaming, reasoning, other dialects, repair of near-JSON, strict-JSON checks (keys written
twice), the access log, metrics, request ids, the provenance header. So its cost per request is
below any correct translator's on this stack, and the gateway's rate cannot pass its ratio to the
floor. ``toolbridge bench --plain --bound`` measures it beside the floor and the gateway.

    python -m toolbridge.bench.bound --port 8301 --upstream 127.0.0.1:8300
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
from typing import Any

import orjson

from ..gateway import allocator
from ..gateway.http.client import UpstreamError, UpstreamPool
from ..gateway.http.server import H1Server, Limits, Request, Response

JSON = [(b"content-type", b"application/json")]
OPEN, CLOSE = "<tool_call>", "</tool_call>"
TYPES: dict[str, Any] = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
                         "object": dict, "array": list}
_loads, _dumps = orjson.loads, orjson.dumps
_tools: dict[bytes, tuple[list[dict[str, Any]], dict[str, Any]]] = {}


def chat_tools(tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The chat tools and each tool's schema by name, made once per distinct tools text."""
    key = _dumps(tools)
    made = _tools.get(key)
    if made is None:
        out, schemas = [], {}
        for tool in tools:
            fn = tool.get("function") or tool
            schema = fn.get("parameters") or fn.get("input_schema") or {}
            out.append({"type": "function", "function": {"name": fn["name"], "description": fn.get("description", ""),
                                                          "parameters": schema}})
            schemas[fn["name"]] = schema
        made = _tools[key] = (out, schemas)
    return made


def fits(schema: dict[str, Any], args: Any) -> bool:
    """The arguments are an object with every required key and each property of its type."""
    if not isinstance(args, dict) or any(key not in args for key in schema.get("required", ())):
        return False
    properties = schema.get("properties", {})
    for key, value in args.items():
        spec = properties.get(key)
        wanted = TYPES.get(spec.get("type")) if spec is not None else None
        if spec is None or (wanted is not None and not isinstance(value, wanted)):
            return False
    return True


def read_call(text: str, schemas: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
    """The text before the first call and the call (name, arguments' JSON), when it fits."""
    start = text.find(OPEN)
    end = text.find(CLOSE, start) if start >= 0 else -1
    if end < 0:
        return text, None
    try:
        call = _loads(text[start + len(OPEN) : end])
    except orjson.JSONDecodeError:
        return text, None
    name = call.get("name") if isinstance(call, dict) else None
    if name not in schemas or not fits(schemas[name], call.get("arguments")):
        return text, None
    return text[:start].rstrip(), (name, _dumps(call["arguments"]).decode())


def upstream_request(path: str, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The chat body for the front's request, and the tools' schemas."""
    if path.endswith("/messages"):
        messages = [{"role": "system", "content": body["system"]}, *body["messages"]]
        limit = body.get("max_tokens")
    elif path.endswith("/responses"):
        messages = [{"role": "system", "content": body["instructions"]}, {"role": "user", "content": body["input"]}]
        limit = body.get("max_output_tokens")
    else:
        messages, limit = body["messages"], body.get("max_tokens")
    tools, schemas = chat_tools(body["tools"])
    return ({"model": body["model"], "messages": messages, "tools": tools, "tool_choice": "auto",
             "temperature": body.get("temperature"), "max_tokens": limit, "stream": False}, schemas)


def ids(count: int) -> list[str]:
    """``count`` random ids of 16 characters."""
    drawn = base64.urlsafe_b64encode(os.urandom(12 * count)).decode()
    return [drawn[16 * i : 16 * (i + 1)] for i in range(count)]


def answer(path: str, request: dict[str, Any], completion: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """The completion in the front's shape, its call read out of its text."""
    choice = completion["choices"][0]
    text, call = read_call(choice["message"].get("content") or "", schemas)
    usage = completion.get("usage") or {}
    own, item = ids(2)
    if path.endswith("/messages"):
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        if call:
            content.append({"type": "tool_use", "id": "toolu_" + item, "name": call[0], "input": _loads(call[1])})
        return {"id": "msg_" + own, "type": "message", "role": "assistant", "model": completion.get("model"),
                "content": content, "stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": usage.get("prompt_tokens"), "output_tokens": usage.get("completion_tokens")}}
    if path.endswith("/responses"):
        output: list[dict[str, Any]] = []
        if text:
            output.append({"id": "msg_" + own, "type": "message", "status": "completed", "role": "assistant",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})
        if call:
            output.append({"id": "fc_" + item, "type": "function_call", "status": "completed", "call_id": "call_" + item,
                           "name": call[0], "arguments": call[1]})
        return {"id": "resp_" + own, "object": "response", "created_at": completion.get("created"),
                "status": "completed", "model": completion.get("model"), "output": output,
                "usage": {"input_tokens": usage.get("prompt_tokens"), "output_tokens": usage.get("completion_tokens"),
                          "total_tokens": usage.get("total_tokens")},
                "instructions": request.get("instructions"), "tools": request.get("tools"),
                "tool_choice": request.get("tool_choice"), "temperature": request.get("temperature"),
                "max_output_tokens": request.get("max_output_tokens"), "store": request.get("store", True)}
    message = choice["message"]
    message["content"] = text if call is None or text else None
    if call:
        message["tool_calls"] = [{"id": "call_" + item, "type": "function",
                                  "function": {"name": call[0], "arguments": call[1]}}]
        choice["finish_reason"] = "tool_calls"
    return completion


def handler(pool: UpstreamPool) -> Any:
    async def handle(req: Request, resp: Response) -> None:
        body = _loads(req.body)
        upstream, schemas = upstream_request(req.path, body)
        try:
            async with pool.request("POST", "/v1/chat/completions", JSON, _dumps(upstream)) as up:
                raw = await up.read(64 << 20)
        except UpstreamError:
            resp.send(502, JSON, b'{"error":{"message":"upstream error"}}')
            return
        resp.send(200, JSON, _dumps(answer(req.path, body, _loads(raw), schemas)))

    return handle


async def serve(port: int, upstream: str) -> None:
    host, up = upstream.rsplit(":", 1)
    pool = UpstreamPool(host, int(up), read_timeout=300.0)
    await H1Server.start(handler(pool), "127.0.0.1", port, Limits())
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m toolbridge.bench.bound", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="host:port of the chat upstream")
    args = parser.parse_args()
    allocator.tune()  # the gateway's allocator, as the rest of its stack
    import uvloop

    uvloop.run(serve(args.port, args.upstream))


if __name__ == "__main__":
    main()
