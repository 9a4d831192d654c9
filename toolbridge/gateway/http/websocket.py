"""WebSocket (RFC 6455) on a connection that ``http.server`` upgraded, for an application that
reads whole text messages and writes text messages.

The protocol (framing, masking, control frames, fragmentation, the close handshake,
``permessage-deflate``) is websockets' sans-I/O ``ServerProtocol``; this module only moves
bytes between it and the connection, joins a fragmented message, checks a text message's UTF-8
and keeps the limits. websockets was chosen over wsproto by measurement
(``benchmarks/stack/websocket_libs.py``): about 3 times the frames a second each way, for about
12 KB against 2 KB per idle connection, both far within what a socket may hold.

``accept(req, resp, make_app, limits, deflate)`` answers the handshake (or refuses a broken one
with 400) and gives every whole message to the application (``App``). ``permessage-deflate`` is
accepted when offered (unless not ``deflate``: ``serve --no-websocket-deflate``). What the client
sends is read with context takeover, as the client chooses: one decompressor for the socket's
life, whose window holds the turn before, so that a turn's message (the same tools and
instructions each turn, and the new items) comes as little more than references to the last one
(measured on the socket bench's second turn: 114 bytes instead of 444 and 1.9 us to inflate
instead of 6.9 with a decompressor made for each message; it costs a socket that has sent a
compressed message some 40 KB, zlib's window and state). What the gateway sends shares one
context during an answer, dropped between answers (``MEMORY_LEVEL``). Limits (``SocketLimits``): a message larger than
``max_message`` closes the socket with 1009; ``idle_timeout`` seconds without a message while
the application is not busy, or ``max_lifetime`` seconds after the handshake (once not busy),
close it with 1001 and a reason saying which, after the application's last word
(``App.farewell``); a close handshake the client does not finish in ``close_timeout`` seconds
ends with the connection cut. A text message that is not UTF-8 closes it with 1007; every other
protocol violation with the code websockets gives it (1002 mostly).
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from websockets.extensions.base import Extension
from websockets.extensions.permessage_deflate import PerMessageDeflate, ServerPerMessageDeflateFactory
from websockets.frames import CTRL_OPCODES, CloseCode, Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.typing import ExtensionParameter

from .server import Request, Response, Tunnel

# The messages of one answer (its events: deltas of ~160 bytes, and the response object three
# times, 1.4-2 KB) share one zlib context on the full 32 KiB window, which finds the repeated
# response object: measured on a tool-call turn's 13 messages, 63 us and 20% of their size, where
# a 1 KiB window took 190 us for 36% and a context per message (no context takeover) 25-90 us a
# message to set up. A message under ``RAW_BELOW`` bytes (a delta) goes uncompressed (RSV1
# unset, which RFC 7692 lets any message be): its sync flush alone cost ~10 us for a few dozen
# bytes saved, and the socket's answer cost more than the same answer over HTTP. The context is
# made at the answer's first compressed message and dropped between answers (``rest``): an idle
# socket holds none (a context is 150 KB). That needs no negotiation: a message that refers to
# nothing before it is read the same by any client, context or not.
MEMORY_LEVEL = 5
LEVEL = 1  # (zlib's fastest: on these messages as small as its default, for less time)
RAW_BELOW = 4096
# websockets logs every closed connection at INFO: one line per socket is the gateway's to write.
_quiet = logging.getLogger("toolbridge.gateway.websocket.protocol")
_quiet.setLevel(logging.WARNING)


class _Deflate(PerMessageDeflate):
    """websockets' ``permessage-deflate``, with the shared context made when first needed
    (without context takeover websockets makes one per message itself; a message under
    ``RAW_BELOW`` bytes never reaches it: ``WebSocket.send`` passes it no extension), and the
    client's decompressor made at its first compressed message (a socket that never sends one
    holds none: zlib's state is 7 KB)."""

    def decode(self, frame: Frame, *, max_size: int | None = None) -> Frame:
        if frame.rsv1 and not self.remote_no_context_takeover and not hasattr(self, "decoder"):
            self.decoder = zlib.decompressobj(wbits=-self.remote_max_window_bits)
        return super().decode(frame, max_size=max_size)

    def encode(self, frame: Frame) -> Frame:
        if frame.opcode not in CTRL_OPCODES and not self.local_no_context_takeover and not hasattr(self, "encoder"):
            self.encoder = zlib.compressobj(wbits=-self.local_max_window_bits, **self.compress_settings)
        return super().encode(frame)


