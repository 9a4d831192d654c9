"""``toolbridge bench --gateway``: the gateway's figures against a paced test upstream on loopback.

Method (that of benchmarks/stack/README.md, whose load generator this reuses):

- Separate processes: the test upstream and the load generator (the harness) pinned to core 1;
  the server under test pinned to core 0. Each gets its own session, hence its own scheduler
  autogroup, with niceness ``--nice`` (-10 by default, when permitted; the harness 5 lower
  still), so on a shared machine the server gets most of its core. With two gateway workers,
  the second is pinned to core 1 and gets what the harness leaves of it.
- Servers under test: ``direct`` (the load generator talks to the upstream: the harness's own
  delay), ``floor`` (a plain proxy on the gateway's stack that decodes and re-encodes every
  chunk and translates nothing) and ``gateway`` (``python -m toolbridge serve``, the real
  command, with 1 and 2 workers). Every stream level gets a fresh server process, warmed up
  with a few requests first.
- Streams: the upstream sends one agent turn (content, then a tool call, in ~4-character
  deltas); the request offers tools, so the gateway parses and translates. The call comes in
  argument sizes (``--args``, each measured in turn against its own direct and floor runs and
  reported beside the others): ``small``, ~300 characters at 30 chunks/s per stream (~100
  chunks), ``prose``, the same turn without the call (content only, about as long, at the same
  rate and levels: what the gateway adds to an answer it only passes on), and ``33k``, a
  ``new_string`` of 33,000 characters (~8,400 chunks), which streams at
  ``--long-rate`` (1000 chunks/s: 8 s a stream) and at fewer levels (``--long-streams`` 1,16:
  the top one about the chunk rate of 512 small streams). Every stream a client receives is
  checked against the script after the run. Delay = client receive time - upstream send time
  of the chunk it comes from; CPU per chunk = the server's CPU over the run / upstream chunks
  relayed. A call's last character to its bytes on the wire = the delay of the chunk the
  (whole) call comes in, beside the floor's delay for the same upstream chunk (p50, p99).
- Non-streamed: 64 keep-alive clients back to back (then 1 client); the answer's text holds the
  call (of each size), which the gateway turns into ``tool_calls``. "Added" latency = server
  minus direct.
- Every figure is the median over ``--repeat`` repetitions (lost chunks: the maximum); the
  order of the servers rotates between repetitions.
- Then the fronts side by side (``fronts``): the Anthropic Messages front's translation per
  streamed chunk and its non-streamed requests per second beside the chat front's; and what the
  Responses front's store costs per stored response (``store``); and what sending each call
  whole costs beside ``--stream-arguments`` (``wire``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from typing import Any

from .ports import free_port
from .fronts import measure as measure_fronts, report as report_fronts
from .store import measure as measure_store, report as report_store
from .wire import measure as measure_wire, report as report_wire
from .report import report_json, report_text, summarise
from .script import ARGS, DIALECTS, SHORT, Script, arg_chars

SERVER_CPU, LOAD_CPU = 0, 1
LOADGEN = "toolbridge.bench.load"
SERVERS = "toolbridge.bench.servers"


class Procs:
    """Starts the benchmark's processes (own session, niceness, cores) and ends them.

    The harness (upstream, load generator) runs 5 nice levels above the server under test, so
    where they share a core (two workers) the server gets what the harness leaves and the
    harness's timestamps are not delayed by it.
    """

    def __init__(self, nice: int) -> None:
        self.nice = nice
        self.harness_nice = max(-20, nice - 5) if nice < 0 else nice
        self.started: list[subprocess.Popen[bytes]] = []

    def _configure(self, pid: int, cpus: set[int], harness: bool) -> None:
        """Cores and niceness of a child just started in its own session (hence its own
        scheduler autogroup: niceness counts only within one)."""
        os.sched_setaffinity(pid, cpus)
        nice = self.harness_nice if harness else self.nice
        if nice:
            try:
                with open(f"/proc/{pid}/autogroup", "w") as f:
                    f.write(str(nice))
                os.setpriority(os.PRIO_PROCESS, pid, nice)
            except OSError:  # not permitted here: run at the default priority
                pass

    def _spawn(self, argv: list[str], cpus: set[int], harness: bool,
               out: int) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, *argv], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.DEVNULL if out == subprocess.DEVNULL else out,
                                start_new_session=True)
        self.started.append(proc)
        self._configure(proc.pid, cpus, harness)
        return proc

    def start(self, argv: list[str], cpus: set[int], port: int,
              harness: bool = False) -> subprocess.Popen[bytes]:
        """A server process, once it accepts connections on ``port``."""
        proc = self._spawn(argv, cpus, harness, subprocess.DEVNULL)
        wait_port(port, proc)
        return proc

    def run(self, argv: list[str], cpus: set[int], timeout: float) -> str:
        """A harness process run to its end; its standard output."""
        proc = self._spawn(argv, cpus, True, subprocess.PIPE)
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            self.stop(proc)
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[1]} failed: {err.decode(errors='replace')[-2000:]}")
        return out.decode()

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        """End a process and its workers (its session's process group), by its id."""
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:  # the whole group is gone
                break
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                pass
        proc.wait()
        if proc in self.started:
            self.started.remove(proc)

    def stop_all(self) -> None:
        for proc in list(self.started):
            self.stop(proc)


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} not ready after {timeout:.0f} s")


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (workers of a gateway), from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    return out


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def _http(port: int, body: bytes) -> bytes:
    """One blocking POST with ``Connection: close``, for warm-ups."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
                  b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
                  + body)
        out = []
        while data := s.recv(65536):
            out.append(data)
    return b"".join(out)


def warm_up(port: int, script: Script, rounds: int = 1) -> None:
    for _ in range(rounds):
        for _ in range(5):
            if b" 200 " not in _http(port, script.request(False))[:20]:
                raise RuntimeError("warm-up request failed")
        for _ in range(2):
            if b"[DONE]" not in _http(port, script.request(True, x_rate=0)):
                raise RuntimeError("warm-up stream failed")


class Bench:
    """One complete measurement; ``runs`` collects every load generator result."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.a = args
        self.procs = Procs(args.nice)
        self.scripts = {size: Script.build(args.dialect, size) for size in args.args}
        self.runs: list[dict[str, Any]] = []

    def log(self, msg: str) -> None:
        if not self.a.json:
            print(msg, file=sys.stderr, flush=True)

    def levels(self, size: str) -> list[int]:
        return self.a.levels if size in SHORT else self.a.long_levels

    def rate(self, size: str) -> float:
        return self.a.rate if size in SHORT else self.a.long_rate

    def load(self, mode: str, target: int, up: int, pids: dict[str, list[int]], server: str,
             rep: int, size: str, **opts: Any) -> None:
        a = self.a
        argv = ["-m", LOADGEN, mode, "--target", f"127.0.0.1:{target}", "--upstream",
                f"127.0.0.1:{up}", "--dialect", a.dialect, "--args", size,
                "--rate", str(self.rate(size)),
                "--grace", str(a.grace), "--duration", str(opts.pop("duration", a.duration))]
        argv += ["--translated"] if server.startswith("gateway") else []
        argv += [f"--{k}={v}" for k, v in opts.items()]
        argv += [f"--pid={name}={','.join(map(str, ids))}" for name, ids in pids.items()]
        res = json.loads(self.procs.run(argv, {LOAD_CPU}, timeout=300))
        res["other_load"] = res["proc"].pop("other_load")
        kind = f"stream{opts['streams']}" if mode == "stream" else f"plain{opts['clients']}"
        res.update(rep=rep, server=server, kind=kind, args=size)
        self.runs.append(res)
        self.log(f"  [{rep}] {size} {server} {kind}: {_brief(res)}")

    def start_server(self, server: str, up: int,
                     size: str) -> tuple[Any, int, dict[str, list[int]]]:
        port = free_port()
        if server == "floor":
            argv = ["-m", SERVERS, "floor", "--port", str(port), "--upstream", f"127.0.0.1:{up}"]
        else:
            workers = int(server.split(" x")[1]) if " x" in server else 1
            argv = ["-m", "toolbridge", "serve", "--port", str(port), "--upstream",
                    f"http://127.0.0.1:{up}/v1", "--tool-call-parser", self.a.dialect,
                    "--workers", str(workers)]
        cpus = {SERVER_CPU} if server in ("floor", "gateway") else {SERVER_CPU, LOAD_CPU}
        proc = self.procs.start(argv, cpus, port)
        pids = [proc.pid]
        if server.startswith("gateway x"):
            pids += self._pin_workers(proc.pid, workers)
        warm_up(port, self.scripts[size], rounds=1 if len(pids) == 1 else 4)
        return proc, port, {"server": pids}

    def _pin_workers(self, parent: int, workers: int) -> list[int]:
        """The processes of a gateway's workers, each worker pinned to its own core.

        Left to the scheduler, both workers tend to stay on core 0: core 1 carries the
        harness's higher-priority groups, so it looks the busier.
        """
        deadline = time.monotonic() + 20
        found: list[int] = []
        while len(found) < workers and time.monotonic() < deadline:
            time.sleep(0.05)
            found = [pid for pid in _children(parent) if b"spawn_main" in _cmdline(pid)]
        cores = sorted(os.sched_getaffinity(0))
        for i, pid in enumerate(sorted(found)):
            os.sched_setaffinity(pid, {cores[(SERVER_CPU + i) % len(cores)]})
        return _children(parent)  # the workers and multiprocessing's resource tracker

    def measure_server(self, server: str, up: int, up_pid: int, rep: int, size: str) -> None:
        a = self.a
        levels = self.levels(size)[-1:] if server.startswith("gateway x") else self.levels(size)
        plain = [(64, a.duration), (1, a.duration / 2)] if not server.startswith("gateway x") \
            else [(64, a.duration)]
        for level in levels:
            proc, port, pids = self.start_server(server, up, size)
            try:
                self.load("stream", port, up, {**pids, "upstream": [up_pid]}, server, rep, size,
                          streams=level, ramp=0.0 if level == 1 else a.ramp)
            finally:
                self.procs.stop(proc)
        proc, port, pids = self.start_server(server, up, size)
        try:
            for clients, duration in plain:
                self.load("plain", port, up, {**pids, "upstream": [up_pid]}, server, rep, size,
                          clients=clients, duration=duration)
        finally:
            self.procs.stop(proc)

    def measure(self) -> None:
        a = self.a
        servers = ["floor", "gateway"] + [f"gateway x{n}" for n in a.workers if n > 1]
        for rep in range(a.repeat):
            for size in a.args:
                self.measure_size(size, servers, rep)

    def measure_size(self, size: str, servers: list[str], rep: int) -> None:
        """One repetition at one argument size: its own upstream, direct, then the servers."""
        a = self.a
        up = free_port()
        upstream = self.procs.start(["-m", SERVERS, "upstream", "--port", str(up), "--dialect",
                                     a.dialect, "--args", size, "--rate", str(self.rate(size))],
                                    {LOAD_CPU}, up, harness=True)
        try:
            pids = {"upstream": [upstream.pid]}
            for level in ([] if a.quick else self.levels(size)):
                self.load("stream", up, up, pids, "direct", rep, size, streams=level,
                          ramp=0.0 if level == 1 else a.ramp)
            for clients, duration in ((64, a.duration), (1, a.duration / 2)):
                self.load("plain", up, up, pids, "direct", rep, size, clients=clients,
                          duration=duration)
            shift = rep % len(servers)
            for server in servers[shift:] + servers[:shift]:
                self.measure_server(server, up, upstream.pid, rep, size)
        finally:
            self.procs.stop_all()


