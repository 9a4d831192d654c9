"""The HTTP layer's timeouts over loopback, across the requests of one keep-alive connection:
the server's request deadline (408) and idle timeout, the client's read timeout. Each
connection keeps one timer from request to request; these hold it to the deadlines a timer
made per request would keep.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from toolbridge.gateway.http.client import UpstreamPool, UpstreamTimeout
from toolbridge.gateway.http.server import H1Server, Limits, Request, Response

SHORT = 0.3  # seconds: each timeout under test
REQUEST = b"GET /x HTTP/1.1\r\nhost: h\r\n\r\n"


def served(handler_delay: float = 0.0, **limits: float):  # type: ignore[no-untyped-def]
    async def handler(req: Request, resp: Response) -> None:
        if handler_delay:
            await asyncio.sleep(handler_delay)
        resp.send(200, [(b"content-type", b"text/plain")], b"ok")

    return H1Server.start(handler, "127.0.0.1", 0, Limits(**limits))


async def answer(reader: asyncio.StreamReader) -> bytes:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    return head + await reader.readexactly(length)


async def closed_after(reader: asyncio.StreamReader) -> float:
    started = time.monotonic()
    assert await asyncio.wait_for(reader.read(), 5) == b""
    return time.monotonic() - started


def test_an_idle_connection_is_closed_a_keepalive_timeout_after_its_last_answer() -> None:
    async def main() -> None:
        server = await served(keepalive_timeout=SHORT, request_timeout=SHORT / 2)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        for _ in range(6):  # longer in all than either timeout: the connection stays open
            writer.write(REQUEST)
            assert (await answer(reader)).startswith(b"HTTP/1.1 200")
            await asyncio.sleep(SHORT / 4)
        assert SHORT * 0.5 < await closed_after(reader) < SHORT + 1
        writer.close()
        await writer.wait_closed()
        await server.close(grace=0.1)

    asyncio.run(main())


def test_a_request_not_received_in_time_is_a_408_after_answered_ones() -> None:
    async def main() -> None:
        server = await served(request_timeout=SHORT, keepalive_timeout=10)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        for _ in range(3):
            writer.write(REQUEST)
            assert (await answer(reader)).startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        writer.write(b"POST /x HTTP/1.1\r\nhost: h\r\ncontent-length: 10\r\n\r\nabc")  # never completed
        assert (await answer(reader)).startswith(b"HTTP/1.1 408")
        assert SHORT * 0.9 < time.monotonic() - started < SHORT + 1
        writer.close()
        await writer.wait_closed()
        await server.close(grace=0.1)

    asyncio.run(main())


def test_a_handler_longer_than_both_timeouts_is_answered() -> None:
    async def main() -> None:
        server = await served(handler_delay=SHORT * 2, request_timeout=SHORT / 2, keepalive_timeout=SHORT)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        for _ in range(2):
            writer.write(REQUEST)
            assert (await answer(reader)).startswith(b"HTTP/1.1 200")
        writer.close()
        await writer.wait_closed()
        await server.close(grace=0.1)

    asyncio.run(main())


class Upstream:
    """Answers each request on a connection at once, but stays silent for the ``silent``-th
    until ``close``."""

    def __init__(self, silent: int | None = None) -> None:
        self.silent = silent
        self.handlers: list[asyncio.Task[None]] = []
        self.quiet = asyncio.Event()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.handlers.append(asyncio.current_task())  # type: ignore[arg-type]
        count = 0
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                count += 1
                if count == self.silent:
                    await self.quiet.wait()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the pool closed the connection
        finally:
            writer.close()

    async def close(self, server: asyncio.Server) -> None:
        self.quiet.set()
        await asyncio.wait_for(asyncio.gather(*self.handlers), 5)
        server.close()
        await server.wait_closed()


async def exchange(pool: UpstreamPool) -> bytes:
    async with pool.request("GET", "/x") as resp:
        return await resp.read()


def test_a_reused_connection_times_out_when_the_upstream_goes_silent() -> None:
    async def main() -> None:
        upstream = Upstream(silent=4)
        server = await asyncio.start_server(upstream.serve, "127.0.0.1", 0)
        pool = UpstreamPool("127.0.0.1", server.sockets[0].getsockname()[1], read_timeout=SHORT)
        for _ in range(3):
            assert await exchange(pool) == b"ok"
        started = time.monotonic()
        with pytest.raises(UpstreamTimeout):
            await exchange(pool)
        assert SHORT * 0.9 < time.monotonic() - started < SHORT + 1 and len(upstream.handlers) == 1
        await pool.close()
        await upstream.close(server)

    asyncio.run(main())


def test_an_idle_pooled_connection_outlives_the_read_timeout() -> None:
    async def main() -> None:
        upstream = Upstream()
        server = await asyncio.start_server(upstream.serve, "127.0.0.1", 0)
        pool = UpstreamPool("127.0.0.1", server.sockets[0].getsockname()[1], read_timeout=SHORT)
        assert await exchange(pool) == b"ok"
        await asyncio.sleep(SHORT * 2)  # idle: its timer fires and finds nothing to do
        assert await exchange(pool) == b"ok" and await exchange(pool) == b"ok"
        assert len(upstream.handlers) == 1
        await pool.close()
        await upstream.close(server)

    asyncio.run(main())
