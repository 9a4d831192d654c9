"""Codex CLI compacting a long session through toolbridge, headless (``make test-agents``).

The task needs four tool results (four files read one at a time); the scripted upstream reports
a prompt that grows by ``GROWTH`` tokens per tool result in the conversation, so that the answer
to the request holding two results crosses Codex's ``model_auto_compact_token_limit``
(``LIMIT``): Codex runs the call it made, then compacts in the middle of the task, and the
fourth file is read after compacting. The model finds what it has read in the conversation it
is shown (tool results, and the lines a summary carries); asked for a summary it writes those
lines. So the task is only done if the summary reached the model in place of the results it
replaced.

Two setups, as the issue has them:

- the built-in ``openai`` provider with ``openai_base_url`` at the gateway (most gateway
  guides' setup): Codex asks the server to compact, with an ordinary streamed ``/v1/responses``
  request whose input ends with a ``compaction_trigger`` item (``remote_compaction_v2``); the
  gateway answers with the sealed ``compaction`` item, which Codex's next request carries.
  Codex 0.171 dials a WebSocket for this provider (the built-in provider cannot be redefined,
  and ``--disable responses_websockets`` does not stop the socket), so there the trigger comes
  over the socket; the same server compaction over HTTP is run through a custom provider
  *named* "OpenAI" with ``supports_websockets = false``: Codex takes a provider of that name for
  OpenAI's own, and compacts through it.
  (Codex 0.171 has no ``/v1/responses/compact`` form left: ``--disable remote_compaction_v2``
  changes nothing. That endpoint is tested with the SDK and the OpenResponses suite.)
- a custom ``model_providers`` entry: Codex summarises by itself, through an ordinary request
  that ends with its own summary prompt (the server's compaction is never asked for).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.agents.test_codex import CUSTOM, KEY, codex, codex_exec, final_message, repository, text
from tests.harness import written
from toolbridge.gateway.fronts.responses.compaction import LEAD, PROMPT
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

pytestmark = pytest.mark.agents

LIMIT = 5000  # model_auto_compact_token_limit
GROWTH = 2600  # reported prompt tokens per tool result: the second crosses LIMIT
FILES = {"a.txt": "alpha", "b.txt": "bravo", "c.txt": "charlie", "d.txt": "delta"}
TASK = "Read a.txt, b.txt, c.txt and d.txt, one at a time, and tell me the word each holds."
FOUND = re.compile(r"\b([a-d])\.txt holds (\w+)")
WORDS = "Words: alpha, bravo, charlie, delta."
# Custom providers by id -> name: a provider named "OpenAI" is taken for OpenAI's own (it
# compacts through the server), any other name is not (it summarises by itself).
PROVIDERS = {"gateway": "OpenAI", "local": "toolbridge"}


def seen(messages: list[dict[str, Any]]) -> dict[str, str]:
    """What the model has read so far, as its conversation shows it: the tool results, and the
    lines a summary carries (in a user message)."""
    found: dict[str, str] = {}
    for m in messages:
        if m["role"] in ("tool", "user"):
            found.update((f + ".txt", w) for f, w in FOUND.findall(text(m.get("content"))))
    return found


def usage(prompt: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": 12, "total_tokens": prompt + 12}


def summary_asked(body: dict[str, Any]) -> bool:
    """A summary request: the gateway's (its compaction prompt), or Codex's own (a custom
    provider); either is sent without tools, and every turn of the task with them."""
    return "tools" not in body


def script(body: dict[str, Any]) -> Reply:
    """The model: reads the files in order, then answers; asked for a summary, writes what it read."""
    messages = body["messages"]
    if not any(m["role"] == "user" and TASK in text(m.get("content")) for m in messages):
        return Reply(content="OK.", chunk=5)
    found = seen(messages)
    if summary_asked(body):
        lines = [f"TASK: read {', '.join(FILES)} one at a time and report each word."]
        lines += [f"{name} holds {word}" for name, word in found.items()]
        return Reply(content="\n".join(lines), chunk=9, usage=usage(800))
    results = sum(m["role"] == "tool" for m in messages)
    prompt = usage(1000 + GROWTH * results)
    missing = [name for name in FILES if name not in found]
    if missing:
        call = written("hermes", "exec_command", {"cmd": f"cat {missing[0]}"})
        return Reply(content=f"Reading {missing[0]}.\n{call}", chunk=5, usage=prompt)
    return Reply(content="Words: " + ", ".join(found[name] for name in FILES) + ".", chunk=5, usage=prompt)


def run(stack: Stack, tmp: Path, provider: str, disable: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Codex headless on TASK with the gateway as its provider: the ``--json`` events."""
    work = repository(tmp / "work", {name: f"{name} holds {word}\n" for name, word in FILES.items()})
    home = tmp / "home"
    home.mkdir()
    lines = [f"model = {json.dumps(CUSTOM)}", "check_for_update_on_startup = false",
             f"model_auto_compact_token_limit = {LIMIT}"]
    if provider == "openai":
        lines.append(f"openai_base_url = {json.dumps(stack.url)}")
    else:  # named "OpenAI", Codex treats it as OpenAI's (the server compacts), its WebSocket off
        lines += [f'model_provider = "{provider}"', "", f"[model_providers.{provider}]",
                  f"name = {json.dumps(PROVIDERS[provider])}", f"base_url = {json.dumps(stack.url)}",
                  'env_key = "OPENAI_API_KEY"', 'wire_api = "responses"', "supports_websockets = false",
                  "request_max_retries = 0", "stream_max_retries = 0"]
    lines += ["", "[analytics]", "enabled = false", "", "[otel]", 'exporter = "none"', ""]
    (home / "config.toml").write_text("\n".join(lines))
    events, _ = codex_exec(codex(), TASK, work, home, disable, timeout=180)
    return events


