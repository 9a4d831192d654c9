"""The gateway benchmark's figures: medians over repetitions, the goals, the tables.

``summarise(runs, header)`` reduces the load generator's results to one figure per argument
size, server, level and measure (the median over repetitions; lost chunks: the maximum; failed
checks: the sum), then judges the goals of the issue on the first size (and the floor ratios on
every other size: per streamed chunk, and requests per second without streaming) and compares
with LiteLLM's proxy. Missing figures are
NaN (``-`` in the text, ``null`` in JSON).
"""

from __future__ import annotations

import json
import math
import statistics
from typing import Any

from .script import SHORT, arg_chars

# LiteLLM's proxy as quoted in the issue; "ms per request" is read as its CPU per non-streamed
# request (13.5 ms, consistent with its ~70 req/s on one core).
LITELLM = {"us_per_chunk": 950.0, "ms_per_request": 13.5, "p99_64_ms": 4000.0, "rps": 70.0}
FLOOR_RATIO = 1.5  # per streamed chunk, x the floor's, while a call is recovered
PROSE_FLOOR_RATIO = 1.2  # the same for an answer without a call
PLAIN_FLOOR_RATIO = 0.85  # non-streamed requests per second, x the floor's (at least)
P99_GOAL_MS = 20.0
GOAL_STREAMS = 512
RPS_GOAL = 2500.0
LITELLM_FACTOR = 10.0
NAN = float("nan")
GOAL4 = "issue 37 goal 4: "  # streaming kept (per chunk against the floor; a call sent whole)


def _med(values: list[Any]) -> float:
    values = [v for v in values if isinstance(v, (int, float)) and not math.isnan(v)]
    return statistics.median(values) if values else NAN


def _server(r: dict[str, Any]) -> dict[str, Any]:
    return r["proc"].get("server") or r["proc"].get("upstream") or {}


def _stream_cell(rs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "delay_p50_ms": _med([r["delay_ms"]["p50"] for r in rs]),
        "delay_p99_ms": _med([r["delay_ms"]["p99"] for r in rs]),
        "lost": max(r["chunks_lost"] for r in rs),
        "failed_checks": sum(r["problem_count"] for r in rs),
        "us_per_chunk": _med([_server(r).get("us_per_chunk") for r in rs]),
        "util": _med([_server(r).get("util") for r in rs]),
        "rss_kb_per_stream": _med([_server(r).get("rss_per_stream_kb") for r in rs]),
        "other_load": _med([r["other_load"] for r in rs]),
        "client_chunks_per_stream": rs[0]["client_chunks_per_stream"],
        "call_delay_p50_ms": _med([r.get("call_delay_ms", {}).get("p50") for r in rs]),
        "call_delay_p99_ms": _med([r.get("call_delay_ms", {}).get("p99") for r in rs]),
    }


def _plain_cell(rs: list[dict[str, Any]], base: list[dict[str, Any]]) -> dict[str, Any]:
    p50 = _med([r["latency_ms"]["p50"] for r in rs])
    p99 = _med([r["latency_ms"]["p99"] for r in rs])
    return {
        "rps": _med([r["rps"] for r in rs]), "p50_ms": p50, "p99_ms": p99,
        "added_p50_ms": p50 - _med([r["latency_ms"]["p50"] for r in base]),
        "added_p99_ms": p99 - _med([r["latency_ms"]["p99"] for r in base]),
        "us_per_request": _med([_server(r).get("us_per_request") for r in rs]),
        "util": _med([_server(r).get("util") for r in rs]),
        "other_load": _med([r["other_load"] for r in rs]),
        "failed_checks": sum(r["problem_count"] + r["errors"] for r in rs),
    }


