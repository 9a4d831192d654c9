"""The gateway benchmark's load generator: one process, raw asyncio + httptools on uvloop.

Adapted from benchmarks/stack/loadgen.py (same method, same sampling); prints one JSON object.

``stream``: ``--streams`` clients, each on its own connection running one streamed request;
starts spread uniformly over ``--ramp`` seconds, so the streams' 30/s schedules have random
phases. The receive time of every SSE event (CLOCK_MONOTONIC, taken once per socket read) and
its bytes are kept; nothing else is done while the streams run. Afterwards, outside the
measured window: the upstream's send log is fetched, every stream is decoded and checked
against the ``Script`` (chunk count, and the assembled message: the tool call for the gateway,
the verbatim text for a plain proxy), and each chunk's delay is its receive time minus the send
time of the upstream chunk it comes from (``Script.sources``). ``call_delay_ms``: the same
delay for one chunk of each stream, the one that brings the client the call's last character
(``Script.call_source``: through the gateway, the chunk the whole call comes in; through a
plain proxy, that upstream chunk relayed), so the time from a call's end to its bytes on the
wire has the floor's beside it. ``lost`` = upstream chunks of the streams started minus those
whose output reached a client.

``plain``: ``--clients`` connections sending non-streamed requests back to back for
``--warmup`` + ``--duration`` seconds; requests completed in the last ``--duration`` seconds
give req/s and latency. The first answer on each connection is checked afterwards.

``--pid NAME=PID[,PID...]`` samples processes over the measured window (CPU from
/proc/PID/task/*/schedstat, VmRSS at start and at its peak every 100 ms), summed per name, and
the cores the rest of the machine kept busy meanwhile (``other_load``, from /proc/stat).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from typing import Any

import httptools
import orjson

from .script import DIALECTS, PATH, Script, check_message, has_call
from ..gateway.http.sse import SSEDecoder


def _request(host: str, body: bytes, path: str = PATH) -> bytes:
    return (b"POST %s HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\n"
            b"content-length: %d\r\n\r\n" % (path.encode(), host.encode(), len(body)) + body)


# ---------------------------------------------------------------- process sampling


def cpu_seconds(pid: int) -> float:
    """On-CPU seconds of a process, summed over its threads' schedstat."""
    ns = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                ns += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return ns / 1e9


def busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1])
    return 0


class Sampler:
    """CPU and peak RSS of named groups of processes over a window."""

    def __init__(self, pids: dict[str, list[int]]) -> None:
        self.pids = {**pids, "loadgen": [os.getpid()]}
        self.cpu0: dict[str, float] = {}
        self.rss0: dict[str, int] = {}
        self.rss_peak: dict[str, int] = {}
        self.t0 = self.busy0 = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def _cpu(self, name: str) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids[name])

    def _rss(self, name: str) -> int:
        return sum(rss_kb(pid) for pid in self.pids[name])

    def begin(self) -> None:
        self.t0, self.busy0 = time.monotonic(), busy_seconds()
        for name in self.pids:
            self.cpu0[name] = self._cpu(name)
            self.rss0[name] = self.rss_peak[name] = self._rss(name)
        self._tick()

    def _tick(self) -> None:
        for name in self.pids:
            self.rss_peak[name] = max(self.rss_peak[name], self._rss(name))
        self._handle = asyncio.get_running_loop().call_later(0.1, self._tick)

    def end(self) -> dict[str, Any]:
        wall, busy = time.monotonic() - self.t0, busy_seconds() - self.busy0
        if self._handle:
            self._handle.cancel()
        out: dict[str, Any] = {"wall_s": wall}
        for name in self.pids:
            cpu = self._cpu(name) - self.cpu0[name]
            out[name] = {"cpu_s": cpu, "util": cpu / wall, "rss0_kb": self.rss0[name],
                         "rss_peak_kb": self.rss_peak[name]}
        ours = sum(out[name]["cpu_s"] for name in self.pids)
        out["other_load"] = max(0.0, (busy - ours) / wall)  # cores busy with other work
        return out


def pct(values: list[float], p: float) -> float:
    """The p-quantile of sorted values (nearest rank below), NaN when there are none."""
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


# ---------------------------------------------------------------- streams


class StreamClient(asyncio.Protocol):
    """One connection, one streamed request; keeps each event's bytes and receive time."""

    def __init__(self, request: bytes, done: Any) -> None:
        self.request, self.done = request, done
        self.parser = httptools.HttpResponseParser(self)
        self.decoder = SSEDecoder()
        self.events: list[bytes] = []
        self.received: list[int] = []
        self.status = 0
        self.complete = False  # [DONE] and the end of the response came
        self.now = 0
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.now = time.monotonic_ns()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.abort()

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        for event in self.decoder.feed(body):
            self.events.append(event)
            self.received.append(self.now)

    def on_message_complete(self) -> None:
        self.complete = self.events[-1:] == [b"[DONE]"]
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.done(self)


