"""Run the HTTP-stack measurement: upstream, proxy and load generator in separate processes.

The proxy under test is pinned to core 0, the upstream and the load generator to core 1.
For each repetition (variants in rotated order, to spread the machine's noise evenly):
  - direct baseline: load generator -> upstream, for every stream level and non-streamed;
  - per variant and stream level: a fresh proxy, a short warm-up (a few requests and two short
    streams), then ``loadgen.py stream`` (RSS per stream comes from this fresh process);
  - per variant: a fresh proxy, warm-up, ``loadgen.py plain`` with 64 clients, then with 1.
Every run records the machine's other load (cores busy with processes not ours) as a noise
indicator. Raw results go to results/<time>.json; the median table is printed and written to
results/<time>.md.

    /tmp/stackvenv/bin/python benchmarks/stack/run.py                  # everything, 3 reps
    /tmp/stackvenv/bin/python benchmarks/stack/run.py --variants raw-orjson --levels 512 --no-plain
    /tmp/stackvenv/bin/python benchmarks/stack/run.py --table results/X.json   # table only
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
PROXY_CPU, LOAD_CPU = 0, 1
CLK_TCK = os.sysconf("SC_CLK_TCK")

VARIANTS = {
    "starlette-httpx": ["proxy_starlette.py", "--codec", "json"],
    "starlette-httpx-orjson": ["proxy_starlette.py", "--codec", "orjson"],
    "aiohttp-asyncio": ["proxy_aiohttp.py", "--loop", "asyncio", "--codec", "json"],
    "aiohttp-uvloop": ["proxy_aiohttp.py", "--loop", "uvloop", "--codec", "json"],
    "aiohttp-uvloop-orjson": ["proxy_aiohttp.py", "--loop", "uvloop", "--codec", "orjson"],
    "raw": ["proxy_raw.py", "--codec", "json"],
    "raw-orjson": ["proxy_raw.py", "--codec", "orjson"],
}
DEFAULT_VARIANTS = ["starlette-httpx", "aiohttp-asyncio", "aiohttp-uvloop",
                    "aiohttp-uvloop-orjson", "raw", "raw-orjson"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} not ready")


NICE = 0  # scheduling priority of the processes this script starts (--nice)


def _child_setup() -> None:
    """With --nice: each child gets its own session, hence its own scheduler autogroup (with
    autogroups on, a process's nice only ranks it within its group), and the group gets NICE."""
    if NICE:
        os.setsid()
        try:
            with open("/proc/self/autogroup", "w") as f:
                f.write(str(NICE))
        except OSError:
            pass
        os.setpriority(os.PRIO_PROCESS, 0, NICE)


def start(script: list[str], port: int, cpu: int, extra: list[str] = ()) -> subprocess.Popen:
    cmd = [PY, os.path.join(HERE, script[0]), *script[1:], "--port", str(port), "--cpu", str(cpu),
           *extra]
    proc = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.DEVNULL, preexec_fn=_child_setup)
    wait_port(port, proc)
    return proc


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def http_post(port: int, body: bytes) -> bytes:
    """Blocking one-shot POST (Connection: close), for warm-ups."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\n"
                  b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
                  + body)
        out = []
        while data := s.recv(65536):
            out.append(data)
    return b"".join(out)


def warm_up(port: int) -> None:
    sys.path.insert(0, HERE)
    from payloads import REQUEST, request_body

    for _ in range(5):
        assert b" 200 " in http_post(port, REQUEST)[:20]
    for _ in range(2):
        assert b"[DONE]" in http_post(port, request_body(True, x_chunks=3))


def busy_seconds() -> float:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return (sum(v[:8]) - idle) / CLK_TCK


def loadgen(args: list[str], pids: dict[str, int]) -> dict:
    cmd = [PY, os.path.join(HERE, "loadgen.py"), *args, "--cpu", str(LOAD_CPU)]
    for name, pid in pids.items():
        cmd += ["--pid", f"{name}={pid}"]
    b0, t0 = busy_seconds(), time.monotonic()
    out = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True, timeout=300, check=False,
                         preexec_fn=_child_setup)
    b1, t1 = busy_seconds(), time.monotonic()
    if out.returncode != 0:
        raise RuntimeError(f"loadgen failed: {out.stderr[-2000:]}")
    res = json.loads(out.stdout)
    ours = sum(p["cpu_s"] for p in res["proc"].values() if isinstance(p, dict))
    # other processes' CPU while the loadgen process lived (incl. its start-up: approximate)
    res["foreign_cores"] = max(0.0, ((b1 - b0) - ours) / (t1 - t0))
    with open("/proc/loadavg") as f:
        res["loadavg"] = f.read().split()[0]
    return res


def stream_args(target: int, level: int, a: argparse.Namespace) -> list[str]:
    per_worker, ramp = (a.single_streams, 0.0) if level == 1 else (a.per_worker, a.ramp)
    return ["stream", "--target", f"127.0.0.1:{target}", "--streams", str(level),
            "--per-worker", str(per_worker), "--ramp", str(ramp), "--chunks", str(a.chunks),
            "--rate", str(a.rate), "--grace", str(a.grace)]


def plain_args(target: int, clients: int, duration: float) -> list[str]:
    return ["plain", "--target", f"127.0.0.1:{target}", "--clients", str(clients),
            "--duration", str(duration), "--warmup", "0.5"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def brief(r: dict) -> str:
    p = r["proc"].get("proxy") or r["proc"].get("upstream")
    if r["mode"] == "stream":
        return (f"delay p50 {r['delay_ms']['p50']:.2f} p99 {r['delay_ms']['p99']:.2f} ms, "
                f"lost {r['chunks_lost']}, {p.get('us_per_chunk', 0):.1f} us/chunk, "
                f"util {p['util']:.2f}, other load {r['foreign_cores']:.2f} cores")
    return (f"{r['rps']:.0f} req/s, p50 {r['latency_ms']['p50']:.2f} p99 "
            f"{r['latency_ms']['p99']:.2f} ms, {p.get('us_per_request', 0):.0f} us/req, "
            f"util {p['util']:.2f}, other load {r['foreign_cores']:.2f} cores")


def measure(a: argparse.Namespace) -> dict:
    results: dict = {"started": datetime.datetime.now().isoformat(timespec="seconds"),
                     "config": {k: v for k, v in vars(a).items() if k != "table"},
                     "runs": []}
    variants = a.variants
    for rep in range(a.reps):
        up_port = free_port()
        upstream = start(["upstream.py", "--chunks", str(a.chunks), "--rate", str(a.rate)],
                         up_port, LOAD_CPU)
        try:
            base = {"upstream": upstream.pid}
            for level in a.levels:
                r = loadgen(stream_args(up_port, level, a), base)
                results["runs"].append({"rep": rep, "variant": "direct", "kind": f"stream{level}",
                                        **r})
                log(f"[{rep}] direct stream{level}: {brief(r)}")
            if a.plain:
                for clients, dur in ((64, a.duration), (1, a.duration / 2)):
                    r = loadgen(plain_args(up_port, clients, dur), base)
                    results["runs"].append({"rep": rep, "variant": "direct",
                                            "kind": f"plain{clients}", **r})
                    log(f"[{rep}] direct plain{clients}: {brief(r)}")
            order = variants[rep % len(variants):] + variants[:rep % len(variants)]
            for v in order:
                extra = ["--upstream", f"127.0.0.1:{up_port}"]
                for level in a.levels:
                    port = free_port()
                    proxy = start(VARIANTS[v], port, PROXY_CPU, extra)
                    try:
                        warm_up(port)
                        r = loadgen(stream_args(port, level, a),
                                    {"proxy": proxy.pid, "upstream": upstream.pid})
                    finally:
                        stop(proxy)
                    results["runs"].append({"rep": rep, "variant": v, "kind": f"stream{level}",
                                            **r})
                    log(f"[{rep}] {v} stream{level}: {brief(r)}")
                if a.plain:
                    port = free_port()
                    proxy = start(VARIANTS[v], port, PROXY_CPU, extra)
                    try:
                        warm_up(port)
                        for clients, dur in ((64, a.duration), (1, a.duration / 2)):
                            r = loadgen(plain_args(port, clients, dur),
                                        {"proxy": proxy.pid, "upstream": upstream.pid})
                            results["runs"].append({"rep": rep, "variant": v,
                                                    "kind": f"plain{clients}", **r})
                            log(f"[{rep}] {v} plain{clients}: {brief(r)}")
                    finally:
                        stop(proxy)
        finally:
            stop(upstream)
    results["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    return results


# ---------------------------------------------------------------- table


def med(values: list[float]) -> float:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def table(results: dict) -> str:
    runs = results["runs"]
    variants = []
    for r in runs:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    kinds = sorted({r["kind"] for r in runs if r["kind"].startswith("stream")},
                   key=lambda k: int(k[6:]))

    def pick(v, kind):
        return [r for r in runs if r["variant"] == v and r["kind"] == kind]

    def proc(r):
        return r["proc"].get("proxy") or r["proc"].get("upstream") or {}

    nice = results["config"].get("nice", 0)
    lines = [f"Medians of {results['config']['reps']} repetitions, niceness {nice} "
             f"({results['started']} .. {results.get('finished', '?')}). "
             "Delay = client receive time - upstream send time of each chunk; "
             "direct = load generator straight to the upstream (no proxy; its CPU columns are "
             "the upstream's).", ""]
    if kinds:
        pw = results["config"].get("per_worker", 1)
        lines += [f"Streams ({results['config']['chunks']} chunks at "
                  f"{results['config']['rate']:g}/s each; {pw} stream(s) per client connection "
                  "above concurrency 1):", "",
                  "| stack | streams | delay p50 ms | delay p99 ms | lost chunks | proxy CPU "
                  "us/chunk | proxy core util | RSS KB/stream | other load (cores) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for v in variants:
        for kind in kinds:
            rs = pick(v, kind)
            if not rs:
                continue
            rss = (f"{med([proc(r).get('rss_per_stream_kb') for r in rs]):.1f}"
                   if v != "direct" else "-")
            lines.append(
                f"| {v} | {kind[6:]} | {med([r['delay_ms']['p50'] for r in rs]):.2f} | "
                f"{med([r['delay_ms']['p99'] for r in rs]):.2f} | "
                f"{max(r['chunks_lost'] for r in rs)} | "
                f"{med([proc(r).get('us_per_chunk') for r in rs]):.1f} | "
                f"{med([proc(r)['util'] for r in rs]):.2f} | {rss} | "
                f"{med([r['foreign_cores'] for r in rs]):.2f} |")
    if not any(r["kind"].startswith("plain") for r in runs):
        return "\n".join(lines)
    lines += ["", "Non-streamed (~1 KB each way):", "",
              "| stack | clients | req/s | latency p50 ms | latency p99 ms | added p50 ms | "
              "added p99 ms | proxy CPU us/request | proxy core util | other load (cores) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for v in variants:
        for kind in ("plain64", "plain1"):
            rs = pick(v, kind)
            if not rs:
                continue
            base = pick("direct", kind)
            p50 = med([r["latency_ms"]["p50"] for r in rs])
            p99 = med([r["latency_ms"]["p99"] for r in rs])
            b50 = med([r["latency_ms"]["p50"] for r in base])
            b99 = med([r["latency_ms"]["p99"] for r in base])
            added = "-" if v == "direct" else f"{p50 - b50:.2f} | {p99 - b99:.2f}"
            if v == "direct":
                added = "- | -"
            lines.append(
                f"| {v} | {kind[5:]} | {med([r['rps'] for r in rs]):.0f} | {p50:.2f} | "
                f"{p99:.2f} | {added} | {med([proc(r).get('us_per_request') for r in rs]):.0f} | "
                f"{med([proc(r)['util'] for r in rs]):.2f} | "
                f"{med([r['foreign_cores'] for r in rs]):.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", nargs="+", default=DEFAULT_VARIANTS, choices=list(VARIANTS))
    ap.add_argument("--levels", nargs="+", type=int, default=[1, 64, 256, 512])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--chunks", type=int, default=60)
    ap.add_argument("--rate", type=float, default=30.0)
    ap.add_argument("--ramp", type=float, default=0.5, help="stream start spread, seconds")
    ap.add_argument("--per-worker", type=int, default=1,
                    help="streams each client runs back to back on its keep-alive connection "
                    "(above concurrency 1); >1 measures the steady state with connections reused")
    ap.add_argument("--single-streams", type=int, default=2,
                    help="streams run back to back at concurrency 1")
    ap.add_argument("--grace", type=float, default=8.0,
                    help="seconds a stream run may overrun its schedule; chunks not received "
                    "by then count as lost (a stack that far behind cannot hold the load)")
    ap.add_argument("--duration", type=float, default=2.0,
                    help="non-streamed run with 64 clients, seconds (half that with 1 client)")
    ap.add_argument("--no-plain", dest="plain", action="store_false",
                    help="skip the non-streamed measurements")
    ap.add_argument("--no-streams", action="store_true", help="skip the stream measurements")
    ap.add_argument("--nice", type=int, default=0,
                    help="niceness of the upstream, proxy and load generator, each in its own "
                    "scheduler autogroup (e.g. -10 to get most of each core on a machine busy "
                    "with other work; needs root)")
    ap.add_argument("--table", metavar="RESULTS_JSON", help="only print the table of a run")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if a.table:
        with open(a.table) as f:
            print(table(json.load(f)))
        return
    global NICE
    NICE = a.nice
    if a.no_streams:
        a.levels = []
    t0 = time.monotonic()
    results = measure(a)
    results["elapsed_s"] = time.monotonic() - t0
    os.makedirs(a.out, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(a.out, f"{stamp}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=1)
    md = table(results)
    with open(os.path.join(a.out, f"{stamp}.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    log(f"\nraw results: {path} ({results['elapsed_s']:.0f} s)")


if __name__ == "__main__":
    main()
