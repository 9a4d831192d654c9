"""DialectParser: one dialect's model output text in, events out; sans-I/O, one instance per response.

Strategy (after h11): one phase (CONTENT, REASONING or CALL) plus a buffer that holds only text
not yet consumed. In CONTENT and REASONING the parser searches the buffer for the phase's
markers; text before a marker is emitted at once, and only a tail that could still grow into a
marker is held back. A call-start marker hands the buffer to the dialect's body reader, which
consumes as far as it can and reports calls through this object's CallSink methods. Nothing
consumed is ever scanned again, so each ``feed`` costs O(len(text) + longest marker).

Invariants:
- every character fed comes out exactly once: as Text, as Reasoning, as part of a call block,
  or (for a block that did not become a call) as Text after a CallRejected/CallAborted event;
- a call is begun only for a name that resolves to an offered tool (any plausible name when no
  tools were given), and ends only with arguments that parse as a JSON object;
- ``parse(text)`` is ``feed(text) + close()`` on a fresh parser (``parse_whole``, which reads
  prose and plain calls at C speed, gives exactly those events).
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from ..syntax.markers import WHOLE_NEAR, cut_off, marker_set
from ..syntax.rawvalue import typed_object
from ..syntax.dialect import (EMPTY_SECTION, FAIL, HOLD_TAGGED_BLOCK, MORE, TRUNCATED, UNCLOSED_AT_END, Body,
                              Dialect, still_held)
from ..dialects import get_dialect
from .ids import random_hex
from ..errors import ConfigError
from ..pieces import TextBuffer
from ..events import (
    ArgumentsDelta,
    CallAborted,
    CallRejected,
    Event,
    Invalid,
    Reasoning,
    Repaired,
    Text,
    ToolCallBegin,
    ToolCallEnd,
)
from ..tools import Toolset, coerce
from .argtyper import ArgumentTyper, already_typed, typed_and_valid

_SPACE = re.compile(r"\s*")
_PLAUSIBLE_NAME = re.compile(r"[A-Za-z_][\w.\-:/]{0,127}")


class Phase(enum.Enum):
    START = "start"  # the answer has not begun: whitespace only so far
    CONTENT = "content"
    REASONING = "reasoning"
    CALL = "call"


# The members as module constants: in a hot path, ``Phase.CALL`` (an Enum member's lookup on
# its class) costs several times a global's lookup (as ``syntax.dialect``'s outcomes).
START, CONTENT, REASONING, CALL = Phase.START, Phase.CONTENT, Phase.REASONING, Phase.CALL


class _Call:
    """The call being read: its index, name and argument fragments, and the decoded arguments
    when they came whole and went out unchanged (a plain class: one is made per call)."""

    __slots__ = ("fragments", "index", "name", "value")

    def __init__(self, index: int, name: str) -> None:
        self.index, self.name = index, name
        self.fragments = TextBuffer()
        self.value: Any = None


def random_call_id(index: int = 0) -> str:
    """An OpenAI-style call id: ``call_`` and 24 random hex digits (``index`` is not used); from
    the operating system's random bytes, drawn in batches (``ids``)."""
    return "call_" + random_hex(24)


def final_text(scan: Any, text: str, pos: int) -> list[Event]:
    """The Text events of a whole output's last stretch ``text[pos:]``, which holds no marker,
    as ``feed`` then ``close`` give them: what ``feed`` emits, then the tail that could still
    have grown into a marker (``scan``: a MarkerSet), which ``feed`` holds back and ``close``
    emits."""
    kept = scan.holdback(text, pos)
    if not kept:
        return [Text(text[pos:])] if pos < len(text) else []
    held = len(text) - kept
    return [Text(text[pos:held]), Text(text[held:])] if pos < held else [Text(text[held:])]


FENCE = "```"
OPEN_FENCE, FENCE_CLOSE_AHEAD = 1, 2  # DialectParser._fence


def _no_schema(key: str) -> None:
    return None


def _loose(key: str, raw: str, schema: None) -> Any:
    return coerce(raw, None)


