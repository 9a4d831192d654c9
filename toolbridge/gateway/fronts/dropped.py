"""Request fields a front drops (they change nothing an upstream can do), each logged once."""

from __future__ import annotations

import logging

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
