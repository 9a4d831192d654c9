"""The gateway's log lines: their format, the handler that writes them, and the access line.

``Formatter`` and ``LineHandler`` are what ``run`` configures (one line per record to standard
error, a turn of the event loop's lines in one write). ``access`` writes the line the gateway logs
for every request: when the record would reach only that handler, unfiltered (the configuration
``run`` makes), it writes the same text without making the record (the record, the handler
chain and the lookups cost more than the line); with any other configuration (another handler,
a filter, another format: a program embedding the gateway) it logs the record as any other.
"""

from __future__ import annotations

import asyncio
import logging
import time
from math import floor, inf
from collections.abc import Mapping
from typing import Any

_INFO = logging.INFO


def access(logger: logging.Logger, message: str, *args: Any) -> None:
    """``logger.info(message, *args)``, written straight to the line handler when that is all
    the record would reach (see the module docstring)."""
    if not logger.isEnabledFor(_INFO):
        return
    handler = _only_handler(logger)
    if handler is None:
        logger.info(message, *args)
        return
    if args:
        if len(args) == 1 and isinstance(args[0], Mapping) and args[0]:  # as a record takes them
            args = args[0]  # type: ignore[assignment]
        try:
            message = message % args
        except (TypeError, ValueError, KeyError):  # reported as the generic path reports it
            logger.info(message, *args)
            return
    handler.line(logger.name, message)


def _only_handler(logger: logging.Logger) -> LineHandler | None:
    """The one handler an INFO record of ``logger`` reaches, when it is a LineHandler with the
    gateway's Formatter and no filters, and the logger has none either; None otherwise."""
    if logger.filters or logger.disabled:
        return None
    found = None
    current: logging.Logger | None = logger
    while current is not None:
        handlers = current.handlers
        if handlers:  # (most loggers of the chain have none)
            handler = handlers[0]
            if (found is not None or len(handlers) > 1 or type(handler) is not LineHandler or handler.filters
                    or handler.level > _INFO or type(handler.formatter) is not Formatter):
                return None
            found = handler
        if not current.propagate:
            break
        current = current.parent
    return found


_MILLIS = tuple(f",{n:03d}" for n in range(1000))  # a stamp's milliseconds, written once


class Formatter(logging.Formatter):
    """``FORMAT``, with the date and time formatted once per second, not per line, and a line
    without exception or stack text written by one f-string instead of the generic path (the
    same text: the gateway logs a line per request)."""

    FORMAT = "%(asctime)s %(name)s %(message)s"
    _second, _text = inf, ""  # the second last formatted (a whole number), and its text

    def __init__(self) -> None:
        super().__init__(self.FORMAT)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return self.stamp(record.created, record.msecs)

    def stamp(self, created: float, msecs: float | None = None) -> str:
        """The date and time of a record made at ``created`` (``msecs``: as the record has it;
        by default as a record made then has it: ``created - int(created)`` in milliseconds,
        truncated; the same difference as ``created - self._second`` within that second, where
        the whole number is exact as a float)."""
        into = created - self._second
        if not 0.0 <= into < 1.0:  # another second (int() truncates: the same test for any time)
            second = int(created)
            self._second, self._text = float(second), time.strftime("%Y-%m-%d %H:%M:%S", self.converter(second))
            into = created - second
        millis = into * 1000 if msecs is None else msecs
        # (floor: int's truncation, for a number not below zero, at a third of its cost)
        return self._text + _MILLIS[floor(millis) if millis >= 0.0 else int(millis)]

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info or record.exc_text or record.stack_info:
            return super().format(record)
        record.message = record.getMessage()  # set as the generic path sets them, for any
        record.asctime = self.formatTime(record)  # other handler that reads them
        return f"{record.asctime} {record.name} {record.message}"


class LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A StreamHandler that writes a record's line and flushes its stream in one step: the same
    text under the same lock, without the generic path's filter pass (when it has no filters),
    second turn of the lock and lookups (the gateway logs a line per request).

    On the event loop's thread the lines of one turn of the loop are written together, by one
    write and flush scheduled for the loop's next turn (under load a turn finishes several
    requests, and a write per line was a system call per request); elsewhere, and when the
    handler is flushed (at exit too), at once. A line waits at most until the loop turns."""

    def __init__(self, stream: Any = None) -> None:
        super().__init__(stream)
        self._pending: list[str] = []  # lines of this turn of the loop, not yet written

    def handle(self, record: logging.LogRecord) -> Any:
        if self.filters:
            return super().handle(record)
        with self.lock:  # type: ignore[union-attr]  # (made by the handler's __init__)
            self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        try:  # (under the lock, as for the generic emit)
            formatter = self.formatter
            line = formatter.format(record) if formatter is not None else self.format(record)
            self._put(line + self.terminator)
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001  # as StreamHandler.emit: reported by handleError
            self.handleError(record)

    def _put(self, line: str) -> None:
        """Write ``line`` (under the lock; its terminator written): with this turn's lines on the
        loop's thread, at once elsewhere."""
        pending = self._pending
        if pending:  # this turn's write is scheduled already
            pending.append(line)
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on an event loop's thread: written at once
            stream = self.stream
            stream.write(line)
            stream.flush()
            return
        pending.append(line)
        loop.call_soon(self.flush)

    def line(self, name: str, message: str) -> None:
        """The line ``handle`` writes for an INFO record of logger ``name`` with ``message`` (and
        neither exception nor stack), made without the record (``access``). (The lock taken
        and let go by its methods: a ``with`` block costs twice as much, and a line is logged
        per request.)"""
        stamp = self.formatter.stamp(time.time())  # type: ignore[union-attr]
        lock = self.lock
        lock.acquire()  # type: ignore[union-attr]
        try:
            self._put(f"{stamp} {name} {message}{self.terminator}")
        except Exception:  # noqa: BLE001  # as a failed emit: reported by handleError
            self.handleError(logging.makeLogRecord({"name": name, "msg": message, "levelno": logging.INFO,
                                                    "levelname": "INFO"}))
        finally:
            lock.release()  # type: ignore[union-attr]

    def flush(self) -> None:
        """Write the lines still pending, then flush the stream (as ``StreamHandler.flush``
        does, under the lock already held: not a second turn of it)."""
        with self.lock:  # type: ignore[union-attr]
            pending, stream = self._pending, self.stream
            if pending:
                self._pending = []
                try:
                    stream.write("".join(pending))
                except Exception:  # noqa: BLE001  # a closed stream: as a failed emit
                    self.handleError(logging.makeLogRecord({"msg": "(log lines lost)"}))
                    return
            if stream and hasattr(stream, "flush"):
                stream.flush()
