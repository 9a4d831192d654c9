"""The ``redis://`` / ``rediss://`` backend: a Redis or Valkey server that gateways on many
machines share (``--state redis://host:port/db``; the ``redis`` extra: the maintained ``redis``
package's asyncio client).

The password comes from the URL (``redis://:PASSWORD@host:port/0``) or, when the URL has none,
from ``TOOLBRIDGE_STATE_PASSWORD``; ``rediss://`` is TLS (the client's options in the URL's
query: ``?ssl_ca_certs=...``). The store's name (errors, ``/health``) never shows the password.

Keys (under ``PREFIX``): ``r:<scope>|<id>`` a record as JSON, with the ttl, so the server expires
it itself; ``i:<scope>|<item id>`` the id of the record that holds the item, with the same ttl;
``order`` (a sorted set: each stored record by the time it was stored), ``sizes`` (a hash: its
bytes) and ``bytes`` (their sum) make the bounds: each write is one Lua script, atomic on the
server, that drops what expired from them, stores, and evicts the oldest stored while a bound is
passed. A record whose stream runs is ``r:`` only (``pending``), outside the bounds, and a
stream's ``finish`` stores only if it is still there: a ``DELETE`` meanwhile wins. Scripts name
keys the script makes of its arguments: one server (or a primary), not Redis Cluster.

Failures: a connection refused or lost, a timeout (``TIMEOUT_SECONDS``; a store that slow counts
as down), an error from the server (out of memory, a read-only replica) are ``StoreUnavailable``
naming the server. The client reconnects by itself when the server is back.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from ...errors import ConfigError
from .base import OnEvent, Record, StoreUnavailable, refused

PREFIX = "toolbridge:"
TIMEOUT_SECONDS = 2.0  # each command's; a URL's socket_timeout= overrides it
SWEEP_IN_WRITE = 64  # expired entries a write drops from the bounds on its way
SWEEP_BATCH = 1000

_LIB = """
local P = ARGV[1]
local function remove(m)
  local size = redis.call('HGET', P .. 'sizes', m)
  local found = redis.call('DEL', P .. 'r:' .. m)
  if size then
    redis.call('HDEL', P .. 'sizes', m)
    redis.call('ZREM', P .. 'order', m)
    redis.call('DECRBY', P .. 'bytes', size)
  end
  return found
end
local function expire(now, ttl, limit)
  local old = redis.call('ZRANGEBYSCORE', P .. 'order', '-inf', now - ttl, 'LIMIT', 0, limit)
  for _, m in ipairs(old) do remove(m) end
  return #old
end
local function totals()
  return {redis.call('ZCARD', P .. 'order'), tonumber(redis.call('GET', P .. 'bytes') or '0')}
end
"""

# ARGV: prefix, member, value, size, ttl (s), now (s), most records, most bytes, finish, scope,
# id, item ids... -> stored, expired, evicted by count, by bytes, count, bytes
_PUT = _LIB + """
local m, ttl, now = ARGV[2], tonumber(ARGV[5]), tonumber(ARGV[6])
local expired = expire(now, ttl, %d)
if ARGV[9] == '1' and (redis.call('EXISTS', P .. 'r:' .. m) == 0 or redis.call('HEXISTS', P .. 'sizes', m) == 1) then
  local t = totals()
  return {0, expired, 0, 0, t[1], t[2]}
end
remove(m)
local ms = math.floor(ttl * 1000)
redis.call('SET', P .. 'r:' .. m, ARGV[3], 'PX', ms)
redis.call('ZADD', P .. 'order', now, m)
redis.call('HSET', P .. 'sizes', m, ARGV[4])
redis.call('INCRBY', P .. 'bytes', ARGV[4])
for i = 12, #ARGV do redis.call('SET', P .. 'i:' .. ARGV[10] .. '|' .. ARGV[i], ARGV[11], 'PX', ms) end
local by_count, by_bytes = 0, 0
while true do
  local t = totals()
  if t[1] > tonumber(ARGV[7]) then by_count = by_count + 1
  elseif t[2] > tonumber(ARGV[8]) then by_bytes = by_bytes + 1
  else return {1, expired, by_count, by_bytes, t[1], t[2]} end
  remove(redis.call('ZRANGE', P .. 'order', 0, 0)[1])