def _brief(r: dict[str, Any]) -> str:
    p = r["proc"].get("server") or r["proc"].get("upstream") or {}
    bad = f", {r['problem_count']} FAILED CHECKS {r['problems']}" if r["problem_count"] else ""
    if r["mode"] == "stream":
        return (f"delay p50 {r['delay_ms']['p50']:.2f} p99 {r['delay_ms']['p99']:.2f} ms, lost "
                f"{r['chunks_lost']}, {p.get('us_per_chunk', 0):.1f} us/chunk, util "
                f"{p['util']:.2f}, other load {r['other_load']:.2f}{bad}")
    return (f"{r['rps']:.0f} req/s, p50 {r['latency_ms']['p50']:.2f} p99 "
            f"{r['latency_ms']['p99']:.2f} ms, {p.get('us_per_request', 0):.0f} us/req, util "
            f"{p['util']:.2f}, other load {r['other_load']:.2f}{bad}")


def _effective_nice(wanted: int) -> int:
    """``wanted`` when this process may set it (root, or CAP_SYS_NICE), else 0."""
    if wanted >= 0 or os.geteuid() == 0:
        return wanted
    return 0


def _ints(text: str) -> list[int]:
    try:
        values = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers")
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: every value must be at least 1")
    return values


def _sizes(text: str) -> list[str]:
    sizes = list(dict.fromkeys(v.strip() for v in text.split(",") if v.strip()))
    try:
        for size in sizes:
            arg_chars(size)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))
    if not sizes:
        raise argparse.ArgumentTypeError("no argument size given")
    return sizes


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    about = (__doc__ or "").split("\n")[0]
    p = argparse.ArgumentParser(prog="toolbridge bench --gateway", description=about)
    add = p.add_argument
    add("--quick", action="store_true",
        help="smoke run: 1 repetition, streams 1,64 (long args: --long-streams), 0.5 s "
             "non-streamed runs, no direct streams")
    add("--repeat", type=int, default=None, metavar="N", help="repetitions (default 3, quick 1)")
    add("--streams", type=_ints, default=None, metavar="LIST",
        help="concurrent stream levels (default 1,64,256,512; quick 1,64)")
    add("--workers", type=_ints, default=[1, 2], metavar="LIST",
        help="gateway worker counts; above 1, measured at the top stream level and 64 clients")
    add("--json", action="store_true", help="print machine-readable results")
    add("--dialect", choices=DIALECTS, default="hermes", help="the model's dialect in the script")
    add("--args", type=_sizes, default=list(ARGS), metavar="LIST",
        help="argument sizes of the call, each measured in turn: small (~300 characters), "
             "prose (no call: content only) and/or <N>k (a new_string of N thousand "
             "characters); default small,prose,33k")
    add("--rate", type=float, default=30.0, help="upstream chunks per second per stream")
    add("--long-streams", type=_ints, default=[1, 16], metavar="LIST",
        help="stream levels for the <N>k sizes (default 1,16)")
    add("--long-rate", type=float, default=1000.0,
        help="upstream chunks per second per stream for the <N>k sizes "
             "(default 1000: 33k streams for 8 s)")
    add("--duration", type=float, default=None, help="seconds of each 64-client non-streamed run")
    add("--ramp", type=float, default=0.5, help="seconds over which stream starts are spread")
    add("--grace", type=float, default=8.0, help="seconds a stream run may overrun its schedule")
    add("--nice", type=int, default=-10, help="niceness of the processes (negative needs root)")
    a = p.parse_args(argv)
    a.repeat = a.repeat or (1 if a.quick else 3)
    a.levels = a.streams or ([1, 64] if a.quick else [1, 64, 256, 512])
    a.duration = a.duration or (0.5 if a.quick else 2.0)
    a.nice = _effective_nice(a.nice)
    a.long_levels = a.long_streams
    if a.repeat < 1 or a.rate <= 0 or a.long_rate <= 0 or a.duration <= 0:
        p.error("--repeat, --rate, --long-rate and --duration must be positive")
    return a


