"""A raw-text parameter value (XML-style dialects), read up to one of its end markers.

The value's schema decides how it leaves: a value that can only be a string streams at once as
JSON-escaped fragments (``"`` first, ``"`` at the end); any other value is held until its end
marker and then typed by the schema (``CallSink.coerce``) and sent as one JSON fragment. With no
schema, a value whose first character cannot begin a JSON value streams as a string too.

``trim_newline`` drops exactly one leading and one trailing newline (Qwen3-Coder writes the
value on its own line); the trailing one is held back until the end marker shows it was last.

``placement`` (optional) says which end markers end the value where they stand: a format whose
values may mention its own tags (code, a patch) ends a value only at a tag its layout places, and
a tag found elsewhere is value text. While the verdict waits on text not yet written, the value is
read up to the tag and the tag is held, unread: the placement's look-ahead is bounded, so the held
text is too, and a placement that remembers what it already scanned (``base`` gives positions
that stay fixed across feeds) keeps a value full of such tags linear.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Protocol

from .markers import MarkerSet
from .dialect import CallSink, to_json
from ..tools import is_plain_string, settles

_encode = json.encoder.encode_basestring
try:  # (the gateway's extra: a long string encoded some 10x faster, to the same text)
    from orjson import JSONEncodeError as _OrjsonRefused, OPT_INDENT_2 as _INDENT_2, dumps as _dumps
except ImportError:  # pragma: no cover - the library alone
    _dumps = None
_JSON_START = frozenset('-0123456789tfn[{" \t\r\n')


class Placement(Protocol):
    """Which end markers end a value (see the module docstring)."""

    def ends(self, buf: str, found: re.Match[str], before: str, final: bool, base: int) -> bool | None:
        """Whether the end marker ``found`` in ``buf`` ends the value: True, False (it is value
        text), None while that depends on text not yet written (never when ``final``).
        ``before``: the character before the marker ("" at the value's start, after a trimmed
        newline "\n"); ``base``: the position in the value of ``buf[0]``, which does not change
        from one feed to the next."""


class RawValue:
    """Read one raw value; ``feed`` returns the end marker's match once the value is complete."""

    __slots__ = ("_consumed", "_ends", "_held", "_key", "_last", "_pending_nl", "_placement", "_sink", "_started",
                 "_stream", "_trim")

    def __init__(self, sink: CallSink, key: str, ends: MarkerSet, trim_newline: bool,
                 placement: Placement | None = None) -> None:
        self._sink = sink
        self._key = key
        self._ends = ends
        self._trim = trim_newline
        schema = sink.param_schema(key)
        self._stream: bool | None = True if is_plain_string(schema) else (None if schema is None else False)
        self._held: list[str] = []
        self._started = False
        self._pending_nl = ""
        self._placement = placement
        self._consumed = 0  # characters of the value consumed so far (``Placement.ends``' base)
        self._last = ""  # the last of them

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, re.Match[str] | None]:
        """Consume value text from ``pos``; return the new position and the end marker, if seen."""
        if not self._started:
            if pos >= len(buf) and not final:
                return pos, None
            self._started = True
            if self._trim and buf.startswith("\n", pos):
                pos += 1
                self._consumed, self._last = 1, "\n"
        m = self._ends.search(buf, pos)
        placement = self._placement
        while m is not None and placement is not None:
            start = m.start()
            verdict = placement.ends(buf, m, buf[start - 1] if start > pos else self._last, final,
                                     self._consumed - pos)
            if verdict:
                break
            if verdict is None:  # the text before the tag goes on; the tag waits for its verdict
                return self._upto(buf, pos, start)
            m = self._ends.search(buf, start + 1)
        if m is not None:
            end = m.start()
            text = buf[pos:end]
            if self._trim and text.endswith("\n"):
                text = text[:-1]
            self._take(text, last=True)
            return m.end(), m
        if final:
            self._take(buf[pos:], last=False)
            return len(buf), None
        return self._upto(buf, pos, len(buf) - self._ends.holdback(buf, pos))

    def _upto(self, buf: str, pos: int, end: int) -> tuple[int, None]:
        """Consume the value's text up to ``end`` (not its last newline, when that may be the
        one trimmed before the end marker); the value goes on."""
        text = buf[pos:end]
        if self._trim and text.endswith("\n"):
            text, end = text[:-1], end - 1
        if end > pos:
            self._consumed += end - pos
            self._last = buf[end - 1]
        self._take(text, last=False)
        return end, None

    def fast(self, text: str) -> str | None:
        """The fragment for ``text`` when it simply continues a streaming string value."""
        if not self._stream or not self._held or not self._ends.clear(text):
            return None
        if self._trim and text.endswith("\n"):
            return None
        self._consumed += len(text)
        self._last = text[-1]
        return _encode(text)[1:-1]

    def _take(self, text: str, last: bool) -> None:
        if self._stream is None and (text or last):
            self._stream = bool(text) and text[0] not in _JSON_START and not self._held
        if self._stream:
            if not self._held:
                self._held.append("")  # marks that the opening quote went out
                self._sink.args('"')
            if text:
                self._sink.args(_encode(text)[1:-1], string=True)
            if last:
                self._sink.args('"')
            return
        if text:
            self._held.append(text)
        if last:
            value = self._sink.coerce(self._key, "".join(self._held))
            self._sink.args(to_json(value))