def summarise(runs: list[dict[str, Any]], header: dict[str, Any]) -> dict[str, Any]:
    """Medians per argument size, server and level, the goals, and the comparison with LiteLLM.

    ``streams`` and ``plain`` are keyed by size, then server, then level (or clients).
    """
    sizes = header["args"]
    streams: dict[str, dict[str, dict[int, Any]]] = {size: {} for size in sizes}
    plain: dict[str, dict[str, dict[int, Any]]] = {size: {} for size in sizes}
    for r in runs:
        same = [x for x in runs if x["args"] == r["args"] and x["server"] == r["server"]
                and x["kind"] == r["kind"]]
        if r["mode"] == "stream":
            streams[r["args"]].setdefault(r["server"], {})[r["streams"]] = _stream_cell(same)
        else:
            base = [x for x in runs if x["args"] == r["args"] and x["server"] == "direct"
                    and x["kind"] == r["kind"]]
            plain[r["args"]].setdefault(r["server"], {})[r["clients"]] = _plain_cell(same, base)
    for size in sizes:
        for level, cell in streams[size].get("gateway", {}).items():
            floor = streams[size].get("floor", {}).get(level, {}).get("us_per_chunk", NAN)
            cell["x_floor"] = cell["us_per_chunk"] / floor
    summary: dict[str, Any] = {"args": sizes, "streams": streams, "plain": plain}
    first = sizes[0]
    summary["goals"] = _goals({"streams": streams[first], "plain": plain[first]},
                              max(header["levels"][first]), header["rate"][first], first)
    for size in sizes[1:]:
        summary["goals"] += [_floor_goal(streams[size], max(header["levels"][size]), size),
                             _plain_floor_goal(plain[size], size)]
    summary["goals"] += [_wire_goal(streams[size], max(header["levels"][size]), size)
                         for size in sizes if size != "prose"]
    return summary


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def _floor_goal(streams: dict[str, Any], top: int, size: str) -> dict[str, Any]:
    """Parsing and translation per chunk at ``top`` streams, against the floor's."""
    gw_top = streams.get("gateway", {}).get(top, {})
    floor_top = streams.get("floor", {}).get(top, {})
    ratio = gw_top.get("x_floor", NAN)
    most = PROSE_FLOOR_RATIO if size == "prose" else FLOOR_RATIO
    label = GOAL4 if size in SHORT else ""  # (the <N>k sizes run at fewer streams)
    return {"goal": f"{label}parsing + translation per chunk, x the floor ({size} args, {top} streams)",
            "figure": f"{_f(gw_top.get('us_per_chunk'), '.1f')} / "
                      f"{_f(floor_top.get('us_per_chunk'), '.1f')} us = {_f(ratio)}x",
            "target": f"<= {most}x", "result": _verdict(ratio <= most)}


def _wire_goal(streams: dict[str, Any], top: int, size: str) -> dict[str, Any]:
    """The time from a call's last character to its bytes at the client, at ``top`` streams:
    the delay of the chunk the call comes in (sent whole, out of the upstream chunk that holds
    its last character), p50 and p99, beside the floor's delay for that same upstream chunk.
    Issue 37 asks for the figure, with no bound: the result is n/a."""
    gw = streams.get("gateway", {}).get(top, {})
    floor = streams.get("floor", {}).get(top, {})
    p50, p99 = gw.get("call_delay_p50_ms", NAN), gw.get("call_delay_p99_ms", NAN)
    f50, f99 = floor.get("call_delay_p50_ms", NAN), floor.get("call_delay_p99_ms", NAN)
    return {"goal": f"{GOAL4}a call's last character to its bytes on the wire ({size} args, {top} streams)",
            "figure": f"p50 {_f(p50)} ms, p99 {_f(p99, '.1f')} ms; the floor, same chunk: p50 "
                      f"{_f(f50)} ms, p99 {_f(f99, '.1f')} ms ({_f(p50 / f50)}x, {_f(p99 / f99)}x)",
            "target": "reported", "result": _verdict(None)}


def _plain_floor_goal(plain: dict[str, Any], size: str) -> dict[str, Any]:
    """Non-streamed requests per second at 64 clients, against the floor's."""
    ours = plain.get("gateway", {}).get(64, {}).get("rps", NAN)
    floor = plain.get("floor", {}).get(64, {}).get("rps", NAN)
    ratio = ours / floor if floor else NAN  # (a floor that answered nothing: no figure)
    return {"goal": f"non-streamed req/s, x the floor ({size} args, 64 clients)",
            "figure": f"{_f(ours, ',.0f')} / {_f(floor, ',.0f')} = {_f(ratio)}x",
            "target": f">= {PLAIN_FLOOR_RATIO}x", "result": _verdict(ratio >= PLAIN_FLOOR_RATIO)}


