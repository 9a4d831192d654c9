"""Smoke test of ``toolbridge bench --gateway``: a tiny run (1 and 4 streams with the small call,
1 and 2 with the 33k-character one, a fraction of a second of non-streamed requests, fast
pacing) through real processes on loopback. Only the
structure of the output and the correctness checks are asserted, no timing (machines are shared
and noisy)."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from toolbridge.bench import gateway as bench_gateway
from toolbridge.bench import parsers as bench
from toolbridge.bench.report import report_text, summarise
from toolbridge.bench.script import ARGS, DIALECTS, Script, assemble, call_args, check_message

TINY = ["--quick", "--streams", "1,4", "--workers", "1,2", "--repeat", "1", "--rate", "300",
        "--args", "small,prose,33k", "--long-streams", "1,2", "--long-rate", "4000",
        "--ramp", "0.1", "--duration", "0.2", "--grace", "5", "--nice", "0", "--json"]
LEVELS = {"small": {"1", "4"}, "prose": {"1", "4"}, "33k": {"1", "2"}}
STREAM_FIELDS = {"delay_p50_ms", "delay_p99_ms", "lost", "failed_checks", "us_per_chunk", "util",
                 "rss_kb_per_stream", "other_load", "client_chunks_per_stream"}
PLAIN_FIELDS = {"rps", "p50_ms", "p99_ms", "added_p50_ms", "added_p99_ms", "us_per_request",
                "util", "other_load", "failed_checks"}


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert bench_gateway.main(TINY) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_every_server_level_and_measure_is_reported(report: dict[str, Any]) -> None:
    s, header = report["summary"], report["header"]
    assert header["quick"] is True and header["workers"] == [1, 2]
    assert header["args"] == s["args"] == ["small", "prose", "33k"]
    assert header["levels"] == {"small": [1, 4], "prose": [1, 4], "33k": [1, 2]}
    assert header["rate"] == {"small": 300, "prose": 300, "33k": 4000}
    chunks = header["upstream_chunks_per_stream"]
    assert chunks["33k"] > 33_000 // 4 > 50 * chunks["small"]  # the same 4-character deltas
    assert set(s["streams"]) == set(s["plain"]) == set(LEVELS)
    for size, levels in LEVELS.items():
        streams, plain = s["streams"][size], s["plain"][size]
        assert set(streams) == {"floor", "gateway", "gateway x2"}  # quick: no direct streams
        assert set(streams["floor"]) == set(streams["gateway"]) == levels
        assert set(streams["gateway x2"]) == {max(levels, key=int)}
        for cells in streams.values():
            for cell in cells.values():
                assert set(cell) >= STREAM_FIELDS
                assert cell["failed_checks"] == 0 and cell["lost"] == 0
        assert all(cell["x_floor"] > 0 for cell in streams["gateway"].values())
        for server in ("floor", "gateway"):  # the call's chunk timed, where the turn has a call
            for cell in streams[server].values():
                assert (cell["call_delay_p50_ms"] is None) == (size == "prose")
                assert size == "prose" or 0 < cell["call_delay_p50_ms"] <= cell["call_delay_p99_ms"]
        assert set(plain) == {"direct", "floor", "gateway", "gateway x2"}
        assert set(plain["gateway"]) == {"64", "1"} and set(plain["gateway x2"]) == {"64"}
        for cells in plain.values():
            for cell in cells.values():
                assert set(cell) >= PLAIN_FIELDS and cell["failed_checks"] == 0


def test_goals_and_litellm_comparison(report: dict[str, Any]) -> None:
    goals = report["summary"]["goals"]
    assert len(goals) == 14 and sum(g["goal"].startswith("vs LiteLLM") for g in goals) == 4
    assert {g["result"] for g in goals} <= {"PASS", "FAIL", "n/a"}
    assert goals[2]["result"] == "n/a"  # the 512-stream goal is judged only at 512 streams
    assert "(small args, 4 streams)" in goals[0]["goal"]
    wire = {g["goal"]: g for g in goals if "on the wire" in g["goal"]}  # a call's end to the client
    assert set(wire) == {"issue 37 goal 4: a call's last character to its bytes on the wire (small args, 4 streams)",
                         "issue 37 goal 4: a call's last character to its bytes on the wire (33k args, 2 streams)"}
    assert all(g["result"] == "n/a" and "p99" in g["figure"] for g in wire.values())
    assert "(small args, 64 clients)" in goals[1]["goal"]  # non-streamed, against the floor
    ratios = {g["goal"]: g["target"] for g in goals if "x the floor" in g["goal"]}
    assert ratios == {  # every size against its floor, streamed and not; prose the tighter
        "issue 37 goal 4: parsing + translation per chunk, x the floor (small args, 4 streams)": "<= 1.5x",
        "non-streamed req/s, x the floor (small args, 64 clients)": ">= 0.85x",
        "issue 37 goal 4: parsing + translation per chunk, x the floor (prose args, 4 streams)": "<= 1.2x",
        "non-streamed req/s, x the floor (prose args, 64 clients)": ">= 0.85x",
        "parsing + translation per chunk, x the floor (33k args, 2 streams)": "<= 1.5x",
        "non-streamed req/s, x the floor (33k args, 64 clients)": ">= 0.85x"}


def test_runs_carry_the_raw_figures_and_the_text_report_renders(report: dict[str, Any]) -> None:
    runs = report["runs"]
    assert {r["server"] for r in runs} == {"direct", "floor", "gateway", "gateway x2"}
    assert {r["args"] for r in runs} == {"small", "prose", "33k"}
    assert all(r["problem_count"] == 0 for r in runs)
    streams = [r for r in runs if r["mode"] == "stream" and r["server"] == "gateway"]
    assert all(r["client_chunks_per_stream"] < r["upstream_chunks_per_stream"]  # a call's merged
               or r["args"] == "prose" for r in streams)
    assert {r["args"] for r in streams} == {"small", "prose", "33k"}
    text = report_text(report["header"], summarise(runs, report["header"]))
    for heading in ("Streams:", "Non-streamed", "Goals:", "Workers", "vs LiteLLM",
                    "| 33k | gateway | 2 |", "| small | gateway | 4 |", "| 33k | floor | 64 |",
                    "| prose | gateway | 4 |", "prose: no call, content only",
                    "33,000 characters"):
        assert heading in text


@pytest.mark.parametrize("size", ARGS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_script_round_trip(dialect: str, size: str) -> None:
    """What the gateway's translator makes of the script assembles into the expected call."""
    script = Script.build(dialect, size)
    sources = script.sources(translated=True)
    assert len(script.chunks) >= 60 and sources == sorted(sources)
    relayed = [json.loads(c % (b"chatcmpl-bench-1",)) for c in script.chunks]
    assert script.check(relayed, script.sources(translated=False), translated=False) is None
    untranslated = check_message(assemble(relayed), dialect, translated=True, size=size)
    assert (untranslated is None) == (size == "prose")  # only prose passes through as it is
    assert max(len(json.loads(c % (b"x",))["choices"][0]["delta"].get("content", ""))
               for c in script.chunks) <= len("</tool_call>")  # a marker, or 4 characters


