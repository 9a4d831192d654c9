"""A replaying upstream: a real OpenAI-compatible HTTP server that answers from a script.

Used by the tests, the demo and the benchmark in place of a model server. A script maps each
request to a ``Reply``: model text (in any dialect) to return as ``content`` or as reasoning,
or native ``tool_calls``, streamed in chunks of a given size and pace or returned whole, with the
quirks real upstreams have (a whole native call in one chunk, an id on every chunk, no index,
arguments as an object), and with faults (an error status, silence, a stream cut mid-way or
ended early with ``[DONE]`` and no finish, a connection dropped unanswered, an answer or a chunk
that is not JSON).
Every request body it received is kept in ``requests``, and its ``Authorization`` field (None
when absent) in ``authorizations``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..http.server import H1Server, Request, Response

JSON = [(b"content-type", b"application/json")]
GARBAGE = b'{"id": "chatcmpl-replay", \x00\xff not json'


@dataclass
class Reply:
    content: str | None = None
    reasoning: str | None = None  # sent as reasoning_content
    tool_calls: list[dict[str, Any]] | None = None  # native calls, OpenAI shape
    chunk: int = 4  # characters per streamed delta
    pace: float = 0.0  # seconds between streamed chunks
    finish_reason: str = "stop"
    status: int = 200
    error: str = ""  # with a non-200 status: the error message
    delay: float = 0.0  # seconds of silence before answering
    cut_after: int | None = None  # streamed: drop the connection after this many chunks
    # Streamed: after the first chunk, wait until it is set (10 s at most); whole: before answering.
    hold: threading.Event | None = None
    quirk: str = ""  # native streams: "whole", "id_every_chunk", "no_index", "object_arguments"
    # "reset": the connection is dropped unanswered; "garbage": the answer is not JSON (streamed:
    # chunk ``cut_after`` is not JSON, and the stream goes on); "interrupted" (streamed): after
    # ``cut_after`` chunks the stream ends with ``[DONE]`` and no finish, as llama-cpp-python's
    # server ends a stream when another request reaches it (its ``interrupt_requests``, on by default)
    fault: str = ""
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 20,
                                                            "total_tokens": 30})


Script = Callable[[dict[str, Any]], Reply]
# Model text -> the pieces a server's detokeniser yields, one per token, honouring the request's
# skip_special_tokens (True by default, as common servers do).
Detokenize = Callable[[str, bool], list[str]]


class ReplayUpstream:
    """``async with ReplayUpstream(script) as up: ... up.port ... up.requests``."""

    def __init__(self, script: Script, host: str = "127.0.0.1", port: int = 0,
                 detokenize: Detokenize | None = None, models: tuple[str, ...] | None = ("replay",),
                 strict: bool = False) -> None:
        self.script = script
        # Strict: a request for a model its listing does not name is answered 404, as vLLM does
        # (else any name is taken, as llama.cpp does).
        self.strict = strict
        self.detokenize = detokenize
        self.host, self._port = host, port
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[bytes | None] = []
        # What GET /v1/models answers (a server's listing says which server it is; ``models``:
        # the names it lists, though it answers any) and with which extra header fields
        # (``server: llama.cpp`` ...).
        # None: no such endpoint (404).
        self.models: dict[str, Any] | None = None if models is None else {
            "object": "list", "data": [{"id": m, "object": "model"} for m in models]}
        self.models_headers: list[tuple[bytes, bytes]] = []
        self.models_status = 200  # another status: GET /v1/models answers it with an error body
        self.models_probes = 0
        self.disconnects = 0  # streams whose client went away before the end
        # As llama-cpp-python's server (its interrupt_requests): a stream ends with [DONE], no
        # finish, after the chunk it is writing when any other request has arrived since it began.
        self.interrupts = False
        self.arrivals = 0  # requests received, of any kind
        self.server: H1Server | None = None

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def served(self) -> list[str]:
        """The model names its listing gives now."""
        return [m["id"] for m in (self.models or {}).get("data", ())]

    async def __aenter__(self) -> ReplayUpstream:
        self.server = await H1Server.start(self._handle, self.host, self._port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        await self.server.close(grace=0.2)

    async def _handle(self, req: Request, resp: Response) -> None:
        self.arrivals += 1
        if req.path.endswith("/models"):
            self.models_probes += 1
            if self.models is None:
                resp.send(404, JSON, b'{"detail": "Not Found"}')
            elif self.models_status != 200:
                resp.send(self.models_status, JSON, b'{"error": {"message": "listing failed", "type": "upstream"}}')
            else:
                resp.send(200, [*JSON, *self.models_headers], json.dumps(self.models).encode())
            return
        body = json.loads(req.body)
        self.requests.append(body)
        self.authorizations.append(req.header(b"authorization"))
        if self.strict and body.get("model") not in self.served:
            error = {"object": "error", "message": f"The model `{body.get('model')}` does not exist.",
                     "type": "NotFoundError", "param": "model", "code": 404}
            resp.send(404, JSON, json.dumps({"error": error}).encode())
            return
        reply = self.script(body)
        pieces = None
        if self.detokenize is not None and reply.content:
            pieces = self.detokenize(reply.content, body.get("skip_special_tokens", True))
            reply = replace(reply, content="".join(pieces))
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.hold is not None and not body.get("stream"):
            await asyncio.to_thread(reply.hold.wait, 10)
        if reply.fault == "reset":
            resp.abort()
        elif reply.status != 200:
            resp.send(reply.status, JSON, json.dumps({"error": {"message": reply.error, "type": "upstream"}}).encode())
        elif body.get("stream"):
            await self._stream(reply, body, resp, pieces)
        elif reply.fault == "garbage":
            resp.send(200, JSON, GARBAGE)
        else:
            resp.send(200, JSON, json.dumps(completion(reply, body)).encode())

    async def _stream(self, reply: Reply, body: dict[str, Any], resp: Response,
                      pieces: list[str] | None) -> None:
        resp.start(200, [(b"content-type", b"text/event-stream")])
        chunks = stream_chunks(reply, body, pieces)
        begun = self.arrivals
        try:
            for n, chunk in enumerate(chunks):
                if n == reply.cut_after and reply.fault == "garbage":
                    resp.write(b"data: " + GARBAGE + b"\n\n")
                elif n == reply.cut_after:
                    cut(resp, reply)
                    return
                resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                if n == 0 and reply.hold is not None:
                    await asyncio.to_thread(reply.hold.wait, 10)
                if reply.pace:
                    await asyncio.sleep(reply.pace)
                if self.interrupts and self.arrivals != begun:
                    break
            resp.end(b"data: [DONE]\n\n")
        except (ConnectionError, asyncio.CancelledError):
            self.disconnects += 1
            raise


def cut(resp: Response, reply: Reply) -> None:
    """End a stream at ``reply.cut_after``: ``[DONE]`` without a finish (``interrupted``), or
    the connection dropped."""
    if reply.fault == "interrupted":
        resp.end(b"data: [DONE]\n\n")
    else:
        resp.abort()


def completion(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return {"id": "chatcmpl-replay", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "replay"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": reply.usage}


def stream_chunks(reply: Reply, body: dict[str, Any], pieces: list[str] | None = None) -> list[dict[str, Any]]:
    head = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": body.get("model", "replay")}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    for key, text in (("reasoning_content", reply.reasoning), ("content", reply.content)):
        if key == "content" and pieces is not None:
            deltas += [{key: piece} for piece in pieces if piece]
        elif text:
            deltas += [{key: text[i:i + reply.chunk]} for i in range(0, len(text), reply.chunk)]
    for index, call in enumerate(reply.tool_calls or ()):
        deltas += native_deltas(index, call, reply.quirk, reply.chunk)
    chunks = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**head, "choices": [], "usage": reply.usage})
    return chunks


def native_deltas(index: int, call: dict[str, Any], quirk: str, size: int) -> list[dict[str, Any]]:
    """A native call as upstreams stream it, with one of their quirks."""
    fn, call_id = call["function"], call["id"]
    arguments = fn["arguments"]
    if quirk == "whole":
        return [{"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": fn}]}]
    if quirk == "object_arguments":
        whole = {"name": fn["name"], "arguments": json.loads(arguments)}
        return [{"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": whole}]}]
    first = {"index": index, "id": call_id, "type": "function", "function": {"name": fn["name"], "arguments": ""}}
    rest = [{"index": index, "function": {"arguments": arguments[i:i + size]}} for i in range(0, len(arguments), size)]
    if quirk == "id_every_chunk":
        rest = [{**part, "id": call_id} for part in rest]
    if quirk == "no_index":
        first = {k: v for k, v in first.items() if k != "index"}
        rest = [{k: v for k, v in part.items() if k != "index"} for part in rest]
    return [{"tool_calls": [part]} for part in [first, *rest]]
