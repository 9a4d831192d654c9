"""Plain-content chunks: the fronts' fast path.

Nearly every upstream chunk has one shape (one choice, index 0, no finish, no usage, a delta
holding only ``content``): ``plain_content`` reads such a chunk, and ``PlainBytes`` reads its
content from its bytes without decoding the chunk (see its docstring for why that is exact).
"""

from __future__ import annotations

from typing import Any

import orjson


def plain_content(chunk: dict[str, Any]) -> str | None:
    """The content of a chunk of the shape nearly every chunk has (one choice, index 0, no
    finish, no usage, a delta holding only ``content``), or None: the fronts' fast path."""
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1 or chunk.get("usage"):
        return None
    ch = choices[0]
    if type(ch) is not dict or ch.get("index") or ch.get("finish_reason"):
        return None
    delta = ch.get("delta")
    if type(delta) is dict and len(delta) == 1 and type(delta.get("content")) is str:
        return delta["content"]  # type: ignore[no-any-return]
    return None


_CONTENT_KEY = b'"content":'
_loads = orjson.loads
_LEARN_TRIES = 4  # chunks a stream may show before the shape is given up (logprobs, ...)


class PlainBytes:
    """The content of a plain-content chunk (``plain_content``) read from its bytes, without
    decoding the chunk.

    Upstreams repeat one envelope in every chunk (id, model, fingerprint, index, null finish):
    the chunks of a stream differ only in the content string. ``learn`` takes a decoded
    plain-content chunk and keeps the bytes before and after its content string; ``text`` reads
    a chunk that has exactly those bytes around one JSON string as that string. That is exact:
    ``"content":`` outside a string can only be a key; learning requires it once in the chunk;
    and orjson reads the middle as one string or not at all (anything else there, even a valid
    string followed by more, fails and the chunk is decoded whole).
    """

    __slots__ = ("_prefix", "_suffix", "_start", "_stop", "_tries")

    def __init__(self) -> None:
        self._prefix: bytes | None = None
        self._suffix = b""
        self._start = 0
        self._stop = -1  # the content string's end, from the end of the chunk
        self._tries = _LEARN_TRIES

    @property
    def learning(self) -> bool:
        return self._prefix is None and self._tries > 0

    def learn(self, raw: bytes, chunk: dict[str, Any]) -> None:
        """Keep the envelope of ``raw`` (``chunk`` decoded) when it is a plain-content chunk."""
        self._tries -= 1
        text = plain_content(chunk)
        at = raw.find(_CONTENT_KEY)
        if text is None or at < 0 or raw.find(_CONTENT_KEY, at + 1) >= 0:
            return
        start = at + len(_CONTENT_KEY)
        while raw[start:start + 1] in (b" ", b"\t", b"\n", b"\r"):
            start += 1
        end = _string_end(raw, start)
        if end < 0 or end == len(raw):  # (a chunk is an object: its end follows the string)
            return
        try:
            if orjson.loads(raw[start:end]) != text:
                return
        except orjson.JSONDecodeError:
            return
        self._prefix, self._suffix, self._start, self._stop = raw[:start], raw[end:], start, end - len(raw)

    def text(self, raw: bytes) -> str | None:
        """The content of ``raw`` when it is the learnt envelope around one string, else None.

        (A raw shorter than the envelope, its two ends overlapping, leaves less than a string
        between them, which the decoder refuses.)"""
        prefix = self._prefix
        if prefix is None or not raw.startswith(prefix) or not raw.endswith(self._suffix):
            return None
        try:
            text = _loads(raw[self._start:self._stop])
        except orjson.JSONDecodeError:
            return None
        return text if type(text) is str else None


def _string_end(raw: bytes, start: int) -> int:
    """The index after the JSON string that opens at ``raw[start]``; -1 when there is none."""
    if raw[start:start + 1] != b'"':
        return -1
    i = start + 1
    while True:
        i = raw.find(b'"', i)
        if i < 0:
            return -1
        j = i
        while raw[j - 1] == 0x5C:  # a backslash: the quote is escaped when they are odd
            j -= 1
        if (i - j) % 2 == 0:
            return i + 1
        i += 1
