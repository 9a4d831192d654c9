"""Unpredictable ids, cheaply: every id the parsers and the gateway make (call ids, response and
item ids) is cut from a buffer of the operating system's random bytes (``os.urandom``, the
source ``secrets`` draws from), never from a seeded generator whose outputs give away the next.

Strategy: one pool per alphabet holds the characters of one ``os.urandom`` draw (64 KB), already
mapped to the alphabet, in a ``StringIO``; an id is a ``read`` of it, and a new draw is made when
the pool runs out. So there is one system call per ~2,700-5,400 ids: a system call releases the
GIL, and a parse on a worker thread that releases it often takes it straight back each time,
starving the event loop (measured while an 8,000-call answer was read on a worker: /health
stalls of 50-270 ms with a call per id, and still 100-240 ms with a draw of 4 KB). Alphanumeric
characters come from the bytes below 248 (``b % 62``: each of the 62 characters equally likely),
the others are dropped. Invariants: a character is handed out once, on any thread (ids are made
on worker threads too): a ``read`` is one C call that runs no Python code, which the GIL makes
atomic as it makes ``list.pop``, so two takes never read the same characters; no lock is taken
(a lock's turn cost twice the read itself, an id per call). A child process made by ``fork``
never hands out its parent's remaining characters (the pools are emptied in the child). (A
StringIO keeps 4 bytes a character: the two pools hold ~0.75 MB.)
"""

from __future__ import annotations

import io
import os
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

    __slots__ = ("_draw", "_read")

    def __init__(self, draw: Callable[[], str]) -> None:
        self._draw = draw
        self._read = io.StringIO().read  # (empty: the first take draws)

    def take(self, n: int) -> str:
        """``n`` fresh characters (an id's few, or all of a whole answer's ids at once)."""
        chars = self._read(n)
        if len(chars) < n:  # the pool ran out (a process's first take, then one in thousands)
            chars += self._refill(n - len(chars))
        return chars

    def _refill(self, n: int) -> str:
        """``n`` characters from a new draw, which serves the takes after; more than a draw
        holds takes several. (Two threads that run out at once each draw: neither draw's
        characters are handed out twice, and the one not kept is dropped.)"""
        chars = ""
        while len(chars) < n:  # (a draw gives ~62,000 characters; n is small)
            read = io.StringIO(self._draw()).read
            chars += read(n - len(chars))
        self._read = read
        return chars

    def forget(self) -> None:
        """Drop what is left (in a forked child: those characters are the parent's too)."""
        self._read = io.StringIO().read


_ALNUM_POOL = _Pool(_alnum)
_HEX_POOL = _Pool(_hex)
os.register_at_fork(after_in_child=lambda: (_ALNUM_POOL.forget(), _HEX_POOL.forget()))


# (the pools' own ``take``, not a function that calls it: every call id is one of these)
random_alnum = _ALNUM_POOL.take  # ``n`` random characters of ``[0-9A-Za-z]`` (5.95 bits each)
random_hex = _HEX_POOL.take  # ``n`` random hexadecimal digits (lowercase)
