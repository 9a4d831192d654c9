"""The ``sqlite:///path`` backend: one file the gateway processes of one machine share.

The default with ``--workers`` above 1 (``state.default_url``): every worker opens the same file,
so a conversation may go on in any of them. SQLite's calls block, so each store runs them on a
thread of its own (one: SQLite serialises writers anyway) and the event loop only awaits them.

The file: WAL mode (readers never wait for the writer; ``synchronous=NORMAL``, which may lose
the last records on a power cut, not on a crash of the process), made with mode 0600 in a folder
made 0700 (it holds user data), and two tables: ``records`` (one row per ``(scope, id)``: the
record as JSON, its bytes, when it expires, whether its stream still runs) and ``items``
(``(scope, item id)`` -> the record that holds it). ``totals`` keeps the count and bytes of the
stored records, updated in the same transaction as they change, so a bound is checked without a
scan. Writes take the file's lock at once (``BEGIN IMMEDIATE``) and wait up to
``BUSY_SECONDS`` for another process's.

Bounds, as the memory store has them: at most ``size`` records and ``max_bytes`` bytes; past
either, the oldest stored goes first (the earliest expiry: every record gets the same ttl), in the
transaction that stored the new one. Expired rows are dropped a few at a time by each write and
in batches by ``sweep`` (the gateway's timer), each batch its own transaction, on the thread.

Failures: any SQLite error (locked beyond the wait, disk full, a read-only file system) is
``StoreUnavailable`` naming the file. A file without write permission (``chmod a-w``) is taken
as read-only even by root, whose writes the system would allow: records are read, not written.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import orjson

from .base import OnEvent, Record, StoreUnavailable, refused

BUSY_SECONDS = 5.0  # a write waits this long for another process's before it fails
SWEEP_IN_WRITE = 64  # expired rows a write drops on its way
SWEEP_BATCH = 512  # expired rows one sweep transaction drops
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (scope TEXT NOT NULL, id TEXT NOT NULL, expires REAL NOT NULL,
    size INTEGER NOT NULL, pending INTEGER NOT NULL, value BLOB NOT NULL, PRIMARY KEY (scope, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_age ON records (pending, expires);
CREATE INDEX IF NOT EXISTS records_expiry ON records (expires);
CREATE TABLE IF NOT EXISTS items (scope TEXT NOT NULL, item TEXT NOT NULL, id TEXT NOT NULL,
    PRIMARY KEY (scope, item)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_record ON items (scope, id);
CREATE TABLE IF NOT EXISTS totals (one INTEGER PRIMARY KEY CHECK (one = 1), count INTEGER NOT NULL,
    bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO totals VALUES (1, 0, 0);
"""


