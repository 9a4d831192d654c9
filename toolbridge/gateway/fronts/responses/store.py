"""The responses kept for ``previous_response_id`` and ``GET``/``DELETE /v1/responses/{id}``.

In memory, per process: at most ``size`` responses (the oldest goes first), each for ``ttl``
seconds. Each holds the response object and the conversation it ended (its input as chat
messages, the instructions left out as the API has it, and its output), so that a request
naming it continues from there. With ``--workers``, a conversation must stay on one worker (or
send its full input): the README says so.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from ...turn import RequestError


class ResponseStore:
    def __init__(self, size: int, ttl: float) -> None:
        self.size, self.ttl = size, ttl
        self._entries: OrderedDict[str, tuple[float, dict[str, Any], list[dict[str, Any]]]] = OrderedDict()
        self._lock = threading.Lock()  # whole answers may be written from a worker thread

    def put(self, response: dict[str, Any], conversation: list[dict[str, Any]]) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._entries[response["id"]] = (time.monotonic() + self.ttl, response, conversation)
            self._entries.move_to_end(response["id"])
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def _get(self, response_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        with self._lock:
            entry = self._entries.get(response_id)
            if entry is None:
                return None
            if entry[0] < time.monotonic():
                del self._entries[response_id]
                return None
            return entry[1], entry[2]

    def conversation(self, response_id: str) -> list[dict[str, Any]]:
        """The conversation a response ended; RequestError (400) naming it when unknown."""
        found = self._get(response_id)
        if found is None:
            raise RequestError(f"previous_response_id: no response {response_id!r:.80} is stored here "
                               "(unknown, expired, deleted, stored with store: false, or kept by "
                               "another gateway process)", param="previous_response_id",
                               code="previous_response_not_found")
        return found[1]

    def response(self, response_id: str) -> dict[str, Any] | None:
        found = self._get(response_id)
        return found[0] if found is not None else None

    def delete(self, response_id: str) -> bool:
        with self._lock:
            return self._entries.pop(response_id, None) is not None
