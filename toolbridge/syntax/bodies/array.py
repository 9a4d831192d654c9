"""Body kind: a list of JSON call objects, each streamed as it is read.

    [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": ...}]
    <tool_calls>\\n{"name": "a", "arguments": {}}\\n{"name": "b", "arguments": {}}\\n</tool_calls>
    {"name": "a", "parameters": {}}; {"name": "b", "parameters": {}}

A ``ListShape`` declares the punctuation: the opening bracket (or none), the separators between
calls (or none, when objects may simply follow one another), and the markers read in order after
the last call (``]``, then a section's close tag). Each element is read by a JsonEnvelopeBody
(name and argument keys configurable), so a literal ``]`` or close tag inside a string is string
content and the arguments stream as slices of the model's own text. The element reports to an
``ElementSink`` that notes when its call ended, so the list takes over right after the object.

An element that is not a call (an unknown tool, broken JSON, a cut-off object) ends the block
there: the calls before it stand, and the text from that element's ``{`` onwards goes back to
content (the block keeps what precedes the element). A shape with ``skip_bad`` (one call per
line) instead keeps such an element's line as content and reads on, when the element failed
before its call began and was not cut off. A list whose close markers are missing at the end of
output is complete once its last call is (reported as recovered).

``ChooseBody`` defers the choice of body kind to the first character after an opener (Mistral's
``[TOOL_CALLS]`` is followed either by a JSON array or by ``NAME[ARGS]{...}``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .json import JsonEnvelopeBody, close_tail
from ..markers import marker_set, match_at, skip_ws
from ..dialect import (DONE, EMPTY_SECTION, FAIL, HOLD_TAGGED_BLOCK, MORE, UNCLOSED_AT_END, Body, BodyFactory,
                       CallSink, Calls, Outcome, still_held, to_json)


@dataclass(frozen=True)
class ListShape:
    """The punctuation of one call list."""

    open: tuple[str, ...] | str = ("[",)  # spellings of the opening bracket; () or "" for none
    seps: str = ","  # characters that may separate two calls
    adjacent: bool = False  # a call object may follow the previous one with no separator
    closes: tuple[str, ...] = ("]",)  # read in order after the last call
    name_keys: tuple[str, ...] = ("name",)
    args_keys: tuple[str, ...] = ("arguments", "parameters")
    # A member naming the object's kind that may come first (``JsonEnvelopeBody``'s ``kind``).
    kind: tuple[str, str] | None = None
    # After a call, an element that fails before its call begins stays content to the end of its
    # line (or the first close marker) and the list goes on: formats with one call per line.
    skip_bad: bool = False
    # A lone call object where the list should open stands for a one-call list (its "]" is not
    # expected): models write Cohere's action block, Mistral's list ... with one object too.
    lone: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.open, str):
            object.__setattr__(self, "open", (self.open,) if self.open else ())


ARRAY = ListShape()


def _same(name: str) -> str:
    return name


class ElementSink:
    """The block's sink as an inner body sees it: notes the call's end, and leaves the report of
    a missing end marker to the outer body (the inner one's close marker is empty). ``rename``
    maps the written name first (Llama's built-in ``TOOL.call``)."""

    def __init__(self, sink: CallSink, rename: Callable[[str], str] = _same) -> None:
        self._sink = sink
        self._rename = rename
        self.ended = False
        self.began = False

    def begin(self, written_name: str, native_id: str | None = None) -> str | None:
        why = self._sink.begin(self._rename(written_name), native_id)
        self.began = why is None
        return why

    def args(self, text: str, value: Any = None, string: bool = False) -> None:
        self._sink.args(text, value, string)

    def end(self) -> None:
        self.ended = True
        self._sink.end()

    def repaired(self, what: str) -> None:
        if what != UNCLOSED_AT_END:
            self._sink.repaired(what)

    def __getattr__(self, name: str) -> Any:  # param_schema, coerce, text, reasoning, keep
        return getattr(self._sink, name)


class _S:  # states (plain ints: an Enum member's lookup costs several times as much)
    LEAD = 0  # before the opening bracket
    ITEM = 1  # expecting a call object
    ELEMENT = 2  # an element body is reading a call object
    AFTER = 3  # after a call: a separator, another object, or the close markers
    CLOSING = 4  # reading the close markers
    SKIP = 5  # passing a line that is not a call through as content


class JsonArrayBody:
    """Read one list of JSON call objects; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, shape: ListShape = ARRAY, lenient: bool = False,
                 echo: bool = False) -> None:
        self.reason = ""
        self._sink = sink
        self._shape = shape
        # The opener is not a dedicated call marker (a code fence, </think>): a block that ends
        # before its list begins was prose, not a call cut short.
        self._lenient = lenient
        # A bare object at the start of the answer (no marker) is a call only with arguments.
        self._element_opener = "{" if opened_by == "{" else "["
        self._state = _S.ITEM if not shape.open else _S.LEAD
        # The opener is text that also ends reasoning (xLAM's </think> with reasoning not split
        # out): it goes to content once the list is confirmed.
        self._echo = opened_by if echo else ""
        self._calls = 0
        self._closing = 0  # index of the next close marker
        self._empty = False  # an empty list after a call marker: its close markers are read
        self._lone = False  # a lone object stands for the list
        self._element: JsonEnvelopeBody | None = None
        self._element_sink = ElementSink(sink)
        self._pending: list[str] = []  # the current element's text while its call has not begun
        # (Body.hold_until: after a call marker, a code fence included, a short list comes
        # whole; a "]" in its values only ends the hold early. Not after a bare "{" or "[" at
        # the answer's start, nor after an opener that is also text: those stay prose-fast.)
        marked = not echo and opened_by not in ("{", "[")
        self.hold_until = tuple(c for c in shape.closes if c) if marked else ()

    def fast(self, text: str) -> str | None:
        """The arguments fragment for ``text`` when it only continues a streamed string."""
        element = self._element
        return element.fast(text) if element is not None else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            if self._state == _S.ELEMENT:
                pos, outcome = self._read_element(buf, pos, final)
            elif self._state == _S.SKIP:
                pos, outcome = self._skip_line(buf, pos, final)
            else:
                pos = skip_ws(buf, pos)
                if pos >= len(buf):
                    return pos, self._at_end(final)
                pos, outcome = self._punctuation(buf, pos, final)
            if outcome is not None:
                return pos, outcome

    def _punctuation(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        state, shape, ch = self._state, self._shape, buf[pos]
        if state == _S.LEAD:
            found = match_at(buf, pos, shape.open, final)  # type: ignore[arg-type]  # a tuple since __post_init__
            if found == "":
                return pos, MORE
            if found is None and shape.lone and ch == "{" and "[" in shape.open:
                self._state, self._closing = _S.ITEM, 1 if shape.closes[:1] == ("]",) else 0
                self._lone = True
                return pos, None
            if found is None:
                return pos, self._fail("not a call list")
            if self._echo:
                self._sink.text(self._echo)
                self._sink.keep(pos)
            self._state = _S.ITEM
            return pos + len(found), None
        if state == _S.ITEM:
            if ch == "]" and not self._calls and self.hold_until and shape.closes[:1] == ("]",):
                self._empty, self._state = True, _S.CLOSING  # an empty section, if it closes
                return self._close(buf, pos, final)
            if ch != "{":
                return pos, self._fail("not a call object" if self._calls else "not a call list")
            if self._calls:
                self._sink.keep(pos)  # a failure from here on leaves the calls before it
            self._start_element()
            return pos, None
        if state == _S.AFTER:
            if ch in shape.seps and not self._lone:
                self._state = _S.ITEM
                return pos + 1, None
            if ch == "{" and shape.adjacent:
                self._state = _S.ITEM
                return pos, None
            if self._closing >= len(shape.closes):
                return pos, DONE  # content resumes here
            self._state = _S.CLOSING
        return self._close(buf, pos, final)

    def _close(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        close = self._shape.closes[self._closing]
        if self._empty:
            return self._close_empty(buf, pos, final, close)
        end, outcome = close_tail(self._sink, buf, pos, final, close)
        if outcome is not DONE or not buf.startswith(close, pos):
            return end, outcome  # waiting for more, or the marker is missing (reported)
        self._closing += 1
        return end, DONE if self._closing == len(self._shape.closes) else None

    def _close_empty(self, buf: str, pos: int, final: bool, close: str) -> tuple[int, Outcome | None]:
        """The close markers of an empty list: all of them make it an empty section (no call,
        no markup left in content, reported); anything else leaves it content."""
        found = match_at(buf, pos, (close,), final)
        if found == "":
            return pos, MORE
        if found is None:
            return pos, self._fail("empty call list")
        self._closing += 1
        if self._closing < len(self._shape.closes):
            return pos + len(found), None
        self._sink.repaired(EMPTY_SECTION)
        return pos + len(found), DONE

    def _start_element(self) -> None:
        shape = self._shape
        self._element_sink.ended = self._element_sink.began = False
        self._pending = []
        self._element = JsonEnvelopeBody(
            self._element_sink, self._element_opener, close="", name_keys=shape.name_keys, args_keys=shape.args_keys,
            kind=shape.kind,
        )
        self._state = _S.ELEMENT

    def _read_element(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        assert self._element is not None
        start = pos
        pos, outcome = self._element.feed(buf, pos, final)
        skippable = self._shape.skip_bad and self._calls > 0 and not self._element_sink.began
        if outcome is FAIL:
            reason = self._element.reason
            if not skippable or reason == "truncated":
                return pos, self._fail(reason)
            self._sink.repaired(f"a line that is not a call kept as content: {reason}")
            self._pass_text("".join(self._pending) + buf[start:pos], pos)
            self._element, self._state = None, _S.SKIP
            return pos, None
        if skippable:  # kept until the call begins, in case the element fails before it does
            self._pending.append(buf[start:pos])
        if outcome is MORE and not self._element_sink.ended:
            return pos, MORE
        self._element, self._state = None, _S.AFTER  # the call ended; the list resumes here
        self._calls += 1
        self._sink.keep(pos)
        return pos, None

    def _skip_line(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        ends = marker_set(("\n", *self._shape.closes[:1]))
        found = ends.search(buf, pos)
        if found is None:
            stop = len(buf) if final else len(buf) - ends.holdback(buf, pos)
        else:
            stop = found.end() if found.group() == "\n" else found.start()
        self._pass_text(buf[pos:stop], stop)
        if found is None and not final:
            return stop, MORE
        self._state = _S.AFTER
        return stop, None

    def _pass_text(self, text: str, settled: int) -> None:
        self._pending = []
        if text:
            self._sink.text(text)
        self._sink.keep(settled)

    def _at_end(self, final: bool) -> Outcome:
        if not final:
            return MORE
        if self._empty:
            return self._fail("empty call list")
        if self._state == _S.AFTER or self._state == _S.CLOSING:
            if self._state == _S.CLOSING or self._shape.closes:
                self._sink.repaired(UNCLOSED_AT_END)
            return DONE
        if self._lenient and self._state == _S.LEAD:
            return self._fail("not a call: the wrapper holds no call list")
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


class ChooseBody:
    """Pick the body kind by the first non-space character after the opener."""

    def __init__(self, sink: CallSink, opened_by: str, *, choices: Mapping[str, BodyFactory],
                 default: BodyFactory) -> None:
        self._sink = sink
        self._opened_by = opened_by
        self._choices = choices
        self._default = default
        self._body: Body | None = None
        self.reason = ""

    # While the chosen body's short block waits: what tells whether the text still only waits.
    wait: Callable[[str], bool] | None = None

    def fast(self, text: str) -> str | None:
        return self._body.fast(text) if self._body is not None else None

    def _waits(self, text: str) -> bool:
        return still_held(text, self._body.hold_until)  # type: ignore[union-attr]

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if self._body is None:
            start = skip_ws(buf, pos)
            if start >= len(buf):
                if not final:
                    return pos, MORE
                self.reason = "truncated"
                return len(buf), FAIL
            factory = self._choices.get(buf[start], self._default)
            self._body = factory(self._sink, self._opened_by)
            pos = start
            # The body chosen holds a short block (Body.hold_until): held here, where it starts.
            held = buf[pos : pos + HOLD_TAGGED_BLOCK + 1]
            if getattr(self._body, "hold_until", ()) and not final and self._waits(held):
                self.wait = self._waits
                return pos, MORE
        self.wait = None
        pos, outcome = self._body.feed(buf, pos, final)
        self.reason = self._body.reason
        return pos, outcome


def render_list(calls: Calls, before: str = "[", after: str = "]", sep: str = ", ", args_key: str = "arguments") -> str:
    """Calls as one list of ``{"name": ..., "arguments": ...}`` objects between two markers."""
    objects = (to_json({"name": n, args_key: a}) for n, a in calls)
    return before + sep.join(objects) + after