_UNMADE = object()  # a call's typer, before its first piece of arguments
_NO_BLOCK = TextBuffer()  # the parser's ``_raw`` outside a block (never appended to)
_NO_IDS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Setup:
    """What a parser of one dialect with given options looks for (shared, made once)."""

    think: tuple[frozenset[str], frozenset[str]] | None  # the reasoning openers, the closers
    content: Any  # the markers searched for outside reasoning (a MarkerSet)
    reasoning: Any  # and inside it
    drop: frozenset[str]
    strays: frozenset[str]
    answer_opens: frozenset[str]  # dropped tokens that end reasoning (``Dialect.answer_opens``)
    openers: str  # the first characters of the bare openers (None: any answer may be a call)
    # How the block each call marker opens is read whole (its body's ``whole_reader``; None:
    # it is not), filled in as markers are met: the body made to ask is not kept.
    readers: dict[str, Any] = field(default_factory=dict, compare=False)


_SETUPS: dict[tuple[int, bool, int], tuple[Dialect, tuple[str, ...], _Setup]] = {}


def _setup_of(dialect: Dialect, reasoning: bool, drop_tokens: tuple[str, ...]) -> _Setup:
    """``_setup``, found by the identity of the dialect and of the dropped tokens: hashing a
    Dialect (a frozen dataclass of a dozen fields) or auto's ~80 dropped tokens for the cache's
    key cost more than the rest of a parser's construction. The entry keeps both, so an id is
    never taken for another object's."""
    key = (id(dialect), reasoning, id(drop_tokens))
    found = _SETUPS.get(key)
    if found is not None and found[0] is dialect and found[1] is drop_tokens:
        return found[2]
    if len(_SETUPS) >= 512:
        _SETUPS.clear()
    setup = _setup(dialect, reasoning, drop_tokens)
    _SETUPS[key] = (dialect, drop_tokens, setup)
    return setup


