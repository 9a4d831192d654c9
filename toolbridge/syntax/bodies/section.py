"""Body kinds for special-token sections: a section marker, then calls, each ``NAME`` + ``{json}``.

Kimi K2 and DeepSeek V3/R1/V3.1 wrap their calls in a section (``<|tool_calls_section_begin|>``
... ``<|tool_calls_section_end|>``) whose calls each have their own begin and end markers. Two
readers compose:

- ``CallBody`` reads one call after its begin marker: an optional lead (DeepSeek V3's
  ``function<｜tool▁sep｜>``), a short label up to a name terminator (turned into a name by the
  spec's ``name`` function: Kimi's ``functions.NAME:IDX``), an optional code fence, the JSON
  arguments (bounded by JSON structure and streamed as slices of the model's text), an optional
  closing fence and the call's end marker. The call begins only when the ``{`` confirms it.
- ``SectionBody`` reads a section: between calls it skips whitespace and expects a call begin or
  the section end; each call is delegated to a CallBody, and once a call is complete its text is
  settled (``keep``) so that a later failure returns only what follows to content.

Tolerated and reported: a section opened by a call marker alone (the section marker missing), a
missing call or section end, a missing closing fence. An empty section is no call and leaves
nothing in content (reported); text inside a section before its first call marker (at most
``_NOISE_LIMIT`` characters) is dropped (reported) when a call follows, and malformed or
truncated calls are not calls (the block, that text included, stays content).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from .json import stream_arguments
from ..jsonscan import JsonScanner
from ..markers import cut_off, match_at, skip_ws
from ..dialect import DONE, EMPTY_SECTION, FAIL, MORE, UNCLOSED_AT_END, Body, CallSink, Outcome


_LABEL_LIMIT = 256
# How much text a section may hold before its first call marker (skipped, reported).
_NOISE_LIMIT = 256


def _same(written: str) -> str | None:
    return written


@dataclass(frozen=True)
class CallSpec:
    """How one call reads after its begin marker."""

    name_end: tuple[str, ...]  # what ends the name (a separator marker, a newline)
    close: tuple[str, ...]  # the call's end marker(s)
    lead: tuple[str, ...] = ()  # optional text before the name
    name: Callable[[str], str | None] = _same  # written label -> name (None: malformed)
    fence: tuple[str, str] | None = None  # optional fence around the JSON
    keeps_id: bool = False  # the written label is the model's own call id (Kimi): keep it


class _C(enum.Enum):
    LEAD = 0
    NAME = 1
    FENCE = 2
    ARGS = 3
    FENCE_CLOSE = 4
    TAIL = 5


class CallBody:
    """Read one call; see the module docstring. ``name`` skips the label when a header gave it."""

    def __init__(self, sink: CallSink, spec: CallSpec, name: str | None = None) -> None:
        self.reason = ""
        self._sink = sink
        self._spec = spec
        self._name = name or ""
        self._written: str | None = None  # the label as written (the model's own call id)
        self._state = _C.FENCE if name else _C.LEAD
        self._fenced = False
        self._scanner = JsonScanner(self._sink.lenient)
        self.cut = False  # the call ended with the output, its end marker unwritten (reported)

    def fast(self, text: str) -> str | None:
        return text if self._state is _C.ARGS and self._scanner.in_plain_string(text) else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            state = self._state
            if state is _C.ARGS:
                pos, outcome = self._args(buf, pos, final)
                if outcome is not None:
                    return pos, outcome
                continue
            if state is _C.NAME:
                pos, outcome = self._label(buf, pos, final)
                if outcome is not None:
                    return pos, outcome
                continue
            pos = skip_ws(buf, pos)
            if pos >= len(buf):
                return pos, self._at_end(final)
            options = self._options()
            found = match_at(buf, pos, options, final) if options else None
            if found == "":
                return pos, MORE
            pos += len(found or "")
            if found is None and state.value >= _C.FENCE_CLOSE.value:
                ended = self._no_close(buf, pos, final, options)
                if ended is not None:
                    return ended
            if state is _C.TAIL:
                self._sink.end()  # its end marker came (a missing one is reported in _no_close)
                return pos, DONE
            if state is _C.FENCE_CLOSE and found is None and self._fenced:
                self._sink.repaired("missing closing fence after the arguments")
            self._fenced = self._fenced or (state is _C.FENCE and found is not None)
            self._state = _C(state.value + 1)

    def _options(self) -> tuple[str, ...]:
        """The literal that may come next in the current state."""
        state, spec = self._state, self._spec
        if state is _C.LEAD:
            return spec.lead
        if state is _C.FENCE:
            return spec.fence[:1] if spec.fence else ()
        if state is _C.FENCE_CLOSE:
            return spec.fence[1:] if spec.fence and self._fenced else ()
        return spec.close

    def _label(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        size = _LABEL_LIMIT + max(map(len, self._spec.name_end))
        window = buf[pos : pos + size]
        ends = [(i, s) for s in self._spec.name_end if (i := window.find(s)) != -1]
        if not ends:
            angle = window.find("<")
            if angle != -1 and not any(s.startswith(window[angle:]) for s in self._spec.name_end):
                return pos, self._fail("malformed call name")
            if len(window) == size:  # the whole window is there and no end in it
                return pos, self._fail("malformed call name")
            return pos, self._fail("truncated") if final else MORE
        i, stop = min(ends)
        written = window[:i].strip()
        if "<" in written or "\n" in written:
            return pos, self._fail("malformed call name")
        name = self._spec.name(written)
        if name is None:
            return pos, self._fail(f"malformed call id {written!r}")
        self._name, self._state = name, _C.FENCE
        self._written = written
        return pos + i + len(stop), None

    def _args(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        scanner = self._scanner
        if not scanner.started:
            pos = skip_ws(buf, pos)
            if pos >= len(buf):
                return pos, self._at_end(final)
            if buf[pos] != "{":
                return pos, self._fail("arguments are not a JSON object")
            why = self._sink.begin(self._name, self._written if self._spec.keeps_id else None)
            if why:
                return pos, self._fail(why)
        pos, outcome = stream_arguments(self._sink, scanner, buf, pos, final, self._fail)
        if outcome is not None:
            return pos, outcome
        # The call ends at its end marker (``feed``), or at the end of output after that is
        # reported: the parser then decides whether it stands (never at a length stop).
        self._state = _C.FENCE_CLOSE
        return pos, None

    def _no_close(self, buf: str, pos: int, final: bool, options: tuple[str, ...]) -> tuple[int, Outcome] | None:
        """After the arguments, what stands where a fence or end marker should: one cut off by the
        end of output ends the call there; other text ends it without one (reported)."""
        if final and any(cut_off(buf, pos, c) for c in options):
            self._sink.repaired(UNCLOSED_AT_END)
            self._sink.end()
            self.cut = True
            return len(buf), DONE
        if self._state is _C.TAIL:
            self._sink.repaired(f"missing {self._spec.close[0]} after the call")
            self._sink.end()
            return pos, DONE
        return None

    def _at_end(self, final: bool) -> Outcome:
        if not final:
            return MORE
        if self._state.value < _C.FENCE_CLOSE.value:
            return self._fail("truncated")
        self._sink.repaired(UNCLOSED_AT_END)
        self._sink.end()
        self.cut = True
        return DONE

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


@dataclass(frozen=True)
class SectionTags:
    """The markers of a call section; ``call`` makes the reader for one call after its marker."""

    call_begin: tuple[str, ...]  # markers that begin a call (and open a section implicitly)
    section_end: tuple[str, ...]
    call: Callable[[CallSink, str], Body]  # (sink, the call marker read) -> call reader
    call_end: tuple[str, ...] = ()  # stray call-end markers tolerated between calls
    opens_call: tuple[str, ...] = ()  # section openers after which the first call needs no marker


class SectionBody:
    """Read a section of calls; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str, *, tags: SectionTags) -> None:
        self.reason = ""
        self._sink = sink
        self._tags = tags
        self._between = tags.call_begin + tags.section_end + tags.call_end
        self._calls = 0
        self._cut = False  # the last call already reported the end of output
        self._opened_by = opened_by
        self._implicit = opened_by in tags.opens_call
        self._inner: Body | None = tags.call(sink, opened_by) if opened_by in tags.call_begin else None
        # (Body.hold_until: a short section opened by its own marker comes whole)
        self.hold_until = tags.section_end if self._inner is None else ()

    def fast(self, text: str) -> str | None:
        return self._inner.fast(text) if self._inner is not None else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        tags = self._tags
        while True:
            if self._inner is not None:
                pos, outcome = self._inner.feed(buf, pos, final)
                if outcome is not DONE:
                    self.reason = self._inner.reason
                    return pos, outcome
                self._cut = isinstance(self._inner, CallBody) and self._inner.cut
                self._inner = None
                self._calls += 1
                self._sink.keep(pos)
            pos = skip_ws(buf, pos)
            if pos >= len(buf):
                return pos, self._at_end(final)
            found = match_at(buf, pos, self._between, final)
            if found == "":
                return pos, MORE
            if found is None and self._implicit and not self._calls:
                self._implicit = False  # a short opener: the first call follows without its marker
                self._inner = tags.call(self._sink, self._opened_by)
                continue
            if found is None:
                pos, outcome = self._stray(buf, pos, final)
                if outcome is not None:
                    return pos, outcome
                continue
            pos += len(found)
            if found in tags.section_end:
                if not self._calls:
                    self._sink.repaired(EMPTY_SECTION)  # no call, and no markup left in content
                return pos, DONE
            if found in tags.call_begin:
                self._inner = tags.call(self._sink, found)
            elif not self._calls:  # a call's end marker before any call
                return pos, self._fail("not a tool call")

    def _stray(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """Text that is not a marker: it ends a section that holds calls; before the first call
        it is skipped when a call's marker follows within ``_NOISE_LIMIT`` characters (the call
        then decides: a block that fails returns whole to content), else it rejects the section."""
        if not self._calls:
            return self._noise(buf, pos, final)
        if final and any(cut_off(buf, pos, m) for m in self._between):
            self._sink.repaired(UNCLOSED_AT_END)  # a marker cut off by the end of output
            return len(buf), DONE
        self._sink.repaired(f"missing {self._tags.section_end[0]} after the calls")
        return pos, DONE

    def _noise(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        """Text between the section's opener and its first call: skipped (reported) up to a call
        marker; a section end or no marker within the limit rejects the section."""
        longest = max(map(len, self._between))
        window_end = pos + _NOISE_LIMIT + longest
        found = [(i, m) for m in self._between if (i := buf.find(m, pos, window_end)) != -1]
        if found:
            at, marker = min(found)
            if marker not in self._tags.call_begin:
                return pos, self._fail("not a tool call")
            self._sink.repaired("text before the section's first call dropped")
            return at, None
        if final or len(buf) >= window_end:
            return pos, self._fail("not a tool call")
        return pos, MORE

    def _at_end(self, final: bool) -> Outcome:
        if not final:
            return MORE
        if not self._calls:
            return self._fail("truncated")
        if not self._cut:
            self._sink.repaired(UNCLOSED_AT_END)
        return DONE

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL
