"""A small HTTP/1.1 server on asyncio Protocols, with httptools (llhttp) parsing the requests.

Made for an OpenAI-compatible gateway: requests are read whole (JSON bodies), responses are
either whole (``Response.send``) or streamed with chunked transfer encoding (``Response.start``,
``write``, ``end``; SSE is just ``write(b"data: ...\\n\\n")``). Runs on any asyncio loop; use uvloop
for speed.

What it handles:
- keep-alive (HTTP/1.1 default, HTTP/1.0 ``Connection: keep-alive``) and ``Connection: close``;
- request bodies by ``Content-Length`` or chunked transfer encoding (decoded by llhttp);
- a request body size limit: a ``Content-Length`` above ``Limits.max_body`` is refused with 413
  before any of the body is read, a chunked body is refused with 413 as soon as it exceeds it;
  the connection is closed after a 413;
- limits on the request target (414), the number of header fields and the size of the head
  (431), counted as the parser completes them and, while a head is incomplete, over the reads
  it spans, so they hold whether a head comes in one write or trickles; a deadline for
  receiving a whole request once it has begun (408), an idle keep-alive timeout (the
  connection is closed); every limit is a field of ``Limits``;
- ``Expect: 100-continue`` (answered before the body is read, unless the body is too large);
- pipelined requests: answered in order, one at a time (reading pauses while some are queued);
- malformed requests (a request line without an HTTP version, an HTTP/1.1 request without
  exactly one ``Host``), ``CONNECT``: 400; HTTP versions other than 1.0 and 1.1: 505. Every refusal is answered after the requests pipelined before
  it, and the connection is then closed; nothing pipelined after it is run;
- client disconnect detection: when the connection is lost (EOF, reset, write error), the task
  running the handler is cancelled, so whatever it awaits (e.g. the upstream read) raises
  ``CancelledError`` and its ``async with``/``finally`` blocks release resources (the h1client
  exchange aborts its upstream connection); ``Response.write`` on a lost connection raises
  ``ClientDisconnected``; ``Response.disconnected`` can be polled;
- write back-pressure: ``Response.paused`` is true while the transport's buffer is above its
  high-water mark, ``await Response.drain()`` waits for it to drain (or raises
  ``ClientDisconnected``);
- ``Response.abort()`` cuts a started response (the client sees it incomplete, not ended);
- streamed responses to HTTP/1.0 clients (no chunked encoding: body delimited by close);
- HEAD (headers only), a cached ``Date`` header, graceful shutdown (``H1Server.close``);
- upgrades (``Connection: upgrade`` with ``Upgrade``): the request reaches the handler with
  ``Request.upgrade`` set (its body, if any, unread) and is the connection's last; the handler
  answers it as any request (the connection then closes), or takes the connection over with
  ``Response.upgrade(receiver)``, which gives it a ``Tunnel`` to write to and hands it every byte
  read after the request head (a ``Receiver``: ``data_received``, ``connection_lost``,
  ``shutdown`` when the server closes). The protocol spoken over it is the handler's
  (``http.websocket``): no timer of this server applies to it any more.

What it does not do: TLS (terminate it in front), HTTP/2, request trailers,
streaming request bodies to the handler (bodies are buffered up to ``max_body``), a limit on the
number of connections, lingering close after an error response (a client still sending a too
large body may see a reset instead of the 413), access logging. Disconnects are noticed by
reading, so they are not noticed while reading is paused for queued pipelined requests (they are
at the next write).

Usage::

    async def handler(req: Request, resp: Response) -> None:
        resp.send(200, [(b"content-type", b"application/json")], b"{}")

    server = await H1Server.start(handler, "127.0.0.1", 8000, Limits(max_body=1 << 20))
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from operator import itemgetter

import httptools

from ...parsing.ids import random_alnum
from .outbox import Outbox, flush

log = logging.getLogger("h1server")

Headers = list[tuple[bytes, bytes]]


_IDS_MADE = 32  # request ids made at a time
_ID_CHARS = re.compile(".{24}", re.S).findall  # a draw of characters cut into ids' (in C)
_ids: list[str] = []  # made, not yet handed out (``new_request_id``)


def new_request_id() -> str:
    """A request's id, as the APIs make theirs: ``req_`` and 24 random characters
    (``requestid``; the refusals here, before a request reaches a route, carry one too). Made
    ``_IDS_MADE`` at a time and handed out by ``list.pop``, which the GIL makes atomic: no lock
    per id, and each is handed out once."""
    try:
        return _ids.pop()
    except IndexError:
        _ids.extend(map("req_".__add__, _ID_CHARS(random_alnum(24 * _IDS_MADE))))
        return _ids.pop()


os.register_at_fork(after_in_child=_ids.clear)  # a forked child's ids are not its parent's


@dataclass(frozen=True)
class Limits:
    """What one request may take. Past a limit the client gets the status named here in the
    OpenAI error shape and the connection is closed; each holds however the bytes arrive (in one
    write or trickled).

    Attributes:
        max_body: bytes of request body after chunked decoding; 413 (default 8 MiB).
        max_target: bytes of the request target, the URL in the request line; 414 URI Too
            Long (default 8 KiB, as nginx's request line buffer).
        max_head: bytes of the request target and the header fields together; 431 (default
            64 KiB).
        max_headers: number of header fields; 431 (default 100).
        request_timeout: seconds to receive a whole request once it has begun; 408 (default 60).
        keepalive_timeout: seconds an idle connection is kept open; then closed (default 75).
    """

    max_body: int = 8 << 20
    max_target: int = 8 << 10
    max_head: int = 64 << 10
    max_headers: int = 100
    request_timeout: float = 60.0
    keepalive_timeout: float = 75.0


class ClientDisconnected(ConnectionError):
    """The client's connection is gone; the response cannot be written."""


class Receiver(Protocol):
    """What takes over an upgraded connection (``Response.upgrade``)."""

    def data_received(self, data: bytes) -> None: ...
    def connection_lost(self) -> None: ...
    def shutdown(self) -> None: ...  # the server is closing: end the connection soon


class Request:
    __slots__ = ("body", "headers", "keep_alive", "method", "parsed", "path", "target", "upgrade", "version")

    def __init__(self, method: str, target: str, version: str, headers: Headers, body: bytes,
                 keep_alive: bool, upgrade: bool = False) -> None:
        self.method = method
        self.target = target  # raw request target, e.g. "/v1/chat/completions?x=1"
        self.path = target.partition("?")[0]  # read several times per request: split once
        self.version = version  # "1.1" or "1.0"
        self.headers = headers  # [(lower-case name, value)] in arrival order
        self.body = body
        self.keep_alive = keep_alive and not upgrade  # (after an upgrade head, no more HTTP)
        self.upgrade = upgrade  # Connection: upgrade with Upgrade: the handler may take it over
        self.parsed: Any = None  # the body already decoded by whoever made the request (a WebSocket message)

    def header(self, name: bytes, default: bytes | None = None) -> bytes | None:
        """First value of header ``name`` (lower-case bytes)."""
        for k, v in self.headers:
            if k == name:
                return v
        return default


Handler = Callable[[Request, "Response"], Awaitable[None]]

_STATUS_LINES = {
    s.value: b"HTTP/1.1 %d %s\r\n" % (s.value, s.phrase.encode()) for s in HTTPStatus
}
_date_cache = [0, b""]


def _date_header() -> bytes:
    now = int(time.time())
    if now != _date_cache[0]:
        _date_cache[0] = now
        _date_cache[1] = b"date: " + formatdate(now, usegmt=True).encode() + b"\r\n"
    return _date_cache[1]


def _check_header(name: bytes, value: bytes) -> None:
    # A forbidden byte makes the copy without it shorter: one C pass each, where a test with
    # ``in`` per byte costs more (``in`` on bytes first tries its operand as an integer).
    if len(value.translate(None, b"\r\n")) != len(value) or len(name.translate(None, b"\r\n:")) != len(name):
        raise ValueError(f"invalid response header {name!r}")


_NAMES: set[bytes] = set()  # field names found free of CR, LF and ":" (the few a program sends)
NAMES_KEPT = 256
_NAME = itemgetter(0)
_JOIN_FIELD = b": ".join  # a (name, value) field's line, but its CRLF


def _field_lines(fields: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The lines of a response's header fields; ValueError for a CR or LF in one, or a ":" in
    a name. Made and checked at once, in C, not field by field: the lines hold one CR and one LF
    each when no field holds another, and the names are looked up among those checked before;
    else each field is checked, in order (the first bad one raises)."""
    if type(fields) is not tuple and type(fields) is not list:
        fields = tuple(fields)
    lines = b"\r\n".join(map(_JOIN_FIELD, fields)) + b"\r\n" if fields else b""
    count = len(fields)
    if lines.count(b"\r") != count or lines.count(b"\n") != count or not _NAMES.issuperset(map(_NAME, fields)):
        for name, value in fields:
            _check_header(name, value)
            if len(_NAMES) < NAMES_KEPT:
                _NAMES.add(name)
    return lines


class Response:
    """Writes the response to one request. ``send`` or ``start``/``write``/``end``."""

    __slots__ = ("_chunked", "_head_only", "_keep_alive", "_proto", "encoder", "extra", "finished", "started",
                 "upgraded", "writes")

    def __init__(self, proto: _H1Protocol, req: Request) -> None:
        self._proto = proto
        self._keep_alive = req.keep_alive
        self._head_only = req.method == "HEAD"
        self._chunked = req.version != "1.0"
        self.started = False  # the status line has been written
        self.finished = False  # the whole response has been written
        self.encoder: Any = None  # a stream's encoder (the pipeline's): for a failure's last event
        self.extra: tuple[tuple[bytes, bytes], ...] = ()  # header fields every head of this response gets
        self.writes = 0  # pieces of a streamed response written (what tells a stream is idle)
        self.upgraded = False  # the connection was taken over (``upgrade``)

    def _head(self, status: int, headers: Iterable[tuple[bytes, bytes]]) -> list[bytes]:
        if self.started:
            raise RuntimeError("response already started")
        if self._proto.closed:
            raise ClientDisconnected()
        self.started = True
        line = _STATUS_LINES.get(status) or b"HTTP/1.1 %d Unknown\r\n" % status
        parts = [line, _date_header(), _field_lines((*headers, *self.extra) if self.extra else headers)]
        if not self._keep_alive:
            parts.append(b"connection: close\r\n")
        return parts

    def send(self, status: int, headers: Iterable[tuple[bytes, bytes]] = (),
             body: bytes = b"") -> None:
        """Write a whole response with ``Content-Length``."""
        parts = self._head(status, headers)
        parts.append(b"content-length: %d\r\n\r\n" % len(body))
        if not self._head_only:
            parts.append(body)
        self._proto.out(b"".join(parts))
        self.finished = True

    def start(self, status: int, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
        """Write the head of a streamed response (chunked; close-delimited for HTTP/1.0)."""
        parts = self._head(status, headers)
        if self._chunked:
            parts.append(b"transfer-encoding: chunked\r\n\r\n")
        else:
            if self._keep_alive:
                parts.append(b"connection: close\r\n")
                self._keep_alive = False
            parts.append(b"\r\n")
        self._proto.out(b"".join(parts))
        if self._head_only:
            self.finished = True

    def write(self, data: bytes) -> None:
        """Write one piece of a streamed response. Raises ``ClientDisconnected``."""
        if self._proto.closed:
            raise ClientDisconnected()
        if not data or self._head_only:
            return
        self.writes += 1
        if self._chunked:
            self._proto.out(b"%x\r\n%b\r\n" % (len(data), data))
        else:
            self._proto.out(data)

    def end(self, data: bytes = b"") -> None:
        """Finish a streamed response (optionally writing a last piece)."""
        if self.finished:
            return
        if self._proto.closed:
            raise ClientDisconnected()
        if self._chunked:
            if data:
                self._proto.out(b"%x\r\n%b\r\n0\r\n\r\n" % (len(data), data))
            else:
                self._proto.out(b"0\r\n\r\n")
        elif data:
            self._proto.out(data)
        self.finished = True

    def abort(self) -> None:
        """Cut the response: close the connection at once, without finishing the response, so
        the client sees it incomplete (for errors after ``start``, e.g. an upstream failure)."""
        self.finished = True
        self._keep_alive = False
        if not self._proto.closed:
            self._proto.cut()

    def upgrade(self, receiver: Receiver) -> Tunnel:
        """Take the connection over, for an upgrade request (``Request.upgrade``), writing
        nothing: the caller writes its own answer (``101 Switching Protocols``) to the tunnel.
        From now on every byte read goes to ``receiver``; bytes that came after the request head
        are given to it soon after this returns."""
        if self.started or self._proto.closed:
            raise ClientDisconnected() if self._proto.closed else RuntimeError("response already started")
        self.started = self.finished = self.upgraded = True
        self._proto.take_over(receiver)
        return Tunnel(self._proto)

    @property
    def paused(self) -> bool:
        """True while the client is not reading fast enough; ``await drain()`` then."""
        return self._proto.write_paused

    async def drain(self) -> None:
        """Wait until the write buffer is below its high-water mark."""
        await self._proto.drain()

    @property
    def disconnected(self) -> bool:
        return self._proto.closed


class Tunnel:
    """The writing side of an upgraded connection (``Response.upgrade``)."""

    __slots__ = ("_proto",)

    def __init__(self, proto: _H1Protocol) -> None:
        self._proto = proto

    def write(self, data: bytes) -> None:
        if not self._proto.closed:
            self._proto.out(data)

    def close(self) -> None:
        """Close after what is written is sent."""
        if not self._proto.closed:
            self._proto.shut()

    def abort(self) -> None:
        if not self._proto.closed:
            self._proto.cut()

    @property
    def closed(self) -> bool:
        return self._proto.closed

    @property
    def paused(self) -> bool:
        return self._proto.write_paused

    async def drain(self) -> None:
        await self._proto.drain()


class _H1Protocol(asyncio.Protocol):
    def __init__(self, server: H1Server) -> None:
        self._server = server
        self._handler = server.handler
        self._limits = server.limits
        self._loop = server.loop
        self._outbox = server.outbox
        self.transport: asyncio.Transport | None = None
        self.held: list[bytes] | None = None  # what this pass wrote (``outbox``)
        self.closed = False
        self.write_paused = False
        self._drain_waiter: asyncio.Future | None = None
        self._parser = httptools.HttpRequestParser(self)
        self._task: asyncio.Task | None = None
        self._queue: deque[Request] = deque()  # pipelined requests waiting their turn
        self._reading_paused = False
        self._upgrade: bytes | None = None  # after an upgrade head: what came after it, kept
        self.receiver: Receiver | None = None  # the upgraded connection's (``take_over``)
        self._timer: asyncio.TimerHandle | None = None
        self._deadline: float | None = None  # see _arm
        # state of the request being received
        self._in_message = False
        self._head_done = False
        self._head_bytes = 0  # bytes of the reads that left the head incomplete
        self._target_size = 0
        self._head_size = 0  # bytes of the target and the header fields parsed so far
        self._url: list[bytes] = []
        self._headers: Headers = []
        self._body: list[bytes] = []
        self._body_size = 0
        # The error this connection ends with. Once set it stays: the request that earned it
        # and any pipelined after it are never run, and the connection closes after answering.
        self._reject: tuple[int, bytes] | None = None

    # --- connection ---

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._server.connections.add(self)
        self._arm(self._limits.keepalive_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.held = None
        # The parser holds this protocol's bound methods: without it the protocol is freed at once,
        # not left in a cycle for the collector, and a body cut short or refused goes with it.
        self._parser = None
        self._body = []
        self._server.connections.discard(self)
        self._stop_timer()
        if self._task is not None:
            self._task.cancel()  # the client is gone: stop the handler (and its upstream)
        w = self._drain_waiter
        if w is not None and not w.done():
            w.set_exception(ClientDisconnected())
        self._drain_waiter = None
        receiver, self.receiver = self.receiver, None
        if receiver is not None:
            receiver.connection_lost()

    def out(self, data: bytes) -> None:
        """Write ``data`` when this pass of the loop ends (``outbox``)."""
        self._outbox.write(self, data)

    def shut(self) -> None:
        """Close once what is written is sent."""
        flush(self)
        self.transport.close()

    def cut(self) -> None:
        """Close at once: what this pass wrote is handed to the socket first, the rest dropped."""
        flush(self)
        self.transport.abort()

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        w = self._drain_waiter
        if w is not None and not w.done():
            w.set_result(None)
        self._drain_waiter = None

    async def drain(self) -> None:
        if self.closed:
            raise ClientDisconnected()
        if not self.write_paused:
            return
        self._drain_waiter = self._loop.create_future()
        await self._drain_waiter

    def data_received(self, data: bytes) -> None:
        if self.receiver is not None:
            self.receiver.data_received(data)
            return
        if self._upgrade is not None:  # (read before reading paused, after an upgrade head)
            self._upgrade += data
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            if self._reject is not None:
                self._fail(*self._reject)
            else:  # the upgrade request went to its handler: what follows is not HTTP
                self._upgrade = data[exc.args[0]:]
                if not self._reading_paused:
                    self._reading_paused = True
                    self.transport.pause_reading()
            return
        except httptools.HttpParserError:
            self._fail(400, b"malformed request")
            return
        if self._reject is not None:
            self._fail(*self._reject)
        elif self._in_message and not self._head_done:
            # llhttp buffers nothing itself, but httptools accumulates a header field until it
            # is complete: bound that by counting the reads that leave a request head
            # incomplete (the callbacks count what completes, however it arrived).
            self._head_bytes += len(data)
            if self._head_bytes > self._limits.max_head:
                self._fail(431, b"request head too large")

    def _fail(self, status: int, message: bytes) -> None:
        """Answer a protocol-level error and close; when earlier requests on the connection are
        still being answered, after them (reading stops meanwhile)."""
        if self.closed or self.transport.is_closing():
            return
        if self._reject is None:
            self._reject = (status, message)
        status, message = self._reject
        if self._task is not None or self._queue:
            if not self._reading_paused:
                self._reading_paused = True
                self.transport.pause_reading()
            return  # _handle answers it when the requests before it are done
        self._stop_timer()
        body = b'{"error":{"message":"%b","type":"invalid_request_error","param":null,"code":"%d"}}' % (
            message, status)  # OpenAI-style, like every other error the gateway sends
        # As every answer: a request id; a 5xx of the gateway's own is not worth asking again.
        extra = b"x-request-id: %b\r\n" % new_request_id().encode() + (
            b"x-should-retry: false\r\n" if status >= 500 else b"")
        self.out(
            _STATUS_LINES[status] + _date_header() + b"connection: close\r\n" + extra
            + b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%b" % (len(body), body)
        )
        self.shut()

    # --- timers: request deadline while receiving, idle timeout between requests ---
    #
    # ``_deadline`` is when the current wait ends (None: no wait). The one timer is not made
    # and cancelled per request (about 2 us each on uvloop, three times a request): a timer
    # due before the new deadline is kept, and when it fires early it is set again for it.

    def _arm(self, delay: float) -> None:
        self._deadline = deadline = self._loop.time() + delay
        if self._timer is None or self._timer.when() > deadline:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._loop.call_at(deadline, self._on_timer)

    def _disarm(self) -> None:
        self._deadline = None  # a pending timer finds nothing to do

    def _stop_timer(self) -> None:
        self._deadline = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_timer(self) -> None:
        self._timer = None
        deadline = self._deadline
        if deadline is None:
            return
        if self._loop.time() < deadline:  # set for an earlier wait: not this one's end yet
            self._timer = self._loop.call_at(deadline, self._on_timer)
            return
        self._deadline = None
        if self._in_message:
            self._fail(408, b"request not received in time")
        elif self._task is None and not self._queue:
            self.shut()  # idle keep-alive connection

    # --- httptools callbacks ---

    def on_message_begin(self) -> None:
        if self._reject is not None:
            return  # pipelined after a refused request: never run
        self._in_message = True
        self._head_done = False
        self._url = []
        self._headers = []
        self._body = []
        self._body_size = 0
        self._head_bytes = 0
        self._target_size = 0
        self._head_size = 0
        self._arm(self._limits.request_timeout)

    def on_url(self, url: bytes) -> None:
        if self._reject is not None:
            return
        self._url.append(url)
        self._target_size += len(url)
        self._head_size += len(url)
        if self._target_size > self._limits.max_target:
            self._reject = (414, b"request target (URL) too long")

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._reject is not None:
            return
        self._head_size += len(name) + len(value) + 4  # ": " and CRLF
        if len(self._headers) >= self._limits.max_headers:
            self._reject = (431, b"too many header fields")
        elif self._head_size > self._limits.max_head:
            self._reject = (431, b"request head too large")
        else:
            self._headers.append((name.lower(), value))

    def _refusal(self, names: list[bytes]) -> tuple[int, bytes] | None:
        """Why a complete request head cannot be served (None: it can); ``names``: its header
        fields' names."""
        version = self._parser.get_http_version()
        if version == "0.9":  # what llhttp makes of a request line without a version
            return 400, b"the request line has no HTTP version"
        if version not in ("1.0", "1.1"):
            return 505, b"only HTTP/1.0 and HTTP/1.1 are served"
        if self._parser.should_upgrade() and self._parser.get_method() == b"CONNECT":
            return 400, b"CONNECT is not served"
        hosts = names.count(b"host")
        if hosts > 1 or (hosts == 0 and version == "1.1"):
            return 400, b"an HTTP/1.1 request needs exactly one Host header"
        return None

    def on_headers_complete(self) -> None:
        self._head_done = True
        names = list(map(_NAME, self._headers))  # (looked through in C: the fields are few)
        if self._reject is None:
            self._reject = self._refusal(names)
        if self._reject is not None:
            return
        for name, value in self._headers:
            if name == b"content-length":
                try:
                    too_large = int(value) > self._limits.max_body
                except ValueError:
                    too_large = False  # llhttp rejects it
                if too_large:
                    self._reject = (413, b"request body too large")
                    return
        if b"expect" in names:  # (seldom sent)
            for name, value in self._headers:
                if name == b"expect" and value.lower() == b"100-continue":
                    self.out(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        if self._reject is not None:
            return
        self._body_size += len(body)
        if self._body_size > self._limits.max_body:
            self._reject = (413, b"request body too large")
            return
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._in_message = False
        self._disarm()
        if self._reject is not None:
            return
        p = self._parser
        # The pieces are dropped once joined: the connection holds no second copy of the body
        # while the handler runs, nor after it (kept alive).
        body, self._body = b"".join(self._body), []
        req = Request(
            p.get_method().decode("latin-1"),
            b"".join(self._url).decode("latin-1"),
            p.get_http_version(),
            self._headers,
            body,
            p.should_keep_alive(),
            p.should_upgrade(),
        )
        if self._task is not None or self._queue:
            self._queue.append(req)
            if not self._reading_paused:
                self._reading_paused = True
                self.transport.pause_reading()
        else:
            self._run(req)

    # --- handler tasks ---

    def take_over(self, receiver: Receiver) -> None:
        """The connection is ``receiver``'s from now on (``Response.upgrade``)."""
        self._stop_timer()
        self.receiver = receiver
        early, self._upgrade = self._upgrade or b"", None
        if early:
            self._loop.call_soon(self._early, early)
        if self._reading_paused:
            self._reading_paused = False
            self.transport.resume_reading()

    def _early(self, data: bytes) -> None:
        if self.receiver is not None:
            self.receiver.data_received(data)

    def _run(self, req: Request) -> None:
        self._task = self._loop.create_task(self._handle(req, Response(self, req)))

    async def _handle(self, req: Request, resp: Response) -> None:
        try:
            await self._handler(req, resp)
            if not resp.finished:
                if resp.started:
                    resp.end()
                else:
                    resp.send(500, (), b"no response")
        except (asyncio.CancelledError, ClientDisconnected):
            self._task = None
            return  # connection lost (or server shutdown): nothing left to do
        except Exception:
            log.exception("handler failed for %s %s", req.method, req.target)
            if not self.closed:
                if resp.started:
                    self.cut()  # the client sees a truncated response
                else:
                    resp.send(500, ((b"content-type", b"text/plain"),), b"internal error")
        self._task = None
        if self.closed or resp.upgraded:
            return
        if not resp._keep_alive:
            self.shut()
        elif self._queue:
            self._run(self._queue.popleft())
            if not self._queue and self._reading_paused and self._reject is None and self._upgrade is None:
                self._reading_paused = False
                self.transport.resume_reading()
        elif self._reject is not None:
            self._fail(*self._reject)  # a request after this one was refused: answer it now
        elif not self._in_message:
            self._arm(self._limits.keepalive_timeout)


class H1Server:
    """A listening server; ``await H1Server.start(handler, host, port, limits)``."""

    def __init__(self, handler: Handler, limits: Limits, loop: asyncio.AbstractEventLoop) -> None:
        self.handler = handler
        self.limits = limits
        self.loop = loop
        self.outbox = Outbox(loop)
        self.connections: set[_H1Protocol] = set()
        self._server: asyncio.Server | None = None

    @classmethod
    async def start(cls, handler: Handler, host: str, port: int, limits: Limits = Limits(),
                    backlog: int = 2048, reuse_port: bool = False) -> H1Server:
        """Listen on host:port. ``reuse_port`` lets several worker processes share the port
        (SO_REUSEPORT), one event loop per core."""
        self = cls(handler, limits, asyncio.get_running_loop())
        self._server = await self.loop.create_server(lambda: _H1Protocol(self), host, port,
                                                     backlog=backlog, reuse_port=reuse_port)
        return self

    @property
    def port(self) -> int:
        return self._server.sockets[0].getsockname()[1]

    async def close(self, grace: float = 5.0) -> None:
        """Stop accepting, let in-flight requests finish for ``grace`` seconds, then abort."""
        self._server.close()
        deadline = self.loop.time() + grace
        while self.connections and self.loop.time() < deadline:
            for c in list(self.connections):
                if c.receiver is not None:
                    c.receiver.shutdown()  # (it closes once idle)
                elif c._task is None and not c._in_message and not c._queue:
                    c.shut()
            await asyncio.sleep(0.05)
        for c in list(self.connections):
            c.cut()
        await self._server.wait_closed()
