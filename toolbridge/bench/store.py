"""What the Responses front's store costs per response, with caller scopes and byte accounting.

In process, one ``ResponsesFront`` on its defaults (256 responses, 256 MiB), the benchmark's agent
turn as a Responses request (instructions, the tools, the user's message) from a caller with
its own ``Authorization``, answered with the script's content and ``edit_file`` call, in one
run, alternating batches:

- ``unstored``: the request read and answered with ``store: false`` (``turn``, ``plan_turn``,
  ``whole``): what every response costs, the baseline;
- ``stored``: the same with ``store: true``: the caller's scope computed (a keyed hash of its
  credential), the conversation built, the entry accounted and put (the store is full from the
  first batch on, so each put also evicts one);
- ``put``: the store's own part of ``stored``: one entry put (accounted, the oldest evicted);
- ``get``: ``GET /v1/responses/{id}``'s work: the caller's scope, then the lookup.

Figures: microseconds per response (the median of the batches), what storing adds (``stored`` -
``unstored``), and the bytes one stored response is accounted beside its JSON. The last stored
response is read back and compared, and the store's count checked: a store that lost them
cannot pass for a fast one.

Then each backend (``--state``), in one event loop, one after the other (``backends``): the same
turn answered unstored and stored (the turn, the answer, and the awaited ``keep``), and ``GET``,
through a front on ``memory``, on a SQLite file in a temporary folder, and on a real Valkey/Redis
server on loopback (``valkey``; the row says why when none can be run): what a stored response
costs on each beside its unstored twin. SQLite and Redis pay a thread hop or a round trip per
operation; their figures are latency per response, one request at a time, not throughput.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import orjson

from ..gateway.config import GatewayConfig
from ..gateway.fronts.responses import ResponsesFront
from ..gateway.state.memory import ResponseStore
from ..gateway.http.server import Request
from ..gateway.turn import Settings, plan_turn
from .fronts import responses_request
from .script import CALL_ARGS, CALL_NAME, LEAD, MODEL
from .valkey import Server, missing, server_binary

T = TypeVar("T")


def _answer() -> dict[str, Any]:
    """The upstream's answer, as the pipeline gives it to the front (repaired)."""
    call = {"id": "call_bench", "type": "function",
            "function": {"name": CALL_NAME, "arguments": json.dumps(CALL_ARGS)}}
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": 1, "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": LEAD, "tool_calls": [call]}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020}}


def _request(store: bool) -> Request:
    body = orjson.dumps({**responses_request(False), "store": store})
    headers = [(b"content-type", b"application/json"),
               (b"authorization", b"Bearer sk-bench-tenant-0123456789")]
    return Request("POST", "/v1/responses", "1.1", headers, body, True)


def _puts(store: ResponseStore, response: dict[str, Any], size: int, batch: int) -> float:
    """Seconds per ``store.put`` of ``batch`` copies of ``response`` (made before the clock
    starts) into ``store``."""
    entries = [({**response, "id": f"{response['id']}-{i}"}, [], size) for i in range(batch)]
    started = time.perf_counter()
    for entry in entries:
        store.put("scope", *entry)
    return (time.perf_counter() - started) / batch


def _run(step: Coroutine[Any, Any, T]) -> T:
    """A coroutine of the memory store, which never waits, run to its end without a loop."""
    try:
        step.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    step.close()
    raise RuntimeError("the memory store's operation waited")


def measure(quick: bool = False) -> dict[str, Any]:
    """``{"us": {"unstored", "stored", "put", "get", "added"}, "bytes_accounted", "json_bytes",
    "request_bytes", "stored", "problems"}``."""
    front = ResponsesFront(GatewayConfig(upstream="http://127.0.0.1:1/v1"))
    answer, settings = _answer(), Settings("hermes")
    requests = {False: _request(False), True: _request(True)}
    batch, rounds = (100, 5) if quick else (200, 15)
    times: dict[str, list[float]] = {"unstored": [], "stored": [], "put": [], "get": []}
    made: list[tuple[str, bytes]] = []
    bodies: list[bytes] = []

    def respond(store: bool) -> bytes:
        req = requests[store]
        turn = front.turn(orjson.loads(req.body), req)
        plan = plan_turn(turn, settings)
        body = front.whole(answer, plan)
        if store:  # (the memory store's put: awaited without a wait)
            _run(front.keep(plan))
        return body

    core = front.store.core  # type: ignore[attr-defined]  # (the memory store's)
    puts = ResponseStore(front.store.size, front.store.ttl, front.store.max_bytes)  # (beside the front's)
    for _ in range(rounds):
        for store in (False, True):
            started = time.perf_counter()
            bodies = [respond(store) for _ in range(batch)]
            times["stored" if store else "unstored"].append((time.perf_counter() - started) / batch)
        made = [(orjson.loads(body)["id"], body) for body in bodies]
        accounted = front.store.bytes // front.store.count
        times["put"].append(_puts(puts, orjson.loads(bodies[-1]), accounted, batch))
        started = time.perf_counter()
        for rid, _ in made:
            _run(front.stored(requests[True], rid))
        times["get"].append((time.perf_counter() - started) / batch)
    problems = [f"the stored response {rid} is not read back whole" for rid, sent in made
                if orjson.dumps(_run(front.stored(requests[True], rid))) != sent][:1]
    if len(core) != min(front.store.size, batch * rounds):
        problems.append(f"the store holds {len(core)} responses")
    us = {kind: round(1e6 * statistics.median(values), 1) for kind, values in times.items()}
    us["added"] = round(us["stored"] - us["unstored"], 1)
    store = front.store
    backends = asyncio.run(_backends(quick))
    problems += [f"{name}: {problem}" for name, row in backends.items() for problem in row.get("problems", [])]
    return {"us": us, "bytes_accounted": store.bytes // max(store.count, 1), "json_bytes": len(bodies[-1]),
            "request_bytes": len(requests[True].body), "stored": store.count, "backends": backends,
            "problems": problems}


