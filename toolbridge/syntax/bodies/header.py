"""Body kind: a role token's header, read up to the content-kind token that decides the block.

    <|message_model|>get_weather<|content_invoke_tool_json|>{"name": "get_weather", "args": {}}

Block-structured formats (Inkling) open each block with a role token, an optional short label
(metadata: the tool's name) and a kind token. A kind with a reader (a tool call) is read by it;
any other kind is handed back to the parser just before its token, which the dialect declares as
reasoning's opener or leaves to content (a delimiter that the gateway drops with the family's
other special tokens). The role token and label are structure, not text. A header that is long,
crosses a line or meets another special token is not a header (the block is rejected: prose
stays prose); so is one cut off by the end of output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..markers import marker_set
from ..dialect import DONE, FAIL, MORE, Body, BodyFactory, CallSink, Outcome


_SPECIAL = re.compile(r"<\|[a-z_]+\|>")


class HeaderBody:
    """Read a header up to its kind token, then hand over; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, kinds: tuple[str, ...],
                 readers: Mapping[str, BodyFactory], limit: int = 128) -> None:
        self.reason = ""
        self._sink = sink
        self._kinds = marker_set(kinds)
        self._readers = readers
        self._limit = limit
        self._body: Body | None = None

    def fast(self, text: str) -> str | None:
        return self._body.fast(text) if self._body is not None else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if self._body is None:
            window = buf[pos : pos + self._limit + self._kinds.longest + 1]  # no search beyond the header
            found = self._kinds.search(window, 0)
            head = window[: found.start() if found else len(window) - self._kinds.holdback(window, 0)]
            if len(head) > self._limit or "\n" in head or _SPECIAL.search(head):
                self.reason = "not a message header"
                return pos, FAIL
            if found is None:
                if not final:
                    return pos, MORE
                self.reason = "no content kind after the role token"
                return pos, FAIL
            reader = self._readers.get(found.group())
            if reader is None:
                return pos + found.start(), DONE  # the parser reads the kind token itself
            self._body = reader(self._sink, found.group())
            pos += found.end()
        pos, outcome = self._body.feed(buf, pos, final)
        self.reason = self._body.reason
        return pos, outcome
