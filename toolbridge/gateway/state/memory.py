"""The ``memory`` backend (``--state memory``): the kept records in the process's memory.

``MemoryStore`` is the store interface (``state.Store``) over ``ResponseStore``, which does the
work synchronously (its operations never wait for anything). Each entry holds the response object
and the conversation it ended (its input as chat messages, the instructions left out as the API
has it, and its output), so that a request naming it continues from there. One process only:
with ``--workers`` above 1 the default is the SQLite backend, which the workers share.

Invariants:

- An entry is keyed by ``(scope, id)`` (``scope.Scopes``): a lookup from another scope finds
  nothing, exactly as an unknown id does.
- At most ``size`` entries and ``max_bytes`` bytes accounted (``Entry.size``: what the caller
  measured, the length of the entry's JSON); the least recently stored goes first, and an entry
  larger than ``max_bytes`` alone is not stored (logged, counted).
- An entry lives ``ttl`` seconds. Every entry gets the same ttl and a stored entry goes to the
  end, so the entries are in order of expiry: ``sweep`` (run by every operation, and by the
  gateway's timer while no request comes) drops expired ones from the front, amortised O(1),
  and their memory goes without anyone reading them.
- Each stored entry's output items and input items (``Entry.inputs``) are indexed by
  ``(scope, item id)`` for ``item``: an id names the item of the latest entry that holds it, and
  goes from the index with that entry.
- A streamed response is registered when its stream begins (``begin``: ``GET`` answers it
  ``in_progress``) and stored when it ends (``finish``), only if it is still registered then: a
  ``DELETE`` during the stream wins, and nothing is stored after it. Registrations are not
  counted in the bounds (one per open stream, small) but expire as entries do.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..turn import RequestError
from .base import OnEvent, Record

log = logging.getLogger("toolbridge.gateway")
Key = tuple[str, str]  # (scope, response id)


@dataclass(slots=True)
class Entry:
    expires: float
    response: dict[str, Any]
    conversation: list[dict[str, Any]] | None  # None while its stream runs
    size: int  # bytes accounted
    inputs: list[dict[str, Any]] = field(default_factory=list)  # the request's input items, with ids


class ResponseStore:
    """See the module docstring. ``on_drop(reason)`` is told of each entry that goes before its
    time or is refused (``count``, ``bytes``, ``too_large``) and each that expires (``expired``)."""

    def __init__(self, size: int, ttl: float, max_bytes: int = 256 << 20,
                 on_drop: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.size, self.ttl, self.max_bytes = size, ttl, max_bytes
        self.bytes = 0  # accounted by the stored entries
        self._entries: OrderedDict[Key, Entry] = OrderedDict()
        self._pending: OrderedDict[Key, Entry] = OrderedDict()  # streams running
        self._items: dict[tuple[str, str], Key] = {}  # (scope, item id) -> the entry holding it
        self._on_drop = on_drop or (lambda reason: None)
        self._clock = clock
        self._lock = threading.Lock()  # whole answers may be written from a worker thread

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, scope: str, response: dict[str, Any], conversation: list[dict[str, Any]],
            size: int, inputs: list[dict[str, Any]] | None = None) -> bool:
        """Store a finished response; False when it is not kept (no store, or too large)."""
        if self.size <= 0:
            return False
        if size > self.max_bytes:
            log.warning("responses: %s is not stored: %d bytes, more than the store's %d "
                        "(--responses-store-bytes)", response["id"], size, self.max_bytes)
            self._on_drop("too_large")
            return False
        key = (scope, response["id"])
        with self._lock:
            now = self._clock()
            self._sweep(now)
            self._remove(key)
            self._entries[key] = entry = Entry(now + self.ttl, response, conversation, size, inputs or [])
            self._index(key, entry)
            self.bytes += size
            while len(self._entries) > self.size or self.bytes > self.max_bytes:
                self._evict("count" if len(self._entries) > self.size else "bytes")
        return True

    def begin(self, scope: str, response: dict[str, Any], inputs: list[dict[str, Any]] | None = None) -> None:
        """Register a response whose stream began (see the module docstring)."""
        if self.size <= 0:
            return
        with self._lock:
            now = self._clock()
            self._sweep(now)
            self._pending[scope, response["id"]] = Entry(now + self.ttl, response, None, 0, inputs or [])

    def finish(self, scope: str, response: dict[str, Any], conversation: list[dict[str, Any]],
               size: int, inputs: list[dict[str, Any]] | None = None) -> bool:
        """Store a streamed response if it is still registered (not deleted meanwhile)."""
        with self._lock:
            registered = self._pending.pop((scope, response["id"]), None) is not None
        return registered and self.put(scope, response, conversation, size, inputs)

    def abandon(self, scope: str, response_id: str) -> None:
        """Forget a registered response whose stream failed or whose client went away."""
        with self._lock:
            self._pending.pop((scope, response_id), None)

    def entry(self, scope: str, response_id: str) -> Entry | None:
        """The entry of ``response_id`` in ``scope`` (a running stream's too), or None."""
        with self._lock:
            self._sweep(self._clock())
            key = (scope, response_id)
            return self._entries.get(key) or self._pending.get(key)

    def conversation(self, scope: str, response_id: str) -> Entry:
        """The entry a ``previous_response_id`` names, with its conversation; RequestError (400)
        naming it when there is none in ``scope``."""
        found = self.entry(scope, response_id)
        if found is None or found.conversation is None:
            why = ("is still in progress" if found is not None else
                   "is not stored here (unknown, expired, deleted, stored with store: false, or kept by "
                   "another gateway process)")
            raise RequestError(f"previous_response_id: the response {response_id!r:.80} {why}",
                               param="previous_response_id", code="previous_response_not_found")
        return found

    def response(self, scope: str, response_id: str) -> dict[str, Any] | None:
        found = self.entry(scope, response_id)
        return found.response if found is not None else None

    def item(self, scope: str, item_id: str) -> dict[str, Any] | None:
        """The output or input item ``item_id`` of a stored response in ``scope``, or None."""
        with self._lock:
            self._sweep(self._clock())
            key = self._items.get((scope, item_id))
            entry = self._entries.get(key) if key is not None else None
        if entry is None:
            return None
        return next((item for item in _items_of(entry) if item.get("id") == item_id), None)

    def delete(self, scope: str, response_id: str) -> bool:
        """Delete a stored response, or a running stream's (which is then never stored)."""
        key = (scope, response_id)
        with self._lock:
            self._sweep(self._clock())
            return self._remove(key) or self._pending.pop(key, None) is not None

    def sweep(self) -> None:
        """Drop the expired entries (see the module docstring)."""
        with self._lock:
            self._sweep(self._clock())

    def _sweep(self, now: float) -> None:
        for entries, counted in ((self._entries, True), (self._pending, False)):
            while entries:
                key, first = next(iter(entries.items()))
                if first.expires > now:
                    break
                del entries[key]
                if counted:
                    self._unindex(key, first)
                    self.bytes -= first.size
                    self._on_drop("expired")

    def _evict(self, reason: str) -> None:
        key, entry = self._entries.popitem(last=False)
        self._unindex(key, entry)
        self.bytes -= entry.size
        self._on_drop(reason)

    def _remove(self, key: Key) -> bool:
        entry = self._entries.pop(key, None)
        if entry is None:
            return False
        self._unindex(key, entry)
        self.bytes -= entry.size
        return True

    def _index(self, key: Key, entry: Entry) -> None:
        for item in _items_of(entry):
            self._items[key[0], item["id"]] = key

    def _unindex(self, key: Key, entry: Entry) -> None:
        for item in _items_of(entry):
            if self._items.get((key[0], item["id"])) == key:
                del self._items[key[0], item["id"]]


def _items_of(entry: Entry) -> list[dict[str, Any]]:
    """An entry's items that have an id: its output, then its input."""
    output = entry.response.get("output") or []
    return [item for item in (*output, *entry.inputs) if isinstance(item.get("id"), str)]


class MemoryStore:
    """``state.Store`` in memory: ``ResponseStore``'s operations, awaited without a wait."""

    name = "memory"

    def __init__(self, size: int, ttl: float, max_bytes: int, on_event: OnEvent) -> None:
        self.core = ResponseStore(size, ttl, max_bytes, on_event)
        self.size, self.ttl, self.max_bytes = size, ttl, max_bytes
        self._on_event = on_event

    @property
    def count(self) -> int:
        return len(self.core)

    @property
    def bytes(self) -> int:
        return self.core.bytes

    async def put(self, scope: str, record: Record) -> bool:
        stored = self.core.put(scope, record.response, record.conversation or [], record.size, record.inputs)
        if stored:
            self._on_event("stored")
        return stored

    async def begin(self, scope: str, record: Record) -> None:
        self.core.begin(scope, record.response, record.inputs)

    async def finish(self, scope: str, record: Record) -> bool:
        stored = self.core.finish(scope, record.response, record.conversation or [], record.size, record.inputs)
        if stored:
            self._on_event("stored")
        return stored

    def abandon(self, scope: str, record_id: str) -> None:
        self.core.abandon(scope, record_id)

    async def get(self, scope: str, record_id: str) -> Record | None:
        entry = self.core.entry(scope, record_id)
        if entry is None:
            self._on_event("miss")
            return None
        return Record(entry.response, entry.conversation, entry.size, entry.inputs)

    async def item(self, scope: str, item_id: str) -> dict[str, Any] | None:
        found = self.core.item(scope, item_id)
        if found is None:
            self._on_event("miss")
        return found

    async def delete(self, scope: str, record_id: str) -> bool:
        return self.core.delete(scope, record_id)

    async def sweep(self) -> None:
        self.core.sweep()

    async def ping(self) -> bool:
        return True

    async def close(self) -> None:
        return None
