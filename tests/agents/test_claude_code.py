"""Claude Code itself, headless, on an open model's output through toolbridge's Messages front.

``make test-agents`` installs ``@anthropic-ai/claude-code`` from the npm registry into
``.agents/`` (with the system's Node and npm); these tests skip, saying why, where it is not
installed. Each run is ``claude -p TASK --output-format stream-json --verbose`` in a temporary
folder with a temporary ``HOME``, ``ANTHROPIC_BASE_URL`` at the gateway (no ``/v1``), the key the
gateway asks for, telemetry, error reporting, the auto-updater and other non-essential traffic
switched off, and stdin from /dev/null. The gateway runs with its defaults (the ``auto``
parser) in front of a scripted upstream that plays a model writing its calls in Qwen3-Coder XML
or Hermes JSON: it acts on what the tools really returned, so the task is only done when Claude
Code ran them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agents.installed import installed
from tests.harness import written
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

pytestmark = pytest.mark.agents

KEY = "toolbridge-test-key"
Call = tuple[str, dict[str, str]]  # (tool name, arguments)


def claude() -> str:
    """The installed ``claude`` command, or skip saying what is missing."""
    return installed("claude", "TOOLBRIDGE_CLAUDE", "Claude Code")


def model(dialect: str, task: str, steps: list[Callable[[list[str]], Call]],
          answer: Callable[[list[str]], str], inline: bool = False) -> Callable[[dict[str, Any]], Reply]:
    """An upstream that plays the model: for the task's conversation, step k's call once k tool
    results are in (each step sees the results so far), then the answer; the first turn thinks
    aloud (reasoning), so Claude Code sends a thinking block back. Other requests get a short
    answer. ``inline``: the reasoning comes inside the content as ``<think>...</think>`` (an
    upstream that runs no reasoning parser), and so does a thought before the answer."""
    def script(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if not any(m["role"] == "user" and task in str(m.get("content")) for m in messages):
            return Reply(content="OK.", chunk=5)
        results = [str(m.get("content")) for m in messages if m["role"] == "tool"]
        if len(results) < len(steps):
            name, arguments = steps[len(results)](results)
            thought = "I need a tool for this." if not results else None
            content = f"Step {len(results) + 1}.\n" + written(dialect, name, arguments)
            if inline and thought:
                return Reply(content=f"<think>{thought}</think>\n\n" + content, chunk=5)
            return Reply(content=content, chunk=5, reasoning=thought)
        return Reply(content=("<think>That is all.</think>\n\n" if inline else "") + answer(results), chunk=5)
    return script


def run(command: str, task: str, work: Path, home: Path, stack: Stack, tools: str) -> list[dict[str, Any]]:
    """Claude Code headless on ``task``: the stream-json events it printed."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "ANTHROPIC_BASE_URL": stack.url.removesuffix("/v1"), "ANTHROPIC_API_KEY": KEY,
           "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    done = subprocess.run([command, "-p", task, "--output-format", "stream-json", "--verbose",
                           "--allowedTools", tools], cwd=work, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:], done.stdout[-4000:])
    return events


def result(events: list[dict[str, Any]]) -> dict[str, Any]:
    final = [e for e in events if e.get("type") == "result"]
    assert final and final[-1]["subtype"] == "success" and not final[-1]["is_error"], events[-3:]
    return final[-1]


def tool_uses(events: list[dict[str, Any]]) -> list[str]:
    return [b["name"] for e in events if e.get("type") == "assistant"
            for b in e["message"]["content"] if b.get("type") == "tool_use"]


@pytest.mark.parametrize("inline", [False, True], ids=["reasoning_field", "reasoning_in_content"])
@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_claude_code_reads_a_file_and_answers_with_its_fact(dialect: str, inline: bool, tmp_path: Path) -> None:
    command = claude()
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(), home.mkdir()
    (work / "notes.txt").write_text("Shopping list\nThe secret code is banana-42.\n")
    task = "Read notes.txt and tell me the secret code."

    def answer(results: list[str]) -> str:
        found = re.search(r"secret code is (\S+?)\.", results[0])
        return f"The secret code is {found.group(1)}." if found else "I could not read the file."

    script = model(dialect, task, [lambda r: ("Read", {"file_path": str(work / "notes.txt")})], answer, inline)
    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, "Read")
        requests = stack.upstream.requests
    assert result(events)["result"] == "The secret code is banana-42."
    shown = [b for e in events if e.get("type") == "assistant" for b in e["message"]["content"]]
    assert not [b for b in shown if b.get("type") == "text" and "think>" in b["text"]]
    assert tool_uses(events) == ["Read"]
    second = next(r for r in requests if any(m["role"] == "tool" for m in r["messages"]))
    assistant = next(m for m in second["messages"] if m.get("tool_calls"))
    assert assistant["reasoning_content"] == "I need a tool for this.", "Claude Code sent our thinking back"
    assert len(second["tools"]) > 5 and second["stream"] is True


@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_claude_code_edits_a_file(dialect: str, tmp_path: Path) -> None:
    command = claude()
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(), home.mkdir()
    target = work / "greeting.py"
    target.write_text('def greet():\n    return "hello"\n')
    task = "In greeting.py make greet() return goodbye instead of hello."
    steps: list[Callable[[list[str]], Call]] = [
        lambda r: ("Read", {"file_path": str(target)}),
        lambda r: ("Edit", {"file_path": str(target), "old_string": '"hello"' if '"hello"' in r[0] else "?",
                            "new_string": '"goodbye"'}),
    ]
    script = model(dialect, task, steps, lambda r: "greet() now returns goodbye.")
    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, "Read,Edit")
    assert result(events)["result"] == "greet() now returns goodbye."
    assert tool_uses(events) == ["Read", "Edit"]
    assert target.read_text() == 'def greet():\n    return "goodbye"\n'


def test_claude_code_with_no_model_settings_against_a_one_model_upstream(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The first run as a new user makes it: a server that serves one model and refuses every
    other name (404, as vLLM does), Claude Code with ``ANTHROPIC_BASE_URL`` and its key alone
    (no ``ANTHROPIC_MODEL``, no small/fast model): the gateway learns the one name from the
    upstream's ``/v1/models`` and sends every request of Claude Code's under it."""
    command = claude()
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(), home.mkdir()
    (work / "notes.txt").write_text("The meeting is on Thursday.\n")
    task = "Read notes.txt and tell me the day of the meeting."

    def answer(results: list[str]) -> str:
        return "The meeting is on Thursday." if "Thursday" in results[0] else "I could not read the file."

    script = model("qwen3_coder", task, [lambda r: ("Read", {"file_path": str(work / "notes.txt")})], answer)
    with Stack(script, api_key=KEY, models=("Qwen/Qwen3-Coder-30B-A3B-Instruct",), strict=True) as stack, \
            caplog.at_level("INFO", logger="toolbridge.gateway"):
        events = run(command, task, work, home, stack, "Read")
        requests = stack.upstream.requests
        metrics = stack.gateway.metrics.render() if stack.gateway is not None else ""
    assert result(events)["result"] == "The meeting is on Thursday."
    assert tool_uses(events) == ["Read"]
    assert requests and {r["model"] for r in requests} == {"Qwen/Qwen3-Coder-30B-A3B-Instruct"}
    assert 'toolbridge_models_mapped_total{how="only",model="Qwen/Qwen3-Coder-30B-A3B-Instruct"}' in metrics
    asked = [r.args[0] for r in caplog.records if " is sent as " in r.getMessage()]
    assert asked and all(name.startswith("claude-") for name in asked), asked  # its defaults (claude-opus-4-8)