def end_typed(sink: CallSink, pairs: list[tuple[str, str]]) -> None:
    """A call read whole (its block written plainly): its ``pairs`` typed once
    (``typed_object``, with the sink's schema and coercion), given as one piece of arguments,
    and the call ended."""
    arguments, value, _ = typed_object(pairs, sink.param_schema, lambda key, raw, _: sink.coerce(key, raw))
    sink.args(arguments, value)
    sink.end()


def typed_object(pairs: list[tuple[str, str]], schema_of: Callable[[str], dict[str, Any] | None],
                 coerce: Callable[[str, str, dict[str, Any] | None], Any],
                 settled_types: dict[str, Any] | None = None) -> tuple[str, dict[str, Any], bool]:
    """The arguments a call of whole raw values ``pairs`` (key, value text) streams out of
    ``RawValue``s, typed the same way (a value that can only be a string, or has no schema and
    cannot begin JSON, stays text; any other is ``coerce(key, raw, schema)``), and written the
    same way (``write_object``): the JSON text and its value, so that neither is read again (no
    key may repeat: the value would lose one).

    ``settled_types``: the root schema's ``tools.settled_members`` (a key whose member it
    settles as a plain string is kept so, its schema not looked up). Then the third item
    tells whether every value is already what ``argtyper.already_typed`` passes at once,
    without a second look: a key ``schema_of`` does not declare, or a value that
    ``tools.settles``. False when ``settled_types`` is not given."""
    value: dict[str, Any] = {}
    settled = settled_types is not None
    # (every value a string, an integer, a bool or None, and the object short: write_object's fast
    # case; a value's text is no shorter than its raw text, so the raw texts' length tells)
    scalars, length = True, 0
    for key, raw in pairs:
        length += len(raw)
        need = settled_types.get(key) if settled_types is not None else None
        if need is str:  # (a string of its own, the common member: its schema is not looked up)
            value[key] = raw
            continue
        schema = schema_of(key)
        if schema is None:  # (a key not declared: settled stays as it is)
            if raw and raw[0] not in _JSON_START:
                value[key] = raw
                continue
            value[key] = raw = coerce(key, raw, None)
            scalars = scalars and type(raw) in _SCALARS
            continue
        # (a schema that declares one type: is_plain_string's common case, answered here)
        declared = schema.get("type") if "$ref" not in schema else None
        declared = declared if isinstance(declared, str) else None
        if declared == "string" or (declared not in _OTHER_TYPES and is_plain_string(schema)):
            pass
        elif declared in _NUMBERS and (literal := _INTEGER.fullmatch(raw)) is not None:
            raw = int(literal[1])  # (what ``coerce`` makes of an integer written plainly, at once)
        else:
            raw = coerce(key, raw, schema)
            scalars = scalars and type(raw) in _SCALARS
        if need is not type(raw):  # (a value of the one type declared: settles', at once)
            settled = settled and settles(need, raw)
        value[key] = raw
    return write_object(value, scalars and length <= _SHORT_OBJECT), value, settled


def write_object(value: dict[str, Any], scalars: bool = False) -> str:
    """``to_json(value)`` (``{``, ``", "`` between members, ``": "`` after keys, ``}``, as
    ``feed`` writes an object of raw values), a long string by orjson (``encode_string``).
    ``scalars``: every value is a string, a bool, None or an integer; then orjson writes the
    whole object, laid out two spaces deep: the same text but for a line break and the
    indentation after ``{`` and each ``,`` and a line break before ``}`` (no string holds a raw
    line break, so each is layout), taken out by one replace where the object is short (the
    search for the break reads every character: a long value is cheaper written alone).
    orjson writes these values as the encoder does and refuses the rest (a lone surrogate, an
    integer of more than 64 bits): then each member is written alone too."""
    if scalars and _dumps is not None and value:
        try:
            text = _dumps(value, option=_INDENT_2)
        except _OrjsonRefused:
            pass
        else:
            if len(text) <= _SHORT_OBJECT:
                return "{" + text.replace(b",\n  ", b", ")[4:-2].decode() + "}"
    if not value:
        return "{}"
    parts = ["{"]  # (joined once: a long value is copied once, not at each step of the making)
    for key, raw in value.items():
        parts += (_encode(key), ": ", encode_string(raw) if type(raw) is str else to_json(raw), ", ")
    parts[-1] = "}"
    return "".join(parts)


