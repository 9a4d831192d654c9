"""A small HTTP/1.1 client with a keep-alive connection pool, on asyncio Protocols and httptools.

Made for calling one upstream (an LLM server) from a gateway: requests are whole (JSON bodies),
responses are read whole (``read``) or as they arrive (``async for piece in resp``) or as
Server-Sent Events (``async for data in resp.sse()``, or ``await resp.sse().each(handle,
drain)``, which calls ``handle`` for each event from the connection's read callback: no task
switch per event, the cheapest way to relay a stream).

    pool = UpstreamPool("127.0.0.1", 8000, read_timeout=60)
    async with pool.request("POST", "/v1/chat/completions", headers, body) as resp:
        if resp.status == 200:
            async for data in resp.sse():
                ...

What it handles:
- responses delimited by ``Content-Length``, by chunked transfer encoding or by connection close
  (llhttp decodes them); 204/304 without a body;
- keep-alive: a connection goes back to the pool only when its response was read to the end and
  both sides allow keep-alive; idle connections are reused newest first, dropped after
  ``idle_expiry`` seconds or when the upstream closes them, at most ``max_idle`` are kept;
- a request sent on a reused connection that the upstream had closed meanwhile (nothing received)
  is retried once on a new connection;
- ``max_connections`` (optional) bounds the connections in use; callers wait for a free one;
- timeouts: ``connect_timeout`` for opening a connection, ``read_timeout`` for the upstream's
  silence: until the response head arrives and between any two reads of the body. It raises
  ``UpstreamTimeout`` (and aborts the connection). It costs no timer per chunk nor per exchange:
  one timer per ``read_timeout`` period checks the time of the last read (a connection's timer
  outlives an exchange and serves the next one). Silence while the reader itself is
  slow (reading paused by back-pressure) does not count. An overall deadline, if wanted, is
  ``asyncio.timeout()`` (3.11+) or ``asyncio.wait_for`` around the exchange;
- closing: leaving the ``async with`` early -- an exception, a ``break``, or cancellation of
  the task (e.g. because the gateway's client disconnected) -- aborts the connection, so the
  upstream sees the request end at once and stops generating;
- back-pressure: reading from the upstream pauses while more than ``high_water`` bytes of body
  are buffered and not consumed;
- limits: ``read(limit)`` raises ``UpstreamError`` past ``limit`` bytes; ``sse(max_event)``
  past an incomplete event of ``max_event`` bytes; response heads past ``max_head`` bytes.

What it does not do: TLS, proxies, HTTP/2, redirects, cookies, compression (it sends no
``Accept-Encoding``), request bodies streamed from an iterator, HEAD requests, 1xx responses
other than those llhttp skips, DNS beyond what ``loop.create_connection`` does.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httptools

from .outbox import Outbox
from .sse import SSEDecoder

Headers = list[tuple[bytes, bytes]]


class UpstreamError(Exception):
    """The upstream could not be reached or sent an unusable response."""


class UpstreamTimeout(UpstreamError):
    """The upstream did not connect or was silent for longer than the timeout."""


class _Conn(asyncio.Protocol):
    """One upstream connection; carries one exchange at a time."""

    def __init__(self, pool: UpstreamPool) -> None:
        self.pool = pool
        self.loop = pool.loop
        self.transport: asyncio.Transport | None = None
        self.held: list[bytes] | None = None  # the request, until this pass of the loop ends (``outbox``)
        self.closed = False
        self.idle_since = 0.0
        self.parser: httptools.HttpResponseParser | None = None  # the exchange's (None: idle)
        # The parser, made at the first exchange and reset by llhttp at the end of each response
        # for the next one on a kept-alive connection: not made again per exchange.
        self._parser: httptools.HttpResponseParser | None = None
        self.pieces: deque[bytes] = deque()  # (empty again whenever the connection is reused)
        self.sink: Callable[[bytes], None] | None = None  # takes the body as it arrives (each())
        self.timer: asyncio.TimerHandle | None = None  # kept from one exchange to the next (begin)
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: Headers = []
        self.head_done = False
        self.head_bytes = 0
        self.complete = False
        self.keep_alive = False
        self.received = False
        self.error: BaseException | None = None
        self.buffered = 0
        self.reading_paused = False
        self.waiter: asyncio.Future | None = None
        self.last_read = 0.0

    # --- asyncio.Protocol ---

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.parser is None:  # data on an idle connection: the upstream is confused
            self.transport.abort()
            return
        self.received = True
        self.last_read = self.loop.time()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as e:
            self._fail(UpstreamError(f"malformed response from upstream: {e}"))
            return
        if not self.head_done:
            self.head_bytes += len(data)
            if self.head_bytes > self.pool.max_head:
                self._fail(UpstreamError("response head too large"))
                return
        if self.sink is None or self.complete:  # a sink wakes its reader only when it must
            self._wake()

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost decides what the EOF meant

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._cancel_timer()
        if self.parser is not None and not self.complete and self.error is None:
            if self.head_done and self._close_delimited():
                self.complete = True  # the body ran to EOF, as announced
                self.keep_alive = False
            else:
                self.error = UpstreamError(
                    "upstream closed the connection" + (f": {exc}" if exc else "")
                )
        # The parser holds this connection's bound methods: no cycle for the collector.
        self.parser = self._parser = None
        self._wake()

    # --- httptools callbacks ---

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        if self.sink is not None:
            self.sink(body)
            return
        self.pieces.append(body)
        self.buffered += len(body)
        if self.buffered > self.pool.high_water and not self.reading_paused:
            self.reading_paused = True
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        self.complete = True
        self.keep_alive = self.parser.should_keep_alive()

    # --- exchange ---

    def _close_delimited(self) -> bool:
        for name, value in self.headers:
            if name == b"content-length" or (
                name == b"transfer-encoding" and b"chunked" in value.lower()
            ):
                return False
        return True

    def begin(self, data: bytes) -> None:
        self._reset()
        if self._parser is None:
            self._parser = httptools.HttpResponseParser(self)
        self.parser = self._parser
        self.last_read = self.loop.time()
        # A timer left by the previous exchange is due before this one's deadline and is set
        # again for it when it fires (_on_timer): a call_at and a cancel less per exchange.
        if self.timer is None:
            self.timer = self.loop.call_at(self.last_read + self.pool.read_timeout, self._on_timer)
        self.pool.outbox.write(self, data)

    def _on_timer(self) -> None:
        self.timer = None
        if self.complete or self.closed:
            return
        now = self.loop.time()
        if self.reading_paused:  # our reader is slow, not the upstream
            self.last_read = now
        deadline = self.last_read + self.pool.read_timeout
        if now >= deadline:
            self._fail(UpstreamTimeout(f"upstream silent for {self.pool.read_timeout:g} s"))
        else:
            self.timer = self.loop.call_at(deadline, self._on_timer)

    def _cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self.abort()
        self._wake()

    def pause(self, paused: bool) -> None:
        """Stop or restart reading the upstream (our reader is slow, not the upstream)."""
        if paused != self.reading_paused and not self.closed:
            self.reading_paused = paused
            if not paused:
                self.last_read = self.loop.time()
            (self.transport.pause_reading if paused else self.transport.resume_reading)()

    def abort(self) -> None:
        # (A request still held in the outbox is dropped with the connection: never sent.)
        self._cancel_timer()
        if not self.closed:
            self.closed = True
            self.transport.abort()

    def _wake(self) -> None:
        w = self.waiter
        if w is not None:
            self.waiter = None
            if not w.done():
                w.set_result(None)

    def wait(self) -> asyncio.Future[None]:
        """What to await for the next change (data, the end, a failure): the future itself,
        without a coroutine around it."""
        self.waiter = waiter = self.loop.create_future()
        return waiter

    async def next_piece(self) -> bytes | None:
        """The next piece of the body, or ``None`` at its end."""
        while True:
            if self.pieces:
                piece = self.pieces.popleft()
                self.buffered -= len(piece)
                if self.reading_paused and self.buffered <= self.pool.high_water // 2:
                    self.reading_paused = False
                    self.last_read = self.loop.time()
                    self.transport.resume_reading()
                return piece
            if self.error is not None:
                raise self.error
            if self.complete:
                return None
            await self.wait()


class UpstreamResponse:
    __slots__ = ("_conn", "headers", "status")

    def __init__(self, conn: _Conn) -> None:
        self._conn = conn
        self.status: int = conn.status
        self.headers: Headers = conn.headers  # [(lower-case name, value)]

    def header(self, name: bytes, default: bytes | None = None) -> bytes | None:
        for k, v in self.headers:
            if k == name:
                return v
        return default

    async def read(self, limit: int | None = None) -> bytes:
        """The whole body; ``UpstreamError`` if it exceeds ``limit`` bytes."""
        conn = self._conn
        parts: list[bytes] = []
        size = 0
        # Piece by piece while more may come; once the body is complete (and reading is not
        # paused: taking a piece may resume it) what is left is taken at once, without a
        # coroutine per piece (a whole answer mostly comes with its head).
        while not conn.complete or conn.reading_paused or conn.error is not None:
            piece = await conn.next_piece()
            if piece is None:
                break
            size += len(piece)
            if limit is not None and size > limit:
                raise UpstreamError(f"upstream response larger than {limit} bytes")
            parts.append(piece)
        else:
            parts += conn.pieces
            conn.pieces.clear()
            conn.buffered = 0
        body = b"".join(parts)
        if limit is not None and len(body) > limit:
            raise UpstreamError(f"upstream response larger than {limit} bytes")
        return body

    def __aiter__(self) -> UpstreamResponse:
        return self

    async def __anext__(self) -> bytes:
        piece = await self._conn.next_piece()
        if piece is None:
            raise StopAsyncIteration
        return piece

    def sse(self, max_event: int = 1 << 20) -> SSEStream:
        """Iterate over the ``data`` payloads (bytes) of a ``text/event-stream`` body."""
        return SSEStream(self._conn, max_event)


GO, PAUSE, STOP = 0, 1, 2  # what an ``SSEStream.each`` handler asks for


class SSEStream:
    __slots__ = ("_conn", "_decoder", "_events")

    def __init__(self, conn: _Conn, max_event: int) -> None:
        self._conn = conn
        self._decoder = SSEDecoder(max_event)
        self._events: deque[bytes] = deque()

    def __aiter__(self) -> SSEStream:
        return self

    async def __anext__(self) -> bytes:
        events = self._events
        while not events:
            piece = await self._conn.next_piece()
            if piece is None:
                raise StopAsyncIteration  # an unterminated last event is dropped, as in SSE
            events.extend(self._decoder.feed(piece))
        return events.popleft()

    async def each(self, handle: Callable[[bytes], int], drain: Callable[[], Awaitable[None]]) -> bool:
        """Call ``handle(data)`` for every event, in order, as the body arrives; True when it
        stopped early, False at the end of the body.

        ``handle`` runs inside the connection's read callback (no task switch per event) and
        returns ``GO``, ``PAUSE`` (its writer is above its high-water mark: reading stops until
        ``await drain()`` returns) or ``STOP``. What it raises, and the upstream's failures
        (``UpstreamError``, ``SSEError``), are raised here, as iteration raises them.
        """
        conn, events = self._conn, self._events
        state: list[Any] = [GO]  # GO, PAUSE, STOP, or what handle or the decoder raised

        def run() -> None:
            while events and state[0] == GO:
                state[0] = handle(events.popleft())

        def sink(piece: bytes) -> None:
            if state[0] == GO:
                try:
                    events.extend(self._decoder.feed(piece))
                    run()
                except BaseException as exc:  # noqa: BLE001  # raised again below, in the reader's task
                    state[0] = exc
                if state[0] != GO:
                    conn.pause(state[0] == PAUSE)
                    conn._wake()
            elif state[0] == PAUSE:  # more of the body in the same read: kept for later
                events.extend(self._decoder.feed(piece))

        while conn.pieces:  # the part of the body that came with the head
            events.extend(self._decoder.feed(conn.pieces.popleft()))
        conn.buffered = 0
        conn.pause(False)
        conn.sink = sink
        try:
            run()
            while True:
                if isinstance(state[0], BaseException):
                    raise state[0]
                if state[0] == STOP:
                    return True
                if state[0] == PAUSE:
                    await drain()
                    state[0] = GO
                    run()
                    if state[0] == GO:
                        conn.pause(False)
                    continue
                if conn.error is not None:
                    raise conn.error
                if conn.complete:
                    return False  # an unterminated last event is dropped, as in SSE
                await conn.wait()
        finally:
            conn.sink = None
            conn.pause(False)  # a connection goes back to the pool reading


class _Exchange:
    """``async with pool.request(...) as resp``: sends, waits for the head, releases."""

    __slots__ = ("_conn", "_data", "_pool", "_slot")

    def __init__(self, pool: UpstreamPool, data: bytes) -> None:
        self._pool = pool
        self._data = data
        self._conn: _Conn | None = None
        self._slot = False

    async def __aenter__(self) -> UpstreamResponse:
        pool = self._pool
        if pool._slots is not None:
            await pool._slots.acquire()
            self._slot = True
        try:
            for attempt in (0, 1):
                conn = pool._reusable()
                reused = conn is not None
                if conn is None:
                    conn = await pool._connect()
                self._conn = conn
                conn.begin(self._data)
                while not conn.head_done:
                    if conn.error is not None:
                        break
                    await conn.wait()
                if conn.head_done:
                    self._data = b""  # sent: not kept for the life of the exchange (a stream's)
                    return UpstreamResponse(conn)
                conn.abort()
                if reused and attempt == 0 and not conn.received and not isinstance(
                    conn.error, UpstreamTimeout
                ):
                    continue  # a stale keep-alive connection: retry on a new one
                raise conn.error
            raise AssertionError("unreachable")
        except BaseException:
            self._release(False)
            raise

    async def __aexit__(self, exc_type, exc, tb) -> None:
        self._release(exc_type is None)

    def _release(self, ok: bool) -> None:
        conn = self._conn
        if conn is not None:
            self._conn = None
            if ok and conn.complete and conn.keep_alive and not conn.closed and not conn.pieces:
                self._pool._put_idle(conn)
            else:
                conn.abort()  # unread or failed response: the upstream sees the request end
        if self._slot:
            self._slot = False
            self._pool._slots.release()


def _lines(headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The lines of a request's header fields; ValueError for a CR or LF in one."""
    parts: list[bytes] = []
    for name, value in headers:
        # (a forbidden byte makes the copy without it shorter: cheaper than ``in`` per byte)
        if len(value.translate(None, b"\r\n")) != len(value) or len(name.translate(None, b"\r\n")) != len(name):
            raise ValueError(f"invalid request header {name!r}")
        parts += (name, b": ", value, b"\r\n")
    return b"".join(parts)