def test_long_arguments() -> None:
    args = call_args("33k")
    assert len(args["new_string"]) == 33_000 and args["new_string"].endswith(";")
    assert {k: v for k, v in args.items() if k != "new_string"} == {
        k: v for k, v in call_args("small").items() if k != "new_string"}
    long, small = Script.build("hermes", "33k"), Script.build("hermes")
    assert len(long.chunks) > 33_000 // 4 and len(small.chunks) < 200
    message = {"content": "", "tool_calls": [], "finish_reason": "stop"}
    assert check_message(message, "hermes", translated=False, size="33k") is not None


def test_flags_reach_the_gateway_benchmark(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(bench_gateway, "main", lambda argv: seen.append(argv) or 0)
    assert bench.main(["--gateway-only", "--streams", "8", "--json"]) == 0
    assert seen == [["--streams", "8", "--json"]]


def test_make_bench_runs_the_gateway_for_each_scripted_dialect(monkeypatch: pytest.MonkeyPatch) -> None:
    """``toolbridge bench --gateway`` (``make bench``): the gateway's figures with calls in
    flight in hermes and in qwen3_coder, each a run of its own."""
    seen: list[list[str]] = []
    monkeypatch.setattr(bench_gateway, "main", lambda argv: seen.append(argv) or 0)
    with contextlib.redirect_stdout(io.StringIO()):
        assert bench.main(["--quick", "--repeat", "1", "--dialect", "hermes", "--gateway"]) == 0
    assert seen == [["--quick", "--dialect", d] for d in DIALECTS] and set(DIALECTS) == {"hermes", "qwen3_coder"}
    monkeypatch.setattr(bench_gateway, "main", lambda argv: int(argv[-1] == "qwen3_coder"))
    with contextlib.redirect_stdout(io.StringIO()):
        assert bench.main(["--quick", "--repeat", "1", "--dialect", "hermes", "--gateway"]) == 1


@pytest.mark.parametrize("bad", [["--streams", "0,64"], ["--args", "small,huge"],
                                 ["--long-streams", "0"]])
def test_bad_options_are_a_usage_error(bad: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench_gateway.main(bad)
    assert exc.value.code == 2
