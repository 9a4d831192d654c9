"""Request bodies decoded with their tools read as a list already made (``KnownTools``).

Agents send the same tools with every request, as the same bytes: decoding them is most of the
cost of decoding a small request, and a front then encodes them again to find what it made of
them before. A front that has kept what a tools list made ``learn``s the list's JSON text (where
a ``"tools":`` key of the body it came in is followed by it, as a client writing compact JSON
sends it); ``decode`` then finds such a text after a ``"tools":`` key of a body and decodes the
body with a number written in its place (``STAND_IN``, which the rest of the body must not
hold: so the number found at the top level's ``tools`` is the one written, and the text is that
field's), then puts the kept list there: the same value ``orjson.loads`` gives, the same errors.
The kept lists are never changed by their users; ``kept`` tells a front which of its lists a
body holds (``fields_key`` then keys what the front made of the request's fields by that text,
not by the tools encoded again). Each front has its own.
"""

from __future__ import annotations

import threading
from typing import Any

import orjson

from ..turn import fields_text, shallow_body

_TOOLS_KEY = b'"tools":'
STAND_IN = 7340981237
_STAND_IN_TEXT = str(STAND_IN).encode()  # (an integer has one spelling in JSON)
_HEAD = 48  # bytes of a known text it is looked up by


class KnownTools:
    """One front's known tools texts (``kept``: what it keeps with a list, the list first), at
    most ``size``, the oldest forgotten first."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        # (text, kept, its brackets), by the text's first ``_HEAD`` bytes
        self._heads: dict[bytes, tuple[tuple[bytes, Any, int], ...]] = {}
        self._lists: dict[int, tuple[Any, bytes]] = {}  # (kept, text), by their list's id
        self._lock = threading.Lock()

    def kept(self, tools: Any) -> tuple[Any, bytes] | None:
        """``(kept, text)`` when ``tools`` is a kept list itself (as a body ``decode`` gave)."""
        known = self._lists.get(id(tools))
        return known if known is not None and known[0][0] is tools else None

    def fields_key(self, body: dict[str, Any], without: tuple[str, ...]) -> Any:
        """What a front keeps a request's translated fields by (``turn.fields_text`` of them but
        those ``without``; None: they are not kept), its tools not encoded again when they are a
        known list: their text stands for them beside the other fields' (a key of another type
        than the text of all of them)."""
        fields = dict(body)
        for key in without:
            fields.pop(key, None)
        known = self.kept(fields.get("tools"))
        if known is None:
            return fields_text(fields)
        del fields["tools"]
        rest = fields_text(fields)
        return None if rest is None else (known[1], rest)

    def learn_own(self, raw: bytes, tools: Any) -> None:
        """Know a request's own tools list (kept alone), once: a list its front kept what it
        made of (so it passed its checks)."""
        if isinstance(tools, list) and tools and self.kept(tools) is None:
            self.learn(raw, (tools,), orjson.dumps(tools))

    def decode(self, raw: bytes) -> tuple[Any, bool]:
        """The request body ``raw`` decoded (``orjson.loads``: the same value, the same errors) and
        whether it is shallow (``turn.shallow_body``), a known tools text read as its kept list."""
        at = raw.find(_TOOLS_KEY) if self._heads else -1
        while at >= 0:
            start = at + len(_TOOLS_KEY)
            for text, kept, brackets in self._heads.get(raw[start:start + _HEAD], ()):
                if raw.startswith(text, start):
                    return _decoded(raw, start, text, kept, brackets)
            at = raw.find(_TOOLS_KEY, start)
        return orjson.loads(raw), shallow_body(raw)

    def learn(self, raw: bytes, kept: Any, text: bytes) -> None:
        """Know ``text``, the JSON text of the list ``kept[0]``, when it follows a ``"tools":``
        key of ``raw``."""
        at = raw.find(_TOOLS_KEY)
        while at >= 0:
            start = at + len(_TOOLS_KEY)
            if raw.startswith(text, start):
                break
            at = raw.find(_TOOLS_KEY, start)
        else:
            return
        head, entry = text[:_HEAD], (text, kept, text.count(b"{") + text.count(b"["))
        with self._lock:
            if len(self._lists) >= self._size:  # the oldest goes first
                self._forget(*next(iter(self._lists.values())))
            self._lists[id(kept[0])] = (kept, text)
            self._heads[head] = (*self._heads.get(head, ()), entry)

    def _forget(self, kept: Any, text: bytes) -> None:
        del self._lists[id(kept[0])]
        head = text[:_HEAD]
        entries = tuple(e for e in self._heads.get(head, ()) if e[1] is not kept)
        if entries:
            self._heads[head] = entries
        else:
            self._heads.pop(head, None)


def _decoded(raw: bytes, start: int, text: bytes, kept: Any, brackets: int) -> tuple[Any, bool]:
    rest = raw[:start] + _STAND_IN_TEXT + raw[start + len(text):]
    if rest.count(_STAND_IN_TEXT) == 1:  # the one written (the body's text but the tools' holds none)
        try:
            value = orjson.loads(rest)
        except orjson.JSONDecodeError:
            value = None  # (the error the body's own decoding gives, below)
        if type(value) is dict and type(value.get("tools")) is int and value["tools"] == STAND_IN:
            value["tools"] = kept[0]
            return value, shallow_body(rest, brackets)  # (the stand-in has none)
    return orjson.loads(raw), shallow_body(raw)
