"""An upstream's streamed answer as the pipeline's events, chunk by chunk; no client wire format.

Per choice, content deltas go through a StreamParser (calls recovered incrementally, markers
never leaking), reasoning deltas through a second one when recovery from reasoning is on, and
native tool-call deltas are checked and normalised (``upstream.native``). All calls of a choice
share one index sequence, so the events carry the turn's own call indices. Trailing whitespace of
the content is held back until more content or the end shows whether it belongs (a turn that
ends in calls has the same content streamed as whole). The upstream's ``finish_reason`` is held
back until the parsers are closed, then replaced by ``tool_calls`` or ``length`` as the calls
warrant (``Finish``). Each call is held until it has ended and been checked, then released
whole (``validation.Gate``, ``WholeCall``); with ``--stream-arguments`` only a call that must be
valid (``--on-invalid``, strict tools) is, the others stream as written, but a call whose opening
and abortion come from the same upstream chunk is not passed on at all (and the events of the
chunk that carries the upstream's finish reason, when they open a call, wait for the close that
may abort it). Fronts turn these events into their own wire format.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

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
from ..openai import ChunkEncoder
from ..syntax.dialect import TRUNCATED
from ..parsing.parser import StreamParser
from .repair import NO_TOOLS, REASONING_KEYS, Provenance, parser_options, tool_choice_unmet
from .thinking import Lead
from .turn import Plan, RequestError
from .upstream.native import NativeStream
from .validation import Gate


IDLE_SECONDS = 10.0  # a front's keep-alive after this long without a byte to the client (pipeline.keepalive)
_UNCOUNTED = frozenset((Text, ArgumentsDelta, Reasoning))  # nothing to count: most events
_OPEN_CALL = frozenset((ToolCallBegin, ArgumentsDelta, CallAborted))  # what a stream sends of an open call


@dataclass(frozen=True, slots=True)
class Field:
    """A field of the upstream's delta passed on as it is (``role``, ``refusal``, ``logprobs``...);
    fronts that have no place for it drop it."""

    key: str
    value: Any


@dataclass(frozen=True, slots=True)
class Finish:
    """The choice is complete: ``stop``, ``length``, ``tool_calls`` or the upstream's own reason."""

    reason: str