class SqliteStore:
    """``state.Store`` in a SQLite file; see the module docstring."""

    def __init__(self, path: str, size: int, ttl: float, max_bytes: int, on_event: OnEvent) -> None:
        self.path = os.path.abspath(path)
        self.name = f"sqlite://{self.path}" if self.path.startswith("/") else f"sqlite:///{self.path}"
        self.size, self.ttl, self.max_bytes = size, ttl, max_bytes
        self.count = self.bytes = 0  # as the last write or ping found them
        self._on_event = on_event
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="toolbridge-sqlite")
        self._db: sqlite3.Connection | None = None  # opened on the thread, at the first call

    # ---------------------------------------------------------------- the interface

    async def put(self, scope: str, record: Record) -> bool:
        return await self._store(scope, record, finish=False)

    async def begin(self, scope: str, record: Record) -> None:
        if self.size > 0:
            await self._call(self._begin, scope, record.response["id"], _dumps(record))

    async def finish(self, scope: str, record: Record) -> bool:
        return await self._store(scope, record, finish=True)

    def abandon(self, scope: str, record_id: str) -> None:
        """Forget a registration, without waiting (it would expire anyway)."""
        self._thread.submit(self._quietly, self._abandon, scope, record_id)

    async def get(self, scope: str, record_id: str) -> Record | None:
        row = await self._call(self._get, scope, record_id)
        if row is None:
            self._on_event("miss")
            return None
        value, size, pending = row
        return _record(value, size, pending)

    async def item(self, scope: str, item_id: str) -> dict[str, Any] | None:
        row = await self._call(self._item, scope, item_id)
        found = _record(row[0], row[1], False).item(item_id) if row is not None else None
        if found is None:
            self._on_event("miss")
        return found

    async def delete(self, scope: str, record_id: str) -> bool:
        return await self._call(self._delete, scope, record_id)

    async def sweep(self) -> None:
        while True:
            events = await self._call(self._sweep_batch)
            for event in events:
                self._on_event(event)
            if len(events) < SWEEP_BATCH:
                return

    async def ping(self) -> bool:
        await self._call(self._ping)
        return True

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._thread, self._close)
        self._thread.shutdown(wait=False)

    # ---------------------------------------------------------------- on the loop

    async def _store(self, scope: str, record: Record, finish: bool) -> bool:
        if refused(record, self.size, self.max_bytes, self._on_event):
            return False
        stored, events = await self._call(self._put, scope, record.response["id"], _dumps(record), record,
                                          finish)
        for event in events:
            self._on_event(event)
        return stored

    async def _call(self, step: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, step, *args)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"the SQLite store {self.path}: {exc}") from None

    # ---------------------------------------------------------------- on the thread

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            folder = Path(self.path).parent
            try:
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            except OSError as exc:
                raise StoreUnavailable(f"the SQLite store {self.path} cannot be opened: {exc}") from None
            db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                if not self._read_only():
                    db.executescript(_SCHEMA)
            except sqlite3.Error:
                db.close()
                raise
            self._db = db
        return self._db

    def _read_only(self) -> bool:
        try:
            return not os.stat(self.path).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        except OSError:
            return False

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The connection in a write transaction: committed when the block ends (or returns),
        rolled back when it (or the commit) raises."""
        db = self._conn()
        if self._read_only():
            raise sqlite3.OperationalError("the file is read-only (it has no write permission)")
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _put(self, scope: str, record_id: str, value: bytes, record: Record,
             finish: bool) -> tuple[bool, list[str]]:
        with self._write() as db:
            now = time.time()  # (once the file's lock is had)
            events = self._expire(db, now, SWEEP_IN_WRITE)
            if finish and db.execute("SELECT 1 FROM records WHERE scope = ? AND id = ? AND pending = 1",
                                     (scope, record_id)).fetchone() is None:
                return False, events  # deleted (or expired) while its stream ran
            self._remove(db, scope, record_id)
            db.execute("INSERT INTO records VALUES (?, ?, ?, ?, 0, ?)",
                       (scope, record_id, now + self.ttl, record.size, value))
            db.executemany("INSERT OR REPLACE INTO items VALUES (?, ?, ?)",
                           [(scope, item["id"], record_id) for item in record.items()])
            db.execute("UPDATE totals SET count = count + 1, bytes = bytes + ?", (record.size,))
            events.append("stored")
            self.count, self.bytes = db.execute("SELECT count, bytes FROM totals").fetchone()
            while self.count > self.size or self.bytes > self.max_bytes:
                events.append("count" if self.count > self.size else "bytes")
                oldest = db.execute("SELECT scope, id FROM records WHERE pending = 0 ORDER BY expires "
                                    "LIMIT 1").fetchone()
                self._remove(db, *oldest)
                self.count, self.bytes = db.execute("SELECT count, bytes FROM totals").fetchone()
            return True, events

    def _remove(self, db: sqlite3.Connection, scope: str, record_id: str) -> bool:
        """Drop a record (stored or registered) and its items; the totals follow."""
        row = db.execute("DELETE FROM records WHERE scope = ? AND id = ? RETURNING size, pending",
                         (scope, record_id)).fetchone()
        if row is None:
            return False
        db.execute("DELETE FROM items WHERE scope = ? AND id = ?", (scope, record_id))
        if not row[1]:
            db.execute("UPDATE totals SET count = count - 1, bytes = bytes - ?", (row[0],))
        return True

    def _expire(self, db: sqlite3.Connection, now: float, limit: int) -> list[str]:
        """Drop up to ``limit`` expired rows, the earliest first: an ``expired`` event for each
        stored one."""
        rows = db.execute("SELECT scope, id, pending FROM records WHERE expires <= ? ORDER BY expires LIMIT ?",
                          (now, limit)).fetchall()
        for scope, record_id, _ in rows:
            self._remove(db, scope, record_id)
        return ["expired" for row in rows if not row[2]]

    def _sweep_batch(self) -> list[str]:
        """One batch of expired rows dropped: their events (as many as the batch: maybe more)."""
        with self._write() as db:
            events = self._expire(db, time.time(), SWEEP_BATCH)
            self.count, self.bytes = db.execute("SELECT count, bytes FROM totals").fetchone()
        return events

    def _begin(self, scope: str, record_id: str, value: bytes) -> None:
        with self._write() as db:
            self._remove(db, scope, record_id)
            db.execute("INSERT INTO records VALUES (?, ?, ?, 0, 1, ?)",
                       (scope, record_id, time.time() + self.ttl, value))

    def _abandon(self, scope: str, record_id: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM records WHERE scope = ? AND id = ? AND pending = 1", (scope, record_id))

    def _delete(self, scope: str, record_id: str) -> bool:
        with self._write() as db:
            return self._remove(db, scope, record_id)

    def _get(self, scope: str, record_id: str) -> tuple[bytes, int, int] | None:
        return self._conn().execute(  # type: ignore[no-any-return]
            "SELECT value, size, pending FROM records WHERE scope = ? AND id = ? AND expires > ?",
            (scope, record_id, time.time())).fetchone()

    def _item(self, scope: str, item_id: str) -> tuple[bytes, int] | None:
        return self._conn().execute(  # type: ignore[no-any-return]
            "SELECT r.value, r.size FROM items i JOIN records r ON r.scope = i.scope AND r.id = i.id "
            "WHERE i.scope = ? AND i.item = ? AND r.pending = 0 AND r.expires > ?",
            (scope, item_id, time.time())).fetchone()

    def _ping(self) -> None:
        self.count, self.bytes = self._conn().execute("SELECT count, bytes FROM totals").fetchone()
        if self._read_only():
            raise sqlite3.OperationalError("the file is read-only (it has no write permission)")

    def _quietly(self, step: Callable[..., Any], *args: Any) -> None:
        try:
            step(*args)
        except (sqlite3.Error, StoreUnavailable):
            pass  # a registration left behind expires with its ttl

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _dumps(record: Record) -> bytes:
    return orjson.dumps({"response": record.response, "conversation": record.conversation,
                         "inputs": record.inputs})


def _record(value: bytes, size: int, pending: bool) -> Record:
    data = orjson.loads(value)
    return Record(data["response"], None if pending else data["conversation"], size, data["inputs"])
