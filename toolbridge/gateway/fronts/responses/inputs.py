"""The input items a stored response keeps: for ``item_reference`` and for
``GET /v1/responses/{id}/input_items``.

The API gives every input item an id (``msg_`` for a message, ``fc_`` a function call, ``fco_``
its output, ``ctc_``/``ctco_`` the custom tool's, ``rs_`` reasoning) and lists them back with it,
messages with their content as parts (``input_text``; ``output_text`` for the assistant's); an
item the client gave an id keeps it. A later request may name any such item, or any output item
of a stored response, by ``{"type": "item_reference", "id": ...}``: the reference is resolved
from the store, in the caller's scope, before the item is read, and the input item kept for it is
the item it names (references never chain). The list is paginated as the API pages it: ``limit``
1 to 100 (20 when not given), ``order`` ``desc`` (the default: the last input item first) or
``asc``, ``after`` an item id of the list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from ...turn import RequestError
from ..ids import new_id

_PREFIXES = {"message": "msg_", "function_call": "fc_", "function_call_output": "fco_",
             "custom_tool_call": "ctc_", "custom_tool_call_output": "ctco_", "reasoning": "rs_"}
LIMIT, MAX_LIMIT = 20, 100
Lookup = Callable[[str], "dict[str, Any] | None"]


def referenced(item: dict[str, Any], where: str, lookup: Lookup | None) -> dict[str, Any]:
    """The stored item an ``item_reference`` names; a 400 naming it when the store holds none."""
    item_id = item.get("id")
    if not isinstance(item_id, str) or not item_id:
        raise RequestError(f"{where}.id: an item reference needs the id (a string) of a stored item",
                           param=f"{where}.id")
    found = lookup(item_id) if lookup is not None else None
    if found is None:
        raise RequestError(f"{where}: the item {item_id!r:.80} is not stored here (unknown, expired, "
                           "deleted, in a response stored with store: false, or kept by another gateway "
                           "process); send the item itself", param=where, code="item_not_found")
    return found


def kept(item: dict[str, Any]) -> dict[str, Any]:
    """An input item as it is kept and listed: with an id, a message's content as parts."""
    kind = item.get("type", "message")
    if not isinstance(kind, str):  # (kept before the item is checked: the check refuses it next)
        kind = ""
    out = {"type": kind, **item}
    if not isinstance(out.get("id"), str) or not out["id"]:
        out["id"] = new_id(_PREFIXES.get(kind, "item_"))
    if kind == "message" and isinstance(item.get("content"), str):
        part = "output_text" if item.get("role") == "assistant" else "input_text"
        out["content"] = [{"type": part, "text": item["content"]}]
    if kind in _PREFIXES and kind != "reasoning":
        out.setdefault("status", "completed")
    return out


def page(items: list[dict[str, Any]], query: str) -> dict[str, Any]:
    """One page of ``items`` as the API lists them for ``query`` (a URL's query string);
    RequestError naming the parameter that is wrong."""
    params = parse_qs(query, keep_blank_values=True)
    limit = _limit(params.get("limit", [None])[-1])
    order = params.get("order", ["desc"])[-1]
    if order not in ("asc", "desc"):
        raise RequestError("order: must be 'asc' or 'desc'", param="order")
    ordered = items if order == "asc" else items[::-1]
    after = params.get("after", [None])[-1]
    start = 0
    if after:
        ids = [item["id"] for item in ordered]
        if after not in ids:
            raise RequestError(f"after: no input item {after!r:.80} in this response", param="after")
        start = ids.index(after) + 1
    data = ordered[start:start + limit]
    return {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None, "has_more": start + limit < len(ordered)}


def _limit(value: str | None) -> int:
    if value is None:
        return LIMIT
    if not value.isdigit() or not 1 <= int(value) <= MAX_LIMIT:
        raise RequestError(f"limit: must be an integer from 1 to {MAX_LIMIT}", param="limit")
    return int(value)
