"""The store interface (``gateway/state``), the same contract on each backend: memory, a SQLite
file, a real Valkey/Redis server (``state_server``; skipped, saying why, where none can be had).
Scopes, items, the stream registration a DELETE wins over, the bounds (oldest first, each drop
told), a record too large, and a store that stops answering."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.state_server import Server, need_server
from toolbridge.bench.valkey import missing
from toolbridge.errors import ConfigError
from toolbridge.gateway.state import Record, StoreUnavailable, default_url, open_store
from toolbridge.gateway.state.redis import TIMEOUT_SECONDS
from toolbridge.gateway.state.sqlite import SqliteStore


@pytest.fixture(params=["memory", "sqlite", "redis"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "memory":
        yield "memory"
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/state/store.sqlite3"
    else:
        server = Server(need_server()).start()
        yield server.url
        server.kill()


def record(rid: str, size: int = 10, items: tuple[str, ...] = ()) -> Record:
    return Record({"id": rid, "output": [{"type": "message", "id": f"out_{rid}"}]},
                  [{"role": "user", "content": rid}], size, [{"type": "message", "id": i} for i in items])


def run(url: str, test: Any, size: int = 3, max_bytes: int = 1000) -> list[str]:
    """``test(store)`` on a fresh store of ``url``; what the store told."""
    events: list[str] = []

    async def main() -> None:
        store = open_store(url, size, 60.0, max_bytes, events.append)
        try:
            await test(store)
        finally:
            await store.close()

    asyncio.run(main())
    return events


def test_records_are_kept_per_scope_with_their_items(url: str) -> None:
    async def test(store: Any) -> None:
        assert await store.put("a", record("r1", items=("in_1", "shared")))
        assert await store.put("a", record("r2", items=("shared",)))
        found = await store.get("a", "r1")
        assert found.response["id"] == "r1" and found.conversation == [{"role": "user", "content": "r1"}]
        assert found.inputs[0]["id"] == "in_1" and found.size == 10
        assert await store.get("b", "r1") is None and await store.get("a", "nope") is None
        assert (await store.item("a", "out_r1"))["id"] == "out_r1" and await store.item("b", "out_r1") is None
        assert (await store.item("a", "in_1"))["id"] == "in_1"
        assert await store.delete("a", "r2") and not await store.delete("a", "r2")
        assert await store.item("a", "shared") is None  # (it named r2's: the latest that held it)
        assert await store.ping()

    events = run(url, test)
    assert events.count("stored") == 2 and events.count("miss") == 4


def test_a_delete_during_the_stream_wins(url: str) -> None:
    async def test(store: Any) -> None:
        await store.begin("a", Record({"id": "s1", "status": "in_progress"}, None, 0))
        running = await store.get("a", "s1")
        assert running.conversation is None and running.response["status"] == "in_progress"
        assert await store.finish("a", record("s1"))
        assert (await store.get("a", "s1")).conversation is not None
        await store.begin("a", Record({"id": "s2"}, None, 0))
        assert await store.delete("a", "s2")
        assert not await store.finish("a", record("s2")) and await store.get("a", "s2") is None
        assert not await store.finish("a", record("never-begun"))

    run(url, test)


def test_the_oldest_goes_first_at_either_bound(url: str) -> None:
    async def test(store: Any) -> None:
        for i in range(5):
            assert await store.put("a", record(f"r{i}", size=100))
        assert [await store.get("a", f"r{i}") is not None for i in range(5)] == [False, False, True, True, True]
        assert (store.count, store.bytes) == (3, 300)
        assert await store.put("a", record("big", size=350))  # 4 records: r2 goes; then 550 bytes: r3
        assert [await store.get("a", r) is not None for r in ("r2", "r3", "r4", "big")] == [False, False, True, True]
        assert await store.item("a", "out_r2") is None
        assert not await store.put("a", record("huge", size=501))  # alone over the bound: not stored
        assert (store.count, store.bytes) == (2, 450)

    events = run(url, test, size=3, max_bytes=500)
    assert [e for e in events if e not in ("stored", "miss")] == ["count", "count", "count", "bytes", "too_large"]


def test_a_sqlite_file_made_read_only_is_read_not_written(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"

    async def test(store: Any) -> None:
        assert await store.put("a", record("r1"))
        os.chmod(path, 0o444)
        with pytest.raises(StoreUnavailable, match=f"SQLite store {path}.*read-only"):
            await store.put("a", record("r2"))
        with pytest.raises(StoreUnavailable):
            await store.ping()
        assert (await store.get("a", "r1")).response["id"] == "r1"
        os.chmod(path, 0o600)
        assert await store.put("a", record("r2")) and await store.ping()

    run(f"sqlite:///{path}", test)
    assert oct(path.stat().st_mode & 0o777) == "0o600"  # (user data: the owner's alone)


def test_a_redis_server_killed_is_unavailable_until_it_is_back() -> None:
    server = Server(need_server()).start()

    async def test(store: Any) -> None:
        assert await store.put("a", record("r1"))
        server.kill()
        for step in (store.put("a", record("r2")), store.get("a", "r1"), store.item("a", "out_r1"),
                     store.delete("a", "r1"), store.ping()):
            with pytest.raises(StoreUnavailable, match=f"Redis store redis://127.0.0.1:{server.port}/0"):
                await step
        server.start()  # (the same port; an empty server: nothing was persisted)
        assert await store.get("a", "r1") is None
        assert await store.put("a", record("r3")) and (await store.get("a", "r3")) is not None

    try:
        run(server.url, test)
    finally:
        server.kill()


def test_a_redis_server_too_slow_is_unavailable_after_the_timeout() -> None:
    """The server paused (``CLIENT PAUSE``: it answers nothing meanwhile) for longer than the
    store's timeout: StoreUnavailable naming the timeout; once the pause ends, the store answers."""
    import redis

    server = Server(need_server()).start()
    admin = redis.Redis(port=server.port)

    async def test(store: Any) -> None:
        assert await store.put("a", record("r1"))
        admin.execute_command("CLIENT", "PAUSE", int(3 * TIMEOUT_SECONDS * 1000), "ALL")
        with pytest.raises(StoreUnavailable, match="Redis store.*Timeout"):
            await store.get("a", "r1")
        assert admin.ping()  # (answered once the pause ends)
        assert (await store.get("a", "r1")).response["id"] == "r1"

    try:
        run(server.url, test)
    finally:
        admin.close()
        server.kill()


