"""Conversations that go on across processes, over real HTTP with the openai SDK: ``python -m
toolbridge serve --workers 4`` (the default store: a SQLite file the workers share), and two
separate ``serve`` processes on two ports sharing one real Valkey/Redis server started here
(``state_server``; skipped, saying why, where none can be had). Each loop is three turns chained
by ``previous_response_id`` (the second streamed, the third naming the first's output by
``item_reference``), then ``GET``, ``input_items`` and ``DELETE`` (and, across the workers, a
Messages thread of six turns); every request on a new
connection (so the kernel spreads them over the workers), the turns alternating between the
gateways. Then the store goes down mid-run (the Redis server killed, the SQLite file made
read-only): what needs it is a 503 ``store_unavailable`` naming the store, in each front's shape,
stateless requests go on, ``/health`` says it, and service resumes when the store is back;
on a WebSocket, the same as error messages, the socket's own ``store: false`` response going on.
The gateways' log lines are the synchronisation."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import urllib.error
import urllib.request

import openai
import pytest

from tests.gateway.state_server import Server, free_port, need_server
from tests.gateway.test_workers import Upstream
from toolbridge.gateway.replay.upstream import Reply

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # seconds: a bound on each step (to fail, not to pace)
SECRET = "a-secret-both-gateways-share"


def echo(body: dict[str, Any]) -> Reply:
    """The upstream's script: it answers with what it was sent (the number of messages and the
    user's last words)."""
    return Reply(content=f"seen {len(body['messages'])}: {body['messages'][-1].get('content')}")