async def run_streams(args: argparse.Namespace, sampler: Sampler) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    script = Script.build(args.dialect, args.args)
    sources = script.sources(args.translated)
    host, port = args.target.rsplit(":", 1)
    request = _request(args.target, script.request(True))
    clients: list[StreamClient] = []
    all_done = loop.create_future()
    pending = args.streams

    def done(_: StreamClient | None = None) -> None:
        nonlocal pending
        pending -= 1
        if pending == 0 and not all_done.done():
            all_done.set_result(None)

    async def client(delay: float) -> None:
        await asyncio.sleep(delay)
        try:
            _, proto = await loop.create_connection(lambda: StreamClient(request, done), host,
                                                    int(port))
            clients.append(proto)
        except OSError:
            done()

    sampler.begin()
    rnd = random.Random(1)
    tasks = [loop.create_task(client(rnd.random() * args.ramp)) for _ in range(args.streams)]
    budget = args.ramp + len(script.chunks) / args.rate + args.grace
    try:
        await asyncio.wait_for(asyncio.shield(all_done), budget)
    except asyncio.TimeoutError:
        pass
    proc = sampler.end()
    for task in tasks:
        task.cancel()
    for c in clients:
        c.transport.abort()
    sendlog = await _get_json(args.upstream, "/sendlog")
    return _stream_results(args, script, sources, clients, sendlog, proc)


def _stream_results(args: argparse.Namespace, script: Script, sources: list[int],
                    clients: list[StreamClient], sendlog: dict[str, list[int]],
                    proc: dict[str, Any]) -> dict[str, Any]:
    delays: list[float] = []
    call_delays: list[float] = []  # each stream's call: its last character's chunk to the client
    call_source = script.call_source()
    relayed = complete = 0
    problems: list[str] = []
    for c in clients:
        chunks = [orjson.loads(e) for e in c.events if e != b"[DONE]"]
        relayed += sources[min(len(chunks), len(sources)) - 1] + 1 if chunks else 0
        problem = (f"status {c.status}" if c.status != 200 else "incomplete" if not c.complete
                   else script.check(chunks, sources, args.translated))
        if problem:
            problems.append(problem)
            continue
        sent = sendlog.get(str(chunks[0].get("id")).rsplit("-", 1)[-1])
        if sent is None:
            problems.append(f"no upstream stream has the id {chunks[0].get('id')!r}")
            continue
        complete += 1
        delays += [(r - sent[s]) / 1e6 for r, s in zip(c.received, sources)]
        at = _call_chunk(chunks, sources, call_source, args.translated)
        if at is not None:
            call_delays.append((c.received[at] - sent[call_source]) / 1e6)  # type: ignore[index]
    delays.sort()
    call_delays.sort()
    res = {"mode": "stream", "streams": args.streams, "streams_complete": complete,
           "problems": problems[:3], "problem_count": len(problems),
           "upstream_chunks": relayed, "chunks_lost": args.streams * len(script.chunks) - relayed,
           "client_chunks_per_stream": len(sources),
           "upstream_chunks_per_stream": len(script.chunks),
           "delay_ms": {"p50": pct(delays, 0.5), "p90": pct(delays, 0.9), "p99": pct(delays, 0.99),
                        "max": delays[-1] if delays else float("nan")},
           "call_delay_ms": {"p50": pct(call_delays, 0.5), "p90": pct(call_delays, 0.9),
                             "p99": pct(call_delays, 0.99), "n": len(call_delays)},
           "proc": proc}
    for p in proc.values():
        if isinstance(p, dict) and relayed:
            p["us_per_chunk"] = p["cpu_s"] / relayed * 1e6
            p["rss_per_stream_kb"] = (p["rss_peak_kb"] - p["rss0_kb"]) / args.streams
    return res


def _call_chunk(chunks: list[dict[str, Any]], sources: list[int], call_source: int | None,
                translated: bool) -> int | None:
    """Which of a checked stream's chunks brought the client the call's last character: through
    the gateway, the one carrying the call (sent whole: out of upstream chunk ``call_source``);
    through a plain proxy, that upstream chunk relayed. None when the turn has no call."""
    if call_source is None:
        return None
    if not translated:
        return sources.index(call_source)
    for i, chunk in enumerate(chunks):
        if has_call(chunk):
            return i if sources[i] == call_source else None
    return None


async def _get_json(target: str, path: str) -> Any:
    host, port = target.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"GET %s HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n" % path.encode())
    data = await reader.read(-1)
    writer.close()
    return orjson.loads(data.split(b"\r\n\r\n", 1)[1])


# ---------------------------------------------------------------- non-streamed


