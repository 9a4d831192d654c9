"""Which sans-I/O WebSocket library the gateway's socket transport is built on: wsproto or
websockets' ``ServerProtocol``, measured the way the gateway uses one.

Per library: the handshake from headers already parsed by the HTTP server (no second parse),
server text frames a second (a stream's events: 160-byte JSON objects), client frames a second
(a masked 8 KiB ``response.create``), and the memory one connection holds once idle after a
turn (tracemalloc, which sees zlib's buffers), each with and without permessage-deflate as the
gateway negotiates it (the client's messages without context takeover, the server's with one
context on a 1 KiB window; wsproto sets no memory level, so its context is larger).

    python benchmarks/stack/websocket_libs.py
"""

from __future__ import annotations

import base64
import gc
import os
import time
import tracemalloc

import wsproto
import wsproto.events as wse
from wsproto.extensions import PerMessageDeflate
from wsproto.handshake import H11Handshake
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory,
    ServerPerMessageDeflateFactory,
)
from websockets.client import ClientProtocol
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

EVENT = (b'{"type":"response.output_text.delta","item_id":"msg_0123456789abcdef","output_index":0,'
         b'"content_index":0,"logprobs":[],"delta":"some words of text","sequence_number":12}')
KEY = base64.b64encode(os.urandom(16)).decode()
OFFER = "permessage-deflate; client_max_window_bits"


def _headers(deflate: bool) -> list[tuple[str, str]]:
    h = [("host", "127.0.0.1"), ("connection", "Upgrade"), ("upgrade", "websocket"),
         ("sec-websocket-version", "13"), ("sec-websocket-key", KEY)]
    return h + [("sec-websocket-extensions", OFFER)] if deflate else h


def _client_frame(deflate: bool) -> bytes:
    """A masked 8 KiB text message as a client sends it (websockets' client makes it)."""
    client = ClientProtocol(parse_uri("ws://127.0.0.1/v1/responses"),
                            extensions=[ClientPerMessageDeflateFactory(client_no_context_takeover=True)]
                            if deflate else None)
    request = client.connect()
    client.send_request(request)
    server = ServerProtocol(extensions=_ws_factory(deflate))
    server.receive_data(b"".join(client.data_to_send()))
    server.send_response(server.accept(server.events_received()[0]))
    client.receive_data(b"".join(server.data_to_send()))
    body = b'{"type":"response.create","input":[' + b",".join(
        b'{"type":"message","role":"user","content":"item %d of a long conversation"}' % i for i in range(160)) + b"]}"
    client.send_text(body[:8192])
    return b"".join(client.data_to_send())


def _ws_factory(deflate: bool) -> list[ServerPerMessageDeflateFactory] | None:
    return [ServerPerMessageDeflateFactory(client_no_context_takeover=True, server_max_window_bits=10,
                                           compress_settings={"memLevel": 3})] if deflate else None


def websockets_server(deflate: bool) -> ServerProtocol:
    # Its server protocol starts by parsing the request head itself (no entry point for a head
    # already parsed): the head is given to it again, as bytes.
    proto = ServerProtocol(extensions=_ws_factory(deflate), max_size=16 << 20)
    head = "GET /v1/responses HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in _headers(deflate)) + "\r\n"
    proto.receive_data(head.encode())
    proto.send_response(proto.accept(proto.events_received()[0]))
    proto.data_to_send()
    return proto


def wsproto_server(deflate: bool) -> wsproto.Connection:
    hs = H11Handshake(wsproto.ConnectionType.SERVER)
    hs.initiate_upgrade_connection([(k.encode(), v.encode()) for k, v in _headers(deflate)], "/v1/responses")
    (request,) = hs.events()
    ext = [PerMessageDeflate(client_no_context_takeover=True, server_max_window_bits=10)] if deflate else []
    hs.send(wse.AcceptConnection(extensions=ext))
    return hs.connection


def _rate(fn, seconds: float = 0.6) -> float:
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(200):
            fn()
        n += 200
    return n / elapsed


def measure(lib: str, deflate: bool) -> dict[str, float]:
    make = websockets_server if lib == "websockets" else wsproto_server
    handshake = _rate(lambda: make(deflate))
    server = make(deflate)
    inbound = _client_frame(deflate)
    if lib == "websockets":
        def send() -> None:
            server.send_text(EVENT)
            server.data_to_send()

        def receive() -> None:
            server.receive_data(inbound)
            server.events_received()[0].data.decode()  # (its UTF-8 check: the gateway's to make)
    else:
        text = EVENT.decode()

        def send() -> None:
            server.send(wse.TextMessage(text))

        def receive() -> None:
            server.receive_data(inbound)
            list(server.events())
    out = {"handshake_per_s": handshake, "send_frames_per_s": _rate(send), "recv_frames_per_s": _rate(receive)}
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = []
    for _ in range(200):
        s = make(deflate)
        if lib == "websockets":
            s.receive_data(inbound)
            s.events_received()
            s.send_text(EVENT)
            s.data_to_send()
        else:
            s.receive_data(inbound)
            list(s.events())
            s.send(wse.TextMessage(EVENT.decode()))
        held.append(s)
    gc.collect()
    out["idle_bytes_per_conn"] = (tracemalloc.get_traced_memory()[0] - before) / len(held)
    tracemalloc.stop()
    return out


def main() -> None:
    print(f"{'library':<11} {'deflate':<8} {'handshakes/s':>13} {'sent frames/s':>14} "
          f"{'recv 8KiB/s':>12} {'idle bytes/conn':>16}")
    for lib in ("websockets", "wsproto"):
        for deflate in (False, True):
            m = measure(lib, deflate)
            print(f"{lib:<11} {str(deflate):<8} {m['handshake_per_s']:>13,.0f} {m['send_frames_per_s']:>14,.0f} "
                  f"{m['recv_frames_per_s']:>12,.0f} {m['idle_bytes_per_conn']:>16,.0f}")


if __name__ == "__main__":
    main()