class Gateway:
    """``python -m toolbridge serve`` as a process, its standard error read line by line."""

    def __init__(self, upstream: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolbridge", "serve", "--upstream", upstream, "--port", str(self.port),
             "--tool-call-parser", "hermes", "--graceful-timeout", "5", *args],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        workers = int(args[args.index("--workers") + 1]) if "--workers" in args else 1
        self.expect(r"toolbridge gateway on http://", workers)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.proc.stderr.close()

    def expect(self, pattern: str, count: int = 1) -> None:
        found = 0
        while found < count:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no line {pattern!r} in:\n{''.join(self.log)}") from None
            self.log.append(line)
            found += re.search(pattern, line) is not None

    def client(self) -> openai.OpenAI:
        """A client whose every request is on a new connection (``connection: close``)."""
        return openai.OpenAI(base_url=f"http://127.0.0.1:{self.port}/v1", api_key="k", max_retries=0,
                             default_headers={"connection": "close"})

    def get(self, path: str) -> Any:
        """The JSON (or text) a GET answers."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=WAIT) as answer:
            raw = answer.read().decode()
        return json.loads(raw) if raw.startswith("{") else raw

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and JSON of a POST."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", json.dumps(body).encode(),
                                         {"content-type": "application/json", "x-api-key": "k"})
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            with error:
                return error.code, json.loads(error.read())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(WAIT)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    up = Upstream(echo)
    yield up
    up.close()


def loop(a: openai.OpenAI, b: openai.OpenAI, upstream: Upstream, n: int) -> None:
    """One conversation of three turns, its turns alternating between ``a`` and ``b``."""
    r1 = a.responses.create(model="m", input=f"hi {n}")
    with b.responses.create(model="m", input=f"more {n}", previous_response_id=r1.id, stream=True) as events:
        r2 = [e.response for e in events if e.type == "response.completed"][0]
    assert r2.output_text == f"seen 3: more {n}"
    reference = {"type": "item_reference", "id": r1.output[0].id}
    r3 = a.responses.create(model="m", previous_response_id=r2.id,
                            input=[reference, {"role": "user", "content": f"last {n}"}])  # type: ignore[list-item]
    sent = upstream.up.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [f"hi {n}", f"more {n}", f"last {n}"]
    assert sent[-2] == {"role": "assistant", "content": f"seen 1: hi {n}"}  # the item r1's output named
    assert b.responses.retrieve(r3.id).output_text == r3.output_text
    items = a.responses.input_items.list(r3.id, order="asc")
    assert [item.type for item in items.data] == ["message", "message"] and items.data[0].id == r1.output[0].id
    assert b.responses.delete(r1.id) is None
    with pytest.raises(openai.NotFoundError):
        a.responses.retrieve(r1.id)
    assert a.responses.retrieve(r2.id).id == r2.id


def loops(a: openai.OpenAI, b: openai.OpenAI, upstream: Upstream, count: int) -> None:
    for n in range(count):
        loop(a, b, upstream, n)


def thread(gateway: Gateway, upstream: Upstream, turns: int) -> None:
    """A Messages thread of ``turns`` turns, each continuing the last answer."""
    body: dict[str, Any] = {"model": "m", "max_tokens": 9, "thread": {"type": "create"}, "system": "S",
                            "messages": [{"role": "user", "content": "t0"}]}
    for n in range(1, turns + 1):
        status, answer = gateway.post("/v1/messages", body)
        assert status == 200, answer
        sent = upstream.up.requests[-1]["messages"]
        assert [m["content"] for m in sent if m["role"] == "user"] == [f"t{k}" for k in range(n)]
        body = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": f"t{n}"}],
                "thread": {"type": "continue", "previous_message_id": answer["id"]}}


def test_workers_share_the_default_sqlite_store(upstream: Upstream, tmp_path: Path) -> None:
    gateway = Gateway(upstream.up.url, "--workers", "4", env={"XDG_RUNTIME_DIR": str(tmp_path)})
    try:
        loops(gateway.client(), gateway.client(), upstream, 12)
        thread(gateway, upstream, 6)
        health = gateway.get("/health")
        assert health["store"] == {"backend": "sqlite", "up": True}
        assert (tmp_path / "toolbridge" / f"state-{gateway.port}.sqlite3").exists()
    finally:
        gateway.stop()


@pytest.mark.check
def test_a_hundred_loops_across_four_workers_none_lost(upstream: Upstream, tmp_path: Path) -> None:
    gateway = Gateway(upstream.up.url, "--workers", "4", env={"XDG_RUNTIME_DIR": str(tmp_path)})
    try:
        loops(gateway.client(), gateway.client(), upstream, 100)
    finally:
        gateway.stop()


@pytest.fixture
def redis_server() -> Iterator[Server]:
    server = Server(need_server()).start()
    yield server
    server.kill()


def two_gateways(upstream: Upstream, server: Server) -> tuple[Gateway, Gateway]:
    args = ("--state", server.url, "--responses-secret", SECRET)
    return Gateway(upstream.up.url, *args), Gateway(upstream.up.url, *args)


def test_two_gateways_share_one_redis_server(upstream: Upstream, redis_server: Server) -> None:
    a, b = two_gateways(upstream, redis_server)
    try:
        loops(a.client(), b.client(), upstream, 12)
        assert a.get("/health")["store"] == {"backend": "redis", "up": True}
        assert re.search(r"^toolbridge_store_stored_total 12$", b.get("/metrics"), re.M)  # the streamed turns
        assert re.search(r"^toolbridge_store_misses_total 12$", a.get("/metrics"), re.M)  # the GETs after DELETE
    finally:
        a.stop()
        b.stop()


@pytest.mark.check
def test_a_hundred_loops_across_two_gateways_none_lost(upstream: Upstream, redis_server: Server) -> None:
    a, b = two_gateways(upstream, redis_server)
    try:
        loops(a.client(), b.client(), upstream, 100)
    finally:
        a.stop()
        b.stop()


def down(error: openai.APIStatusError, name: str) -> None:
    """A 503 store_unavailable in the OpenAI shape, naming the store."""
    body = error.response.json()["error"]
    assert (error.status_code, body["code"], body["type"]) == (503, "store_unavailable", "server_error")
    assert name in body["message"]


def stateless_requests_go_on(c: openai.OpenAI, gateway: Gateway) -> None:
    whole = c.responses.create(model="m", input=[{"role": "user", "content": "a"},
                                                 {"role": "assistant", "content": "b"},
                                                 {"role": "user", "content": "c"}], store=False)
    assert whole.output_text == "seen 3: c"
    with c.responses.create(model="m", input="d", store=False, stream=True) as events:
        assert [e.type for e in events][-1] == "response.completed"
    chat = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "e"}])
    assert chat.choices[0].message.content == "seen 1: e"
    status, _ = gateway.post("/v1/messages", {"model": "m", "max_tokens": 9,
                                              "messages": [{"role": "user", "content": "f"}]})
    assert status == 200


def the_store_is_down(c: openai.OpenAI, gateway: Gateway, kept: str, name: str) -> None:
    """Every request that needs the store is the 503 naming it; the rest go on."""
    with pytest.raises(openai.APIStatusError) as stored:
        c.responses.create(model="m", input="x")
    down(stored.value, name)
    with pytest.raises(openai.APIStatusError) as streamed:
        with c.responses.create(model="m", input="x", stream=True) as events:
            list(events)
    down(streamed.value, name)
    with pytest.raises(openai.APIStatusError) as read:
        c.responses.retrieve(kept)
    down(read.value, name)
    status, threaded = gateway.post("/v1/messages", {"model": "m", "max_tokens": 9, "thread": {"type": "create"},
                                                     "messages": [{"role": "user", "content": "t"}]})
    assert status == 503  # the Messages shape
    assert threaded["type"] == "error" and threaded["error"]["type"] == "api_error"
    assert name in threaded["error"]["message"]
    stateless_requests_go_on(c, gateway)
    assert gateway.get("/health")["store"]["up"] is False


def test_the_redis_server_killed_mid_run_then_back(upstream: Upstream, redis_server: Server) -> None:
    a, b = two_gateways(upstream, redis_server)
    try:
        ca, cb = a.client(), b.client()
        loop(ca, cb, upstream, 0)
        kept = ca.responses.create(model="m", input="kept").id
        redis_server.kill()
        name = f"redis://127.0.0.1:{redis_server.port}/0"
        the_store_is_down(ca, a, kept, name)
        the_store_is_down(cb, b, kept, name)
        assert re.search(r"^toolbridge_store_errors_total [1-9]", a.get("/metrics"), re.M)
        redis_server.start()  # the same port, empty (nothing was persisted)
        with pytest.raises(openai.NotFoundError):
            cb.responses.retrieve(kept)
        loop(ca, cb, upstream, 1)
        assert b.get("/health")["store"]["up"] is True
    finally:
        a.stop()
        b.stop()


def test_the_sqlite_file_made_read_only_mid_run_then_writable(upstream: Upstream, tmp_path: Path) -> None:
    gateway = Gateway(upstream.up.url, "--workers", "2", env={"XDG_RUNTIME_DIR": str(tmp_path)})
    path = tmp_path / "toolbridge" / f"state-{gateway.port}.sqlite3"
    try:
        c = gateway.client()
        loop(c, c, upstream, 0)
        kept = c.responses.create(model="m", input="kept")
        os.chmod(path, 0o444)
        with pytest.raises(openai.APIStatusError) as stored:
            c.responses.create(model="m", input="x")
        down(stored.value, str(path))
        assert "read-only" in stored.value.response.json()["error"]["message"]
        # Reading goes on: a GET, and a continuation that is not stored.
        assert c.responses.retrieve(kept.id).id == kept.id
        follow = c.responses.create(model="m", input="y", previous_response_id=kept.id, store=False)
        assert follow.output_text == "seen 3: y"
        stateless_requests_go_on(c, gateway)
        assert gateway.get("/health")["store"]["up"] is False
        os.chmod(path, 0o600)
        loop(c, c, upstream, 1)
        assert gateway.get("/health")["store"]["up"] is True
    finally:
        gateway.stop()


# ---------------------------------------------------------------- the Responses API over WebSocket


def socket_turn(ws: Any, **body: Any) -> dict[str, Any]:
    """One ``response.create`` on a socket: its last message (the terminal event or an error)."""
    ws.send(json.dumps({"type": "response.create", "model": "m", **body}))
    while True:
        event = json.loads(ws.recv(timeout=WAIT))
        if event["type"] in ("response.completed", "response.failed") or event["type"] == "error":
            return event


def socket_down(event: dict[str, Any], name: str) -> None:
    """The socket's error message for a store that does not answer, naming it."""
    assert event["type"] == "error" and event["status"] == 503, event
    assert (event["error"]["code"], event["error"]["type"]) == ("store_unavailable", "server_error")
    assert name in event["error"]["message"]


