"""The Chat Completions front: ``POST /v1/chat/completions`` <-> the pipeline's turn and events.

In: the request body is checked (messages, the deprecated ``functions``, ``stream``,
``stream_options``, ``stop``) and becomes a ``Turn``; every field the turn does not name is kept
in its ``options`` and reaches a chat upstream unchanged (``stream`` and ``stream_options`` given
as null count as left out, as the API takes them, and are not passed on). Out: a whole answer is the repaired
``chat.completion`` object as it is; a stream is the pipeline's events as
``chat.completion.chunk`` SSE events. The envelope every chunk repeats (id, created, model...) is
encoded once per stream, and the two events that make up nearly every chunk (a piece of content,
a fragment of a call's arguments) are spliced into it as bytes, without building the chunk's
dicts; every other event becomes a delta dict encoded by orjson into the same envelope. A call
released whole (``WholeCall``, the default) is one delta: index, id, type, name and its whole
arguments (a freeform call: its whole raw input). While nothing is written (a call held until
it ends, an upstream reading a long prompt) an SSE comment keeps the stream alive. Errors
are OpenAI-style ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

import orjson

from ...errors import ConfigError
from ...events import ArgumentsDelta, Event, Reasoning, Text, ToolCallBegin, ToolCallEnd
from ...freeform import Format, InputDeltas, arguments_of, declaration, raw_input

KEEPALIVE = b": keep-alive\n\n"  # an SSE comment: clients skip it
from ..plain import plain_content
from ..streaming import IDLE_SECONDS, AnswerStream, Field, Finish
from ..validation import WholeCall
from .known import KnownTools
from ...tools import SharedCache
from ..turn import Plan, RequestError, Settings, Turn, kept_head, plan_turn, tools_text, turn_of

Delta = dict[str, Any]
_dumps = orjson.dumps
_TURN_FIELDS = frozenset({"messages", "tools", "tool_choice", "parallel_tool_calls"})
_NULLABLE = ("stream", "stream_options")


def chat_turn(body: Any, raw: bytes | None = None) -> Turn:
    """A chat completions request as a Turn; raises RequestError (400) naming the bad field.
    ``raw``: the body's JSON text (equal JSON texts are then equal values), whose tools
    ``decode`` may then read without decoding: the fields besides the messages are then read
    once per distinct text of them and kept by it (``_HEADS``; agents send the same tools and
    settings with every request), and the turns of a kept head share it as their ``fields``.
    What is kept is not changed by its users; a head ``_head`` refuses is refused each time,
    after the messages are checked, as ever."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    messages = body.get("messages")
    ordered = _check_messages(messages)
    key = None if raw is None else _KNOWN.fields_key(body, _CONVERSATION)
    if key is None:
        turn = _head(body, raw)
        turn.messages = messages
    else:
        turn = turn_of(_HEADS.made(key, _kept_head, body, raw), messages)
    turn.ordered = ordered
    if turn.freeforms:
        _custom_history(messages)
    return turn


def _head(body: dict[str, Any], raw: bytes | None) -> Turn:
    """The turn of every field but the messages (None), checked and read."""
    if "functions" in body or "function_call" in body:
        raise RequestError("'functions' and 'function_call' are deprecated; send 'tools' and 'tool_choice'",
                           param="functions")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise RequestError("'stream' must be a boolean", param="stream")
    stream_options = body.get("stream_options") or {}
    if not isinstance(stream_options, dict):
        raise RequestError("'stream_options' must be an object", param="stream_options")
    _check_stop(body.get("stop"))
    model = body.get("model")
    tools, freeforms, text = _tools_of(body.get("tools"), raw)
    choice = body.get("tool_choice")
    if freeforms and isinstance(choice, dict) and choice.get("type") == "custom":
        custom = choice.get("custom")
        choice = {"type": "function", "function": {"name": custom.get("name") if isinstance(custom, dict) else None}}
    # A null field is the field left out (as the API takes it): not passed on.
    skip = _TURN_FIELDS
    if (stream is None and "stream" in body) or (
            "stream_options" in body and body["stream_options"] is None):
        skip = _TURN_FIELDS.union(k for k in _NULLABLE if body.get(k, 0) is None)
    options = dict(body)  # (copied whole and the skipped fields taken out: a comprehension costs more)
    for key in skip:
        options.pop(key, None)
    # (Its fields given in their order, not by keyword: see turn.plan_turn.)
    return Turn(None, tools, choice, body.get("parallel_tool_calls"), bool(stream),  # type: ignore[arg-type]
                bool(stream_options.get("include_usage")), model if isinstance(model, str) else None,
                options, freeforms, None, None, (tools, text))


