"""Bytes written in one pass of the event loop, handed to the kernel together when it ends.

Every write to a socket wakes the process reading its other end, and when that process sleeps
on an idle core the wake-up costs the writer's kernel more than the write itself: under load
about a fifth of the gateway's CPU time went there. Here a connection's writes are held until
the callbacks of the loop's current pass are done, then every connection's are written in one
callback (``loop.call_soon``: after the callbacks already due, before the loop waits again), so
the answers and upstream requests of one pass reach their readers in one burst, and a
connection's several writes in one pass (a stream's events) go as one.

A connection holds its bytes in ``held`` (None: nothing held) and has ``transport``; whatever
it writes goes through ``Outbox.write``, so its order is kept, and ``flush`` writes what it
holds before it closes or aborts. A connection closed meanwhile has nothing written.
"""

from __future__ import annotations

import asyncio
from typing import Any


class Outbox:
    """The connections of one event loop that hold bytes to write in this pass."""

    __slots__ = ("_call_soon", "_due")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._call_soon = loop.call_soon
        self._due: list[Any] = []

    def write(self, conn: Any, data: bytes) -> None:
        held = conn.held
        if held is not None:
            held.append(data)
            return
        conn.held = [data]
        if not self._due:
            self._call_soon(self._flush)
        self._due.append(conn)

    def _flush(self) -> None:
        due, self._due = self._due, []
        for conn in due:
            flush(conn)


def flush(conn: Any) -> None:
    """``conn``'s held bytes written now (before it closes or aborts)."""
    held = conn.held
    if held is None:
        return
    conn.held = None
    if not conn.transport.is_closing():
        conn.transport.write(held[0] if len(held) == 1 else b"".join(held))
