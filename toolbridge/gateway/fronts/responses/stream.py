"""The pipeline's events as Responses server-sent events (``ResponsesStream``).

Every event is ``event: TYPE`` and ``data: {"type": TYPE, ..., "sequence_number": n}``, ``n``
counting from 0; there is no ``[DONE]``. ``response.created`` and ``response.in_progress`` come
first (with the first upstream chunk); then items in the order the model wrote them, each
``response.output_item.added`` -> its deltas -> ``response.output_item.done``:

- a ``message``: ``response.content_part.added`` (``output_text``), ``response.output_text.delta``
  per piece, ``response.output_text.done``, ``response.content_part.done``;
- ``reasoning``: the same with a ``reasoning_text`` part and ``response.reasoning_text.delta`` /
  ``.done``; the done item carries ``encrypted_content`` when the request included it;
- a ``function_call``: ``response.function_call_arguments.delta``, ``.done`` with the arguments;
  a ``custom_tool_call`` (freeform tool): ``response.custom_tool_call_input.delta`` with the raw
  input, ``.done`` with it. A call released whole (``WholeCall``, the default) is its item added,
  one delta with all of it and its item done, at once; with ``--stream-arguments`` a delta per
  fragment as the model writes it.

A message or reasoning item ends when the next item begins; a call streamed as written ends when
the parser ends it (a native call: when the next item begins or the answer ends), or as
``incomplete`` when it was cut or broke after it began (its text follows as a message, as in the
whole answer; a call sent whole never is). Last comes ``response.completed``, or
``response.incomplete`` (``max_output_tokens``: the output was cut), with the whole response.
While nothing is written (a call held until it ends, an upstream reading a long prompt) an SSE
comment keeps the stream alive. A failure after the stream began is an ``error``
event and ``response.failed`` (``error_sse``). A stored response is registered in the store before
``response.created`` (``begin``) and stored before the last event goes (``keep``), unless it was
deleted meanwhile: both are awaited by the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ....events import ArgumentsDelta, CallAborted, Event, Reasoning, Text, ToolCallBegin, ToolCallEnd
from ....freeform import InputDeltas, raw_input
from ..ids import new_id
from ...plain import plain_content
from ...state import Record
from ...streaming import IDLE_SECONDS, AnswerStream, Field, Finish
from ...validation import WholeCall
from ....pieces import TextBuffer
from .items import (
    call_item,
    message_item,
    output_text,
    reasoning_item,
    response_object,
    status_of,
    usage_of,
)

_dumps = orjson.dumps
KEEPALIVE = b": keep-alive\n\n"  # an SSE comment: clients skip it
# The end of a delta event after its JSON's last field, its piece and number to fill in: SSE, and
# lines (``ResponsesStream``'s ``lines``).
_DELTA_END = {False: b'%b,"sequence_number":%d}\n\n', True: b'%b,"sequence_number":%d}\n'}


class _Item:
    """An output item being streamed."""

    __slots__ = ("index", "kind", "item", "pieces", "inputs", "name", "closed", "pre")

    def __init__(self, index: int, kind: str, item: dict[str, Any], name: str = "") -> None:
        self.index, self.kind, self.item, self.name = index, kind, item, name
        self.pieces = TextBuffer()  # the item's text or arguments so far
        self.inputs = InputDeltas() if kind == "custom_tool_call" else None
        self.closed = False
        self.pre = b""  # a function call's arguments delta event, up to the delta


class ResponsesStream:
    """Upstream chunks in, Responses SSE events out; see the module docstring. With ``lines``,
    each event is its JSON object alone and a newline (compact JSON holds none), for a transport
    that frames events itself (a WebSocket: ``socket.FrameResponse``)."""

    def __init__(self, answer: AnswerStream, front: Any, response_id: str, lines: bool = False) -> None:
        self._answer = answer
        self._lines = lines
        self._delta_end = _DELTA_END[lines]
        self.event_end = b"\n" if lines else b"\n\n"  # (the pipeline counts events by it)
        self._context = answer.plan.context
        self._front = front
        self._id = response_id
        self._created = self._context.created  # (one clock: completed_at is the gateway's too)
        self._seq = 0
        self._started = False
        self._items: list[_Item] = []
        self._open: _Item | None = None  # the open message or reasoning item
        self._calls: dict[int, _Item] = {}
        self._text_pre = b""  # the open message's delta event, up to the text
        self._finish: str | None = None
        self._model: str | None = None
        self._kept: Record | None = None  # the finished response, for ``keep``
        self.idle_seconds = IDLE_SECONDS

    @property
    def provenance(self) -> Any:
        return self._answer.provenance

    def feed_sse(self, chunk: dict[str, Any]) -> bytes:
        """The client events for one upstream chunk (possibly none)."""
        head = b"" if self._started else self._start(chunk.get("model"))
        text = plain_content(chunk) if self._answer.hot is not None else None
        if text is not None:  # the shape of nearly every chunk: a piece of content
            return head + self.content_sse(text)
        return head + self._events(self._answer.feed_first(chunk))

    @property
    def ready(self) -> bool:
        """Whether ``content_sse`` may be used (once the first chunk is out)."""
        return self._started and self._answer.hot is not None

    def plain_sse(self, text: str) -> bytes | None:
        """``content_sse(text)`` when the parser reads ``text`` as plain content in the open
        message: one event, or none while it is held; None otherwise, nothing read."""
        if self._open is None or self._open.kind != "message":
            return None
        sent = self._answer.hot.plain(text)  # type: ignore[union-attr]
        if sent is None:
            return None
        return self._text(sent) if sent else b""

    def content_sse(self, text: str) -> bytes:
        """``feed_sse`` of a chunk that is only a piece of content (``plain_content``), once
        ``ready``."""
        data = self.plain_sse(text)
        if data is not None:  # plain content, in the open message: no events made
            return data
        events = self._answer.hot.content(text)  # type: ignore[union-attr]
        if len(events) == 1:
            ev = events[0]
            if type(ev) is Text and self._open is not None and self._open.kind == "message" and ev.text:
                return self._text(ev.text)  # (the message is open: only its delta)
            if type(ev) is ArgumentsDelta:
                return self._arguments(ev)
        return self._events(events)

    def finish_sse(self) -> bytes:
        """What the parsers still held, every item's end, and the response's last event."""
        out = [b"" if self._started else self._start(None), self._events(self._answer.finish_first())]
        status, incomplete = status_of(self._finish)
        out.append(self._close_open("incomplete" if incomplete else "completed"))  # (the limit cut it)
        for item in self._items:
            if not item.closed:
                out.append(self._close_call(item, "incomplete" if incomplete else "completed"))
        output = [item.item for item in self._items]
        response = response_object(self._context, self._id, self._created, status, output,
                                   usage_of(self._answer.usage), incomplete, model=self._model)
        kind = "response.completed" if status == "completed" else "response.incomplete"
        last = self._event(kind, {"response": response})
        self._context.made = response
        if self._context.store:  # stored by ``keep`` (unless a DELETE came during the stream)
            front, context = self._front, self._context
            self._kept = Record(response, front.conversation(context, response), front.size(context, last),
                                context.inputs)
        out.append(last)
        return b"".join(out)

    async def begin(self) -> None:
        """Register the response in the store before the stream begins (``GET`` answers it
        ``in_progress``; a ``DELETE`` from now on wins); StoreUnavailable when it cannot."""
        if self._context.store:
            response = response_object(self._context, self._id, self._created, "in_progress", [])
            await self._front.store.begin(self._context.scope, Record(response, None, 0, self._context.inputs))

    async def keep(self) -> None:
        """Store the finished response (``finish_sse`` made it), if it is still registered: the
        pipeline awaits it before the last event goes, so a client that continues at once
        finds it; StoreUnavailable when the store cannot take it."""
        kept, self._kept = self._kept, None
        if kept is not None:
            await self._front.store.finish(self._context.scope, kept)

    def idle_sse(self) -> bytes:
        """What keeps the stream alive while nothing else is written (``pipeline.keepalive``)."""
        return KEEPALIVE

    def error_sse(self, message: str, type: str, code: str | None = None) -> bytes:
        """A failure after the stream began: an ``error`` event, then ``response.failed``."""
        head = b"" if self._started else self._start(None)
        error = self._event("error", {"code": code or type, "message": message, "param": None})
        output = [item.item for item in self._items]
        response = response_object(self._context, self._id, self._created, "failed", output,
                                   error={"code": code or type, "message": message}, model=self._model)
        self.disconnected()
        return head + error + self._event("response.failed", {"response": response})

    def disconnected(self) -> None:
        """The stream ends without its response (failed, or its client went away): its
        registration in the store goes."""
        if self._context.store:
            self._front.store.abandon(self._context.scope, self._id)

    # ---------------------------------------------------------------- events

    def _event(self, kind: str, data: dict[str, Any]) -> bytes:
        data = {"type": kind, **data, "sequence_number": self._seq}
        self._seq += 1
        if self._lines:
            return _dumps(data) + b"\n"
        return b"event: %b\ndata: %b\n\n" % (kind.encode(), _dumps(data))

    def _head(self, kind: bytes) -> bytes:
        """What an event's JSON follows: its ``event:`` line and ``data:`` (nothing with ``lines``)."""
        return b"" if self._lines else b"event: %b\ndata: " % kind

    def _start(self, model: Any) -> bytes:
        self._started = True
        self._model = model if isinstance(model, str) and model else None
        response = response_object(self._context, self._id, self._created, "in_progress", [], model=self._model)
        return (self._event("response.created", {"response": response})
                + self._event("response.in_progress", {"response": response}))

    def _events(self, events: Sequence[Event | Field | Finish]) -> bytes:
        out = []
        for ev in events:
            kind = type(ev)
            if kind is Text:
                if ev.text:  # type: ignore[union-attr]
                    out.append(self._text(ev.text))  # type: ignore[union-attr]
            elif kind is ArgumentsDelta:
                out.append(self._arguments(ev))  # type: ignore[arg-type]
            elif kind is Reasoning:
                if ev.text:  # type: ignore[union-attr]
                    out.append(self._reasoning(ev.text))  # type: ignore[union-attr]
            elif kind is WholeCall:
                out.append(self._whole_call(ev))  # type: ignore[arg-type]
            elif kind is ToolCallBegin:
                out.append(self._begin_call(ev))  # type: ignore[arg-type]
            elif kind is ToolCallEnd:
                item = self._calls.get(ev.index)  # type: ignore[union-attr]
                if item is not None and not item.closed:
                    out.append(self._close_call(item, "completed", ev.arguments))  # type: ignore[union-attr]
            elif kind is CallAborted:  # cut or broken after it began: it ends unfinished
                item = self._calls.get(ev.index)  # type: ignore[union-attr]
                if item is not None and not item.closed:
                    out.append(self._close_call(item, "incomplete"))
            elif kind is Finish:
                self._finish = ev.reason  # type: ignore[union-attr]
        return b"".join(out)

    def _text(self, text: str) -> bytes:
        head = b""
        if self._open is None or self._open.kind != "message":
            item = message_item("", new_id("msg_"), "in_progress")
            head = self._add(_Item(len(self._items), "message", item))
            head += self._event("response.content_part.added", {"item_id": item["id"], "output_index": self._open.index,  # type: ignore[union-attr]
                                                                 "content_index": 0, "part": output_text("")})
            self._text_pre = self._head(b"response.output_text.delta") + (
                b'{"type":"response.output_text.delta","item_id":%b,"output_index":%d,"content_index":0,'
                b'"logprobs":[],"delta":' % (_dumps(item["id"]), self._open.index))  # type: ignore[union-attr]
        self._open.pieces.append(text)  # type: ignore[union-attr]
        self._seq += 1
        return head + self._text_pre + self._delta_end % (_dumps(text), self._seq - 1)

    def _reasoning(self, text: str) -> bytes:
        head = b""
        summary = self._context.summary
        if self._open is None or self._open.kind != "reasoning":
            item = {"type": "reasoning", "id": new_id("rs_"), "summary": [], "status": "in_progress"}
            head = self._add(_Item(len(self._items), "reasoning", item))
            head += self._event(*_reasoning_part("added", summary, item["id"], self._open.index, ""))  # type: ignore[union-attr]
        item = self._open
        item.pieces.append(text)  # type: ignore[union-attr]
        ids = {"item_id": item.item["id"], "output_index": item.index}  # type: ignore[union-attr]
        if summary:
            return head + self._event("response.reasoning_summary_text.delta", {**ids, "summary_index": 0, "delta": text})
        return head + self._event("response.reasoning_text.delta", {**ids, "content_index": 0, "delta": text})

    def _add(self, item: _Item) -> bytes:
        """Open a message or reasoning item (the open one ends first)."""
        closing = self._close_open() + self._close_calls()
        self._items.append(item)
        self._open = item
        return closing + self._event("response.output_item.added", {"output_index": item.index, "item": item.item})

    def _close_open(self, status: str = "completed") -> bytes:
        item, self._open = self._open, None
        if item is None:
            return b""
        item.closed = True
        text = item.pieces.text()
        ids = {"item_id": item.item["id"], "output_index": item.index, "content_index": 0}
        if item.kind == "message":
            item.item = message_item(text, item.item["id"], status)
            out = (self._event("response.output_text.done", {**ids, "text": text, "logprobs": []})
                   + self._event("response.content_part.done", {**ids, "part": output_text(text)}))
        else:
            summary = self._context.summary
            item.item = reasoning_item(text, self._front.sealer, self._context, item.item["id"], status)
            if summary:
                done = {"item_id": item.item["id"], "output_index": item.index, "summary_index": 0, "text": text}
                out = self._event("response.reasoning_summary_text.done", done)
            else:
                out = self._event("response.reasoning_text.done", {**ids, "text": text})
            out += self._event(*_reasoning_part("done", summary, item.item["id"], item.index, text))
        return out + self._event("response.output_item.done", {"output_index": item.index, "item": item.item})

    def _close_calls(self) -> bytes:
        """End the calls still open (native calls: the next item shows they are complete)."""
        return b"".join(self._close_call(c, "completed") for c in self._calls.values() if not c.closed)

    def _begin_call(self, ev: ToolCallBegin) -> bytes:
        closing = self._close_open() + self._close_calls()
        item = call_item(self._context, ev.id, ev.name, "", "in_progress")
        call = _Item(len(self._items), item["type"], item, ev.name)
        call.pre = self._head(b"response.function_call_arguments.delta") + (
            b'{"type":"response.function_call_arguments.delta","item_id":%b,"output_index":%d,"delta":'
            % (_dumps(item["id"]), call.index))
        self._items.append(call)
        self._calls[ev.index] = call
        return closing + self._event("response.output_item.added", {"output_index": call.index, "item": item})

    def _whole_call(self, ev: WholeCall) -> bytes:
        """A call released whole: its item added, all of it in one delta, its item done."""
        out = self._begin_call(ToolCallBegin(ev.index, ev.id, ev.name))
        call = self._calls[ev.index]
        if call.inputs is None:
            out += self._arguments(ArgumentsDelta(ev.index, ev.arguments))
        else:
            out += self._input_delta(call, raw_input(ev.arguments))
        return out + self._close_call(call, "completed", ev.arguments, whole=True)

    def _arguments(self, ev: ArgumentsDelta) -> bytes:
        call = self._calls.get(ev.index)
        if call is None or call.closed or not ev.text:  # (a native call's late fragment: its item ended)
            return b""
        call.pieces.append(ev.text)
        if call.inputs is None:
            self._seq += 1
            return call.pre + self._delta_end % (_dumps(ev.text), self._seq - 1)
        piece = call.inputs.feed(ev.text)
        return self._input_delta(call, piece)

    def _input_delta(self, call: _Item, piece: str) -> bytes:
        if not piece:
            return b""
        return self._event("response.custom_tool_call_input.delta", {
            "item_id": call.item["id"], "output_index": call.index, "delta": piece})

    def _close_call(self, call: _Item, status: str, arguments: str | None = None, whole: bool = False) -> bytes:
        call.closed = True
        arguments = call.pieces.text() if arguments is None else arguments
        old = call.item
        item = call_item(self._context, "", call.name, arguments, status, call_id=old["call_id"])
        item["id"] = old["id"]
        call.item = item
        ids = {"item_id": item["id"], "output_index": call.index}
        if call.inputs is not None:
            out = b""
            if not whole:  # (a whole call's input is the item's, from its arguments, all given)
                out = self._input_delta(call, call.inputs.close())
                item["input"] = call.inputs.text
            out += self._event("response.custom_tool_call_input.done", {**ids, "input": item["input"]})
        else:
            out = self._event("response.function_call_arguments.done", {**ids, "name": item["name"],
                                                                          "arguments": arguments})
        return out + self._event("response.output_item.done", {"output_index": call.index, "item": item})


def _reasoning_part(when: str, summary: bool, item_id: str, index: int, text: str) -> tuple[str, dict[str, Any]]:
    """The event that opens (``added``) or closes (``done``) a reasoning item's one part: a
    summary part when the request asked for a summary, else a ``reasoning_text`` content part."""
    if summary:
        return (f"response.reasoning_summary_part.{when}", {"item_id": item_id, "output_index": index,
                "summary_index": 0, "part": {"type": "summary_text", "text": text}})
    return (f"response.content_part.{when}", {"item_id": item_id, "output_index": index, "content_index": 0,
            "part": {"type": "reasoning_text", "text": text}})