def _kept_head(body: dict[str, Any], raw: bytes) -> dict[str, Any]:
    """``_head``'s turn as ``turn.kept_head`` keeps it."""
    return kept_head(_head(body, raw))


_HEADS = SharedCache(256)  # by the JSON text of a request's fields but its messages (``KnownTools.fields_key``)
_CONVERSATION = ("messages",)  # the fields not in a head


def _tools_of(tools: Any, raw: bytes | None = None) -> tuple[Any, dict[str, Format], bytes | None]:
    """``_custom_tools`` and the JSON text of the tools offered (``Turn.tools_json``), made once
    per distinct tools list and kept by its JSON text (agents send the same tools with every
    request; what is kept is not changed by its users); a list ``_custom_tools`` refuses is
    refused each time, and a list that is not JSON (from the Python API) is left to planning.
    Tools ``decode`` gave (the kept list itself) are not encoded again; a kept list made of this
    very request's tools is learnt for ``decode`` when its text is the ``raw`` body's own."""
    known = _KNOWN.kept(tools)
    if known is not None:
        return known[0]  # type: ignore[no-any-return]
    if not isinstance(tools, list) or not tools:
        return (*_custom_tools(tools), None)
    try:
        text = _dumps(tools)
    except orjson.JSONEncodeError:
        return (*_custom_tools(tools), None)
    kept = _OFFERED.made(text, _kept, tools, text)
    if raw is not None and kept[0] is tools:  # (a list of function tools alone, seen first now)
        _KNOWN.learn(raw, kept, kept[2])
    return kept  # type: ignore[no-any-return]


def _kept(tools: list[Any], text: bytes) -> tuple[Any, dict[str, Format], bytes | None]:
    offered, freeforms = _custom_tools(tools)
    return offered, freeforms, text if offered is tools else tools_text(offered)


_OFFERED = SharedCache(256)  # by the tools' JSON text

# Tools known by their JSON text as clients write it: ``decode`` reads such a text as the list
# kept for it (``known``), the kept tuples of ``_OFFERED``, never changed by their users.
_KNOWN = KnownTools()
decode = _KNOWN.decode


def _custom_tools(tools: Any) -> tuple[Any, dict[str, Format]]:
    """``tools`` with each ``custom`` tool (``{"type": "custom", "custom": {"name",
    "description", "format"}}``) offered as its function (``freeform.declaration``), and the
    freeform tools by name."""
    if not isinstance(tools, list) or not _any_custom(tools):
        return tools, {}
    out, freeforms = [], {}
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "custom":
            out.append(tool)
            continue
        custom = tool.get("custom")
        name = custom.get("name") if isinstance(custom, dict) else None
        if not isinstance(name, str) or not name:
            raise RequestError(f"tools[{i}].custom.name: a tool name is required", param=f"tools[{i}].custom.name")
        try:
            fmt = Format.of(custom.get("format"), f"tools[{i}].custom.format")  # type: ignore[union-attr]
        except ConfigError as exc:
            raise RequestError(str(exc), param=f"tools[{i}].custom.format") from exc
        description = custom.get("description")  # type: ignore[union-attr]
        out.append(declaration(name, description if isinstance(description, str) else None, fmt))
        freeforms[name] = fmt
    return out, freeforms


def _any_custom(tools: list[Any]) -> bool:
    for tool in tools:  # (a loop: a generator costs more than the look at a few tools)
        if isinstance(tool, dict) and tool.get("type") == "custom":
            return True
    return False