async def _backends(quick: bool) -> dict[str, Any]:
    """``{backend: {"us": {"unstored", "stored", "added", "get"}, "problems"} or {"skipped": why}}``."""
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        rows["memory"] = await _backend("memory", quick)
        rows["sqlite"] = await _backend(f"sqlite:///{folder}/state.sqlite3", quick)
    why = missing()
    if why is not None:
        rows["redis"] = {"skipped": why}
        return rows
    server = Server(server_binary() or "").start()
    try:
        rows["redis"] = await _backend(server.url, quick)
    finally:
        server.kill()
    return rows


async def _backend(url: str, quick: bool) -> dict[str, Any]:
    """One backend's row (see the module docstring)."""
    front = ResponsesFront(GatewayConfig(upstream="http://127.0.0.1:1/v1", state=url))
    answer, settings = _answer(), Settings("hermes")
    requests = {False: _request(False), True: _request(True)}
    batch, rounds = (30, 3) if quick else (200, 7)
    times: dict[str, list[float]] = {"unstored": [], "stored": [], "get": []}
    made: list[tuple[str, bytes]] = []

    async def respond(store: bool) -> bytes:
        req = requests[store]
        turn = front.turn(orjson.loads(req.body), req, await front.load(req))
        plan = plan_turn(turn, settings)
        body = front.whole(answer, plan)
        kept = front.keep(plan)  # (None: nothing to keep)
        if kept is not None:
            await kept
        return body

    try:
        for _ in range(rounds):
            for store in (False, True):
                started = time.perf_counter()
                bodies = [await respond(store) for _ in range(batch)]
                times["stored" if store else "unstored"].append((time.perf_counter() - started) / batch)
            made = [(orjson.loads(body)["id"], body) for body in bodies]
            started = time.perf_counter()
            for rid, _ in made:
                await front.stored(requests[True], rid)
            times["get"].append((time.perf_counter() - started) / batch)
        problems = [f"the stored response {rid} is not read back whole" for rid, sent in made
                    if orjson.dumps(await front.stored(requests[True], rid)) != sent][:1]
    finally:
        await front.store.close()
    us = {kind: round(1e6 * statistics.median(values), 1) for kind, values in times.items()}
    us["added"] = round(us["stored"] - us["unstored"], 1)
    return {"us": us, "problems": problems}


def report(figures: dict[str, Any]) -> str:
    us = figures["us"]
    rows = []
    for name, row in figures.get("backends", {}).items():
        if "skipped" in row:
            rows.append(f"{name}: not measured ({row['skipped']})")
        else:
            b = row["us"]
            rows.append(f"{name}: unstored {b['unstored']:.1f} us, stored {b['stored']:.1f} us "
                        f"(+{b['added']:.1f} us), GET {b['get']:.1f} us")
    backends = ("\nStores (--state), per response, one at a time, in one loop: " + "; ".join(rows)) if rows else ""
    return (f"Responses store (per response, scoped and byte-accounted; {figures['stored']} kept, "
            f"the store full): unstored {us['unstored']:.1f} us, stored {us['stored']:.1f} us "
            f"(+{us['added']:.1f} us, of which the put {us['put']:.1f} us), GET {us['get']:.1f} us; "
            f"{figures['bytes_accounted']} bytes accounted each (request {figures['request_bytes']} x 2 "
            f"+ response JSON {figures['json_bytes']} x 2)" + backends)
