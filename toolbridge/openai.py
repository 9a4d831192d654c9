"""Events to OpenAI Chat Completions objects, and back; pure functions and small folds.

- ``MessageBuilder`` folds events into the assistant ``message`` dict and a ``Report``.
- ``ChunkEncoder`` turns events into ``chat.completion.chunk`` deltas as they arrive. By default a
  call goes out whole: nothing of it is sent until it ends, then one delta carries its index, id,
  type, name and whole arguments; a call that is aborted instead (cut off by the end of output,
  or malformed after its name) is never sent, and its text follows as content. Whatever comes
  after an unfinished call waits for it, so the order is kept; text and reasoning before it go
  out as they come. So the deltas of any chunking assemble into exactly the whole message.
  With ``stream_arguments=True`` a call streams as it is written instead: the first delta
  carries index, id, type, name and ``arguments: ""``, later ones only the index and a
  fragment; a call begun and aborted within one ``encode`` is still never sent, but one whose
  opening went out cannot be taken back (``finish_reason`` is then ``length``).
  Trailing whitespace of the content is held back, so that a turn that ends in calls gets the
  same ``content`` streamed as whole (``null`` when only whitespace is beside calls).
- ``assemble`` rebuilds the message a client would from a sequence of deltas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .syntax.dialect import TRUNCATED, UNCLOSED_AT_END
from .events import (
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

Message = dict[str, Any]
Delta = dict[str, Any]


@dataclass(slots=True)
class Report:
    """What happened while parsing one output: counts and the reasons behind them."""

    dialect: str
    calls: int = 0
    recovered: list[int] = field(default_factory=list)  # calls completed without a close marker
    rejected: list[dict[str, str]] = field(default_factory=list)
    aborted: list[dict[str, Any]] = field(default_factory=list)
    repaired: list[dict[str, Any]] = field(default_factory=list)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    truncated: bool = False  # the output ended inside a call
    detected: str | None = None  # with dialect "auto": the dialect recognised (None: none was)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dialect": self.dialect,
            "calls": self.calls,
            "recovered": self.recovered,
            "rejected": self.rejected,
            "aborted": self.aborted,
            "repaired": self.repaired,
            "invalid": self.invalid,
            "truncated": self.truncated,
            **({"detected": self.detected} if self.dialect == "auto" else {}),
        }


class MessageBuilder:
    """Fold events into the assistant message and the report."""

    __slots__ = ("_calls", "_done", "_reasoning", "_text", "report")

    def __init__(self, dialect: str) -> None:
        self.report = Report(dialect)
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._done: list[int] = []

    def add(self, events: list[Event]) -> None:
        for ev in events:
            kind = type(ev)  # (by the event's own class: a chain of isinstance costs more)
            if kind is Text:
                self._text.append(ev.text)  # type: ignore[union-attr]
            elif kind is ArgumentsDelta:
                pass
            elif kind is ToolCallBegin:
                self._calls[ev.index] = {"id": ev.id, "name": ev.name}  # type: ignore[union-attr]
            elif kind is ToolCallEnd:
                self._calls[ev.index]["arguments"] = ev.arguments  # type: ignore[union-attr]
                self._done.append(ev.index)  # type: ignore[union-attr]
                self.report.calls += 1
            elif kind is Reasoning:
                self._reasoning.append(ev.text)  # type: ignore[union-attr]
            else:
                self._note(ev)

    def _note(self, ev: Event) -> None:
        report = self.report
        if isinstance(ev, Repaired):
            report.repaired.append({"index": ev.index, **({"path": ev.path} if ev.path else {}), "what": ev.what})
            if ev.what == UNCLOSED_AT_END and ev.index is not None:
                report.recovered.append(ev.index)
        elif isinstance(ev, CallRejected):
            report.rejected.append({"reason": ev.reason, "text": ev.text})
            report.truncated = report.truncated or ev.reason.startswith(TRUNCATED)
        elif isinstance(ev, CallAborted):
            report.aborted.append({"index": ev.index, "reason": ev.reason})
            report.truncated = report.truncated or ev.reason.startswith(TRUNCATED)
        elif isinstance(ev, Invalid):
            report.invalid.append({"index": ev.index, "errors": list(ev.errors)})

    @property
    def message(self) -> Message:
        made = self._calls
        calls = [
            {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}
            for call in map(made.__getitem__, self._done)
        ] if self._done else []
        return assistant_message("".join(self._text), calls, "".join(self._reasoning) if self._reasoning else None)

    @property
    def finish_reason(self) -> str:
        return finish_reason(self.report)


def assistant_message(text: str, calls: list[dict[str, Any]], reasoning: str | None = None) -> Message:
    """The assistant message of an output's text, calls (OpenAI shape) and reasoning: beside
    calls, the content without its trailing white space (``null`` when nothing else is left)."""
    if not calls:  # (the common answer: text alone)
        if reasoning is None:
            return {"role": "assistant", "content": text}
        return {"role": "assistant", "content": text, "reasoning_content": reasoning}
    message: Message = {"role": "assistant", "content": text.rstrip() or None}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    message["tool_calls"] = calls
    return message


def finish_reason(report: Report) -> str:
    """``length`` when output was cut inside a call or a call broke after it began (no call of
    it is returned, nor sent whole; a stream with ``stream_arguments`` may have sent its start,
    which the client must discard), ``tool_calls`` when calls came, else ``stop``."""
    if report.truncated or report.aborted:
        return "length"
    return "tool_calls" if report.calls else "stop"


class ChunkEncoder:
    """Turn events into OpenAI chunk deltas; see the module docstring.

    Args:
        reasoning_key: the delta field reasoning goes in.
        stream_arguments: send each call's opening at once and its arguments fragment by
            fragment (default False: each call in one delta once it has ended).
    """

    def __init__(self, reasoning_key: str = "reasoning_content", stream_arguments: bool = False) -> None:
        self._reasoning_key = reasoning_key
        self._stream_arguments = stream_arguments
        self._ws = ""  # trailing whitespace of the content, held back
        self._calls = False  # a call was sent
        # Whole calls: the calls begun and not yet sent, by index (their arguments once they
        # ended, None while open, False once aborted), and the events that wait behind the first.
        self._held: dict[int, str | bool | None] = {}
        self._queue: list[Event] = []

    def encode(self, events: list[Event]) -> list[Delta]:
        deltas: list[Delta] = []
        if self._stream_arguments:
            self._incremental(events, deltas)
            return deltas
        for ev in events:
            kind = type(ev)
            if kind is ToolCallBegin:
                self._held[ev.index] = None  # type: ignore[union-attr]
                self._queue.append(ev)
            elif kind is ArgumentsDelta or kind is ToolCallEnd or kind is CallAborted:
                if ev.index in self._held:  # type: ignore[union-attr]
                    if kind is not ArgumentsDelta:  # (the end carries them whole)
                        self._held[ev.index] = ev.arguments if kind is ToolCallEnd else False  # type: ignore[union-attr]
                        self._release(deltas)
            elif self._queue:
                self._queue.append(ev)
            else:
                self._one(ev, deltas)
        return deltas

    def _incremental(self, events: list[Event], deltas: list[Delta]) -> None:
        # A call begun and aborted in the same events is not sent at all.
        aborted = {ev.index for ev in events if type(ev) is CallAborted}
        for ev in events:
            kind = type(ev)
            if kind is ArgumentsDelta:
                if ev.index not in aborted:  # type: ignore[union-attr]
                    deltas.append({"tool_calls": [{"index": ev.index, "function": {"arguments": ev.text}}]})  # type: ignore[union-attr]
            elif kind is ToolCallBegin:
                if ev.index not in aborted:  # type: ignore[union-attr]
                    self._calls = True
                    deltas.append({"tool_calls": [_opening(ev, "")]})  # type: ignore[arg-type]
            else:
                self._one(ev, deltas)

    def _one(self, ev: Event, deltas: list[Delta]) -> None:
        kind = type(ev)
        if kind is Text:
            self._content(ev.text, deltas)  # type: ignore[union-attr]
        elif kind is Reasoning:
            deltas.append({self._reasoning_key: ev.text})  # type: ignore[union-attr]

    def _release(self, deltas: list[Delta]) -> None:
        """Send the queue's head up to the first call still open."""
        sent = 0
        for ev in self._queue:
            if type(ev) is ToolCallBegin:
                arguments = self._held[ev.index]
                if arguments is None:
                    break
                del self._held[ev.index]
                if arguments is not False:
                    self._calls = True
                    deltas.append({"tool_calls": [_opening(ev, arguments)]})  # type: ignore[arg-type]
            else:
                self._one(ev, deltas)
            sent += 1
        del self._queue[:sent]

    def finish(self, calls: bool | None = None) -> list[Delta]:
        """Deltas still owed at the end of the stream: the held whitespace, unless the answer
        has calls (``calls``: whether it does, when the caller knows better than the events
        seen). A call that never ended is not sent; what waited behind it is."""
        deltas: list[Delta] = []
        if self._queue:
            for index, arguments in self._held.items():
                if arguments is None:
                    self._held[index] = False
            self._release(deltas)
        ws, self._ws = self._ws, ""
        if ws and not (self._calls if calls is None else calls):
            deltas.append({"content": ws})
        return deltas

    def content(self, text: str) -> str | None:
        """The content to send for a Text event now; None while it is only whitespace (held)."""
        body = text.rstrip()
        if not body:
            self._ws += text
            return None
        sent = self._ws + body
        self._ws = text[len(body) :]
        return sent

    def _content(self, text: str, deltas: list[Delta]) -> None:
        sent = self.content(text)
        if sent is not None:
            deltas.append({"content": sent})


def _opening(ev: ToolCallBegin, arguments: str) -> dict[str, Any]:
    return {
        "index": ev.index,
        "id": ev.id,
        "type": "function",
        "function": {"name": ev.name, "arguments": arguments},
    }


def assemble(deltas: list[Delta], reasoning_key: str = "reasoning_content") -> Message:
    """The message a client builds from streamed deltas."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        if delta.get("content"):
            content.append(delta["content"])
        if delta.get(reasoning_key):
            reasoning.append(delta[reasoning_key])
        for part in delta.get("tool_calls") or ():
            call = calls.setdefault(part["index"], {"id": None, "name": "", "arguments": ""})
            call["id"] = call["id"] or part.get("id")
            fn = part.get("function") or {}
            call["name"] += fn.get("name") or ""
            call["arguments"] += fn.get("arguments") or ""
    tool_calls = [
        {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for _, c in sorted(calls.items())
    ]
    text = "".join(content)
    message: Message = {"role": "assistant", "content": (text or None) if tool_calls else text}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message
