"""Translating an upstream's stream of chat.completion.chunk objects, chunk by chunk.

Per choice, content deltas go through a StreamParser (calls recovered incrementally, markers
never leaking), reasoning deltas through a second one when recovery from reasoning is on, and
native tool-call deltas through NativeStream. All calls share one index sequence. The upstream's
``finish_reason`` is held back until the parsers are closed, then replaced by ``tool_calls`` or
``length`` as the calls warrant; the usage chunk, when asked for, comes last.

Client chunks are produced as SSE bytes (``feed_sse``): the envelope every chunk repeats (id,
created, model...) is encoded once per stream, and the two deltas that make up nearly every
chunk (a piece of content, a fragment of a call's arguments) are spliced into it as bytes,
without building the chunk's dicts. Every other delta is a dict encoded by orjson into the same
envelope, so both give the same bytes. ``feed`` returns the same chunks decoded, for callers
that want objects.
"""

from __future__ import annotations

import itertools
from typing import Any

import orjson

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
from ..parsing.parser import StreamParser
from .upstream.native import NativeStream
from .fronts.chat import Plan, RequestError
from .repair import REASONING_KEYS, Provenance, tool_choice_unmet

Delta = dict[str, Any]
_dumps = orjson.dumps
_UNCOUNTED = frozenset((Text, ArgumentsDelta, Reasoning, Repaired))  # nothing to count: most events


def malformed_call(reason: str) -> RequestError:
    """A call whose opening was already streamed turned out malformed: it cannot be taken back,
    so the stream ends with this error rather than with a call whose arguments are broken."""
    return RequestError(f"the model's tool call became malformed after it began streaming ({reason})",
                        status=502, type="upstream_error", code="malformed_tool_call")


