"""The OpenAI Responses front: ``POST /v1/responses`` <-> the pipeline's turn and events, and the
stored responses (``GET`` / ``DELETE /v1/responses/{id}``, ``GET /v1/responses/{id}/input_items``).

In: ``request.responses_turn`` (the request, field by field, as a ``Turn`` whose ``context`` is
what the answer needs of it). Out: a whole answer is one ``response`` object (``whole``), output
items in the order reasoning, message, calls (``items``); a stream is ``stream.ResponsesStream``.
A response is kept (``store.ResponseStore``) unless the request said ``store: false``, in the
scope of the caller that made it (``scope.Scopes``): another caller's id is an unknown id. Its
input items are kept with it, with ids (``inputs``): a later ``item_reference`` may name them, or
its output items.
Reasoning is given back whole (``reasoning_text``) and, when the request includes
``reasoning.encrypted_content``, sealed for the next turn (``sealed``). A turn whose input ends
with a ``compaction_trigger`` (and ``POST /v1/responses/compact``) is answered with the
conversation's summary as one sealed ``compaction`` item (``compaction``, ``compacted``). Errors are the OpenAI
shape ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import orjson

from ...config import GatewayConfig
from ...metrics import Metrics
from ...http.server import Request
from ...repair import first_choice
from ...scope import Scopes
from ...streaming import AnswerStream
from ...turn import Plan, Turn
from ..chat import error_body
from . import compacted
from .compaction import summarising
from .inputs import page
from .items import (answer_items, assistant_message, cut_item, new_response_id, response_object, status_of,
                    usage_of)
from .request import Context, responses_turn
from .sealed import Sealer
from .store import Entry, ResponseStore
from .stream import ResponsesStream


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
        dropped = (lambda reason: metrics.inc("toolbridge_responses_dropped_total", reason=reason)) \
            if metrics is not None else None
        self.store = ResponseStore(config.responses_store, config.responses_ttl, config.responses_store_bytes,
                                   dropped)
        self.scopes = Scopes(secret, config.api_key)
        unsealed = (lambda: metrics.inc("toolbridge_reasoning_unsealed_total")) if metrics is not None else None
        self.sealer = Sealer(secret, unsealed)
        self.compact_max_tokens, self.compact_timeout = config.compact_max_tokens, config.compact_timeout
        self.compacted = (lambda form: metrics.inc("toolbridge_compactions_total", form=form)) \
            if metrics is not None else (lambda form: None)

    def turn(self, body: Any, req: Request | None = None,
             held: Callable[[str], Entry | None] | None = None) -> Turn:
        """The request as a Turn; ``req`` gives its caller's scope (``previous_response_id`` is
        looked up there, the response is stored there) and its size (what the stored
        conversation is accounted, with the previous one's). ``held``: a WebSocket's own
        responses (``socket``), looked up before the store."""
        scope = self.scopes.of(req)
        previous: list[int] = []

        def conversation(response_id: str) -> list[dict[str, Any]]:
            entry = (held and held(response_id)) or self.store.conversation(scope, response_id)
            previous.append(entry.size)
            return entry.conversation  # type: ignore[return-value]  # (conversation() checked it)

        turn = responses_turn(body, conversation, self.sealer, lambda item_id: self.store.item(scope, item_id))
        context: Context = turn.context
        context.scope = scope
        # The request's bytes twice: the conversation made of it, and its input items kept as given.
        context.size = 2 * (len(req.body) if req is not None else 0) + sum(previous)
        if context.compaction:  # the answer is the conversation's summary (``compaction``)
            context.time_limit = self.compact_timeout
            return summarising(turn, self.compact_max_tokens)
        return turn

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
        output = answer_items(context, message, self.sealer)
        status, incomplete = status_of(choice.get("finish_reason"))
        cut = cut_item(output) if incomplete else None
        if cut is not None:
            cut["status"] = "incomplete"
        model = answer.get("model")
        response = response_object(context, new_response_id(), context.created, status,
                                   output, usage_of(answer.get("usage")), incomplete,
                                   model=model if isinstance(model, str) and model else None)
        body = orjson.dumps(response)
        if context.store:
            self.store.put(context.scope, response, self.conversation(context, response),
                           self.size(context, body), context.inputs)
        return body

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

    def stream(self, answer: AnswerStream) -> ResponsesStream:
        if answer.plan.context.compaction:
            return compacted.CompactionStream(answer, self, new_response_id())
        return ResponsesStream(answer, self, new_response_id())

    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes:
        data = {"type": "error", "code": code or type, "message": message, "param": None, "sequence_number": 0}
        return b"event: error\ndata: " + orjson.dumps(data) + b"\n\n"

    def stream_end(self) -> bytes:
        return b""

    def stored(self, req: Request, response_id: str) -> dict[str, Any] | None:
        """The stored response ``response_id`` of ``req``'s caller (None: not stored in its scope)."""
        return self.store.response(self.scopes.of(req), response_id)

    def input_items(self, req: Request, response_id: str) -> dict[str, Any] | None:
        """A page of the input items of the stored response ``response_id`` of ``req``'s caller,
        as the query asks (None: not stored in its scope; RequestError: a wrong parameter)."""
        found = self.store.entry(self.scopes.of(req), response_id)
        return page(found.inputs, req.target.partition("?")[2]) if found is not None else None

    def delete(self, req: Request, response_id: str) -> bool:
        """Delete the response ``response_id`` of ``req``'s caller; False when there is none."""
        return self.store.delete(self.scopes.of(req), response_id)