class Fields(list):  # type: ignore[type-arg]
    """Header fields sent with many requests: their lines are made and checked once, here
    (``UpstreamPool.request`` sends them; not to be changed after)."""

    __slots__ = ("lines",)

    def __init__(self, fields: Iterable[tuple[bytes, bytes]]) -> None:
        super().__init__(fields)
        self.lines = _lines(self)


class UpstreamPool:
    def __init__(
        self,
        host: str,
        port: int,
        *,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        max_connections: int | None = None,
        max_idle: int = 1024,
        idle_expiry: float = 30.0,
        high_water: int = 256 << 10,
        max_head: int = 64 << 10,
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self.outbox = Outbox(self.loop)
        self.host = host
        self.port = port
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_idle = max_idle
        self.idle_expiry = idle_expiry
        self.high_water = high_water
        self.max_head = max_head
        self._slots = asyncio.Semaphore(max_connections) if max_connections else None
        self._idle: list[_Conn] = []
        self._host_header = (host if port in (80, 443) else f"{host}:{port}").encode()

    def request(self, method: str, target: str, headers: Iterable[tuple[bytes, bytes]] = (),
                body: bytes = b"") -> _Exchange:
        """Send a request; use as ``async with pool.request(...) as resp``.

        ``Host`` and ``Content-Length`` are added; ``headers`` must not contain them (a
        ``Fields`` gives its lines made once).
        """
        head = (b"%s %s HTTP/1.1\r\nhost: %s\r\ncontent-length: %d\r\n"
                % (method.encode(), target.encode(), self._host_header, len(body)))
        lines = headers.lines if type(headers) is Fields else _lines(headers)
        return _Exchange(self, b"".join((head, lines, b"\r\n", body)))

    def _reusable(self) -> _Conn | None:
        """The newest idle connection still open and not expired (the expired ones closed), or
        None. (Not a coroutine: most requests find one, and ``_connect`` waits.)"""
        idle = self._idle
        if idle:
            now = self.loop.time()
            while idle:
                conn = idle.pop()
                if conn.closed or conn.transport.is_closing():
                    continue
                if now - conn.idle_since > self.idle_expiry:
                    conn.abort()
                    continue
                return conn
        return None

    async def _connect(self) -> _Conn:
        try:
            _, conn = await asyncio.wait_for(
                self.loop.create_connection(lambda: _Conn(self), self.host, self.port),
                self.connect_timeout,
            )
        except asyncio.TimeoutError:
            raise UpstreamTimeout(
                f"connecting to upstream took over {self.connect_timeout:g} s"
            ) from None
        except OSError as e:
            raise UpstreamError(f"cannot connect to upstream: {e}") from e
        return conn

    def _put_idle(self, conn: _Conn) -> None:
        conn.parser = None  # (kept for the next exchange: data meanwhile closes the connection)
        conn.idle_since = self.loop.time()
        if len(self._idle) >= self.max_idle:
            conn.abort()
        else:
            self._idle.append(conn)

    async def close(self) -> None:
        """Close the idle connections (connections in use close when released)."""
        while self._idle:
            self._idle.pop().abort()
