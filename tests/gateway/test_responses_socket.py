"""The Responses API over WebSocket (``GET /v1/responses`` upgraded), over real loopback sockets:
the openai SDK's own client (``client.responses.connect()``) and websockets' client for raw
frames, against a real upstream HTTP server (``replay``). A turn's messages are the SSE events of
the same request over HTTP, one JSON object per message; continuation, prewarm, errors in band,
refusals (401 before the upgrade, 426), limits, disconnects and leaks."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.gateway.test_responses import KINDS, PARIS, TOOLS, USER, agent, answer, apply_patch, parser
from tests.gateway.test_responses_stream import check_events, sse
from toolbridge.gateway.fronts.responses.socket import FrameResponse, ResponsesSocket, sse_messages
from toolbridge.gateway.http.websocket import WebSocket
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")
websockets = pytest.importorskip("websockets")
from websockets.client import ClientProtocol  # noqa: E402
from websockets.frames import Close, Opcode  # noqa: E402
from websockets.server import ServerProtocol  # noqa: E402
from websockets.sync.client import connect  # noqa: E402
from websockets.uri import parse_uri  # noqa: E402

LAST = {"response.completed", "response.incomplete", "response.failed"}
FAR = 20.0  # seconds a test waits for what must come (never what it needs to pass quickly)


def ws_url(s: Stack) -> str:
    return s.url.replace("http://", "ws://") + "/responses"


def turn(ws: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Send one ``response.create`` and read its messages up to the last (or an error message)."""
    ws.send(json.dumps({"type": "response.create", **body}))
    out = []
    while True:
        event = json.loads(ws.recv(timeout=FAR))
        out.append(event)
        if event["type"] in LAST or (event["type"] == "error" and "status" in event):
            return out


def body(**kw: Any) -> dict[str, Any]:
    return {"model": "m", "input": USER, "tools": TOOLS, **kw}


_GENERATED = re.compile(r"^(resp|msg|rs|fc|ctc|call|cmp)_[A-Za-z0-9_-]{6,}$")


