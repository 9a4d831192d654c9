"""Incremental Server-Sent Events decoder (the framing of OpenAI streamed responses).

``SSEDecoder.feed(data)`` takes raw body bytes as they arrive (already de-chunked) and returns the
``data`` payloads of the events completed by them, as bytes, in order. It follows the SSE
specification for the parts an OpenAI stream can use: events end at a blank line; ``\\n``,
``\\r\\n`` and ``\\r`` line endings; several ``data:`` lines join with ``\\n``; one space after
the colon is dropped; comment lines (``:``) and the ``event``/``id``/``retry`` fields are ignored;
an event without data is not dispatched. An incomplete event larger than ``max_event`` bytes
raises ``SSEError`` so an upstream that never frames its output cannot grow memory without bound.
"""

from __future__ import annotations

from typing import Any

import orjson


class SSEError(ValueError):
    pass


class SSEDecoder:
    __slots__ = ("_buf", "max_event")

    def __init__(self, max_event: int = 1 << 20) -> None:
        self._buf = b""
        self.max_event = max_event

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._buf + data if self._buf else data
        # (``find``, not ``in``: a bytes ``in`` first tries its operand as an integer, and the
        # exception that fails costs several times the search, on every piece.)
        if buf.find(b"\r") >= 0:
            # Normalise line endings; keep a trailing CR back (its LF may be in the next piece).
            hold = buf.endswith(b"\r")
            if hold:
                buf = buf[:-1]
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        else:
            hold = False
        out: list[bytes] = []
        start, size = 0, len(buf)
        find = buf.find
        while start < size:
            line_end = find(b"\n", start)
            if line_end < 0 or line_end + 1 == size:
                break
            # The common case: one data line, then the blank line that ends the event.
            if buf[line_end + 1] == 0x0A and buf.startswith(b"data:", start):
                at = start + 6 if buf[start + 5] == 0x20 else start + 5
                out.append(buf[at:line_end])
                start = line_end + 2
                continue
            end = find(b"\n\n", start)
            if end < 0:
                break
            data_lines = []
            for line in buf[start:end].split(b"\n"):
                if line.startswith(b"data:"):
                    data_lines.append(line[6:] if line[5:6] == b" " else line[5:])
                elif line == b"data":
                    data_lines.append(b"")
            if data_lines:
                out.append(b"\n".join(data_lines))
            start = end + 2
        rest = buf[start:] if start else buf
        if hold:
            rest += b"\r"
        if len(rest) > self.max_event:
            raise SSEError(f"SSE event larger than {self.max_event} bytes")
        self._buf = rest
        return out

    @property
    def pending(self) -> bytes:
        """Bytes of an event not yet terminated by a blank line."""
        return self._buf


DONE = b"data: [DONE]\n\n"


def encode(obj: Any) -> bytes:
    """One SSE event carrying ``obj`` as compact JSON."""
    return b"data: " + orjson.dumps(obj) + b"\n\n"
