"""The gateway benchmark's servers: the paced test upstream and the plain-proxy floor.

Run as processes (``python -m toolbridge.bench.servers upstream|floor ...``), each
pinned to a core by ``--cpu``.

``upstream``: an OpenAI-compatible server answering from a ``Script`` (bare asyncio Protocol on
httptools and uvloop, after benchmarks/stack/upstream.py: no task per request, chunks
pre-rendered, so it costs a few microseconds per chunk and stays far from the bottleneck).
A streamed answer sends chunk i at t0 + i / rate (t0 = request received; the body field
``x_rate`` overrides the rate, 0 = unpaced), one HTTP chunk per SSE event, then ``[DONE]``.
Stream n's chunks carry the id ``chatcmpl-bench-n``, and the CLOCK_MONOTONIC time of every
write is kept; ``GET /sendlog`` returns (and forgets) those times, so the load generator can
measure each chunk's delay without any field the gateway would not pass on.

``floor``: the plain proxy on the gateway's own stack (``gateway.http``, orjson), as
benchmarks/stack/proxy_raw.py: it decodes and re-encodes the request, the answer and every
streamed chunk, and translates nothing. It relays a stream as the gateway does (each event
handled from the upstream connection's read callback, ``SSEStream.each``). Its CPU per chunk
is what the gateway's parsing and translation add to.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any, ClassVar

import httptools
import orjson

from .script import DIALECTS, Script
from ..gateway import allocator
from ..gateway.http.client import GO, PAUSE, STOP, UpstreamError, UpstreamPool
from ..gateway.http.server import H1Server, Limits, Request, Response
from ..gateway.http.sse import DONE

_STREAM_HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                b"transfer-encoding: chunked\r\n\r\n")
_DONE_CHUNK = b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"


def _whole(status: bytes, body: bytes) -> bytes:
    return (b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
            % (status, len(body)) + body)


class _Upstream(asyncio.Protocol):
    script: Script
    rate = 30.0
    sendlog: ClassVar[dict[int, list[int]]] = {}
    streams = 0

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.parser = httptools.HttpRequestParser(self)
        self.transport: Any = None
        self.body: list[bytes] = []
        self.url = b""
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.close()

    def on_message_begin(self) -> None:
        self.body, self.url = [], b""

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if self.url == b"/sendlog":
            log, _Upstream.sendlog = _Upstream.sendlog, {}
            return self._send(_whole(b"200 OK", orjson.dumps(log, option=orjson.OPT_NON_STR_KEYS)))
        req = orjson.loads(b"".join(self.body))
        if not req.get("stream"):
            return self._send(_whole(b"200 OK", self.script.completion))
        _Upstream.streams += 1
        self.n = _Upstream.streams
        self.id = b"chatcmpl-bench-%d" % self.n
        self.sent = _Upstream.sendlog[self.n] = []
        rate = float(req.get("x_rate", self.rate))
        self.period = 1 / rate if rate > 0 else 0.0
        self.seq, self.t0 = 0, self.loop.time()
        self.transport.write(_STREAM_HEAD)
        self._tick()

    def _send(self, data: bytes) -> None:
        self.transport.write(data)
        if not self.parser.should_keep_alive():
            self.transport.close()

    def _tick(self) -> None:
        self.timer = None
        if self.transport.is_closing():
            return
        chunks = self.script.chunks
        while True:  # unpaced: everything at once
            payload = chunks[self.seq] % (self.id,)
            self.sent.append(time.monotonic_ns())
            self.transport.write(b"%x\r\ndata: %b\n\n\r\n" % (len(payload) + 8, payload))
            self.seq += 1
            if self.seq == len(chunks):
                return self._send(_DONE_CHUNK)
            if self.period:
                break
        self.timer = self.loop.call_at(self.t0 + self.seq * self.period, self._tick)


# ---------------------------------------------------------------- the floor

JSON = [(b"content-type", b"application/json")]
SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


def floor_handler(pool: UpstreamPool) -> Any:
    """The plain proxy's request handler (decode and re-encode everything, translate nothing)."""
    loads, dumps = orjson.loads, orjson.dumps

    async def handler(req: Request, resp: Response) -> None:
        payload = loads(req.body)
        stream = payload.get("stream") is True
        try:
            async with pool.request("POST", req.path, JSON, dumps(payload)) as up:
                if not stream or up.status != 200:
                    data = await up.read(64 << 20)
                    resp.send(up.status, JSON, dumps(loads(data)) if up.status == 200 else data)
                    return
                resp.start(200, SSE)
                write = resp.write

                def handle(event: bytes) -> int:  # as the gateway relays: from the read callback
                    if event == b"[DONE]":
                        return STOP
                    write(b"data: " + dumps(loads(event)) + b"\n\n")
                    return PAUSE if resp.paused else GO

                await up.sse().each(handle, resp.drain)
                resp.end(DONE)
        except UpstreamError:
            if resp.started:
                resp.abort()
            else:
                resp.send(502, JSON, b'{"error":{"message":"upstream error"}}')

    return handler


# ---------------------------------------------------------------- processes


async def _serve_upstream(args: argparse.Namespace) -> None:
    _Upstream.script = Script.build(args.dialect, args.args)
    _Upstream.rate = args.rate
    server = await asyncio.get_running_loop().create_server(_Upstream, "127.0.0.1", args.port,
                                                            backlog=4096)
    async with server:
        await server.serve_forever()


async def _serve_floor(args: argparse.Namespace) -> None:
    host, port = args.upstream.rsplit(":", 1)
    pool = UpstreamPool(host, int(port), read_timeout=300.0, connect_timeout=10.0)
    server = await H1Server.start(floor_handler(pool), "127.0.0.1", args.port, Limits())
    try:
        await asyncio.Event().wait()
    finally:
        await server.close(grace=0.5)
        await pool.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m toolbridge.bench.servers")
    ap.add_argument("role", choices=["upstream", "floor"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cpu", type=int, default=None, help="pin to this core")
    ap.add_argument("--dialect", choices=DIALECTS, default="hermes", help="upstream: the script")
    ap.add_argument("--args", default="small", help="upstream: the call's argument size")
    ap.add_argument("--rate", type=float, default=30.0, help="upstream: chunks/s per stream")
    ap.add_argument("--upstream", default="", help="floor: host:port of the upstream")
    args = ap.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    if args.role == "floor":  # the gateway's allocator, as the rest of its stack
        allocator.tune()
    import uvloop

    try:
        uvloop.run(_serve_upstream(args) if args.role == "upstream" else _serve_floor(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