def test_sockets_use_the_shared_store_and_hold_their_own(upstream: Upstream, redis_server: Server) -> None:
    """``store: true`` on a socket of one gateway is continued over HTTP on another; with the
    store down a socket's stored turns and prewarms are error messages, while the socket goes on
    serving, and its ``store: false`` response (held by the socket, never asked of the store)
    goes on continuing; the store back, the same socket stores again."""
    from websockets.sync.client import connect

    a, b = two_gateways(upstream, redis_server)
    name = f"redis://127.0.0.1:{redis_server.port}/0"
    try:
        cb = b.client()
        with connect(f"ws://127.0.0.1:{a.port}/v1/responses", additional_headers={"authorization": "Bearer k"}) as ws:
            stored = socket_turn(ws, input="one")["response"]
            assert cb.responses.create(model="m", input="two", previous_response_id=stored["id"]).output_text \
                == "seen 3: two"
            held = socket_turn(ws, input="three", store=False)["response"]
            redis_server.kill()
            socket_down(socket_turn(ws, input="x"), name)
            socket_down(socket_turn(ws, input="x", previous_response_id=stored["id"], store=False), name)
            socket_down(socket_turn(ws, input="x", generate=False), name)
            follow = socket_turn(ws, input="four", previous_response_id=held["id"], store=False)
            assert follow["type"] == "response.completed", follow
            assert follow["response"]["output"][0]["content"][0]["text"] == "seen 3: four"
            redis_server.start()
            again = socket_turn(ws, input="five")["response"]
        assert cb.responses.retrieve(again["id"]).output_text == "seen 1: five"
        with pytest.raises(openai.NotFoundError):  # held by the socket alone, never stored
            cb.responses.retrieve(held["id"])
    finally:
        a.stop()
        b.stop()