def _think_tags(dialect: Dialect, reasoning: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The reasoning openers and closers the parser recognises (none: no reasoning phase)."""
    if not reasoning and dialect.calls_in_reasoning:
        return (), ()
    # (Reasoning that may quote calls is recognised even when it is not split out: it passes
    # through as content, markers included, and starts no call.)
    pairs = [p for p in (dialect.reasoning, dialect.reasoning_also) if p is not None]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


@lru_cache(maxsize=512)
def _setup(dialect: Dialect, reasoning: bool, drop_tokens: tuple[str, ...]) -> _Setup:
    opens, closes = _think_tags(dialect, reasoning)
    starts = dialect.call_start
    strays = dialect.stray_tokens if reasoning else ()
    # The family's own end-of-turn and end-of-sentence tokens never reach the client.
    drop_tokens = drop_tokens + dialect.own_end_tokens
    content = marker_set(starts + opens + drop_tokens + strays)
    reasoning_scan = marker_set((starts if dialect.calls_in_reasoning else ()) + closes + drop_tokens)
    think = (frozenset(opens), frozenset(closes)) if opens else None
    openers = None if "" in dialect.bare_start else "".join({o[0] for o in dialect.bare_start})
    answer_opens = frozenset(t for t in dialect.answer_opens if t in drop_tokens) if reasoning else frozenset()
    return _Setup(think, content, reasoning_scan, frozenset(drop_tokens), frozenset(strays), answer_opens,  # type: ignore[arg-type]
                  openers)


class DialectParser:
    """The parser of one dialect; ``StreamParser`` (``toolbridge.parsing.parser``) is the public
    name, which also makes ``AutoParser`` for ``dialect="auto"``. Arguments as StreamParser's."""

    # Slots, all set at construction: attribute reads and writes per delta then take one fixed
    # path. (As a plain instance, a parser's 36 attributes outgrow the 30 a class's instances
    # share, and which ones are shared depends on the order a process first sets them, so
    # parsers streamed after other work ran several per cent slower.)
    __slots__ = ("_answer", "_answer_opens", "_block_rejection", "_body", "_buf", "_call", "_call_id", "_closed",
                 "_closing", "_coerce", "_cut", "_drop", "_fence", "_held", "_hold", "_holding", "_keep_at", "_last_index",
                 "_native_ids", "_next_index", "_openers", "_out", "_phase", "_raw", "_readers", "_resume", "_scan",
                 "_scans", "_split", "_strays", "_think", "_tools", "_typer", "_validate", "dialect",
                 "first_settled", "halt_on_reject", "lenient")

    def __init__(
        self,
        dialect: str | Dialect,
        tools: list[dict[str, Any]] | Toolset | None = None,
        *,
        reasoning: bool = False,
        in_reasoning: bool | None = None,
        validate: bool = True,
        reject_invalid: bool = False,
        call_id: Callable[[int], str] = random_call_id,
        drop_tokens: tuple[str, ...] = (),
        coerce: bool = True,
        repair: bool = False,
    ) -> None:
        self.dialect = dialect = get_dialect(dialect)
        self.lenient = repair  # CallSink: bodies read JSON leniently
        self._tools = tools = tools if isinstance(tools, Toolset) or tools is None else Toolset(tools)
        setup = _setup_of(dialect, reasoning, drop_tokens if type(drop_tokens) is tuple else tuple(drop_tokens))
        self._split = reasoning
        self._think, self._drop, self._strays = setup.think, setup.drop, setup.strays
        self._answer_opens = setup.answer_opens
        self._scans = setup.content, setup.reasoning
        self._answer = answer = START if dialect.bare_start else CONTENT
        self._openers, self._readers = setup.openers, setup.readers
        if in_reasoning is None:
            in_reasoning = dialect.starts_in_reasoning
        if setup.think and in_reasoning:
            self._resume = self._phase = REASONING
            self._scan = setup.reasoning  # (as the phase setter sets them)
        else:
            self._resume = self._phase = answer
            self._scan = setup.content
        if tools is None:
            validate = reject_invalid = coerce = False
        self._validate, self._hold, self._coerce = validate, reject_invalid, coerce
        self._call_id = call_id
        self._out: list[Event] = []
        self._typer: Any = None  # the call's ArgumentTyper, _UNMADE until its first piece, None: none
        self._raw = _NO_BLOCK  # the open block's text (a 33k call: some 8,000 deltas)
        self._buf = ""
        self._held: list[Event] | None = None
        self._body: Body | None = None
        self._call: _Call | None = None
        self._block_rejection = ""
        self._keep_at: int | None = None
        self._next_index = 0
        self._native_ids: frozenset[str] | set[str] = _NO_IDS  # a set of its own once one is seen
        self._last_index: int | None = None
        self._closed = False
        self._cut = False  # close(cut=True): the output stopped at a length limit
        self._closing = False  # the current call is being ended by the end of output
        # Set by auto while a trial is being judged: stop reading when the first block is refused
        # (nothing after it is wanted), so a trial's work is bounded by the block.
        self.halt_on_reject = False
        self.first_settled: int | None = None  # where the first block's events end, in its run
        self._holding: tuple[str, ...] = ()  # while a short block is held: what closes it
        # A markdown fence opened the block (OPEN_FENCE); the block failed and its closing fence
        # is still ahead (FENCE_CLOSE_AHEAD): that "```" closes it, it opens no block (one
        # refused call is reported once, not again as an empty fence).
        self._fence = 0

    # ------------------------------------------------------------------ public API

    @property
    def phase(self) -> Phase:
        """Where the parser is: START, CONTENT, REASONING or CALL."""
        return self._phase

    @phase.setter
    def phase(self, phase: Phase) -> None:
        self._phase = phase
        # The markers of the phase, kept at hand for speed (not by a dict of phases: hashing an
        # enum member is a Python-level call).
        self._scan = self._scans[phase is REASONING]

    def feed(self, text: str) -> list[Event]:
        """Consume the next piece of output; return the events it completes."""
        if self._closed:
            raise ConfigError("feed() called after close()")
        if not self._buf and text:  # fast paths for the two common cases
            phase = self._phase
            if phase is CALL:
                fragment = self._body.fast(text)  # type: ignore[union-attr]
                if fragment is not None:
                    self._raw.append(text)
                    self._out = []
                    self.args(fragment)
                    return self._out
            elif phase is not START:
                if self._scan.clear(text):
                    return [Text(text) if phase is CONTENT or not self._split else Reasoning(text)]
            elif self._plain_start(text):
                self.phase = CONTENT
                return [Text(text)]
        elif text and self._phase is CALL:
            # The block waits at the start of the buffer (a short block, a head or a close
            # marker being written): while the text still only waits, it is kept unread.
            wait = self._block_waits if self._holding else getattr(self._body, "wait", None)
            if wait is not None:
                buf = self._buf + text
                if wait(buf):
                    self._buf = buf
                    return []
                return self._run(buf, final=False)
        elif text and self._phase is not START and self._scan.waits(self._buf + text):
            self._buf += text  # still the start of a marker: held back whole, as _in_text would
            return []
        return self._run(self._buf + text if self._buf else text, final=False)

    def feed_plain(self, text: str) -> bool:
        """``feed(text)`` when it would give exactly ``[Text(text)]`` (a delta of plain content,
        the common one, which changes nothing in the parser): True, without making the event;
        False otherwise, and nothing is read (then ``feed`` it)."""
        return (self._phase is CONTENT and not self._buf and not self._closed and text != ""
                and self._scan.clear(text))

    def feed_block(self, text: str, marker: str) -> list[Event]:
        """``feed(text)`` for a text that starts with ``marker``, found whole by the caller
        where this parser's content resumes (``auto``'s trials, which found it with a wider
        set of markers): a call marker of the dialect opens its block at once, unsearched."""
        if (self._buf or self._closed or self._phase is not CONTENT or marker not in self.dialect.call_start
                or not text.startswith(marker)):
            return self.feed(text)
        self._open_block(marker, marker)
        return self._run(text, False, len(marker))

    def parse_whole(self, text: str, cut: bool = False) -> list[Event]:
        """``feed(text) + close(cut)``: the events of a whole output (what ``parse`` reads),
        prose and plain calls read at C speed (``read_plain``), anything else by ``feed`` and
        ``close``."""
        events = self.read_plain(text, cut)
        return self.feed(text) + self.close(cut) if events is None else events

    def read_plain(self, text: str, cut: bool = False, start: int = 0, opened: str = "",
                   most: int | None = None) -> list[Event] | None:
        """The events of ``feed(text[start:]) + close(cut)``, read at C speed, when the rest of
        the output, ``text[start:]``, holds no marker but the dialect's call openers and each
        call block is read whole by its body (``whole``: one decode) into a call that ``feed``
        would make as it is (a name offered exactly, arguments already typed and valid); the
        parser is then closed. None for anything else, the parser unchanged. ``opened``: the
        call marker ``text`` has at ``start`` (``auto`` found it), read without a search.
        ``most``: an output of more calls than this is None as well (each costs some
        microseconds of Python: a bound on the time, for a caller that must keep it short)."""
        read = self.plain_calls(text, start, opened, most)
        if read is None:
            return None
        calls, pos = read
        scan = self._scan
        out: list[Event] = []
        index = self._next_index
        for lead, name, arguments, _ in calls:
            if lead:
                out.append(Text(lead))
            out += (ToolCallBegin(index, self._call_id(index), name), ArgumentsDelta(index, arguments),
                    ToolCallEnd(index, arguments))
            self._last_index, index = index, index + 1
        if pos < len(text):
            out += final_text(scan, text, pos)
        # (the phase's markers are already the content's: START and CONTENT share them)
        self._next_index, self._closed, self._cut, self._phase = index, True, cut, CONTENT
        return out

    def plain_calls(self, text: str, start: int = 0, opened: str = "",
                    most: int | None = None) -> tuple[list[tuple[str, str, str, Any]], int] | None:
        """What ``read_plain`` reads, the parser left as it is: each call's text before it, its
        name, its arguments and their value (what they decode to), and where the last call ends
        (what follows is text); None when ``read_plain`` gives None. A parser never fed reads
        any number of whole outputs so (``parser.parse_message``)."""
        if self.lenient or self._buf or self._closed or self._phase is REASONING or self._phase is CALL:
            return None
        if self._phase is START and self._bare_at_start(text[start:] if start else text):
            return None
        scan, calls, pos, at, marker = self._scan, [], start, start, opened
        while True:
            if not marker:
                m = scan.search(text, pos, near=WHOLE_NEAR)
                if m is None:
                    break
                at, marker = m.start(), m.group()
            if len(calls) == most:
                return None
            read = self._plain_call(text, marker, at + len(marker))
            if read is None:
                return None
            calls.append((text[pos:at], read[0], read[1], read[2]))
            pos, marker = read[3], ""
            if pos == len(text):
                break  # (an answer that ends with its call is not searched again)
        return calls, pos

    def plain_message(self, text: str, most: int | None, call_id: Callable[[int], str],
                      values: dict[str, tuple[str, Any]] | None = None) -> tuple[str, list[dict[str, Any]]] | None:
        """The message ``plain_calls`` reads in ``text`` (None when it reads none): the text
        around the calls, joined, and the calls in OpenAI's shape, their ids from ``call_id``
        (``parser.parse_message``; the gateway's whole answer). ``values``: where each call's
        arguments and their value are put, by its id (for a caller that wants the arguments
        decoded: read once, not decoded again)."""
        read = self.plain_calls(text, most=most)
        if read is None:
            return None
        calls, end = read
        if not calls:
            return text, []  # (prose: the text is the content)
        texts, made = [], []
        for index, (lead, name, arguments, value) in enumerate(calls):
            texts.append(lead)
            made_id = call_id(index)
            made.append({"id": made_id, "type": "function", "function": {"name": name, "arguments": arguments}})
            if values is not None:
                values[made_id] = (arguments, value)
        texts.append(text[end:])
        return "".join(texts), made

    def _bare_at_start(self, text: str) -> bool:
        """Whether the answer may start a call here with a bare opener (or is all space)."""
        openers = self._openers
        if openers is None:
            return True
        start = _SPACE.match(text).end() if not text or text[0].isspace() else 0  # type: ignore[union-attr]
        if start == len(text):
            return True
        return text[start] in openers and any(
            o.startswith(text[start : start + len(o)]) for o in self.dialect.bare_start)

    def _plain_call(self, text: str, marker: str, pos: int) -> tuple[str, str, Any, int] | None:
        """The call block opened by ``marker`` (ending at ``pos``) when it reads as a plain
        call (``read_plain``): its name, its arguments, their value and where it ends."""
        if marker not in self.dialect.call_start:
            return None  # reasoning, a dropped token...
        readers = self._readers  # (shared by the parsers of these settings)
        if marker not in readers:
            made = getattr(self.dialect.body(self, marker), "whole_reader", None)
            readers[marker] = made() if made is not None else None
        reader = readers[marker]
        read = reader(text, pos) if reader is not None else None
        if read is None:
            return None
        name, arguments, value, end, written = read  # (written: laid out as feed writes an object)
        tools = self._tools
        if tools is None:
            if not _PLAUSIBLE_NAME.fullmatch(name):
                return None
            if arguments is None:
                arguments, value, _ = self._typed(name, value)
            return name, arguments, value, end
        if name not in tools.schemas or name in tools.freeforms:
            return None
        settled = False
        if arguments is None:  # raw values (the XML family), typed as the body's ``feed`` types them
            arguments, value, settled = self._typed(name, value)
        types = tools.types_only(name)
        known = settled or written  # (its layout is known to be feed's: not looked at again)
        if types is not None and typed_and_valid(types, None if known else arguments, value):
            return name, arguments, value, end  # (the common call: what follows would pass it, member by member)
        if self._coerce and not settled:
            # (values ``typed_object`` found settled: already_typed would pass every member at
            # once, and ``typed_object`` writes its text laid out as ``feed`` writes an object, with
            # no key twice (``read_params`` refuses one), so ``as_written`` passes it too)
            settled_types = tools.settled_members(name)  # (None: no properties, nothing to type)
            schema = tools.root_schema(name)
            if settled_types is not None and not already_typed(schema, None if written else arguments, value,
                                                                 settled_types):
                return None
        return None if self._check(name, arguments, value) else (name, arguments, value, end)

    def _typed(self, name: str, pairs: list[tuple[str, str]]) -> tuple[str, dict[str, Any], bool]:
        """A whole call's raw values typed by the tool ``name``'s schema (``typed_object``),
        as ``param_schema`` and ``coerce`` type them once the call has begun (not freeform);
        and whether they are settled (``typed_object``'s third item)."""
        tools = self._tools
        if tools is None:
            return typed_object(pairs, _no_schema, _loose)
        return typed_object(pairs, *tools.member_typing(name), tools.settled_members(name))

    def held_block(self) -> tuple[str, Callable[[str], bool]] | None:
        """When a call block waits, unread, at the start of the buffer (a short block, a head or
        a close marker still being written): the text held, and what tells whether that text
        with more after it still only waits (then ``feed`` would keep it and return no events).
        None otherwise. ``auto`` keeps such text itself while its deciding trial waits."""
        if self._phase is not CALL or not self._buf:
            return None
        wait = self._block_waits if self._holding else getattr(self._body, "wait", None)
        return None if wait is None else (self._buf, wait)

    def _plain_start(self, text: str) -> bool:
        """Whether ``text``, where the answer starts, is plain content: it starts with no bare
        opener and holds no character that can begin a marker (prose: the common answer)."""
        openers = self._openers
        if openers is None or not self._scan.clear(text):
            return False
        start = _SPACE.match(text).end()  # type: ignore[union-attr]
        return start < len(text) and text[start] not in openers

    def close(self, cut: bool = False) -> list[Event]:
        """Signal the end of output; flush held text and settle an unfinished call.

        ``cut``: the output stopped at a length limit (an upstream's ``finish_reason:
        "length"``), so a call the end of output would close is truncated, never a call.
        """
        if self._closed:
            return []
        self._closed, self._cut = True, cut
        if not self._buf and self._phase is not CALL:
            return []  # nothing held: nothing to flush (an open call must still be settled)
        return self._run(self._buf, final=True)

    # ------------------------------------------------------------------ phases

    def _run(self, buf: str, final: bool, pos: int = 0) -> list[Event]:
        self._out = []
        more = True
        while more:
            if self._phase is CALL:
                pos, more = self._in_call(buf, pos, final)
            elif pos < len(buf):
                pos, more = self._in_text(buf, pos, final)
            else:
                break  # (text read to its end emits nothing more)
        self._buf = buf[pos:]
        return self._out

    def _in_text(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        if self._phase is START:
            return self._at_start(buf, pos, final)
        scan = self._scan
        m = scan.search(buf, pos)
        if m is None:
            end = len(buf) if final else len(buf) - scan.holdback(buf, pos)
            self._emit_text(buf[pos:end])
            return end, False
        held = None if final else scan.held_from(buf, pos, m.start())
        if held is not None:  # "```" may still become "```json": wait for more text
            self._emit_text(buf[pos:held])
            return held, False
        self._emit_text(buf[pos : m.start()])
        marker = m.group()
        if marker in self._drop:
            if self._phase is REASONING and marker in self._answer_opens:
                self.phase = self._answer  # the answer's channel opened: the reasoning is over
        elif marker in self._strays and self._phase is not REASONING:
            self._out.append(Repaired(None, f"stray {marker} dropped"))
        elif self._think and marker in self._think[0]:
            if not self._split:
                self._emit_text(marker)
            self.phase = REASONING
        elif self._think and marker in self._think[1]:
            if not self._split:
                self._emit_text(marker)
            self.phase = self._answer
        elif self._fence == FENCE_CLOSE_AHEAD and marker == FENCE:
            self._fence = 0
            self._emit_text(marker)  # the close of a fence whose block failed: prose, as the block was
        else:
            self._open_block(marker, marker)
        return m.end(), True

    def _at_start(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        """Before the answer's first non-space character, a bare opener may start a call."""
        start = _SPACE.match(buf, pos).end()  # type: ignore[union-attr]  # (no copy of the rest)
        if start == len(buf):
            if final:
                self._emit_text(buf[pos:])
            return (len(buf) if final else pos), False
        for opener in self.dialect.bare_start:
            if buf.startswith(opener, start):
                self._emit_text(buf[pos:start])
                self._open_block(opener, "")
                return start, True
            if not final and cut_off(buf, start, opener):
                return pos, False
        self.phase = CONTENT
        return pos, True

    def _open_block(self, opener: str, consumed: str) -> None:
        self._resume, self.phase = self._phase, CALL
        self._fence = OPEN_FENCE if opener.startswith(FENCE) else 0
        self._raw = TextBuffer(consumed)
        self._body = body = self.dialect.body(self, opener)
        self._holding = getattr(body, "hold_until", ())

    def _block_waits(self, buf: str) -> bool:
        """Whether a held block, ``buf`` from its start, is still short and unclosed."""
        return still_held(buf, self._holding)

    def _in_call(self, buf: str, pos: int, final: bool) -> tuple[int, bool]:
        assert self._body is not None
        if self._holding:  # a short block is kept unread until it closes (Body.hold_until)
            if not final and self._block_waits(buf[pos : pos + HOLD_TAGGED_BLOCK + 1]):
                return pos, False
            self._holding = ()
        end, outcome = self._body.feed(buf, pos, final)
        if self._keep_at is not None:  # the body settled text: a failure repeats only what follows
            self._raw, self._keep_at = TextBuffer(buf[max(pos, self._keep_at):end]), None
        else:
            self._raw.append(buf[pos:end])
        if outcome is MORE:
            assert not final, "a body must settle at the end of output"
            return end, False
        reason = self._body.reason if outcome is FAIL else self._block_rejection
        first = self.first_settled is None
        # A call that began and then broke (aborted, not refused) was this dialect's block: a
        # trial judged by it wins, and reads on (at the end of output nothing would read the rest).
        refused = bool(reason) and (self._call is None or self._held is not None)
        if reason:
            self._fail_block(reason)
        else:
            self.phase = CONTENT
        if first:
            self.first_settled = len(self._out)  # the first block's events end here (in this run)
            if refused and self.halt_on_reject:
                return end, False  # a trial's verdict: refused (a winner never stops here)
        self._body, self._raw, self._block_rejection = None, _NO_BLOCK, ""
        return end, True

    def _fail_block(self, reason: str) -> None:
        raw = self._raw.text()
        fenced = self._fence == OPEN_FENCE and raw.count(FENCE) == 1  # (its close not read yet)
        self._fence = FENCE_CLOSE_AHEAD if fenced else 0
        if self._call is not None and self._held is None:
            self._out.append(CallAborted(self._call.index, reason))
        else:
            if self._call is not None:  # a held call never reached the caller
                self._next_index = self._call.index
            self._out.append(CallRejected(reason, raw))
        self._call, self._held, self._closing = None, None, False
        self.phase = CONTENT if self._resume is START else self._resume
        self._emit_text(raw)

    def _emit_text(self, text: str) -> None:
        if text:
            self._out.append(Reasoning(text) if self._phase is REASONING and self._split else Text(text))

    def _emit(self, event: Event) -> None:
        (self._held if self._held is not None else self._out).append(event)

    # ------------------------------------------------------------------ CallSink

    def begin(self, written_name: str, native_id: str | None = None) -> str | None:
        """Start a call; return None, or why the name cannot be a call."""
        name, how = self._resolve(written_name.strip())
        if name is None:
            return f"{how} tool {written_name.strip()!r}"
        index = self._next_index
        self._next_index += 1
        self._call = _Call(index, name)
        self._typer = _UNMADE if self._coerce else None  # made by the first piece that needs it
        if self._hold:
            self._held = []
        fresh = native_id is not None and native_id not in self._native_ids
        if fresh:
            if not isinstance(self._native_ids, set):
                self._native_ids = set()
            self._native_ids.add(native_id)  # type: ignore[arg-type]
        self._emit(ToolCallBegin(index, native_id if fresh else self._call_id(index), name))  # type: ignore[arg-type]
        if how != "exact":
            self._emit(Repaired(index, f"name {written_name.strip()!r} resolved to {name!r}"))
        return None

    def _argument_typer(self, call: _Call, text: str, value: Any) -> ArgumentTyper | None:
        """The call's typer, made for its first piece of arguments; None when nothing needs
        typing: no properties declared, or arguments that came whole already typed."""
        tools = self._tools
        settled_types = tools.settled_members(call.name)  # type: ignore[union-attr]
        if settled_types is None:
            return None
        schema = tools.root_schema(call.name)  # type: ignore[union-attr]
        if value is not None and already_typed(schema, text, value, settled_types):
            return None  # (nothing more comes: they are all of the arguments)
        index = call.index

        def report(path: str, what: str) -> None:
            self._emit(Repaired(index, what, path))

        return ArgumentTyper(schema, schema, report)

    def args(self, text: str, value: Any = None, string: bool = False) -> None:
        call = self._call
        typer = self._typer
        if text and call is not None and typer is not None:
            if typer is _UNMADE:  # (only a first piece can be all of the arguments, decoded)
                typer = self._typer = self._argument_typer(call, text, value)
            if typer is not None:
                text, value = typer.feed_string(text) if string else typer.feed(text), None
        if text and call is not None:
            if value is not None and not call.fragments:
                call.value = value  # the arguments, decoded: not read again to check them
            call.fragments.append(text)
            self._emit(ArgumentsDelta(call.index, text))

    def end(self) -> None:
        call = self._call
        assert call is not None, "end() without begin()"
        if not call.fragments:
            self.args("{}")
        arguments = call.fragments.text()
        if self._closing:  # the end of output closes the call: only if nothing is missing
            self._closing = False
            why = "the output stopped at its length limit" if self._cut else self._missing(call.name, arguments)
            if why:
                self._block_rejection = f"{TRUNCATED}: {why}"
                return  # _fail_block aborts the call once the body hands back
            self._emit(Repaired(call.index, UNCLOSED_AT_END))
        errors = self._check(call.name, arguments, call.value if call.fragments.count == 1 else None)
        if errors:
            self._emit(Invalid(call.index, errors))
            if self._held is not None:
                self._block_rejection = "arguments do not match the schema: " + "; ".join(errors)
                return  # _fail_block settles the held call once the body hands back
        self._emit(ToolCallEnd(call.index, arguments))
        if self._held is not None:
            self._out.extend(self._held)
            self._held = None
        self._call, self._last_index = None, call.index

    def repaired(self, what: str) -> None:
        if what == UNCLOSED_AT_END and self._call is not None:
            self._closing = True  # reported by end() if the call is complete
            return
        if what == EMPTY_SECTION:  # (the block's, not a call's)
            self._emit(Repaired(None, what))
            return
        self._emit(Repaired(self._call.index if self._call else self._last_index, what))

    def text(self, text: str) -> None:
        if text:
            self._emit(Text(text))

    def reasoning(self, text: str) -> None:
        if text:
            self._emit(Reasoning(text))

    def keep(self, pos: int) -> None:
        # A call the end of output cut (refused as it ended: the body, which settles it with the
        # block, cannot tell) keeps its text for content.
        if not self._block_rejection.startswith(TRUNCATED):
            self._keep_at = pos

    def param_schema(self, key: str) -> dict[str, Any] | None:
        if self._tools is None or self._call is None:
            return None
        return self._tools.param_schema(self._call.name, key)

    def coerce(self, key: str, raw: str) -> Any:
        if self._tools is None or self._call is None:
            return coerce(raw, None)
        root = self._tools.root_schema(self._call.name)
        return coerce(raw, self._tools.param_schema(self._call.name, key), root)

    def _resolve(self, written: str) -> tuple[str | None, str]:
        if self._tools is None:
            ok = _PLAUSIBLE_NAME.fullmatch(written) is not None
            return (written, "exact") if ok else (None, "implausible")
        found = self._tools.resolve(written)
        return found.name, found.how

    def _missing(self, name: str, arguments: str) -> str:
        """Why a call closed by the end of output is incomplete: a required argument unwritten."""
        if self._tools is None:
            return ""
        required = self._tools.root_schema(name).get("required")
        value = json.loads(arguments)
        missing = [k for k in required if k not in value] if isinstance(required, list) else []
        return f"required argument {missing[0]!r} was not written" if missing else ""

    def _check(self, name: str, arguments: str, value: Any = None) -> tuple[str, ...]:
        if value is None:
            value = json.loads(arguments)  # bodies only ever produce JSON objects
        if not isinstance(value, dict):
            return ("arguments are not a JSON object",)
        return self._tools.validate(name, value) if self._validate and self._tools else ()