def main(argv: list[str] | None = None) -> int:
    """Run the gateway benchmark and print the figures.

    Returns 0, or 1 when a stream or answer a client received was not what the script implies
    (a wrong translation cannot pass for a fast one).
    """
    a = _arguments(argv)
    bench = Bench(a)
    started = time.monotonic()
    try:
        bench.measure()
    except KeyboardInterrupt:
        bench.procs.stop_all()
        return 130
    header = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "cpus": os.cpu_count(), "repeat": a.repeat, "quick": a.quick, "nice": a.nice,
        "harness_nice": bench.procs.harness_nice,
        "dialect": a.dialect, "workers": a.workers, "args": a.args,
        "levels": {size: bench.levels(size) for size in a.args},
        "rate": {size: bench.rate(size) for size in a.args},
        "upstream_chunks_per_stream": {size: len(s.chunks) for size, s in bench.scripts.items()},
        "seconds": round(time.monotonic() - started, 1),
    }
    fronts = measure_fronts(a.dialect, a.quick)  # the Messages front beside the chat front
    header["fronts"] = fronts
    store = header["responses_store"] = measure_store(a.quick)  # what a stored response costs
    wire = header["wire"] = measure_wire(a.dialect, a.quick)  # whole calls against --stream-arguments
    summary = summarise(bench.runs, header)
    print(report_json(header, summary, bench.runs) if a.json else report_text(header, summary))
    if not a.json:
        print("\n" + report_fronts(fronts) + "\n" + report_store(store) + "\n" + report_wire(wire))
    for problem in fronts["problems"] + store["problems"] + wire["problems"]:
        print(f"toolbridge bench --gateway: fronts: {problem}", file=sys.stderr)
    failed = [r for r in bench.runs if r["problem_count"]]
    for r in failed:
        print(f"toolbridge bench --gateway: {r['args']} {r['server']} {r['kind']}: "
              f"{r['problem_count']} "
              f"failed checks, e.g. {r['problems'][:1]}", file=sys.stderr)
    return 1 if failed or fronts["problems"] or store["problems"] or wire["problems"] else 0