def _goals(s: dict[str, Any], top: int, rate: float, size: str) -> list[dict[str, Any]]:
    gw_top = s["streams"].get("gateway", {}).get(top, {})
    gw64 = s["plain"].get("gateway", {}).get(64, {})
    p99, lost = gw_top.get("delay_p99_ms", NAN), gw_top.get("lost", -1)
    bad = gw_top.get("failed_checks", 0)
    held = p99 < P99_GOAL_MS and lost == 0 and not bad
    rps = gw64.get("rps", NAN)
    return [
        _floor_goal(s["streams"], top, size),
        _plain_floor_goal(s["plain"], size),
        {"goal": f"{top} streams at {rate:g} chunks/s, one process",
         "figure": f"p99 {_f(p99, '.1f')} ms, {lost} lost, {bad} bad",
         "target": f"p99 < {P99_GOAL_MS:g} ms, 0 lost",
         "result": _verdict(held if top == GOAL_STREAMS and rate == 30 else None)},
        {"goal": "non-streamed req/s, 64 clients, one process", "figure": _f(rps, ",.0f"),
         "target": f">= {RPS_GOAL:,.0f}", "result": _verdict(rps >= RPS_GOAL)},
        *_litellm(s, gw_top, gw64),
    ]


def _litellm(s: dict[str, Any], gw_top: dict[str, Any],
             gw64: dict[str, Any]) -> list[dict[str, Any]]:
    us = gw_top.get("us_per_chunk", NAN)
    ms = gw64.get("us_per_request", NAN) / 1000
    p99_64 = s["streams"].get("gateway", {}).get(64, {}).get("delay_p99_ms", NAN)
    rps = gw64.get("rps", NAN)
    rows = [
        ("CPU per streamed chunk", f"{_f(us, '.1f')} us", "950 us", LITELLM["us_per_chunk"] / us),
        ("CPU per non-streamed request", f"{_f(ms)} ms", "13.5 ms", LITELLM["ms_per_request"] / ms),
        ("p99 delay at 64 streams", f"{_f(p99_64, '.1f')} ms", "> 4 s",
         LITELLM["p99_64_ms"] / p99_64),
        ("req/s, 64 clients", _f(rps, ",.0f"), "~70", rps / LITELLM["rps"]),
    ]
    return [{"goal": f"vs LiteLLM: {what}", "figure": f"{ours} vs {theirs} = {_f(factor, '.0f')}x",
             "target": f">= {LITELLM_FACTOR:g}x", "ratio": factor,
             "result": _verdict(None if math.isnan(factor) else factor >= LITELLM_FACTOR)}
            for what, ours, theirs, factor in rows]


# ---------------------------------------------------------------- text


def _f(value: Any, spec: str = ".2f") -> str:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return "-"
    return format(value, spec)


def _table(head: list[str], rows: list[list[str]], left: int = 1) -> list[str]:
    align = ["---"] * left + ["---:"] * (len(head) - left)
    return [f"| {' | '.join(row)} |" for row in (head, align, *rows)]


def _stream_rows(s: dict[str, Any]) -> list[list[str]]:
    rows = []
    for size, servers in s["streams"].items():
        for server, cells in servers.items():
            for level, c in sorted(cells.items()):
                rows.append(_stream_row(size, server, level, c))
    return rows


def _stream_row(size: str, server: str, level: int, c: dict[str, Any]) -> list[str]:
    direct = server == "direct"
    cpu = _f(c["us_per_chunk"], ".1f")
    return [size, server, str(level), _f(c["delay_p50_ms"]), _f(c["delay_p99_ms"]),
            str(c["lost"]) + (f" ({c['failed_checks']} bad)" if c["failed_checks"] else ""),
            f"({cpu} upstream)" if direct else cpu, _f(c.get("x_floor")), _f(c["util"]),
            _f(c["rss_kb_per_stream"], ".1f") if not direct and level >= 16 else "-",
            _f(c["other_load"])]


def _plain_rows(s: dict[str, Any]) -> list[list[str]]:
    rows = []
    for size, servers in s["plain"].items():
        for server, cells in servers.items():
            for clients, c in sorted(cells.items(), reverse=True):
                rows.append(_plain_row(size, server, clients, c))
    return rows


def _plain_row(size: str, server: str, clients: int, c: dict[str, Any]) -> list[str]:
    direct = server == "direct"
    cpu = _f(c["us_per_request"], ".0f")
    return [size, server, str(clients),
            _f(c["rps"], ",.0f") + (f" ({c['failed_checks']} bad)" if c["failed_checks"] else ""),
            _f(c["p50_ms"]), _f(c["p99_ms"]), "-" if direct else _f(c["added_p50_ms"]),
            "-" if direct else _f(c["added_p99_ms"]), f"({cpu} upstream)" if direct else cpu,
            _f(c["util"]), _f(c["other_load"])]


