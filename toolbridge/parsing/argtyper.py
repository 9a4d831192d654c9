"""Schema repair of a call's arguments as they stream: every repair lossless and reported.

A body hands the parser its call's arguments as fragments of one JSON object (a body only ever
produces valid JSON). The ArgumentTyper reads that object's top level and passes each member
through or types it by the member's schema:

- a string value of a member whose schema admits only strings (or that has no schema) streams
  as it comes: long text arguments keep streaming;
- any other value is held until it is complete, then typed (``tools.repair_value``): ``"2"`` ->
  ``2`` for an integer, ``"true"`` -> ``true``, a number -> its string where the schema says
  string, a JSON-encoded string -> the object or array the schema wants, a lone value -> a
  one-item array, an enum value in another case -> the enum's spelling; an empty value for a
  non-string type is left out when the member is optional (and stays, invalid, when required).

The object is written back with ``", "`` and ``": "`` separators, so the streamed fragments join
into exactly the typed JSON whatever the chunking. Cost: one regex search per fragment of a
streaming string, and work linear in the held values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..limits import loads
from ..syntax.dialect import to_json
from ..syntax.jsonscan import closing_quote, odd_backslashes
from ..syntax.rawvalue import past_value
from ..tools import deref, is_plain_string, repair_value, settles

_SCAN = json.JSONDecoder().scan_once  # the C scanner: one JSON value at a position
_STRING_STOP = re.compile(r'["\\]')
_VALUE_STOP = re.compile(r'["\\{}\[\],]')
_WS = " \t\n\r"


def _flat(string: str) -> re.Pattern[str]:
    """A flat object (string, number and literal values) laid out as ``feed`` writes one, its
    strings matched by ``string``; applied to valid JSON only, so it checks the spacing, not
    the values."""
    member = rf'{string}: (?:{string}|[-+.0-9eE]++|true|false|null)'
    return re.compile(rf"\{{{member}(?:, {member})*+\}}", re.DOTALL)


# (A string as runs between escapes, ``[^"\\]*+(?:\\.[^"\\]*+)*+``: the same strings as
# ``(?:[^"\\]++|\\.)*+``, matched a quarter faster.)
_FLAT = _flat(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
# In a text with no ``\"``, every ``"`` begins or ends a string: a string is the run up to the
# next one, which the regex engine matches several times faster than a run of a class.
_FLAT_UNQUOTED = _flat(r'"[^"]*+"')
_FLAT_TEXT = 512  # (short texts only: a long string is better passed over by the C scanner)

# States.
START, MEMBER, KEY, COLON, VALUE, STREAM, HELD, NEXT, DONE = range(9)

Report = Callable[[str, str], None]  # (path, what)


class ArgumentTyper:
    """Type one call's streamed JSON arguments by ``schema``; ``feed`` returns what to send."""

    __slots__ = ("_depth", "_escape", "_in_string", "_key", "_members", "_name", "_props", "_raw", "_report",
                 "_required", "_root", "_schema", "_state")

    def __init__(self, schema: dict[str, Any], root: dict[str, Any], report: Report) -> None:
        props = schema.get("properties")
        self._props: dict[str, Any] = props if isinstance(props, dict) else {}
        required = schema.get("required")
        self._required = set(required) if isinstance(required, list) else set()
        self._root = root
        self._report = report
        self._state = START
        self._members = 0  # members written so far
        self._key: list[str] = []  # the current key's JSON text
        self._name = ""  # the current key, decoded
        self._schema: Any = None  # its schema as the tool declares it (None: none)
        self._raw: list[str] = []  # a held value's text
        self._depth = 0
        self._in_string = False
        self._escape = False

    def feed(self, text: str) -> str:
        if self._state == STREAM and not self._escape and '"' not in text and not text.endswith("\\"):
            return text  # the common case: a long string argument streaming
        out: list[str] = []
        pos, end = 0, len(text)
        while pos < end:
            state = self._state
            if state == STREAM:
                pos = self._stream(text, pos, out)
            elif state == HELD:
                pos = self._hold(text, pos, out)
            elif state == KEY:
                pos = self._read_key(text, pos)
            elif text[pos] in _WS:
                pos += 1
            else:
                pos = self._punctuation(text, pos, out)
        return "".join(out)

    def feed_string(self, text: str) -> str:
        """``feed`` for a fragment that only continues a string value (``CallSink.args``'s
        ``string``): while that string streams, it passes unread (a long raw value, encoded
        whole, is not scanned again for the closing quote it cannot hold)."""
        if self._state == STREAM and not self._escape:
            return text
        return self.feed(text)

    # ---------------------------------------------------------------- structure

    def _punctuation(self, text: str, pos: int, out: list[str]) -> int:
        ch, state = text[pos], self._state
        if state == START:  # "{"
            out.append("{")
            self._state = MEMBER
        elif state == MEMBER:  # a key or "}"
            if ch == "}":
                return self._close(out, pos)
            self._key, self._state, self._escape = ['"'], KEY, False
        elif state == COLON:
            self._state = VALUE
        elif state == VALUE:
            return self._value_start(text, pos, out)
        elif state == NEXT:
            if ch == "}":
                return self._close(out, pos)
            self._state = MEMBER
        return pos + 1

    def _close(self, out: list[str], pos: int) -> int:
        out.append("}")
        self._state = DONE
        return pos + 1

    def _read_key(self, text: str, pos: int) -> int:
        while pos < len(text):
            if self._escape:  # the character after a backslash, perhaps in the next fragment
                self._key.append(text[pos])
                self._escape, pos = False, pos + 1
                continue
            m = _STRING_STOP.search(text, pos)
            if m is None:
                self._key.append(text[pos:])
                return len(text)
            stop = m.start()
            self._key.append(text[pos : stop + 1])
            pos = stop + 1
            if text[stop] == "\\":
                self._escape = True
                continue
            self._state = COLON
            return pos
        return pos

    def _value_start(self, text: str, pos: int, out: list[str]) -> int:
        key = "".join(self._key)
        self._name = key[1:-1] if "\\" not in key else json.loads(key)  # (the scanner's JSON)
        self._schema = self._props.get(self._name)
        schema = deref(self._schema, self._root) if isinstance(self._schema, dict) else None
        if text[pos] == '"' and (schema is None or (is_plain_string(schema) and "enum" not in schema)):
            self._open_member(out)
            out.append('"')
            self._state, self._escape = STREAM, False
            return pos + 1
        self._state, self._raw, self._depth, self._in_string, self._escape = HELD, [], 0, False, False
        return pos

    def _open_member(self, out: list[str]) -> None:
        out.append(("" if not self._members else ", ") + "".join(self._key) + ": ")
        self._members += 1

    # ---------------------------------------------------------------- values

    def _stream(self, text: str, pos: int, out: list[str]) -> int:
        """A string value passed through; ends after its closing quote."""
        if self._escape:  # the character after a backslash that ended the last fragment
            out.append(text[pos])
            self._escape, pos = False, pos + 1
        stop = closing_quote(text, pos)
        if stop == -1:  # the string goes on; the fragment may end inside an escape
            out.append(text[pos:])
            self._escape = odd_backslashes(text, pos, len(text))
            return len(text)
        out.append(text[pos : stop + 1])
        self._state = NEXT
        return stop + 1

    def _hold(self, text: str, pos: int, out: list[str]) -> int:
        """A value held until it ends (a string, a literal, an array or an object)."""
        start = pos
        while pos < len(text):
            if self._in_string:
                if self._escape:
                    self._escape, pos = False, pos + 1
                    continue
                m = _STRING_STOP.search(text, pos)
                if m is None:
                    pos = len(text)
                    break
                pos = m.end()
                if text[m.start()] == "\\":
                    self._escape = True
                else:
                    self._in_string = False
                    if self._depth == 0:
                        return self._settle(text, start, pos, out)
                continue
            ch = text[pos]
            if ch == '"':
                self._in_string, pos = True, pos + 1
            elif ch in "{[":
                self._depth, pos = self._depth + 1, pos + 1
            elif ch in "}]":
                if self._depth == 0:  # the object's own "}": a literal ended
                    return self._settle(text, start, pos, out)
                self._depth, pos = self._depth - 1, pos + 1
                if self._depth == 0:
                    return self._settle(text, start, pos, out)
            elif ch == "," and self._depth == 0:
                return self._settle(text, start, pos, out)
            elif ch in _WS and self._depth == 0 and self._raw_started(text, start, pos):
                return self._settle(text, start, pos, out)
            else:
                pos += 1
        self._raw.append(text[start:pos])
        return pos

    def _raw_started(self, text: str, start: int, pos: int) -> bool:
        return pos > start or any(self._raw)

    def _settle(self, text: str, start: int, pos: int, out: list[str]) -> int:
        """The held value is complete: type it and write the member (or leave it out)."""
        self._raw.append(text[start:pos])
        raw = "".join(self._raw).strip()
        self._raw, self._state = [], NEXT
        key, schema = self._name, self._schema
        if not raw:
            return pos
        try:
            value = loads(raw)
        except ValueError:  # valid JSON beyond the limits (a float out of range): kept as written
            schema = None
        if not isinstance(schema, dict):
            self._open_member(out)
            out.append(raw)
            return pos
        typed, repairs, omit = repair_value(value, schema, self._root, key, key in self._required)
        for path, what in repairs:
            self._report(path, what)
        if not omit:
            self._open_member(out)
            out.append(raw if not repairs else to_json(typed))
        return pos


