"""``toolbridge bench --soak``: does the gateway give back what a long run of mixed traffic takes?

Strategy: the gateway runs as its own process (``python -m toolbridge serve``, the real command,
started as the gateway benchmark starts it) in front of a scripted upstream (``gateway.replay``, a
real HTTP server, here on this process's event loop), so its resident memory (RSS) and open file
descriptors can be read from /proc. Several clients send N requests of a seeded mix (``KINDS``):
good answers with a recovered tool call, whole and streamed; malformed requests (bad JSON, a bad
field, a body over the limit); upstream faults (connection reset, 500, silence past the timeout,
a stream cut short, an answer or a chunk that is not JSON); clients that hang up mid-stream; and
a few large events (``LARGE``: a whole answer, one SSE event, a request body, each of
``--large-mb`` MB, and a chunked body over the limit), spread so each recurs in both halves.

Requests go in rounds of ``--sample-every``; between rounds nothing is in flight and the gateway's
RSS and fds are read (a quiet sample); the peak RSS is read every 100 ms besides (``load.Sampler``).
Start = just started; before = the quiet sample after a warm-up round of every kind (first-use
caches filled; its fds may include pooled upstream connections); after = the last one, taken once
the upstream has closed its idle keep-alive connections, so that every upstream connection the
gateway still holds, like every client connection, is one it lost track of.

Invariant of the verdict: the first large event raises RSS once, and a high-water mark (memory
the allocator keeps for the next large event) stays where it is, while a leak keeps growing with
the requests. So the figure judged is the growth over the second half of the run (the last quiet
sample minus the one at half-way, large events on both sides), against ``--max-rss-growth-mb``,
and the fds after minus at start against ``--max-fd-growth``. Every answer is checked against what
its kind must give (``Kind.expect``); an unexpected one fails the run too, so a gateway that
answers everything with an error cannot pass for one that holds its memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

import orjson

from ..gateway.http.sse import SSEDecoder
from ..gateway.replay.upstream import ReplayUpstream, Reply, Script
from .gateway import Procs
from .ports import free_port
from .load import Sampler, StreamClient, rss_kb
from .script import assemble

MB = 1 << 20
PARAMETERS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                           "parameters": PARAMETERS}}]
CALL = '<tool_call>{"name": "read_file", "arguments": {"path": "%s"}}</tool_call>'
ANSWER = "Let me read it.\n\n" + CALL % "/etc/hosts"
EXCHANGE_TIMEOUT = 60.0  # seconds one request may take before it counts as hung
UPSTREAM_BODY = 7 * MB  # the replay's server reads request bodies up to 8 MB (its default limit)


@dataclass(frozen=True)
class Kind:
    name: str
    weight: int  # share of the mix, in per cent (0: only as a large event)
    stream: bool
    expect: frozenset[str]  # the outcomes it may give (``outcome``)


def _kind(name: str, weight: int, stream: bool, *expect: str) -> Kind:
    return Kind(name, weight, stream, frozenset(expect))


KINDS = [
    _kind("good_whole", 25, False, "call"),
    _kind("good_stream", 30, True, "call"),
    _kind("bad_json", 5, False, "400"),
    _kind("bad_field", 5, False, "400"),
    _kind("oversized", 2, False, "413", "reset"),  # a client still sending may see a reset
    _kind("upstream_reset", 4, True, "502"),
    _kind("upstream_500", 4, False, "500"),
    _kind("upstream_timeout", 1, True, "504"),
    _kind("upstream_cut", 5, True, "error event"),
    _kind("upstream_garbage", 3, False, "502"),
    _kind("upstream_garbage_stream", 3, True, "error event"),
    _kind("client_hangs_up", 13, True, "hung up"),
]
LARGE = [
    _kind("large_answer", 0, False, "call"),
    _kind("large_event", 0, True, "call", "error event"),  # above the SSE event limit: refused
    _kind("large_request", 0, True, "call"),  # streamed: held for the stream's life
    _kind("oversized_chunked", 0, False, "413", "reset"),
]
BY_NAME = {k.name: k for k in KINDS + LARGE}


# ---------------------------------------------------------------- the upstream's script


def script(a: argparse.Namespace) -> Script:
    """The upstream's answer to each request, by the kind the request names (``x_soak``)."""
    large = a.large_mb * MB

    def reply(body: dict[str, Any]) -> Reply:
        kind = body.get("x_soak", "good_whole")
        if kind == "upstream_reset":
            return Reply(fault="reset")
        if kind == "upstream_500":
            return Reply(status=500, error="the model is overloaded")
        if kind == "upstream_timeout":
            return Reply(content=ANSWER, delay=a.upstream_timeout + 0.5)
        if kind == "upstream_cut":
            return Reply(content=ANSWER, chunk=6, cut_after=3)
        if kind.startswith("upstream_garbage"):
            return Reply(content=ANSWER, fault="garbage", cut_after=2)
        if kind == "client_hangs_up":
            return Reply(content="word " * 200, chunk=5, pace=0.005)
        if kind in ("large_answer", "large_event"):
            text = "Let me read it.\n\n" + CALL % ("x" * large)
            return Reply(content=text, chunk=len(text))
        if kind == "large_request":
            return Reply(content=ANSWER, chunk=4, pace=0.005)
        return Reply(content=ANSWER, chunk=12)

    return reply


