"""Plain proxy (b): Starlette on uvicorn (uvloop + httptools) + httpx.

Same behaviour as proxy_raw.py: decode/re-encode the request, each streamed chunk and the
non-streamed answer. Body limit: Content-Length checked, then the body stream counted (413).
Client disconnect: Starlette's StreamingResponse stops the generator, whose ``finally`` closes
the httpx response (an unread response closes its connection). Upstream timeout:
``httpx.Timeout(read=...)``. The SSE framing is the shared ``sse.SSEDecoder``.
"""

from __future__ import annotations

import argparse
import contextlib
import os

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from codec import get_codec
from sse import SSEDecoder

JSON = {"content-type": "application/json"}


def make_app(args: argparse.Namespace) -> Starlette:
    loads, dumps = get_codec(args.codec)
    state: dict[str, httpx.AsyncClient] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app):
        async with httpx.AsyncClient(
            base_url=f"http://{args.upstream}",
            timeout=httpx.Timeout(args.read_timeout, connect=args.connect_timeout),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=1024,
                                keepalive_expiry=30),
        ) as client:
            state["client"] = client
            yield

    def error(status: int, message: str) -> Response:
        return Response(b'{"error":{"message":"%s"}}' % message.encode(), status, JSON)

    async def chat(request: Request) -> Response:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > args.max_body:
            return error(413, "request body too large")
        parts, size = [], 0
        async for piece in request.stream():
            size += len(piece)
            if size > args.max_body:
                return error(413, "request body too large")
            parts.append(piece)
        try:
            payload = loads(b"".join(parts))
        except ValueError:
            return error(400, "invalid JSON body")
        stream = isinstance(payload, dict) and payload.get("stream") is True
        client = state["client"]
        req = client.build_request("POST", "/v1/chat/completions", content=dumps(payload),
                                   headers=JSON)
        try:
            up = await client.send(req, stream=True)
        except httpx.TimeoutException:
            return error(504, "upstream timeout")
        except httpx.HTTPError:
            return error(502, "upstream error")
        if not stream or up.status_code != 200:
            try:
                data = await up.aread()
            except httpx.TimeoutException:
                return error(504, "upstream timeout")
            except httpx.HTTPError:
                return error(502, "upstream error")
            finally:
                await up.aclose()
            if up.status_code == 200:
                data = dumps(loads(data))
            return Response(data, up.status_code, JSON)

        async def relay():
            decoder = SSEDecoder()
            try:
                async for piece in up.aiter_bytes():
                    for event in decoder.feed(piece):
                        if event == b"[DONE]":
                            yield b"data: [DONE]\n\n"
                        else:
                            yield b"data: " + dumps(loads(event)) + b"\n\n"
            finally:
                await up.aclose()

        return StreamingResponse(relay(), media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"},
                                 background=BackgroundTask(up.aclose))

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])],
                     lifespan=lifespan)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8103)
    ap.add_argument("--upstream", default="127.0.0.1:8100")
    ap.add_argument("--codec", choices=["json", "orjson"], default="json")
    ap.add_argument("--max-body", type=int, default=8 << 20)
    ap.add_argument("--read-timeout", type=float, default=300.0)
    ap.add_argument("--connect-timeout", type=float, default=10.0)
    ap.add_argument("--cpu", type=int, default=None, help="pin to this core")
    a = ap.parse_args()
    if a.cpu is not None:
        os.sched_setaffinity(0, {a.cpu})
    uvicorn.run(make_app(a), host=a.host, port=a.port, loop="uvloop", http="httptools",
                log_level="warning", access_log=False, backlog=2048, timeout_keep_alive=75)
