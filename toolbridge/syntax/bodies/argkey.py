"""Body kind: a name then ``<arg_key>K</arg_key><arg_value>V</arg_value>`` pairs (GLM).

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>

The name is everything up to the first tag, trimmed; it must look like one name (no spaces), so
prose after a literal ``<tool_call>`` is rejected at its first space. A block whose body is a
JSON object (GLM models sometimes fall back to the Hermes form) is read as one. Values are raw text typed by
the schema and kept exactly as written, whitespace included. A value ends at ``</arg_value>``, or
at the call's close tag when the model left ``</arg_value>`` out; a close tag inside a value (code
about tool calls) is value text when a ``</arg_value>`` follows it before the next key, call or
the end of output (``CloseInValue``: a look-ahead of ``LOOKAHEAD`` characters). A key may not contain a tag: a key
that runs into another delimiter fails the block rather than swallowing the next pair. A closed key
without a value fails the block too, unless the tags allow orphan keys (dropped and reported).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial

from .json import JsonEnvelopeBody
from ..markers import MarkerSet, marker_set, match_at, opens_more
from ..rawvalue import RawValue, end_typed, plain_pairs
from ..dialect import (
    DONE,
    FAIL,
    MORE,
    TRUNCATED,
    UNCLOSED_AT_END,
    CallSink,
    Calls,
    Outcome,
    raw_value,
    to_json,
)


# Whitespace between tags; a literal backslash-n counts too (output that was escaped twice).
_WS = re.compile(r"(?:\s|\\n)*")
_NAME_RUN = re.compile(r"(?:[^<\s\\]|\\(?!n))+")
_NAME_FIRST = re.compile(r"\w")
_LIMIT = 256


@dataclass(frozen=True)
class ArgKeyTags:
    key: tuple[str, str] = ("<arg_key>", "</arg_key>")
    value: tuple[str, str] = ("<arg_value>", "</arg_value>")
    block_close: str = "</tool_call>"
    # A key followed by another key or the close tag instead of its value is dropped (reported)
    # and the call stands (Poolside); by default such a block is malformed.
    orphan_keys: bool = False
    value_ends: MarkerSet = field(init=False, repr=False)
    # A pair's opening written plainly, up to its value (``read_pairs``)
    plain_pair: re.Pattern[str] = field(init=False, repr=False, compare=False)
    # and a whole pair whose value holds no tag's first character, with its value's close
    whole_pair: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # A </tool_call> inside a value may be the model closing the call without </arg_value>,
        # or text (CloseInValue tells which).
        object.__setattr__(self, "value_ends", marker_set((self.value[1], self.block_close)))
        pair = (f"[ \t\r\n]*{re.escape(self.key[0])}([^<]{{0,{_LIMIT}}}){re.escape(self.key[1])}"
                f"[ \t\r\n]*{re.escape(self.value[0])}")
        object.__setattr__(self, "plain_pair", re.compile(pair))
        # (what ``plain_end`` finds for such a value, in the same match: only where the call's
        # close begins with the value close's first character, as then no tag can be in it)
        first = self.value[1][0]
        whole = f"{pair}([^{re.escape(first)}]*+){re.escape(self.value[1])}"
        object.__setattr__(self, "whole_pair", re.compile(whole) if self.block_close.startswith(first) else None)


_PLAIN_NAME = re.compile(rf"[ \t\r\n]*(\w[^<\s\\]{{0,{_LIMIT - 1}}})[ \t\r\n]*(?=<)")
_SPACE = re.compile(r"[ \t\r\n]*")

Pairs = list[tuple[str, str]]


def read_pairs(tags: ArgKeyTags, text: str, pos: int) -> tuple[Pairs, int] | None:
    """A call's pairs from ``pos`` (after its name) to the end of its block, when written
    plainly: each pair's key and value tags in order with only white space between them, keys
    without ``<``, each value closed by its close tag with no call close before it, no key twice,
    the block's close after the last. The raw values and the position after the block's close;
    None for anything else (then it is read piece by piece). ``feed`` and ``read_plain`` both
    read a whole block so."""
    b_close = tags.block_close
    whole = tags.whole_pair.match if tags.whole_pair is not None else None
    read = plain_pairs(text, pos, whole, tags.plain_pair.match, tags.value[1], (b_close,))
    if read is None:
        return None
    pairs, pos = read
    pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
    return (pairs, pos + len(b_close)) if pairs and text.startswith(b_close, pos) else None


def read_whole(tags: ArgKeyTags, text: str, pos: int) -> tuple[str, None, Pairs, int, bool] | None:
    """A block from ``pos`` (after its opening tag) read whole: its name, None for arguments
    still to type, the raw values (``read_pairs``), where it ends, and False (no text whose
    layout is known: ``json.read_whole``)."""
    head = _PLAIN_NAME.match(text, pos)
    read = read_pairs(tags, text, head.end()) if head is not None else None
    return None if read is None else (head[1], None, read[0], read[1], False)  # type: ignore[index]


# How far past a close tag inside a value the reader looks for what tells whether it closed the
# call: that much of a value is held, at most, while its verdict waits.
LOOKAHEAD = 1024


# Whitespace a next pair may hold between its key and its value, at most (in the look-ahead).
_PAIR_GAP = r"(?:\s|\\n){0,16}"


@lru_cache(maxsize=16)
def _tellers(value_close: str, key: tuple[str, str], value_open: str, call_open: str) -> tuple[re.Pattern[str], int]:
    """What tells what a close tag inside a value was: a pattern, and the longest match's length.
    A next key counts only as a whole pair opening (``<arg_key>NAME</arg_key><arg_value>``, a key
    of at most ``_LIMIT`` characters without a tag of the pair), so a value that mentions
    ``<arg_key>`` in prose is not taken for the next pair."""
    name = f"(?:(?!{re.escape(key[1])}|{re.escape(key[0])}|{re.escape(value_open)}).){{0,{_LIMIT}}}"
    pair = re.escape(key[0]) + name + re.escape(key[1]) + _PAIR_GAP + re.escape(value_open)
    tags = tuple(re.escape(t) for t in (value_close, call_open) if t)
    longest = max(len(value_close), len(call_open), len(key[0]) + _LIMIT + len(key[1]) + 32 + len(value_open))
    return re.compile("|".join((*tags, pair)), re.DOTALL), longest


def held_at_most(tags: ArgKeyTags, opened_by: str) -> int:
    """How much past a close tag inside a value may be held while its verdict waits: the
    look-ahead, and a teller that starts in it (a whole next pair's opening, at the longest)."""
    return LOOKAHEAD + _tellers(tags.value[1], tags.key, tags.value[0], opened_by)[1]


class CloseInValue:
    """Which end tags end one value (a ``rawvalue.Placement``): ``</arg_value>`` always; the
    call's close tag only when no ``</arg_value>`` follows it before the next pair (``_tellers``), the
    next call's opening tag or the end of output, looking ``LOOKAHEAD`` characters ahead (past
    them with none of those seen, it is text: the value goes on). What was scanned is
    remembered, in the value's positions, so that a value holding many close tags is scanned
    once."""

    __slots__ = ("_clear", "_close", "_found", "_found_at", "_from", "_longest", "_tellers", "_value_close")

    def __init__(self, tags: ArgKeyTags, opened_by: str) -> None:
        self._close, self._value_close = tags.block_close, tags.value[1]
        self._tellers, self._longest = _tellers(tags.value[1], tags.key, tags.value[0], opened_by)
        self._from = self._clear = 0  # no teller starts in [_from, _clear) ...
        self._found: re.Match[str] | None = None  # ... nor before this one (at _found_at), if found
        self._found_at = -1

    def ends(self, buf: str, found: re.Match[str], before: str, final: bool, base: int) -> bool | None:
        if found.group() != self._close:
            return True
        at = base + found.end()
        limit = at + LOOKAHEAD
        if self._found_at >= at and self._from <= at:
            return self._verdict(limit)
        if self._found_at >= 0 or not (self._from <= at <= self._clear):
            self._from, self._clear, self._found_at = at, at, -1  # (a teller before this tag)
        stop = min(len(buf), limit - base + self._longest - 1)
        m = self._tellers.search(buf, self._clear - base, stop)
        if m is not None:
            self._found, self._found_at = m, base + m.start()
            return self._verdict(limit)
        if stop < len(buf) or base + stop >= limit + self._longest - 1:
            self._clear = limit
            return False  # nothing tells within the look-ahead: the tag is text
        if final:  # the output ended: the tag closed the call unless text ran past the look-ahead
            return base + len(buf) <= limit
        self._clear = max(self._clear, base + stop - self._longest + 1)  # (a teller may be cut there)
        return None

    def _verdict(self, limit: int) -> bool:
        return self._found_at < limit and self._found.group() != self._value_close  # type: ignore[union-attr]


def render_argkey(tags: ArgKeyTags, calls: Calls, newlines: bool) -> str:
    """Calls as GLM templates write them (4.5/4.6 with newlines between elements, 4.7 without)."""
    nl = "\n" if newlines else ""
    return "\n".join(
        f"<tool_call>{name}{nl}"
        + "".join(f"{tags.key[0]}{k}{tags.key[1]}{nl}{tags.value[0]}{raw_value(v)}{tags.value[1]}{nl}"
                  for k, v in args.items())
        + tags.block_close
        for name, args in calls
    )


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    NAME = 0
    PAIRS = 1  # between pairs
    KEY = 2
    VALUE_OPEN = 3  # between a key and its value tag
    VALUE = 4


class ArgKeyBody:
    """Read one GLM call; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, tags: ArgKeyTags) -> None:
        self.reason = ""
        self._sink = sink
        self._tags = tags
        self._state = _S.NAME
        self._name: list[str] = []
        self._name_done = False  # whitespace after the name was seen
        self._key: list[str] = []
        self._params = 0
        self._value: RawValue | None = None
        self._json: JsonEnvelopeBody | None = None
        self._opened_by = opened_by
        self.hold_until = (tags.block_close,)  # (Body.hold_until: a short block comes whole)

    def fast(self, text: str) -> str | None:
        """The arguments fragment for ``text`` when it only continues a streamed string value."""
        return self._value.fast(text) if self._value is not None else None

    def whole_reader(self) -> Callable[[str, int], tuple[str, None, Pairs, int, bool] | None] | None:
        """How a block this body reads is read whole (``read_whole``; its raw values are typed
        by the parser, by the offered schema)."""
        return partial(read_whole, self._tags)

    def _whole(self, buf: str, pos: int) -> tuple[int, Outcome] | None:
        """A call whose pairs are all in ``buf``, written plainly (``read_pairs``): begun,
        typed and ended at once, as ``read_plain`` reads it (one piece of arguments)."""
        read = read_pairs(self._tags, buf, pos)
        if read is None:
            return None
        outcome = self._begin()
        if outcome is not None:
            return pos, outcome
        end_typed(self._sink, read[0])
        return read[1], DONE

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if self._json is not None:
            end, settled = self._json.feed(buf, pos, final)
            self.reason = self._json.reason
            return end, settled
        outcome: Outcome | None
        while True:
            state = self._state
            if self._json is not None:
                return self.feed(buf, pos, final)
            if state == _S.NAME:
                pos, outcome = self._read_name(buf, pos, final)
            elif state == _S.KEY:
                pos, outcome = self._read_key(buf, pos, final)
            elif state == _S.VALUE:
                pos, outcome = self._read_value(buf, pos, final)
            else:
                pos, outcome = self._tag(buf, _skip(buf, pos), final)
            if outcome is not None:
                return pos, outcome

    def _read_name(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        while pos < len(buf):
            ws_end = _skip(buf, pos)
            if ws_end > pos:
                self._name_done = self._name_done or bool(self._name)
                pos = ws_end
                continue
            if buf[pos] == "{" and not self._name:
                self._json = JsonEnvelopeBody(self._sink, self._opened_by, close=self._tags.block_close)
                return pos, None
            if buf[pos] == "<":
                if not self._name:
                    return pos, self._fail("call without a name")
                self._state = _S.PAIRS  # the call begins once the next tag confirms it
                return self._whole(buf, pos) or (pos, None)
            if buf[pos] == "\\" and pos + 1 == len(buf) and not final:
                return pos, MORE  # a backslash-n (escaped newline) may be arriving
            if self._name_done:
                return pos, self._fail("not a call: text after the name")
            if not self._name and not _NAME_FIRST.match(buf, pos):
                return pos, self._fail("not a call: no name after the tag")
            found = _NAME_RUN.match(buf, pos)
            if found is None:
                return pos, self._fail("not a call: unexpected character in the name")
            # A name longer than _LIMIT fails where it crosses the limit, however it was chunked.
            run = min(found.end(), pos + _LIMIT + 1 - sum(map(len, self._name)))
            self._name.append(buf[pos:run])
            pos = run
            if sum(map(len, self._name)) > _LIMIT:
                return pos, self._fail("not a call: name too long")
        return pos, (self._fail("truncated") if final else MORE)

    def _begin(self) -> Outcome | None:
        """Begin the call once its name is confirmed by a following tag."""
        if not self._name:
            return None
        why = self._sink.begin("".join(self._name))
        self._name = []
        return self._fail(why) if why else None

    def _tag(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        tags = self._tags
        if self._state == _S.PAIRS:
            options: tuple[str, ...] = (tags.key[0], tags.block_close, self._opened_by)
        elif tags.orphan_keys:
            options = (tags.value[0], tags.key[0], tags.block_close)
        else:
            options = (tags.value[0],)
        found = match_at(buf, pos, options) if pos < len(buf) else ""
        if found is None and len(buf) - pos == 1 and buf[pos] == "\\" and not final:
            found = ""  # a backslash-n (escaped newline) may be arriving
        if found == self._opened_by and self._state == _S.PAIRS:
            outcome = self._begin()  # the next call starts: this one was not closed
            if outcome is not None:
                return pos, outcome
            self._sink.repaired(f"missing {tags.block_close} before the next call")
            return pos, self._end_call()
        if found == "":
            if not final:
                return pos, MORE
            return len(buf), self._at_end(buf[pos:])
        if found is None:
            return pos, self._fail("unexpected text in a call block")
        outcome = self._begin()
        if outcome is not None:
            return pos, outcome
        pos += len(found)
        if self._state == _S.VALUE_OPEN and found != tags.value[0]:
            self._sink.repaired(f"argument key {''.join(self._key)!r} without a value dropped")
        if found == tags.key[0]:
            self._state, self._key = _S.KEY, []
        elif found == tags.value[0]:
            key = "".join(self._key)
            self._sink.args(("{" if not self._params else ", ") + to_json(key) + ": ")
            self._params += 1
            self._value = RawValue(self._sink, key, tags.value_ends, False, CloseInValue(tags, self._opened_by))
            self._state = _S.VALUE
        else:
            return pos, self._end_call()
        return pos, None

    def _read_key(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """A key ends at its close tag, whatever it holds (``items<0>``); it is held until the
        tag comes, at most ``_LIMIT`` characters, and may not hold one of the block's own tags
        (it would swallow the next pair)."""
        tags = self._tags
        close = tags.key[1]
        end = buf.find(close, pos, pos + _LIMIT + len(close))
        window = buf[pos:end] if end != -1 else buf[pos : pos + _LIMIT + len(close)]
        own = [i for t in (tags.key[0], tags.value[0], tags.value[1], tags.block_close, self._opened_by)
               if t and (i := window.find(t)) != -1]
        if own:
            return pos + min(own), self._fail("malformed argument key")
        if end == -1:
            if len(buf) - pos >= _LIMIT + len(close):  # the whole window is there, no close in it
                return pos, self._fail("malformed argument key")
            return pos, (self._fail("truncated") if final else MORE)
        self._key = [window]
        self._state = _S.VALUE_OPEN
        return end + len(close), None

    def _read_value(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        assert self._value is not None
        pos, end = self._value.feed(buf, pos, final)
        if end is None:
            return pos, MORE if not final else self._fail("truncated")
        self._value = None
        if end.group() == self._tags.value[1]:
            self._state = _S.PAIRS
            return pos, None
        self._sink.repaired(f"missing {self._tags.value[1]}")
        return pos, self._end_call()

    def _end_call(self) -> Outcome:
        if self._params:
            self._sink.args("}")
        self._sink.end()
        return DONE

    def _at_end(self, tail: str = "") -> Outcome:
        tags = self._tags
        if opens_more(tail, (tags.key[0], tags.value[0], self._opened_by), (tags.block_close,)):
            return self._fail(TRUNCATED)  # another argument was coming
        if self._state == _S.PAIRS:
            outcome = self._begin()
            if outcome is not None:
                return outcome
            self._sink.repaired(UNCLOSED_AT_END)
            return self._end_call()
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


def _skip(buf: str, pos: int) -> int:
    return _WS.match(buf, pos).end()  # type: ignore[union-attr]  # a starred pattern always matches
