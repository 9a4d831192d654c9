"""Body kind: the whole answer is one JSON object whose keys say what it holds.

    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "1"}]}
    {"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    {"response": "It is sunny in Paris."}

llama.cpp's generic format (for templates with no tool syntax of their own) constrains the answer
to this envelope. The envelope's own punctuation is read here; ``tool_calls`` is read by the
shared list body and ``tool_call`` by the JSON envelope body, so calls stream as slices of the
model's text; ``response`` and ``content`` are JSON strings whose decoded text is content (sent
and settled when the string ends, since an escape can only be decoded whole). Other keys (``id``,
``thoughts``) are skipped. An object whose first key is none of these is not an envelope and
stays content; so is a broken or cut-off envelope, except for calls already complete, which
stand (each is settled as it ends).
"""

from __future__ import annotations

import json

from .array import ARRAY, ElementSink, JsonArrayBody
from .json import JsonEnvelopeBody, close_tail
from ..jsonscan import ERROR, JsonScanner
from ..markers import skip_ws
from ..dialect import DONE, FAIL, MORE, UNCLOSED_AT_END, Body, CallSink, Outcome


TEXT_KEYS = ("response", "content")
CALL_KEYS = ("tool_calls", "tool_call")


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    LEAD = 0  # before the opening brace
    KEY = 1  # expecting a key (or "}" right after "{")
    COLON = 2
    VALUE = 3  # a value: text, calls, or one to skip
    NEXT = 4  # expecting "," or "}"
    TAIL = 5  # after the object, expecting the close marker


class EnvelopeBody:
    """Read one answer envelope; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, close: str = "") -> None:
        self.reason = ""
        self._sink = sink
        self._close = close  # read after the object (a fence), when not empty
        self._state = _S.LEAD
        self._keys = 0
        self._key = ""
        self._scanner: JsonScanner | None = None  # a key, or a text or skipped value
        self._text: list[str] = []
        self._inner: Body | None = None  # the calls value
        self._element: ElementSink | None = None  # the sink of a single tool_call
        self._settled = False  # something was emitted: a later failure keeps it

    def fast(self, text: str) -> str | None:
        return self._inner.fast(text) if self._inner is not None else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            if self._inner is not None:
                pos, outcome = self._read_calls(buf, pos, final)
            elif self._scanner is not None:
                pos, outcome = self._scan(buf, pos, final)
            else:
                pos = skip_ws(buf, pos)
                if pos >= len(buf):
                    return pos, self._at_end(final)
                pos, outcome = self._punctuation(buf, pos, final)
            if outcome is not None:
                return pos, outcome

    def _punctuation(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        ch, state = buf[pos], self._state
        if state == _S.TAIL:
            return close_tail(self._sink, buf, pos, final, self._close)
        if state == _S.LEAD:
            if ch != "{":
                return pos, self._fail("not a JSON object")
            self._state = _S.KEY
        elif state == _S.KEY and ch == '"':
            self._scanner, self._text = JsonScanner(self._sink.lenient), []
            return pos, None
        elif state == _S.COLON and ch == ":":
            self._state = _S.VALUE
        elif state == _S.VALUE:
            self._start_value()
            return pos, None
        elif state == _S.NEXT and ch in ",}":
            self._state = _S.KEY
            if ch == "}":
                return self._finish(buf, pos + 1)
        else:
            return pos, self._fail("malformed answer envelope")
        return pos + 1, None

    def _start_value(self) -> None:
        """Pick the reader of the value that starts here."""
        if self._key == "tool_calls":
            self._inner = JsonArrayBody(self._sink, "[", shape=ARRAY)
        elif self._key == "tool_call":
            self._element = ElementSink(self._sink)
            self._inner = JsonEnvelopeBody(self._element, "", close="")
        else:
            self._scanner, self._text = JsonScanner(self._sink.lenient), []

    def _scan(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        scanner = self._scanner
        assert scanner is not None
        pos = scanner.feed(buf, pos, final)
        self._text.append(scanner.take())
        if scanner.state == ERROR:
            return pos, self._fail("truncated" if scanner.error == "truncated" else "malformed answer envelope")
        if not scanner.done:
            return pos, MORE if not final else self._fail("truncated")
        value, self._scanner = json.loads("".join(self._text)), None
        if self._state == _S.KEY:
            return pos, self._accept_key(value)
        self._state = _S.NEXT
        if self._key in TEXT_KEYS and isinstance(value, str):
            self._sink.text(value)
            self._sink.keep(pos)
            self._settled = True
        return pos, None

    def _accept_key(self, key: str) -> Outcome | None:
        self._keys += 1
        if self._keys == 1 and key not in TEXT_KEYS + CALL_KEYS:
            return self._fail("not an answer envelope")
        self._key, self._state = key, _S.COLON
        return None

    def _read_calls(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        inner = self._inner
        assert inner is not None
        pos, outcome = inner.feed(buf, pos, final)
        if outcome is FAIL:
            return pos, self._fail(inner.reason)
        single_done = self._element is not None and self._element.ended
        if outcome is MORE and not single_done:
            return pos, MORE
        self._inner, self._element, self._state, self._settled = None, None, _S.NEXT, True
        self._sink.keep(pos)
        return pos, None

    def _finish(self, buf: str, pos: int) -> tuple[int, Outcome | None]:
        if not self._settled:
            return pos, self._fail("the envelope holds nothing")
        if not self._close:
            return pos, DONE
        self._state = _S.TAIL
        return pos, None

    def _at_end(self, final: bool) -> Outcome:
        if not final:
            return MORE
        if self._state in (_S.NEXT, _S.TAIL) and self._settled:
            self._sink.repaired(UNCLOSED_AT_END)
            return DONE
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