class _DeflateFactory(ServerPerMessageDeflateFactory):
    def process_request_params(self, params: Sequence[ExtensionParameter], accepted_extensions: Sequence[Extension],
                               ) -> tuple[list[ExtensionParameter], PerMessageDeflate]:
        response, extension = super().process_request_params(params, accepted_extensions)
        extension.__class__ = _Deflate  # (the same object, its coding as above)
        if hasattr(extension, "decoder"):
            del extension.decoder  # (made at the first compressed message: ``_Deflate.decode``)
        return response, extension


@dataclass(frozen=True)
class SocketLimits:
    max_message: int = 8 << 20  # bytes of one message (after decompression); 1009 above
    idle_timeout: float = 900.0  # seconds without a message while not busy; then closed (1001)
    max_lifetime: float = 3600.0  # seconds a socket lives (OpenAI's: 60 minutes); then closed (1001)
    close_timeout: float = 10.0  # seconds the client has to answer a close frame


class App(Protocol):
    """The application on a socket."""

    busy: bool  # a message is being answered: the idle and lifetime limits wait

    def message(self, data: bytes, text: bool) -> None: ...  # one whole message (text: UTF-8 checked)
    def closed(self) -> None: ...  # the socket is gone (either side): stop, free everything
    def farewell(self, code: str, message: str) -> None: ...  # a limit ends the socket: say so first


def _offer_head(req: Request) -> bytes:
    """The request head again, for the protocol's own handshake check (it has no entry point
    for a head already parsed)."""
    lines = [b"%s %s HTTP/1.1\r\n" % (req.method.encode(), req.target.encode("latin-1"))]
    lines += [b"%s: %s\r\n" % (name, value) for name, value in req.headers]
    return b"".join(lines) + b"\r\n"


def accept(req: Request, resp: Response, make_app: Callable[[WebSocket], App],
           limits: SocketLimits = SocketLimits(), deflate: bool = True) -> WebSocket | str:
    """Upgrade ``req`` to a WebSocket running ``make_app(socket)``, accepting
    ``permessage-deflate`` when offered unless not ``deflate``; or, when the handshake is broken
    (no key, a wrong version ...), the reason, for the caller to answer with 400."""
    factories = [_DeflateFactory(compress_settings={"memLevel": MEMORY_LEVEL, "level": LEVEL})] if deflate else []
    proto = ServerProtocol(extensions=factories, max_size=limits.max_message, logger=_quiet)
    proto.receive_data(_offer_head(req))
    events = proto.events_received()
    response = proto.accept(events[0]) if events else None
    if response is None or response.status_code != 101:
        return "not a valid WebSocket handshake" if response is None else response.body.decode().strip()
    proto.send_response(response)
    socket = WebSocket(proto, limits)
    socket.tunnel = resp.upgrade(socket)
    socket.app = make_app(socket)
    socket.flush()
    socket.start()
    return socket


