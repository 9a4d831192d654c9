"""Load generator: raw asyncio Protocols + httptools on uvloop, one process, prints JSON.

stream mode (``loadgen.py stream``): ``--streams`` concurrent workers, each on one keep-alive
connection, each running ``--per-worker`` streamed requests back to back; worker starts are
spread uniformly over ``--ramp`` seconds (so the 30/s schedules of the streams have random
phases, like real traffic). For every chunk received it takes the receive time (CLOCK_MONOTONIC,
at the read) and the ``x_sent_ns`` stamped by the upstream at its write, and records
``delay = received - sent``; ``x_seq`` checks order, and a stream is complete when it got
``--chunks`` chunks then ``[DONE]``. ``lost`` = chunks expected from the streams started minus
chunks received.

plain mode (``loadgen.py plain``): ``--clients`` connections each sending non-streamed requests
back to back (keep-alive) for ``--warmup`` + ``--duration`` seconds; requests completed in the
last ``--duration`` seconds are counted (req/s) and their latency recorded.

With ``--pid NAME=PID`` (repeatable) it samples those processes over the measured window: CPU
time from /proc/PID/stat (utime+stime, clock ticks) and from /proc/PID/task/*/schedstat
(nanoseconds), and resident memory (VmRSS) before the window and at its peak (sampled every
100 ms). Its own CPU is reported as ``loadgen``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time

import httptools
import orjson

from payloads import PATH, REQUEST, STREAM_REQUEST
from sse import SSEDecoder

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _request_bytes(host: str, body: bytes) -> bytes:
    return (b"POST %s HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\n"
            b"accept: */*\r\ncontent-length: %d\r\n\r\n"
            % (PATH.encode(), host.encode(), len(body)) + body)


# ---------------------------------------------------------------- process sampling


def cpu_sample(pid: int) -> tuple[float, float]:
    """(utime+stime seconds from /proc/pid/stat, on-CPU seconds summed over task schedstat)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    ns = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                ns += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return ticks / CLK_TCK, ns / 1e9


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmRSS:"):
                return int(line.split()[1])
    return 0


class Sampler:
    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = dict(pids)
        self.pids["loadgen"] = os.getpid()
        self.start: dict[str, tuple[float, float]] = {}
        self.rss0: dict[str, int] = {}
        self.rss_peak: dict[str, int] = {}
        self.t0 = 0.0
        self.open_at_peak: dict[str, int] = {}
        self._handle = None
        self.open_streams = lambda: 0

    def begin(self) -> None:
        self.t0 = time.monotonic()
        for name, pid in self.pids.items():
            self.start[name] = cpu_sample(pid)
            self.rss0[name] = self.rss_peak[name] = rss_kb(pid)
        self._tick()

    def _tick(self) -> None:
        for name, pid in self.pids.items():
            try:
                r = rss_kb(pid)
            except FileNotFoundError:
                continue
            if r > self.rss_peak[name]:
                self.rss_peak[name] = r
                self.open_at_peak[name] = self.open_streams()
        self._handle = asyncio.get_running_loop().call_later(0.1, self._tick)

    def end(self) -> dict:
        wall = time.monotonic() - self.t0
        if self._handle:
            self._handle.cancel()
        out = {"wall_s": wall}
        for name, pid in self.pids.items():
            try:
                stat, sched = cpu_sample(pid)
            except FileNotFoundError:
                continue
            s0, c0 = self.start[name]
            out[name] = {
                "cpu_s_stat": stat - s0,
                "cpu_s": sched - c0,
                "util": (sched - c0) / wall,
                "rss0_kb": self.rss0[name],
                "rss_peak_kb": self.rss_peak[name],
                "open_at_peak": self.open_at_peak.get(name, 0),
            }
        return out


def pct(sorted_values: list, p: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(p * len(sorted_values)))]


# ---------------------------------------------------------------- stream mode


class StreamStats:
    def __init__(self, chunks: int) -> None:
        self.chunks = chunks
        self.delays: list[int] = []  # ns
        self.lag: list[int] = []  # upstream's lag vs its own schedule (first chunk = 0), ns
        self.started = 0
        self.complete = 0
        self.bad = 0  # streams with a gap, disorder, wrong status or missing [DONE]
        self.received = 0
        self.open = 0
        self.active_workers = 0
        self.done: asyncio.Future | None = None


