"""``toolbridge bench --plain``: non-streamed requests through the gateway against the floor, per
front and dialect (issue 37's goal 2).

For each dialect (hermes, qwen3_coder) and answer (``small``: content then one call; ``prose``:
content only; ``33k``: a call with a 33,000-character argument), one upstream process
(``servers upstream``) answers every request at once, and two servers run on core 0: the floor
(``servers floor``: a plain proxy on the gateway's stack that decodes and re-encodes, and
translates nothing) and the gateway (``toolbridge serve``, one worker). The load generator
(``load plain``: 64 keep-alive clients back to back, on core 1) asks the floor through Chat
Completions and the gateway through each of its three fronts, one after the other, the order
rotating between repeats; each figure is the median of its repeats, and each front's ratio is
the median of the repeats' ratios to the floor's run of the same repeat. The first answer on
every connection is checked (the call, the text; ``load``), so a wrong answer cannot pass for a
fast one. Each row also gives the server's median CPU time a request (``µs/req``, from the
server's schedstat over the measured window), the gateway's and the floor's: with both cores
saturated the rates follow them, and on a machine shared with other work they move less than
the rates do, so they tell where a change of the ratio comes from.

Goals: each front at >= 0.5x the floor's rate, and the chat front at >= 2,500 req/s (one core,
small call and prose).

``--bound`` adds, for hermes, a third server beside them: ``bound`` (``python -m
toolbridge.bench.bound``), the least a translation of these requests must do on the same stack,
checked by the same load. Its ratio to the floor is an upper bound for the gateway's, whatever
the gateway is made of.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Any

from .gateway import LOAD_CPU, LOADGEN, SERVER_CPU, SERVERS, Procs, warm_up
from .ports import free_port
from .script import Script

DIALECTS = ("hermes", "qwen3_coder")
SIZES = ("small", "prose", "33k")
FRONTS = ("chat", "messages", "responses")
RATIO_GOAL = 0.5  # x the floor's requests per second
RPS_GOAL = 2500.0  # the chat front, one core (small call and prose)
BOUND = "toolbridge.bench.bound"
BOUND_DIALECTS = ("hermes",)  # what the bound reads


def _server_argv(server: str, port: int, up: int, dialect: str) -> list[str]:
    if server == "floor":
        return ["-m", SERVERS, "floor", "--port", str(port), "--upstream", f"127.0.0.1:{up}"]
    if server == "bound":
        return ["-m", BOUND, "--port", str(port), "--upstream", f"127.0.0.1:{up}"]
    return ["-m", "toolbridge", "serve", "--port", str(port), "--upstream", f"http://127.0.0.1:{up}/v1",
            "--tool-call-parser", dialect]


def _rate(procs: Procs, port: int, up: int, pid: int, dialect: str, size: str, front: str | None,
          duration: float) -> dict[str, Any]:
    argv = ["-m", LOADGEN, "plain", "--target", f"127.0.0.1:{port}", "--upstream", f"127.0.0.1:{up}",
            "--dialect", dialect, "--args", size, "--clients", "64", "--duration", str(duration),
            "--warmup", "0.3", f"--pid=server={pid}"]
    argv += ["--translated", "--front", front] if front else []
    return json.loads(procs.run(argv, {LOAD_CPU}, timeout=120))


def measure_case(procs: Procs, dialect: str, size: str, repeat: int, duration: float,
                 bound: bool = False) -> dict[str, Any]:
    """One dialect and answer: every repeat's floor rate and each front's (``bound``: and the
    bound's, each front's under the key ``bound FRONT``)."""
    up = free_port()
    upstream = procs.start(["-m", SERVERS, "upstream", "--port", str(up), "--dialect", dialect,
                            "--args", size, "--rate", "30"], {LOAD_CPU}, up, harness=True)
    bound = bound and dialect in BOUND_DIALECTS
    names = ["floor", *FRONTS, *(f"bound {f}" for f in FRONTS if bound)]
    runs: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}  # server µs a request
    problems: list[str] = []
    try:
        servers = {}
        for server in ("floor", "gateway", "bound") if bound else ("floor", "gateway"):
            port = free_port()
            proc = procs.start(_server_argv(server, port, up, dialect), {SERVER_CPU}, port)
            if server != "bound":  # (it does not stream: the load's own warm-up warms it)
                warm_up(port, Script.build(dialect, size))
            servers[server] = (proc, port)
        targets = [("floor", None), *(("gateway", f) for f in FRONTS), *(("bound", f) for f in FRONTS if bound)]
        for rep in range(repeat):
            shift = rep % len(targets)
            for server, front in targets[shift:] + targets[:shift]:
                proc, port = servers[server]
                res = _rate(procs, port, up, proc.pid, dialect, size, front, duration)
                name = "floor" if front is None else (f"bound {front}" if server == "bound" else front)
                runs[name].append(res["rps"])
                used = res["proc"].get("server", {}).get("us_per_request")
                if used is not None:
                    cpu[name].append(used)
                problems += [f"{dialect} {size} {name}: {p}" for p in res["problems"]]
                if res["errors"] or res["problem_count"]:
                    problems.append(f"{dialect} {size} {name}: {res['errors']} errors, "
                                    f"{res['problem_count']} failed checks")
    finally:
        procs.stop_all()
    return {"dialect": dialect, "size": size, "rps": runs, "cpu_us": cpu, "problems": sorted(set(problems))}


def rows(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The case's rows: each front's median rate, its median ratio to the floor, the verdicts,
    and the server's median CPU time a request (the gateway's and the floor's: what the rates
    come from when the server's core is saturated, and less disturbed by other work on it)."""
    floor = case["rps"]["floor"]
    cpu = case.get("cpu_us", {})
    out = []
    for front in FRONTS:
        rates = case["rps"][front]
        ratio = _ratio(rates, floor)
        rps = statistics.median(rates) if rates else None
        rps_goal = RPS_GOAL if front == "chat" and case["size"] != "33k" else None
        out.append({"dialect": case["dialect"], "size": case["size"], "front": front, "rps": rps,
                    "floor_rps": statistics.median(floor) if floor else None, "ratio": ratio,
                    "cpu_us": _median(cpu.get(front)), "floor_cpu_us": _median(cpu.get("floor")),
                    "bound_ratio": _ratio(case["rps"].get(f"bound {front}"), floor),
                    "bound_cpu_us": _median(cpu.get(f"bound {front}")),
                    "ratio_ok": None if ratio is None else ratio >= RATIO_GOAL,
                    "rps_goal": rps_goal, "rps_ok": None if rps_goal is None or rps is None else rps >= rps_goal})
    return out


