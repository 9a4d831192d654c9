"""The OpenAI Responses front: ``POST /v1/responses`` <-> the pipeline's turn and events, and the
stored responses (``GET`` / ``DELETE /v1/responses/{id}``, ``GET /v1/responses/{id}/input_items``).

In: ``request.responses_turn`` (the request, field by field, as a ``Turn`` whose ``context`` is
what the answer needs of it). Out: a whole answer is one ``response`` object (``whole``), output
items in the order reasoning, message, calls (``items``); a stream is ``stream.ResponsesStream``.
A response is kept (in the gateway's store, ``state``) unless the request said ``store: false``,
in the scope of the caller that made it (``scope.Scopes``): another caller's id is an unknown id.
Its input items are kept with it, with ids (``inputs``): a later ``item_reference`` may name them,
or its output items. The store is asked before the turn is built (``load``: only for a request
that names a stored response or item) and told after the answer is made (``keep``; a stream's
encoder does both for its response), so the turn's own work never waits for it.
Reasoning is given back whole (``reasoning_text``) and, when the request includes
``reasoning.encrypted_content``, sealed for the next turn (``sealed``). A turn whose input ends
with a ``compaction_trigger`` (and ``POST /v1/responses/compact``) is answered with the
conversation's summary as one sealed ``compaction`` item (``compaction``, ``compacted``). Errors are the OpenAI
shape ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ...config import GatewayConfig
from ...metrics import Metrics
from ...http.server import Request
from ...repair import first_choice
from ...scope import Scopes
from ...state import Record, Store, open_store
from ...state.memory import MemoryStore
from ...streaming import AnswerStream
from ...turn import Plan, RequestError, Turn
from ..chat import error_body
from . import compacted
from .compaction import summarising
from .inputs import page
from .items import (answer_items, assistant_message, cut_item, new_response_id, response_object, status_of,
                    usage_of)
from .request import Context, decode, responses_turn
from .sealed import Sealer
from .stream import ResponsesStream


@dataclass(slots=True)
class Loaded:
    """What the store holds of the records and items a request names, read before its turn."""

    previous: dict[str, Record | None] = field(default_factory=dict)
    items: dict[str, dict[str, Any] | None] = field(default_factory=dict)


def previous_conversation(found: Record | None, response_id: str) -> Record:
    """The record a ``previous_response_id`` names, with its conversation; RequestError (400)
    naming it when there is none in the caller's scope."""
    if found is None or found.conversation is None:
        why = ("is still in progress" if found is not None else
               "is not stored here (unknown, expired, deleted, or stored with store: false)")
        raise RequestError(f"previous_response_id: the response {response_id!r:.80} {why}",
                           param="previous_response_id", code="previous_response_not_found")
    return found


def referenced_ids(value: Any) -> tuple[str | None, list[str]]:
    """The ``previous_response_id`` and the ``item_reference`` ids a request body names."""
    if not isinstance(value, dict):
        return None, []
    previous = value.get("previous_response_id")
    items = value.get("input")
    ids = [item["id"] for item in items if isinstance(item, dict) and item.get("type") == "item_reference"
           and isinstance(item.get("id"), str)] if isinstance(items, list) else []
    return (previous if isinstance(previous, str) and previous else None), ids


_LONG_BODY = 4096  # bytes from which a body is joined from a view of it (a view costs more than a short copy)


