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
from .dialect import UNCLOSED_AT_END

_WS = re.compile(r"[ \t\n\r]*")
# A run of string content that ends nothing: plain characters and complete escapes, read in one
# C-level match (possessive: text with many escapes, as code with \n at every line, is not read
# escape by escape).
_STRING_RUN = re.compile(r'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+')
FAST_TEXT = 512  # the longest text the fast path checks
_LITERAL_RUN = re.compile(r"[-+.0-9a-zA-Z]*")
_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_ESCAPES = frozenset('"\\/bfnrtu')
_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPED = "raw control character escaped in a JSON string"
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}

# Lenient reading (``JsonScanner(lenient=True)``, the opt-in syntax repair).
_SQ_STOP = re.compile(r"['\"\\\x00-\x1f]")  # what ends a run inside a single-quoted string
_IDENT_START = re.compile(r"[A-Za-z_$]")
_IDENT_RUN = re.compile(r"[\w$\-]*")
_PYTHON = {"True": "true", "False": "false", "None": "null"}

def odd_backslashes(text: str, start: int, end: int) -> bool:
    """Whether the backslashes right before ``end`` (not before ``start``) are odd in number."""
    k = end
    while k > start and text[k - 1] == "\\":
        k -= 1
    return (end - k) % 2 == 1


def closing_quote(text: str, pos: int) -> int:
    """The first ``"`` at or after ``pos`` that is not escaped (``pos`` starts outside an
    escape), or -1: one C-level match over the string, escapes included."""
    end = _UNTIL_QUOTE.match(text, pos).end()  # type: ignore[union-attr]
    return end if end < len(text) and text[end] == '"' else -1


# (runs between escapes, unrolled: some 30% faster in the regex engine than an alternation)
_UNTIL_QUOTE = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)


# States.
VALUE, ARR_FIRST, OBJ_FIRST, OBJ_KEY, COLON, AFTER, STRING, ESCAPE, UNICODE, LITERAL, IDENT, DONE, ERROR = range(13)


