"""Body kind: Gemma's dict syntax, ``call:NAME{key:value,...}``, converted to JSON as it streams.

    <|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3,opts:{units:[<|"|>c<|"|>]}}<tool_call|>

Gemma 4 delimits strings with ``<|"|>`` on both sides, FunctionGemma with ``<escape>``; neither
escapes anything inside. Keys are bare (a quoted key is accepted too); values are strings,
``{...}`` objects, ``[...]`` arrays, or bare tokens (numbers, ``true``/``false``/``null``, and
the Python spellings ``True``/``False``/``None`` that a Jinja template writes).

Strategy: a stack of open containers plus one state; each character outside strings is examined
once, string contents are found with one ``str.find`` per chunk and stream at once as
JSON-escaped fragments (only a tail that may still become the delimiter is held back). The call
begins at the ``{`` after its name, so a block that is not ``call:NAME{`` never begins a call.
Several calls may share one block (``call:a{...}call:b{...}``). A bare token that is no JSON
literal is kept as a string (reported); a structural error fails the block.
"""

from __future__ import annotations

import json
import math
import re

from ..markers import cut_off, marker_set, match_at, skip_ws
from ..dialect import DONE, FAIL, MORE, UNCLOSED_AT_END, CallSink, Calls, Outcome, to_json
from ...limits import BIG_INT_KEPT, MAX_DEPTH, loads, number_text
from ..jsonscan import closing_quote, odd_backslashes


_encode = json.encoder.encode_basestring
_NAME = re.compile(r"[A-Za-z_][\w.\-:/]{0,127}")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_BARE = {"true": "true", "True": "true", "false": "false", "False": "false", "null": "null", "None": "null"}
_CALL = "call:"


_NAME_LIMIT = 256


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    CALL = 0  # expecting ``call:`` (or, after a call, the close marker)
    NAME = 1  # reading NAME up to ``{``
    KEY = 2  # in an object: expecting a key or ``}``
    QKEY = 3  # reading a delimited key
    COLON = 4
    VALUE = 5  # expecting a value (in an array: or ``]``)
    STRING = 6  # inside a delimited string value
    TOKEN = 7  # inside a bare token
    NEXT = 8  # after a value: ``,`` or the container's close
    JSTRING = 9  # inside an ordinary double-quoted string with backslash escapes (read as JSON)


def render_gemma(calls: Calls, *, start: str, end: str, quote: str) -> str:
    """Calls as the Gemma templates write them: keys sorted, strings between ``quote``."""
    return "".join(f"{start}call:{name}{_value(args, quote)}{end}" for name, args in calls)


def _value(value: object, quote: str) -> str:
    if isinstance(value, str):
        return quote + value + quote
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_value(v, quote)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_value(v, quote) for v in value) + "]"
    return json.dumps(value)


