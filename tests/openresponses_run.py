"""The OpenResponses compliance suite against ``toolbridge serve`` (``make openresponses``).

The suite (``../shared/peers/openresponses``, Apache-2.0, kept unchanged there) sends one request
per template to ``/v1/responses`` and validates the whole response, and streamed every SSE event,
against the OpenResponses schemas. It runs on bun, installed from the npm registry into
``.agents/bun``; the suite and its extras are copied into ``.agents/openresponses`` (the
project's ignored build area), never into the repository. Behind ``toolbridge serve`` (the real
command, on a free loopback port) is a scripted upstream answering each template's prompt
plausibly (``answer``). Every template that reaches ``/v1/responses`` over HTTP must pass; those
listed in ``OUT_OF_SCOPE`` are reported as skipped with their reason. Then the runner's own cases
(``EXTRA``: a cut under a forced choice, a stream that fails, reasoning, the settings echoed), which
no template asks for, are sent whole and streamed and validated against the same schemas
(``tests/openresponses_check.ts``), but for the events where toolbridge keeps OpenAI's wire
(``DIVERGENT``, printed). Without the folder, Node or
npm, the run says why and succeeds (a skip).

    python -m tests.openresponses_run [--peers PATH]

``tests/agents/test_openresponses.py`` runs the same once ``make openresponses`` has set it up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.harness import written
from toolbridge.gateway.fronts.responses.compaction import PROMPT
from toolbridge.bench.ports import free_port, wait_ready
from toolbridge.errors import ConfigError
from toolbridge.gateway.replay.upstream import ReplayUpstream, Reply

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT.parent / "shared" / "peers" / "openresponses"
BUN_VERSION = "1.3.12"  # the runtime the suite is written for (../shared/peers/README.md)
ZOD_VERSION = "3.25.76"
BUN = ROOT / ".agents" / "bun"
WORK = ROOT / ".agents" / "openresponses"
MODEL = "replay"
# Templates outside what toolbridge serves, by id prefix, with the reason printed for each.
OUT_OF_SCOPE = {
    "response-output-phase-schema": "sends no request: it validates a mock response, not toolbridge",
}
# The runner's own cases, for what no template asks: (name, prompt, request fields). Each is sent
# whole and streamed, and what comes back is validated against the suite's schemas
# (tests/openresponses_check.ts).
EXTRA = (
    ("cut-under-a-forced-choice", "CUT: weather in Paris?", {"tool_choice": "required"}),
    ("cut-text", "CUT: tell a long story", {"temperature": 0.3, "presence_penalty": 0.5}),
    ("failed-mid-stream", "FAIL: a stream that breaks", {}),
    ("reasoning", "THINK: which is larger, 9.11 or 9.9?", {"reasoning": {"effort": "high"}}),
    ("tool-call-settings", "What's the weather like in Rome?",
     {"tool_choice": {"type": "function", "name": "get_weather"}, "parallel_tool_calls": False,
      "reasoning": {"effort": "low"}, "text": {"verbosity": "low"}, "max_output_tokens": 500}),
)
# Events where toolbridge follows OpenAI's wire, which the SDKs and agents read, and the
# OpenResponses schema differs: printed, not counted.
DIVERGENT = {
    "error": "OpenAI's error event has code, message and param at the top; the schema wants them "
             "in an error object, which makes the openai SDK raise instead of giving response.failed",
    "response.reasoning_text.delta": "OpenAI's name, which the SDK and Codex read; the schema's is "
                                     "response.reasoning.delta",
    "response.reasoning_text.done": "OpenAI's name; the schema's is response.reasoning.done",
}
WEATHER = {"type": "function", "name": "get_weather",  # (without a description: the echo fills it)
           "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}
# Each template's prompt (its last user text) -> the scripted model's answer.
ANSWERS = (
    ("weather", None),  # a call to get_weather (``answer``)
    ("exactly 3 words", "Hello there, friend!"),
    ("Count from 1 to", "1, 2, 3, 4, 5"),
    ("Say hello.", "Ahoy, matey! Well met on these fine seas."),
    ("What is my name", "Your name is Alice."),
    ("Repeat only the number", "Four."),
    ("What do you see", "A red heart on a white background."),
    ("Reply with exactly: ", None),  # the text after the colon
)


def answer(body: dict[str, Any]) -> Reply:
    """The scripted model: a plausible answer to the request's last user message."""
    prompt = last_user_text(body.get("messages") or [])
    tools = [t["function"]["name"] for t in body.get("tools") or ()]
    if prompt.startswith("CUT: "):  # the limit falls inside what the model writes
        text = written("hermes", "get_weather", {"location": "Paris, France"}) if tools else "Once upon a time"
        return Reply(content=text[:len(text) // 2], finish_reason="length")
    if prompt.startswith("FAIL: "):  # the connection drops mid-answer
        return Reply(content="This answer will not finish.", chunk=2, cut_after=3)
    if prompt == PROMPT:  # a compaction (/v1/responses/compact): the conversation's summary
        return Reply(content="TASK: launch on Tuesday.\nDECISIONS: notify support before the launch.")
    if prompt.startswith("THINK: "):
        return Reply(reasoning="9.9 is 9.90, which is more than 9.11.", content="9.9 is larger.")
    for cue, text in ANSWERS:
        if cue not in prompt:
            continue
        if cue == "weather" and "get_weather" in tools:
            return Reply(content=written("hermes", "get_weather", {"location": "San Francisco, CA"}))
        if cue.startswith("Reply with exactly"):
            return Reply(content=prompt.split(cue, 1)[1].strip())
        if text is not None:
            return Reply(content=text)
    return Reply(content="OK.")


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return content if isinstance(content, str) else ""
    return ""


def out_of_scope(template: str) -> str | None:
    return next((why for prefix, why in OUT_OF_SCOPE.items() if template.startswith(prefix)), None)


# ---------------------------------------------------------------- set-up


def missing(peers: Path) -> str | None:
    """Why the suite cannot run here (None: it can)."""
    if not (peers / "suite").is_dir() or not (peers / "extras").is_dir():
        return f"the OpenResponses suite is not at {peers} (see ../shared/peers/README.md)"
    if not shutil.which("npm") or not shutil.which("node"):
        return "Node.js and npm are not installed (apt-get install nodejs npm): bun cannot be installed"
    return None


def install(peers: Path) -> Path:
    """bun (from the npm registry, once) and a fresh work folder with the suite: bun's path."""
    bun = BUN / "node_modules" / ".bin" / "bun"
    if not _runs(bun, BUN_VERSION):
        _step(["npm", "install", "--prefix", str(BUN), "--no-audit", "--no-fund", f"bun@{BUN_VERSION}"])
    shutil.rmtree(WORK / "suite", ignore_errors=True)
    shutil.rmtree(WORK / "extras", ignore_errors=True)
    WORK.mkdir(parents=True, exist_ok=True)
    shutil.copytree(peers / "suite", WORK / "suite")
    shutil.copytree(peers / "extras", WORK / "extras")
    package = {"name": "overlay", "private": True, "type": "module", "dependencies": {"zod": ZOD_VERSION}}
    (WORK / "package.json").write_text(json.dumps(package))
    if not (WORK / "node_modules" / "zod").is_dir():
        _step([str(bun), "install"], cwd=WORK)
    return bun


def _runs(bun: Path, version: str) -> bool:
    if not bun.exists():
        return False
    done = subprocess.run([str(bun), "--version"], capture_output=True, text=True, check=False)
    return done.returncode == 0 and done.stdout.strip() == version


def _step(command: list[str], cwd: Path | None = None) -> None:
    print("openresponses:", " ".join(command), flush=True)
    subprocess.run(command, cwd=cwd, check=True)


# ---------------------------------------------------------------- the servers


class Upstream:
    """The scripted upstream, served from an event loop on a background thread."""

    def __init__(self) -> None:
        self.server = ReplayUpstream(answer)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> Upstream:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self.loop).result(30)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.__aexit__(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def serve(upstream: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    """``toolbridge serve`` on ``port``, once its ``/health`` answers."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    command = [sys.executable, "-m", "toolbridge", "serve", "--upstream", upstream, "--port", str(port),
               "--tool-call-parser", "hermes", "--api-key", "test"]
    with log.open("wb") as out:  # (the child has its own copy of the descriptor)
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_ready(f"http://127.0.0.1:{port}/health", process, "toolbridge serve", timeout=60)
    except ConfigError as exc:
        process.kill()
        raise SystemExit(f"openresponses: {exc}; see {log}") from exc
    return process


# ---------------------------------------------------------------- the run


def run_suite(bun: Path, base_url: str) -> dict[str, Any]:
    command = [str(bun), "run", "extras/main.ts", "--base-url", base_url, "--api-key", "test",
               "--model", MODEL, "--json"]
    done = subprocess.run(command, cwd=WORK, capture_output=True, text=True, timeout=600, check=False)
    start = done.stdout.find("{")
    if start < 0:
        raise SystemExit(f"openresponses: the suite printed no results ({done.returncode}):\n"
                         f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return json.loads(done.stdout[start:])  # type: ignore[no-any-return]


def report(results: list[dict[str, Any]]) -> int:
    """Print each template's outcome; the number of in-scope templates that did not pass."""
    failed = 0
    for result in results:
        template, status = result["id"], result["status"]
        why = out_of_scope(template)
        if why is not None:
            print(f"  skipped  {template}: {why} (the suite said {status})")
        elif status == "passed":
            print(f"  passed   {template}")
        else:
            failed += 1
            print(f"  FAILED   {template} ({status})")
            for error in result.get("errors") or ():
                print(f"           - {error}")
    return failed


def run(bun: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The suite's results, and the schema failures of the runner's own cases (``EXTRA``),
    against ``toolbridge serve`` and the scripted upstream."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    with Upstream() as upstream:
        process = serve(upstream.server.url, port, WORK / "serve.log")
        try:
            outcome = run_suite(bun, base_url)
            extra = check_extra(bun, base_url)
        finally:
            process.terminate()
            process.wait(30)
    return outcome["results"], extra


def check_extra(bun: Path, base_url: str) -> list[dict[str, Any]]:
    """``EXTRA``'s answers, whole and streamed, validated against the suite's schemas."""
    objects: list[dict[str, Any]] = []
    for name, prompt, fields in EXTRA:
        body = {"model": MODEL, "input": prompt, "tools": [WEATHER], **fields}
        objects.append({"case": name, "kind": "response", "data": json.loads(post(base_url, body))})
        for frame in post(base_url, {**body, "stream": True}).split("\n\n"):
            data = next((line[6:] for line in frame.split("\n") if line.startswith("data: ")), None)
            if data is not None:
                objects.append({"case": name, "kind": "event", "data": json.loads(data)})
    (WORK / "extra.json").write_text(json.dumps(objects))
    shutil.copy(ROOT / "tests" / "openresponses_check.ts", WORK / "check.ts")
    done = subprocess.run([str(bun), "run", "check.ts", "extra.json"], cwd=WORK, capture_output=True,
                          text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"openresponses: the schema check failed to run:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def post(base_url: str, body: dict[str, Any]) -> str:
    """The answer's text (a JSON body, or a stream's events), whatever its status."""
    request = urllib.request.Request(base_url + "/responses", data=json.dumps(body).encode(), headers={
        "content-type": "application/json", "authorization": "Bearer test"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.read().decode()  # type: ignore[no-any-return]
    except urllib.error.HTTPError as failed:
        return failed.read().decode()  # type: ignore[no-any-return]


def report_extra(failures: list[dict[str, Any]]) -> int:
    """Print the runner's own cases' outcome; the number of objects the schemas refused."""
    for name, _, _ in EXTRA:
        refused = [f for f in failures if f["case"] == name and f["type"] not in DIVERGENT]
        print(f"  {'FAILED' if refused else 'passed'}   (toolbridge's own case) {name}")
        for failure in refused:
            print(f"           - {failure['kind']} {failure['type']}: {'; '.join(failure['issues'])[:500]}")
        for kind in sorted({f["type"] for f in failures if f["case"] == name and f["type"] in DIVERGENT}):
            print(f"           (known divergence, not counted: {kind}: {DIVERGENT[kind]})")
    return sum(f["type"] not in DIVERGENT for f in failures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=Path, default=PEERS, help="the openresponses folder")
    args = parser.parse_args(argv)
    why = missing(args.peers)
    if why is not None:
        print(f"openresponses: skipped: {why}")
        return 0
    try:
        bun = install(args.peers)
    except subprocess.CalledProcessError as failed:  # (no registry: as when npm is missing)
        print(f"openresponses: skipped: {' '.join(failed.cmd)} failed ({failed.returncode}): "
              "bun or the suite's zod could not be installed")
        return 0
    results, extra = run(bun)
    failed = report(results) + report_extra(extra)
    passed = sum(r["status"] == "passed" and out_of_scope(r["id"]) is None for r in results)
    print(f"openresponses: {passed} passed, {failed} failed, "
          f"{sum(out_of_scope(r['id']) is not None for r in results)} out of scope")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