class JsonScanner:
    """Scan one JSON value incrementally; see the module docstring."""

    __slots__ = ("_comma", "_hex", "_ident", "_key", "_literal", "_out", "_quote", "_stack", "error",
                 "lenient", "repairs", "state")

    def __init__(self, lenient: bool = False) -> None:
        self.lenient = lenient  # read the common slips (see ``_lenient``), each one reported
        self._quote = '"'  # the current string's quote (lenient: "'" too)
        self._comma = False  # lenient: a comma held until the next member shows it is not trailing
        self._ident: list[str] = []  # lenient: an unquoted key being read
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
        """True when ``text`` continues the current string and ends nothing (the fast path for
        a delta; a long text is left to ``feed``, which reads it once whatever it holds)."""
        if self.state != STRING or self._quote != '"' or len(text) > FAST_TEXT:
            return False
        # (printable, no quote, no backslash: plainly a run of the string, told by three C
        # calls; an escape or anything else takes the pattern, several times slower)
        if '"' not in text and "\\" not in text and text.isprintable():
            return True
        return _STRING_RUN.fullmatch(text) is not None

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
            if state == STRING and self._quote == "'":
                pos, start = self._single_quoted(buf, pos, start)
            elif state == STRING:
                pos = _STRING_RUN.match(buf, pos).end()  # type: ignore[union-attr]
                if pos >= end:
                    break
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
            elif state == ESCAPE and self._quote == "'":
                ch = buf[pos]  # the backslash was held back: "\\'" is a quote, others stay escapes
                out.append("'" if ch == "'" else "\\" + ch if ch in _ESCAPES else "\\\\" + ch)
                pos = start = pos + 1
                self.state, self._hex = (UNICODE, 4) if ch == "u" else (STRING, 0)
            elif state == IDENT:
                run_end = _IDENT_RUN.match(buf, pos).end()  # type: ignore[union-attr]
                self._ident.append(buf[pos:run_end])
                pos = start = run_end
                if pos < end:
                    out.append('"' + "".join(self._ident) + '"')
                    self.repairs.append("unquoted key quoted")
                    self._ident, self.state = [], COLON
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
                if pos < end and self.lenient:
                    pos, start, handled = self._lenient(buf, pos, start)
                    if handled:
                        continue
                if pos < end:
                    if not self._structural(buf[pos]):
                        return self._fail(buf, start, pos, self.error or f"unexpected {buf[pos]!r}")
                    pos += 1
                    if self.state == LITERAL:
                        out.append(buf[start : pos - 1])
                        start = pos
        if final and self.state == LITERAL and not self._end_literal():
            return self._fail(buf, start, pos, "invalid literal")
        if self._comma:
            start = pos  # only whitespace follows a held comma
        if final and self.lenient and self._stack and (self.state == AFTER or self._comma):
            out.append(buf[start:pos])
            start = pos
            self._close_all()
        if final and self.state < DONE:
            self.state, self.error = ERROR, "truncated"
        out.append(buf[start:pos])
        return pos

    # ---------------------------------------------------------------- lenient reading

    def _lenient(self, buf: str, pos: int, start: int) -> tuple[int, int, bool]:
        """The slips lenient reading mends at a structural position: a trailing comma (held,
        dropped before a closer), single-quoted strings, Python's True/False/None, unquoted keys.
        Returns (pos, start, whether it consumed the character)."""
        ch, state, out = buf[pos], self.state, self._out
        if ch == "," and state == AFTER:
            out.append(buf[start:pos])
            self.state = OBJ_KEY if self._stack[-1] == "{" else VALUE
            self._comma = True
            return pos + 1, pos + 1, True
        if self._comma and ch in "]}" and state in (OBJ_KEY, VALUE):
            self._comma, self.state = False, AFTER  # the closer itself is read as usual
            self.repairs.append("trailing comma dropped")
            return pos, start, False
        if self._comma:  # the next member begins: the held comma was not trailing
            out.append(", ")  # (the whitespace after a held comma is not kept)
            self._comma, start = False, pos
        if ch == "'" and state in (VALUE, ARR_FIRST, OBJ_FIRST, OBJ_KEY):
            out.append(buf[start:pos] + '"')
            self._quote, self._key = "'", state in (OBJ_FIRST, OBJ_KEY)
            self.state = STRING
            self.repairs.append("single-quoted string")
            return pos + 1, pos + 1, True
        if state in (OBJ_FIRST, OBJ_KEY) and _IDENT_START.match(ch):
            out.append(buf[start:pos])
            self.state, self._ident = IDENT, []
            return pos, pos, True
        if state in (VALUE, ARR_FIRST) and ch in "TFN":
            out.append(buf[start:pos])
            self.state, self._literal = LITERAL, [ch]
            return pos + 1, pos + 1, True
        return pos, start, False

    def _single_quoted(self, buf: str, pos: int, start: int) -> tuple[int, int]:
        """A run of a single-quoted string, written out double-quoted."""
        m = _SQ_STOP.search(buf, pos)
        if m is None:
            return len(buf), start
        pos, out = m.start(), self._out
        ch = buf[pos]
        out.append(buf[start:pos])
        if ch == "'":
            out.append('"')
            self._quote = '"'
            self._close_scalar(COLON if self._key else None)
        elif ch == '"':
            out.append('\\"')
        elif ch == "\\":
            self.state = ESCAPE  # held: the next character decides what it was
        else:
            out.append(_CONTROL.get(ch) or f"\\u{ord(ch):04x}")
        return pos + 1, pos + 1

    def _close_all(self) -> None:
        """A clean end inside containers: the held comma dropped, the brackets closed."""
        self._comma = False
        self._out.append("".join("}" if c == "{" else "]" for c in reversed(self._stack)))
        self._stack.clear()
        self.state = DONE
        self.repairs.append(UNCLOSED_AT_END)  # the brackets closed, as the end of output leaves them

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
        if self.lenient and literal in _PYTHON:
            self.repairs.append(f"Python's {literal} read as {_PYTHON[literal]}")
            literal = _PYTHON[literal]
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