def test_the_redis_password_comes_from_the_url_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(need_server(), None, "--requirepass", "s3cret").start()
    base = f"127.0.0.1:{server.port}/0"

    async def works(store: Any) -> None:
        assert await store.put("a", record("r1")) and await store.ping()

    async def refused(store: Any) -> None:
        with pytest.raises(StoreUnavailable, match=f"redis://{base}.*(NOAUTH|Authentication)"):
            await store.ping()

    try:
        run(f"redis://:s3cret@{base}", works)
        run(f"redis://{base}", refused)
        monkeypatch.setenv("TOOLBRIDGE_STATE_PASSWORD", "s3cret")
        run(f"redis://{base}", works)
    finally:
        server.kill()


def test_urls_and_the_default() -> None:
    assert default_url(1, 8080) == "memory"
    assert default_url(4, 8080, {"XDG_RUNTIME_DIR": "/run/user/7"}) == \
        "sqlite:////run/user/7/toolbridge/state-8080.sqlite3"
    assert default_url(2, 9, {"HOME": "/h", "XDG_CACHE_HOME": "/c"}).endswith("/c/toolbridge/state-9.sqlite3")
    store = open_store("sqlite:///rel/s.db", 1, 1, 1)
    assert isinstance(store, SqliteStore) and store.path == os.path.abspath("rel/s.db")
    asyncio.run(store.close())
    with pytest.raises(ConfigError, match="--state"):
        open_store("postgres://x", 1, 1, 1)
    with pytest.raises(ConfigError, match="name a file"):
        open_store("sqlite://", 1, 1, 1)
    if missing() is None:  # (the client is there: the name hides the password)
        named = open_store("redis://:hunter2@127.0.0.1:1/3", 1, 1, 1)
        assert named.name == "redis://127.0.0.1:1/3"
        asyncio.run(named.close())
