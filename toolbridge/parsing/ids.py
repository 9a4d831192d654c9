"""Unpredictable ids, cheaply: every id the parsers and the gateway make (call ids, response and
item ids) is cut from a buffer of the operating system's random bytes (``os.urandom``, the
source ``secrets`` draws from), never from a seeded generator whose outputs give away the next.

Strategy: one pool per alphabet holds the characters of one ``os.urandom`` draw (64 KB), already
mapped to the alphabet; an id is a slice of it, and a new draw is made when the pool runs out.
So there is one system call per ~2,700-5,400 ids: a system call releases the GIL, and a parse
on a worker thread that releases it often takes it straight back each time, starving the event
loop (measured while an 8,000-call answer was read on a worker: /health stalls of 50-270 ms with
a call per id, and still 100-240 ms with a draw of 4 KB). Alphanumeric characters come from the bytes below 248 (``b % 62``: each of the 62
characters equally likely), the others are dropped. Invariants: a character is handed out once
(a lock guards the slice, as ids are made on worker threads too), and a child process made by
``fork`` never hands out its parent's remaining characters (the pools are emptied in the child).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_DRAW = 1 << 16  # bytes of one os.urandom call
_KEPT = 62 * 4  # bytes below this map to ALNUM without bias
_TABLE = bytes(ord(ALNUM[b % 62]) if b < _KEPT else 0 for b in range(256))
_DROPPED = bytes(range(_KEPT, 256))


def _alnum() -> str:
    return os.urandom(_DRAW).translate(_TABLE, _DROPPED).decode("ascii")


def _hex() -> str:
    return os.urandom(_DRAW).hex()


class _Pool:
    """Random characters of one alphabet, handed out once each; see the module docstring."""

    __slots__ = ("_draw", "_chars", "_pos", "_lock")

    def __init__(self, draw: Callable[[], str]) -> None:
        self._draw = draw
        self._chars, self._pos = "", 0
        self._lock = threading.Lock()

    def take(self, n: int) -> str:
        """``n`` fresh characters (an id's few, or all of a whole answer's ids at once: more
        than a draw holds takes several, under the lock)."""
        with self._lock:
            pos = self._pos
            end = pos + n
            if end > len(self._chars):
                self._chars, pos, end = self._draw(), 0, n
                while end > len(self._chars):  # (a draw gives ~62,000 characters; n is small)
                    self._chars += self._draw()
            self._pos = end
            return self._chars[pos:end]

    def forget(self) -> None:
        """Drop what is left (in a forked child: those characters are the parent's too)."""
        self._chars, self._pos = "", 0
        self._lock = threading.Lock()  # (a lock held at the fork stays held in the child)


_ALNUM_POOL = _Pool(_alnum)
_HEX_POOL = _Pool(_hex)
os.register_at_fork(after_in_child=lambda: (_ALNUM_POOL.forget(), _HEX_POOL.forget()))


# (the pools' own ``take``, not a function that calls it: every call id is one of these)
random_alnum = _ALNUM_POOL.take  # ``n`` random characters of ``[0-9A-Za-z]`` (5.95 bits each)
random_hex = _HEX_POOL.take  # ``n`` random hexadecimal digits (lowercase)
