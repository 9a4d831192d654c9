"""The Vercel AI SDK's own tool loops through a real ``toolbridge serve``.

``make test-agents`` (or ``make test-node``, the SDK alone) installs ``ai``, ``@ai-sdk/openai``,
``@ai-sdk/anthropic`` and ``zod`` from the npm registry into ``.agents/vercel/``; this test skips,
saying why, where Node.js or that install is missing. ``vercel_ai.mjs`` runs ``generateText`` and
``streamText`` with a tool that has ``execute`` and ``stopWhen: stepCountIs(3)``, on
``openai.responses(...)`` (``store: true`` by default: step 2 names step 1's reasoning and message
by ``item_reference``) and on the Anthropic provider. The upstream is a replaying model on
loopback that calls get_weather in Hermes JSON, then answers with the tool's result; the tool's
result carries a code only the node process knows, so the final answer holds it only when the
SDK ran the tool and the gateway carried the result back.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness import written
from toolbridge.gateway.replay.upstream import ReplayUpstream, Reply

pytestmark = pytest.mark.agents

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / ".agents" / "vercel" / "node_modules"
SCRIPT = Path(__file__).with_name("vercel_ai.mjs")
KEY = "toolbridge-test-key"
WAIT = 120.0  # seconds: a bound on each step, far above what it takes (to fail, not to pace)
LOOPS = ["openai.responses generateText", "openai.responses streamText", "anthropic generateText",
         "anthropic streamText"]


def model(body: dict[str, Any]) -> Reply:
    """Calls get_weather (thinking first), then answers with what the tool returned."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return Reply(content=f"The report says: {last['content']}", chunk=7)
    return Reply(content="Let me check.\n" + written("hermes", "get_weather", {"city": "Paris"}),
                 reasoning="The weather tool knows.", chunk=7)


def sdk() -> None:
    """Skip, saying what is missing, unless Node.js and the SDK's packages are installed."""
    if not shutil.which("node"):
        pytest.skip("Node.js is not installed (apt-get install nodejs npm): the Vercel AI SDK cannot run")
    missing = [p for p in ("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "zod") if not (MODULES / p).is_dir()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed in {MODULES.parent}: run make test-node")


@pytest.fixture
def upstream() -> Iterator[ReplayUpstream]:
    sdk()  # before anything starts
    up = ReplayUpstream(model)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(up.__aenter__(), loop).result(WAIT)
    yield up
    asyncio.run_coroutine_threadsafe(up.__aexit__(), loop).result(WAIT)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(WAIT)
    loop.close()


@pytest.fixture
def gateway(upstream: ReplayUpstream) -> Iterator[str]:
    """``python -m toolbridge serve`` on a port of its choosing: its URL, once it logs it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolbridge", "serve", "--upstream", upstream.url, "--port", "0",
         "--tool-call-parser", "hermes", "--api-key", KEY],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    try:
        yield started(lines)
    finally:
        proc.kill()
        proc.wait(WAIT)
        reader.join(WAIT)
        assert proc.stderr is not None
        proc.stderr.close()


def started(lines: queue.Queue[str]) -> str:
    seen = []
    while True:
        try:
            line = lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError("toolbridge serve did not start:\n" + "".join(seen)) from None
        seen.append(line)
        found = re.search(r"toolbridge gateway on (http://[\d.]+:\d+)", line)
        if found:
            return found[1]


def test_generate_and_stream_text_tool_loops_complete(gateway: str, upstream: ReplayUpstream,
                                                      tmp_path: Path) -> None:
    (tmp_path / "node_modules").symlink_to(MODULES)  # an ES module resolves packages beside itself
    script = tmp_path / SCRIPT.name
    shutil.copy(SCRIPT, script)
    done = subprocess.run(["node", str(script), gateway, KEY], capture_output=True, text=True,
                          timeout=300, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = [line for line in done.stdout.splitlines() if line.startswith("{")]  # (and the SDK's notices)
    loops = {run["name"]: run for run in map(json.loads, printed)}
    assert list(loops) == LOOPS, done.stdout[-3000:]
    for name, run in loops.items():
        result = f"Paris: sunny, 22 degrees (report {run['code']})"
        assert "error" not in run, (name, run["error"][:2000])
        assert run["results"] == [result], (name, run)
        assert run["text"] == f"The report says: {result}" and run["steps"] == 2, (name, run)
        if name.startswith("openai"):
            assert run["references"] >= 1, (name, "step 2 named step 1's output by item_reference")
    told = [r for r in upstream.requests if r["messages"][-1]["role"] == "tool"]
    assert len(told) == 4 and all(r["messages"][1]["tool_calls"] for r in told)
    assert sum("reasoning_content" in r["messages"][1] for r in told) >= 2, "the referenced reasoning went back"
