"""The OpenAI Responses front: ``POST /v1/responses`` <-> the pipeline's turn and events, and the
stored responses (``GET`` / ``DELETE /v1/responses/{id}``).

In: ``request.responses_turn`` (the request, field by field, as a ``Turn`` whose ``context`` is
what the answer needs of it). Out: a whole answer is one ``response`` object (``whole``), output
items in the order reasoning, message, calls (``items``); a stream is ``stream.ResponsesStream``.
A response is kept (``store.ResponseStore``) unless the request said ``store: false``.
Reasoning is given back whole (``reasoning_text``) and, when the request includes
``reasoning.encrypted_content``, sealed for the next turn (``sealed``). Errors are the OpenAI
shape ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from ...config import GatewayConfig
from ...metrics import Metrics
from ...repair import first_choice
from ...streaming import AnswerStream
from ...turn import Plan, Turn
from ..chat import error_body
from .items import answer_items, assistant_message, new_response_id, response_object, status_of, usage_of
from .request import Context, responses_turn
from .sealed import Sealer
from .store import ResponseStore
from .stream import ResponsesStream


class ResponsesFront:
    """What the pipeline asks of a front, for the Responses API; one per gateway process (it
    holds the store and the sealing key)."""

    name = "responses"
    content_type = b"text/event-stream"
    paths = "indexed"  # input[2].content[0]
    rebuilds = True

    def __init__(self, config: GatewayConfig | None = None, metrics: Metrics | None = None) -> None:
        size = config.responses_store if config is not None else 256
        ttl = config.responses_ttl if config is not None else 3600.0
        secret = config.responses_secret if config is not None else None
        self.store = ResponseStore(size, ttl)
        unsealed = (lambda: metrics.inc("toolbridge_reasoning_unsealed_total")) if metrics is not None else None
        self.sealer = Sealer(secret.encode() if secret else None, unsealed)

    def turn(self, body: Any) -> Turn:
        return responses_turn(body, self.store.conversation, self.sealer)

    def error(self, message: str, type: str = "invalid_request_error", code: str | None = None,
              param: str | None = None) -> bytes:
        return error_body(message, type, code, param)

    def upstream_error(self, raw: bytes) -> bytes:
        return raw

    def whole(self, answer: dict[str, Any], plan: Plan) -> bytes:
        context: Context = plan.context
        choice, message = first_choice(answer)
        output = answer_items(context, message, self.sealer)
        status, incomplete = status_of(choice.get("finish_reason"))
        model = answer.get("model")
        response = response_object(context, new_response_id(), answer.get("created") or time.time(), status,
                                   output, usage_of(answer.get("usage")), incomplete,
                                   model=model if isinstance(model, str) and model else None)
        self.keep(context, response)
        return orjson.dumps(response)

    def keep(self, context: Context, response: dict[str, Any]) -> None:
        """Store a finished response (unless the request said ``store: false``)."""
        if context.store:
            self.store.put(response, [*context.history, assistant_message(context, response["output"])])

    def stream(self, answer: AnswerStream) -> ResponsesStream:
        return ResponsesStream(answer, self, new_response_id())

    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes:
        data = {"type": "error", "code": code or type, "message": message, "param": None, "sequence_number": 0}
        return b"event: error\ndata: " + orjson.dumps(data) + b"\n\n"

    def stream_end(self) -> bytes:
        return b""

    def stored(self, response_id: str) -> dict[str, Any] | None:
        return self.store.response(response_id)