def normal(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events with the generated ids (numbered by first appearance), times and seals blanked."""
    names: dict[str, str] = {}

    def walk(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if key in ("created_at", "completed_at"):
            return 0
        if key == "encrypted_content":
            return "sealed"
        if isinstance(value, str) and _GENERATED.match(value):
            return names.setdefault(value, f"id{len(names)}")
        return value

    return [walk(e) for e in events]


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with Stack(agent("hermes"), tool_call_parser="hermes") as s:
        yield s


# ---------------------------------------------------------------- one code path


@pytest.mark.parametrize(("sse_bytes", "messages"), [
    (b'event: a\ndata: {"n":1}\n\n', [b'{"n":1}']),
    (b'event: a\ndata: {"n":1}\n\nevent: b\ndata: {"n":2}\n\n', [b'{"n":1}', b'{"n":2}']),
    (b": keep-alive\n\n", []),  # a comment is no message
    (b'event: a\ndata: {"n":1}\n\n: keep-alive\n\ndata: {"n":3}\n\n', [b'{"n":1}', b'{"n":3}']),
    (b'data: {"s":"data: x"}\n\n', [b'{"s":"data: x"}']),  # (the words inside a string are not a line)
    (b'data: {"n":1}', [b'{"n":1}']),  # (the last event without its blank line)
    (b"", []),
])
def test_the_messages_of_sse_events(sse_bytes: bytes, messages: list[bytes]) -> None:
    assert sse_messages(sse_bytes) == messages


def test_a_turn_counts_its_events_as_over_http(stack: Stack) -> None:
    """``toolbridge_streamed_chunks_total`` grows by as much for a turn on the socket (whose
    stream writes lines of JSON, not SSE) as for the same request over HTTP."""
    from tests.gateway.test_invalid_policy import metric

    name = "toolbridge_streamed_chunks_total"
    stack.upstream.script = lambda b: Reply(content="word " * 30, chunk=4)
    before = metric(stack, name)
    sse(stack, body())
    over_http = metric(stack, name) - before
    with connect(ws_url(stack)) as ws:
        turn(ws, body())
    assert over_http > 10 and metric(stack, name) - before == 2 * over_http


@pytest.mark.parametrize("kind", KINDS)
def test_a_turn_is_the_sse_stream_of_the_same_request(kind: str) -> None:
    """Reasoning, text and a call in each dialect, and a custom tool: the socket's messages are
    the SSE events, same objects in the same order."""
    requests = [body(include=["reasoning.encrypted_content"]),
                body(tools=[apply_patch()], input="Add hello.txt")]
    patch = "*** Begin Patch\n*** Add File: hello.txt\n+Hello\n*** End Patch\n"

    def script(b: dict[str, Any]) -> Reply:
        if b.get("tools") and b["tools"][0]["function"]["name"] == "apply_patch":
            return answer(kind, [("apply_patch", {"input": patch})])
        return answer(kind, [("get_weather", PARIS)])

    with Stack(script, tool_call_parser=parser(kind)) as s, connect(ws_url(s)) as ws:
        for request in requests:
            over_http = sse(s, request)
            over_socket = turn(ws, request)
            check_events(over_socket)
            assert normal(over_socket) == normal(over_http)


@pytest.mark.parametrize("summary", ["TASK: ship it.", ""])
def test_a_compaction_turn_is_the_sse_stream_of_the_same_request(summary: str) -> None:
    """Codex's ``compaction_trigger`` on a socket: the summary's events (its own stream, written
    as lines for the socket), or an empty summary's ``error`` and ``response.failed``, are
    those of the same request over HTTP."""
    from tests.gateway.test_responses_compaction import HISTORY, TRIGGER, script

    request = {"model": "m", "input": [*HISTORY, TRIGGER], "store": False}
    with Stack(script(summary), tool_call_parser="hermes") as s, connect(ws_url(s)) as ws:
        over_http = sse(s, request)
        over_socket = turn(ws, request)
    last = "response.completed" if summary else "response.failed"
    assert over_socket[-1]["type"] == last and len(over_socket) > 2
    assert normal(over_socket) == normal(over_http)


def test_the_sdk_client_runs_a_tool_loop_on_one_socket(stack: Stack) -> None:
    """``client.responses.connect()``: turns in sequence on one socket, each continuing the last
    with only its new items (``store: false``: the socket holds the previous response)."""
    stack.upstream.script = agent("hermes")
    before = len(stack.upstream.requests)
    with stack.client().responses.connect() as conn:
        conn.response.create(model="m", input=USER, tools=TOOLS, store=False)
        first = _last(conn)
        call = next(o for o in first.output if o.type == "function_call")
        assert (call.name, json.loads(call.arguments)) == ("get_weather", PARIS)
        conn.response.create(model="m", previous_response_id=first.id, tools=TOOLS, store=False, input=[
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
        second = _last(conn)
    assert second.status == "completed" and "sunny" in second.output_text
    sent = stack.upstream.requests[before + 1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"] and sent[2]["content"] == "sunny"


def _last(conn: Any) -> Any:
    for event in conn:
        assert event.type != "error", event
        if event.type in LAST:
            return event.response
    raise AssertionError("the socket closed before the last event")


# ---------------------------------------------------------------- continuation and prewarm


def test_store_false_is_held_for_its_socket_alone(stack: Stack) -> None:
    stack.upstream.script = lambda b: Reply(content="noted")
    with connect(ws_url(stack)) as ws, connect(ws_url(stack)) as other:
        first = turn(ws, body(store=False))[-1]["response"]
        rid = first["id"]
        for where in (other, ws):  # another socket, then this one (an older response is gone too)
            error = turn(where, body(store=False, previous_response_id=rid if where is other else "resp_x"))[-1]
            assert error["status"] == 400 and error["error"]["code"] == "previous_response_not_found"
        with stack.client() as c, pytest.raises(openai.BadRequestError):
            c.responses.create(model="m", input="and?", previous_response_id=rid)
        with stack.client() as c, pytest.raises(openai.NotFoundError):
            c.responses.retrieve(rid)
        again = turn(ws, body(store=False, previous_response_id=rid, input="and?"))[-1]
        assert again["type"] == "response.completed"
    assert [m["content"] for m in stack.upstream.requests[-1]["messages"]] == [USER, "noted", "and?"]


@pytest.mark.parametrize("failure", ["refused", "upstream"])
def test_a_failed_continuation_evicts_the_held_response(stack: Stack, failure: str) -> None:
    """As the API does: a turn that continued the held response and failed (refused, or the
    upstream's error) drops it, so the next turn naming it is previous_response_not_found; a
    failure that did not name it leaves it held."""
    with connect(ws_url(stack)) as ws:
        stack.upstream.script = lambda b: Reply(content="noted")
        rid = turn(ws, body(store=False))[-1]["response"]["id"]
        unrelated = turn(ws, body(store=False, tools=7))[-1]  # fails, naming no previous response
        assert unrelated["status"] == 400
        if failure == "refused":  # a result for a call the conversation never made
            bad = [{"type": "function_call_output", "call_id": "call_missing", "output": "?"}]
            failed = turn(ws, body(store=False, previous_response_id=rid, input=bad))[-1]
        else:
            stack.upstream.script = lambda b: Reply(status=500, error="boom")
            failed = turn(ws, body(store=False, previous_response_id=rid, input="and?"))[-1]
        assert failed["type"] == "error" and failed["status"] >= 400, failed
        stack.upstream.script = lambda b: Reply(content="stale")
        again = turn(ws, body(store=False, previous_response_id=rid, input="and?"))[-1]
        assert again["type"] == "error" and again["error"]["code"] == "previous_response_not_found", again


def test_store_true_behaves_as_over_http(stack: Stack) -> None:
    stack.upstream.script = lambda b: Reply(content="kept")
    with connect(ws_url(stack), additional_headers={"authorization": "Bearer sk-test"}) as ws:  # (the SDK's key)
        rid = turn(ws, body())[-1]["response"]["id"]
    with stack.client() as c:
        assert c.responses.retrieve(rid).output_text == "kept"
        c.responses.create(model="m", input="more", previous_response_id=rid)
    assert [m["content"] for m in stack.upstream.requests[-1]["messages"]] == [USER, "kept", "more"]


@pytest.mark.parametrize("store", [False, True])
def test_generate_false_prepares_a_turn_without_the_upstream(stack: Stack, store: bool) -> None:
    stack.upstream.script = lambda b: Reply(content="ready")
    before = len(stack.upstream.requests)
    with connect(ws_url(stack)) as ws:
        events = turn(ws, body(generate=False, store=store, instructions="Be brief."))
        assert [e["type"] for e in events] == ["response.created", "response.completed"]
        assert [e["sequence_number"] for e in events] == [0, 1]
        done = events[-1]["response"]
        assert done["output"] == [] and done["status"] == "completed" and done["id"].startswith("resp_")
        assert len(stack.upstream.requests) == before
        last = turn(ws, body(previous_response_id=done["id"], input="go", store=store))[-1]
    assert last["type"] == "response.completed" and last["response"]["output"][0]["content"][0]["text"] == "ready"
    sent = stack.upstream.requests[-1]["messages"]
    assert [m["content"] for m in sent] == [USER, "go"]  # (instructions are not carried over, as over HTTP)


# ---------------------------------------------------------------- errors in band


def test_errors_are_messages_and_the_socket_stays_usable(stack: Stack) -> None:
    with connect(ws_url(stack)) as ws:
        for sent, code in [("{not json", "invalid_json"), ("[1, 2]", "invalid_json"),
                           ('{"type": "session.update"}', "unknown_event_type")]:
            ws.send(sent)
            error = json.loads(ws.recv(timeout=FAR))
            assert error["type"] == "error" and error["status"] == 400 and error["error"]["code"] == code
            assert set(error["error"]) == {"type", "code", "message", "param"}
        ws.send(b"\x00binary")
        assert json.loads(ws.recv(timeout=FAR))["error"]["code"] == "invalid_message"
        refused = turn(ws, {"input": USER, "model": 7})[-1]  # what the HTTP front refuses
        assert refused["status"] == 400 and refused["error"]["param"] == "model"
        refused = turn(ws, body(background=True))[-1]
        assert refused["status"] == 400 and refused["error"]["param"] == "background"
        stack.upstream.script = lambda b: Reply(status=503, error="the model is loading")
        failed = turn(ws, body())[-1]
        assert failed["status"] == 503 and "loading" in failed["error"]["message"]
        stack.upstream.script = lambda b: Reply(content="fine")
        assert turn(ws, body())[-1]["type"] == "response.completed"


def test_a_failure_after_the_stream_began_ends_it_as_over_http(stack: Stack) -> None:
    stack.upstream.script = lambda b: Reply(content="a long answer cut short", cut_after=2)
    with connect(ws_url(stack)) as ws:
        events = turn(ws, body())
        assert [e["type"] for e in events[-2:]] == ["error", "response.failed"]
        stack.upstream.script = lambda b: Reply(content="fine")
        assert turn(ws, body())[-1]["type"] == "response.completed"


def test_one_turn_at_a_time(stack: Stack) -> None:
    hold = threading.Event()
    stack.upstream.script = lambda b: Reply(content="slowly, then all", hold=hold)
    with connect(ws_url(stack)) as ws:
        ws.send(json.dumps({"type": "response.create", **body()}))
        assert json.loads(ws.recv(timeout=FAR))["type"] == "response.created"
        ws.send(json.dumps({"type": "response.create", **body()}))
        events = []
        while not events or events[-1]["type"] != "error":
            events.append(json.loads(ws.recv(timeout=FAR)))
        assert events[-1]["error"]["code"] == "response_in_progress"
        hold.set()
        while events[-1]["type"] not in LAST:
            events.append(json.loads(ws.recv(timeout=FAR)))
        assert events[-1]["type"] == "response.completed"


# ---------------------------------------------------------------- the handshake


def handshake(s: Stack, path: str = "/v1/responses", extra: bytes = b"") -> tuple[int, bytes, dict[str, str]]:
    """A raw upgrade request: the status, body and header fields of the answer."""
    port = s.gateway.server.port  # type: ignore[union-attr]
    with socket.create_connection(("127.0.0.1", port), timeout=FAR) as sock:
        sock.sendall(b"GET %b HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade\r\nupgrade: websocket\r\n"
                     b"sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n%b\r\n"
                     % (path.encode(), extra))
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        fields = dict(line.lower().split(": ", 1) for line in lines[1:])
        while len(rest) < int(fields.get("content-length", 0)):
            rest += sock.recv(65536)
    return int(lines[0].split()[1]), rest, fields


def test_other_paths_and_no_websockets_get_426_with_a_json_body(stack: Stack) -> None:
    for path in ("/v1/chat/completions", "/v1/responses/resp_1", "/elsewhere"):
        status, data, fields = handshake(stack, path)
        assert status == 426 and json.loads(data)["error"]["code"] == "426" and fields["connection"] == "close"
    with Stack(agent("hermes"), websockets=False) as off:
        status, data, _ = handshake(off)
        assert status == 426 and "--no-websockets" in json.loads(data)["error"]["message"]


def test_auth_comes_before_the_upgrade() -> None:
    with Stack(lambda b: Reply(content="hi"), api_key="secret") as s:
        for extra in (b"", b"authorization: Bearer wrong\r\n"):
            status, data, _ = handshake(s, extra=extra)
            assert status == 401 and json.loads(data)["error"]["code"] == "invalid_api_key"
        with s.client(api_key="secret").responses.connect() as conn:
            conn.response.create(model="m", input=USER)
            assert _last(conn).output_text == "hi"


@pytest.mark.parametrize("deflate", [True, False])
def test_permessage_deflate_is_accepted_unless_turned_off(deflate: bool) -> None:
    """Accepted when offered, without asking the client to drop its context between messages;
    declined with ``--no-websocket-deflate`` (the client then sends and reads plain frames); a
    turn works either way, and a second one (the client's compressor kept its context)."""
    with Stack(lambda b: Reply(content="squeezed " * 50), websocket_deflate=deflate) as s, \
            connect(ws_url(s)) as ws:  # (websockets' client offers it)
        accepted = ws.response.headers.get("sec-websocket-extensions") or ""
        assert ("permessage-deflate" in accepted) is deflate and "no_context_takeover" not in accepted
        for _ in range(2):
            assert turn(ws, body())[-1]["response"]["output"][0]["content"][0]["text"] == "squeezed " * 50


def test_small_messages_go_raw_and_large_ones_compressed(stack: Stack) -> None:
    """With permessage-deflate, a message under ``RAW_BELOW`` bytes (a delta) is sent as it is
    (RSV1 unset) and a larger one (the response object holding a long text) compressed; the
    client reads both, and a second answer on the socket too (its own compression context)."""
    from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory, PerMessageDeflate

    from toolbridge.gateway.http.websocket import RAW_BELOW

    seen: list[tuple[bool, int]] = []  # (compressed, bytes once read) of each text message

    class Recording(PerMessageDeflate):
        def decode(self, frame: Any, *, max_size: int | None = None) -> Any:
            plain = super().decode(frame, max_size=max_size)
            seen.append((frame.rsv1, len(plain.data)))
            return plain

    class Factory(ClientPerMessageDeflateFactory):
        def process_response_params(self, params: Any, accepted: Any) -> Any:
            extension = super().process_response_params(params, accepted)
            extension.__class__ = Recording
            return extension

    stack.upstream.script = lambda b: Reply(content="squeezed " * 800, chunk=40)
    port = stack.gateway.server.port  # type: ignore[union-attr]
    client = ClientProtocol(parse_uri(ws_url(stack)), max_size=None, extensions=[Factory()])
    client.send_request(client.connect())
    with socket.create_connection(("127.0.0.1", port), timeout=FAR) as sock:
        sock.sendall(b"".join(client.data_to_send()))
        while client.state.name == "CONNECTING":
            client.receive_data(sock.recv(65536))
        client.events_received()
        for _ in range(2):
            seen.clear()
            client.send_text(json.dumps({"type": "response.create", **body()}).encode())
            sock.sendall(b"".join(client.data_to_send()))
            last: dict[str, Any] = {}
            while last.get("type") not in LAST:
                client.receive_data(sock.recv(65536))
                for frame in client.events_received():
                    last = json.loads(frame.data)
            assert last["response"]["output"][0]["content"][0]["text"] == "squeezed " * 800
            assert all(compressed == (size >= RAW_BELOW) for compressed, size in seen), seen
            assert any(c for c, _ in seen) and any(not c for c, _ in seen)


def test_a_broken_handshake_is_400(stack: Stack) -> None:
    status, data, _ = handshake(stack, extra=b"sec-websocket-version: 8\r\n")
    assert status == 400 and json.loads(data)["error"]["code"] == "invalid_websocket_handshake"


# ---------------------------------------------------------------- protocol violations and limits


def raw(s: Stack, send: Any) -> Close:
    """Open a socket with websockets' sans-I/O client, send what ``send(client)`` gives (bytes),
    and return the close frame the server ends with."""
    port = s.gateway.server.port  # type: ignore[union-attr]
    client = ClientProtocol(parse_uri(ws_url(s)), max_size=None)
    client.send_request(client.connect())
    with socket.create_connection(("127.0.0.1", port), timeout=FAR) as sock:
        sock.sendall(b"".join(client.data_to_send()))
        while client.handshake_exc is None and client.state.name == "CONNECTING":
            client.receive_data(sock.recv(65536))
        client.events_received()
        sock.sendall(send(client))
        while True:
            data = sock.recv(65536)
            if not data:
                raise AssertionError("closed without a close frame")
            client.receive_data(data)
            for frame in client.events_received():
                if frame.opcode is Opcode.CLOSE:
                    return Close.parse(frame.data)


def _text(data: bytes) -> Any:
    def make(client: ClientProtocol) -> bytes:
        client.send_text(data)
        return b"".join(client.data_to_send())
    return make


def test_protocol_violations_close_with_their_code(stack: Stack) -> None:
    assert raw(stack, _text(b'{"type": "\xff"}')).code == 1007
    assert raw(stack, lambda client: b"\x81\x05hello").code == 1002  # a client frame must be masked


def test_a_message_above_the_limit_closes_with_1009() -> None:
    with Stack(agent("hermes"), max_body=4096) as s:
        assert raw(s, _text(b'{"type": "response.create", "input": "%b"}' % (b"x" * 5000))).code == 1009


def test_idle_and_lifetime_limits_close_with_a_reason() -> None:
    for config, code in [({"websocket_idle_timeout": 0.3}, "websocket_idle_timeout"),
                         ({"websocket_lifetime": 0.3}, "websocket_connection_limit_reached")]:
        with Stack(agent("hermes"), **config) as s, connect(ws_url(s)) as ws:
            farewell = json.loads(ws.recv(timeout=FAR))
            assert farewell["type"] == "error" and farewell["error"]["code"] == code
            with pytest.raises(websockets.ConnectionClosed) as closed:
                ws.recv(timeout=FAR)
            assert closed.value.rcvd.code == 1001 and closed.value.rcvd.reason


# ---------------------------------------------------------------- disconnects and leaks


def test_a_socket_closed_mid_answer_stops_the_upstream() -> None:
    """At once, while the upstream is silent (nothing written that would find the socket gone):
    the turn's task ends, and with it the upstream exchange, long before the upstream would
    answer."""
    with Stack(lambda b: Reply(content="late", delay=120)) as s:
        before = resources(s)
        with connect(ws_url(s)) as ws:
            ws.send(json.dumps({"type": "response.create", **body()}))
            deadline = time.monotonic() + FAR
            while not s.upstream.requests and time.monotonic() < deadline:
                time.sleep(0.01)  # (polling for the request to reach the upstream)
            assert s.upstream.requests and resources(s)[0] > before[0]  # the turn runs, upstream silent
        # (fds may fall below the start's: the model list's fetch at start closes its connection)
        while not settled(resources(s), before) and time.monotonic() < deadline + FAR:
            time.sleep(0.01)
        assert settled(resources(s), before), (resources(s), before)


def settled(now: tuple[int, int, int], before: tuple[int, int, int]) -> bool:
    """Tasks and socket objects back to what they were, fds no more."""
    return now[0] == before[0] and now[1] <= before[1] and now[2] == before[2]


def open_and_close(s: Stack, count: int) -> None:
    """``count`` sockets opened and closed: most idle, one in ten closed mid-answer, one in ten
    after a whole turn with ``store: false`` (its held response)."""
    for i in range(count):
        # (max_queue: the client's own flow control would stop its reading of an answer not read)
        with connect(ws_url(s), compression=None if i % 2 else "deflate", max_queue=None) as ws:
            if i % 10 == 0:
                turn(ws, body(store=False))
            elif i % 10 == 1:
                ws.send(json.dumps({"type": "response.create", **body()}))
                ws.recv(timeout=FAR)


def resources(s: Stack) -> tuple[int, int, int]:
    """The gateway loop's tasks, the process's fds other than the upstream pool's idle connections,
    and the live socket objects (sessions, sockets, protocols, connections: what a socket's memory
    is held by).

    The pool keeps idle keep-alive connections up to its bound, as many as turns overlapped (a
    turn cut by its socket's close may still be reading when the next begins): each holds two fds
    here, its own and the in-process upstream's end. They are the pool's, not a socket's leak."""
    async def count() -> tuple[int, int]:
        pool = s.gateway.pool if s.gateway is not None else None
        idle = [c for c in (pool._idle if pool is not None else ())
                if not c.closed and not c.transport.is_closing()]
        return len(asyncio.all_tasks()), len(idle)

    tasks, idle = asyncio.run_coroutine_threadsafe(count(), s.loop).result(FAR)
    gc.collect()
    kinds = (ResponsesSocket, WebSocket, ServerProtocol, FrameResponse)
    sessions = sum(1 for o in gc.get_objects() if type(o) in kinds)
    return tasks, len(os.listdir("/proc/self/fd")) - 2 * idle, sessions


def leak_check(count: int) -> None:
    with Stack(lambda b: Reply(content="word " * 40, chunk=5)) as s:
        open_and_close(s, 20)  # (the pools and caches a first use makes)
        before = resources(s)
        open_and_close(s, count)
        deadline = time.monotonic() + FAR
        while resources(s) != before and time.monotonic() < deadline:
            time.sleep(0.05)  # (a server closes a socket after the client's close frame: soon)
        assert resources(s) == before
        assert s.gateway.server is not None and len(s.gateway.server.connections) == 0


def test_sockets_opened_and_closed_leave_nothing_behind() -> None:
    leak_check(200)


@pytest.mark.check
def test_ten_thousand_sockets_leave_nothing_behind() -> None:
    leak_check(10_000)


def test_shutdown_closes_an_idle_socket_and_lets_a_turn_finish() -> None:
    hold = threading.Event()
    with Stack(lambda b: Reply(content="the last answer", hold=hold)) as s, \
            connect(ws_url(s)) as idle, connect(ws_url(s)) as busy:
        busy.send(json.dumps({"type": "response.create", **body()}))
        assert json.loads(busy.recv(timeout=FAR))["type"] == "response.created"
        assert s.gateway is not None and s.gateway.server is not None
        closing = asyncio.run_coroutine_threadsafe(s.gateway.server.close(FAR), s.loop)
        farewell = json.loads(idle.recv(timeout=FAR))
        assert farewell["error"]["code"] == "server_shutting_down"
        with pytest.raises(websockets.ConnectionClosed) as closed:
            idle.recv(timeout=FAR)
        assert closed.value.rcvd.code == 1001
        hold.set()
        events = [json.loads(busy.recv(timeout=FAR))]
        while events[-1]["type"] not in LAST:
            events.append(json.loads(busy.recv(timeout=FAR)))
        assert events[-1]["type"] == "response.completed"  # the turn ran to its end, then the socket closed
        assert json.loads(busy.recv(timeout=FAR))["error"]["code"] == "server_shutting_down"
        with pytest.raises(websockets.ConnectionClosed):
            busy.recv(timeout=FAR)
        closing.result(FAR)