def _ratio(rates: list[float] | None, floor: list[float]) -> float | None:
    """The median of a server's repeats' ratios to the floor's run of the same repeat."""
    return statistics.median(r / f for r, f in zip(rates, floor)) if rates and floor and min(floor) else None


def _median(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("PASS" if ok else "FAIL")


def report(table: list[dict[str, Any]], repeat: int, duration: float) -> str:
    bound = any(r.get("bound_ratio") is not None for r in table)
    lines = ["toolbridge bench --plain: non-streamed requests, 64 keep-alive clients; gateway (1 worker) and "
             "floor on core 0, the load and the upstream on core 1",
             f"medians of {repeat} repeats of {duration:g} s each, the order rotating; ratio: the median of the "
             "repeats' ratios to the floor (Chat Completions through the plain proxy); µs/req: the server's median CPU "
             "time a request (the gateway's, the floor's)", "",
             f"  {'dialect':<12}{'answer':<8}{'front':<11}{'req/s':>8}{'floor':>8}{'ratio':>8}  "
             f"{'goal':<8}{'':<6}{'req/s goal':<12}{'':<6}{'µs/req':>8}{'floor':>8}"
             + (f"{'bound':>8}{'µs/req':>8}" if bound else "")]
    for r in table:
        rps = "" if r["rps"] is None else f"{r['rps']:,.0f}"
        floor = "" if r["floor_rps"] is None else f"{r['floor_rps']:,.0f}"
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        rps_goal = "" if r["rps_goal"] is None else f">= {r['rps_goal']:,.0f}"
        cpu = "" if r.get("cpu_us") is None else f"{r['cpu_us']:,.0f}"
        floor_cpu = "" if r.get("floor_cpu_us") is None else f"{r['floor_cpu_us']:,.0f}"
        lines.append(f"  {r['dialect']:<12}{r['size']:<8}{r['front']:<11}{rps:>8}{floor:>8}{ratio:>8}  "
                     f">= {RATIO_GOAL}x  {_verdict(r['ratio_ok']):<6}{rps_goal:<12}{_verdict(r['rps_ok']):<6}"
                     f"{cpu:>8}{floor_cpu:>8}{_bound(r) if bound else ''}".rstrip())
    if bound:
        lines += ["", "bound: the ratio to the floor of the least translation of these requests "
                  "(toolbridge.bench.bound), and its µs/req: no gateway on this stack passes it"]
    verdicts = [v for r in table for v in (r["ratio_ok"], r["rps_ok"]) if v is not None]
    return "\n".join([*lines, "", f"goals met: {sum(verdicts)} of {len(verdicts)}"])


def _bound(row: dict[str, Any]) -> str:
    ratio, cpu = row.get("bound_ratio"), row.get("bound_cpu_us")
    return f"{'' if ratio is None else f'{ratio:.2f}x':>8}{'' if cpu is None else f'{cpu:,.0f}':>8}"


def main(argv: list[str] | None = None) -> int:
    """Print the table (or ``--json``); 1 when an answer was wrong or a request failed."""
    parser = argparse.ArgumentParser(prog="toolbridge bench --plain", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 repeat of 0.5 s, small call only")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--duration", type=float, default=1.0, help="seconds a measured run lasts")
    parser.add_argument("--dialect", action="append", choices=DIALECTS, help="only this dialect (repeatable)")
    parser.add_argument("--size", action="append", choices=SIZES, help="only this answer (repeatable)")
    parser.add_argument("--nice", type=int, default=-10, help="the servers' niceness, when permitted")
    parser.add_argument("--json", action="store_true", help="print machine-readable results")
    parser.add_argument("--bound", action="store_true",
                        help="also measure the least translation of these requests (hermes; toolbridge.bench.bound)")
    parser.add_argument("--instructions", action="store_true",
                        help="count each server's instructions a request under callgrind instead of timing "
                             "(toolbridge.bench.instructions)")
    parser.add_argument("--requests", type=int, help="--instructions: requests counted a front (640; --quick 40)")
    parser.add_argument("--connections", type=int, default=64, help="--instructions: keep-alive connections")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.instructions:
        return _counted(args)
    repeat, duration = (1, 0.5) if args.quick else (args.repeat, args.duration)
    sizes = args.size or (("small",) if args.quick else SIZES)
    procs = Procs(args.nice)
    cases = [measure_case(procs, d, s, repeat, duration, args.bound) for d in args.dialect or DIALECTS for s in sizes]
    table = [row for case in cases for row in rows(case)]
    problems = [p for case in cases for p in case["problems"]]
    print(json.dumps({"rows": table, "cases": cases}, indent=2) if args.json else report(table, repeat, duration),
          flush=True)
    for problem in problems:
        print(f"toolbridge bench --plain: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _counted(args: argparse.Namespace) -> int:
    """``--instructions``: the table counted under callgrind (``bench.instructions``); 2 when
    valgrind is not there, 1 when an answer was wrong or a request failed."""
    from . import instructions

    why = instructions.available()
    if why is not None:
        print(f"toolbridge bench --plain --instructions: {why}", file=sys.stderr)
        return 2
    sizes = args.size or (("small",) if args.quick else SIZES)
    requests = args.requests or (40 if args.quick else 640)
    cases = [instructions.count_case(d, s, requests, args.connections, args.bound and d in BOUND_DIALECTS, FRONTS,
                                     _server_argv)
             for d in args.dialect or DIALECTS for s in sizes]
    table = [row for case in cases for row in instructions.rows(case, FRONTS, RATIO_GOAL)]
    problems = [p for case in cases for p in case["problems"]]
    print(json.dumps({"rows": table, "cases": cases}, indent=2) if args.json
          else instructions.report(table, requests, args.connections, RATIO_GOAL), flush=True)
    for problem in problems:
        print(f"toolbridge bench --plain --instructions: {problem}", file=sys.stderr)
    return 1 if problems else 0
