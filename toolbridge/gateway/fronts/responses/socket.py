"""The Responses API over a WebSocket (``GET /v1/responses`` upgraded): a second transport of the
Responses front, not a second front.

Each ``response.create`` text message is a create body (``type`` aside; ``stream`` is implied
and ``background`` is refused as over HTTP). It runs through the same ``pipeline.serve`` as a
``POST /v1/responses`` with ``stream: true``, with a ``Response`` (``FrameResponse``) whose
streamed events go out one JSON object per text message, in the same order: the events are the
stream's own (``stream.ResponsesStream``, made with ``lines``: each event's JSON and a newline,
rather than SSE to be taken apart again), only the framing differs. Whatever the HTTP front
does to a request (dialects, repair, constraint, whole calls, reasoning, custom tools, and what
is added to it later) therefore holds on the socket. Turns run one at a time.

- ``previous_response_id`` continues from the gateway's store (``store: true``, as over HTTP:
  ``state``, read before the turn and written after it by the same code) or from the response
  the socket holds: the last one made on it with ``store: false``, with its input and output,
  seen from no other socket nor over HTTP, never written to the store, and freed when the socket
  closes. A continuation of the held response does not ask the store.
- ``generate: false`` prepares a turn without the upstream: the request is checked as any, and
  answered ``response.created`` then ``response.completed`` with no output and an id the next
  turn may continue from (its input is held or stored as a response's would be).
- Errors are messages and the socket stays open: a message that is not JSON, not an object, of
  an unknown ``type``, sent while a turn runs, or a request the HTTP front refuses or whose
  upstream fails before the stream began, or a store that does not answer (503
  ``store_unavailable``), is ``{"type": "error", "status": S, "error": {"type", "code",
  "message", "param"}}``; a failure after the stream began ends it as over HTTP (an
  ``error`` event and ``response.failed``).
- A socket closed while a turn runs cancels it, which closes its upstream request.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import orjson

from ....errors import ConfigError
from ...http.server import ClientDisconnected, Request
from ...http.websocket import WebSocket
from ...repair import Provenance
from ...state import Record, StoreUnavailable
from ...turn import RequestError, Turn
from . import Loaded, ResponsesFront
from .items import new_response_id, response_object
from .request import Context

Serve = Callable[[Any, Request, Any], Awaitable[tuple[int, Provenance]]]
TERMINAL = (b'{"type":"response.completed"', b'{"type":"response.incomplete"')
FAILED = b'{"type":"response.failed"'


def error_message(status: int, message: str, type: str = "invalid_request_error", code: str | None = None,
                  param: str | None = None) -> bytes:
    return orjson.dumps({"type": "error", "status": status,
                         "error": {"type": type, "code": code, "message": message, "param": param}})


def _error_of(status: int, body: bytes) -> bytes:
    """A whole error answer (the front's ``{"error": {...}}``, or an upstream's own body) as an
    error message."""
    try:
        error = orjson.loads(body).get("error")
    except (orjson.JSONDecodeError, AttributeError):
        error = None
    if not isinstance(error, dict):
        error = {"message": body.decode("utf-8", "replace")[:2000] or f"status {status}"}
    return orjson.dumps({"type": "error", "status": status, "error": {
        "type": error.get("type") or ("invalid_request_error" if status < 500 else "server_error"),
        "code": error.get("code"), "message": error.get("message") or f"status {status}",
        "param": error.get("param")}})


def sse_messages(data: bytes) -> list[bytes]:
    """The JSON objects of SSE events (``event: T\\ndata: {...}\\n\\n``: a data line holds no
    newline, the events being compact JSON); comments and event lines are not data lines."""
    out = []
    at = data.find(b"data: ")
    while at >= 0:
        end = data.find(b"\n", at)
        if end < 0:
            end = len(data)
        out.append(data[at + 6:end])
        at = data.find(b"\ndata: ", end)
        if at >= 0:
            at += 1
    return out


class FrameResponse:
    """The pipeline's ``Response`` for one turn on a socket (see the module docstring)."""

    __slots__ = ("_socket", "_tunnel", "encoder", "extra", "finished", "last", "started", "status", "writes")

    def __init__(self, socket: WebSocket) -> None:
        self._socket = socket
        self._tunnel = socket.tunnel
        self.started = self.finished = False
        self.encoder: Any = None
        self.extra: tuple[tuple[bytes, bytes], ...] = ()
        self.writes = 0
        self.status = 0
        self.last = b""  # the last message sent (the terminal event, once the turn is done)

    def send(self, status: int, headers: Iterable[tuple[bytes, bytes]] = (), body: bytes = b"") -> None:
        self.status, self.started, self.finished = status, True, True
        self._send([_error_of(status, body) if status >= 400 else body])

    def start(self, status: int, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
        self.status, self.started = status, True

    def write(self, data: bytes) -> None:
        """Send the events in ``data``: the turn's stream (its ``lines``) and a prewarm write them
        as lines of JSON, anything else (a refusal's or failure's event, a keep-alive) as SSE."""
        self.writes += 1
        messages = data.split(b"\n")[:-1] if data[:1] == b"{" else sse_messages(data)
        if messages:
            self._send(messages)

    def end(self, data: bytes = b"") -> None:
        if data:
            self.write(data)
        self.finished = True

    def abort(self) -> None:
        self.finished = True
        self._socket.close(1011, "the answer was cut")

    def _send(self, messages: list[bytes]) -> None:
        if not self._socket.send(messages):
            raise ClientDisconnected()
        self.last = messages[-1]

    @property
    def paused(self) -> bool:
        return self._tunnel.paused

    async def drain(self) -> None:
        await self._tunnel.drain()

    @property
    def disconnected(self) -> bool:
        return not self._socket.open


class _SocketFront:
    """The Responses front as one socket's turns see it: its ``previous_response_id`` lookups
    try the socket's held response before the store (``load``), and the turn's context is kept
    for holding its answer."""

    def __init__(self, front: ResponsesFront, session: ResponsesSocket) -> None:
        self._front = front
        self._session = session

    def __getattr__(self, name: str) -> Any:  # (kept once asked: the front's are set once for good)
        value = getattr(self._front, name)
        setattr(self, name, value)
        return value

    async def load(self, req: Request) -> Loaded | None:
        return await self._front.load(req, self._session.held_record)

    def stream(self, answer: Any) -> Any:
        return self._front.stream(answer, lines=True)  # (each event a message: nothing to take apart)

    def turn(self, body: Any, req: Request | None = None, loaded: Loaded | None = None) -> Turn:
        session = self._session
        turn = self._front.turn(body, req or session.request, loaded)
        session.context = turn.context
        return turn


class ResponsesSocket:
    """One socket's turns (the ``http.websocket.App``). ``serve`` is ``Pipeline.serve``, ``check``
    ``Pipeline.check`` and ``refuse`` ``Pipeline.refuse``; ``answered(status, provenance,
    started)`` is told of each turn (the gateway's metrics and log line)."""

    def __init__(self, socket: WebSocket, front: ResponsesFront, request: Request, serve: Serve,
                 check: Callable[[Any, bytes, Request, Any], Any], refuse: Callable[[Any, Any, Exception], Any],
                 answered: Callable[[int, Provenance, float], None]) -> None:
        self.socket = socket
        self.front = _SocketFront(front, self)
        self._shared = front
        # Each turn is a request with the handshake's header fields (its credentials: the
        # caller's scope, an Authorization passed upstream) and the message's body.
        self._handshake = request
        self.request = request  # the running turn's (between turns the handshake's: no body kept)
        self._serve, self._check, self._refuse, self._answered = serve, check, refuse, answered
        self._task: asyncio.Task[None] | None = None
        self._loop = asyncio.get_running_loop()
        self.held: Record | None = None  # the last response made here with store: false (never stored)
        self.context: Context | None = None  # the running turn's

    @property
    def busy(self) -> bool:
        return self._task is not None

    def held_record(self, response_id: str) -> Record | None:
        held = self.held
        return held if held is not None and held.response["id"] == response_id else None

    # ---------------------------------------------------------------- the App

    def message(self, data: bytes, text: bool) -> None:
        if self._task is not None:
            self.socket.send([error_message(400, "a response is in progress on this socket: send the next "
                                            "response.create after its last event", code="response_in_progress")])
            return
        body = self._body(data, text)
        if body is not None:
            self._task = self._loop.create_task(self._turn(*body, data))

    def closed(self) -> None:
        """The socket is gone: a running turn stops (and its upstream request), the held
        response goes."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self.held = self.context = None

    def farewell(self, code: str, message: str) -> None:
        self.socket.send([error_message(400, message, code=code)])

    # ---------------------------------------------------------------- turns

    def _body(self, data: bytes, text: bool) -> tuple[dict[str, Any], bool] | None:
        """The create body of a ``response.create`` message and whether it generates; None when
        the message was answered with an error."""
        try:
            event = orjson.loads(data) if text else None
        except orjson.JSONDecodeError as exc:
            event, why = None, f"the message is not valid JSON: {exc}"
        else:
            why = "a message must be a JSON object (a text message)"
        if not isinstance(event, dict):
            self.socket.send([error_message(400, why, code="invalid_json" if text else "invalid_message")])
            return None
        kind = event.pop("type", None)
        if kind != "response.create":
            self.socket.send([error_message(400, f"unknown event type {kind!r:.80}: only response.create is "
                                            "served", code="unknown_event_type", param="type")])
            return None
        generate = event.pop("generate", True)
        event["stream"] = True  # (implied on a socket)
        return event, generate is not False

    async def _turn(self, event: dict[str, Any], generate: bool, body: bytes) -> None:
        """One turn: ``event`` the create body decoded from the message ``body`` (which stands
        for it where only its size counts or it is read again: its ``type`` is no field to them)."""
        started = time.perf_counter()
        req = Request("POST", "/v1/responses", "1.1", self._handshake.headers, body, True)
        req.parsed = event  # (decoded once: the pipeline and the store's lookup read it)
        resp = FrameResponse(self.socket)
        self.request = req
        try:
            if generate:
                status, provenance = await self._serve(self.front, req, resp)
            else:
                status, provenance = await self._prewarm(req, resp)
            if status >= 400 or resp.last.startswith(FAILED):
                self._evict(body)
            self._hold(resp)
        except ClientDisconnected:
            return
        finally:
            self.context, self.request = None, self._handshake
            if self._task is asyncio.current_task(self._loop):
                self._task = None
                self.socket.idle()
        self._answered(status, provenance, started)

    async def _prewarm(self, req: Request, resp: FrameResponse) -> tuple[int, Provenance]:
        """``generate: false``: the request checked, a response with no output made, held or
        stored, without the upstream; a store that does not answer is the 503 error message."""
        try:
            loaded = await self.front.load(req)
            self._check(self.front, req.body, req, loaded)
        except (orjson.JSONDecodeError, RequestError, ConfigError) as exc:  # (what refuse answers)
            return self._refuse(self.front, resp, exc)  # type: ignore[no-any-return]
        except StoreUnavailable as exc:
            return self._store_down(resp, exc)
        context = self.context
        assert context is not None
        created = response_object(context, new_response_id(), context.created, "in_progress", [])
        done = {**created, "status": "completed"}
        last = orjson.dumps({"type": "response.completed", "response": done, "sequence_number": 1})
        if context.store:  # stored before anything is sent: a store that is down is one error message
            record = Record(done, list(context.history), self._shared.size(context, last), context.inputs)
            try:
                await self._shared.store.put(context.scope, record)
            except StoreUnavailable as exc:
                return self._store_down(resp, exc)
        resp.start(200)
        resp.write(orjson.dumps({"type": "response.created", "response": created, "sequence_number": 0}) + b"\n")
        resp.end(last + b"\n")  # (lines, as the turns' streams write them)
        return 200, Provenance()

    def _store_down(self, resp: FrameResponse, exc: StoreUnavailable) -> tuple[int, Provenance]:
        """The store's failure as ``pipeline.serve`` answers it (``refuse``: 503
        ``store_unavailable``), an error message; the socket stays open."""
        return self._refuse(self.front, resp, exc)  # type: ignore[no-any-return]

    def _evict(self, body: bytes) -> None:
        """A turn that failed drops the held response it continued, as the API does: the
        next turn naming it gets ``previous_response_not_found``, never a continuation of
        state the failure may have left half-made."""
        held = self.held
        if held is None:
            return
        try:
            named = orjson.loads(body).get("previous_response_id")
        except (orjson.JSONDecodeError, AttributeError):
            return
        if named == held.response["id"]:
            self.held = None

    def _hold(self, resp: FrameResponse) -> None:
        """Keep the turn's response for the next one if it was made with ``store: false``."""
        context = self.context
        if context is None or context.store or not resp.last.startswith(TERMINAL):
            return
        response = context.made if context.made is not None else orjson.loads(resp.last)["response"]
        conversation = (list(context.history) if not response["output"]
                        else self._shared.conversation(context, response))
        self.held = Record(response, conversation, 0)
