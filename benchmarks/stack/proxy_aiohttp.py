"""Plain proxy (a): aiohttp server + aiohttp client (on asyncio's loop or uvloop).

Same behaviour as proxy_raw.py: decode/re-encode the request, each streamed chunk and the
non-streamed answer. Body limit: ``client_max_size`` (413). Client disconnect: the handler is
cancelled (``handler_cancellation=True``) and leaving ``async with session.post`` with the body
unread closes the upstream connection. Upstream timeout: ``ClientTimeout(sock_read=...)``.
The SSE framing is the shared ``sse.SSEDecoder`` (as in the other stacks).
"""

from __future__ import annotations

import argparse
import asyncio
import os

import aiohttp
from aiohttp import web

from codec import get_codec
from sse import SSEDecoder

JSON = {"Content-Type": "application/json"}


def make_app(args: argparse.Namespace) -> web.Application:
    loads, dumps = get_codec(args.codec)
    url = f"http://{args.upstream}/v1/chat/completions"
    app = web.Application(client_max_size=args.max_body)

    async def on_startup(app: web.Application) -> None:
        app["session"] = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=30),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=args.connect_timeout,
                                          sock_read=args.read_timeout),
        )

    async def on_cleanup(app: web.Application) -> None:
        await app["session"].close()

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.read()  # raises 413 past client_max_size
        try:
            payload = loads(body)
        except ValueError:
            return web.json_response({"error": {"message": "invalid JSON body"}}, status=400)
        stream = isinstance(payload, dict) and payload.get("stream") is True
        session: aiohttp.ClientSession = request.app["session"]
        resp = None
        try:
            async with session.post(url, data=dumps(payload), headers=JSON) as up:
                if not stream or up.status != 200:
                    data = await up.read()
                    if up.status == 200:
                        data = dumps(loads(data))
                    return web.Response(status=up.status, body=data, headers=JSON)
                resp = web.StreamResponse(
                    status=200,
                    headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"},
                )
                await resp.prepare(request)
                decoder = SSEDecoder()
                async for piece in up.content.iter_any():
                    for event in decoder.feed(piece):
                        if event == b"[DONE]":
                            await resp.write(b"data: [DONE]\n\n")
                        else:
                            await resp.write(b"data: " + dumps(loads(event)) + b"\n\n")
                await resp.write_eof()
                return resp
        except asyncio.TimeoutError:
            if resp is None:
                return web.json_response({"error": {"message": "upstream timeout"}}, status=504)
            raise  # a started stream is cut
        except aiohttp.ClientError:
            if resp is None:
                return web.json_response({"error": {"message": "upstream error"}}, status=502)
            raise

    app.router.add_post("/v1/chat/completions", chat)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    return app


async def main(args: argparse.Namespace) -> None:
    runner = web.AppRunner(make_app(args), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port, backlog=2048)
    await site.start()
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8102)
    ap.add_argument("--upstream", default="127.0.0.1:8100")
    ap.add_argument("--codec", choices=["json", "orjson"], default="json")
    ap.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop")
    ap.add_argument("--max-body", type=int, default=8 << 20)
    ap.add_argument("--read-timeout", type=float, default=300.0)
    ap.add_argument("--connect-timeout", type=float, default=10.0)
    ap.add_argument("--cpu", type=int, default=None, help="pin to this core")
    a = ap.parse_args()
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
