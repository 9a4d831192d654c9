"""The Messages API's ids: ``toolu_`` call ids carrying the upstream's (``fronts.ids``), ``msg_``."""

from __future__ import annotations

from ..ids import client_call_id, new_id, upstream_call_id


def tool_use_id(call_id: str) -> str:
    """The client's ``toolu_`` id for an upstream call id."""
    return client_call_id("toolu_", call_id)


def upstream_id(client_id: str) -> str:
    """The upstream's call id a ``toolu_`` id carries; any other id as it is."""
    return upstream_call_id("toolu_", client_id)


def message_id() -> str:
    """A message id: ``msg_`` and 24 random characters."""
    return new_id("msg_")
