"""A replaying upstream that also serves the text API, ``/v1/completions`` (tests, demo).

As ``ReplayUpstream`` for chat requests; a completions request's ``prompt`` goes to the same
script, and the reply's text comes back as ``text_completion`` objects, whole or streamed in
chunks (cut after ``cut_after`` of them, as ``ReplayUpstream`` cuts its chat chunks). Like a
real server it stops at the first of the request's ``stop`` strings and leaves the stop string
out.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..http.server import Request, Response
from .upstream import JSON, ReplayUpstream, Reply, cut


class TextReplayUpstream(ReplayUpstream):
    """``ReplayUpstream`` plus ``/v1/completions``."""

    async def _handle(self, req: Request, resp: Response) -> None:
        if req.path.endswith("/chat/completions") or not req.path.endswith("/completions"):
            await super()._handle(req, resp)
            return
        body = json.loads(req.body)
        self.requests.append(body)
        reply = self.script(body)
        if reply.status != 200:
            error = {"error": {"message": reply.error, "type": "upstream"}}
            resp.send(reply.status, JSON, json.dumps(error).encode())
            return
        text, finish = _stopped(reply.content or "", body.get("stop"), reply.finish_reason)
        if not body.get("stream"):
            resp.send(200, JSON, json.dumps(_envelope(body, [_choice(text, finish)], reply)).encode())
            return
        resp.start(200, [(b"content-type", b"text/event-stream")])
        for n, i in enumerate(range(0, len(text), reply.chunk)):
            if n == reply.cut_after:
                cut(resp, reply)
                return
            chunk = _envelope(body, [_choice(text[i:i + reply.chunk], None)], None)
            resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        last = _envelope(body, [_choice("", finish)], None)
        resp.write(b"data: " + json.dumps(last).encode() + b"\n\n")
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {**_envelope(body, [], reply)}
            resp.write(b"data: " + json.dumps(usage).encode() + b"\n\n")
        resp.end(b"data: [DONE]\n\n")


def _stopped(text: str, stop: Any, finish: str) -> tuple[str, str]:
    stops = [stop] if isinstance(stop, str) else list(stop or ())
    cut = min((text.find(s) for s in stops if s and s in text), default=-1)
    return (text[:cut], "stop") if cut >= 0 else (text, finish)


def _choice(text: str, finish: str | None) -> dict[str, Any]:
    return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}


def _envelope(body: dict[str, Any], choices: list[dict[str, Any]], reply: Reply | None) -> dict[str, Any]:
    out = {"id": "cmpl-replay", "object": "text_completion", "created": int(time.time()),
           "model": body.get("model", "replay"), "choices": choices}
    if reply is not None:
        out["usage"] = reply.usage
    return out
