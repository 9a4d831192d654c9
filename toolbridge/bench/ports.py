"""A loopback port for a process the benchmarks and tests start (the gateway, an upstream, a
Valkey or llama.cpp server): one the system has just handed out and nothing listens on."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
