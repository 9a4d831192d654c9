"""Plain proxy (c): h1server + h1client (asyncio Protocols, httptools) on uvloop.

POST /v1/chat/completions: the request JSON is decoded and re-encoded and sent upstream; a
non-streamed answer is decoded, re-encoded and returned; a streamed answer is relayed event by
event, each ``data:`` JSON decoded and re-encoded (``[DONE]`` passed through). Client disconnect
cancels the handler, which aborts the upstream connection; upstream silence past
``--read-timeout`` gives 504 (or cuts the stream); bodies over ``--max-body`` get 413.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from codec import get_codec
from h1client import UpstreamError, UpstreamPool, UpstreamTimeout
from h1server import H1Server, Limits, Request, Response

JSON = [(b"content-type", b"application/json")]
SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


def make_handler(pool: UpstreamPool, loads, dumps, max_response: int):
    async def handler(req: Request, resp: Response) -> None:
        if req.path != "/v1/chat/completions":
            resp.send(404, JSON, b'{"error":{"message":"not found"}}')
            return
        if req.method != "POST":
            resp.send(405, JSON, b'{"error":{"message":"method not allowed"}}')
            return
        try:
            payload = loads(req.body)
        except ValueError:
            resp.send(400, JSON, b'{"error":{"message":"invalid JSON body"}}')
            return
        stream = isinstance(payload, dict) and payload.get("stream") is True
        body = dumps(payload)  # the gateway translates the request here
        try:
            async with pool.request("POST", "/v1/chat/completions", JSON, body) as up:
                if not stream or up.status != 200:
                    data = await up.read(max_response)
                    if up.status == 200:
                        data = dumps(loads(data))  # ... and the response here
                    resp.send(up.status, JSON, data)
                    return
                resp.start(200, SSE)
                write = resp.write
                async for event in up.sse():
                    if event == b"[DONE]":
                        write(b"data: [DONE]\n\n")
                    else:
                        write(b"data: " + dumps(loads(event)) + b"\n\n")  # ... and each chunk
                    if resp.paused:
                        await resp.drain()
                resp.end()
        except UpstreamTimeout:
            if resp.started:
                resp.abort()  # the client must see the stream incomplete, not ended
            else:
                resp.send(504, JSON, b'{"error":{"message":"upstream timeout"}}')
        except UpstreamError:
            if resp.started:
                resp.abort()
            else:
                resp.send(502, JSON, b'{"error":{"message":"upstream error"}}')

    return handler


async def main(args: argparse.Namespace) -> None:
    host, port = args.upstream.rsplit(":", 1)
    pool = UpstreamPool(host, int(port), read_timeout=args.read_timeout,
                        connect_timeout=args.connect_timeout)
    loads, dumps = get_codec(args.codec)
    handler = make_handler(pool, loads, dumps, args.max_response)
    server = await H1Server.start(handler, args.host, args.port, Limits(max_body=args.max_body))
    await asyncio.Event().wait()
    await server.close()


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8101)
    ap.add_argument("--upstream", default="127.0.0.1:8100")
    ap.add_argument("--codec", choices=["json", "orjson"], default="json")
    ap.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop")
    ap.add_argument("--max-body", type=int, default=8 << 20)
    ap.add_argument("--max-response", type=int, default=64 << 20)
    ap.add_argument("--read-timeout", type=float, default=300.0)
    ap.add_argument("--connect-timeout", type=float, default=10.0)
    ap.add_argument("--cpu", type=int, default=None, help="pin to this core")
    return ap.parse_args(argv)


if __name__ == "__main__":
    a = parse_args()
    if a.cpu is not None:
        os.sched_setaffinity(0, {a.cpu})
    try:
        if a.loop == "uvloop":
            import uvloop

            uvloop.run(main(a))
        else:
            asyncio.run(main(a))
    except KeyboardInterrupt:
        pass
