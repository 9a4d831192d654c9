"""Compaction, the answer side: the upstream's summary as one ``compaction`` item.

``POST /v1/responses/compact`` (``CompactFront``; ``model`` is required there, as the API has
it) answers ``{"id", "object": "response.compaction", "created_at", "output", "usage"}``, the
output being the conversation's user messages, then the item, as the API has it.
A ``/v1/responses`` turn whose input ended with a ``compaction_trigger`` answers a ``response``
whose output is that one item; streamed (``CompactionStream``), ``response.created`` and
``response.in_progress`` come first, then, once the summary is whole, the item's
``response.output_item.added`` and ``.done`` and ``response.completed`` (SSE comments keep the
stream alive meanwhile). A summary the upstream leaves empty is a 502 (streamed: the ``error``
event and ``response.failed``), never an empty item: the client would replace its conversation
with nothing. A summary cut by the limit is kept (logged): what the prompt asks for first comes
first. The reasoning the model writes before it is not part of it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import orjson

from ....events import Event, Text
from ...repair import answer_text, first_choice
from ...state import Record
from ...streaming import AnswerStream, Field, Finish
from ...turn import Plan, RequestError, Turn
from ..dropped import Dropped
from ..ids import new_id
from .compaction import LEAD, TRIGGER, compacted_history
from .items import new_response_id, response_object, usage_of
from .stream import ResponsesStream

log = logging.getLogger("toolbridge.gateway")

_FIELDS = ("model", "input", "instructions", "previous_response_id", "prompt_cache_key", "reasoning")
_drop = Dropped("responses/compact")


def summary_of(text: str, finish: str | None) -> str:
    """The summary the upstream wrote; raises RequestError (502) when there is none."""
    if not text.strip():
        raise RequestError("the upstream wrote no summary of the conversation (compaction failed; the "
                           "conversation is unchanged)", status=502, type="upstream_error", code="empty_summary")
    if finish == "length":
        log.warning("responses: the compaction summary was cut at --compact-max-tokens (kept as cut)")
    return text.strip()


def compaction_item(front: Any, context: Any, summary: str) -> dict[str, Any]:
    """The summary as a ``compaction`` item (sealed); the context's conversation becomes the
    compacted one (what a stored response continues from)."""
    context.history = compacted_history(context.history, summary)
    front.compacted("endpoint" if context.compaction == "v1" else "trigger")
    return {"type": "compaction", "id": new_id("cmp_"), "encrypted_content": front.sealer.seal(summary)}


def whole(front: Any, answer: dict[str, Any], plan: Plan) -> bytes:
    """A whole summary answer as the ``response`` (v2) or ``response.compaction`` (v1) body."""
    context = plan.context
    choice, message = first_choice(answer)
    users = user_items(context.history) if context.compaction == "v1" else []
    item = compaction_item(front, context, summary_of(answer_text(message), choice.get("finish_reason")))
    usage = usage_of(answer.get("usage"))
    if context.compaction == "v1":  # (its usage is required: zeros where the upstream gave none)
        return orjson.dumps({"id": new_response_id(), "object": "response.compaction",
                             "created_at": int(context.created), "output": [*users, item],
                             "usage": usage or usage_of({})})
    model = answer.get("model")
    response = response_object(context, new_response_id(), context.created, "completed", [item], usage,
                               model=model if isinstance(model, str) and model else None)
    body = orjson.dumps(response)
    if context.store:  # kept by the front's ``keep``, once the answer is made
        context.kept = Record(response, front.conversation(context, response), front.size(context, body),
                              context.inputs)
    return body


def user_items(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user messages of the conversation compacted, as ``/v1/responses/compact`` lists them
    before its item (the API's "all user messages, followed by a single compaction item"); the
    summary an earlier compaction item stood for is not one of them (the new summary holds it)."""
    out = []
    for message in history:
        content = message.get("content")
        if message.get("role") != "user" or (isinstance(content, str) and content.startswith(LEAD)):
            continue
        parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else [
            {"type": "input_text", "text": p["text"]} if p["type"] == "text"
            else {"type": "input_image", "image_url": p["image_url"]["url"],
                  "detail": p["image_url"].get("detail", "auto")} for p in content]
        out.append({"type": "message", "id": new_id("msg_"), "role": "user", "status": "completed",
                    "content": parts})
    return out


