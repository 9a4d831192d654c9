"""The Responses API's objects: output items, the response, its usage and status.

Ids: ``resp_`` responses, ``rs_`` reasoning, ``msg_`` messages, ``fc_`` function calls and
``ctc_`` custom tool calls (the item's own id), distinct from the ``call_id`` a tool's output
answers (``call_`` carrying the upstream's call id: ``fronts.ids``). Calls of namespaced
functions carry their ``namespace``; calls of freeform tools are ``custom_tool_call`` items
with the raw ``input``.
"""

from __future__ import annotations

import time
from typing import Any

from ....freeform import arguments_of, raw_input
from ...repair import answer_reasoning, answer_text
from ..ids import ID, NONCE, client_call_id, draw, new_id, upstream_call_id
from .request import CALL_PREFIX, Context

_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def status_of(finish: str | None) -> tuple[str, dict[str, str] | None]:
    """The response's ``status`` and ``incomplete_details`` for a chat ``finish_reason``."""
    reason = _INCOMPLETE.get(finish or "")
    return ("incomplete", {"reason": reason}) if reason else ("completed", None)


def usage_of(usage: Any) -> dict[str, Any] | None:
    """This API's usage from a chat ``usage`` (None without one)."""
    if not isinstance(usage, dict):
        return None
    get = usage.get
    prompt, completion = _int(get("prompt_tokens")), _int(get("completion_tokens"))
    # (The details, when given: most upstreams leave them out.)
    details, thoughts = get("prompt_tokens_details"), get("completion_tokens_details")
    cached = _int(details.get("cached_tokens")) if details else 0
    reasoning = _int(thoughts.get("reasoning_tokens")) if thoughts else 0
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": reasoning},
            "total_tokens": _int(get("total_tokens")) or prompt + completion}


def _int(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0


def response_object(context: Context, response_id: str, created: float, status: str,
                    output: list[dict[str, Any]], usage: Any = None,
                    incomplete: dict[str, str] | None = None, error: dict[str, Any] | None = None,
                    model: str | None = None, echoed: bool = True) -> dict[str, Any]:
    """A ``response`` object: the outcome, the output, then the request's fields it repeats
    (``echoed`` false: not those, for the caller to write ``context.echo`` after them)."""
    done = status in ("completed", "incomplete", "failed")
    response = {"id": response_id, "object": "response", "created_at": int(created), "status": status,
                "completed_at": int(time.time()) if status == "completed" else None,
                "error": error, "incomplete_details": incomplete, "model": model or context.model,
                "output": output, "usage": usage if done else None, "store": context.store,
                "background": False}
    if echoed:
        response.update(context.echo)
    return response


def new_response_id() -> str:
    return new_id("resp_")


def reasoning_item(text: str, sealer: Any, context: Context, item_id: str | None = None,
                   status: str = "completed") -> dict[str, Any]:
    part = [{"type": "summary_text" if context.summary else "reasoning_text", "text": text}]
    item: dict[str, Any] = {"type": "reasoning", "id": item_id or new_id("rs_"),
                            "summary": part if context.summary else [], "status": status}
    if not context.summary:
        item["content"] = part
    if context.sealed and status == "completed":
        item["encrypted_content"] = sealer.seal(text)
    return item


def message_item(text: str, item_id: str | None = None, status: str = "completed") -> dict[str, Any]:
    return {"type": "message", "id": item_id or new_id("msg_"), "role": "assistant", "status": status,
            "content": [] if status == "in_progress" else [output_text(text)]}


def cut_item(output: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The item the limit cut in an incomplete answer: the message (where the text of a call
    cut before it ended stays), else the reasoning (the limit fell while the model reasoned);
    None when the output ends with whole calls only."""
    for kind in ("message", "reasoning"):
        found = [item for item in output if item["type"] == kind]
        if found:
            return found[-1]
    return None


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def call_item(context: Context, upstream_id: str, name: str, arguments: str,
              status: str = "completed", call_id: str | None = None, drawn: str | None = None) -> dict[str, Any]:
    """A ``function_call`` or, for a freeform tool, a ``custom_tool_call`` item (``drawn``: the
    random characters of its ids, the item's and its call id's, when already drawn)."""
    shown, space = context.client_name(name)
    if drawn is None:
        drawn = draw(ID + NONCE)
    call_id = call_id or client_call_id(CALL_PREFIX, upstream_id, drawn[ID:])
    if name in context.freeforms:
        item: dict[str, Any] = {"type": "custom_tool_call", "id": "ctc_" + drawn[:ID], "call_id": call_id,
                                "name": shown, "input": raw_input(arguments), "status": status}
    else:
        item = {"type": "function_call", "id": "fc_" + drawn[:ID], "call_id": call_id, "name": shown,
                "arguments": arguments, "status": status}
    if space is not None:
        item["namespace"] = space
    return item


def answer_items(context: Context, message: dict[str, Any], sealer: Any) -> tuple[str, list[dict[str, Any]]]:
    """A whole chat answer's message as output items (reasoning, message, calls), and the id of
    the response that gives them: every id's random characters drawn at once."""
    reasoning = answer_reasoning(message)
    content = answer_text(message)
    calls = message.get("tool_calls") or ()
    drawn = draw(ID * (1 + bool(reasoning) + bool(content)) + (ID + NONCE) * len(calls))
    items = []
    at = ID  # (the response's id is drawn[:ID])
    if reasoning:
        items.append(reasoning_item(reasoning, sealer, context, "rs_" + drawn[at:at + ID]))
        at += ID
    if content:
        items.append(message_item(content, "msg_" + drawn[at:at + ID]))
        at += ID
    for call in calls:
        fn = call["function"]
        items.append(call_item(context, call["id"], fn["name"], fn["arguments"], drawn=drawn[at:at + ID + NONCE]))
        at += ID + NONCE
    return "resp_" + drawn[:ID], items


def assistant_message(context: Context, output: list[dict[str, Any]]) -> dict[str, Any]:
    """The output items as the chat assistant message the upstream is shown on a later turn."""
    names = {v: k for k, v in context.namespaces.items()}
    message: dict[str, Any] = {"role": "assistant", "content": None}
    texts, thoughts, calls = [], [], []
    for item in output:
        kind = item["type"]
        if kind == "reasoning":
            thoughts += [p["text"] for p in item.get("content") or ()]
        elif kind == "message":
            texts += [p["text"] for p in item["content"]]
        else:
            name = names.get((item["namespace"], item["name"]), item["name"]) if "namespace" in item else item["name"]
            arguments = arguments_of(item["input"]) if kind == "custom_tool_call" else item["arguments"]
            calls.append({"id": upstream_call_id(CALL_PREFIX, item["call_id"]), "type": "function",
                          "function": {"name": name, "arguments": arguments}})
    if texts:
        message["content"] = "".join(texts)
    if calls:
        message["tool_calls"] = calls
    if thoughts:
        message["reasoning_content"] = "".join(thoughts)
    return message
