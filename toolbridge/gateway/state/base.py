"""The store interface every backend implements (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import ToolBridgeError

# What a store tells its owner (the metrics): ``stored``, ``miss``, and the reasons a record
# goes before a DELETE: ``expired``, ``count``/``bytes`` (evicted at a bound), ``too_large``.
OnEvent = Callable[[str], None]


class StoreUnavailable(ToolBridgeError):
    """The store did not answer, or cannot write (down, read-only, full); the message names it."""


@dataclass(slots=True)
class Record:
    """One kept thing: what the API returns of it (``response``), the conversation a later turn
    continues from (None while its stream runs), the bytes it is accounted, its input items."""

    response: dict[str, Any]
    conversation: list[dict[str, Any]] | None
    size: int
    inputs: list[dict[str, Any]] = field(default_factory=list)

    def items(self) -> list[dict[str, Any]]:
        """Its items that have an id: its output, then its input."""
        output = self.response.get("output") or []
        return [item for item in (*output, *self.inputs) if isinstance(item.get("id"), str)]

    def item(self, item_id: str) -> dict[str, Any] | None:
        return next((item for item in self.items() if item["id"] == item_id), None)


def refused(record: Record, size: int, max_bytes: int, on_event: OnEvent) -> bool:
    """Whether a store of ``size`` records and ``max_bytes`` bytes cannot keep ``record``: it
    keeps nothing (``size`` 0), or the record alone is over the bytes (told as ``too_large``)."""
    if size <= 0:
        return True
    if record.size > max_bytes:
        on_event("too_large")
        return True
    return False


class Store(Protocol):
    """What every backend does (see the module docstring). ``name`` says which, for errors and
    ``/health`` (no password); ``count`` and ``bytes`` are the last figures it knows."""

    name: str
    size: int
    ttl: float
    max_bytes: int
    count: int
    bytes: int

    async def put(self, scope: str, record: Record) -> bool: ...
    async def begin(self, scope: str, record: Record) -> None: ...
    async def finish(self, scope: str, record: Record) -> bool: ...
    def abandon(self, scope: str, record_id: str) -> None: ...
    async def get(self, scope: str, record_id: str) -> Record | None: ...
    async def item(self, scope: str, item_id: str) -> dict[str, Any] | None: ...
    async def delete(self, scope: str, record_id: str) -> bool: ...
    async def sweep(self) -> None: ...
    async def ping(self) -> bool: ...
    async def close(self) -> None: ...
