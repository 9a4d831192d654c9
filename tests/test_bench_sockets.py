"""Smoke test of ``toolbridge bench --socket``: the three loops run against a real gateway
process and give a row per turn, the socket's bytes stay flat, idle sockets are measured; no
timing asserted (machines are shared and noisy)."""

from __future__ import annotations

import argparse
import asyncio
import os

from toolbridge.bench import sockets


def test_the_socket_rows_are_measured() -> None:
    cores = os.sched_getaffinity(0)
    figures = asyncio.run(sockets.bench(argparse.Namespace(repeat=1, sockets=20)))
    assert os.sched_getaffinity(0) == cores  # (the bench runs on one core, then gives the rest back)
    turns = figures["turns"]
    assert set(turns) == set(sockets.MODES) and all(len(t) == sockets.TURNS for t in turns.values())
    assert all(row["ms"] > 0 and row["cpu_ms"] > 0 for t in turns.values() for row in t)
    # The socket and previous_response_id send the new items only; the full history grows.
    assert turns["socket"][-1]["bytes"] == turns["socket"][1]["bytes"]
    assert turns["http full"][-1]["bytes"] > 10 * turns["http full"][1]["bytes"] / 2
    assert figures["idle"]["sockets"] == 20  # (its RSS growth over 20 sockets may be 0: pages already there)
    # Each turn's socket CPU against the same round's loop over HTTP, per HTTP mode.
    assert set(figures["paired"]) == {"http full", "http prev"}
    assert all(len(r) == sockets.TURNS and min(r) > 0 for r in figures["paired"].values())
    verdicts = sockets.verdicts(figures)
    assert verdicts["bytes"] and set(verdicts) == {"time", "bytes", "idle"}
    text = sockets.report(figures)
    assert "idle sockets" in text and ("PASS" in text or "FAIL" in text)