_OTHER_TYPES = frozenset(("integer", "number", "boolean", "object", "array", "null"))
_NUMBERS = ("integer", "number")
_SCALARS = frozenset((str, int, bool, type(None)))
_INTEGER = re.compile(r"[ \t\n\r]*(-?(?:0|[1-9][0-9]{0,17}))[ \t\n\r]*")


_SHORT_OBJECT = 1024  # (up to this long, an object's text is orjson's, laid out again: write_object)
_SHORT_STRING = 32  # (up to this long, a string is encoded by the standard encoder: encode_string)


def encode_string(text: str) -> str:
    """``text`` as a JSON string, exactly as ``to_json`` writes it (non-ASCII kept); a long one
    by orjson when it is installed, which writes every character the same way and refuses the
    lone surrogates (then the standard encoder writes it)."""
    if _dumps is not None and len(text) > _SHORT_STRING:
        try:
            return _dumps(text).decode()
        except _OrjsonRefused:
            pass
    return _encode(text)


LONG_STRING = 1024  # characters from which a string value is compared as encoded, not scanned


def past_value(text: str, pos: int, hint: Any, scan: Callable[[str, int], tuple[Any, int]]) -> tuple[Any, int]:
    """The JSON value at ``text[pos]`` and where it ends, read by ``scan`` (a scanner's
    ``scan_once``); ``hint``: what the value is believed to be, from a decode of the same text
    (or None). A long string hint whose encoding (``encode_string``: orjson, several times
    faster than the scanner reads it) is written there is that value, a JSON string token that
    ends where its encoding does; any other value is scanned."""
    if type(hint) is str and len(hint) >= LONG_STRING:
        written = encode_string(hint)
        if text.startswith(written, pos):
            return hint, pos + len(written)
    return scan(text, pos)


def plain_end(text: str, pos: int, close: str, others: tuple[str, ...], looks: int = 16) -> int:
    """Where a raw value from ``pos`` ends when the first of its end tags is ``close`` (the
    value written plainly: no other tag of ``others`` before it); -1 when ``close`` never comes
    or another tag comes first. Where the tags share their first character, it is looked for
    (memchr, many times faster than a search for a tag) at most ``looks`` times; then the tags
    are searched for."""
    first = close[0]
    if all(t.startswith(first) for t in others):
        at = text.find(first, pos)
        for _ in range(looks):
            if at < 0 or text.startswith(close, at):
                return at
            if text.startswith(others, at):
                return -1
            at = text.find(first, at + 1)
        pos = at if at >= 0 else len(text)
    end = text.find(close, pos)
    if end < 0 or any(0 <= text.find(t, pos, end + len(t) - 1) for t in others):
        return -1
    return end


Match = Callable[[str, int], "re.Match[str] | None"]


def plain_pairs(text: str, pos: int, whole: Match | None, opener: Match, close: str,
                others: tuple[str, ...]) -> tuple[list[tuple[str, str]], int] | None:
    """The (key, raw value) pairs written plainly from ``pos``, one after the other, and where
    they end; None when a key comes twice or a value is not written plainly (``plain_end``).
    ``whole`` matches a common pair at once (its key and value as groups 1 and 2), ``opener``
    a pair's opening up to its value (its key as group 1); a value ends at ``close``. The GLM
    and MiniMax whole-block readers share it."""
    pairs: list[tuple[str, str]] = []
    keys: set[str] = set()
    while True:
        m = whole(text, pos) if whole is not None else None
        if m is not None:  # (the common pair, at once; the same reading as below)
            key, value, pos = m[1], m[2], m.end()
        else:
            m = opener(text, pos)
            if m is None:
                return pairs, pos
            key, start = m[1], m.end()
            end = plain_end(text, start, close, others)
            if end < 0:
                return None
            value, pos = text[start:end], end + len(close)
        if key in keys:
            return None
        keys.add(key)
        pairs.append((key, value))
