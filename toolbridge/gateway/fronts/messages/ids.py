"""The Messages API's ids: ``toolu_`` call ids carrying the upstream's (``fronts.ids``), ``msg_``."""

from __future__ import annotations

from ..ids import client_call_id, new_id, upstream_call_id


def tool_use_id(call_id: str, nonce: str | None = None) -> str:
    """The client's ``toolu_`` id for an upstream call id (``nonce``: see ``client_call_id``)."""
    return client_call_id("toolu_", call_id, nonce)


def upstream_id(client_id: str) -> str:
    """The upstream's call id a ``toolu_`` id carries; any other id as it is."""
    return upstream_call_id("toolu_", client_id)


def message_id(drawn: str | None = None) -> str:
    """A message id: ``msg_`` and 24 random characters (``drawn``: already drawn, ``fronts.ids.draw``)."""
    return "msg_" + drawn if drawn is not None else new_id("msg_")