class WebSocket:
    """One server socket: the protocol, the connection and the limits' timers."""

    def __init__(self, proto: ServerProtocol, limits: SocketLimits) -> None:
        self.proto = proto
        self.limits = limits
        self.tunnel: Tunnel = None  # type: ignore[assignment]  # (set by accept)
        self.app: App = None  # type: ignore[assignment]
        self._parts: list[bytes] = []  # a fragmented message's frames so far
        self._frame = Frame(Opcode.TEXT, b"")  # (what ``send`` serializes each message with)
        self._text = True
        self._loop = asyncio.get_running_loop()
        self._idle_since = self._loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self._closer: asyncio.TimerHandle | None = None  # cuts a close handshake left unanswered
        self._ends = 0.0  # when the lifetime ends
        self._ending = ""  # a limit was reached while busy: close once not busy

    # ---------------------------------------------------------------- writing

    @property
    def open(self) -> bool:
        return self.proto.state is State.OPEN and not self.tunnel.closed

    def send(self, messages: list[bytes]) -> bool:
        """Send text messages (UTF-8 JSON), in order, in one write; nothing once the socket is
        closing (False). Each is the protocol's own frame (``Frame.serialize``, what
        ``send_text`` appends to the protocol's output), made here so that an answer's dozen
        events cost one join and one write instead of a pass through the protocol's buffer each;
        a message under ``RAW_BELOW`` bytes passes no extension: it goes raw (see ``RAW_BELOW``)."""
        if not self.open:
            return False
        self.flush()  # (what the protocol holds, a pong, goes first)
        extensions = self.proto.extensions or None
        frame, frames = self._frame, []  # (one Frame, its data set for each message)
        for data in messages:
            frame.data = data
            frames.append(frame.serialize(mask=False, extensions=extensions if len(data) >= RAW_BELOW else None))
        frame.data = b""
        self.tunnel.write(b"".join(frames))
        if extensions and not self.app.busy:  # (an error message between answers: no context kept for it)
            self.rest()
        return True

    def close(self, code: int, reason: str) -> None:
        """Start the close handshake; the connection is cut if the client does not answer."""
        if self.open:
            self.proto.send_close(code, reason[:120])  # (a close frame's reason: at most 123 bytes)
            self.flush()
            self._expect_close()

    def _expect_close(self) -> None:
        if self._closer is None and not self.tunnel.closed:
            self._closer = self._loop.call_later(self.limits.close_timeout, self.tunnel.abort)

    def flush(self) -> None:
        chunks = self.proto.data_to_send()
        if not chunks:
            return
        eof = chunks[-1] == b""  # the protocol's "close the TCP connection now"
        self.tunnel.write(b"".join(chunks))
        if eof:
            self.tunnel.close()

    @property
    def paused(self) -> bool:
        return self.tunnel.paused

    async def drain(self) -> None:
        await self.tunnel.drain()

    def rest(self) -> None:
        """Drop the compression context of the messages sent (see ``MEMORY_LEVEL``); the next
        compressed message makes a new one."""
        for extension in self.proto.extensions:
            if isinstance(extension, PerMessageDeflate) and not extension.local_no_context_takeover:
                if hasattr(extension, "encoder"):
                    del extension.encoder  # (websockets' own attribute, as it drops it itself)

    # ---------------------------------------------------------------- reading (the Receiver)

    def data_received(self, data: bytes) -> None:
        proto = self.proto
        proto.receive_data(data)
        events = proto.events_received()
        self.flush()  # pongs, the answer to a close, a protocol error's close
        for frame in events:
            op = frame.opcode
            if op is Opcode.TEXT or op is Opcode.BINARY:
                self._parts, self._text = [frame.data], op is Opcode.TEXT
            elif op is Opcode.CONT:
                self._parts.append(frame.data)
            else:
                continue
            if frame.fin:
                self._deliver(b"".join(self._parts) if len(self._parts) > 1 else self._parts[0])
        if proto.close_expected():
            self._expect_close()

    def _deliver(self, data: bytes) -> None:
        self._parts = []
        if self._text and not data.isascii():  # (ASCII is UTF-8: most JSON is, and needs no decoding)
            try:
                data.decode()
            except UnicodeDecodeError:
                self.close(CloseCode.INVALID_DATA, "a text message that is not UTF-8")
                return
        if self.open:
            self._idle_since = self._loop.time()
            self.app.message(bytes(data), self._text)

    def connection_lost(self) -> None:
        for timer in (self._timer, self._closer):
            if timer is not None:
                timer.cancel()
        self._timer = self._closer = None
        self.app.closed()

    def shutdown(self) -> None:
        """The server is closing: close now if not busy, else once the answer is sent."""
        self._limit("server_shutting_down", "the server is shutting down")

    # ---------------------------------------------------------------- limits

    def start(self) -> None:
        self.rest()
        self._ends = self._loop.time() + self.limits.max_lifetime
        self._arm()

    def idle(self) -> None:
        """The application is not busy any more: the limits run again, and the compression
        context goes until the next message."""
        self._idle_since = self._loop.time()
        self.rest()
        if self._ending:
            self._limit(*self._ending.split(" ", 1))

    def _arm(self) -> None:
        due = min(self._idle_since + self.limits.idle_timeout, self._ends)
        self._timer = self._loop.call_at(due, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        now = self._loop.time()
        if now >= self._ends:
            self._limit("websocket_connection_limit_reached",
                        f"the socket's lifetime ({self.limits.max_lifetime:g} s) is over: open a new one")
            return
        if self.app.busy:
            self._idle_since = now  # (an answer running is not idleness)
        elif now >= self._idle_since + self.limits.idle_timeout:
            self._limit("websocket_idle_timeout",
                        f"no message for {self.limits.idle_timeout:g} s: open a new socket to go on")
            return
        self._arm()

    def _limit(self, code: str, message: str) -> None:
        if not self.open:
            return
        if self.app.busy:
            self._ending = f"{code} {message}"
            return
        self.app.farewell(code, message)
        self.close(CloseCode.GOING_AWAY, message)