class ResponsesFront:
    """What the pipeline asks of a front, for the Responses API; one per gateway process (it
    holds the store and the sealing key)."""

    name = "responses"
    content_type = b"text/event-stream"
    paths = "indexed"  # input[2].content[0]
    rebuilds = True

    def __init__(self, config: GatewayConfig | None = None, metrics: Metrics | None = None) -> None:
        config = config or GatewayConfig()
        secret = config.responses_secret.encode() or os.urandom(32)
        dropped = (lambda event: store_event(metrics, event)) if metrics is not None else None
        self.store: Store = open_store(config.state_url(), config.responses_store, config.responses_ttl,
                                       config.responses_store_bytes, dropped)
        self.scopes = Scopes(secret, config.api_key)
        unsealed = (lambda: metrics.inc("toolbridge_reasoning_unsealed_total")) if metrics is not None else None
        self.sealer = Sealer(secret, unsealed)
        self.compact_max_tokens, self.compact_timeout = config.compact_max_tokens, config.compact_timeout
        self.compacted = (lambda form: metrics.inc("toolbridge_compactions_total", form=form)) \
            if metrics is not None else (lambda form: None)

    async def load(self, req: Request, held: Callable[[str], Record | None] | None = None) -> Loaded | None:
        """What the store holds of the response and items ``req`` names (None: it names none;
        a body that is not JSON is left to the turn to refuse); StoreUnavailable when the store
        does not answer. ``held``: a WebSocket's own responses (``socket``), looked up before
        the store (a response held there is not asked of the store)."""
        body = req.body
        if body.find(b"previous_response_id") < 0 and body.find(b"item_reference") < 0:
            return None  # (nearly every request: a scan of the bytes, no decoding)
        try:
            previous, items = referenced_ids(req.parsed if req.parsed is not None else orjson.loads(body))
        except orjson.JSONDecodeError:
            return None
        scope, loaded = self.scopes.of(req), Loaded()
        if previous is not None:
            found = held(previous) if held is not None else None
            loaded.previous[previous] = found if found is not None else await self.store.get(scope, previous)
        for item_id in items:
            if item_id not in loaded.items:
                loaded.items[item_id] = await self.store.item(scope, item_id)
        return loaded

    def turn(self, body: Any, req: Request | None = None, loaded: Loaded | None = None) -> Turn:
        """The request as a Turn; ``req`` gives its caller's scope (``previous_response_id`` is
        looked up there, the response is stored there), its size (what the stored
        conversation is accounted, with the previous one's) and its JSON text (the tools are
        learnt from it: ``known``); ``loaded``: what ``load`` read of
        the store for it (without it, only the memory store is read, at once). The scope (a keyed
        hash of the caller's credential) is made only for a response that is stored or a request
        that names stored records."""
        reads = _Reads(self, req, loaded)
        raw = None if req is None else req.body
        turn = responses_turn(body, reads.conversation, self.sealer, reads.item, raw)
        context: Context = turn.context
        if context.store:
            context.scope = reads.scope()
        # The request's bytes twice: the conversation made of it, and its input items kept as given.
        context.size = 2 * (len(req.body) if req is not None else 0) + reads.previous
        if context.compaction:  # the answer is the conversation's summary (``compaction``)
            context.time_limit = self.compact_timeout
            return summarising(turn, self.compact_max_tokens)
        return turn

    decode = staticmethod(decode)

    def error(self, message: str, type: str = "invalid_request_error", code: str | None = None,
              param: str | None = None) -> bytes:
        return error_body(message, type, code, param)

    def upstream_error(self, raw: bytes) -> bytes:
        return raw

    def whole(self, answer: dict[str, Any], plan: Plan) -> bytes:
        context: Context = plan.context
        if context.compaction:
            return compacted.whole(self, answer, plan)
        choice, message = first_choice(answer)
        response_id, output = answer_items(context, message, self.sealer)
        status, incomplete = status_of(choice.get("finish_reason"))
        cut = cut_item(output) if incomplete else None
        if cut is not None:
            cut["status"] = "incomplete"
        model = answer.get("model")
        response = response_object(context, response_id, context.created, status,
                                   output, usage_of(answer.get("usage")), incomplete,
                                   model=model if isinstance(model, str) and model else None, echoed=context.store)
        if not context.store:  # no object is kept: the request's fields (never none) written after it, not merged
            body = orjson.dumps(response)
            if len(body) < _LONG_BODY:
                return body[:-1] + context.echo_tail()
            return b"".join((memoryview(body)[:-1], context.echo_tail()))  # (copied once, not twice)
        body = orjson.dumps(response)
        context.kept = Record(response, self.conversation(context, response), self.size(context, body),
                              context.inputs)  # (stored by ``keep``)
        return body

    def keep(self, plan: Plan) -> Awaitable[Any] | None:
        """The storing of the response ``whole`` made, for the pipeline to await before the
        answer is sent (None: its request said ``store: false``); StoreUnavailable when the
        store cannot take it (the answer is then not sent: the client would continue from a
        response that is not there)."""
        context: Context = plan.context
        return self.store.put(context.scope, context.kept) if context.kept is not None else None

    def conversation(self, context: Context, response: dict[str, Any]) -> list[dict[str, Any]]:
        """What a later ``previous_response_id`` naming ``response`` continues from (after a
        compaction, the conversation its request made: ``compacted``)."""
        if context.compaction:
            return list(context.history)
        return [*context.history, assistant_message(context, response["output"])]

    @staticmethod
    def size(context: Context, response: bytes) -> int:
        """The bytes a stored response is accounted: its JSON, and its conversation's and input
        items' (the request's bytes twice, the previous conversation's, and the output again)."""
        return context.size + 2 * len(response)

    def stream(self, answer: AnswerStream, lines: bool = False) -> ResponsesStream:
        """The answer's events as SSE, or as lines of JSON (``ResponsesStream``)."""
        kind = compacted.CompactionStream if answer.plan.context.compaction else ResponsesStream
        return kind(answer, self, new_response_id(), lines)

    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes:
        data = {"type": "error", "code": code or type, "message": message, "param": None, "sequence_number": 0}
        return b"event: error\ndata: " + orjson.dumps(data) + b"\n\n"

    def stream_end(self) -> bytes:
        return b""

    async def stored(self, req: Request, response_id: str) -> dict[str, Any] | None:
        """The stored response ``response_id`` of ``req``'s caller (None: not stored in its scope)."""
        found = await self.store.get(self.scopes.of(req), response_id)
        return found.response if found is not None else None

    async def input_items(self, req: Request, response_id: str) -> dict[str, Any] | None:
        """A page of the input items of the stored response ``response_id`` of ``req``'s caller,
        as the query asks (None: not stored in its scope; RequestError: a wrong parameter)."""
        found = await self.store.get(self.scopes.of(req), response_id)
        return page(found.inputs, req.target.partition("?")[2]) if found is not None else None

    async def delete(self, req: Request, response_id: str) -> bool:
        """Delete the response ``response_id`` of ``req``'s caller; False when there is none."""
        return await self.store.delete(self.scopes.of(req), response_id)