def already_typed(schema: dict[str, Any], text: str | None, value: Any, settled: dict[str, Any]) -> bool:
    """Whether whole arguments ``text`` (``value`` decoded, by the JSON body's
    ``complete_object``) need nothing from an ArgumentTyper under ``schema``: no member to
    type, and written as ``feed`` writes an object (else ``feed`` rewrites it; ``text`` None:
    known to be). ``settled``: the schema's ``tools.settled_members``."""
    if not isinstance(value, dict):
        return False
    for key, member in value.items():
        need = settled.get(key)
        # (a member of the one type its schema declares, the common one: settles', at once)
        if need is not type(member) and not settles(need, member) and not _needs_nothing(
                schema, key, member):
            return False
    return text is None or as_written(text, len(value), value)


def typed_and_valid(types: tuple[dict[str, type], frozenset[str]], text: str | None, value: Any) -> bool:
    """Whether whole arguments ``value`` under a schema that only states its members' types
    (``Toolset.types_only``: ``types``) need nothing from an ArgumentTyper (``already_typed``)
    and are valid (``Toolset.validate`` finds no error), in one pass over their members: every
    member one of the type only's, of its type, the required names there, and ``text`` written
    as ``feed`` writes an object (None: it is ``typed_object``'s, settled). False when not
    known so: ask those two. (A plain loop: C loops over zipped maps made more objects than
    they saved.)"""
    if type(value) is not dict:
        return False
    members, required = types
    get = members.get
    for key, member in value.items():
        if get(key) is not type(member):
            return False
    return value.keys() >= required and (text is None or as_written(text, len(value), value))


