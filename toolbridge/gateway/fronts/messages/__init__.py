"""The Anthropic Messages front: ``POST /v1/messages`` <-> the pipeline's turn and events.

In: ``request.messages_turn`` (the request, field by field, as a ``Turn``). Out: a whole answer
is one ``message`` object (``whole_message``), blocks in the order ``thinking``, ``text``,
``tool_use``; a stream is ``stream.MessagesStream``. Ids: ``ids``. Errors are ``{"type":
"error", "error": {"type", "message"}}``, the gateway's own error types named as this API names
them, with ``details: {"error_code"}`` for the thread codes and the request's ``request_id``
(``requestid``). ``POST /v1/messages/count_tokens``: ``tokens``. Message threads (``thread``):
``threads``, each threaded answer kept as it is made.

Thinking signatures cannot be real (they are Anthropic's proof over its own reasoning):
toolbridge signs every thinking block with ``SIGNATURE``, a fixed marker, and accepts any
signature back, sending the thinking text on to the upstream as reasoning.
"""

from __future__ import annotations

from collections.abc import Awaitable
from functools import cache
from typing import Any

import orjson

from ...repair import answer_reasoning, answer_text, first_choice
from ...requestid import CURRENT
from ...streaming import AnswerStream
from ...turn import Plan, Turn
from ..ids import ID, NONCE, draw
from .ids import message_id, tool_use_id
from .request import decode, messages_turn
from .stream import UNCOUNTED, Context, MessagesStream, stop_reason, usage_of
from .threads import CODES, DONE, Reply, Thread, Threads, assistant
from .tokens import TokenCounter

SIGNATURE = "dG9vbGJyaWRnZQ"  # base64url of "toolbridge": a marker, not a proof


def whole_message(answer: dict[str, Any], decoded: dict[str, tuple[str, Any]] | None = None) -> dict[str, Any]:
    """A repaired ``chat.completion`` object as a Messages ``message``: blocks in the order
    thinking, text, tool_use (one choice: the API has no others). ``decoded``: the calls'
    arguments as the answer's reading decoded them (``Plan.decoded``)."""
    choice, message = first_choice(answer)
    calls = message.get("tool_calls") or ()
    drawn = draw(ID + NONCE * len(calls))  # (every id's random characters at once: the message's, then the calls')
    blocks: list[dict[str, Any]] = []
    thinking = answer_reasoning(message)
    if thinking:
        blocks.append({"type": "thinking", "thinking": thinking, "signature": SIGNATURE})
    text = answer_text(message)
    if text:
        blocks.append({"type": "text", "text": text})
    at = ID
    for call in calls:
        function = call["function"]
        blocks.append({"type": "tool_use", "id": tool_use_id(call["id"], drawn[at:at + NONCE]),
                       "name": function["name"], "input": call_input(call["id"], function["arguments"], decoded)})
        at += NONCE
    reason, sequence = stop_reason(choice.get("finish_reason"), choice)
    return {"id": message_id(drawn[:ID]), "type": "message", "role": "assistant", "model": answer.get("model") or "",
            "content": blocks, "stop_reason": reason, "stop_sequence": sequence,
            "usage": usage_of(answer.get("usage"), None)}


def call_input(call_id: str, arguments: str, decoded: dict[str, tuple[str, Any]] | None) -> Any:
    """A call's ``input``: the value its reading decoded its arguments to, when they are still
    that text (nothing wrote them again since), else the arguments decoded."""
    read = decoded.get(call_id) if decoded else None
    return read[1] if read is not None and read[0] is arguments else orjson.loads(arguments)


def reply_of(answer: dict[str, Any]) -> dict[str, Any]:
    """A repaired answer as the chat assistant message a later turn of its thread shows the
    upstream (the calls' upstream ids, as the client's ``tool_use`` ids carry them)."""
    _, message = first_choice(answer)
    calls = [{"id": c["id"], "type": "function",
              "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}}
             for c in message.get("tool_calls") or ()]
    return assistant(answer_text(message), answer_reasoning(message), calls)


_KINDS = {k: k for k in ("invalid_request_error", "authentication_error", "permission_error",
                         "not_found_error", "request_too_large", "rate_limit_error", "overloaded_error")}
_BY_STATUS = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
              404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
              503: "overloaded_error", 529: "overloaded_error"}


def error_body(message: str, type: str = "invalid_request_error", param: str | None = None,
               code: str | None = None) -> bytes:
    """``{"type": "error", "error": {"type", "message"}}``; ``type`` may be the gateway's own
    (``upstream_error``, ``server_error``), which this API calls ``api_error``. A thread
    ``code`` goes in ``details.error_code``, where the SDK reads it."""
    if param and not message.startswith(param):
        message = f"{param}: {message}"
    error: dict[str, Any] = {"type": _KINDS.get(type, "api_error"), "message": message}
    if code in CODES:
        error["details"] = {"error_code": code}
    body: dict[str, Any] = {"type": "error", "error": error}
    request_id = CURRENT.get()
    if request_id is not None:  # (as the API's error bodies: the request-id header's value)
        body["request_id"] = request_id
    return orjson.dumps(body)


