"""A large answer is parsed off the event loop: other clients are answered meanwhile.

The gateway runs in a process of its own (as in production: no test harness sharing its GIL or
its heap), over real HTTP on loopback, in front of a scripted upstream whose answer is large and
legitimately slow to read (thousands of valid calls, each decoded and checked against its
tool's schema). While the gateway reads it, a second client asks ``/health`` over and over;
every answer must come within 100 ms. The answer is sized by timing the parser on a sample
first, so that reading it takes the better part of a second however fast the parser becomes,
and the request is checked to have taken that long: the probe cannot pass by missing the parse.
With offloading turned off (the threshold raised past the answer), the same probe sees the loop
stall: the test shows it can fail.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.harness import tool
from toolbridge.gateway import pipeline
from toolbridge.parsing.parser import parse

pytestmark = pytest.mark.serial  # a latency bound: run alone, not beside another worker's load

TOOLS = [tool("read_file", path={"type": "string"})]
UNIT = '<tool_call>\n{"name": "read_file", "arguments": {"path": "/src/a.py"}}\n</tool_call>\nThen:\n'
PARSE_SECONDS = 0.8  # how long the answer should take to parse (timed on a sample)
MIN_SECONDS = 0.3  # the request must take at least this long, or the probe proved nothing
HEALTH_BOUND = 0.1
MAX_EVENT = 16 << 20  # the gateway's limit on one upstream SSE event here (the streamed answer is one)
# The streamed answer's size at most: relaying one event costs the event loop time in proportion
# to its bytes (reading it, writing what it becomes), apart from the parse this test is about;
# sized by parse time alone, the answer grew as the parser got faster (18k units, then 30k).
STREAM_CAP = 3 << 19


def sized_answer(cap: int) -> int:
    """How many UNITs of model text take about PARSE_SECONDS to parse (at most ``cap`` bytes)."""
    sample = UNIT * 4000
    parse(UNIT, "hermes", TOOLS)  # warm: the per-request setup is not per unit
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        parse(sample, "hermes", TOOLS)
        runs.append(time.perf_counter() - started)
    per_unit = min(runs) / 4000
    return max(400, min(int(PARSE_SECONDS / per_unit), cap // len(UNIT)))


@contextmanager
def gateway(units: int, offloop: int = pipeline.OFFLOOP_BYTES) -> Iterator[str]:
    """A gateway process whose upstream answers ``UNIT * units`` (streamed in one event);
    yields its URL and stops it when done."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, __file__, str(units), str(offloop)], env=env, cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://"), "the gateway process did not start"
        yield url
    finally:
        proc.communicate(timeout=30)  # closing stdin stops it


def serve(units: int, offloop: int) -> None:
    """The gateway process: a Stack until stdin closes."""
    from toolbridge.gateway.replay.stack import Stack
    from toolbridge.gateway.replay.upstream import Reply

    pipeline.OFFLOOP_BYTES = offloop
    text = UNIT * units
    with Stack(lambda b: Reply(content=text, chunk=len(text)), tool_call_parser="hermes", max_event=MAX_EVENT) as s:
        print(s.url, flush=True)
        sys.stdin.read()


def connect(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)


def probe_health(url: str, stop: threading.Event, latencies: list[float]) -> None:
    """GET /health on one keep-alive connection until ``stop``, each answer's latency kept."""
    conn = connect(url)
    try:
        while not stop.is_set():
            started = time.perf_counter()
            conn.request("GET", "/health")
            response = conn.getresponse()
            response.read()
            latencies.append(time.perf_counter() - started)
            assert response.status == 200
    finally:
        conn.close()


def ask_while_probing(url: str, body: dict[str, Any]) -> tuple[float, bytes, list[float]]:
    """Send ``body`` while probing /health; the request's duration, its answer, the latencies."""
    latencies: list[float] = []
    stop = threading.Event()
    prober = threading.Thread(target=probe_health, args=(url, stop, latencies))
    conn = connect(url)
    try:
        prober.start()
        started = time.perf_counter()
        conn.request("POST", "/v1/chat/completions", json.dumps(body), {"content-type": "application/json"})
        response = conn.getresponse()
        answer = response.read()
        took = time.perf_counter() - started
    finally:
        stop.set()
        prober.join(30)
        conn.close()
    assert response.status == 200, answer[:500]
    return took, answer, latencies


def offloaded(url: str) -> dict[str, int]:
    """The gateway's count of steps run on a worker thread, by kind."""
    conn = connect(url)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    prefix = 'toolbridge_offloaded_total{kind="'
    return {line[len(prefix):].split('"')[0]: int(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line.startswith(prefix)}


def request(stream: bool) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "read them all"}], "tools": TOOLS,
            "stream": stream}


def calls_in(answer: bytes, stream: bool) -> int:
    if not stream:
        return len(json.loads(answer)["choices"][0]["message"]["tool_calls"])
    chunks = [json.loads(e[6:]) for e in answer.split(b"\n\n") if e and e != b"data: [DONE]"]
    return sum(1 for c in chunks for ch in c["choices"]
               for call in ch["delta"].get("tool_calls") or () if "id" in call)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "one-large-chunk"])
def test_health_answers_within_100ms_while_a_large_answer_is_parsed(stream: bool) -> None:
    units = sized_answer(cap=STREAM_CAP if stream else 20 << 20)
    worst = []
    with gateway(units) as url:
        for attempt in (1, 2):  # once more when other load on the machine delayed a probe
            took, answer, latencies = ask_while_probing(url, request(stream))
            assert calls_in(answer, stream) == units
            assert offloaded(url) == {"chunk" if stream else "whole": attempt}
            assert took > MIN_SECONDS, f"the answer took {took:.3f} s: too fast to show anything"
            assert len(latencies) >= 3, "the probe ran during the parse"
            worst.append(max(latencies))
            if worst[-1] < HEALTH_BOUND:
                break
    assert min(worst) < HEALTH_BOUND, f"/health took {[round(w * 1000) for w in worst]} ms at worst"


def test_the_probe_sees_the_loop_stall_when_the_parse_is_not_offloaded() -> None:
    with gateway(sized_answer(cap=20 << 20), offloop=1 << 30) as url:
        took, _, latencies = ask_while_probing(url, request(False))
        assert not offloaded(url)
    assert took > MIN_SECONDS
    assert max(latencies) > HEALTH_BOUND, "inline, the parse holds every other client"


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