# ---------------------------------------------------------------- requests


HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nhost: soak\r\nconnection: close\r\n"


def _post(body: bytes, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    return HEAD + b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % size + body


def request_bytes(kind: Kind, large: int, max_body: int) -> bytes:
    """The request a client of ``kind`` sends (the whole of it, head and body)."""
    content = "Read /etc/hosts, please."
    if kind.name == "large_request":
        content = "x" * min(large, UPSTREAM_BODY)
    body: dict[str, Any] = {"model": "soak", "messages": [{"role": "user", "content": content}],
                            "tools": TOOLS, "stream": kind.stream, "x_soak": kind.name}
    if kind.name == "bad_json":
        return _post(orjson.dumps(body)[:40])
    if kind.name == "bad_field":
        return _post(orjson.dumps({**body, "tools": [{"type": "function"}]}))
    if kind.name == "oversized":  # announced over the limit: refused before the body is read
        return _post(b" " * (64 << 10), length=max_body + 1)
    if kind.name == "oversized_chunked":  # refused once the body read exceeds the limit
        piece = b"%x\r\n%b\r\n" % (MB, b" " * MB)
        chunked = HEAD + b"transfer-encoding: chunked\r\n\r\n"
        return chunked + piece * (max_body // MB + 2) + b"0\r\n\r\n"
    return _post(orjson.dumps(body))


class Exchange(StreamClient):
    """One request on its own connection: the status, the body (or the SSE events of a 200
    stream), and a hang-up after ``hang_up_after`` events."""

    def __init__(self, request: bytes, done: Any, stream: bool, hang_up_after: int | None) -> None:
        super().__init__(request, done)
        self.decoder = SSEDecoder(1 << 30)
        self.stream, self.hang_up_after = stream, hang_up_after
        self.body: list[bytes] = []
        self.hung_up = False

    def on_body(self, body: bytes) -> None:
        if not (self.stream and self.status == 200):
            self.body.append(body)
            return
        super().on_body(body)
        if self.hang_up_after is not None and len(self.events) >= self.hang_up_after:
            self.hung_up = True
            self.transport.abort()


def outcome(x: Exchange) -> str:
    """What a client got: "call", "error event", "hung up", "reset", or the status."""
    if x.hung_up:
        return "hung up"
    if not x.status:
        return "reset"
    if x.status != 200:
        return str(x.status)
    if x.stream:
        chunks = [orjson.loads(e) for e in x.events if e != b"[DONE]"]
        if any("error" in c for c in chunks):
            return "error event"
        message = assemble(chunks)
        names = [c["name"] for c in message["tool_calls"]]
        return "call" if x.complete and names == ["read_file"] else "200 without the call"
    try:
        calls = orjson.loads(b"".join(x.body))["choices"][0]["message"]["tool_calls"] or []
        names = [c["function"]["name"] for c in calls]
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
        names = []
    return "call" if names == ["read_file"] else "200 without the call"


async def exchange(port: int, kind: Kind, request: bytes) -> str:
    loop = asyncio.get_running_loop()
    finished = loop.create_future()

    def done(_: Exchange) -> None:
        if not finished.done():
            finished.set_result(None)

    hang_up = 3 if kind.name == "client_hangs_up" else None
    try:
        _, x = await loop.create_connection(lambda: Exchange(request, done, kind.stream, hang_up),
                                            "127.0.0.1", port)
    except OSError:
        return "refused"
    try:
        await asyncio.wait_for(finished, EXCHANGE_TIMEOUT)
    except asyncio.TimeoutError:
        x.transport.abort()
        return "hung"
    return outcome(x)


# ---------------------------------------------------------------- the run


def fd_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Soak:
    """One soak run against one gateway process; ``figures()`` is the report."""

    def __init__(self, a: argparse.Namespace, pid: int, port: int, upstream: ReplayUpstream) -> None:
        self.a, self.pid, self.port, self.upstream = a, pid, port, upstream
        self.max_body = (a.large_mb + 1) * MB
        self.requests = {k.name: request_bytes(k, a.large_mb * MB, self.max_body)
                         for k in KINDS + LARGE}
        self.outcomes: dict[str, dict[str, int]] = {k.name: {} for k in KINDS + LARGE}
        self.samples: list[tuple[int, int, int]] = []  # (requests done, RSS kB, fds): quiet
        self.sampler = Sampler({"gateway": [pid]})
        self.done = self.warm_up = 0
        self.deadline = 0.0

    def plan(self) -> list[Kind]:
        """The kinds of the N requests, in order: a seeded mix, with the large events spread."""
        a = self.a
        rnd = random.Random(a.seed)
        kinds = rnd.choices(KINDS, [k.weight for k in KINDS], k=a.requests)
        for i in range(a.large):
            kinds[(2 * i + 1) * a.requests // (2 * a.large)] = LARGE[i % len(LARGE)]
        return kinds

    async def round(self, kinds: list[Kind]) -> None:
        """Send ``kinds`` with ``--clients`` clients at once; return when none is in flight."""
        todo = iter(kinds)

        async def client() -> None:
            for kind in todo:
                if time.monotonic() > self.deadline:
                    return
                got = await exchange(self.port, kind, self.requests[kind.name])
                tally = self.outcomes[kind.name]
                tally[got] = tally.get(got, 0) + 1
                self.done += 1

        await asyncio.gather(*(client() for _ in range(self.a.clients)))
        self.upstream.requests.clear()  # the replay keeps every body it was sent

    async def quiet_sample(self, settle: float = 0.05) -> None:
        """RSS and fds with nothing in flight, once the fds stop changing (``settle`` s)."""
        fds = fd_count(self.pid)
        for _ in range(40):
            await asyncio.sleep(settle)
            fds, last = fd_count(self.pid), fds
            if fds == last:
                break
        self.samples.append((self.done, rss_kb(self.pid), fds))

    async def run(self) -> dict[str, Any]:
        a = self.a
        self.samples.append((0, rss_kb(self.pid), fd_count(self.pid)))  # at start-up
        self.deadline = time.monotonic() + a.time_limit
        self.sampler.begin()
        await self.round([k for k in KINDS for _ in range(a.clients)])  # the warm-up (tallied too)
        self.warm_up, self.done = self.done, 0
        await self.quiet_sample()
        started, kinds = time.monotonic(), self.plan()
        for i in range(0, len(kinds), a.sample_every):
            if time.monotonic() > self.deadline:
                break
            await self.round(kinds[i:i + a.sample_every])
            await self.quiet_sample()
        assert self.upstream.server is not None
        await self.upstream.server.close(grace=1.0)  # the pooled connections end: not counted
        await self.quiet_sample(settle=0.25)
        proc = self.sampler.end()
        return self.figures(time.monotonic() - started, proc["gateway"]["rss_peak_kb"])

    def figures(self, seconds: float, peak_kb: int) -> dict[str, Any]:
        start, before, *run = self.samples
        after = run[-1]
        mid = next(s for s in [before, *run] if s[0] >= after[0] / 2)
        unexpected = {name: {got: n for got, n in tally.items() if got not in BY_NAME[name].expect}
                      for name, tally in self.outcomes.items()}
        return {
            "requests": self.done, "planned": self.a.requests, "warm_up": self.warm_up,
            "seconds": round(seconds, 1),
            "clients": self.a.clients, "large_mb": self.a.large_mb,
            "rss_mb": {"start": start[1] / 1024, "before": before[1] / 1024, "mid": mid[1] / 1024,
                       "after": after[1] / 1024, "peak": peak_kb / 1024,
                       "second_half_growth": (after[1] - mid[1]) / 1024},
            "fds": {"start": start[2], "before": before[2], "after": after[2]},
            "limits": {"rss_growth_mb": self.a.max_rss_growth_mb, "fd_growth": self.a.max_fd_growth},
            "outcomes": self.outcomes,
            "unexpected": {name: got for name, got in unexpected.items() if got},
            "samples": [{"requests": n, "rss_mb": round(kb / 1024, 1), "fds": f}
                        for n, kb, f in self.samples],
        }


def problems(r: dict[str, Any]) -> list[str]:
    """Why the run fails (nothing: it passes)."""
    out = []
    growth, limit = r["rss_mb"]["second_half_growth"], r["limits"]["rss_growth_mb"]
    if growth > limit:
        out.append(f"RSS grew {growth:.1f} MB over the second half (limit {limit:g} MB)")
    fds = r["fds"]["after"] - r["fds"]["start"]
    if fds > r["limits"]["fd_growth"]:
        out.append(f"{fds} more open fds after than at start (limit {r['limits']['fd_growth']})")
    out += [f"{name}: unexpected {got}" for name, got in r["unexpected"].items()]
    return out


def report_text(r: dict[str, Any]) -> str:
    rss, fds, limits = r["rss_mb"], r["fds"], r["limits"]
    lines = [
        (f"soak: {r['requests']} of {r['planned']} requests in {r['seconds']} s, {r['clients']} "
         f"clients, large events of {r['large_mb']} MB (after {r['warm_up']} to warm up; the "
         f"outcomes count both)"),
        (f"  RSS MB: start {rss['start']:.1f}, before {rss['before']:.1f}, mid {rss['mid']:.1f}, "
         f"after {rss['after']:.1f}, peak {rss['peak']:.1f}; second half "
         f"{rss['second_half_growth']:+.1f} (limit {limits['rss_growth_mb']:g})"),
        (f"  fds: start {fds['start']}, before {fds['before']}, after {fds['after']} "
         f"(limit start +{limits['fd_growth']})"),
        "  outcomes:",
    ]
    for name, tally in r["outcomes"].items():
        got = ", ".join(f"{outcome} {n}" for outcome, n in sorted(tally.items()))
        lines.append(f"    {name:<24}{got}")
    trail = " ".join(f"{s['requests']}:{s['rss_mb']:.0f}" for s in r["samples"][1:])
    lines.append(f"  RSS MB by requests done: {trail}")
    return "\n".join(lines)


async def soak(a: argparse.Namespace) -> dict[str, Any]:
    """Run the soak: start the upstream here and the gateway as a process; the report."""
    procs = Procs(0)
    async with ReplayUpstream(script(a)) as upstream:
        port = free_port()
        argv = ["-m", "toolbridge", "serve", "--port", str(port), "--upstream", upstream.url,
                "--tool-call-parser", "hermes", "--timeout", str(a.upstream_timeout),
                "--max-body", str((a.large_mb + 1) * MB), "--log-level", "warning"]
        try:
            proc = await asyncio.to_thread(procs.start, argv, os.sched_getaffinity(0), port)
            return await Soak(a, proc.pid, port, upstream).run()
        except FileNotFoundError as exc:  # /proc/PID is gone
            raise RuntimeError(f"the gateway process exited during the soak ({exc})") from None
        finally:
            procs.stop_all()


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="toolbridge bench --soak",
                                description=(__doc__ or "").split("\n")[0])
    add = p.add_argument
    add("--requests", type=int, default=10_000, help="requests after the warm-up (default 10000)")
    add("--time-limit", type=float, default=240.0, help="seconds; the run stops there (default 240)")
    add("--clients", type=int, default=32, help="concurrent clients (default 32)")
    add("--sample-every", type=int, default=250, help="requests per round between quiet samples")
    add("--large", type=int, default=8, help="large events, spread over the run (default 8)")
    add("--large-mb", type=int, default=10, help="size of a large event in MB (default 10)")
    add("--upstream-timeout", type=float, default=1.0, help="the gateway's --timeout (default 1)")
    add("--max-rss-growth-mb", type=float, default=5.0,
        help="RSS growth allowed over the second half (default 5 MB)")
    add("--max-fd-growth", type=int, default=4, help="open fds allowed after over start (default 4)")
    add("--seed", type=int, default=1)
    add("--json", action="store_true", help="print the figures as JSON")
    a = p.parse_args(argv)
    if min(a.requests, a.clients, a.sample_every, a.large_mb) < 1 or a.large < 0:
        p.error("--requests, --clients, --sample-every and --large-mb must be positive")
    return a


def main(argv: list[str] | None = None) -> int:
    """Run the soak and print the figures; 1 when memory or fds grew past the limits or an
    answer was not what its kind must give."""
    a = _arguments(sys.argv[1:] if argv is None else argv)
    import uvloop

    try:
        r = uvloop.run(soak(a))
    except RuntimeError as exc:  # the gateway did not start, or exited
        print(f"toolbridge bench --soak: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(r, indent=1) if a.json else report_text(r), flush=True)
    found = problems(r)
    for problem in found:
        print(f"toolbridge bench --soak: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
