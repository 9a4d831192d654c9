"""Server-sent events: an incremental decoder for upstream streams and the encoder for clients.

The decoder takes bytes as they arrive and returns each complete event's ``data`` (lines joined
with newlines), ignoring comments and other fields; partial events wait for their blank line.
"""

from __future__ import annotations

import json
from typing import Any

DONE = b"data: [DONE]\n\n"


class SSEDecoder:
    """Bytes in, the data of each complete event out."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, data: bytes) -> list[str]:
        buf = self._buf + data if self._buf else data
        if b"\r" in buf:
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events = buf.split(b"\n\n")
        self._buf = events.pop()
        return [d for d in (_data(e) for e in events) if d is not None]

    def close(self) -> list[str]:
        """The last event, when the stream ended without its blank line."""
        rest, self._buf = self._buf, b""
        found = _data(rest) if rest.strip() else None
        return [found] if found is not None else []


def _data(event: bytes) -> str | None:
    lines = [line[5:] for line in event.split(b"\n") if line.startswith(b"data:")]
    if not lines:
        return None
    return b"\n".join(line[1:] if line.startswith(b" ") else line for line in lines).decode("utf-8", "replace")


def encode(obj: Any) -> bytes:
    """One SSE event carrying ``obj`` as JSON."""
    return b"data: " + json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"