class PlainClient(asyncio.Protocol):
    """One keep-alive connection sending non-streamed requests back to back."""

    def __init__(self, request: bytes, stats: dict[str, Any]) -> None:
        self.request, self.stats = request, stats
        self.first: list[bytes] | None = []  # the first answer's body, checked afterwards
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self._send()

    def _send(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.t0 = time.monotonic_ns()
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.stats["errors"] += 1
            self.transport.abort()

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        if self.first is not None:
            self.first.append(body)

    def on_message_complete(self) -> None:
        now, st = time.monotonic_ns(), self.stats
        if self.first is not None:
            st["firsts"].append(b"".join(self.first))
            self.first = None
        if st["measuring"]:
            if self.status == 200:
                st["latencies"].append((now - self.t0) / 1e6)
            else:
                st["errors"] += 1
        if st["stop"]:
            self.transport.close()
        else:
            self._send()


def plain_request(front: str, dialect: str, size: str) -> tuple[str, bytes]:
    """The path and body of a non-streamed request of ``front``: chat's the script's, another
    front's the same turn as that front's client asks for it (``fronts``)."""
    if front == "chat":
        return PATH, Script.build(dialect, size).request(False)
    from .fronts import FRONTS, request as front_request

    return FRONTS[front][1], orjson.dumps(front_request(front, False))


async def run_plain(args: argparse.Namespace, sampler: Sampler) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    host, port = args.target.rsplit(":", 1)
    path, body = plain_request(args.front, args.dialect, args.args)
    request = _request(args.target, body, path)
    stats: dict[str, Any] = {"latencies": [], "errors": 0, "firsts": [], "measuring": False,
                             "stop": False}
    await asyncio.gather(*(loop.create_connection(lambda: PlainClient(request, stats), host,
                                                  int(port)) for _ in range(args.clients)))
    await asyncio.sleep(args.warmup)
    sampler.begin()
    stats["measuring"] = True
    await asyncio.sleep(args.duration)
    stats["measuring"] = False
    proc = sampler.end()
    stats["stop"] = True
    await asyncio.sleep(0.1)
    lat, ok = sorted(stats["latencies"]), len(stats["latencies"])
    problems = [p for p in (check_answer(b, args) for b in stats["firsts"]) if p]
    res = {"mode": "plain", "clients": args.clients, "requests": ok, "errors": stats["errors"],
           "problems": problems[:3], "problem_count": len(problems) + (not stats["firsts"]),
           "rps": ok / proc["wall_s"],
           "latency_ms": {"p50": pct(lat, 0.5), "p90": pct(lat, 0.9), "p99": pct(lat, 0.99)},
           "proc": proc}
    for p in proc.values():
        if isinstance(p, dict) and ok:
            p["us_per_request"] = p["cpu_s"] / ok * 1e6
    return res


def check_answer(body: bytes, args: argparse.Namespace) -> str | None:
    if args.front != "chat":
        return _check_front(body, args)
    try:
        choice = orjson.loads(body)["choices"][0]
        message = {**choice["message"], "finish_reason": choice["finish_reason"]}
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
        return f"not a chat.completion: {body[:200]!r}"
    return check_message(message, args.dialect, args.translated, args.args)


def _check_front(body: bytes, args: argparse.Namespace) -> str | None:
    """Another front's answer: the small call checked whole (``fronts.check``); for the other
    sizes, an answer of that front's kind with the call (or, for prose, text and no call)."""
    from .fronts import check

    try:
        if args.args == "small":
            return check(args.front, body, False, args.dialect)
        answer = orjson.loads(body)
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        return f"not a {args.front} answer ({exc!r}): {body[:200]!r}"
    items = answer.get("output" if args.front == "responses" else "content") or []
    kinds = [item.get("type") for item in items if isinstance(item, dict)]
    call = "function_call" if args.front == "responses" else "tool_use"
    wanted = call not in kinds if args.args == "prose" else kinds.count(call) == 1
    return None if wanted else f"unexpected {args.front} answer: {kinds}"


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m toolbridge.bench.load")
    ap.add_argument("mode", choices=["stream", "plain"])
    ap.add_argument("--target", required=True, help="host:port of the gateway, proxy or upstream")
    ap.add_argument("--upstream", required=True, help="host:port of the upstream (send log)")
    ap.add_argument("--dialect", choices=DIALECTS, default="hermes")
    ap.add_argument("--args", default="small", help="the call's argument size (Script)")
    ap.add_argument("--translated", action="store_true", help="the target is the gateway")
    ap.add_argument("--front", choices=("chat", "messages", "responses"), default="chat",
                    help="plain mode: the client API asked (the gateway's fronts)")
    ap.add_argument("--pid", action="append", default=[], help="NAME=PID[,PID...] to sample")
    ap.add_argument("--cpu", type=int, default=None, help="pin to this core")
    ap.add_argument("--streams", type=int, default=64)
    ap.add_argument("--ramp", type=float, default=0.5)
    ap.add_argument("--rate", type=float, default=30.0, help="upstream chunks/s per stream")
    ap.add_argument("--grace", type=float, default=8.0, help="seconds a run may overrun")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    args = ap.parse_args(argv)
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    pids = {name: [int(p) for p in ids.split(",")]
            for name, _, ids in (item.partition("=") for item in args.pid)}
    import uvloop

    run = run_streams if args.mode == "stream" else run_plain
    sys.stdout.buffer.write(orjson.dumps(uvloop.run(run(args, Sampler(pids)))) + b"\n")


if __name__ == "__main__":
    main()