def _custom_history(messages: list[Any]) -> None:
    """Earlier ``custom`` calls of assistant messages as the function calls the model made."""
    for m, message in enumerate(messages):
        for c, call in enumerate(message.get("tool_calls") or () if isinstance(message, dict) else ()):
            if isinstance(call, dict) and call.get("type") == "custom":
                custom = call.get("custom")
                if not isinstance(custom, dict) or not isinstance(custom.get("input"), str):
                    where = f"messages[{m}].tool_calls[{c}].custom"
                    raise RequestError(f"{where}: 'name' and 'input' (a string) are required", param=where)
                call["type"] = "function"
                call["function"] = {"name": custom.get("name"), "arguments": arguments_of(custom["input"])}
                del call["custom"]


def plan_request(body: Any, settings: Settings) -> Plan:
    """Check a chat completions request and plan it (``chat_turn`` then ``plan_turn``)."""
    return plan_turn(chat_turn(body), settings)


def _check_stop(stop: Any) -> None:
    if stop is None or isinstance(stop, str):
        return
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise RequestError("'stop' must be a string or an array of strings", param="stop")


def _check_messages(messages: Any) -> bool:
    """Each message an object with a role; a ``tool`` message answers a call of the assistant
    message before it (only tool messages between them), as the API requires. Returns whether
    no two tool messages come in a row (``Turn.ordered``)."""
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty array", param="messages")
    calls: AbstractSet[Any] = _NO_CALLS  # the call ids the next tool message may answer
    ordered, after = True, False  # (after: the message before is a tool message)
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            _check_result(message.get("tool_call_id"), i, calls)
            ordered = ordered and not after
            after = True
            continue
        after = False
        if role == "assistant":
            calls = _call_ids(message.get("tool_calls"), i)
        elif isinstance(role, str):
            calls = _NO_CALLS
        else:
            raise RequestError(f"messages[{i}] must be an object with a 'role'", param=f"messages[{i}]")
    return ordered


_NO_CALLS: frozenset[Any] = frozenset()


def _check_result(call_id: Any, i: int, calls: AbstractSet[Any]) -> None:
    where = f"messages[{i}].tool_call_id"
    if not isinstance(call_id, str):
        raise RequestError(f"messages[{i}]: a tool message needs 'tool_call_id'", param=f"messages[{i}]")
    if call_id not in calls:
        raise RequestError(f"{where}: {call_id!r:.80} answers no call of the assistant message before it (a "
                           "tool message must answer one of its tool_calls)", param=where)


def _call_ids(calls: Any, i: int) -> AbstractSet[Any]:
    if calls is None:
        return _NO_CALLS
    if not isinstance(calls, list):
        raise RequestError(f"messages[{i}].tool_calls: must be an array", param=f"messages[{i}].tool_calls")
    return {call.get("id") for call in calls if isinstance(call, dict) and isinstance(call.get("id"), str)}


def custom_calls(answer: dict[str, Any], freeforms: dict[str, Any]) -> None:
    """A whole answer's calls of freeform tools as the Chat API gives them (in place):
    ``{"id", "type": "custom", "custom": {"name", "input"}}``."""
    for choice in answer.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        for i, call in enumerate(message.get("tool_calls") or () if isinstance(message, dict) else ()):
            function = call.get("function") or {}
            if function.get("name") in freeforms:
                message["tool_calls"][i] = {"id": call.get("id"), "type": "custom", "custom": {
                    "name": function["name"], "input": raw_input(function.get("arguments", ""))}}


def error_body(message: str, type: str = "invalid_request_error", code: str | None = None,
               param: str | None = None) -> bytes:
    return _dumps({"error": {"message": message, "type": type, "param": param, "code": code}})


class ChatFront:
    """What the pipeline asks of a front, for Chat Completions."""

    name = "chat"
    content_type = b"text/event-stream"
    paths = "indexed"  # messages[0].content
    rebuilds = False  # the turn holds the body's own values: its nesting is checked on the turn

    def turn(self, body: Any, req: Any = None) -> Turn:
        return chat_turn(body, None if req is None else req.body)

    decode = staticmethod(decode)

    def error(self, message: str, type: str = "invalid_request_error", code: str | None = None,
              param: str | None = None) -> bytes:
        return error_body(message, type, code, param)

    def upstream_error(self, raw: bytes) -> bytes:
        """An upstream's error body (already OpenAI-shaped) as this API's."""
        return raw

    def whole(self, answer: dict[str, Any], plan: Plan | None = None) -> bytes:
        if plan is not None and plan.freeforms:
            custom_calls(answer, plan.freeforms)
        return _dumps(answer)

    def stream(self, answer: AnswerStream) -> StreamTranslator:
        return StreamTranslator(answer.plan, answer)

    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes:
        return b"data: " + error_body(message, type, code) + b"\n\n"

    def stream_end(self) -> bytes:
        return b"data: [DONE]\n\n"