class _Choice:
    """The translation state of one choice."""

    def __init__(self, plan: Plan, provenance: Provenance, seen_ids: set[str]) -> None:
        self._plan = plan
        self._prov = provenance
        self._next = itertools.count().__next__
        self._any_call = False
        parse = plan.tools is not None
        self._content = StreamParser(plan.dialect, plan.tools, **plan.parser_options) if parse else None
        self._reasoning = (StreamParser(plan.dialect, plan.tools, **plan.parser_options)
                           if parse and plan.recover_from_reasoning else None)
        self._encoder = ChunkEncoder()
        self._native = NativeStream(plan.tools, self._begin, seen_ids)
        self._index: dict[tuple[str, int], int | None] = {}  # (source, parser index) -> ours
        self._calls = 0
        self._truncated = False
        self.upstream_finish: str | None = None

    def feed(self, delta: dict[str, Any]) -> list[Delta | bytes]:
        """The client deltas for one upstream delta: dicts, or JSON bytes for the common ones."""
        if len(delta) == 1 and type(delta.get("content")) is str:  # nearly every chunk
            return self.content(delta["content"])
        out: list[Delta | bytes] = []
        for key, value in delta.items():
            if key == "content" and isinstance(value, str):
                out += self.content(value)
            elif key in REASONING_KEYS and isinstance(value, str):
                out += self._thoughts(key, value)
            elif key == "tool_calls" and isinstance(value, list):
                parts = self._native.feed(value)
                if parts:
                    out.append({"tool_calls": parts})
            elif value is not None and key != "content":
                out.append({key: value})
        return [d for d in out if isinstance(d, bytes) or d.get("tool_calls", True)]

    def finish(self) -> tuple[list[Delta], str]:
        out: list[Delta] = []
        if self._content is not None:
            out += self._content_deltas(self._content.close())
            self._prov.noted(self._content)
        out += self._encoder.finish()
        if self._reasoning is not None:
            out += self._thought_deltas("reasoning_content", self._reasoning.close())
        good, rejected, invalid = self._native.finish()
        self._prov.native += len(good)
        self._prov.invalid += invalid
        self._prov.rejected += len(rejected)
        if rejected:
            out.append({"content": "\n".join(rejected)})
        calls = self._calls + len(good)
        if self._plan.required and not calls:
            raise tool_choice_unmet(self._plan.required)
        reason = "length" if self._truncated else ("tool_calls" if calls else self.upstream_finish or "stop")
        return [d for d in out if d.get("tool_calls", True)], reason

    # ---------------------------------------------------------------- text and reasoning

    def content(self, text: str) -> list[Delta | bytes]:
        """Deltas for upstream content: text and argument fragments as JSON bytes (the hot
        path), anything else through the encoder as dicts."""
        if self._content is None:
            return [b'{"content":%b}' % _dumps(text)] if text else []
        out: list[Delta | bytes] = []
        for ev in self._content.feed(text):
            if type(ev) is Text:
                sent = self._encoder.content(ev.text)
                if sent is not None:
                    out.append(b'{"content":%b}' % _dumps(sent))
            elif type(ev) is ArgumentsDelta:
                ours = self._index.get(("content", ev.index))
                if ours is not None:
                    out.append(b'{"tool_calls":[{"index":%d,"function":{"arguments":%b}}]}'
                               % (ours, _dumps(ev.text)))
            else:
                out += [d for d in self._content_deltas([ev]) if d.get("tool_calls", True)]
        return out

    def _content_deltas(self, events: list[Event]) -> list[Delta]:
        self._count(events, "content")
        deltas = self._encoder.encode(events)
        for d in deltas:
            if "tool_calls" in d:
                d["tool_calls"] = self._remap("content", d["tool_calls"])
        return deltas

    def _thoughts(self, key: str, text: str) -> list[Delta]:
        if self._reasoning is None:
            return [{key: text}]
        return self._thought_deltas(key, self._reasoning.feed(text))

    def _thought_deltas(self, key: str, events: list[Event]) -> list[Delta]:
        self._count(events, "reasoning")
        scratch = ChunkEncoder()
        out: list[Delta] = []
        for ev in events:
            if isinstance(ev, Text):
                out.append({key: ev.text})
            else:
                for d in scratch.encode([ev]):
                    if "tool_calls" in d:
                        out.append({"tool_calls": self._remap("reasoning", d["tool_calls"])})
        return out

    def _count(self, events: list[Event], source: str) -> None:
        for ev in events:
            if type(ev) in _UNCOUNTED:
                continue
            if isinstance(ev, ToolCallBegin):
                self._index[(source, ev.index)] = self._begin()
            elif isinstance(ev, ToolCallEnd) and self._index.get((source, ev.index)) is not None:
                self._calls += 1
                setattr(self._prov, source, getattr(self._prov, source) + 1)
            elif isinstance(ev, Invalid):
                self._prov.invalid += 1
            elif isinstance(ev, (CallRejected, CallAborted)):
                self._prov.rejected += 1
                self._truncated = self._truncated or ev.reason == "truncated"
                if isinstance(ev, CallAborted) and ev.reason != "truncated":
                    raise malformed_call(ev.reason)

    def _begin(self) -> int | None:
        """Our index for a new call, or None when parallel calls are off and one already came."""
        if not self._plan.parallel and self._any_call:
            self._prov.rejected += 1
            return None
        self._any_call = True
        return self._next()

    def _remap(self, source: str, parts: list[Delta]) -> list[Delta]:
        out = []
        for part in parts:
            ours = self._index.get((source, part["index"]))
            if ours is not None:  # the encoder's parts are fresh dicts: reused when unchanged
                out.append(part if ours == part["index"] else {**part, "index": ours})
        return out


