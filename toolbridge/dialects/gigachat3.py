"""GigaChat 3 and 3.1 (``gigachat3``): one JSON call object in a ``function call`` message.

Samples (the GigaChat3-10B-A1.8B and GigaChat3.1-10B-A1.8B chat templates)::

    I'll check that for you.<|message_sep|>

    function call<|role_sep|>
    {"name": "get_weather", "arguments": {"city": "Tokyo"}}

    I'll check that for you.<|function_call|>{"name": "get_weather", "arguments": {"city": "Tokyo"}}

The object is read by the JSON envelope body; the message may end with ``<|message_sep|>`` or
``</s>``, which are consumed. The templates write one call per turn; several call messages in a
row are read as several calls. Prose after the object is content.
"""

from __future__ import annotations

import json
from typing import Any

from ..syntax.bodies.json import JsonEnvelopeBody
from ..syntax.markers import match_at, skip_ws
from ..syntax.dialect import DONE, FAIL, MORE, CallSink, Calls, Dialect, Outcome, register
from ..syntax.shape import Shape


ROLE = "<|message_sep|>\n\nfunction call<|role_sep|>"  # GigaChat 3: a message of its own
MARK = "<|function_call|>"  # GigaChat 3.1: inside the assistant message
ENDS = ("<|message_sep|>", "</s>")
SAMPLE = 'I\'ll check that for you.<|function_call|>{"name": "get_weather", "arguments": {"city": "Tokyo"}}'


class _Watch:
    """The parser's sink, noting when the call has ended."""

    def __init__(self, sink: CallSink) -> None:
        self.sink, self.ended = sink, False

    def end(self) -> None:
        self.ended = True
        self.sink.end()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sink, name)


class CallMessageBody:
    """One JSON envelope, then an optional end-of-message token."""

    def __init__(self, sink: CallSink, opened_by: str) -> None:
        self.reason = ""
        self._watch = _Watch(sink)
        self._json = JsonEnvelopeBody(self._watch, opened_by, close="")

    def fast(self, text: str) -> str | None:
        return self._json.fast(text)

    def feed(self, buf: str, pos: int, final: bool) -> tuple[int, Outcome]:
        if not self._watch.ended:
            pos, outcome = self._json.feed(buf, pos, final)
            if outcome is FAIL or not self._watch.ended:
                self.reason = self._json.reason
                return pos, outcome
        pos = skip_ws(buf, pos)
        found = match_at(buf, pos, (*ENDS, ROLE), final) if pos < len(buf) else ""
        if found == "":
            return (len(buf), DONE) if final else (pos, MORE)
        if found in ENDS:
            pos += len(found)
        return pos, DONE  # the next call message, or content, starts here


def render(calls: Calls) -> str:
    """Calls as the GigaChat 3 template writes them: a ``function call`` message each."""
    return "".join(
        ROLE + "\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + ENDS[0] + "\n\n"
        for n, a in calls
    )


GIGACHAT3 = register(
    Dialect(
        name="gigachat3",
        aliases=("gigachat", "gigachat31"),
        call_start=(ROLE, MARK),
        body=CallMessageBody,
        reasoning=None,
        special_markers=True,
        end_tokens=ENDS,
        render=render,
        shape=Shape(calls=(ROLE + '\n{"name": "{NAME}", "arguments": {ARGS}}' + ENDS[0] + "\n\n",
                           MARK + '{"name": "{NAME}", "arguments": {ARGS}}')),
        sample=SAMPLE,
    )
)
