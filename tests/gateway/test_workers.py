"""A real ``python -m toolbridge serve --workers 2`` process in front of a replaying upstream on
loopback: the grammar that crashed the engine is a 400 and the gateway answers after it; a
worker killed is restarted (the master's log line) while the others answer; SIGTERM lets a
stream in flight finish, then every worker and the master are gone and the port is closed; a
worker that cannot start backs off instead of spinning. The master's log lines are the
synchronisation: each step waits for the line that says it happened."""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.gateway.test_grammars import CRASH, chat_tool
from toolbridge.bench.ports import free_port
from toolbridge.gateway.replay.upstream import ReplayUpstream, Reply, Script
from toolbridge.gateway.supervisor import FIRST_DELAY, MAX_DELAY, restart_delay

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # seconds: a bound on each step, far above what it takes (to fail, not to pace)
USER = [{"role": "user", "content": "hi"}]
SLOW = "slowly " * 40  # streamed 4 characters a chunk, a chunk every 0.05 s: about 3.5 s


def slow_stream(body: dict[str, Any]) -> Reply:
    """The default script: the stream is slow when asked for, a whole answer is ``ok``."""
    return Reply(content=SLOW, pace=0.05) if body.get("stream") else Reply(content="ok")


class Upstream:
    """A replaying upstream answering with ``script`` on its own event loop thread."""

    def __init__(self, script: Script = slow_stream) -> None:
        self.up = ReplayUpstream(script)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.up.__aenter__(), self.loop).result(WAIT)

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.up.__aexit__(), self.loop).result(WAIT)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        self.loop.close()


class Gateway:
    """``python -m toolbridge serve`` as a process, its standard error read line by line."""

    def __init__(self, upstream: str, port: int, workers: int) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.port = port
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolbridge", "serve", "--upstream", upstream, "--port", str(port),
             "--workers", str(workers), "--tool-call-parser", "hermes", "--graceful-timeout", "20"],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def expect(self, pattern: str, count: int = 1) -> list[re.Match[str]]:
        """Read log lines until ``count`` of them match ``pattern``; their matches."""
        found: list[re.Match[str]] = []
        while len(found) < count:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no line {pattern!r} in:\n{''.join(self.log)}") from None
            self.log.append(line)
            if (match := re.search(pattern, line)) is not None:
                found.append(match)
        return found

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"http://127.0.0.1:{self.port}/v1", api_key="k", max_retries=0)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(WAIT)
        self.reader.join(WAIT)  # to the end of its standard error (workers write to it too)
        assert self.proc.stderr is not None
        self.proc.stderr.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    up = Upstream()
    yield up
    up.close()


def started(gateway: Gateway, workers: int) -> list[int]:
    """The workers' pids, once each is serving."""
    pids = [int(m[1]) for m in gateway.expect(r"worker \d+ started \(pid (\d+)\)", workers)]
    gateway.expect(r"toolbridge gateway on http://", workers)
    return pids


