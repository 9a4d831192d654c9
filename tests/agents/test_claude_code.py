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
from toolbridge.bench.prefix import prompt, rereads
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


def run(command: str, task: str, work: Path, home: Path, stack: Stack, tools: str,
        extra: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Claude Code headless on ``task``: the stream-json events it printed (``extra``: more
    environment; an empty value leaves a variable out)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "ANTHROPIC_BASE_URL": stack.url.removesuffix("/v1"), "ANTHROPIC_API_KEY": KEY,
           "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", **(extra or {})}
    env = {k: v for k, v in env.items() if v}
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


def test_claude_code_returns_two_parallel_results_that_reach_the_upstream_in_call_order(tmp_path: Path) -> None:
    """The model asks for two files in one answer; Claude Code runs both Reads and sends both
    results back (in the order its tools finished); the upstream, which pairs results with calls
    by position as templates do, gets them in the order of the calls."""
    command = claude()
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(), home.mkdir()
    (work / "big.txt").write_text("".join(f"line {i} of the big file\n" for i in range(3000)) + "The big word is pear.\n")
    (work / "small.txt").write_text("The small word is fig.\n")
    task = "Read big.txt and small.txt at once and tell me both words."
    paired: list[bool] = []

    def script(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if not any(m["role"] == "user" and task in str(m.get("content")) for m in messages):
            return Reply(content="OK.", chunk=5)
        results = [m for m in messages if m["role"] == "tool"]
        if not results:
            calls = "".join(written("hermes", "Read", {"file_path": str(work / name)}) + "\n"
                            for name in ("big.txt", "small.txt"))
            return Reply(content=calls, chunk=40)
        calls = next(m for m in messages if m.get("tool_calls"))["tool_calls"]
        by_position = [json.loads(c["function"]["arguments"])["file_path"].rsplit("/", 1)[1] for c in calls]
        paired.append([r["tool_call_id"] for r in results] == [c["id"] for c in calls]
                      and "pear" in str(results[0]["content"]) and "fig" in str(results[1]["content"]))
        words = "pear and fig" if paired[-1] else "mispaired: " + ", ".join(by_position)
        return Reply(content=f"The words are {words}.", chunk=5)

    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, "Read")
        metrics = stack.gateway.metrics.render() if stack.gateway is not None else ""
    assert tool_uses(events) == ["Read", "Read"]
    assert paired == [True] and result(events)["result"] == "The words are pear and fig."
    sent = [b["tool_use_id"] for e in events if e.get("type") == "user"
            for b in e["message"]["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    uses = [b["id"] for e in events if e.get("type") == "assistant" for b in e["message"]["content"]
            if b.get("type") == "tool_use"]
    moved = 'toolbridge_results_reordered_total{front="messages"} 1' in metrics
    print(f"\nClaude Code returned its two results {'out of' if moved else 'in'} call order (the gateway's "
          f"count; its own events list them {'in' if sent == uses else 'out of'} order); the upstream got "
          "them in call order")


@pytest.mark.parametrize("first_party", [False, True], ids=["gateway", "cch_per_request"])
def test_claude_code_five_turns_share_their_upstream_prompt_prefix(first_party: bool, tmp_path: Path) -> None:
    """Five upstream requests of one session (four Reads, then the answer), with the stable
    prompt off then on: the prefix each upstream prompt shares with the one before, printed.
    Claude Code through a gateway sends one attribution block for the whole session; told its
    base URL is Anthropic's (``_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL``, as a proxy in
    front of Anthropic's API is) it writes a new ``cch=`` into every request: then, without the
    stable prompt, each turn re-reads the whole prompt, and with it only the new turn."""
    command = claude()
    figures = {}
    for stable in (False, True):
        work, home = tmp_path / f"work{stable}", tmp_path / f"home{stable}"
        work.mkdir(), home.mkdir()
        for i in range(4):
            (work / f"part{i}.txt").write_text(f"Part {i}: the word is w{i}.\n")
        task = "Read part0.txt, part1.txt, part2.txt and part3.txt one by one and tell me the four words."
        steps: list[Callable[[list[str]], Call]] = [
            (lambda r, i=i: ("Read", {"file_path": str(work / f"part{i}.txt")})) for i in range(4)]
        script = model("hermes", task, steps, lambda r: " ".join(re.findall(r"word is (\w+)", " ".join(r))))
        extra = {"_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL": "1"} if first_party else {}
        with Stack(script, api_key=KEY, stable_prompt=stable) as stack:
            events = run(command, task, work, home, stack, "Read", extra)
            requests = [r for r in stack.upstream.requests if any(
                m["role"] == "user" and task in str(m.get("content")) for m in r["messages"])]
        assert result(events)["result"] == "w0 w1 w2 w3"
        figures[stable] = rereads([prompt(r) for r in requests])
        assert len(figures[stable]) == 5
    print(f"\nClaude Code, five turns ({'cch per request' if first_party else 'through a gateway'}): "
          "characters each upstream prompt shares with the one before / its length; tokens re-read")
    for stable, rows in figures.items():
        print(f"  stable prompt {'on ' if stable else 'off'}: " + "  ".join(
            f"{r['shared']}/{r['chars']} ({r['reread_tokens']})" for r in rows))
    on, off = figures[True], figures[False]
    assert all(row["shared"] == on[k - 1]["chars"] for k, row in enumerate(on) if k), on
    if first_party:
        assert all(row["shared"] < 200 for row in off), off  # the block's cch differs at once
    else:
        assert all(row["shared"] == off[k - 1]["chars"] for k, row in enumerate(off) if k), off


def test_claude_codes_gateway_discovery_lists_the_claude_named_alias(tmp_path: Path) -> None:
    """With ``CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1`` Claude Code asks the gateway's
    ``/v1/models`` at start (not when non-essential traffic is off: that variable is left out
    here) and caches the ids that begin with ``claude``: the ``--model-alias`` name, shown as the
    model it is sent to."""
    command = claude()
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(), home.mkdir()
    extra = {"CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": ""}
    with Stack(lambda body: Reply(content="Hello."), api_key=KEY, models=("qwen3-coder",),
               model_alias="claude-qwen3-coder=qwen3-coder") as stack:
        events = run(command, "Say hello.", work, home, stack, "Read", extra)
        metrics = stack.gateway.metrics.render() if stack.gateway is not None else ""
    assert result(events)["result"] == "Hello."
    assert 'toolbridge_requests_total{endpoint="/v1/models",status="200"} 1' in metrics
    cached = json.loads((home / ".claude" / "cache" / "gateway-models.json").read_text())
    assert cached["models"] == [{"id": "claude-qwen3-coder", "display_name": "qwen3-coder"}]
