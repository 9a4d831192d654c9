"""The pipeline's events as Anthropic Messages server-sent events (``MessagesStream``).

One ``message_start`` first (sent with the first upstream chunk, or with the first ``ping`` when
the upstream is silent before it), then blocks, each ``content_block_start`` -> deltas ->
``content_block_stop`` under its own index, 0..n-1 in the order the model wrote them: ``Text``
events go to a ``text`` block (``text_delta``), ``Reasoning`` to a ``thinking`` block
(``thinking_delta``, closed with a ``signature_delta``), each call to a ``tool_use`` block: a call
released whole (``WholeCall``, the default) is its ``content_block_start``, one
``input_json_delta`` with the whole JSON and its ``content_block_stop``; with
``--stream-arguments`` the block opens when the name is known and is filled with fragments as
the model writes them. A block is closed when the next one opens; a call's fragments that come
after another block opened (native streams that interleave calls) still carry their own block's
index. Then ``message_delta`` (stop reason, stop sequence, usage) and ``message_stop``. While
nothing is written (a call held until it ends, an upstream reading a long prompt) a ``ping``
goes out every ``IDLE_SECONDS``.

``message_start`` carries the request's ``input_tokens`` as count_tokens counts them (``Context``);
``message_delta`` the upstream's own count when it reports one.

Stop reasons: ``tool_calls`` is ``tool_use``, ``length`` is ``max_tokens`` (a call cut by the
limit is never sent whole; with ``--stream-arguments`` a block already opened stays open-ended
in what it holds, its markup is not repeated as text after it, and the client is told the output
was cut, never that the call finished),
``stop`` is ``stop_sequence`` when the upstream says which stop
string matched (vLLM's ``stop_reason``, SGLang's ``matched_stop``) and ``end_turn`` otherwise.

A threaded request's answer (``keep``) is gathered as it is sent (``threads.Reply``) and kept
when ``message_stop`` is made, before the client can send the next turn.

The one event of nearly every chunk (a piece of text in the open text block) is spliced into
bytes made once per block, as the chat front does; the rest go through orjson.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ....events import ArgumentsDelta, CallAborted, Event, Reasoning, Text, ToolCallBegin
from ....syntax.dialect import TRUNCATED
from ...plain import plain_content
from ...streaming import IDLE_SECONDS, AnswerStream, Field, Finish
from ...validation import WholeCall
from .threads import Reply, Thread

_dumps = orjson.dumps
PING = b'event: ping\ndata: {"type":"ping"}\n\n'
_REASONS = {"tool_calls": "tool_use", "length": "max_tokens", "content_filter": "refusal"}


def stop_reason(finish: Any, choice: dict[str, Any] | None) -> tuple[str, str | None]:
    """The Messages stop reason and stop sequence for a chat ``finish_reason``; ``choice`` is the
    upstream's choice (its ``stop_reason`` or ``matched_stop`` names the stop string matched)."""
    if finish in _REASONS:
        return _REASONS[finish], None
    matched = None
    if choice is not None:
        matched = choice.get("stop_reason", choice.get("matched_stop"))
    if isinstance(matched, str) and matched:
        return "stop_sequence", matched
    return "end_turn", None


def usage_of(usage: Any, estimate: int | None, prompt_estimate: int = 0) -> dict[str, int]:
    """Messages usage from a chat ``usage`` (cached prompt tokens become cache reads); without
    one, ``estimate`` output tokens (or 0); without its prompt count, ``prompt_estimate``."""
    prompt = completion = cached = 0
    if isinstance(usage, dict):
        prompt = _int(usage.get("prompt_tokens"))
        completion = _int(usage.get("completion_tokens"))
        details = usage.get("prompt_tokens_details")
        cached = min(_int(details.get("cached_tokens")), prompt) if isinstance(details, dict) else 0
    elif estimate is not None:
        completion = estimate
    prompt = prompt or prompt_estimate
    return {"input_tokens": prompt - cached, "output_tokens": completion,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached}