def test_two_workers_survive_the_crash_grammar_a_killed_worker_and_stop_gracefully(upstream: Upstream) -> None:
    gateway = Gateway(upstream.up.url, free_port(), 2)
    try:
        pids = started(gateway, 2)
        with gateway.client() as c:
            for _ in range(2):  # (a): once per worker, were they not refused before the engine
                with pytest.raises(openai.BadRequestError, match="the grammar has 2700 rules; at most 1000"):
                    c.chat.completions.create(model="m", messages=USER, tools=[chat_tool(CRASH)])
            assert c.chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"

            os.kill(pids[0], signal.SIGKILL)  # (b)
            died = gateway.expect(r"worker (\d+) \(pid (\d+)\) died \(signal 9\); restarting it in 0\.0 s \(restart 1\)")
            assert int(died[0][2]) == pids[0]
            [new] = started(gateway, 1)
            assert new not in pids and alive(new)
            assert c.chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"

            stream = c.chat.completions.create(model="m", messages=USER, stream=True)  # (c)
            pieces = [next(stream).choices[0].delta.content or ""]
            gateway.proc.send_signal(signal.SIGTERM)
            gateway.expect(r"stopping: 2 workers finish their requests")
            pieces += [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
        assert "".join(pieces) == SLOW
        assert gateway.proc.wait(WAIT) == 0
        assert not any(alive(pid) for pid in [pids[1], new])
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", gateway.port), timeout=WAIT).close()
    finally:
        gateway.stop()


def test_one_process_drains_a_stream_on_sigterm(upstream: Upstream) -> None:
    gateway = Gateway(upstream.up.url, free_port(), 1)
    try:
        gateway.expect(r"toolbridge gateway on http://")
        with gateway.client() as c:
            stream = c.chat.completions.create(model="m", messages=USER, stream=True)
            pieces = [next(stream).choices[0].delta.content or ""]
            gateway.proc.send_signal(signal.SIGTERM)
            gateway.expect(r"stopping: no new connections")
            with pytest.raises(openai.APIConnectionError):  # no longer accepting
                c.chat.completions.create(model="m", messages=USER)
            pieces += [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
        assert "".join(pieces) == SLOW
        assert gateway.proc.wait(WAIT) == 0
    finally:
        gateway.stop()


def test_a_worker_that_cannot_start_backs_off(upstream: Upstream) -> None:
    """The port is held without SO_REUSEPORT, so every worker dies at once on start: the master
    keeps serving its slots, each restart later than the one before."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        gateway = Gateway(upstream.up.url, held.getsockname()[1], 1 + 1)
        try:
            deaths = gateway.expect(r"worker 0 \(pid \d+\) died \(exit status 1\); restarting it in ([\d.]+) s", 4)
            assert [float(m[1]) for m in deaths] == [restart_delay(n) for n in range(1, 5)] == [0.0, 0.5, 1.0, 2.0]
            assert gateway.proc.poll() is None  # the master does not give up
            gateway.proc.send_signal(signal.SIGTERM)
            assert gateway.proc.wait(WAIT) == 0
        finally:
            gateway.stop()


def test_the_restart_delay_doubles_up_to_its_cap() -> None:
    delays = [restart_delay(n) for n in range(1, 12)]
    assert delays[:3] == [0.0, FIRST_DELAY, 2 * FIRST_DELAY]
    assert all(b == min(2 * a, MAX_DELAY) for a, b in zip(delays[1:], delays[2:]))
    assert max(delays) == MAX_DELAY == restart_delay(1000)


def test_sockets_continue_on_whichever_worker_took_them(upstream: Upstream) -> None:
    """With two workers each socket's turns stay on the worker that accepted it: a response held
    with ``store: false`` is continued on every socket (over HTTP, half of such continuations
    would miss it on the other worker)."""
    from websockets.sync.client import connect

    upstream.up.script = lambda b: Reply(content="fine")
    gateway = Gateway(upstream.up.url, free_port(), 2)
    try:
        started(gateway, 2)
        url = f"ws://127.0.0.1:{gateway.port}/v1/responses"
        with ExitStack() as opened:
            sockets = [opened.enter_context(connect(url)) for _ in range(6)]
            for ws in sockets:
                rid = _socket_turn(ws, {"input": "one"})["response"]["id"]
                last = _socket_turn(ws, {"input": "two", "previous_response_id": rid})
                assert last["type"] == "response.completed", last
    finally:
        gateway.stop()


def _socket_turn(ws: Any, fields: dict[str, Any]) -> dict[str, Any]:
    import json

    ws.send(json.dumps({"type": "response.create", "model": "m", "store": False, **fields}))
    while True:
        event = json.loads(ws.recv(timeout=WAIT))
        if event["type"] in ("response.completed", "response.failed", "error"):
            return event  # type: ignore[no-any-return]
