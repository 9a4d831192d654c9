"""Body kind: a short call header holding the name, then ``{json}`` arguments, no close marker.

    [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}
    [TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}

The header is everything between the opener and the first ``{``; a dialect declares it as a
regular expression with a ``name`` group (Mistral: the name, an optional ``[CALL_ID]ID``, an
optional ``[ARGS]``, which some detokenisers drop). The header is held until its ``{`` arrives,
at most ``limit`` characters, and a header that cannot grow into a match (a space in prose after
the opener) fails at once. The call begins at the ``{`` and its arguments stream as slices of the
model's text; the block ends right after the object.
"""

from __future__ import annotations

import re

from .json import stream_arguments
from ..jsonscan import JsonScanner
from ..dialect import DONE, FAIL, MORE, CallSink, Outcome


# What a header can hold before its "{" arrives: name characters, bracketed special tokens and
# the spaces a header may have between them (the header pattern judges it once "{" is there).
_HEADER_CHARS = re.compile(r"[\s\w.\-:/\[\]]*")


class NamedJsonBody:
    """Read one ``HEADER{json}`` call; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, header: re.Pattern[str], limit: int = 256) -> None:
        self.reason = ""
        self._sink = sink
        self._header = header
        self._limit = limit
        self._scanner: JsonScanner | None = None

    def fast(self, text: str) -> str | None:
        scanner = self._scanner
        return text if scanner is not None and scanner.in_plain_string(text) else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if self._scanner is None:
            pos, outcome = self._read_header(buf, pos, final)
            if outcome is not None:
                return pos, outcome
        return self._read_args(buf, pos, final)

    def _read_header(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        brace = buf.find("{", pos, pos + self._limit + 1)
        if brace == -1:
            head = buf[pos : pos + self._limit + 1]
            if len(head) > self._limit or not _HEADER_CHARS.fullmatch(head):
                return pos, self._fail("not a call: malformed call header")
            return pos, self._fail("truncated") if final else MORE
        found = self._header.fullmatch(buf, pos, brace)
        if found is None:
            return pos, self._fail("not a call: malformed call header")
        why = self._sink.begin(found.group("name"))
        if why:
            return pos, self._fail(why)
        self._scanner = JsonScanner(self._sink.lenient)
        return brace, None

    def _read_args(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        scanner = self._scanner
        assert scanner is not None
        pos, outcome = stream_arguments(self._sink, scanner, buf, pos, final, self._fail)
        if outcome is not None:
            return pos, outcome
        self._sink.end()
        return pos, DONE

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
