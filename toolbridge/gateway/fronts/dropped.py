"""Request fields a front drops (they change nothing an upstream can do), each logged once."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Set
from typing import Any

log = logging.getLogger("toolbridge.gateway")


class Dropped:
    """Logs ``key`` the first time it is dropped, per process; at most ``LIMIT`` keys are
    remembered (keys come from clients: the set stays bounded)."""

    LIMIT = 64

    def __init__(self, front: str) -> None:
        self._front = front
        self._warned: set[str] = set()

    def __call__(self, key: str, why: str) -> None:
        if key not in self._warned and len(self._warned) < self.LIMIT:
            self._warned.add(key)
            log.info("%s: %r is dropped (%s); logged once", self._front, key, why)

    def unknown(self, body: dict[str, Any], known: Set[str], why: Mapping[str, str]) -> None:
        """Drop each field of ``body`` not in ``known``, each logged once with what ``why`` says
        of it."""
        if known.issuperset(body):  # nearly every request: one look, no set made
            return
        for key in body.keys() - known:
            self(key, why.get(key, "toolbridge does not know it"))
