"""Body kind: a JSON envelope ``{"name": NAME, "arguments": {...}}`` then a close marker.

Used by hermes and every dialect that wraps one JSON object per call. The envelope's own
punctuation is read here; each key and value inside it is read by a JsonScanner, so the object
is bounded by JSON structure, not by searching for the close marker (a literal ``</tool_call>``
inside a string is string content). The arguments object streams as slices of the model's own
text once the name has been accepted; when the model writes the arguments before the name, or
as a JSON string, they are held and sent whole when the name is known. Several objects in one
wrapper (``<tool_call>{...}, {...}</tool_call>``, or one per line) are several calls. A short
block after a dedicated call marker is held unread until its close marker comes (then read whole)
or it passes ``HOLD_BLOCK`` characters (then read and streamed from its start).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from ...limits import MAX_DEPTH, deeper_than
from ..jsonscan import DONE as SCANNED, ERROR, JsonScanner
from ..markers import cut_off, match_at, read_label, skip_ws
from ..dialect import DONE, FAIL, MORE, UNCLOSED_AT_END, CallSink, Outcome, still_held, to_json
from ..rawvalue import past_value

try:  # (the gateway's extra: a long arguments object decoded some 3x faster: ``long_object``)
    from orjson import JSONDecodeError as _NotOrjson, loads as _fast_loads
except ImportError:  # pragma: no cover - the library alone
    _fast_loads = None


def _refuse(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise ValueError("a key written twice")  # read token by token, as written
    return value


# Raw control characters, NaN and a key written twice in one object refused.
_STRICT = json.JSONDecoder(parse_constant=_refuse, object_pairs_hook=_once)
_SCAN = _STRICT.scan_once  # (its raw_decode without that method's frame; StopIteration: no value)


def complete_object(buf: str, pos: int) -> tuple[int, dict[str, Any]] | None:
    """Where the JSON object at ``buf[pos]`` ends and its value, when it is complete and the
    scanner would pass it through unchanged (strict JSON, no integer too long for Python, not
    nested deeper than the limit, no key written twice in one object); None otherwise, and the
    scanner reads it. One C-level decode: the whole answer's fast path, which gives what
    reading it piece by piece gives."""
    if buf.rfind("}", pos) < 0:
        return None  # not complete: spares the decoder's exception while a call streams
    try:
        value, end = _SCAN(buf, pos)
    except (StopIteration, ValueError, RecursionError):
        return None
    # (each level of nesting opens with a character of its own: a value written in no more
    # characters than the limit cannot nest deeper, and is not walked)
    if not isinstance(value, dict) or (end - pos > MAX_DEPTH and deeper_than(value)):
        return None
    return end, value


LONG_OBJECT = 4096  # characters of an arguments object from which ``long_object`` reads it
_JSON_WS = " \t\n\r"


def long_object(buf: str, pos: int, close: str) -> tuple[int, dict[str, Any]] | None:
    """``complete_object`` of the arguments at ``buf[pos]`` of a call block that ends with
    them, the envelope's ``}`` and ``close`` (spaced), when they are laid out as ``feed`` writes
    an object (``laid_out``), read faster: orjson decodes them (the arguments end at the last
    ``}`` but one before the last ``close``, looked for from the end: the whole answer's one call
    ends it, the common case; a text cut anywhere else is no JSON object, which orjson refuses),
    and the strict scanner reads every key and value again but the long strings whose encoding
    stands where orjson put them. None otherwise, and without orjson (the scanner reads them)."""
    if _fast_loads is None:
        return None
    at = buf.rfind(close, pos)
    brace = buf.rfind("}", pos, at) if at > 0 else -1
    inner = buf.rfind("}", pos, brace) if brace > 0 else -1
    if inner - pos < LONG_OBJECT or buf[brace + 1 : at].strip(_JSON_WS) or buf[inner + 1 : brace].strip(_JSON_WS):
        return None  # (a short call in a long answer is scanned: no cut of the rest is tried)
    text = buf[pos : inner + 1]
    try:
        hints = _fast_loads(text)  # type: ignore[misc]
    except _NotOrjson:
        return None
    value = laid_out(text, hints) if type(hints) is dict else None
    if value is None or deeper_than(value):  # (a long text: its nesting is walked, as complete_object walks it)
        return None
    return inner + 1, value


def laid_out(text: str, hints: dict[str, Any]) -> dict[str, Any] | None:
    """The object ``text`` holds, as the strict scanner reads it, when it is laid out as
    ``feed`` writes an object (``{``, ``", "`` between members, ``": "`` after keys, ``}``);
    None when it is laid out otherwise, is not strict JSON or writes a key twice. ``hints``:
    the same text decoded by other means (orjson), whose long strings are taken where their
    encoding is written (``past_value``); every other key and value is read by the scanner, so
    what the hints got wrong (an integer too long for orjson, a key written twice) is not kept."""
    if not hints:
        return {} if text == "{}" else None
    value: dict[str, Any] = {}
    pos = 1
    try:
        for hint in hints.values():
            if not text.startswith('"', pos):
                return None
            key, pos = _SCAN(text, pos)
            if not text.startswith(": ", pos) or key in value:
                return None
            value[key], pos = past_value(text, pos + 2, hint, _SCAN)
            if not text.startswith(", ", pos):
                break
            pos += 2
    except (StopIteration, ValueError, RecursionError):  # (not strict JSON, or spaced otherwise)
        return None
    return value if pos == len(text) - 1 and len(value) == len(hints) else None


_WS = r"[ \t\n\r]*"  # JSON's whitespace, as the scanner skips it (``\s`` would admit more)
_STRING = r'"(?:[^"\\]++|\\.)*+"'
_CONTENT = r'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})'  # a string's valid content
_HOLD = 512  # the longest head held back while it is being written
HOLD_BLOCK = 128  # the longest call block held back whole while it is being written


def _prefixes(atoms: list[str], rest: str = "") -> str:
    """A pattern matching any prefix of ``atoms`` matched one after another, then ``rest``:
    each atom is matched whole, except ``_STRING``, a JSON string that may be cut anywhere."""
    for atom in reversed(atoms):
        tail = f"(?:{rest})?" if rest else ""
        if atom is _STRING:  # (a cut escape only at the very end)
            rest = rf'"{_CONTENT}*+(?:\\(?:u[0-9a-fA-F]{{0,3}})?\Z|"{tail})?'
        else:
            rest = atom + tail
    return rest


@lru_cache(maxsize=64)
def _head_patterns(args_keys: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The head of an envelope as models write it, the name first, then the arguments' key (up
    to the arguments' ``{``); and every proper beginning of one, while it is being written."""
    keys = "|".join(map(re.escape, args_keys))
    # (from the whitespace before the envelope: whole() starts there; the name as its content
    # when it holds no escape, the common name, else as its JSON string: ``_name_of``)
    name = rf'(?:"([^"\\\x00-\x1f]*+)"|({_STRING}))'
    head = re.compile(rf'{_WS}\{{{_WS}"name"{_WS}:{_WS}{name}{_WS},{_WS}"({keys})"{_WS}:{_WS}(?=\{{)')
    after_key = _prefixes(['"', _WS, ":", _WS])
    key = "(?:" + "|".join(_prefixes([re.escape(c) for c in k], after_key) for k in args_keys) + ")"
    name = ['"', "n", "a", "m", "e", '"']
    start = _prefixes([r"\{", _WS, *name, _WS, ":", _WS, _STRING, _WS, ",", _WS, '"'], key)
    return head, re.compile(start)