class CompactionStream(ResponsesStream):
    """A streamed summary: its text is gathered, not sent, and given as the one item at the end."""

    def __init__(self, answer: AnswerStream, front: Any, response_id: str, lines: bool = False) -> None:
        super().__init__(answer, front, response_id, lines)
        self._summary: list[str] = []

    def plain_sse(self, text: str) -> bytes | None:
        return None  # nothing is sent of the text: content_sse gathers every piece

    def content_sse(self, text: str) -> bytes:
        return self._events(self._answer.hot.content(text))  # type: ignore[union-attr]

    def _events(self, events: Sequence[Event | Field | Finish]) -> bytes:
        for ev in events:
            if type(ev) is Text:
                self._summary.append(ev.text)  # type: ignore[union-attr]
            elif type(ev) is Finish:
                self._finish = ev.reason  # type: ignore[union-attr]
        return b""

    def finish_sse(self) -> bytes:
        head = (b"" if self._started else self._start(None)) + self._events(self._answer.finish_first())
        item = compaction_item(self._front, self._context, summary_of("".join(self._summary), self._finish))
        response = response_object(self._context, self._id, self._created, "completed", [item],
                                   usage_of(self._answer.usage), model=self._model)
        events = (self._event("response.output_item.added", {"output_index": 0, "item": item})
                  + self._event("response.output_item.done", {"output_index": 0, "item": item}))
        last = self._event("response.completed", {"response": response})
        if self._context.store:  # stored by ``keep``, as any stream's response
            front, context = self._front, self._context
            self._kept = Record(response, front.conversation(context, response), front.size(context, last),
                                context.inputs)
        return head + events + last


class CompactFront:
    """``POST /v1/responses/compact``: the Responses front's turn, with the compaction trigger
    after its input; answered whole, never stored."""

    name = "responses"
    content_type = b"application/json"
    paths = "indexed"
    rebuilds = True

    def __init__(self, responses: Any) -> None:
        self.responses = responses

    async def load(self, req: Any) -> Any:
        """What the store holds for the request (its ``previous_response_id``), as the front reads it."""
        return await self.responses.load(req)

    def turn(self, body: Any, req: Any = None, loaded: Any = None) -> Turn:
        if not isinstance(body, dict):
            raise RequestError("the request body must be a JSON object")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise RequestError("model: is required (a model name)", param="model")
        for key in body.keys() - set(_FIELDS):
            _drop(key, "the summary is asked for without tools, output format or sampling settings")
        given = body.get("input")
        if given is None:
            given = []
        elif isinstance(given, str):
            given = [{"type": "message", "role": "user", "content": given}]
        elif not isinstance(given, list):
            raise RequestError("input: must be a string or an array of items", param="input")
        asked = {k: body[k] for k in _FIELDS if k in body}
        turn = self.responses.turn({**asked, "input": [*given, {"type": TRIGGER}], "store": False,
                                    "stream": False}, req, loaded)
        turn.context.compaction = "v1"
        return turn  # type: ignore[no-any-return]

    def error(self, message: str, type: str = "invalid_request_error", code: str | None = None,
              param: str | None = None) -> bytes:
        return self.responses.error(message, type, code, param)  # type: ignore[no-any-return]

    def upstream_error(self, raw: bytes) -> bytes:
        return self.responses.upstream_error(raw)  # type: ignore[no-any-return]

    def whole(self, answer: dict[str, Any], plan: Plan) -> bytes:
        return whole(self.responses, answer, plan)

    def stream(self, answer: AnswerStream) -> Any:  # (never: the turn is not streamed)
        return self.responses.stream(answer)

    def stream_error(self, message: str, type: str, code: str | None = None) -> bytes:
        return self.responses.stream_error(message, type, code)  # type: ignore[no-any-return]

    def stream_end(self) -> bytes:
        return b""