def _worker_rows(s: dict[str, Any], header: dict[str, Any], size: str) -> list[list[str]]:
    top, rows = max(header["levels"][size]), []
    for n in header["workers"]:
        name = "gateway" if n == 1 else f"gateway x{n}"
        p = s["plain"][size].get(name, {}).get(64, {})
        st = s["streams"][size].get(name, {}).get(top, {})
        rows.append([str(n), _f(p.get("rps"), ",.0f"), _f(p.get("util")),
                     _f(st.get("delay_p50_ms")), _f(st.get("delay_p99_ms")),
                     str(st.get("lost", "-")),
                     _f(st.get("us_per_chunk"), ".1f"), _f(st.get("util"))])
    return rows


def _sizes_line(h: dict[str, Any], s: dict[str, Any]) -> str:
    parts = []
    for size in h["args"]:
        cells = s["streams"][size].get("gateway", {})
        client = next(iter(cells.values()))["client_chunks_per_stream"] if cells else "?"
        what = {"small": "~300 characters of arguments", "prose": "no call, content only"}.get(
            size) or f"a new_string of {arg_chars(size):,} characters"
        parts.append(f"{size}: {what}, {h['upstream_chunks_per_stream'][size]} upstream chunks "
                     f"per stream at {h['rate'][size]:g}/s ({client} client chunks through the "
                     f"gateway), streams {','.join(map(str, h['levels'][size]))}")
    return (f"Script ({h['dialect']}): content, then one tool call (prose: none), in "
            f"~4-character deltas; "
            f"by argument size (args), {'; '.join(parts)}.")


def _preamble(h: dict[str, Any], s: dict[str, Any]) -> list[str]:
    return [
        (f"toolbridge gateway benchmark ({h['date']}, {h['python']}, {h['cpus']} CPUs, "
         f"{h['seconds']:.0f} s{', QUICK' if h['quick'] else ''})"),
        (f"Medians of {h['repeat']} repetition(s). Upstream and load generator on core 1 "
         f"(niceness {h['harness_nice']}); floor and 1-worker gateway on core 0 (niceness "
         f"{h['nice']}); 2 workers: one on each core."),
        _sizes_line(h, s),
        ("Delay = client receive - upstream send of the chunk it comes from. CPU per chunk = "
         "server CPU / upstream chunks relayed (at 1 stream mostly the request's own cost)."),
    ]


WORKERS_NOTE = (
    "This machine has {cpus} cores: the second worker shares core 1 with the upstream and the "
    "load generator (which take priority), so it gets only what they leave, and its streams "
    "wait behind them. Scaling is per core; with a core per worker each worker holds what one "
    "process holds."
)


def report_text(header: dict[str, Any], s: dict[str, Any]) -> str:
    first = header["args"][0]
    top = max(header["levels"][first])
    stream_head = ["args", "server", "streams", "delay p50 ms", "delay p99 ms", "lost",
                   "CPU us/chunk", "x floor", "core util", "RSS KB/stream", "other load"]
    plain_head = ["args", "server", "clients", "req/s", "p50 ms", "p99 ms", "added p50 ms",
                  "added p99 ms", "CPU us/request", "core util", "other load"]
    goals = [[g["goal"], g["figure"], g["target"], g["result"]] for g in s["goals"]]
    lines = [*_preamble(header, s), "", "Streams:", "",
             *_table(stream_head, _stream_rows(s), left=2), "",
             ("Non-streamed (the answer's text holds the call, ~1 KB each way with small args; "
              "added = minus direct at the same size and client count):"),
             "", *_table(plain_head, _plain_rows(s), left=2),
             "", "Goals:", "", *_table(["goal", "figure", "target", "result"], goals, left=4)]
    if len(header["workers"]) > 1:
        worker_head = ["workers", "req/s, 64 clients", "cores used", f"p50 ms, {top} streams",
                       f"p99 ms, {top} streams", "lost", "CPU us/chunk", "cores used (streams)"]
        lines += ["", (f"Workers, {first} args (`toolbridge serve --workers N`: N processes "
                       "share the port through SO_REUSEPORT and the kernel spreads connections "
                       "over them):"),
                  "", *_table(worker_head, _worker_rows(s, header, first)),
                  "", WORKERS_NOTE.format(cpus=header["cpus"])]
    return "\n".join(lines)


def _plain_json(value: Any) -> Any:
    """``value`` with NaN as null (strict JSON) and every key a string."""
    if isinstance(value, dict):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    return None if isinstance(value, float) and math.isnan(value) else value


def report_json(header: dict[str, Any], s: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    return json.dumps(_plain_json({"header": header, "summary": s, "runs": runs}), indent=1,
                      allow_nan=False)
