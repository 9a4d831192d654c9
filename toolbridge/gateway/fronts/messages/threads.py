"""Message threads: the ``thread`` field of a Messages request (``Threads``, ``Thread``, ``Reply``).

``{"type": "create"}`` asks the gateway to keep the conversation the request ends; ``{"type":
"continue", "previous_message_id": ID}`` continues the one the answer ``ID`` ended, and the
request then carries only the new messages, without ``system`` and ``tools`` (the thread's are
used; repeating them is a 400, as the API has it). The anthropic SDK's tool runner and thread
helper send both by default (beta ``message-threads-2026-08-12``; the header is not required).

A thread's turn is kept in the gateway's store (``state``, shared with the Responses front: the
same backend, bounds, ttl and per-credential scope), under the answer's ``msg_`` id in the caller's scope
with ``SCOPE_SUFFIX`` (so no ``/v1/responses/{id}`` lookup ever finds one): the conversation as
the upstream was sent it (the leading system message, the history with its tool calls'
upstream ids) and the answer, and the tools. Once a turn that continues ``ID`` is kept, ``ID``
goes: a response is continued once, and a thread holds one copy of its conversation.

The answers the SDK recovers from, as the API gives them (``error.details.error_code``):

- 404 ``thread_not_found``: ``ID`` is not kept for this caller (unknown, expired, evicted,
  already continued, another caller's); the SDK sends the whole
  conversation again with ``create``;
- 400 ``thread_unsupported_request``: the gateway keeps no threads (``--responses-store 0``);
  the tool runner then sends the whole conversation without ``thread``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...state import Record
from ...turn import RequestError
from .ids import tool_use_id

SCOPE_SUFFIX = "/thread"  # a caller's threads: a scope of their own, beside its responses
NOT_FOUND = "thread_not_found"
UNSUPPORTED = "thread_unsupported_request"
CODES = frozenset((NOT_FOUND, UNSUPPORTED))  # the codes this API puts in ``error.details``
_CREATE_ONLY = ("system", "tools")  # a thread keeps the ones it was created with


@dataclass(frozen=True, slots=True)
class Prior:
    """A kept turn: the conversation the next one continues, the thread's tools, its bytes."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    size: int


@dataclass(slots=True)
class Thread:
    """A threaded request, as its answer needs it (``Turn.context``): what to keep, and where."""

    previous: str | None  # the answer continued (None: a create)
    messages: list[dict[str, Any]]  # the conversation sent upstream
    tools: list[dict[str, Any]] | None
    size: int  # bytes accounted so far: the previous turn's (the request's are added by the front)
    scope: str = ""
    kept: tuple[str, dict[str, Any], int] | None = None  # a whole answer's (id, reply, bytes), for ``keep``


def thread_field(value: Any) -> str | None:
    """The ``thread`` field checked: None (no thread), ``""`` (create) or the id to continue."""
    if value is None:
        return None
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "create":
        return ""
    if kind != "continue":
        raise RequestError("thread.type: must be 'create' or 'continue'", param="thread.type")
    previous = value.get("previous_message_id")
    if not isinstance(previous, str) or not previous:
        raise RequestError("thread.previous_message_id: a message id is required with type 'continue'",
                           param="thread.previous_message_id")
    return previous


def unsupported() -> RequestError:
    return RequestError("thread: this gateway keeps no message threads (--responses-store 0); send the "
                        "whole conversation without thread", param="thread", code=UNSUPPORTED)


def kept_turn(body: dict[str, Any], thread: str | None, previous: Callable[[str], Prior] | None) -> Prior | None:
    """The kept turn a ``thread`` continue names (None for no thread or a create)."""
    if thread is None:
        return None
    if previous is None:
        raise unsupported()
    if not thread:
        return None
    for key in _CREATE_ONLY:
        if body.get(key) is not None:
            raise RequestError(f"{key}: leave it out of a thread continue request: the thread keeps the "
                               f"{key} it was created with (to change it, send the whole conversation "
                               "with thread type 'create')", param=key)
    return previous(thread)