class _Choice:
    """The translation state of one choice."""

    def __init__(self, plan: Plan, provenance: Provenance, seen_ids: set[str]) -> None:
        self.reset(plan, provenance, seen_ids)

    def reset(self, plan: Plan, provenance: Provenance, seen_ids: set[str]) -> None:
        """Start over, for another answer to the same client stream (a retry)."""
        self._plan = plan
        self._prov = provenance
        self._next = itertools.count().__next__
        self._any_call = False
        parse, options = plan.tools is not None, parser_options(plan)
        # Reasoning written in the content: its parser is made once the answer's start tells
        # how to read it (thinking.Lead); until then the start is held.
        self._lead = Lead.of(plan)
        self._content = (StreamParser(plan.dialect, plan.tools, **options)
                         if parse and self._lead is None else None)
        self._reasoned = False  # the upstream gave reasoning in its own field: none split from content
        # Reasoning is split out of the content (thinking.py) and the answer, or the reasoning,
        # has not begun: its leading white space is dropped.
        self._trim = self._unthought = False
        self._reasoning = (StreamParser(plan.dialect, plan.tools, **options)
                           if parse and plan.recover_from_reasoning else None)
        self._held_ws = ChunkEncoder()  # holds the content's trailing whitespace
        self._native = NativeStream(plan.tools, self._begin, seen_ids)
        self._index: dict[tuple[str, int], int | None] = {}  # (source, parser index) -> ours
        self._calls = 0
        self._truncated = False
        self.upstream_finish: str | None = None
        self.reasoning_key = "reasoning_content"  # the upstream's spelling (or "reasoning")
        self._enforcing = plan.enforcing
        self._holding = plan.holding
        self._gate = Gate(plan)
        self._aborted = False  # a call aborted since the last _settled (stream_arguments)
        self._deferred: list[Event] = []  # the finish chunk's events, until the close
        self._held: set[int] = set()  # our indices of parsed calls the gate holds

    def feed(self, delta: dict[str, Any]) -> list[Event]:
        """The events of one upstream delta."""
        if len(delta) == 1 and type(delta.get("content")) is str:  # nearly every chunk
            return self.content(delta["content"])
        out: list[Event] = []
        if not self._reasoned:  # (before the content beside it, whatever the order of the keys)
            self._reasoned = any(type(delta.get(key)) is str and delta[key] for key in REASONING_KEYS)
        for key, value in delta.items():
            if key == "content" and isinstance(value, str):
                out += self._content_out(value)
            elif key in REASONING_KEYS and isinstance(value, str):
                self.reasoning_key = key
                out += self._thoughts(value)
            elif key == "tool_calls" and isinstance(value, list):
                native = self._native.feed(value)
                out += self._gate.feed(native, True) if self._gate.active else native
            elif value is not None and key != "content":
                out.append(Field(key, value))
        return self._settled(out)

    def finish(self) -> list[Event]:
        out: list[Event] = []
        cut = self.upstream_finish == "length"  # a call the end would close is truncated
        if self._lead is not None:  # the answer ended while its start was held
            out += self._content_out(self._read(self._lead.end()))
        if self._content is not None:
            out += self._content_events(self._content.close(cut))
            self._prov.noted(self._content)
        if self._reasoning is not None:
            reasoned = self._thought_events(self._reasoning.close(cut))
        good, rejected, invalid = self._native.finish()
        # Whitespace after the content stays unless calls are returned (a call that began and
        # broke is not one), as in a whole answer.
        held = self._held_ws.finish(calls=bool(self._calls or good))
        if held:
            out.append(Text(held[0]["content"]))
        if self._reasoning is not None:
            out += reasoned
        self._prov.native += len(good)
        self._prov.invalid += invalid
        self._prov.rejected += len(rejected)
        if cut:  # begun native calls the limit cut end as a parser's cut call does, then their text
            out += [CallAborted(index, f"{TRUNCATED}: cut by the upstream's limit") for index in self._native.broken]
            self._prov.aborted += len(self._native.broken)
        if rejected:
            out.append(Text("\n".join(rejected)))
        if self._gate.active:
            out = self._gate.finish(out, good)
        if self._deferred:
            out, self._deferred = self._deferred + out, []
        if self._aborted:
            out = self._unsent(out)
        calls = self._calls + len(good)
        if self._plan.required and not calls and self.upstream_finish != "length":
            raise tool_choice_unmet(self._plan.required)  # (cut by the limit: length, as the APIs say)
        reason = "length" if self._truncated else ("tool_calls" if calls else self.upstream_finish or "stop")
        out.append(Finish(reason))
        return out

    # ---------------------------------------------------------------- text and reasoning

    def content(self, text: str) -> list[Event]:
        """Events for upstream content: settled text and the calls recovered from it."""
        out = self._content_out(text)
        if self._aborted or self._deferred or self.upstream_finish is not None:
            return self._settled(out)
        return out

    def _content_out(self, text: str) -> list[Event]:
        if self._lead is not None:
            if self._reasoned:  # the upstream reads reasoning itself (thinking.Lead.opening_only)
                self._lead.opening_only()
            verdict = self._lead.feed(text)
            if verdict is None:
                return []
            text = self._read(verdict)
        if self._content is None:
            return [Text(text)] if text else []
        out: list[Event] = []
        for ev in self._content.feed(text):
            if type(ev) is Text:
                text = self._trimmed(ev.text) if self._trim else ev.text
                sent = self._held_ws.content(text) if text else None
                if sent is not None:
                    out.append(ev if sent is ev.text else Text(sent))
            elif type(ev) is ArgumentsDelta:
                ours = self._index.get(("content", ev.index))
                if ours is not None:
                    out.append(ev if ours == ev.index else ArgumentsDelta(ours, ev.text))
            else:
                out += self._content_events([ev])
        return self._gate.feed(out) if self._gate.active else out

    def _read(self, verdict: tuple[bool, bool]) -> str:
        """Make the content's parser as the held start's ``verdict`` says (reasoning split out,
        from inside it); returns the text held, for it to read."""
        lead, self._lead = self._lead, None
        split, inside = verdict
        plan = self._plan
        if plan.tools is not None or split:  # (no tools: the parser only splits, it reads no call)
            tools = plan.tools if plan.tools is not None else NO_TOOLS
            options = {**parser_options(plan), "reasoning": split, "in_reasoning": inside} if split \
                else parser_options(plan)
            self._content = StreamParser(plan.dialect, tools, **options)
        self._trim = self._unthought = split
        return lead.text  # type: ignore[union-attr]

    def _trimmed(self, text: str) -> str:
        """Text of the answer while it has not begun, after reasoning split out of the content:
        without its leading white space (what follows ``</think>``, as a reasoning parser
        upstream would give it; so is the reasoning's, and one of white space alone, as Qwen3
        writes with thinking off, is none)."""
        text = text.lstrip()
        self._trim = not text
        return text

    def plain(self, text: str) -> str | None:
        """``content(text)`` when the parser reads ``text`` as plain content
        (``StreamParser.feed_plain``) and no gate holds events: the content to send now ("" while
        it is only whitespace, held), without making events; None otherwise, nothing read."""
        parser = self._content
        if parser is None or self._gate.active or self._deferred or self._trim or not parser.feed_plain(text):
            return None
        sent = self._held_ws.content(text)
        return "" if sent is None else sent

    def _content_events(self, events: list[Event]) -> list[Event]:
        self._count(events, "content")
        out: list[Event] = []
        for ev in events:
            if type(ev) is Text:
                text = self._trimmed(ev.text) if self._trim else ev.text
                sent = self._held_ws.content(text) if text else None
                if sent is not None:
                    out.append(Text(sent))
            elif type(ev) is Reasoning:  # the parser splits reasoning (completions mode, thinking.py)
                thought = ev.text.lstrip() if self._unthought else ev.text
                if thought and not self._reasoned:
                    self._unthought = False
                    out.append(ev if thought is ev.text else Reasoning(thought))
            else:
                out += self._remap("content", ev)
        return out

    def _thoughts(self, text: str) -> list[Event]:
        if self._reasoning is None:
            return [Reasoning(text)]
        out = self._thought_events(self._reasoning.feed(text))
        return self._gate.feed(out) if self._gate.active else out

    def _thought_events(self, events: list[Event]) -> list[Event]:
        self._count(events, "reasoning")
        out: list[Event] = []
        for ev in events:
            if isinstance(ev, Text):
                out.append(Reasoning(ev.text))
            else:
                out += self._remap("reasoning", ev)
        return out

    def _count(self, events: list[Event], source: str) -> None:
        for ev in events:
            if type(ev) in _UNCOUNTED:
                continue
            if isinstance(ev, ToolCallBegin):
                ours = self._index[(source, ev.index)] = self._begin()
                if ours is not None and self._enforcing and self._plan.enforced(ev.name):
                    self._held.add(ours)
            elif isinstance(ev, ToolCallEnd) and self._index.get((source, ev.index)) is not None:
                self._calls += 1
                setattr(self._prov, source, getattr(self._prov, source) + 1)
            elif isinstance(ev, Invalid):
                self._prov.invalid += 1
            elif isinstance(ev, Repaired):
                self._prov.repaired += 1
            elif isinstance(ev, CallRejected):
                self._prov.rejected += 1
                self._truncated = self._truncated or ev.reason.startswith(TRUNCATED)
            elif isinstance(ev, CallAborted):
                # Cut off or broken after it began: its opening may have been sent, so the answer
                # ends with length ("discard the unfinished call"), as the whole answer does.
                self._prov.aborted += 1
                self._truncated = True

    def _settled(self, out: list[Event]) -> list[Event]:
        """One upstream delta's events as they may go out: without the calls it both opened and
        aborted; held back (``_deferred``) when it carries the upstream's finish reason and opens
        a call that the close may still cut."""
        if self._aborted:
            out = self._unsent(out)
        if self._deferred or (self.upstream_finish is not None and any(type(ev) is ToolCallBegin for ev in out)):
            self._deferred += out
            return []
        return out

    def _unsent(self, out: list[Event]) -> list[Event]:
        """``out`` without the events of calls that open and abort within it."""
        self._aborted = False
        aborted = {ev.index for ev in out if type(ev) is CallAborted}  # type: ignore[union-attr]
        begun = {ev.index for ev in out if type(ev) is ToolCallBegin} & aborted  # type: ignore[union-attr]
        if not begun:
            return out
        return [ev for ev in out if type(ev) not in _OPEN_CALL or ev.index not in begun]  # type: ignore[union-attr]

    def _begin(self) -> int | None:
        """Our index for a new call, or None when parallel calls are off and one already came."""
        if not self._plan.parallel and self._any_call:
            self._prov.rejected += 1
            return None
        self._any_call = True
        self._gate.active = self._gate.active or self._holding
        return self._next()

    def _remap(self, source: str, ev: Event) -> list[Event]:
        """A parser's call event with the turn's index; [] for a call not passed on, and for
        events that are only counted."""
        if isinstance(ev, ToolCallBegin | ArgumentsDelta | ToolCallEnd):
            ours = self._index.get((source, ev.index))
            if ours is None:
                return []
            if isinstance(ev, ToolCallBegin):
                return [ev if ours == ev.index else ToolCallBegin(ours, ev.id, ev.name)]
            if isinstance(ev, ArgumentsDelta):
                return [ev if ours == ev.index else ArgumentsDelta(ours, ev.text)]
            return [ev if ours == ev.index else ToolCallEnd(ours, ev.arguments)]
        if isinstance(ev, CallAborted):  # fronts that show each call close its item here
            ours = self._index.get((source, ev.index))
            if ours is None:
                return []
            self._aborted = True
            return [ev if ours == ev.index else CallAborted(ours, ev.reason)]
        if isinstance(ev, Invalid) and self._held:  # for the gate: a held call's fate
            ours = self._index.get((source, ev.index))
            if ours in self._held:
                return [Invalid(ours, ev.errors)]
        return []