class StreamTranslator:
    """Upstream chunks in, client ``chat.completion.chunk`` SSE events out; see the module docstring."""

    def __init__(self, plan: Plan, answer: AnswerStream | None = None) -> None:
        self.plan = plan
        self._answer = answer if answer is not None else AnswerStream(plan)
        self._role_sent: set[int] = set()
        self._head = b""  # b'data: {"id":...,"choices":[{"index":', made once from the meta
        self._hot: Any = None  # choice 0 once its first chunk is out: the fast path
        self._pre = b""  # the head and b'0,"delta":'
        self._tail = b',"finish_reason":null}]' + (b',"usage":null' if plan.include_usage else b"") + b"}\n\n"
        self._text_pre = b""  # the head and b'0,"delta":{"content":'
        self._text_tail = b"}" + self._tail
        self._inputs: dict[int, InputDeltas] = {}  # freeform calls in progress, by call index
        self.idle_seconds = IDLE_SECONDS

    @property
    def provenance(self) -> Any:
        return self._answer.provenance

    def feed_sse(self, chunk: dict[str, Any]) -> bytes:
        """The client chunks for one upstream chunk, as SSE events (possibly none)."""
        if self._hot is not None:
            text = plain_content(chunk)
            if text is not None:  # the shape of nearly every chunk: one choice, a piece of content
                return self.content_sse(text)
        return self._feed(chunk)

    @property
    def ready(self) -> bool:
        """Whether ``content_sse`` may be used (once the first chunk is out)."""
        return self._hot is not None

    def plain_sse(self, text: str) -> bytes | None:
        """``content_sse(text)`` when the parser reads ``text`` as plain content (``_Choice.plain``):
        one event, or none while it is held; None otherwise, nothing read (then ``content_sse``)."""
        sent = self._hot.plain(text)
        if sent is None:
            return None
        return self._content_chunk(sent) if sent else b""

    def content_sse(self, text: str) -> bytes:
        """``feed_sse`` of a chunk that is only a piece of content (``plain_content``), once
        ``ready``."""
        data = self.plain_sse(text)
        if data is not None:  # plain content: no events made
            return data
        events = self._hot.content(text)
        if len(events) == 1:
            ev = events[0]
            if type(ev) is Text:
                return self._content_chunk(ev.text)
            if type(ev) is ArgumentsDelta and not self._inputs:
                return self._pre + _arguments(ev) + self._tail
        return self._frames(0, events)

    def _content_chunk(self, text: str) -> bytes:
        """The chunk of a piece of content on the fast path (the envelope made once)."""
        return self._text_pre + _dumps(text) + self._text_tail

    def idle_sse(self) -> bytes:
        """What keeps the stream alive while nothing else is written (``pipeline.keepalive``)."""
        return KEEPALIVE

    def finish_sse(self) -> bytes:
        """The closing chunks: what the parsers still held, each choice's finish, the usage."""
        out = []
        for index, events in self._answer.finish():
            out.append(self._frames(index, events))
        if self.plan.include_usage:
            out.append(b"data: " + _dumps({**self._envelope(), "choices": [], "usage": self._answer.usage})
                       + b"\n\n")
        return b"".join(out)

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """``feed_sse``, decoded: the client chunks as objects."""
        return _decode(self.feed_sse(chunk))

    def finish(self) -> list[dict[str, Any]]:
        """``finish_sse``, decoded."""
        return _decode(self.finish_sse())

    def _feed(self, chunk: dict[str, Any]) -> bytes:
        answer = self._answer
        pairs = answer.feed(chunk)
        if not self._head and answer.meta:
            self._head = b"data: " + _dumps(self._envelope())[:-1] + b',"choices":[{"index":'
        out = [self._frames(index, events) for index, events in pairs]
        if self._hot is None and 0 in self._role_sent:
            self._hot, self._pre = answer.hot, self._head + b'0,"delta":'
            self._text_pre = self._pre + b'{"content":'
        return b"".join(out)

    def _frames(self, index: int, events: list[Event]) -> bytes:
        out = []
        for ev in events:
            if type(ev) is Finish:
                for call in list(self._inputs) if index == 0 else ():  # native calls end here
                    rest = _custom_input(call, self._inputs.pop(call).close())
                    if rest is not None:
                        out.append(self._frame(index, rest))
                out.append(self._frame(index, {}, ev.reason))
                continue
            delta = self._delta(index, ev)
            if delta is not None:
                out.append(self._frame(index, delta))
        return b"".join(out)

    def _delta(self, index: int, ev: Event | Field) -> Delta | bytes | None:
        kind = type(ev)
        if kind is Text:
            return b'{"content":%b}' % _dumps(ev.text)  # type: ignore[union-attr]
        if kind is WholeCall:
            return _whole_call(ev, ev.name in self.plan.freeforms)  # type: ignore[arg-type,union-attr]
        if kind is ArgumentsDelta:
            inputs = self._inputs.get(ev.index) if self._inputs else None  # type: ignore[union-attr]
            if inputs is not None:
                return _custom_input(ev.index, inputs.feed(ev.text))  # type: ignore[union-attr]
            return _arguments(ev)  # type: ignore[arg-type]
        if kind is ToolCallBegin and ev.name in self.plan.freeforms:  # type: ignore[union-attr]
            self._inputs[ev.index] = InputDeltas()  # type: ignore[union-attr]
            return {"tool_calls": [{"index": ev.index, "id": ev.id, "type": "custom",  # type: ignore[union-attr]
                                    "custom": {"name": ev.name, "input": ""}}]}  # type: ignore[union-attr]
        if kind is ToolCallEnd and ev.index in self._inputs:  # type: ignore[union-attr]
            return _custom_input(ev.index, self._inputs.pop(ev.index).close())  # type: ignore[union-attr]
        if kind is ToolCallBegin:
            return {"tool_calls": [{"index": ev.index, "id": ev.id, "type": "function",  # type: ignore[union-attr]
                                    "function": {"name": ev.name, "arguments": ""}}]}  # type: ignore[union-attr]
        if kind is Reasoning:
            return {self._answer.reasoning_key(index): ev.text}  # type: ignore[union-attr]
        if kind is Field:
            return {ev.key: ev.value}  # type: ignore[union-attr]
        return None  # ToolCallEnd: the fragments already carried the arguments

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
        meta = {k: v for k, v in self._answer.meta.items() if v is not None}
        return {"id": meta.get("id", "chatcmpl-toolbridge"), "object": "chat.completion.chunk",
                "created": meta.get("created", 0), "model": meta.get("model", ""),
                **({"system_fingerprint": meta["system_fingerprint"]} if "system_fingerprint" in meta else {})}


def _whole_call(ev: WholeCall, freeform: bool) -> Delta:
    """A call released whole, as one delta."""
    if freeform:
        return {"tool_calls": [{"index": ev.index, "id": ev.id, "type": "custom",
                                "custom": {"name": ev.name, "input": raw_input(ev.arguments)}}]}
    return {"tool_calls": [{"index": ev.index, "id": ev.id, "type": "function",
                            "function": {"name": ev.name, "arguments": ev.arguments}}]}


def _arguments(ev: ArgumentsDelta) -> bytes:
    return b'{"tool_calls":[{"index":%d,"function":{"arguments":%b}}]}' % (ev.index, _dumps(ev.text))


def _custom_input(index: int, text: str) -> bytes | None:
    """A piece of a freeform call's raw input, as a chunk's delta (None: nothing new)."""
    if not text:
        return None
    return b'{"tool_calls":[{"index":%d,"custom":{"input":%b}}]}' % (index, _dumps(text))


def _decode(events: bytes) -> list[dict[str, Any]]:
    """The objects of SSE ``data:`` events made by ``_frame`` (compact JSON: no blank lines)."""
    return [orjson.loads(e[6:]) for e in events.split(b"\n\n") if e]