class GemmaBody:
    """Read a block of Gemma dict-syntax calls; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, close: str, quote: str) -> None:
        self.reason = ""
        self._sink = sink
        self._close = close
        self._quote = quote
        self._quote_set = marker_set((quote,))
        self._state = _S.CALL
        self._stack: list[str] = []
        self._parts: list[str] = []  # the name, key or bare token being read
        self._escaped = False  # a double-quoted string's piece ended with a lone backslash
        self._calls = 0
        self._first = True  # no member yet in the innermost container
        # A call's arguments are complete but what follows them (its close marker, or another
        # call) has not come: output cut here never ends the call (``_end_call``).
        self._unended = False
        self.hold_until = (close,)  # (Body.hold_until: a short call comes whole)

    def fast(self, text: str) -> str | None:
        """The arguments fragment for ``text`` when it only continues a string value."""
        if self._state == _S.STRING and self._quote_set.clear(text):
            return _encode(text)[1:-1]
        return None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            state = self._state
            if state == _S.STRING or state == _S.QKEY:
                pos, outcome = self._string(buf, pos, final)
            elif state == _S.JSTRING:
                pos, outcome = self._json_string(buf, pos, final)
            elif state == _S.NAME or state == _S.TOKEN:
                pos, outcome = self._word(buf, pos, final)
            else:
                pos = skip_ws(buf, pos)
                if pos >= len(buf):
                    return pos, self._at_end(final)
                if state == _S.CALL:
                    pos, outcome = self._between_calls(buf, pos, final)
                else:
                    pos, outcome = self._structural(buf, pos, final)
            if outcome is not None:
                return pos, outcome

    # ---------------------------------------------------------------- between calls

    def _between_calls(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        options = (_CALL, self._close) if self._calls else (_CALL,)
        found = match_at(buf, pos, options, final)
        if found == "":
            return pos, MORE
        if found is None:
            if not self._calls:
                return pos, self._fail("not a call: expected 'call:NAME{'")
            if final and cut_off(buf, pos, self._close):  # the close marker was cut off
                self._sink.repaired(UNCLOSED_AT_END)
                self._end_call()
                return len(buf), DONE
            self._end_call()
            self._sink.repaired(f"missing {self._close} after the call")
            return pos, DONE
        self._end_call()  # its close marker, or the next call, came
        if found == self._close:
            return pos + len(found), DONE
        if self._calls:
            self._sink.keep(pos)  # the calls so far stand: a later failure returns only what follows
        self._state, self._parts = _S.NAME, []
        return pos + len(found), None

    def _word(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """Read a call name up to ``{`` (held until it comes, at most ``_NAME_LIMIT``
        characters), or a bare token up to ``,``/``}``/``]``."""
        if self._state == _S.NAME:
            end = buf.find("{", pos, pos + _NAME_LIMIT + 1)
            if end != -1:
                return end + 1, self._begin(buf[pos:end].strip())
            if len(buf) - pos > _NAME_LIMIT:
                return pos, self._fail("malformed call name")
            return pos, self._fail("truncated") if final else MORE
        end = min((i for i in (buf.find(c, pos) for c in ",}]") if i != -1), default=-1)
        self._parts.append(buf[pos : end if end != -1 else len(buf)])
        if end == -1:
            return len(buf), self._fail("truncated") if final else MORE
        word = "".join(self._parts).strip()
        self._parts = []
        self._state = _S.NEXT
        return end, self._token(word)

    def _begin(self, name: str) -> Outcome | None:
        if _NAME.fullmatch(name) is None:
            return self._fail("malformed call name")
        why = self._sink.begin(name)
        if why:
            return self._fail(why)
        return self._open("{")

    def _token(self, word: str) -> Outcome | None:
        if not word or self._quote in word or "<" in word:
            return self._fail("malformed value in a call")
        if word in _BARE:
            text = _BARE[word]
        elif _NUMBER.fullmatch(word):
            text = number_text(word)
            if text is not word:
                self._sink.repaired(BIG_INT_KEPT)
        else:
            try:
                number = float(word)
            except ValueError:
                number = None
            if number is not None and math.isfinite(number):
                text = json.dumps(int(number) if number.is_integer() and "." not in word else number)
            else:
                text = to_json(word)
                self._sink.repaired("unquoted string value")
        self._sink.args(text)
        return None

    # ---------------------------------------------------------------- structure

    def _structural(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        state, ch = self._state, buf[pos]
        if buf.startswith(self._quote, pos) or (not final and cut_off(buf, pos, self._quote)):
            if len(buf) - pos < len(self._quote):
                return pos, MORE
            if state == _S.KEY:
                self._state, self._parts = _S.QKEY, []
                return pos + len(self._quote), None
            if state == _S.VALUE:
                self._sink.args('"')
                self._state = _S.STRING
                return pos + len(self._quote), None
            return pos, self._fail("unexpected string in a call")
        if state == _S.KEY:
            if ch == "}" and self._first:
                return pos + 1, self._close_container("{")
            return self._key(buf, pos, final)
        if state == _S.COLON:
            if ch != ":":
                return pos, self._fail("expected ':' in a call")
            self._state = _S.VALUE
            return pos + 1, None
        if state == _S.VALUE:
            if ch == "]" and self._first and self._stack[-1] == "[":
                return pos + 1, self._close_container("[")
            if ch in "{[":
                return pos + 1, self._open(ch)
            if ch in ",}]":
                return pos, self._fail("missing value in a call")
            if ch == '"':  # an ordinary JSON string, which models write beside the delimited form
                self._state, self._parts, self._escaped = _S.JSTRING, ['"'], False
                return pos + 1, None
            self._state, self._parts = _S.TOKEN, []
            return pos, None
        # NEXT
        if ch == ",":
            self._sink.args(", ")
            self._state, self._first = (_S.KEY if self._stack[-1] == "{" else _S.VALUE), False
            return pos + 1, None
        if ch in "}]":
            return pos + 1, self._close_container("{" if ch == "}" else "[")
        return pos, self._fail(f"unexpected {ch!r} in a call")

    def _json_string(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """An ordinary double-quoted string, decoded as JSON decodes it once its quote comes."""
        if self._escaped and pos < len(buf):  # the character after a backslash ending the last piece
            self._parts.append(buf[pos])
            self._escaped, pos = False, pos + 1
        end = closing_quote(buf, pos)
        if end == -1:
            self._parts.append(buf[pos:])
            self._escaped = odd_backslashes(buf, pos, len(buf))
            return len(buf), (self._fail("truncated") if final else MORE)
        self._parts.append(buf[pos : end + 1])
        try:
            value = loads("".join(self._parts))
        except ValueError:
            return end + 1, self._fail("malformed string in a call")
        self._parts, self._state = [], _S.NEXT
        self._sink.args(to_json(value))
        return end + 1, None

    def _key(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        end = buf.find(":", pos, pos + 257)
        text = buf[pos : end if end != -1 else pos + 257]
        if any(c in text for c in "{}[],<\n"):
            return pos, self._fail("malformed key in a call")
        if end == -1:
            if len(text) > 256:
                return pos, self._fail("malformed key in a call")
            return pos, self._fail("truncated") if final else MORE
        self._emit_key(text.strip())
        return end + 1, None

    def _emit_key(self, key: str) -> None:
        self._sink.args(to_json(key) + ": ")
        self._state, self._first = _S.VALUE, False

    def _open(self, ch: str) -> Outcome | None:
        if len(self._stack) >= MAX_DEPTH:
            return self._fail(f"nested deeper than {MAX_DEPTH} levels")
        self._stack.append(ch)
        self._sink.args(ch)
        self._state, self._first = (_S.KEY if ch == "{" else _S.VALUE), True
        return None

    def _close_container(self, opener: str) -> Outcome | None:
        if self._stack[-1] != opener:
            return self._fail("mismatched brackets in a call")
        self._stack.pop()
        self._sink.args("}" if opener == "{" else "]")
        self._first = False
        if self._stack:
            self._state = _S.NEXT
            return None
        self._calls += 1
        self._state, self._unended = _S.CALL, True
        return None

    def _end_call(self) -> None:
        """End the call whose arguments are complete (at the end of output, after
        ``UNCLOSED_AT_END`` is reported, so that the parser decides whether it stands)."""
        if self._unended:
            self._unended = False
            self._sink.end()

    # ---------------------------------------------------------------- strings

    def _string(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """Stream a delimited string value (or collect a delimited key) up to its delimiter."""
        end = buf.find(self._quote, pos)
        stop = end if end != -1 else (len(buf) if final else len(buf) - self._quote_set.holdback(buf, pos))
        piece = buf[pos:stop]
        if self._state == _S.QKEY:
            self._parts.append(piece)
        elif piece:
            self._sink.args(_encode(piece)[1:-1], string=True)
        if end == -1:
            return stop, self._fail("truncated") if final else MORE
        if self._state == _S.QKEY:
            self._emit_key("".join(self._parts))
            self._state, self._parts = _S.COLON, []
        else:
            self._sink.args('"')
            self._state = _S.NEXT
        return end + len(self._quote), None

    def _at_end(self, final: bool) -> Outcome:
        if not final:
            return MORE
        if self._state == _S.CALL and self._calls:
            self._sink.repaired(UNCLOSED_AT_END)
            self._end_call()
            return DONE
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