def task_requests(stack: Stack) -> list[dict[str, Any]]:
    return [r for r in stack.upstream.requests
            if any(m["role"] == "user" and TASK in text(m.get("content")) for m in r["messages"])]


def finished(events: list[dict[str, Any]], requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The task was done after compacting: the answer names every word, each file was read
    once, and a file was read after the summary. The first request after the summary request
    is returned."""
    assert final_message(events).strip() == WORDS, events[-4:]
    commands = [e["item"]["command"] for e in events if e.get("type") == "item.completed"
                and e["item"].get("type") == "command_execution"]
    assert len(commands) == len(FILES) and all(f"cat {n}" in c for n, c in zip(FILES, commands)), commands
    asked = [i for i, r in enumerate(requests) if summary_asked(r)]
    assert len(asked) == 1, [r["messages"][-1] for r in requests]
    after = requests[asked[0] + 1:]
    assert len(after) >= 2 and not summary_asked(requests[-1])  # a file read after compacting
    assert not any(m["role"] == "tool" and "a.txt holds" in text(m.get("content")) for m in after[0]["messages"])
    return after[0]


def compacted(stack: Stack) -> dict[str, int]:
    """The compactions the gateway answered, by form (``toolbridge_compactions_total``)."""
    assert stack.gateway is not None
    lines = stack.gateway.metrics.render().splitlines()
    counted = {}
    for form in ("endpoint", "trigger"):
        name = f'toolbridge_compactions_total{{form="{form}"}}'
        counted.update((form, int(float(line.rsplit(" ", 1)[1]))) for line in lines if line.startswith(name))
    return counted


def served_summary(stack: Stack, requests: list[dict[str, Any]], after: dict[str, Any]) -> None:
    """The gateway compacted: the upstream was sent our compaction prompt, and the next request
    shows the model the summary in place of the item Codex carried."""
    ours = [r for r in requests if summary_asked(r)]
    assert [r["messages"][-1] for r in ours] == [{"role": "user", "content": PROMPT}]
    carried = [m for m in after["messages"] if m["role"] == "user" and text(m["content"]).startswith(LEAD)]
    assert len(carried) == 1 and "a.txt holds alpha" in carried[0]["content"], after["messages"][-3:]


def test_codex_compacts_through_the_gateway_and_finishes(tmp_path: Path) -> None:
    """A provider Codex takes for OpenAI's (named "OpenAI"), its WebSocket off: the server
    compacts (the v2 trigger: Codex 0.171 has no other remote form), and the next requests
    carry the item."""
    with Stack(script, api_key=KEY) as stack:
        events = run(stack, tmp_path, "gateway")
        requests = task_requests(stack)
        counted = compacted(stack)
    served_summary(stack, requests, finished(events, requests))
    assert counted == {"trigger": 1}  # the gateway answered Codex's compaction_trigger once


def test_codex_builtin_provider_compacts_through_the_gateway(tmp_path: Path) -> None:
    """The built-in ``openai`` provider at the gateway (``openai_base_url``), as gateway guides
    set it up: the whole task, compaction included, over the WebSocket it dials first."""
    with Stack(script, api_key=KEY) as stack:
        events = run(stack, tmp_path, "openai")
        requests = task_requests(stack)
        counted = compacted(stack)
        assert stack.gateway is not None
        upgrades = sum(n for (name, labels), n in stack.gateway.metrics.counters.items()
                       if name == "toolbridge_requests_total" and dict(labels).get("status") == "101")
    served_summary(stack, requests, finished(events, requests))
    said = json.dumps(events)
    assert counted == {"trigger": 1} and upgrades == 1, (counted, upgrades)  # one socket, one compaction
    assert "Reconnecting" not in said and "Falling back" not in said


def test_codex_compacts_by_itself_with_a_custom_provider(tmp_path: Path) -> None:
    """A custom provider: Codex asks for the summary with an ordinary request (its own prompt),
    never the gateway's compaction."""
    with Stack(script, api_key=KEY) as stack:
        events = run(stack, tmp_path, "local")
        requests = task_requests(stack)
        counted = compacted(stack)
    after = finished(events, requests)
    own = [r for r in requests if summary_asked(r)]
    assert own[0]["messages"][-1]["content"] != PROMPT and counted == {}
    assert "a.txt holds alpha" in json.dumps(after["messages"]) and LEAD not in json.dumps(after["messages"])
