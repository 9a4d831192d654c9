"""A one-line progress display for long ``--jsonl`` runs, shown only on a terminal.

The line is redrawn in place (carriage return, erase to end of line) at most ``_HZ`` times a
second, so a fast run spends next to nothing on it; ``note`` prints a message above it, and
``close`` erases it, leaving the terminal as it was.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

_HZ = 5
_ERASE = "\r\x1b[K"


class Progress:
    """Lines done, lines per second and errors, redrawn on ``stream`` when ``enabled``."""

    def __init__(
        self,
        stream: TextIO,
        enabled: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._enabled = enabled
        self._clock = clock
        self._start = clock()
        self._next = self._start + 1 / _HZ
        self._shown = False

    @classmethod
    def for_stderr(cls) -> Progress:
        return cls(sys.stderr, sys.stderr.isatty())

    def tick(self, done: int, errors: int) -> None:
        """Record progress; redraw when the last redraw is old enough."""
        if not self._enabled:
            return
        now = self._clock()
        if now < self._next:
            return
        self._next = now + 1 / _HZ
        self._stream.write(f"{_ERASE}{self._status(done, errors, now)}")
        self._stream.flush()
        self._shown = True

    def note(self, message: str) -> None:
        """Print a message (always), keeping the progress line below it."""
        self._erase()
        print(message, file=self._stream, flush=True)

    def close(self) -> None:
        """Erase the progress line."""
        self._erase()
        if self._enabled:
            self._stream.flush()

    def _erase(self) -> None:
        if self._shown:
            self._stream.write(_ERASE)
            self._shown = False

    def _status(self, done: int, errors: int, now: float) -> str:
        elapsed = max(now - self._start, 1e-9)
        return f"{done:,} lines  {done / elapsed:,.0f} lines/s  errors: {errors:,}  {elapsed:.1f} s"