def _needs_nothing(schema: dict[str, Any], key: str, member: Any) -> bool:
    """Whether the member ``key`` of arguments under ``schema`` needs no typing (one that
    ``tools.settled_members`` does not settle by its type alone)."""
    props = schema.get("properties")
    member_schema = props.get(key) if isinstance(props, dict) else None
    if not isinstance(member_schema, dict):
        return True
    resolved = deref(member_schema, schema)
    if type(member) is str and is_plain_string(resolved) and "enum" not in resolved:
        return True
    required = schema.get("required")
    needed = isinstance(required, list) and key in required
    _, repairs, omit = repair_value(member, member_schema, schema, key, needed)
    return not (repairs or omit)


def as_written(text: str, members: int, value: dict[str, Any] | None = None) -> bool:
    """Whether valid JSON object ``text`` of ``members`` members (no key written twice: the
    body's ``complete_object`` refuses that) is laid out as ``feed`` writes an object (``{``,
    ``", "`` between members, ``": "`` after keys, ``}``). The members before the last are
    passed over by the C scanner; the last one's value runs to the closing brace, so an
    argument that is one long string at the end is not read again. ``value``: the object
    ``text`` decodes to, whose members are in the order written (no key twice): a long string
    among them written as the encoder writes it is passed over by comparing that text
    (``past_value``)."""
    if not members:
        return text == "{}"
    if len(text) <= _FLAT_TEXT and (_FLAT if '\\"' in text else _FLAT_UNQUOTED).fullmatch(text):
        return True  # flat, and spaced as feed writes it (one C-level match)
    values = iter(value.values()) if value is not None and len(value) == members else None
    pos = 1
    try:
        for k in range(members):
            if not text.startswith('"', pos):
                return False
            pos = _SCAN(text, pos)[1]
            if not text.startswith(": ", pos):
                return False
            if k == members - 1:
                break
            member = next(values) if values is not None else None
            pos = past_value(text, pos + 2, member, _SCAN)[1]
            if not text.startswith(", ", pos):
                return False
            pos += 2
    except (StopIteration, ValueError):  # whitespace where a key or value was due
        return False
    return text[pos + 2] not in _WS and text[-2] not in _WS and text[-1] == "}"


