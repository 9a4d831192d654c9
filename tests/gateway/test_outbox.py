"""``http.outbox``: a loop pass's writes held, then written together, in order, one write a
connection; and the same over real HTTP (a burst of pipelined answers, a close after an answer,
an upstream request)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from toolbridge.gateway.http.outbox import Outbox, flush
from toolbridge.gateway.http.server import H1Server


class _Transport:
    def __init__(self, closing: bool = False) -> None:
        self.writes: list[bytes] = []
        self.closing = closing

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closing


class _Conn:
    def __init__(self, closing: bool = False) -> None:
        self.transport = _Transport(closing)
        self.held: list[bytes] | None = None


# (what each connection writes in one pass, in order) -> the writes its transport sees after it
CASES = [
    ({"a": [b"1"]}, {"a": [b"1"]}),
    ({"a": [b"1", b"2", b"3"]}, {"a": [b"123"]}),
    ({"a": [b"1", b"2"], "b": [b"x"]}, {"a": [b"12"], "b": [b"x"]}),
    ({"a": [b"head", b""], "b": []}, {"a": [b"head"], "b": []}),
]


@pytest.mark.parametrize("pieces, seen", CASES)
def test_a_pass_of_writes_goes_as_one_write_a_connection(pieces: dict[str, list[bytes]],
                                                          seen: dict[str, list[bytes]]) -> None:
    async def run() -> dict[str, list[bytes]]:
        outbox = Outbox(asyncio.get_running_loop())
        conns = {name: _Conn() for name in pieces}
        for name, datas in pieces.items():
            for data in datas:
                outbox.write(conns[name], data)
        assert all(not c.transport.writes for c in conns.values())  # held until the pass ends
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return {name: c.transport.writes for name, c in conns.items()}

    assert asyncio.run(run()) == seen


def test_flush_writes_at_once_and_a_closing_connection_gets_nothing() -> None:
    async def run() -> None:
        outbox = Outbox(asyncio.get_running_loop())
        now, gone = _Conn(), _Conn(closing=True)
        outbox.write(now, b"a")
        outbox.write(gone, b"b")
        flush(now)
        assert now.transport.writes == [b"a"] and now.held is None
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert now.transport.writes == [b"a"]  # (not twice)
        assert gone.transport.writes == []
        outbox.write(now, b"c")  # a new pass: held again
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert now.transport.writes == [b"a", b"c"]

    asyncio.run(run())


async def _echo(req, resp) -> None:  # type: ignore[no-untyped-def]
    resp.send(200, [(b"content-type", b"text/plain")], req.path.encode())


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        got = b""
        while True:
            piece = sock.recv(65536)
            if not piece:
                return got
            got += piece


@pytest.mark.parametrize("paths", [["/a"], ["/a", "/b", "/c"], [f"/{i}" for i in range(20)]])
def test_pipelined_answers_arrive_whole_and_in_order_before_the_close(paths: list[str]) -> None:
    async def run() -> bytes:
        server = await H1Server.start(_echo, "127.0.0.1", 0)
        heads = [f"GET {p} HTTP/1.1\r\nhost: h\r\n" for p in paths]
        heads[-1] += "connection: close\r\n"
        data = "".join(h + "\r\n" for h in heads).encode()
        try:
            return await asyncio.get_running_loop().run_in_executor(None, _exchange, server.port, data)
        finally:
            await server.close(0.1)

    got = asyncio.run(run())
    bodies = [part.split(b"\r\n\r\n", 1)[1][: len(p)] for part, p in zip(got.split(b"HTTP/1.1 200 OK\r\n")[1:], paths)]
    assert bodies == [p.encode() for p in paths]
    assert got.count(b"HTTP/1.1 200 OK") == len(paths)