class StreamTranslator:
    """Turn upstream chunks into client chunks; see the module docstring."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.provenance = Provenance()
        self._seen_ids: set[str] = set()
        self._choices: dict[int, _Choice] = {}
        self._meta: dict[str, Any] = {}
        self._usage: Any = None
        self._role_sent: set[int] = set()
        self._head = b""  # b'data: {"id":...,"choices":[{"index":', made once from _meta
        self._hot: _Choice | None = None  # choice 0 once its first chunk is out: the fast path
        self._pre = b""  # the head and b'0,"delta":'
        self._tail = b',"finish_reason":null}]' + (b',"usage":null' if plan.include_usage else b"") + b"}\n\n"

    def feed_sse(self, chunk: dict[str, Any]) -> bytes:
        """The client chunks for one upstream chunk, as SSE events (possibly none)."""
        hot = self._hot
        choices = chunk.get("choices")
        if hot is not None and type(choices) is list and len(choices) == 1 and not chunk.get("usage"):
            ch = choices[0]  # the shape of nearly every chunk: one choice, a piece of content
            if type(ch) is dict and not ch.get("index") and not ch.get("finish_reason"):
                delta = ch.get("delta")
                if type(delta) is dict and len(delta) == 1 and type(delta.get("content")) is str:
                    deltas = hot.content(delta["content"])
                    if len(deltas) == 1 and type(deltas[0]) is bytes:
                        return self._pre + deltas[0] + self._tail
                    return self._frames(0, deltas)
        return self._feed(chunk)

    def finish_sse(self) -> bytes:
        """The closing chunks: what the parsers still held, each choice's finish, the usage."""
        out = []
        for index, state in sorted(self._choices.items()):
            deltas, reason = state.finish()
            out.append(self._frames(index, deltas))
            out.append(self._frame(index, {}, reason))
        if self.plan.include_usage:
            out.append(b"data: " + _dumps({**self._envelope(), "choices": [], "usage": self._usage}) + b"\n\n")
        return b"".join(out)

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """``feed_sse``, decoded: the client chunks as objects."""
        return _decode(self.feed_sse(chunk))

    def finish(self) -> list[dict[str, Any]]:
        """``finish_sse``, decoded."""
        return _decode(self.finish_sse())

    def _feed(self, chunk: dict[str, Any]) -> bytes:
        if not self._meta:
            self._meta = {k: chunk.get(k) for k in ("id", "created", "model", "system_fingerprint")}
            self._head = b"data: " + _dumps(self._envelope())[:-1] + b',"choices":[{"index":'
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        out = []
        for ch in chunk.get("choices") or ():
            if not isinstance(ch, dict):
                continue
            index = ch.get("index", 0)
            state = self._choices.get(index) or self._choices.setdefault(
                index, _Choice(self.plan, self.provenance, self._seen_ids))
            if ch.get("finish_reason"):
                state.upstream_finish = ch["finish_reason"]
            delta: dict[str, Any] = ch["delta"] if isinstance(ch.get("delta"), dict) else {}
            out.append(self._frames(index, state.feed(delta)))
        if self._hot is None and 0 in self._role_sent:
            self._hot, self._pre = self._choices[0], self._head + b'0,"delta":'
        return b"".join(out)

    def _frames(self, index: int, deltas: list[Delta | bytes] | list[Delta]) -> bytes:
        if len(deltas) == 1:
            return self._frame(index, deltas[0])
        return b"".join([self._frame(index, d) for d in deltas])

    def _frame(self, index: int, delta: Delta | bytes, finish: str | None = None) -> bytes:
        """One chunk: the envelope made once, the delta spliced in (bytes kept, dicts encoded)."""
        if index not in self._role_sent:
            self._role_sent.add(index)
            delta = {"role": "assistant", **(orjson.loads(delta) if isinstance(delta, bytes) else delta)}
        data = delta if type(delta) is bytes else _dumps(delta)
        tail = self._tail if finish is None else self._tail.replace(b"null", _dumps(finish), 1)
        return self._head + b"%d,\"delta\":%b%b" % (index, data, tail)

    def _envelope(self) -> dict[str, Any]:
        """The fields every chunk repeats."""
        meta = {k: v for k, v in self._meta.items() if v is not None}
        return {"id": meta.get("id", "chatcmpl-toolbridge"), "object": "chat.completion.chunk",
                "created": meta.get("created", 0), "model": meta.get("model", ""),
                **({"system_fingerprint": meta["system_fingerprint"]} if "system_fingerprint" in meta else {})}


def _decode(events: bytes) -> list[dict[str, Any]]:
    """The objects of SSE ``data:`` events made by ``_frame`` (compact JSON: no blank lines)."""
    return [orjson.loads(e[6:]) for e in events.split(b"\n\n") if e]