class AnswerStream:
    """An upstream's chat chunks in, the pipeline's events out; see the module docstring.

    ``feed`` and ``finish`` return ``(choice index, events)`` pairs; ``meta`` holds the fields
    every chunk repeats (id, created, model, system_fingerprint), ``usage`` the last usage seen.
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.provenance = Provenance()
        self.meta: dict[str, Any] = {}
        self.usage: Any = None
        self._seen_ids: set[str] = set()
        self._choices: dict[int, _Choice] = {}
        self.hot: _Choice | None = None  # choice 0, for the one-choice content fast path

    def feed(self, chunk: dict[str, Any]) -> list[tuple[int, list[Event]]]:
        if not self.meta:
            self.meta = {k: chunk.get(k) for k in ("id", "created", "model", "system_fingerprint")}
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        out = []
        for ch in chunk.get("choices") or ():
            if not isinstance(ch, dict):
                continue
            index = ch.get("index", 0)
            state = self._choices.get(index) or self._new_choice(index)
            if ch.get("finish_reason"):
                state.upstream_finish = ch["finish_reason"]
            delta: dict[str, Any] = ch["delta"] if isinstance(ch.get("delta"), dict) else {}
            out.append((index, state.feed(delta)))
        return out

    def finish(self) -> list[tuple[int, list[Event]]]:
        """Each choice's closing events, ending with its ``Finish``; raises RequestError when
        ``tool_choice`` is unmet."""
        return [(index, state.finish()) for index, state in sorted(self._choices.items())]

    @property
    def finished(self) -> bool:
        """Whether the upstream began a choice and gave each choice it began a finish reason: a
        stream that ends (``[DONE]``) otherwise was cut short, as llama-cpp-python's server cuts
        one when another request reaches it."""
        return bool(self._choices) and all(state.upstream_finish for state in self._choices.values())

    def feed_first(self, chunk: dict[str, Any]) -> list[Event]:
        """``feed`` for an API with one output (Messages, Responses): the first choice's events
        (other choices are not asked for)."""
        return [ev for index, events in self.feed(chunk) if index == 0 for ev in events]

    def finish_first(self) -> list[Event]:
        """``finish`` for an API with one output: the first choice's closing events."""
        return [ev for index, events in self.finish() if index == 0 for ev in events]

    def restart(self, plan: Plan) -> None:
        """Read another answer into the same client stream (a retry): the envelope (``meta``)
        and the call ids given so far are kept, each choice starts over, provenance too."""
        self.plan = plan
        self.provenance = Provenance()
        for state in self._choices.values():
            state.reset(plan, self.provenance, self._seen_ids)

    def reasoning_key(self, index: int) -> str:
        """How the upstream spelled choice ``index``'s reasoning field."""
        state = self._choices.get(index)
        return state.reasoning_key if state is not None else "reasoning_content"

    def _new_choice(self, index: int) -> _Choice:
        state = self._choices[index] = _Choice(self.plan, self.provenance, self._seen_ids)
        if index == 0:
            self.hot = state
        return state
