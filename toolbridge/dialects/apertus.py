"""Apertus (``apertus``): ``<|tools_prefix|>[{NAME: {args}}, ...]<|tools_suffix|>``; the name is the key.

Sample (the Apertus-8B-Instruct chat template; reasoning is ``<|inner_prefix|>...<|inner_suffix|>``)::

    <|inner_prefix|>Two lookups.<|inner_suffix|><|tools_prefix|>[{"get_weather": {"city": "Bern"}},
    {"get_time": {"city": "Bern"}}]<|tools_suffix|>

The shared array body reads ``{"name": ..., "arguments": ...}`` elements; an Apertus element is
a single-key object, so this module reads the list itself: ``[``, then per element ``{``, the
name as a JSON string, ``:``, the arguments object (streamed once the name is accepted), ``}``;
then ``]`` and the suffix. Each call is settled when it ends, so a later broken element turns
only its own text back into content; a list cut after a complete call keeps the call.
"""

from __future__ import annotations

import json

from ..syntax.bodies.json import close_tail
from ..syntax.jsonscan import ERROR, JsonScanner
from ..syntax.markers import skip_ws
from ..syntax.dialect import (
    DONE,
    FAIL,
    MORE,
    UNCLOSED_AT_END,
    CallSink,
    Calls,
    Dialect,
    Outcome,
    register,
)
from ..syntax.shape import Shape


OPEN, CLOSE = "<|tools_prefix|>", "<|tools_suffix|>"
# Expected punctuation per state, and the state it leads to.
_NEXT = {"lead": ("[", "item"), "item": ("{", "name"), "colon": (":", "args"), "obj_end": ("}", "after")}


class NameKeyListBody:
    """Read one Apertus call list; see the module docstring."""

    def __init__(self, sink: CallSink, opened_by: str) -> None:
        self.reason = ""
        self._sink = sink
        self._state = "lead"
        self._scanner: JsonScanner | None = None
        self._text: list[str] = []
        self._name = ""
        self._calls = 0

    def fast(self, text: str) -> str | None:
        scanner = self._scanner
        return text if self._state == "args" and scanner is not None and scanner.in_plain_string(text) else None

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        while True:
            if self._scanner is not None:
                pos, outcome = self._scan(buf, pos, final)
            else:
                pos = skip_ws(buf, pos)
                if pos >= len(buf):
                    return pos, self._at_end(final)
                pos, outcome = self._punctuation(buf, pos, final)
            if outcome is not None:
                return pos, outcome

    def _punctuation(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        ch, state = buf[pos], self._state
        if state == "close":
            return close_tail(self._sink, buf, pos, final, CLOSE)
        if state == "after":
            if ch not in ",]":
                return pos, self._fail("expected ',' or ']' after a call")
            self._state = "item" if ch == "," else "close"
            return pos + 1, None
        if state in ("name", "args"):
            if ch != ('"' if state == "name" else "{"):
                return pos, self._fail("not a call object" if state == "name" else "arguments are not a JSON object")
            if state == "args":
                why = self._sink.begin(self._name)
                if why:
                    return pos, self._fail(why)
            self._scanner, self._text = JsonScanner(self._sink.lenient), []
            return pos, None
        want, then = _NEXT[state]
        if ch != want:
            return pos, self._fail("not a call list" if state == "lead" else f"expected {want!r} in a call")
        if state == "item" and self._calls:
            self._sink.keep(pos)  # a failure from here on leaves the calls before it
        self._state = then
        return pos + 1, None

    def _scan(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome | None]:
        scanner = self._scanner
        assert scanner is not None
        pos = scanner.feed(buf, pos, final)
        piece = scanner.take()
        if self._state == "args":
            self._sink.args(piece)
        else:
            self._text.append(piece)
        if scanner.state == ERROR:
            return pos, self._fail(scanner.error if scanner.error == "truncated" else "malformed JSON: " + scanner.error)
        if not scanner.done:
            return pos, MORE
        for what in scanner.repairs:
            self._sink.repaired(what)
        self._scanner = None
        if self._state == "name":
            self._name, self._state = json.loads("".join(self._text)), "colon"
        else:
            self._sink.end()
            self._calls, self._state = self._calls + 1, "obj_end"
            self._sink.keep(pos)
        return pos, None

    def _at_end(self, final: bool) -> Outcome:
        if not final:
            return MORE
        if self._state in ("obj_end", "after", "close"):
            self._sink.repaired(UNCLOSED_AT_END)  # the call is complete; the list's end is missing
            return DONE
        return self._fail("truncated")

    def _fail(self, why: str) -> Outcome:
        self.reason = why
        return FAIL


def render(calls: Calls) -> str:
    """Calls as the Apertus template writes them."""
    items = ", ".join("{" + json.dumps(n) + ": " + json.dumps(a, ensure_ascii=False) + "}" for n, a in calls)
    return f"{OPEN}[{items}]{CLOSE}"


APERTUS = register(
    Dialect(
        name="apertus",
        aliases=("swiss_ai_apertus",),
        call_start=(OPEN,),
        body=NameKeyListBody,
        reasoning=("<|inner_prefix|>", "<|inner_suffix|>"),
        special_markers=True,
        end_tokens=("<|assistant_end|>", "<|user_start|>", "<|system_start|>"),
        render=render,
        shape=Shape(calls=('{"{NAME}": {ARGS}}',), separator=", ", section=(OPEN + "[", "]" + CLOSE),
                    trigger=OPEN),
        sample=f'{OPEN}[{{"get_weather": {{"city": "Bern"}}}}]{CLOSE}',
    )
)
