"""The real Redis-compatible server the shared-store tests run (``toolbridge.bench.valkey``), or
a skip that says why there is none."""

from __future__ import annotations

import pytest

from toolbridge.bench.ports import free_port
from toolbridge.bench.valkey import Server, missing, server_binary

__all__ = ["Server", "free_port", "need_server"]


def need_server() -> str:
    """The server binary, or a skip saying why there is none."""
    why = missing()
    if why is not None:
        pytest.skip(why)
    binary = server_binary()
    assert binary is not None
    return binary