def pending_calls(history: list[dict[str, Any]]) -> dict[str, str]:
    """The ``tool_use`` ids (upstream id -> the client's) of a kept answer's calls: the new
    messages' first ``tool_result`` blocks answer them."""
    last = history[-1] if history else {}
    calls = last.get("tool_calls") if last.get("role") == "assistant" else None
    return {call["id"]: tool_use_id(call["id"]) for call in calls or ()}


class _Done(tuple):  # type: ignore[type-arg]
    """An awaitable done at once, its value None: awaiting it runs no coroutine (its
    ``__await__`` is an empty tuple's iterator, at C speed)."""

    __slots__ = ()
    __await__ = tuple.__iter__


DONE: Awaitable[None] = _Done()  # (one for all: it holds nothing)


class Threads:
    """The kept turns, in the store the gateway shares with the Responses front. The turn a
    continue names is read before the request's turn is built (``load``), as the Responses
    front reads a previous response."""

    def __init__(self, store: Any, scopes: Any) -> None:
        self.store, self.scopes = store, scopes

    def load(self, req: Any) -> Awaitable[dict[str, Any] | None]:
        """The kept turn a ``thread`` continue names, read from the store (None: the request
        names none; ``DONE`` when its body has no such field: nearly every request, which then
        makes no coroutine); StoreUnavailable when the store does not answer."""
        body = req.body
        # (``find``, not ``in``: a bytes ``in`` tries the needle as an int first, an error raised
        # and cleared for every request)
        if body.find(b"previous_message_id") < 0:
            return DONE
        return self._read(req, body)

    async def _read(self, req: Any, body: bytes) -> dict[str, Any] | None:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            return None
        thread = value.get("thread") if isinstance(value, dict) else None
        previous = thread.get("previous_message_id") if isinstance(thread, dict) else None
        if not isinstance(previous, str) or not previous:
            return None
        return {previous: await self.store.get(self.scope(req), previous)}

    @property
    def enabled(self) -> bool:
        return self.store.size > 0

    def scope(self, req: Any) -> str:
        return self.scopes.of(req) + SCOPE_SUFFIX

    def prior(self, scope: str, message_id: str, loaded: dict[str, Any] | None = None) -> Prior:
        """The turn ``message_id`` ended, in ``scope`` (as ``load`` read it; without, only the
        memory store is read, at once); the 404 ``thread_not_found`` without one."""
        core = getattr(self.store, "core", None)
        if loaded is not None or core is None:
            entry = (loaded or {}).get(message_id)
        else:
            entry = core.entry(scope, message_id)
        if entry is None or entry.conversation is None:
            raise RequestError(f"thread.previous_message_id: no thread holds {message_id!r:.80} here (unknown, "
                               "expired or already continued); send the "
                               "whole conversation with thread type 'create'", status=404,
                               type="not_found_error", param="thread.previous_message_id", code=NOT_FOUND)
        return Prior(entry.conversation, entry.response.get("tools"), entry.size)

    async def keep(self, thread: Thread, message_id: str, reply: dict[str, Any], size: int) -> None:
        """Keep the turn that answered ``thread`` with ``reply`` (``size``: the answer's bytes),
        then forget the turn it continued; StoreUnavailable when the store cannot."""
        kept = {"id": message_id, "object": "message_thread", "tools": thread.tools}
        await self.store.put(thread.scope, Record(kept, [*thread.messages, reply], thread.size + size))
        if thread.previous:
            await self.store.delete(thread.scope, thread.previous)


@dataclass(slots=True)
class Reply:
    """A streamed answer gathered as the chat assistant message a later turn shows the upstream."""

    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    calls: dict[int, tuple[str, str, list[str]]] = field(default_factory=dict)  # index -> id, name, arguments

    def message(self) -> dict[str, Any]:
        calls = []
        for call_id, name, parts in self.calls.values():
            arguments = "".join(parts) or "{}"  # a call without arguments: the client read {}
            try:
                whole = isinstance(orjson.loads(arguments), dict)
            except orjson.JSONDecodeError:
                whole = False
            if whole:  # a call cut by the limit is left out: the client was told it was cut
                calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
        return assistant("".join(self.texts), "".join(self.thoughts), calls)


def assistant(text: str, reasoning: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """A chat assistant message, as ``request`` makes one of an assistant message's blocks."""
    message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        message["tool_calls"] = calls
    if reasoning:
        message["reasoning_content"] = reasoning
    return message
