"""Functional checks of the three plain proxies and of h1client, with raw sockets.

For each proxy (fresh upstream, proxy with --read-timeout 1 --max-body 100000):
non-streamed and streamed answers, keep-alive, body limit by Content-Length and by chunked body,
chunked request bodies, Expect: 100-continue, client disconnect mid-stream (the upstream must
see its stream aborted, also while it is silent), upstream silence before the head (504) and
mid-stream (stream cut, upstream connection closed), malformed request (400), pipelining,
HTTP/1.0 streaming. Only the raw stack's failures make the exit status non-zero.
Then h1client alone against a scripted upstream: Content-Length, chunked and close-delimited
responses, keep-alive reuse, retry after a stale keep-alive connection, response size limit;
and h1server alone: write back-pressure (drain) and a disconnect while waiting in drain().

    /tmp/stackvenv/bin/python benchmarks/stack/selfcheck.py [--proxies raw aiohttp starlette]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from payloads import COMPLETION, request_body  # noqa: E402
from run import free_port, start, stop  # noqa: E402

PROXIES = {
    "raw": ["proxy_raw.py"],
    "aiohttp": ["proxy_aiohttp.py"],
    "starlette": ["proxy_starlette.py"],
}
MAX_BODY = 100_000


def post_head(body_len: int, extra: bytes = b"", version: bytes = b"1.1") -> bytes:
    return (b"POST /v1/chat/completions HTTP/%s\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n%s\r\n" % (version, body_len, extra))


def post(body: bytes, extra: bytes = b"", version: bytes = b"1.1") -> bytes:
    return post_head(len(body), extra, version) + body


class Conn:
    """A blocking client connection that reads HTTP/1.1 responses."""

    def __init__(self, port: int, timeout: float = 5.0) -> None:
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.s.sendall(data)

    def _fill(self) -> bool:
        data = self.s.recv(65536)
        self.buf += data
        return bool(data)

    def read_until(self, sep: bytes) -> bytes:
        while sep not in self.buf:
            if not self._fill():
                raise EOFError(self.buf[:200])
        out, self.buf = self.buf.split(sep, 1)
        return out

    def read_n(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise EOFError
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def response(self) -> tuple[int, dict, bytes]:
        """Read one whole response (Content-Length, chunked or close-delimited)."""
        head = self.read_until(b"\r\n\r\n").decode()
        lines = head.split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
        if status == 100:
            return self.response()
        if "content-length" in headers:
            return status, headers, self.read_n(int(headers["content-length"]))
        if "chunked" in headers.get("transfer-encoding", ""):
            body = b""
            while True:
                size = int(self.read_until(b"\r\n").split(b";")[0], 16)
                if size == 0:
                    self.read_until(b"\r\n")
                    return status, headers, body
                body += self.read_n(size)
                self.read_n(2)
        while self._fill():
            pass
        body, self.buf = self.buf, b""
        return status, headers, body

    def closed_by_peer(self, wait: float) -> bool:
        self.s.settimeout(wait)
        try:
            while True:
                data = self.s.recv(65536)
                if not data:
                    return True
                self.buf += data
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionError:
            return True

    def close(self) -> None:
        self.s.close()


def stats(up_port: int) -> dict:
    c = Conn(up_port)
    c.send(b"GET /stats HTTP/1.1\r\nhost: x\r\n\r\n")
    out = json.loads(c.response()[2])
    c.close()
    return out


def events(body: bytes) -> list[bytes]:
    return [e[6:] for e in body.split(b"\n\n") if e.startswith(b"data: ")]


def check_proxy(port: int, up_port: int) -> dict[str, str]:
    results: dict[str, str] = {}

    def check(name, fn):
        try:
            fn()
            results[name] = "ok"
        except Exception as e:  # noqa: BLE001
            results[name] = f"FAIL {type(e).__name__}: {str(e)[:80]}"

    def nonstream():
        c = Conn(port)
        c.send(post(request_body(False)))
        status, _, body = c.response()
        assert status == 200 and json.loads(body) == json.loads(COMPLETION), status

    def stream():
        c = Conn(port)
        c.send(post(request_body(True, x_chunks=5)))
        status, h, body = c.response()
        ev = events(body)
        assert status == 200 and h["content-type"].startswith("text/event-stream")
        assert ev[-1] == b"[DONE]" and [json.loads(e)["x_seq"] for e in ev[:-1]] == list(range(5))

    def keepalive():
        c = Conn(port)
        for stream_ in (False, True, False):
            c.send(post(request_body(stream_, x_chunks=2)))
            assert c.response()[0] == 200

    def limit_content_length():
        c = Conn(port)
        c.send(post_head(MAX_BODY + 1))  # the body is never sent: refused from the head
        assert c.response()[0] == 413

    def limit_chunked():
        c = Conn(port)
        c.send(post_head(0).replace(b"content-length: 0", b"transfer-encoding: chunked"))
        piece = b"x" * 50_000
        try:
            for _ in range(3):
                c.send(b"%x\r\n%b\r\n" % (len(piece), piece))
            c.send(b"0\r\n\r\n")
        except ConnectionError:
            pass
        assert c.response()[0] == 413

    def chunked_body():
        c = Conn(port)
        body = request_body(False)
        c.send(post_head(0).replace(b"content-length: 0", b"transfer-encoding: chunked")
               + b"%x\r\n%b\r\n%x\r\n%b\r\n0\r\n\r\n" % (100, body[:100], len(body) - 100,
                                                        body[100:]))
        assert c.response()[0] == 200

    def expect_continue():
        c = Conn(port)
        body = request_body(False)
        c.send(post_head(len(body), b"expect: 100-continue\r\n"))
        line = c.read_until(b"\r\n\r\n")
        assert line.startswith(b"HTTP/1.1 100"), line[:40]
        c.send(body)
        assert c.response()[0] == 200

    def disconnect():
        before = stats(up_port)["streams_aborted"]
        c = Conn(port)
        c.send(post(request_body(True, x_chunks=600)))
        c.read_until(b"\r\n\r\n")
        for _ in range(3):
            c.read_until(b"\n\n")
        c.close()
        deadline = time.monotonic() + 2
        while stats(up_port)["streams_aborted"] == before:
            assert time.monotonic() < deadline, "upstream stream not aborted within 2 s"
            time.sleep(0.05)

    def disconnect_silent():
        # the upstream is silent (nothing to write to the client): the disconnect must still
        # be noticed, well before the proxy's 1 s upstream read timeout would end the request
        before = stats(up_port)["streams_aborted"]
        c = Conn(port)
        c.send(post(request_body(True, x_test="stall")))
        c.read_until(b"\r\n\r\n")
        for _ in range(2):
            c.read_until(b"\n\n")
        time.sleep(0.1)
        c.close()
        deadline = time.monotonic() + 0.5
        while stats(up_port)["streams_aborted"] == before:
            assert time.monotonic() < deadline, "upstream stream not aborted within 0.5 s"
            time.sleep(0.02)

    def timeout_head():
        c = Conn(port)
        t0 = time.monotonic()
        c.send(post(request_body(False, x_test="stall_head")))
        status = c.response()[0]
        assert status == 504 and time.monotonic() - t0 < 3, status

    def timeout_stream():
        c = Conn(port)
        t0 = time.monotonic()
        c.send(post(request_body(True, x_test="stall")))
        c.read_until(b"\r\n\r\n")
        got = 0
        try:
            while True:
                c.read_until(b"\n\n")
                got += 1
        except (EOFError, ConnectionError):
            pass
        except (socket.timeout, TimeoutError):
            raise AssertionError("stream not cut (connection left open)") from None
        # cut, not ended: no terminating chunk, so the client knows the answer is incomplete
        assert not c.buf.endswith(b"0\r\n\r\n"), "stream ended as if complete"
        assert got == 2 and time.monotonic() - t0 < 3, (got, time.monotonic() - t0)

    def malformed():
        c = Conn(port)
        c.send(b"GARBAGE\x01 / HTTP/1.1\r\n\r\n")
        assert c.response()[0] == 400

    def pipelining():
        c = Conn(port)
        c.send(post(request_body(False)) + post(request_body(True, x_chunks=2))
               + post(request_body(False)))
        got = [c.response()[0] for _ in range(3)]
        assert got == [200, 200, 200], got

    def http10_stream():
        c = Conn(port)
        c.send(post(request_body(True, x_chunks=3), version=b"1.0"))
        status, h, body = c.response()
        assert status == 200 and "transfer-encoding" not in h, h
        assert events(body)[-1] == b"[DONE]"

    for name, fn in [("non-streamed", nonstream), ("streamed", stream), ("keep-alive", keepalive),
                     ("413 by content-length", limit_content_length),
                     ("413 by chunked body", limit_chunked), ("chunked request body", chunked_body),
                     ("expect 100-continue", expect_continue),
                     ("disconnect aborts upstream", disconnect),
                     ("disconnect while upstream silent", disconnect_silent),
                     ("upstream timeout -> 504", timeout_head),
                     ("upstream timeout mid-stream", timeout_stream),
                     ("malformed -> 400", malformed), ("pipelining", pipelining),
                     ("HTTP/1.0 stream", http10_stream)]:
        check(name, fn)
    return results


# ---------------------------------------------------------------- h1client


async def check_client() -> dict[str, str]:
    from h1client import UpstreamError, UpstreamPool

    script: list[bytes] = []  # responses to give, in order; b"" = close without answering
    accepted = [0]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted[0] += 1
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            answer = script.pop(0)
            if answer == b"":
                break
            writer.write(answer)
            await writer.drain()
            if b"connection: close" in answer or b"content-length" not in answer.lower() \
                    and b"chunked" not in answer:
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = UpstreamPool("127.0.0.1", port, read_timeout=2)
    results: dict[str, str] = {}

    async def get(limit=None) -> tuple[int, bytes]:
        async with pool.request("POST", "/x", (), b"{}") as r:
            return r.status, await r.read(limit)

    async def check(name, coro_fn):
        try:
            await coro_fn()
            results[name] = "ok"
        except Exception as e:  # noqa: BLE001
            results[name] = f"FAIL {type(e).__name__}: {str(e)[:80]}"

    async def content_length():
        script.append(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello")
        assert await get() == (200, b"hello")

    async def reuse():
        n = accepted[0]
        script.append(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nhi")
        assert await get() == (201, b"hi") and accepted[0] == n, "not reused"

    async def chunked():
        script.append(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
                      b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        assert await get() == (200, b"abcde")

    async def close_delimited():
        script.append(b"HTTP/1.1 200 OK\r\n\r\nuntil-eof")
        assert await get() == (200, b"until-eof")

    async def stale_retry():
        script.append(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na")
        await get()  # leaves an idle connection in the pool
        script.append(b"")  # ... which the server closes when the next request arrives
        script.append(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nb")
        assert await get() == (200, b"b")

    async def size_limit():
        script.append(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789")
        try:
            await get(limit=5)
        except UpstreamError:
            return
        raise AssertionError("no error")

    async def backpressure():
        size = 4 << 20
        script.append(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size + b"z" * size)
        async with pool.request("POST", "/x", (), b"{}") as r:
            await asyncio.sleep(0.3)  # a slow consumer: the pool must stop reading
            assert r._conn.reading_paused and r._conn.buffered <= pool.high_water + 65536 * 4
            got = 0
            async for piece in r:
                got += len(piece)
        assert got == size, got

    for name, fn in [("content-length", content_length), ("keep-alive reuse", reuse),
                     ("chunked", chunked), ("close-delimited", close_delimited),
                     ("stale keep-alive retried", stale_retry), ("response size limit", size_limit),
                     ("slow consumer pauses reading", backpressure)]:
        await check(name, fn)
    await pool.close()
    server.close()
    return results


async def check_server() -> dict[str, str]:
    """h1server back-pressure: a slow reader makes the handler wait in drain(); a reader that
    goes away while the handler waits there ends the handler."""
    from h1server import H1Server

    paused = []
    ended = asyncio.Event()

    async def handler(req, resp):
        resp.start(200, [(b"content-type", b"application/octet-stream")])
        piece = b"x" * 65536
        try:
            for _ in range(int(req.target.split("=")[1])):
                resp.write(piece)
                if resp.paused:
                    paused.append(1)
                    await resp.drain()
            resp.end()
        finally:
            ended.set()

    server = await H1Server.start(handler, "127.0.0.1", 0)
    results: dict[str, str] = {}

    async def slow_reader():
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /big?n=200 HTTP/1.1\r\nhost: x\r\n\r\n")
        await asyncio.sleep(0.3)  # the server fills its buffer and must pause
        got = b""
        while not got.endswith(b"0\r\n\r\n"):
            data = await reader.read(1 << 20)
            assert data, "connection closed early"
            got = got[-8:] + data if len(got) > 1 << 20 else got + data
        writer.close()
        assert paused, "handler never saw back-pressure"

    async def gone_while_paused():
        ended.clear()
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /big?n=100000 HTTP/1.1\r\nhost: x\r\n\r\n")
        await asyncio.sleep(0.3)
        assert not ended.is_set()
        writer.transport.abort()
        await asyncio.wait_for(ended.wait(), 1.0)

    for name, fn in [("slow reader: drain() waits, all data arrives", slow_reader),
                     ("disconnect while waiting in drain() ends the handler", gone_while_paused)]:
        try:
            await fn()
            results[name] = "ok"
        except Exception as e:  # noqa: BLE001
            results[name] = f"FAIL {type(e).__name__}: {str(e)[:80]}"
    await server.close(grace=0.5)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proxies", nargs="+", default=list(PROXIES), choices=list(PROXIES))
    a = ap.parse_args()
    failed = 0
    table: dict[str, dict[str, str]] = {}
    for name in a.proxies:
        up_port = free_port()
        upstream = start(["upstream.py"], up_port, 1)
        port = free_port()
        proxy = start(PROXIES[name], port, 0, ["--upstream", f"127.0.0.1:{up_port}",
                                               "--read-timeout", "1", "--max-body",
                                               str(MAX_BODY)])
        try:
            table[name] = check_proxy(port, up_port)
        finally:
            stop(proxy)
            stop(upstream)
    checks = list(next(iter(table.values())))
    print("| check | " + " | ".join(table) + " |")
    print("|---|" + "---|" * len(table))
    for c in checks:
        print(f"| {c} | " + " | ".join(table[p][c] for p in table) + " |")
        failed += sum(table[p][c] != "ok" for p in table if p == "raw")
    import uvloop

    for title, check_fn in (("h1client", check_client), ("h1server", check_server)):
        print(f"\n{title}:")
        for k, v in uvloop.run(check_fn()).items():
            print(f"- {k}: {v}")
            failed += v != "ok"
    print("\nall raw-stack checks passed" if not failed else f"\n{failed} raw-stack checks failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