class _Reads:
    """What one turn reads of the store, in its caller's scope: the response a
    ``previous_response_id`` names and the items of ``item_reference`` items (from what the
    front's ``load`` read; without it, only the memory store is read, at once). The scope is made
    when first asked (most requests name nothing stored)."""

    __slots__ = ("_front", "_req", "_loaded", "_scope", "previous")

    def __init__(self, front: ResponsesFront, req: Request | None, loaded: Loaded | None) -> None:
        self._front, self._req, self._loaded = front, req, loaded
        self._scope: str | None = None
        self.previous = 0  # the bytes the previous response's conversation is accounted

    def scope(self) -> str:
        if self._scope is None:
            self._scope = self._front.scopes.of(self._req)
        return self._scope

    def conversation(self, response_id: str) -> list[dict[str, Any]]:
        """The conversation of the stored response ``response_id`` (RequestError: none)."""
        found = previous_conversation(self._record(response_id), response_id)
        self.previous += found.size
        return found.conversation  # type: ignore[return-value]  # (checked above)

    def _record(self, response_id: str) -> Record | None:
        core = self._core()
        if core is not None:
            found = core.entry(self.scope(), response_id)
            return None if found is None else Record(found.response, found.conversation, found.size)
        return self._loaded.previous.get(response_id) if self._loaded is not None else None

    def item(self, item_id: str) -> dict[str, Any] | None:
        """The stored item ``item_id`` (None: none)."""
        core = self._core()
        if core is not None:
            return core.item(self.scope(), item_id)  # type: ignore[no-any-return]
        return self._loaded.items.get(item_id) if self._loaded is not None else None

    def _core(self) -> Any:
        """The memory store's core, read at once when ``load`` read nothing (in-process callers:
        bench, tests); None otherwise."""
        store = self._front.store
        return store.core if self._loaded is None and isinstance(store, MemoryStore) else None


def store_event(metrics: Metrics, event: str) -> None:
    """Count what the store tells (``state.OnEvent``)."""
    if event == "stored":
        metrics.inc("toolbridge_store_stored_total")
    elif event == "miss":
        metrics.inc("toolbridge_store_misses_total")
    else:
        metrics.inc("toolbridge_responses_dropped_total", reason=event)
