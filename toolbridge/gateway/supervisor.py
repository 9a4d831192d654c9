"""The master of ``--workers N``: starts the worker processes, restarts one that dies, and takes
them all down gracefully when it is told to stop.

A worker that dies (a signal, a fault in native code, an exit it should not make) is started
again, with a log line giving the running count of restarts; the new worker shows that count
in its ``/metrics`` (``toolbridge_worker_restarts``). A worker that dies within ``STEADY``
seconds of its start is crash-looping (it cannot bind the port, its configuration fails...):
its slot waits ``restart_delay`` seconds before the next start, doubling from ``FIRST_DELAY``
up to ``MAX_DELAY``, instead of spinning; a worker that lived longer restarts at once. The master
never exits while it should serve.

SIGTERM or SIGINT to the master: each worker is sent SIGTERM, on which it stops accepting and
lets the requests in flight finish for ``--graceful-timeout`` seconds (``app.serve``); a worker
still running a few seconds past that is killed. The master then exits 0. The signals reach
the master's loop through a wake-up socket (``signal.set_wakeup_fd``), so it waits on the
workers and the signals at once, without polling.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

log = logging.getLogger("toolbridge.gateway")

FIRST_DELAY = 0.5  # seconds before the second start of a crash-looping worker
MAX_DELAY = 30.0
STEADY = 10.0  # seconds a worker must live for its death not to count as a crash loop
KILL_AFTER = 5.0  # seconds past the graceful timeout before a worker still running is killed


def restart_delay(quick_deaths: int) -> float:
    """Seconds to wait before starting a worker again after ``quick_deaths`` deaths in a row,
    each within ``STEADY`` seconds of its start: at once for the first, then doubling, capped."""
    if quick_deaths <= 1:
        return 0.0
    return min(MAX_DELAY, FIRST_DELAY * 2 ** (quick_deaths - 2))


@dataclass
class _Slot:
    number: int
    process: Any = None
    started: float = 0.0
    quick_deaths: int = 0
    due: float | None = None  # when a dead worker starts again


@dataclass
class Supervisor:
    """Runs ``target(restarts)`` in ``workers`` processes until SIGTERM or SIGINT."""

    target: Callable[[int], None]
    workers: int
    graceful_timeout: float
    restarts: int = 0
    _slots: list[_Slot] = field(default_factory=list)
    _stopping: bool = False

    def run(self) -> int:
        wake, waker = socket.socketpair()
        wake.setblocking(False)
        waker.setblocking(False)
        signal.set_wakeup_fd(waker.fileno())
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._stop)
        self._slots = [_Slot(n) for n in range(self.workers)]
        for slot in self._slots:
            self._start(slot)
        while not self._stopping:
            due = [s.due for s in self._slots if s.due is not None]
            timeout = max(0.0, min(due) - time.monotonic()) if due else None
            live = [s.process.sentinel for s in self._slots if s.due is None]
            wait([*live, wake], timeout)
            _drain(wake)
            if not self._stopping:
                self._tend()
        self._shutdown()
        return 0

    def _stop(self, signum: int, frame: Any) -> None:
        self._stopping = True

    def _start(self, slot: _Slot) -> None:
        ctx = multiprocessing.get_context("spawn")
        slot.process = ctx.Process(target=self.target, args=(self.restarts,), daemon=True)
        slot.process.start()
        slot.started, slot.due = time.monotonic(), None
        log.info("worker %d started (pid %d)", slot.number, slot.process.pid)

    def _tend(self) -> None:
        """Schedule a restart for each worker that died; start those whose time has come."""
        now = time.monotonic()
        for slot in self._slots:
            if slot.due is None and not slot.process.is_alive():
                slot.process.join()
                code = slot.process.exitcode
                slot.quick_deaths = slot.quick_deaths + 1 if now - slot.started < STEADY else 1
                delay = restart_delay(slot.quick_deaths)
                slot.due = now + delay
                self.restarts += 1
                how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
                log.warning("worker %d (pid %d) died (%s); restarting it in %.1f s (restart %d)",
                            slot.number, slot.process.pid, how, delay, self.restarts)
            if slot.due is not None and slot.due <= now:
                self._start(slot)

    def _shutdown(self) -> None:
        """SIGTERM to every worker, then wait for them; kill any still running past the bound."""
        live = [s.process for s in self._slots if s.due is None and s.process.is_alive()]
        log.info("stopping: %d workers finish their requests (at most %g s)", len(live), self.graceful_timeout)
        for process in live:
            process.terminate()
        deadline = time.monotonic() + self.graceful_timeout + KILL_AFTER
        for process in live:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.warning("worker pid %d still running past the graceful timeout: killed", process.pid)
                process.kill()
                process.join()


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(64):
            pass
    except BlockingIOError:
        pass