class StreamWorker(asyncio.Protocol):
    def __init__(self, st: StreamStats, request: bytes, count: int, rate: float) -> None:
        self.st = st
        self.request = request
        self.left = count
        self.period_ns = 1e9 / rate
        self.transport = None
        self.in_stream = False

    def connection_made(self, transport) -> None:
        self.transport = transport
        self._start()

    def _start(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.decoder = SSEDecoder()
        self.expect = 0
        self.sent0 = 0
        self.status = 0
        self.got_done = False
        self.ok = True
        self.in_stream = True
        self.st.started += 1
        self.st.open += 1
        self.left -= 1
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        self.now = time.monotonic_ns()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.ok = False
            self.transport.abort()

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        if self.status != 200:
            self.ok = False

    def on_body(self, body: bytes) -> None:
        st = self.st
        now = self.now
        for event in self.decoder.feed(body):
            if event == b"[DONE]":
                self.got_done = True
                continue
            try:
                d = orjson.loads(event)
                seq = d["x_seq"]
                sent = d["x_sent_ns"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                self.ok = False
                continue
            if seq != self.expect:
                self.ok = False
            self.expect = seq + 1
            if seq == 0:
                self.sent0 = sent
            else:
                st.lag.append(int(sent - self.sent0 - seq * self.period_ns))
            st.delays.append(now - sent)
            st.received += 1

    def on_message_complete(self) -> None:
        st = self.st
        self.in_stream = False
        st.open -= 1
        if self.ok and self.got_done and self.expect == st.chunks:
            st.complete += 1
        else:
            st.bad += 1
        if self.left > 0 and not st.stopping:
            self._start()
        else:
            self.transport.close()

    def connection_lost(self, exc) -> None:
        st = self.st
        if self.in_stream:
            self.in_stream = False
            st.open -= 1
            st.bad += 1
        st.active_workers -= 1
        if st.active_workers == 0 and not st.done.done():
            st.done.set_result(None)


async def run_streams(args: argparse.Namespace, sampler: Sampler) -> dict:
    loop = asyncio.get_running_loop()
    host, port = args.target.rsplit(":", 1)
    st = StreamStats(args.chunks)
    st.stopping = False
    st.done = loop.create_future()
    st.active_workers = args.streams
    request = _request_bytes(args.target, STREAM_REQUEST)
    sampler.open_streams = lambda: st.open
    failed_connects = 0

    async def worker(delay: float) -> None:
        nonlocal failed_connects
        await asyncio.sleep(delay)
        try:
            await loop.create_connection(
                lambda: StreamWorker(st, request, args.per_worker, args.rate), host, int(port))
        except OSError:
            failed_connects += 1
            st.active_workers -= 1
            if st.active_workers == 0 and not st.done.done():
                st.done.set_result(None)

    sampler.begin()
    rnd = random.Random(1)
    tasks = [loop.create_task(worker(rnd.random() * args.ramp)) for _ in range(args.streams)]
    expected_s = args.ramp + args.per_worker * args.chunks / args.rate
    try:
        await asyncio.wait_for(asyncio.shield(st.done), expected_s + args.grace)
        timed_out = False
    except asyncio.TimeoutError:
        timed_out = True
        st.stopping = True
    proc = sampler.end()
    for t in tasks:
        t.cancel()
    delays = sorted(st.delays)
    lag = sorted(st.lag)
    expected = (st.started + failed_connects * args.per_worker) * args.chunks
    res = {
        "mode": "stream",
        "target": args.target,
        "streams": args.streams,
        "per_worker": args.per_worker,
        "chunks_per_stream": args.chunks,
        "rate": args.rate,
        "streams_started": st.started,
        "streams_complete": st.complete,
        "streams_bad": st.bad + failed_connects,
        "timed_out": timed_out,
        "chunks_received": st.received,
        "chunks_lost": expected - st.received,
        "delay_ms": {"p50": pct(delays, 0.50) / 1e6, "p90": pct(delays, 0.90) / 1e6,
                     "p99": pct(delays, 0.99) / 1e6, "max": (delays[-1] / 1e6) if delays else 0},
        "upstream_lag_ms": {"p50": pct(lag, 0.5) / 1e6, "p99": pct(lag, 0.99) / 1e6},
        "proc": proc,
    }
    for p in proc.values():
        if isinstance(p, dict) and st.received:
            p["us_per_chunk"] = p["cpu_s"] / st.received * 1e6
            p["us_per_chunk_stat"] = p["cpu_s_stat"] / st.received * 1e6
            p["rss_per_stream_kb"] = (p["rss_peak_kb"] - p["rss0_kb"]) / args.streams
    return res


# ---------------------------------------------------------------- plain mode


class PlainClient(asyncio.Protocol):
    def __init__(self, stats: dict, request: bytes, state: dict) -> None:
        self.stats = stats
        self.request = request
        self.state = state
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        self._send()

    def _send(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.size = 0
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
        self.size += len(body)

    def on_message_complete(self) -> None:
        now = time.monotonic_ns()
        st = self.stats
        if self.state["measuring"]:
            if self.status == 200 and self.size > 500:
                st["latencies"].append(now - self.t0)
                st["ok"] += 1
            else:
                st["errors"] += 1
        if self.state["stop"]:
            self.transport.close()
        else:
            self._send()

    def connection_lost(self, exc) -> None:
        self.state["closed"] += 1
        if not self.state["stop"]:
            self.stats["errors"] += 1


async def run_plain(args: argparse.Namespace, sampler: Sampler) -> dict:
    loop = asyncio.get_running_loop()
    host, port = args.target.rsplit(":", 1)
    request = _request_bytes(args.target, REQUEST)
    stats = {"latencies": [], "ok": 0, "errors": 0}
    state = {"measuring": False, "stop": False, "closed": 0}
    await asyncio.gather(*(loop.create_connection(lambda: PlainClient(stats, request, state),
                                                  host, int(port))
                           for _ in range(args.clients)))
    await asyncio.sleep(args.warmup)
    sampler.begin()
    state["measuring"] = True
    await asyncio.sleep(args.duration)
    state["measuring"] = False
    proc = sampler.end()
    state["stop"] = True
    await asyncio.sleep(0.2)
    lat = sorted(stats["latencies"])
    res = {
        "mode": "plain",
        "target": args.target,
        "clients": args.clients,
        "requests": stats["ok"],
        "errors": stats["errors"],
        "rps": stats["ok"] / proc["wall_s"],
        "latency_ms": {"p50": pct(lat, 0.5) / 1e6, "p90": pct(lat, 0.9) / 1e6,
                       "p99": pct(lat, 0.99) / 1e6},
        "proc": proc,
    }
    for p in proc.values():
        if isinstance(p, dict) and stats["ok"]:
            p["us_per_request"] = p["cpu_s"] / stats["ok"] * 1e6
            p["us_per_request_stat"] = p["cpu_s_stat"] / stats["ok"] * 1e6
    return res


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["stream", "plain"])
    ap.add_argument("--target", default="127.0.0.1:8101", help="host:port of proxy or upstream")
    ap.add_argument("--pid", action="append", default=[], help="NAME=PID to sample (repeatable)")
    ap.add_argument("--cpu", type=int, default=None, help="pin to this core")
    ap.add_argument("--streams", type=int, default=64)
    ap.add_argument("--per-worker", type=int, default=1)
    ap.add_argument("--ramp", type=float, default=0.5)
    ap.add_argument("--chunks", type=int, default=60, help="chunks per stream (as the upstream)")
    ap.add_argument("--rate", type=float, default=30.0, help="upstream chunks/s per stream")
    ap.add_argument("--grace", type=float, default=20.0, help="extra seconds before giving up")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    pids = {}
    for item in args.pid:
        name, _, pid = item.partition("=")
        pids[name] = int(pid)
    sampler = Sampler(pids)
    import uvloop

    run = run_streams if args.mode == "stream" else run_plain
    res = uvloop.run(run(args, sampler))
    json.dump(res, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