def _int(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def _event(name: bytes, data: dict[str, Any]) -> bytes:
    return b"event: %b\ndata: %b\n\n" % (name, _dumps(data))


@dataclass(frozen=True)
class Context:
    """What an answer needs of its request: its input tokens, counted as count_tokens counts
    them (``tokens.TokenCounter``), for a stream's ``message_start`` (the upstream's count comes
    last); the ``threads.Thread`` the answer is kept in, if any."""

    input_tokens: int = 0
    thread: Thread | None = None


UNCOUNTED = Context()  # a turn's without either (one for all: a Context is not changed)


class MessagesStream:
    """Upstream chunks in, Messages SSE events out; see the module docstring."""

    def __init__(self, answer: AnswerStream, message_id: str, call_id: Callable[[str], str],
                 signature: str, keep: Callable[[str, Reply, int], Awaitable[None]] | None = None) -> None:
        self._answer = answer
        self._keep = keep  # a threaded request's: told the answer at its end
        self._reply = Reply() if keep is not None else None
        self._kept: tuple[str, Reply, int] | None = None  # what ``keep`` keeps, once finished
        self._id, self._call_id, self._signature = message_id, call_id, signature
        self._started = False
        self._start_lock = threading.Lock()  # idle_sse runs on the loop, a large chunk on a worker
        self._open: int | None = None  # the index of the open block
        self._kind = ""  # its type
        self._blocks = 0
        self._calls: dict[int, int] = {}  # call index -> block index
        self._text_pre = b""  # the open text block's delta frame, up to the text
        self._finish: str | None = None
        self._matched: dict[str, Any] | None = None  # the upstream choice that named its stop
        self._chars = 0  # what was sent, for an estimate when the upstream gives no usage
        context = answer.plan.context
        self._input = context.input_tokens if isinstance(context, Context) else 0
        self._cut = False  # a call whose block was sent was cut by the limit: its markup is not text
        self.idle_seconds = IDLE_SECONDS

    @property
    def provenance(self) -> Any:
        return self._answer.provenance

    @property
    def ready(self) -> bool:
        """Whether ``content_sse`` may be used (once the first chunk is out)."""
        return self._started and self._answer.hot is not None

    def plain_sse(self, text: str) -> bytes | None:
        """``content_sse(text)`` when the parser reads ``text`` as plain content in the open
        text block: one event, or none while it is held; None otherwise, nothing read."""
        if self._kind != "text":
            return None
        sent = self._answer.hot.plain(text)  # type: ignore[union-attr]
        if sent is None:
            return None
        return self._text_delta(sent) if sent else b""

    def content_sse(self, text: str) -> bytes:
        """``feed_sse`` of a chunk that is only a piece of content (``plain_content``), once
        ``ready``."""
        data = self.plain_sse(text)
        if data is not None:  # plain content, in the open text block: no events made
            return data
        events = self._answer.hot.content(text)  # type: ignore[union-attr]
        if len(events) == 1:
            ev = events[0]
            if type(ev) is Text and self._kind == "text" and ev.text:
                return self._text_delta(ev.text)
            if type(ev) is ArgumentsDelta:
                return self._arguments(ev)
        return self._events(events)

    def _text_delta(self, text: str) -> bytes:
        """A piece of text in the open text block (counted for the usage estimate)."""
        self._chars += len(text)
        if self._reply is not None:
            self._reply.texts.append(text)
        return self._text_pre + _dumps(text) + b"}}\n\n"

    def feed_sse(self, chunk: dict[str, Any]) -> bytes:
        """The client events for one upstream chunk (possibly none)."""
        head = b"" if self._started else self._start(chunk.get("model"))
        choices = chunk.get("choices")
        text = plain_content(chunk) if self._answer.hot is not None else None
        if text is not None:  # the shape of nearly every chunk: a piece of content
            return head + self.content_sse(text)
        out = [head]
        for ch in choices if type(choices) is list else ():
            if type(ch) is dict and not ch.get("index") and ch.get("finish_reason"):
                self._matched = ch
        out.append(self._events(self._answer.feed_first(chunk)))
        return b"".join(out)

    def finish_sse(self) -> bytes:
        """What the parsers still held, the open block's end, ``message_delta`` and ``message_stop``."""
        out = [b"" if self._started else self._start(None), self._events(self._answer.finish_first())]
        out.append(self._close())
        reason, sequence = stop_reason(self._finish, self._matched)
        usage = usage_of(self._answer.usage, -(-self._chars // 4), self._input)
        out.append(_event(b"message_delta", {"type": "message_delta", "usage": usage,
                                             "delta": {"stop_reason": reason, "stop_sequence": sequence}}))
        out.append(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
        if self._keep is not None and self._reply is not None:
            self._kept = (self._id, self._reply, self._chars)
        return b"".join(out)

    async def keep(self) -> None:
        """Keep the threaded answer ``finish_sse`` ended, before its last events go (the
        pipeline awaits it); StoreUnavailable when the store cannot."""
        kept, self._kept = self._kept, None
        if kept is not None and self._keep is not None:
            await self._keep(*kept)

    def idle_sse(self) -> bytes:
        """A ``ping`` (``message_start`` first when nothing was sent yet), for
        ``pipeline.keepalive`` while nothing else is written; called on the event loop."""
        return (b"" if self._started else self._start(None)) + PING

    def _start(self, model: Any) -> bytes:
        with self._start_lock:
            if self._started:
                return b""
            self._started = True
        message: dict[str, Any] = {"id": self._id, "type": "message", "role": "assistant",
                   "model": model if isinstance(model, str) else self._answer.plan.model or "",
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": usage_of(None, 0, self._input)}
        return _event(b"message_start", {"type": "message_start", "message": message})

    def _events(self, events: Sequence[Event | Field | Finish]) -> bytes:
        out = []
        for ev in events:
            if isinstance(ev, Text):
                if ev.text and not self._cut:
                    if self._kind != "text":
                        out.append(self._begin("text", {"type": "text", "text": ""}))
                    out.append(self._text_delta(ev.text))
            elif isinstance(ev, ArgumentsDelta):
                out.append(self._arguments(ev))
            elif isinstance(ev, Reasoning):
                if self._kind != "thinking":
                    out.append(self._begin("thinking", {"type": "thinking", "thinking": "", "signature": ""}))
                self._chars += len(ev.text)
                if self._reply is not None:
                    self._reply.thoughts.append(ev.text)
                delta = {"type": "thinking_delta", "thinking": ev.text}
                out.append(_event(b"content_block_delta", {"type": "content_block_delta", "index": self._open,
                                                           "delta": delta}))
            elif isinstance(ev, WholeCall):
                out.append(self._whole_call(ev))
            elif isinstance(ev, ToolCallBegin):
                block = {"type": "tool_use", "id": self._call_id(ev.id), "name": ev.name, "input": {}}
                out.append(self._begin("tool_use", block))
                self._calls[ev.index] = self._blocks - 1
                self._record_call(ev.index, ev.id, ev.name)
            elif isinstance(ev, CallAborted):
                # Cut by the limit after its block went out: the block says it (max_tokens), and
                # the text the parser gives back is its markup, the last of the output: not sent.
                self._cut = self._cut or (ev.index in self._calls and ev.reason.startswith(TRUNCATED))
            elif isinstance(ev, Finish):
                self._finish = ev.reason
        return b"".join(out)

    def _whole_call(self, ev: WholeCall) -> bytes:
        """A call released whole: its block started, its whole input, its block stopped."""
        block = {"type": "tool_use", "id": self._call_id(ev.id), "name": ev.name, "input": {}}
        out = self._begin("tool_use", block)
        self._calls[ev.index] = self._blocks - 1
        self._record_call(ev.index, ev.id, ev.name)
        return out + self._arguments(ArgumentsDelta(ev.index, ev.arguments)) + self._close()

    def _arguments(self, ev: ArgumentsDelta) -> bytes:
        block = self._calls.get(ev.index)
        if block is None or not ev.text:
            return b""
        self._chars += len(ev.text)
        if self._reply is not None:
            self._reply.calls[ev.index][2].append(ev.text)
        return (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
                b'"delta":{"type":"input_json_delta","partial_json":%b}}\n\n' % (block, _dumps(ev.text)))

    def _record_call(self, index: int, call_id: str, name: str) -> None:
        if self._reply is not None:
            self._reply.calls[index] = (call_id, name, [])

    def _begin(self, kind: str, block: dict[str, Any]) -> bytes:
        closing = self._close()
        index = self._open = self._blocks
        self._blocks += 1
        self._kind = kind
        if kind == "text":
            self._text_pre = (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
                              b'"delta":{"type":"text_delta","text":' % index)
        start = {"type": "content_block_start", "index": index, "content_block": block}
        return closing + _event(b"content_block_start", start)

    def _close(self) -> bytes:
        if self._open is None:
            return b""
        index, kind = self._open, self._kind
        self._open, self._kind = None, ""
        out = b""
        if kind == "thinking":
            out = _event(b"content_block_delta", {"type": "content_block_delta", "index": index,
                                                  "delta": {"type": "signature_delta", "signature": self._signature}})
        return out + b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%d}\n\n' % index
