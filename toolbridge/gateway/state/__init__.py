"""The gateway's conversation state: one store behind every stateful feature.

What is kept: the Responses front's stored responses (``previous_response_id``, ``GET`` and
``DELETE /v1/responses/{id}``), with their conversations and input items (``item_reference``,
``input_items``), and the Messages front's thread turns (under a scope of their own). Each is a
``Record`` under ``(scope, id)`` (``scope.Scopes``: a keyed hash of the caller's credential, so
another caller's id is an unknown id); its items are indexed by ``(scope, item id)``.

One option picks the backend (``--state URL``, ``TOOLBRIDGE_STATE``; ``open_store``):

- ``memory``: in the process (``memory.MemoryStore``); the default with one worker;
- ``sqlite:///path``: a file shared by the workers of one machine (``sqlite.SqliteStore``); the
  default with ``--workers`` above 1 (``default_url``);
- ``redis://host:port/db`` or ``rediss://`` (TLS): a Redis or Valkey server shared by gateways on
  many machines (``redis.RedisStore``; the ``redis`` extra).

Every backend has the same bounds (``--responses-store`` records, ``--responses-store-bytes``
bytes accounted, ``--responses-ttl`` seconds) and drops the oldest stored record first at a bound.
A backend that cannot answer raises ``StoreUnavailable`` (naming the store): the fronts answer it
503 in their error shape, and nothing that does not need the store waits for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from ...errors import ConfigError
from .base import OnEvent, Record, Store, StoreUnavailable

__all__ = ["OnEvent", "Record", "Store", "StoreUnavailable", "default_url", "open_store", "sqlite_path"]


def default_url(workers: int, port: int, environ: dict[str, str] | None = None) -> str:
    """``memory`` for one worker; else a SQLite file of this port's gateway under the user's
    runtime folder (``$XDG_RUNTIME_DIR``), or its cache folder (``$XDG_CACHE_HOME``,
    ``~/.cache``) where there is none."""
    if workers <= 1:
        return "memory"
    env = os.environ if environ is None else environ
    base = env.get("XDG_RUNTIME_DIR") or env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return f"sqlite:///{Path(base) / 'toolbridge' / f'state-{port}.sqlite3'}"


def open_store(url: str, size: int, ttl: float, max_bytes: int, on_event: OnEvent | None = None) -> Store:
    """The backend ``url`` names; ConfigError for one that cannot be used."""
    on_event = on_event or (lambda event: None)
    scheme = urlsplit(url).scheme if "://" in url else url
    if scheme == "memory":
        from .memory import MemoryStore

        return MemoryStore(size, ttl, max_bytes, on_event)
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(sqlite_path(url), size, ttl, max_bytes, on_event)
    if scheme in ("redis", "rediss"):
        from .redis import RedisStore

        return RedisStore(url, size, ttl, max_bytes, on_event)
    raise ConfigError(f"--state must be memory, sqlite:///path, redis://host:port/db or rediss://..., "
                      f"not {url!r}")


def sqlite_path(url: str) -> str:
    """The file of a ``sqlite:///path`` URL: ``sqlite:///rel/path`` is relative to the current
    folder, ``sqlite:////abs/path`` absolute (the usual reading of these URLs)."""
    path = url.removeprefix("sqlite://")
    if not path.startswith("/") or path == "/":
        raise ConfigError(f"--state sqlite URL must name a file: sqlite:///path/to/state.sqlite3, not {url!r}")
    return path[1:]
