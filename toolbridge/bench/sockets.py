"""``toolbridge bench --socket``: the Responses API over WebSocket against HTTP, and what an idle
socket costs.

Method: the gateway is ``python -m toolbridge serve`` (the real command, its defaults, the
``hermes`` parser) in its own process on one core, the scripted upstream (``model``,
``upstream_main``) in another process and the clients in this one, both on the other core.

- A 20-turn tool loop, the benchmark's agent request (instructions, tools) and a model that calls
  ``read_file`` 19 times (each result 1,500 characters) then answers, streamed, in three ways:
  ``socket``: one WebSocket, each turn only its new items (the tool's output) and
  ``previous_response_id`` (``store: false``: the socket holds the previous response);
  ``http full``: ``POST /v1/responses`` (keep-alive) with the whole history each turn; ``http
  prev``: POST with ``previous_response_id`` and the new items (``store: true``). Every loop is a
  session on a connection of its own, kept for its turns, in all three modes.
- Per turn: the gateway's overhead, its CPU time (``/proc/PID/task/*/schedstat``, the
  scheduler's own nanosecond count) from the turn's request to the next one's, so that what it
  does once an answer is sent counts in its turn; with the upstream scripted and the same in
  every mode, the modes' differences are the gateway's and its transport's. Beside it, the time
  from sending the request to the last event at the client (which also holds the client's own
  reading: this Python client parses each of a socket answer's ~13 frames, where over HTTP it
  reads one body) and the bytes the client sends (the body, or the message before compression;
  HTTP adds its request head, about 150 bytes). Medians over ``--repeat`` rounds (40: over 20,
  a turn's median ratio still moved by some 7% from run to run on the busy machine, the highest
  of the 40 compared falling on a different turn each run; over 40, the highest against the full
  history was the second turn in both runs, the one instruction counts put highest); a round runs
  one loop of each mode back to back (the order rotating), and the socket is compared with each
  HTTP mode turn by turn within a round, the verdict on the median of those ratios (``paired``).
- 1,000 idle sockets (each offering ``permessage-deflate`` as Codex does) on a fresh gateway
  process: its RSS after they are open minus before, per socket.

Why CPU, separate processes and cores: measured first by the client's time with the upstream on
the client's event loop and every process on both cores, the socket lost about 0.3 ms a turn,
nearly all of it the Python client decoding frames (the upstream's chunks waiting behind it, and
the client's work on the gateway's core), not the gateway.

Goals (PASS/FAIL): the socket's gateway CPU at or below both HTTP modes' on every turn (within
10%, the noise of a shared machine), the socket's bytes flat in the turn number (the last turn's
within 20% of the second's), and an idle socket <= 64 KiB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

import orjson

from ..gateway.http.client import UpstreamPool
from ..gateway.replay.upstream import Reply, ReplayUpstream
from .fronts import responses_request
from .gateway import LOAD_CPU, SERVER_CPU, Procs
from .ports import free_port

TURNS = 20
PACE = 0.001  # seconds between the upstream's chunks (a model streaming some 16,000 tokens a second)
SETTLE = 0.003  # seconds a turn's gateway CPU is counted past its last event (``cpu_after``)
RESULT = "x = 1  # a line of the file that was read\n" * 36  # ~1,500 characters
IDLE_GOAL = 64 << 10
MODES = ("socket", "http full", "http prev")


def model(body: dict[str, Any]) -> Reply:
    """Calls read_file until 19 results are in, then answers."""
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done < TURNS - 1:
        call = '<tool_call>\n{"name": "read_file", "arguments": {"path": "src/part%d.py"}}\n</tool_call>' % done
        return Reply(content=f"Reading part {done}.\n{call}", chunk=64, pace=PACE)
    return Reply(content="All parts are read; nothing to change.", chunk=64, pace=PACE)


def first_body() -> dict[str, Any]:
    body = responses_request(True)  # (its tools include read_file)
    body["input"] = [{"type": "message", "role": "user", "content": body["input"]}]
    return body


def outputs(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function_call_output", "call_id": o["call_id"], "output": RESULT}
            for o in response["output"] if o["type"] == "function_call"]


def last_event(data: bytes) -> dict[str, Any]:
    at = data.rfind(b"data: ")
    if at < 0:
        raise RuntimeError(f"the turn was answered {data[:300]!r}")
    event = orjson.loads(data[at + 6:])
    if event["type"] != "response.completed":
        raise RuntimeError(f"the turn ended with {event['type']}: {str(event)[:300]}")
    return event["response"]  # type: ignore[no-any-return]


Turn = tuple[float, int, float]  # seconds at the client, bytes sent, the gateway's CPU seconds


async def http_loop(port: int, previous: bool, pid: int) -> list[Turn]:
    """One loop on a connection of its own (as a socket's loop has), kept alive across its turns."""
    pool = UpstreamPool("127.0.0.1", port, read_timeout=60)
    try:
        return await _http_turns(pool, previous, pid)
    finally:
        await pool.close()


async def _http_turns(pool: UpstreamPool, previous: bool, pid: int) -> list[Turn]:
    base = {**first_body(), "store": previous}  # (previous_response_id needs the first one stored)
    history = list(base["input"])
    body, out, starts = base, [], []  # type: ignore[var-annotated]
    for _ in range(TURNS):
        data = orjson.dumps(body)
        starts.append(cpu_ns(pid))
        started = time.perf_counter()
        async with pool.request("POST", "/v1/responses", [(b"content-type", b"application/json")], data) as up:
            answer = await up.read(64 << 20)
        out.append((time.perf_counter() - started, len(data), 0.0))
        response = last_event(answer)
        new = outputs(response)
        history += [*response["output"], *new]
        body = ({**base, "previous_response_id": response["id"], "input": new} if previous
                else {**base, "input": history})
    return await per_turn(pid, out, starts)


class LeanSocket(asyncio.Protocol):
    """A WebSocket client that costs little per message (websockets' sans-I/O client on an
    asyncio protocol, offering permessage-deflate as Codex does), so that a turn's time is the
    gateway's and not a client library's."""

    async def open(self, port: int) -> None:
        from websockets.client import ClientProtocol
        from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
        from websockets.uri import parse_uri

        self.proto = ClientProtocol(parse_uri(f"ws://127.0.0.1:{port}/v1/responses"), max_size=None,
                                    extensions=[ClientPerMessageDeflateFactory()])
        loop = asyncio.get_running_loop()
        self.waiter: asyncio.Future[bytes | None] = loop.create_future()
        self.transport, _ = await loop.create_connection(lambda: self, "127.0.0.1", port)
        self.proto.send_request(self.proto.connect())
        self.transport.write(b"".join(self.proto.data_to_send()))
        await self.waiter
        if self.proto.handshake_exc is not None:
            raise RuntimeError(f"the handshake failed: {self.proto.handshake_exc}")

    def data_received(self, data: bytes) -> None:
        self.proto.receive_data(data)
        for event in self.proto.events_received():
            last = getattr(event, "status_code", None) is not None or event.data.startswith(LAST)
            if last and not self.waiter.done():
                self.waiter.set_result(None if hasattr(event, "status_code") else bytes(event.data))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.waiter.done():
            self.waiter.set_exception(RuntimeError(f"the socket closed: {exc}"))

    async def turn(self, data: bytes) -> bytes:
        """Send one message; the turn's last message."""
        self.waiter = asyncio.get_running_loop().create_future()
        self.proto.send_text(data)
        self.transport.write(b"".join(self.proto.data_to_send()))
        got = await self.waiter
        assert got is not None
        return got

    def close(self) -> None:
        self.transport.close()


LAST = (b'{"type":"response.completed"', b'{"type":"error"', b'{"type":"response.failed"',
        b'{"type":"response.incomplete"')


async def socket_loop(port: int, pid: int) -> list[Turn]:
    base = first_body()
    body: dict[str, Any] = {"type": "response.create", **base}
    out: list[Turn] = []
    starts: list[int] = []
    ws = LeanSocket()
    await ws.open(port)
    try:
        for _ in range(TURNS):
            data = orjson.dumps(body)
            starts.append(cpu_ns(pid))
            started = time.perf_counter()
            message = await ws.turn(data)
            out.append((time.perf_counter() - started, len(data), 0.0))
            response = last_event(b"data: " + message)
            body = {"type": "response.create", **base, "previous_response_id": response["id"],
                    "input": outputs(response)}
        return await per_turn(pid, out, starts)
    finally:
        ws.close()


def cpu_ns(pid: int) -> int:
    """Nanoseconds ``pid``'s threads have run (``/proc/PID/task/*/schedstat``: the scheduler's
    own count, exact where ``/proc/PID/stat``'s ticks are 10 ms)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


async def per_turn(pid: int, out: list[Turn], starts: list[int]) -> list[Turn]:
    """Each turn's gateway CPU: from before its request to before the next one's (so that what
    the gateway does once an answer is sent, its log line and what it keeps, counts in its
    turn), the last one's to a moment after its last event."""
    await asyncio.sleep(SETTLE)
    ends = [*starts[1:], cpu_ns(pid)]
    return [(t, n, (end - start) / 1e9) for (t, n, _), start, end in zip(out, starts, ends)]


def cpu(pid: int) -> float:
    """Seconds of CPU ``pid`` has used (user and system)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def loops(port: int, pid: int, repeat: int) -> tuple[dict[str, list[list[Turn]]], dict[str, float]]:
    """Each mode's loops (per turn: seconds, bytes sent, gateway CPU) and the gateway's CPU per
    turn over all loops."""
    runs: dict[str, list[list[Turn]]] = {m: [] for m in MODES}
    used = dict.fromkeys(MODES, 0.0)
    for n in range(repeat + 1):  # the first round warms up (not counted)
        for mode in MODES[n % 3:] + MODES[:n % 3]:  # (the order rotates)
            before = cpu(pid)
            if mode == "socket":
                got = await socket_loop(port, pid)
            else:
                got = await http_loop(port, mode == "http prev", pid)
            if n:
                runs[mode].append(got)
                used[mode] += cpu(pid) - before
    return runs, {m: 1000 * used[m] / (repeat * TURNS) for m in MODES}


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


async def open_idle(port: int, count: int) -> list[asyncio.StreamWriter]:
    """``count`` sockets through their handshake (offering permessage-deflate), left open."""
    head = (b"GET /v1/responses HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade\r\nupgrade: websocket\r\n"
            b"sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"sec-websocket-extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
    writers = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head)
        answer = await reader.readuntil(b"\r\n\r\n")
        if not answer.startswith(b"HTTP/1.1 101"):
            raise RuntimeError(f"the handshake was answered {answer[:40]!r}")
        writers.append(writer)
    return writers


async def idle(procs: Procs, upstream: str, count: int) -> dict[str, float]:
    port = free_port()
    argv = ["-m", "toolbridge", "serve", "--port", str(port), "--upstream", upstream, "--log-level", "warning"]
    proc = await asyncio.to_thread(procs.start, argv, os.sched_getaffinity(0), port)
    try:
        for w in await open_idle(port, 20):  # (what a first socket makes once)
            w.close()
        await asyncio.sleep(0.5)
        before = rss(proc.pid)
        writers = await open_idle(port, count)
        await asyncio.sleep(0.5)
        after = rss(proc.pid)
        for w in writers:
            w.close()
    finally:
        procs.stop(proc)
    return {"sockets": count, "rss_before_mb": before / 2**20, "rss_after_mb": after / 2**20,
            "bytes_per_socket": (after - before) / count}


def upstream_main(port: int) -> None:
    """The scripted upstream (``model``) on ``port`` until ended: ``bench`` runs it in a process
    of its own, so that its answers are not paced by the clients' work on the same event loop."""
    async def serve() -> None:
        async with ReplayUpstream(model, port=port):
            await asyncio.Event().wait()

    asyncio.run(serve())


async def bench(a: argparse.Namespace) -> dict[str, Any]:
    """The figures (this process runs on ``LOAD_CPU`` meanwhile, then as before)."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {LOAD_CPU})
    try:
        return await _bench(a)
    finally:
        os.sched_setaffinity(0, before)


async def _bench(a: argparse.Namespace) -> dict[str, Any]:
    procs = Procs(0)
    cpus = {LOAD_CPU}  # the upstream and the clients (this process) on one core, the gateway on the other
    up = free_port()
    upstream = await asyncio.to_thread(procs.start, ["-c", "import sys; from toolbridge.bench.sockets import "
                                                     "upstream_main; upstream_main(int(sys.argv[1]))", str(up)],
                                       cpus, up)
    url = f"http://127.0.0.1:{up}/v1"
    try:
        port = free_port()
        argv = ["-m", "toolbridge", "serve", "--port", str(port), "--upstream", url,
                "--tool-call-parser", "hermes", "--log-level", "warning"]
        proc = await asyncio.to_thread(procs.start, argv, {SERVER_CPU}, port)
        try:
            runs, gateway_cpu = await loops(port, proc.pid, a.repeat)
        finally:
            procs.stop(proc)
        idle_figures = await idle(procs, url, a.sockets)
    finally:
        procs.stop(upstream)
    turns = {mode: [{"ms": 1000 * statistics.median(r[k][0] for r in runs[mode]), "bytes": runs[mode][0][k][1],
                     "cpu_ms": 1000 * statistics.median(r[k][2] for r in runs[mode])}
                    for k in range(TURNS)] for mode in MODES}
    return {"turns": turns, "paired": paired(runs), "gateway_cpu_ms_per_turn": gateway_cpu,
            "idle": idle_figures, "repeat": a.repeat}


def paired(runs: dict[str, list[list[Turn]]]) -> dict[str, list[float]]:
    """Per turn, the median over rounds of the socket's gateway CPU over each HTTP mode's in the
    same round (the three modes' loops of a round run back to back, so a change in the machine's
    load between rounds does not pass for a difference between modes)."""
    sock = runs["socket"]
    return {m: [statistics.median(s[k][2] / o[k][2] for s, o in zip(sock, runs[m])) for k in range(TURNS)]
            for m in MODES[1:]}


def verdicts(figures: dict[str, Any]) -> dict[str, bool]:
    t = figures["turns"]
    sock = t["socket"]
    return {
        "time": all(r <= 1.1 for m in figures["paired"] for r in figures["paired"][m]),
        "bytes": sock[-1]["bytes"] <= 1.2 * sock[1]["bytes"],
        "idle": figures["idle"]["bytes_per_socket"] <= IDLE_GOAL,
    }


def report(figures: dict[str, Any]) -> str:
    t, v = figures["turns"], verdicts(figures)
    word = {True: "PASS", False: "FAIL"}
    lines = [f"Responses over WebSocket: a {TURNS}-turn tool loop (median of {figures['repeat']} loops; per turn: "
             "the gateway's CPU ms / the client's ms from request to last event / bytes the client sends)",
             f"  {'turn':>4}  " + "  ".join(f"{m:>24}" for m in MODES)]
    for k in range(TURNS):
        lines.append(f"  {k + 1:>4}  " + "  ".join(
            f"{t[m][k]['cpu_ms']:>6.3f} / {t[m][k]['ms']:>5.2f} / {t[m][k]['bytes']:>7}" for m in MODES))
    total = {m: (sum(r["cpu_ms"] for r in t[m]), sum(r["ms"] for r in t[m]), sum(r["bytes"] for r in t[m]))
             for m in MODES}
    lines.append("   all  " + "  ".join(f"{total[m][0]:>6.2f} / {total[m][1]:>5.1f} / {total[m][2]:>7}" for m in MODES))
    used = figures["gateway_cpu_ms_per_turn"]
    lines.append("  gateway CPU per turn over all loops (ms, /proc ticks): "
                 + ", ".join(f"{m} {used[m]:.2f}" for m in MODES))
    lines.append("  (the client's time also holds its own decoding: a Python client parses each of a socket "
                 "answer's ~13 frames, where over HTTP it reads one body)")
    for m, ratios in figures["paired"].items():
        within = sum(r <= 1.1 for r in ratios)
        lines.append(f"  socket's gateway CPU against {m}, each turn against the same round's: within 10% on "
                     f"{within} of {TURNS} turns (median ratios {min(ratios):.2f}-{max(ratios):.2f}x, "
                     f"turn {1 + ratios.index(max(ratios))} highest), {total['socket'][0] / total[m][0]:.2f}x "
                     "over the loop")
    lines.append(f"  socket's gateway CPU at or below HTTP's on every turn (within 10%): {word[v['time']]}")
    lines.append(f"  socket bytes flat in the turn number (turn {TURNS} {t['socket'][-1]['bytes']} B, "
                 f"turn 2 {t['socket'][1]['bytes']} B): {word[v['bytes']]}")
    i = figures["idle"]
    lines.append(f"  {i['sockets']} idle sockets: {i['bytes_per_socket'] / 1024:.1f} KiB each (RSS "
                 f"{i['rss_before_mb']:.1f} -> {i['rss_after_mb']:.1f} MB; goal <= 64 KiB): {word[v['idle']]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="toolbridge bench --socket", description=(__doc__ or "").split("\n")[0])
    p.add_argument("--repeat", type=int, default=40, help="loops per mode (default 40)")
    p.add_argument("--sockets", type=int, default=1000, help="idle sockets (default 1000)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = p.parse_args(sys.argv[1:] if argv is None else argv)
    figures = asyncio.run(bench(a))
    print(json.dumps({**figures, "verdicts": verdicts(figures)}, indent=1) if a.json else report(figures))
    return 0  # (a goal's FAIL is in the report, as the other benches give it: make bench goes on to the next)
