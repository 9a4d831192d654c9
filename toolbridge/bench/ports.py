"""For a server process the benchmarks and tests start (the gateway, an upstream, a Valkey or
llama.cpp server): a loopback port the system has just handed out and nothing listens on
(``free_port``), and the wait until the server answers (``wait_ready``)."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

from ..errors import ConfigError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[Any], what: str, timeout: float = 300.0) -> None:
    """Poll ``url`` until it answers 200; fail when ``proc`` exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ConfigError(f"{what} exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)  # (polling a readiness endpoint, bounded by the deadline)
    raise ConfigError(f"{what} was not ready after {timeout:.0f} s")
