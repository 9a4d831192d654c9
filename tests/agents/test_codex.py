"""Codex CLI itself, headless, on an open model's output through toolbridge's Responses front.

``make test-agents`` installs ``@openai/codex`` from the npm registry into ``.agents/`` (with the
system's Node and npm); these tests skip, saying why, where it is not installed. Each run is
``codex exec --json --sandbox workspace-write TASK`` in a temporary git repository, with a
temporary ``CODEX_HOME`` whose ``config.toml`` names a custom provider at the gateway
(``wire_api = "responses"``, the key the gateway asks for in ``env_key``, no retries), update
checks, analytics and telemetry off, the features that reach outside hosts disabled, and stdin
from /dev/null. The gateway runs with its defaults (the ``auto`` parser) in front of a scripted
upstream that plays a model writing its calls as text, in Qwen3-Coder XML or Hermes JSON: it acts
on what the tools really returned, so a task is only done when Codex ran them.

Codex is also run as most gateway guides set it up: the built-in ``openai`` provider with
``openai_base_url`` at the gateway (``builtin``). Then it speaks the Responses API over a
WebSocket (``GET /v1/responses`` upgraded; a ``generate: false`` prewarm first, then each turn with
``previous_response_id`` and only its new items), and never falls back to HTTP: nothing in its
output says "Reconnecting" or "Falling back".

Which tools Codex offers depends on what it knows of the model. For a model of its bundled
catalog (``gpt-5.5``) it offers ``apply_patch`` as a freeform ``custom`` tool with a Lark grammar;
for a name it does not know it offers no ``apply_patch`` and edits through ``exec_command``. A
``model_catalog_json`` file in the config describing the custom name with
``"apply_patch_tool_type": "freeform"`` makes Codex offer the freeform tool for that name too
(the catalog replaces the bundled one; ``base_instructions`` is the whole system prompt). The
gateway offers a freeform tool to the model as a function with one string parameter, ``input``.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.agents.installed import installed
from tests.harness import written
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

pytestmark = pytest.mark.agents

KEY = "toolbridge-test-key"
CUSTOM = "qwen3-coder"  # a name Codex does not know
KNOWN = "gpt-5.5"  # a name of Codex's bundled catalog
# Features that make Codex reach outside hosts when left on.
OFFLINE = ("plugins", "remote_plugin", "apps", "api_key_model_discovery", "plugin_sharing", "in_app_updates",
           "skill_mcp_dependency_install")
THINKING = "I need a tool for this."
Call = tuple[str, dict[str, str]]  # (tool name, arguments)


def codex() -> str:
    """The installed ``codex`` command, or skip saying what is missing."""
    return installed("codex", "TOOLBRIDGE_CODEX", "Codex CLI", node=True,
                     hint=" (is its platform binary installed?)")


def catalog_entry(slug: str) -> dict[str, Any]:
    """A model catalog entry that makes Codex offer the freeform ``apply_patch`` for ``slug``
    (the fields this version requires; the instructions are ours)."""
    return {"slug": slug, "display_name": slug, "description": "An open model behind toolbridge.",
            "apply_patch_tool_type": "freeform", "shell_type": "shell_command", "visibility": "list",
            "supported_in_api": True, "priority": 1, "supported_reasoning_levels": [], "support_verbosity": False,
            "truncation_policy": {"mode": "tokens", "limit": 10000}, "experimental_supported_tools": [],
            "base_instructions": "You are a coding agent working in the user's repository. Change files "
                                 "with the apply_patch tool and run commands with exec_command."}


def configure(home: Path, stack: Stack, model: str, catalog: bool | dict[str, Any],
              builtin: bool = False) -> None:
    """``CODEX_HOME``'s config.toml: the gateway as the provider (a custom one, or with ``builtin``
    the built-in ``openai`` provider at ``openai_base_url``), nothing reaching outside.
    ``catalog``: a model catalog of our own for the model, or the catalog body to use."""
    lines = [f"model = {json.dumps(model)}", "check_for_update_on_startup = false"]
    if builtin:
        lines.append(f"openai_base_url = {json.dumps(stack.url)}")
    else:
        lines.append('model_provider = "local"')
    if catalog:
        body = catalog if isinstance(catalog, dict) else {"models": [catalog_entry(model)]}
        (home / "catalog.json").write_text(json.dumps(body))
        lines.append(f"model_catalog_json = {json.dumps(str(home / 'catalog.json'))}")
    if not builtin:
        lines += ["", "[model_providers.local]", 'name = "toolbridge"', f"base_url = {json.dumps(stack.url)}",
                  'env_key = "TOOLBRIDGE_KEY"', 'wire_api = "responses"', "request_max_retries = 0",
                  "stream_max_retries = 0"]
    lines += ["", "[analytics]", "enabled = false", "", "[otel]", 'exporter = "none"', ""]
    (home / "config.toml").write_text("\n".join(lines))


def repository(path: Path, files: dict[str, str]) -> Path:
    """A git repository holding ``files``, committed."""
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(path), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for command in ("init -q .", "add -A", "commit -q --allow-empty -m start"):
        subprocess.run(["git", *command.split()], cwd=path, env=env, check=True, capture_output=True)
    return path


def text(content: Any) -> str:
    """A Chat Completions message's content as text (a string or a list of text parts)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def model(dialect: str, task: str, steps: list[Callable[[list[str]], Call]],
          answer: Callable[[list[str]], str]) -> Callable[[dict[str, Any]], Reply]:
    """An upstream that plays the model: for the task's conversation, step k's call once k tool
    results are in (each step sees the results so far), then the answer; the first turn thinks
    aloud (reasoning). Other requests get a short answer."""
    def script(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if not any(m["role"] == "user" and task in text(m.get("content")) for m in messages):
            return Reply(content="OK.", chunk=5)
        results = [text(m.get("content")) for m in messages if m["role"] == "tool"]
        if len(results) < len(steps):
            name, arguments = steps[len(results)](results)
            return Reply(content=f"Step {len(results) + 1}.\n" + written(dialect, name, arguments), chunk=5,
                         reasoning=THINKING if not results else None)
        return Reply(content=answer(results), chunk=5)
    return script


def codex_exec(command: str, task: str, work: Path, home: Path, disable: tuple[str, ...] = (),
               timeout: float = 120) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    """``codex exec`` headless on ``task`` in ``work``, ``home`` (configured) its home, offline
    features and ``disable`` off: the ``--json`` events it printed and the finished process; a
    failed turn or a non-zero exit fails the test."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "CODEX_HOME": str(home), "TOOLBRIDGE_KEY": KEY, "OPENAI_API_KEY": KEY, "CODEX_API_KEY": KEY}
    argv = [command, "exec", "--skip-git-repo-check", "--json", "--sandbox", "workspace-write"]
    for feature in (*OFFLINE, *disable):
        argv += ["--disable", feature]
    done = subprocess.run([*argv, task], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    failed = [e for e in events if e.get("type") in ("turn.failed", "error")]
    assert done.returncode == 0 and not failed, (done.returncode, failed, done.stderr[-3000:], done.stdout[-4000:])
    return events, done


def run(command: str, task: str, work: Path, home: Path, stack: Stack, model: str,
        catalog: bool | dict[str, Any], builtin: bool = False) -> list[dict[str, Any]]:
    """Codex headless on ``task``: the ``--json`` events it printed. ``builtin``: the built-in
    provider (over a WebSocket), which must not have reconnected nor fallen back to HTTP."""
    home.mkdir()
    configure(home, stack, model, catalog, builtin)
    events, done = codex_exec(command, task, work, home)
    assert any(e.get("type") == "turn.completed" for e in events), events[-3:]
    if builtin:
        said = done.stdout + done.stderr
        assert "Reconnecting" not in said and "Falling back" not in said, said[-4000:]
    return events


def items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items Codex completed, without reasoning and its own notices (type ``error``)."""
    return [e["item"] for e in events if e.get("type") == "item.completed"
            and e["item"].get("type") not in ("reasoning", "error")]


def trail(events: list[dict[str, Any]]) -> list[str]:
    """What Codex did, in order: each message's text (stripped), each other item's type."""
    return [i["text"].strip() if i["type"] == "agent_message" else i["type"] for i in items(events)]


def final_message(events: list[dict[str, Any]]) -> str:
    said = [i["text"] for i in items(events) if i["type"] == "agent_message"]
    assert said, events
    return said[-1]


def task_requests(requests: list[dict[str, Any]], task: str) -> list[dict[str, Any]]:
    return [r for r in requests if any(m["role"] == "user" and task in text(m.get("content")) for m in r["messages"])]


def offered(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The functions the gateway offered the model, by name."""
    return {t["function"]["name"]: t["function"] for t in request.get("tools") or [] if t.get("type") == "function"}


def calls(request: dict[str, Any]) -> list[tuple[str, Any]]:
    """The calls of the conversation the gateway sent upstream: (name, decoded arguments)."""
    return [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in request["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]


def assert_freeform_offered(request: dict[str, Any]) -> None:
    patch = offered(request).get("apply_patch")
    assert patch is not None, sorted(offered(request))
    assert patch["parameters"]["properties"]["input"]["type"] == "string", patch
    assert patch["parameters"].get("required") == ["input"], patch


NEW_FILE = ('Hello, world!\n'
            'Quotes "double" and \'single\', a backslash \\ and a\ttab.\n'
            'Unicode: café ✓ and if a < b and c > d: pass\n')
ADD_PATCH = ("*** Begin Patch\n*** Add File: notes/hello.txt\n"
             + "".join("+" + line + "\n" for line in NEW_FILE.splitlines()) + "*** End Patch")


@pytest.mark.parametrize("name", [CUSTOM, KNOWN])
@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_codex_creates_a_file_with_apply_patch(dialect: str, name: str, tmp_path: Path) -> None:
    command = codex()
    work, home = repository(tmp_path / "work", {"README.md": "A project.\n"}), tmp_path / "home"
    task = "Create notes/hello.txt with the greeting, the quotes line and the unicode line."

    def answer(results: list[str]) -> str:
        return "notes/hello.txt is created." if "Success" in results[0] else "The patch failed: " + results[0]

    script = model(dialect, task, [lambda r: ("apply_patch", {"input": ADD_PATCH})], answer)
    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, name, catalog=name == CUSTOM)
        requests = task_requests(stack.upstream.requests, task)
    assert (work / "notes" / "hello.txt").read_bytes() == NEW_FILE.encode()
    assert final_message(events) == "notes/hello.txt is created."
    done = items(events)
    assert trail(events) == ["Step 1.", "file_change", "notes/hello.txt is created."], done
    assert done[1]["status"] == "completed" and [c["kind"] for c in done[1]["changes"]] == ["add"], done[1]
    assert len(requests) == 2, [r["messages"][-1] for r in requests]
    assert_freeform_offered(requests[0])
    second = requests[1]
    assert calls(second) == [("apply_patch", {"input": ADD_PATCH})]
    result = [text(m.get("content")) for m in second["messages"] if m["role"] == "tool"]
    assert len(result) == 1 and "Success. Updated the following files" in result[0], result
    thought = [m.get("reasoning_content") for m in second["messages"] if m["role"] == "assistant"]
    assert THINKING in thought, ("Codex sent our reasoning back", second["messages"][-3:])
    assert second["stream"] is True


def test_codex_takes_the_gateways_model_list_as_its_catalog(tmp_path: Path) -> None:
    """``GET /v1/models`` saved as Codex's ``model_catalog_json``: Codex 0.171 takes the gateway's
    ``models`` entries (it refuses a catalog entry that lacks a field it needs), offers the
    freeform ``apply_patch`` for a name its bundled catalog does not know, and runs it."""
    command = codex()
    work, home = repository(tmp_path / "work", {"README.md": "A project.\n"}), tmp_path / "home"
    task = "Create notes/hello.txt with the greeting, the quotes line and the unicode line."

    def answer(results: list[str]) -> str:
        return "notes/hello.txt is created." if "Success" in results[0] else "The patch failed: " + results[0]

    script = model("qwen3_coder", task, [lambda r: ("apply_patch", {"input": ADD_PATCH})], answer)
    with Stack(script, api_key=KEY, models=(CUSTOM,)) as stack:
        asked = urllib.request.Request(stack.url + "/models?client_version=0.171.0",
                                       headers={"Authorization": f"Bearer {KEY}", "originator": "codex_exec"})
        with urllib.request.urlopen(asked, timeout=20) as listed:
            catalog = json.loads(listed.read())
        assert [m["slug"] for m in catalog["models"]] == [CUSTOM]
        events = run(command, task, work, home, stack, CUSTOM, catalog=catalog)
        requests = task_requests(stack.upstream.requests, task)
    assert (work / "notes" / "hello.txt").read_bytes() == NEW_FILE.encode()
    assert final_message(events) == "notes/hello.txt is created."
    assert_freeform_offered(requests[0])
    assert text(requests[0]["messages"][0]["content"]).startswith(catalog["models"][0]["base_instructions"])


def opened_in_prompt(script: Callable[[dict[str, Any]], Reply]) -> Callable[[dict[str, Any]], Reply]:
    """The same model behind an upstream that runs no reasoning parser, its chat template opening
    the reasoning in the prompt (Qwen3.5, GLM 4.7, MiniMax M2): each answer of the task writes its
    reasoning first in the content, closed by ``</think>`` alone."""
    def wrapped(body: dict[str, Any]) -> Reply:
        reply = script(body)
        if reply.content == "OK.":  # (not the task's conversation)
            return reply
        thought = reply.reasoning or "The patch went in."
        return replace(reply, content=f"{thought}\n</think>\n\n{reply.content}", reasoning=None)
    return wrapped


@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_codex_reads_reasoning_the_prompt_opened(dialect: str, tmp_path: Path) -> None:
    """Codex asks for reasoning (``reasoning.effort`` for a model it knows): reasoning written in
    the content before a bare ``</think>`` reaches it as reasoning items, never as its messages,
    and comes back to the upstream as reasoning."""
    command = codex()
    work, home = repository(tmp_path / "work", {"README.md": "A project.\n"}), tmp_path / "home"
    task = "Create notes/hello.txt with the greeting, the quotes line and the unicode line."

    def answer(results: list[str]) -> str:
        return "notes/hello.txt is created." if "Success" in results[0] else "The patch failed: " + results[0]

    script = opened_in_prompt(model(dialect, task, [lambda r: ("apply_patch", {"input": ADD_PATCH})], answer))
    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, KNOWN, catalog=False)
        requests = task_requests(stack.upstream.requests, task)
    assert (work / "notes" / "hello.txt").read_bytes() == NEW_FILE.encode()
    assert trail(events) == ["Step 1.", "file_change", "notes/hello.txt is created."], items(events)
    assert requests[0]["reasoning_effort"] and len(requests) == 2
    thought = [m.get("reasoning_content") for m in requests[1]["messages"] if m["role"] == "assistant"]
    assert THINKING + "\n" in thought, ("Codex sent our reasoning back", requests[1]["messages"][-3:])


@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_codex_changes_a_line_with_apply_patch(dialect: str, tmp_path: Path) -> None:
    command = codex()
    source = 'def greet():\n    return "hello"\n\n\ndef part():\n    return "bye"\n'
    work, home = repository(tmp_path / "work", {"greeting.py": source}), tmp_path / "home"
    task = "In greeting.py make greet() return goodbye instead of hello."

    def update(results: list[str]) -> Call:
        old = '    return "hello"' if '    return "hello"' in results[0] else "?"
        return "apply_patch", {"input": "*** Begin Patch\n*** Update File: greeting.py\n@@ def greet():\n"
                                        f"-{old}\n+    return \"goodbye\"\n*** End Patch"}

    steps: list[Callable[[list[str]], Call]] = [lambda r: ("exec_command", {"cmd": "cat greeting.py"}), update]
    script = model(dialect, task, steps, lambda r: "greet() now returns goodbye." if "Success" in r[1] else r[1])
    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, CUSTOM, catalog=True)
        requests = task_requests(stack.upstream.requests, task)
    assert (work / "greeting.py").read_text() == source.replace('"hello"', '"goodbye"')
    assert final_message(events) == "greet() now returns goodbye."
    done = items(events)
    assert trail(events) == ["Step 1.", "command_execution", "Step 2.", "file_change",
                             "greet() now returns goodbye."], done
    assert done[1]["exit_code"] == 0 and 'return "hello"' in done[1]["aggregated_output"], done[1]
    assert [c["kind"] for c in done[3]["changes"]] == ["update"], done[3]
    assert len(requests) == 3
    assert_freeform_offered(requests[0])
    assert [name for name, _ in calls(requests[2])] == ["exec_command", "apply_patch"]


@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_codex_edits_through_exec_command_for_an_unknown_model(dialect: str, tmp_path: Path) -> None:
    command = codex()
    work, home = repository(tmp_path / "work", {"config.ini": "[server]\nport = 8080\nhost = localhost\n"}), \
        tmp_path / "home"
    task = "In config.ini change the port to 9090."
    edit = "sed -i 's/^port = 8080$/port = 9090/' config.ini && grep -n port config.ini"
    steps: list[Callable[[list[str]], Call]] = [lambda r: ("exec_command", {"cmd": edit})]

    def answer(results: list[str]) -> str:
        return "The port is now 9090." if "2:port = 9090" in results[0] else "The edit failed: " + results[0]

    script = model(dialect, task, steps, answer)
    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, CUSTOM, catalog=False)
        requests = task_requests(stack.upstream.requests, task)
    assert (work / "config.ini").read_text() == "[server]\nport = 9090\nhost = localhost\n"
    assert final_message(events) == "The port is now 9090."
    done = items(events)
    assert trail(events) == ["Step 1.", "command_execution", "The port is now 9090."], done
    assert done[1]["exit_code"] == 0 and "2:port = 9090" in done[1]["aggregated_output"], done[1]
    assert len(requests) == 2
    assert "exec_command" in offered(requests[0]) and "apply_patch" not in offered(requests[0])
    assert calls(requests[1])[0][0] == "exec_command"


@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_codex_runs_two_calls_of_one_answer(dialect: str, tmp_path: Path) -> None:
    """One answer holding an ``exec_command`` call and an ``apply_patch`` call (Codex asks for
    parallel calls): both run, and both results come back before the answer."""
    command = codex()
    work, home = repository(tmp_path / "work", {"todo.txt": "- write tests\n- ship\n"}), tmp_path / "home"
    task = "Mark the first item of todo.txt done and show me the file listing."
    patch = "*** Begin Patch\n*** Update File: todo.txt\n@@\n-- write tests\n+- [x] write tests\n - ship\n*** End Patch"

    def script(body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if not any(m["role"] == "user" and task in text(m.get("content")) for m in messages):
            return Reply(content="OK.", chunk=5)
        results = [text(m.get("content")) for m in messages if m["role"] == "tool"]
        if not results:
            return Reply(content=written(dialect, "exec_command", {"cmd": "ls"}) + "\n"
                         + written(dialect, "apply_patch", {"input": patch}), chunk=7)
        listed = "todo.txt" in results[0]
        return Reply(content="Done; the folder holds todo.txt." if listed and "Success" in results[1]
                     else "Something failed: " + " | ".join(results), chunk=5)

    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, CUSTOM, catalog=True)
        requests = task_requests(stack.upstream.requests, task)
    assert (work / "todo.txt").read_text() == "- [x] write tests\n- ship\n"
    assert final_message(events) == "Done; the folder holds todo.txt."
    assert sorted(trail(events)[:-1]) == ["command_execution", "file_change"], items(events)
    assert len(requests) == 2
    assert [name for name, _ in calls(requests[1])] == ["exec_command", "apply_patch"]
    assistants = [m for m in requests[1]["messages"] if m.get("tool_calls")]
    assert len(assistants) == 1 and len(assistants[0]["tool_calls"]) == 2, "one assistant turn, two calls"
    ids = [c["id"] for c in assistants[0]["tool_calls"]]
    answered = [m["tool_call_id"] for m in requests[1]["messages"] if m["role"] == "tool"]
    assert answered == ids, (answered, ids)


def test_codex_with_a_name_the_upstream_does_not_serve(tmp_path: Path) -> None:
    """An upstream that serves one model and refuses any other name (404, as vLLM does), Codex
    configured with a name of its own catalog (so it offers the freeform ``apply_patch``): the
    gateway sends every request to the one served model."""
    command = codex()
    work, home = repository(tmp_path / "work", {"README.md": "A project.\n"}), tmp_path / "home"
    task = "Create notes/hello.txt with the greeting, the quotes line and the unicode line."
    script = model("qwen3_coder", task, [lambda r: ("apply_patch", {"input": ADD_PATCH})],
                   lambda r: "notes/hello.txt is created." if "Success" in r[0] else "The patch failed.")
    with Stack(script, api_key=KEY, models=("Qwen/Qwen3-Coder-30B-A3B-Instruct",), strict=True) as stack:
        events = run(command, task, work, home, stack, KNOWN, catalog=False)
        requests = stack.upstream.requests
    assert (work / "notes" / "hello.txt").read_bytes() == NEW_FILE.encode()
    assert final_message(events) == "notes/hello.txt is created."
    assert requests and {r["model"] for r in requests} == {"Qwen/Qwen3-Coder-30B-A3B-Instruct"}
    assert_freeform_offered(task_requests(requests, task)[0])


@pytest.mark.parametrize("dialect", ["qwen3_coder", "hermes"])
def test_codex_with_the_builtin_provider_works_over_a_websocket(dialect: str, tmp_path: Path) -> None:
    """The setup most guides give (``openai_base_url``, no custom provider): one socket, a
    prewarm and the task's turns on it, each after the first sending only its new items."""
    command = codex()
    work, home = repository(tmp_path / "work", {"config.ini": "[server]\nport = 8080\nhost = localhost\n"}), \
        tmp_path / "home"
    task = "In config.ini change the port to 9090."
    edit = "sed -i 's/^port = 8080$/port = 9090/' config.ini && grep -n port config.ini"
    script = model(dialect, task, [lambda r: ("exec_command", {"cmd": edit})],
                   lambda r: "The port is now 9090." if "2:port = 9090" in r[0] else "The edit failed: " + r[0])
    with Stack(script, api_key=KEY) as stack:
        events = run(command, task, work, home, stack, CUSTOM, catalog=True, builtin=True)
        requests = task_requests(stack.upstream.requests, task)
        assert stack.gateway is not None
        counted = {dict(labels).get("status"): n for (name, labels), n in stack.gateway.metrics.counters.items()
                   if name == "toolbridge_requests_total" and dict(labels).get("endpoint") == "/v1/responses"}
    assert (work / "config.ini").read_text() == "[server]\nport = 9090\nhost = localhost\n"
    assert final_message(events) == "The port is now 9090."
    assert trail(events) == ["Step 1.", "command_execution", "The port is now 9090."], items(events)
    assert counted.get("101") == 1, counted  # one socket served the whole task
    assert len(requests) == 2 and calls(requests[1])[0][0] == "exec_command"
    result = [text(m.get("content")) for m in requests[1]["messages"] if m["role"] == "tool"]
    assert len(result) == 1 and "2:port = 9090" in result[0], result
