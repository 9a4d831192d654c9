"""An incremental, validating scanner for one JSON value.

Strategy: a small state machine over tokens, fed slices of a buffer from a cursor. String
contents are skipped with one regex search per run, so a long string argument costs one C-level
scan, not a Python loop per character. The scanner never looks back: each character is examined
once. It stops at the first character after the value, so a caller can bound a JSON body by its
structure (a literal ``</tool_call>`` inside a string is just string content).

What it outputs is the value's own text, except that raw control characters inside strings
(models write literal newlines in JSON strings) are replaced by their escapes, so the output is
strict JSON, and an integer too long for Python to convert is written as a string of its digits
(``toolbridge.limits``); ``repairs`` says what was changed. Nesting deeper than
``limits.MAX_DEPTH`` is an error. Literals are output whole, when they end.
"""

from __future__ import annotations

import re

from ..limits import BIG_INT_KEPT, MAX_DEPTH, number_text

_WS = re.compile(r"[ \t\n\r]*")
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')
# A run of string content that ends nothing: plain characters and complete escapes.
_STRING_RUN = re.compile(r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*')
_LITERAL_RUN = re.compile(r"[-+.0-9a-zA-Z]*")
_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_ESCAPES = frozenset('"\\/bfnrtu')
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPED = "raw control character escaped in a JSON string"
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}

# States.
VALUE, ARR_FIRST, OBJ_FIRST, OBJ_KEY, COLON, AFTER, STRING, ESCAPE, UNICODE, LITERAL, DONE, ERROR = range(12)


class JsonScanner:
    """Scan one JSON value incrementally; see the module docstring."""

    __slots__ = ("_hex", "_key", "_literal", "_out", "_stack", "error", "repairs", "state")

    def __init__(self) -> None:
        self.state = VALUE
        self.error = ""
        self.repairs: list[str] = []
        self._stack: list[str] = []
        self._key = False  # the string being scanned is an object key
        self._hex = 0
        self._literal: list[str] = []
        self._out: list[str] = []

    @property
    def done(self) -> bool:
        return self.state == DONE

    @property
    def started(self) -> bool:
        return self.state != VALUE or bool(self._stack)

    def in_plain_string(self, text: str) -> bool:
        """True when ``text`` continues the current string and ends nothing (the fast path)."""
        return self.state == STRING and _STRING_RUN.fullmatch(text) is not None

    def take(self) -> str:
        """The output produced since the last call."""
        out = "".join(self._out)
        self._out.clear()
        return out

    def feed(self, buf: str, pos: int, final: bool = False) -> int:
        """Consume ``buf`` from ``pos``; return where scanning stopped.

        Stops at the end of the buffer, right after the value (state DONE), or at the offending
        character (state ERROR, ``error`` says why).
        """
        start = pos
        end = len(buf)
        out = self._out
        while pos < end and self.state < DONE:
            state = self.state
            if state == STRING:
                m = _STRING_STOP.search(buf, pos)
                if m is None:
                    pos = end
                    break
                pos = m.start()
                ch = buf[pos]
                if ch == '"':
                    pos += 1
                    self._close_scalar(COLON if self._key else None)
                elif ch == "\\":
                    pos += 1
                    self.state = ESCAPE
                else:  # a raw control character: escape it so the output stays strict JSON
                    out.append(buf[start:pos])
                    out.append(_CONTROL.get(ch) or f"\\u{ord(ch):04x}")
                    if not self.repairs or self.repairs[0] != _ESCAPED:
                        self.repairs.insert(0, _ESCAPED)
                    pos += 1
                    start = pos
            elif state == ESCAPE:
                ch = buf[pos]
                if ch not in _ESCAPES:
                    return self._fail(buf, start, pos, "invalid escape in string")
                pos += 1
                if ch == "u":
                    self.state, self._hex = UNICODE, 4
                else:
                    self.state = STRING
            elif state == UNICODE:
                if buf[pos] not in _HEX:
                    return self._fail(buf, start, pos, "invalid \\u escape in string")
                pos += 1
                self._hex -= 1
                if not self._hex:
                    self.state = STRING
            elif state == LITERAL:
                run_end = _LITERAL_RUN.match(buf, pos).end()  # type: ignore[union-attr]
                self._literal.append(buf[pos:run_end])
                pos = start = run_end  # held in ``_literal``, output when it ends
                if pos < end and not self._end_literal():
                    return self._fail(buf, start, pos, "invalid literal")
            else:
                pos = _WS.match(buf, pos).end()  # type: ignore[union-attr]
                if pos < end:
                    if not self._structural(buf[pos]):
                        return self._fail(buf, start, pos, self.error or f"unexpected {buf[pos]!r}")
                    pos += 1
                    if self.state == LITERAL:
                        out.append(buf[start : pos - 1])
                        start = pos
        if final and self.state == LITERAL and not self._end_literal():
            return self._fail(buf, start, pos, "invalid literal")
        if final and self.state < DONE:
            self.state, self.error = ERROR, "truncated"
        out.append(buf[start:pos])
        return pos

    def _structural(self, ch: str) -> bool:
        """Handle one non-whitespace character outside strings and literals."""
        state = self.state
        if state == VALUE:
            return self._value_start(ch)
        if state == ARR_FIRST:
            return self._close("[") if ch == "]" else self._value_start(ch)
        if state == OBJ_FIRST and ch == "}":
            return self._close("{")
        if state == OBJ_FIRST or state == OBJ_KEY:
            if ch != '"':
                return False
            self.state, self._key = STRING, True
            return True
        if state == COLON:
            if ch != ":":
                return False
            self.state = VALUE
            return True
        # AFTER: a value inside a container is complete
        if ch == ",":
            self.state = OBJ_KEY if self._stack[-1] == "{" else VALUE
            return True
        if ch in "]}":
            return self._close("[" if ch == "]" else "{")
        return False

    def _value_start(self, ch: str) -> bool:
        if ch == '"':
            self.state, self._key = STRING, False
        elif ch in "{[":
            if len(self._stack) >= MAX_DEPTH:
                self.error = f"nested deeper than {MAX_DEPTH} levels"
                return False
            self._stack.append(ch)
            self.state = OBJ_FIRST if ch == "{" else ARR_FIRST
        elif ch in "-0123456789tfn":
            self.state = LITERAL
            self._literal = [ch]
        else:
            return False
        return True

    def _close(self, opener: str) -> bool:
        if not self._stack or self._stack[-1] != opener:
            return False
        self._stack.pop()
        self._close_scalar(None)
        return True

    def _close_scalar(self, next_state: int | None) -> None:
        self._key = False
        if next_state is not None:
            self.state = next_state
        else:
            self.state = AFTER if self._stack else DONE

    def _end_literal(self) -> bool:
        literal = "".join(self._literal)
        if _LITERAL.fullmatch(literal) is None:
            return False
        text = number_text(literal)
        if text is not literal:
            self.repairs.append(BIG_INT_KEPT)
        self._out.append(text)
        self._close_scalar(None)
        return True

    def _fail(self, buf: str, start: int, pos: int, why: str) -> int:
        self._out.append(buf[start:pos])
        self.state, self.error = ERROR, why
        return pos
