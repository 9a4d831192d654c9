"""Test upstream: a fast fake OpenAI server (bare asyncio Protocol + httptools, on uvloop).

POST /v1/chat/completions
  - ``"stream": false`` -> a fixed ~1 KB chat.completion (Content-Length).
  - ``"stream": true``  -> ``--chunks`` SSE events ``data: {chunk}\\n\\n`` (one HTTP chunk each),
    chunk i sent at t0 + i / ``--rate`` s (t0 = request received), then ``data: [DONE]``. Each
    chunk carries ``x_seq`` and ``x_sent_ns`` (CLOCK_MONOTONIC at the write).
  - body fields for tests: ``x_chunks`` (chunks of this stream), ``x_test``: ``"stall_head"``
    (never answer), ``"stall"`` (send the head and 2 chunks, then nothing).
GET /stats -> JSON counters (streams started/completed/aborted, requests).

No task per request: everything runs in protocol callbacks and loop timers, so it stays far from
being the bottleneck (a few microseconds per chunk).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

import httptools
import orjson

from payloads import COMPLETION, chunk

STATS = {"requests": 0, "streams_started": 0, "streams_completed": 0, "streams_aborted": 0}

_COMPLETION_RESPONSE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
    % len(COMPLETION) + COMPLETION
)
_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_DONE = b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"


def _plain(status: bytes, body: bytes, ctype: bytes = b"application/json") -> bytes:
    return (b"HTTP/1.1 %s\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n"
            % (status, ctype, len(body)) + body)


class Upstream(asyncio.Protocol):
    chunks = 60
    rate = 30.0

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.parser = httptools.HttpRequestParser(self)
        self.transport = None
        self.body: list[bytes] = []
        self.url = b""
        self.timer = None
        self.streaming = False
        self.keep_alive = True

    def connection_made(self, transport) -> None:
        self.transport = transport

    def connection_lost(self, exc) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.streaming:
            self.streaming = False
            STATS["streams_aborted"] += 1

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.write(_plain(b"400 Bad Request", b"bad request", b"text/plain"))
            self.transport.close()

    def on_message_begin(self) -> None:
        self.body = []
        self.url = b""

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        STATS["requests"] += 1
        self.keep_alive = self.parser.should_keep_alive()
        if self.url == b"/stats":
            self._send(_plain(b"200 OK", json.dumps(STATS).encode()))
            return
        if self.url != b"/v1/chat/completions":
            self._send(_plain(b"404 Not Found", b'{"error":"not found"}'))
            return
        try:
            req = orjson.loads(b"".join(self.body))
        except orjson.JSONDecodeError:
            self._send(_plain(b"400 Bad Request", b'{"error":"bad json"}'))
            return
        test = req.get("x_test")
        if test == "stall_head":
            return
        if not req.get("stream"):
            self._send(_COMPLETION_RESPONSE)
            return
        STATS["streams_started"] += 1
        self.streaming = True
        self.n = int(req.get("x_chunks") or self.chunks)
        self.stall_at = 2 if test == "stall" else -1
        self.seq = 0
        self.t0 = self.loop.time()
        self.transport.write(_STREAM_HEAD)
        self._tick()

    def _send(self, data: bytes) -> None:
        self.transport.write(data)
        if not self.keep_alive:
            self.transport.close()

    def _tick(self) -> None:
        self.timer = None
        if self.transport.is_closing():
            return
        seq = self.seq
        if seq == self.stall_at:
            return
        payload = chunk(seq, self.n, time.monotonic_ns())
        # one HTTP chunk per SSE event, as uvicorn-based servers (vLLM, SGLang) send them
        self.transport.write(b"%x\r\ndata: %b\n\n\r\n" % (len(payload) + 8, payload))
        seq += 1
        self.seq = seq
        if seq < self.n:
            self.timer = self.loop.call_at(self.t0 + seq / self.rate, self._tick)
        else:
            self.streaming = False
            STATS["streams_completed"] += 1
            self._send(_DONE)


async def main(args: argparse.Namespace) -> None:
    Upstream.chunks = args.chunks
    Upstream.rate = args.rate
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Upstream, args.host, args.port, backlog=4096)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8100)
    ap.add_argument("--chunks", type=int, default=60)
    ap.add_argument("--rate", type=float, default=30.0, help="chunks per second per stream")
    ap.add_argument("--cpu", type=int, default=None, help="pin to this core")
    a = ap.parse_args()
    if a.cpu is not None:
        os.sched_setaffinity(0, {a.cpu})
    import uvloop

    try:
        uvloop.run(main(a))
    except KeyboardInterrupt:
        pass