def _name_of(head: re.Match[str]) -> str | None:
    """The name an envelope's ``head`` spells (None: not a valid JSON string)."""
    if head[1] is not None:
        return head[1]  # no escape to decode (the common name)
    try:
        return _STRICT.decode(head[2])  # type: ignore[no-any-return]
    except ValueError:
        return None


@lru_cache(maxsize=64)
def _closing(close: str) -> re.Pattern[str]:
    """What follows an envelope's arguments when its ``}`` and then ``close`` are written there
    (a close marker; a separator, or none, is never matched)."""
    if not close or close[0] in ",{":
        return _NOTHING
    return re.compile(rf"{_SPACED_BRACE}{re.escape(close)}")


_SPACED_BRACE = r"[ \t\n\r]*+\}[ \t\n\r]*+"  # an object's closing brace, spaced
_NOTHING = re.compile(r"(?!)")


def read_whole(head_pattern: re.Pattern[str], closing: re.Pattern[str], close: str, buf: str,
               pos: int) -> tuple[str, str, dict[str, Any], int, bool] | None:
    """The call block at ``pos`` (just after its opener) when it is written whole in its
    plainest form: ``{"name": "...", "arguments": {...}}`` (``head_pattern``: the envelope's
    head) in strict JSON, then its close marker ``close`` (``closing``: ``_closing``'s pattern
    of it). Returns the name, the arguments' text and value, where the block ends, which is
    what ``feed`` would read from it (one call, nothing repaired), and whether the arguments
    are known to be laid out as ``feed`` writes an object (read by ``long_object``); None for
    anything else, which ``feed`` reads. Reads at C speed, and reports nothing."""
    head = head_pattern.match(buf, pos)
    name = _name_of(head) if head is not None else None
    if name is None:
        return None
    start = head.end()  # type: ignore[union-attr]
    read = long_object(buf, start, close) if len(buf) - start > LONG_OBJECT else None  # (a short answer: no search)
    written = read is not None
    read = read or complete_object(buf, start)
    if read is None:
        return None
    end, value = read
    closed = closing.match(buf, end)
    return None if closed is None else (name, buf[start:end], value, closed.end(), written)


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    LEAD = 0  # before the opening brace
    KEY = 1  # expecting a key (or ``}`` right after ``{``)
    KEY_TEXT = 2  # scanning a key string
    COLON = 3
    VALUE = 4  # scanning a value
    NEXT = 5  # expecting ``,`` or ``}``
    TAIL = 6  # after the object, expecting the close marker