def upstream_error_body(raw: bytes) -> bytes:
    """An upstream's error body (OpenAI-shaped, vLLM's numeric ``code``, or already this API's)."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return error_body(raw[:2000].decode("utf-8", "replace"), "api_error")
    if isinstance(body, dict) and body.get("type") == "error":
        return raw
    error = body.get("error", body) if isinstance(body, dict) else body
    if not isinstance(error, dict):
        return error_body(str(error)[:2000], "api_error")
    code, kind = error.get("code"), str(error.get("type") or "")
    status = code if type(code) is int else None
    if kind not in _KINDS:
        kind = _BY_STATUS.get(status or 0) or ("rate_limit_error" if "rate" in kind.lower() else "api_error")
    return error_body(str(error.get("message") or error)[:4000], kind)


class MessagesFront:
    """What the pipeline asks of a front, for Anthropic Messages."""

    name = "messages"
    content_type = b"text/event-stream"
    paths = "dotted"  # messages.1.content.0.input
    rebuilds = True

    def __init__(self, count: bool = False, threads: Threads | None = None,
                 tokens: TokenCounter | None = None) -> None:
        self.count = count  # the front of count_tokens: its requests have no max_tokens or stream
        self.threads = threads  # None: a ``thread`` is answered thread_unsupported_request
        self.tokens = tokens  # counts a stream's input tokens for message_start (None: 0)

    def load(self, req: Any) -> Awaitable[Any]:
        """The kept turn a ``thread`` continue names (``Threads.load``: its awaitable itself, not
        a coroutine awaiting it), before the turn is built."""
        threads = self.threads
        if threads is not None and threads.enabled and not self.count:
            return threads.load(req)
        return DONE

    def turn(self, body: Any, req: Any = None, loaded: Any = None) -> Turn:
        """The request as a Turn, its context a ``stream.Context``: a stream's input tokens, and
        a ``thread`` (a continue is looked up in ``req``'s caller's scope, as ``load`` read it
        into ``loaded``, and the turn will be kept there). (``req`` is the pipeline's request,
        whose body ``body`` was decoded from: see ``messages_turn``.)"""
        threads = self.threads
        if isinstance(body, dict) and body.get("thread") is not None and threads is not None and threads.enabled:
            turn = self._threaded(threads, body, req, loaded)
            thread = turn.context if isinstance(turn.context, Thread) else None
        else:
            raw = None if req is None else req.body
            turn, thread = messages_turn(body, self.count, None, raw), None
        counted = self.tokens.count(turn)[0] if turn.stream and self.tokens is not None else 0
        turn.context = Context(counted, thread) if counted or thread is not None else UNCOUNTED
        return turn

    decode = staticmethod(decode)

    def _threaded(self, threads: Threads, body: dict[str, Any], req: Any, loaded: Any) -> Turn:
        """The turn of a request with a ``thread``, its context the ``Thread`` (with its scope,
        a keyed hash of the caller's credential, made once and only when needed)."""
        scope = cache(lambda: threads.scope(req))
        turn = messages_turn(body, self.count, lambda message_id: threads.prior(scope(), message_id, loaded))
        if isinstance(turn.context, Thread):
            turn.context.scope = scope()
            turn.context.size += len(req.body) if req is not None else 0
        return turn

    def error(self, message: str, type: str = "invalid_request_error", code: str | None = None,
              param: str | None = None) -> bytes:
        if type == "invalid_request_error" and code and code.isdigit():  # the gateway's 404, 405
            type = _BY_STATUS.get(int(code), type)
        return error_body(message, type, param, code)

    def upstream_error(self, raw: bytes) -> bytes:
        return upstream_error_body(raw)

    def whole(self, answer: dict[str, Any], plan: Plan | None = None) -> bytes:
        try:
            message = whole_message(answer, plan.decoded if plan is not None else None)
            body = orjson.dumps(message)
        except orjson.JSONEncodeError:  # a value orjson does not write (an integer past 64 bits): as decoded again
            message = whole_message(answer)
            body = orjson.dumps(message)
        thread = plan.context.thread if plan is not None and isinstance(plan.context, Context) else None
        if thread is not None and self.threads is not None:  # kept by ``keep``
            thread.kept = (message["id"], reply_of(answer), len(body))
        return body

    def keep(self, plan: Plan) -> Awaitable[None] | None:
        """The keeping of the threaded turn ``whole`` answered, for the pipeline to await before
        its answer is sent (None: the turn is not threaded)."""
        thread = plan.context.thread if isinstance(plan.context, Context) else None
        if thread is not None and thread.kept is not None and self.threads is not None:
            return self.threads.keep(thread, *thread.kept)
        return None

    def stream(self, answer: AnswerStream) -> MessagesStream:
        context, threads = answer.plan.context, self.threads
        thread = context.thread if isinstance(context, Context) else None
        keep = None
        if thread is not None and threads is not None:
            async def keep(message_id: str, reply: Reply, size: int) -> None:
                await threads.keep(thread, message_id, reply.message(), size)
        return MessagesStream(answer, message_id(), tool_use_id, SIGNATURE, keep)

    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes:
        return b"event: error\ndata: " + error_body(message, type) + b"\n\n"

    def stream_end(self) -> bytes:
        return b""
