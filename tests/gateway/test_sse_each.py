"""``SSEStream.each``, the relay's way to read a stream, against a real replaying upstream:
every event once and in order, whatever the handler asks (go, pause until drained, stop), what
it raises raised in the reader, and the connection back in the pool in a usable state."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
import uvloop

from toolbridge.gateway.http.client import GO, PAUSE, STOP, UpstreamError, UpstreamPool
from toolbridge.gateway.replay.upstream import ReplayUpstream, Reply

TEXT = "one two three four five six seven eight nine ten " * 6
BODY = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}).encode()
HEADERS = [(b"content-type", b"application/json")]


def run(reply: Reply, verdict: Callable[[int], int]) -> tuple[list[bytes], bool, int]:
    """Events handed to ``each`` (verdict(n) answers the n-th), whether it stopped early, and
    how many events a second request on the same pool then reads."""

    async def main() -> tuple[list[bytes], bool, int]:
        async with ReplayUpstream(lambda body: reply) as up:
            pool = UpstreamPool("127.0.0.1", up.port, read_timeout=5)
            seen: list[bytes] = []
            drains = 0

            def handle(event: bytes) -> int:
                seen.append(event)
                return verdict(len(seen))

            async def drain() -> None:
                nonlocal drains
                drains += 1
                await asyncio.sleep(0)  # a writer's buffer draining: other tasks run meanwhile

            async with pool.request("POST", "/v1/chat/completions", HEADERS, BODY) as resp:
                stopped = await resp.sse().each(handle, drain)
            assert drains == sum(verdict(i) == PAUSE for i in range(1, len(seen) + 1))
            async with pool.request("POST", "/v1/chat/completions", HEADERS, BODY) as resp:
                again = [e async for e in resp.sse()]
            await pool.close()
            return seen, stopped, len(again)

    return uvloop.run(main())


def contents(events: list[bytes]) -> str:
    return "".join(json.loads(e)["choices"][0]["delta"].get("content") or ""
                   for e in events if e != b"[DONE]")


@pytest.mark.parametrize("verdict", [
    lambda n: GO,
    lambda n: PAUSE,
    lambda n: PAUSE if n % 3 == 0 else GO,
])
@pytest.mark.parametrize("chunk", [1, 7, 500])
def test_every_event_once_in_order(verdict: Callable[[int], int], chunk: int) -> None:
    seen, stopped, again = run(Reply(content=TEXT, chunk=chunk), verdict)
    assert seen[-1] == b"[DONE]" and contents(seen) == TEXT
    assert not stopped and again == len(seen)


def test_stop_ends_early_and_the_pool_still_works() -> None:
    seen, stopped, again = run(Reply(content=TEXT, chunk=3), lambda n: STOP if n == 5 else GO)
    assert stopped and len(seen) == 5 and again > 5


def test_what_the_handler_raises_is_raised_in_the_reader() -> None:
    def verdict(n: int) -> int:
        if n == 4:
            raise KeyError("from the handler")
        return GO

    with pytest.raises(KeyError, match="from the handler"):
        run(Reply(content=TEXT, chunk=3), verdict)


def test_a_stream_cut_mid_way_is_an_upstream_error() -> None:
    with pytest.raises(UpstreamError):
        run(Reply(content=TEXT, chunk=3, cut_after=4), lambda n: GO)