class JsonEnvelopeBody:
    """Read one JSON envelope; see the module docstring."""

    def __init__(
        self,
        sink: CallSink,
        opened_by: str,
        *,
        close: str,
        missing: str = "",
        name_keys: tuple[str, ...] = ("name",),
        args_keys: tuple[str, ...] = ("arguments", "parameters"),
        inner: dict[str, str] | None = None,
        lenient: bool = False,
        kind: tuple[str, str] | None = None,
    ) -> None:
        self._sink = sink
        # A member that names the object's kind (Llama's ``"type": "function"``): it may come
        # before the name, and where it is written its value must be that kind.
        self._kind = kind
        self._closes = [close]  # still to be read after the object, in order
        self._inner = inner or {}  # one more wrapper that may sit inside this one
        # The opener is not a dedicated call marker (a code fence, <response>...): output that
        # ends before the object begins was prose, not a call cut short.
        self._lenient = lenient
        self._name_keys = name_keys
        self._args_keys = args_keys
        self._value: list[str] = []
        # The call begins when its arguments start, not at its name, so that an envelope
        # broken between the two never begins a call; a bare object (no wrapper) is a call only
        # if it has arguments at all.
        self._bare = opened_by == "{"
        self._missing = missing
        self._heads = _head_patterns(args_keys) if name_keys == ("name",) else None
        # The rest of the state starts as the class attributes below say (immutable values,
        # set on the instance when they change): a body is made per call block.

    reason = ""
    _state = _S.LEAD
    _scanner: JsonScanner | None = None  # made when a key or value is read piece by piece
    _key = ""
    _keys_seen = 0
    _begun = False
    _held_args = ""  # arguments written before the name, sent once it is accepted
    _streaming = False
    _args_seen = False
    _pending_name = ""
    # The call's object is complete but its close marker has not come yet: the call ends when
    # it comes (or something else follows), so that output cut before it never ends the call.
    _unended = False
    # While the block waits at the same place for more text (a short block, a head being
    # written, a close marker cut off), what tells whether ``buf`` from there still only waits:
    # the parser then keeps the text without calling ``feed`` (which would hold it just the same).
    wait: Callable[[str], bool] | None = None

    def fast(self, text: str) -> str | None:
        """The arguments fragment for ``text`` when it only continues a streamed string."""
        scanner = self._scanner
        return text if self._streaming and scanner is not None and scanner.in_plain_string(text) else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        self.wait = None
        if self._state == _S.LEAD and not final and self._holds(buf, pos):
            self.wait = self._block_waits
            return pos, MORE
        while True:
            if self._state == _S.KEY_TEXT or self._state == _S.VALUE:
                pos, outcome = self._scan(buf, pos, final)
            elif self._state == _S.TAIL and self._closes == [""]:
                return pos, DONE  # no close marker: what follows is not this block's
            else:
                pos = skip_ws(buf, pos)
                if pos >= len(buf):
                    return pos, self._at_end(final)
                if self._state == _S.TAIL and buf[pos] in ",{" and self._closes[0]:
                    pos, outcome = self._another(buf, pos, final)
                    if outcome is not None:
                        return pos, outcome
                    continue
                if self._state == _S.TAIL:
                    pos, outcome = self._tail(buf, pos, final)
                    if outcome is not DONE or not self._closes:
                        return pos, outcome
                    continue
                if self._state == _S.LEAD and buf[pos] == "{" and not self._sink.lenient:
                    whole = self._head(buf, pos, final)
                    if whole is not None:
                        pos, outcome = whole
                        if outcome is not None:
                            return pos, outcome
                        continue
                if self._state == _S.LEAD and buf[pos] != "{" and self._inner:
                    pos, outcome = self._inner_wrapper(buf, pos, final)
                else:
                    outcome = self._punctuation(buf[pos])
                    pos += outcome is None
            if outcome is not None:
                return pos, outcome

    def _head(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None] | None:
        """An envelope written as models write it (``{"name": "...", "arguments": {``) is read
        by its head, matched whole: held back while it is being written (it emits nothing
        before its arguments start), then the arguments are read as after reading the head
        piece by piece. None: read it piece by piece."""
        if self._heads is None or self._held_args or self._keys_seen:
            return None
        head_pattern, start_pattern = self._heads
        head = head_pattern.match(buf, pos)
        if head is None:
            if not final and len(buf) - pos <= _HOLD and start_pattern.fullmatch(buf, pos):
                self.wait = self._head_waits
                return pos, MORE  # the head is still being written
            return None
        name = _name_of(head)
        if name is None:
            return None
        self._key, self._keys_seen, self._pending_name = head[3], 2, name
        self._start(_S.VALUE)
        # The arguments are read at once (at C speed when already whole, the call's end with
        # them), not after another turn of ``feed``'s loop.
        return self._scan(buf, head.end(), final)

    def whole_reader(self) -> Callable[[str, int], tuple[str, str, dict[str, Any], int, bool] | None] | None:
        """How a call block this body reads is read whole (``read_whole``), as a function of the
        text alone that holds nothing of the body or its sink (parsers keep one per marker in
        their shared setup); None when this body reads nothing whole (a lenient or nested wrapper, a
        name not under ``name``, several close markers)."""
        if self._heads is None or self._lenient or self._inner or len(self._closes) != 1:
            return None
        return partial(read_whole, self._heads[0], _closing(self._closes[0]), self._closes[0])

    def _holds(self, buf: str, pos: int) -> bool:
        """Whether a short block after a dedicated call marker is still being written: it is
        held, unread, until its close marker comes (then read whole, at C speed) or it grows
        past ``HOLD_BLOCK`` characters (then read and streamed as it comes). A short call
        reaches the client a few tokens later, whole; reading it piece by piece costs several
        times more."""
        close = self._closes[0]
        if self._heads is None or self._lenient or not close or len(buf) - pos > HOLD_BLOCK:
            return False
        first = skip_ws(buf, pos)
        # (a block that does not open with "{" is not read whole at C speed: it is read as it
        # comes, and under auto a trial refuses another family's block at once, not at its end)
        return (first == len(buf) or buf[first] == "{") and buf.find(close, pos) < 0

    def _block_waits(self, buf: str) -> bool:
        return still_held(buf, (self._closes[0],), HOLD_BLOCK)

    def _head_waits(self, buf: str) -> bool:
        heads = self._heads
        return len(buf) <= _HOLD and heads is not None and heads[1].fullmatch(buf) is not None

    # ---------------------------------------------------------------- envelope punctuation

    def _punctuation(self, ch: str) -> Outcome | None:
        """Handle one structural character; an Outcome ends the block."""
        state = self._state
        if state == _S.LEAD:
            if ch != "{":
                return self._fail("not a JSON object")
            self._state = _S.KEY
        elif state == _S.KEY:
            if ch == "}" and not self._keys_seen:
                return self._finish()
            if ch == "}" and self._sink.lenient:  # after a trailing comma
                self._sink.repaired("trailing comma dropped")
                return self._finish()
            if ch != '"' and not (ch == "'" and self._sink.lenient):
                return self._fail("expected a key in the call object")
            self._start(_S.KEY_TEXT)
            self._scanner = scanner = JsonScanner(self._sink.lenient)
            scanner.feed(ch, 0)
            scanner.take()
            self._value = ['"']
        elif state == _S.COLON:
            if ch != ":":
                return self._fail("expected ':' in the call object")
            self._start(_S.VALUE)
        elif ch == ",":  # NEXT
            self._state = _S.KEY
        elif ch == "}":
            return self._finish()
        else:
            return self._fail("expected ',' or '}' in the call object")
        return None

    def _start(self, state: int) -> None:
        self._state = state
        self._scanner = None
        self._value = []
        self._streaming = False

    # ---------------------------------------------------------------- keys and values

    def _scan(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        scanner = self._scanner
        if (not self._streaming and self._state == _S.VALUE and (scanner is None or not scanner.started)
                and self._key in self._args_keys):
            pos = skip_ws(buf, pos)
            if pos >= len(buf):
                return pos, self._at_end(final)
            if buf[pos] not in '{"':
                return pos, self._fail("arguments are not a JSON object")
            if self._args_seen:
                return pos, self._fail("the call object gives its arguments twice")
            if self._pending_name:
                outcome = self._begin(self._pending_name)
                if outcome is not None:
                    return pos, outcome
            self._streaming = self._begun and buf[pos] == "{"
            if self._streaming and not self._sink.lenient:
                whole = complete_object(buf, pos)
                if whole is not None:  # already whole: read at C speed, sent as one fragment
                    end, value = whole
                    self._sink.args(buf[pos:end], value)
                    self._state, self._args_seen, self._streaming = _S.NEXT, True, False
                    return self._closed(buf, end)
        if scanner is None:
            self._scanner = scanner = JsonScanner(self._sink.lenient)
        pos = scanner.feed(buf, pos, final)
        piece = scanner.take()
        if self._streaming:
            self._sink.args(piece)
        else:
            self._value.append(piece)
        state = scanner.state
        if state != SCANNED:
            if state != ERROR:
                return pos, MORE
            why = scanner.error
            return pos, self._fail(why if why == "truncated" else "malformed JSON: " + why)
        for what in scanner.repairs:
            self._sink.repaired(what)
        text = "".join(self._value)
        if self._state == _S.KEY_TEXT:
            self._key, self._state = json.loads(text), _S.COLON
            self._keys_seen += 1
            if self._keys_seen == 1 and self._key not in self._name_keys + self._args_keys:
                if self._kind is None or self._key != self._kind[0]:
                    return pos, self._fail("not a call object")  # a JSON sample, not a call
                self._keys_seen = 0  # (the kind says nothing yet: the next key must be the call's)
            return pos, None
        self._state = _S.NEXT
        if self._kind is not None and self._key == self._kind[0] and json.loads(text) != self._kind[1]:
            return pos, self._fail("not a call object")
        if self._key in self._name_keys and not self._begun:
            return pos, self._accept_name(text)
        if self._key in self._args_keys:
            self._args_seen = True
            if not self._streaming:
                return pos, self._accept_held_args(text)
        return pos, None

    def _closed(self, buf: str, pos: int) -> tuple[int, Outcome | None]:
        """After arguments read whole: the envelope's ``}`` and the close marker, when they are
        there too, read at once (what reading them one by one gives); else None, and the
        envelope is read on from ``pos``."""
        closes = self._closes
        closed = _closing(closes[0]).match(buf, pos) if len(closes) == 1 else None
        if closed is None:
            return pos, None
        end = closed.end()
        outcome = self._finish()
        if outcome is not None:
            return end - len(closes[0]), outcome
        self._end_call()
        self._closes = []
        return end, DONE

    def _accept_name(self, text: str) -> Outcome | None:
        name = json.loads(text)
        if not isinstance(name, str):
            return self._fail("the call's name is not a string")
        if not self._held_args:
            self._pending_name = name  # wait for the arguments
            return None
        return self._begin(name)

    def _begin(self, name: str) -> Outcome | None:
        self._pending_name = ""
        why = self._sink.begin(name)
        if why:
            return self._fail(why)
        self._begun = True
        if self._missing:  # the dialect's own wrapper was not written (reported once)
            self._sink.repaired(f"call without the {self._missing} before it")
            self._missing = ""
        if self._held_args:
            self._sink.args(self._held_args)
        return None

    def _accept_held_args(self, text: str) -> Outcome | None:
        value = json.loads(text)
        if isinstance(value, str):  # arguments written as a JSON string
            try:
                value = json.loads(value)
            except ValueError:
                return self._fail("arguments string is not JSON")
            if not isinstance(value, dict):
                return self._fail("arguments are not a JSON object")
            text = to_json(value)
            self._sink.repaired("arguments given as a JSON string")
        if self._begun:
            self._sink.args(text)
        else:
            self._held_args = text
        return None

    # ---------------------------------------------------------------- the end of the block

    def _finish(self) -> Outcome | None:
        if not self._begun and self._pending_name and not self._bare:
            outcome = self._begin(self._pending_name)  # a call without arguments
            if outcome is not None:
                return outcome
        if not self._begun:
            return self._fail("not a call object" if self._bare else "the call object has no name")
        self._state = _S.TAIL
        if self._closes and self._closes[0]:
            self._unended = True  # ended by its close marker (``_end_call``)
        else:
            self._sink.end()  # no close marker: the object is the whole block
        return None

    def _end_call(self) -> None:
        """End the call whose object is complete (once its close marker, or what stands in its
        place, is read; at the end of output, after ``UNCLOSED_AT_END`` is reported, so that the
        parser decides whether it stands)."""
        if self._unended:
            self._unended = False
            self._sink.end()

    def _tail(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        end, outcome = close_tail(self._sink, buf, pos, final, self._closes[0])
        if outcome is MORE and self._closes[0][0] not in " \t\n\r,{":
            self.wait = self._close_waits
        if outcome is DONE:
            self._end_call()
            self._closes = self._closes[1:] if buf.startswith(self._closes[0], pos) else []
        return end, outcome

    def _close_waits(self, buf: str) -> bool:
        close = self._closes[0]
        return len(buf) < len(close) and close.startswith(buf)

    def _another(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """After a call, inside the wrapper: ``,`` or ``{`` starts the next call object."""
        start = skip_ws(buf, pos + 1) if buf[pos] == "," else pos
        if start >= len(buf):
            return pos, self._at_end(final)
        self._end_call()  # the output goes on: the call was not cut
        if buf[start] != "{":  # not another object: the wrapper's end is missing (reported)
            self._sink.repaired(f"missing {self._closes[0]} after the call")
            return pos, DONE
        self._sink.keep(pos)  # a failure of the next object returns only its own text
        if pos != start:
            self._sink.repaired("several call objects in one wrapper")
        self._state, self._scanner, self._key, self._keys_seen = _S.LEAD, None, "", 0
        self._begun, self._held_args, self._pending_name, self._args_seen = False, "", "", False
        return start, None

    def _inner_wrapper(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        found = match_at(buf, pos, tuple(self._inner), final)
        if found == "":
            return pos, self._at_end(final)
        if found is None:
            return pos, self._fail("not a JSON object")
        self._closes.insert(0, self._inner[found])
        self._inner = {}
        return pos + len(found), None

    def _at_end(self, final: bool) -> Outcome:
        if not final:
            return MORE
        if self._state == _S.NEXT and self._begun and self._args_seen:
            # The arguments are complete; only the envelope's end is missing: the parser decides
            # (a length stop, or a required argument unwritten, makes it truncated).
            self._state, self._unended = _S.TAIL, True
        if self._state == _S.TAIL:
            self._sink.repaired(UNCLOSED_AT_END)
            self._end_call()
            self._closes = []
            return DONE
        if self._lenient and self._state == _S.LEAD:
            return self._fail("not a call: the wrapper holds no call object")
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


def stream_arguments(sink: CallSink, scanner: JsonScanner, buf: str, pos: int, final: bool,
                     fail: Callable[[str], Outcome]) -> tuple[int, Outcome | None]:
    """Read a call's JSON arguments with ``scanner``, streaming what it reads to ``sink``.

    Returns the position reached and ``fail(why)`` when the arguments are not a call, MORE while
    they are incomplete, None once they are complete.
    """
    pos = scanner.feed(buf, pos, final)
    sink.args(scanner.take())
    if scanner.state == ERROR:
        why = scanner.error
        return pos, fail(why if why == "truncated" else "malformed JSON: " + why)
    if not scanner.done:
        return pos, MORE
    for what in scanner.repairs:
        sink.repaired(what)
    return pos, None


def close_tail(sink: CallSink, buf: str, pos: int, final: bool, close: str) -> tuple[int, Outcome]:
    """After a complete call: consume its close marker (``pos`` is past whitespace).

    A close marker cut off by the end of output is consumed; any other text ends the block
    without one (reported), and content resumes there.
    """
    if buf.startswith(close, pos):
        return pos + len(close), DONE
    if cut_off(buf, pos, close):
        if not final:
            return pos, MORE
        sink.repaired(UNCLOSED_AT_END)
        return len(buf), DONE
    sink.repaired(f"missing {close} after the call")
    return pos, DONE


class _N:  # (plain ints, as _S)
    NAME = 0
    ARGS = 1
    TAIL = 2


class NameJsonBody:
    """Body kind: ``NAME`` + a name terminator + ``{json}`` + a close marker.

    Functionary v3.1 and Hermes-family models write ``<function=NAME>{"a": 1}</function>``. The call
    begins when the ``{`` after the name confirms it (so prose mentioning the tag is not a call) and
    the arguments stream as slices of the model's text.
    """

    def __init__(self, sink: CallSink, opened_by: str, *, name_end: str, close: str) -> None:
        self.reason = ""
        self._sink = sink
        self._name_end = name_end
        self._close = close
        self._state = _N.NAME
        self._name = ""
        self._scanner = JsonScanner(self._sink.lenient)

    def fast(self, text: str) -> str | None:
        return text if self._state == _N.ARGS and self._scanner.in_plain_string(text) else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if self._state == _N.NAME:
            self._name, pos, complete = read_label(buf, pos, self._name_end)
            if not complete:
                why = "truncated" if complete is None and final else "malformed call name"
                return pos, MORE if complete is None and not final else self._fail(why)
            self._state = _N.ARGS
        if self._state == _N.ARGS:
            pos, outcome = self._args(buf, pos, final)
            if outcome is not None:
                return pos, outcome
        pos = skip_ws(buf, pos)
        if pos >= len(buf) and final:
            self._sink.repaired(UNCLOSED_AT_END)
            self._sink.end()  # (after the report: the parser decides whether the call stands)
            return pos, DONE
        if pos >= len(buf):
            return pos, MORE
        pos, outcome = close_tail(self._sink, buf, pos, final, self._close)
        if outcome is DONE:
            self._sink.end()  # its close marker, or what stands in its place, was read
        return pos, outcome

    def _args(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        scanner = self._scanner
        if not scanner.started:
            pos = skip_ws(buf, pos)
            if pos >= len(buf):
                return pos, self._fail("truncated") if final else MORE
            if buf[pos] != "{":
                return pos, self._fail("arguments are not a JSON object")
            why = self._sink.begin(self._name)
            if why:
                return pos, self._fail(why)
        pos, outcome = stream_arguments(self._sink, scanner, buf, pos, final, self._fail)
        if outcome is not None:
            return pos, outcome
        self._state = _N.TAIL  # the call ends with its close marker (``feed``)
        return pos, None

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