end
""" % SWEEP_IN_WRITE

# ARGV: prefix, member -> 1 when a record (stored or registered) was deleted
_DELETE = _LIB + "return remove(ARGV[2])"
# ARGV: prefix, member: a registration (not a stored record) forgotten
_ABANDON = _LIB + """
if redis.call('HEXISTS', P .. 'sizes', ARGV[2]) == 0 then redis.call('DEL', P .. 'r:' .. ARGV[2]) end
return 0
"""
# ARGV: prefix, scope, item id -> the record that holds it, or false
_ITEM = """
local id = redis.call('GET', ARGV[1] .. 'i:' .. ARGV[2] .. '|' .. ARGV[3])
if not id then return false end
return redis.call('GET', ARGV[1] .. 'r:' .. ARGV[2] .. '|' .. id)
"""
# ARGV: prefix, ttl, now, limit -> expired, count, bytes
_SWEEP = _LIB + """
local n = expire(tonumber(ARGV[3]), tonumber(ARGV[2]), tonumber(ARGV[4]))
local t = totals()
return {n, t[1], t[2]}
"""


class RedisStore:
    """``state.Store`` on a Redis or Valkey server; see the module docstring."""

    def __init__(self, url: str, size: int, ttl: float, max_bytes: int, on_event: OnEvent) -> None:
        try:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
            from redis.exceptions import ConnectionError as Lost, RedisError
        except ImportError:
            raise ConfigError("--state redis:// needs the redis extra: pip install 'toolbridge[redis]'") from None
        parts = urlsplit(url)
        self.name = urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2], query=""))
        password = None if parts.password else os.environ.get("TOOLBRIDGE_STATE_PASSWORD") or None
        # One retry at once for a lost connection (a pooled one the server closed, as after a
        # restart), none for a timeout: a store that slow answers 503 after TIMEOUT_SECONDS.
        self._client = aioredis.Redis.from_url(url, password=password, socket_timeout=TIMEOUT_SECONDS,
                                               socket_connect_timeout=TIMEOUT_SECONDS,
                                               retry=Retry(NoBackoff(), 1, supported_errors=(Lost,)))
        self._errors: tuple[type[BaseException], ...] = (RedisError, OSError, asyncio.TimeoutError)
        self._scripts = {name: self._client.register_script(text) for name, text in
                         (("put", _PUT), ("delete", _DELETE), ("abandon", _ABANDON), ("item", _ITEM),
                          ("sweep", _SWEEP))}
        self.size, self.ttl, self.max_bytes = size, ttl, max_bytes
        self.count = self.bytes = 0  # as the last write, sweep or ping found them
        self._on_event = on_event
        self._tasks: set[asyncio.Task[Any]] = set()  # abandons in flight

    async def put(self, scope: str, record: Record) -> bool:
        return await self._store(scope, record, finish=False)

    async def begin(self, scope: str, record: Record) -> None:
        if self.size > 0:
            value = _dumps(record, pending=True)
            await self._call(self._client.set(_record_key(scope, record.response["id"]), value,
                                              px=int(self.ttl * 1000)))

    async def finish(self, scope: str, record: Record) -> bool:
        return await self._store(scope, record, finish=True)

    def abandon(self, scope: str, record_id: str) -> None:
        """Forget a registration, without waiting (it would expire anyway)."""
        try:
            task = asyncio.get_running_loop().create_task(self._abandon(scope, record_id))
        except RuntimeError:
            return  # (not on the loop: left to expire)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def get(self, scope: str, record_id: str) -> Record | None:
        value = await self._call(self._client.get(_record_key(scope, record_id)))
        if value is None:
            self._on_event("miss")
            return None
        return _record(value)

    async def item(self, scope: str, item_id: str) -> dict[str, Any] | None:
        value = await self._call(self._scripts["item"](args=[PREFIX, scope, item_id]))
        found = None
        if value is not None:
            record = _record(value)
            found = record.item(item_id) if record.conversation is not None else None
        if found is None:
            self._on_event("miss")
        return found

    async def delete(self, scope: str, record_id: str) -> bool:
        return bool(await self._call(self._scripts["delete"](args=[PREFIX, _member(scope, record_id)])))

    async def sweep(self) -> None:
        while True:
            expired, self.count, self.bytes = await self._call(
                self._scripts["sweep"](args=[PREFIX, self.ttl, time.time(), SWEEP_BATCH]))
            for _ in range(expired):
                self._on_event("expired")
            if expired < SWEEP_BATCH:
                return

    async def ping(self) -> bool:
        await self._call(self._client.ping())
        return True

    async def close(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._client.aclose()

    async def _store(self, scope: str, record: Record, finish: bool) -> bool:
        if refused(record, self.size, self.max_bytes, self._on_event):
            return False
        record_id = record.response["id"]
        args = [PREFIX, _member(scope, record_id), _dumps(record), record.size, self.ttl, time.time(), self.size,
                self.max_bytes, int(finish), scope, record_id, *(item["id"] for item in record.items())]
        stored, expired, by_count, by_bytes, self.count, self.bytes = await self._call(
            self._scripts["put"](args=args))
        for event, times in (("expired", expired), ("count", by_count), ("bytes", by_bytes),
                             ("stored", stored)):
            for _ in range(times):
                self._on_event(event)
        return bool(stored)

    async def _abandon(self, scope: str, record_id: str) -> None:
        try:
            await self._call(self._scripts["abandon"](args=[PREFIX, _member(scope, record_id)]))
        except StoreUnavailable:
            pass  # a registration left behind expires with its ttl

    async def _call(self, step: Any) -> Any:
        try:
            return await step
        except self._errors as exc:
            raise StoreUnavailable(f"the Redis store {self.name}: {type(exc).__name__}: {exc}") from None


def _member(scope: str, record_id: str) -> str:
    return f"{scope}|{record_id}"  # (a scope has no "|": ``scope.Scopes``)


def _record_key(scope: str, record_id: str) -> str:
    return f"{PREFIX}r:{scope}|{record_id}"


def _dumps(record: Record, pending: bool = False) -> bytes:
    return orjson.dumps({"response": record.response, "conversation": None if pending else record.conversation,
                         "inputs": record.inputs, "size": record.size, "pending": pending})


def _record(value: bytes) -> Record:
    data = orjson.loads(value)
    return Record(data["response"], None if data["pending"] else data["conversation"], data["size"],
                  data["inputs"])
