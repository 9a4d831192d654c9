"""A cache-stable upstream prompt (gateway/stable.py): Claude Code's attribution block, whose
``cch=`` changes on every request and whose ``cc_version`` suffix changes with the first user
message, is taken out of the upstream's system prompt, so consecutive requests of a session
share their prompt up to the new turn; the rest passes byte for byte; ``--no-stable-prompt``
sends it as written. Over HTTP with the official SDKs, on Claude Code's captured request where
present (``../shared/captures``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from toolbridge.bench.prefix import prompt, rereads, session
from toolbridge.cli.main import build_parser
from toolbridge.gateway.config import GatewayConfig, env_defaults
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.gateway.stable import stable_prompt

anthropic = pytest.importorskip("anthropic")

CAPTURES = Path(__file__).resolve().parents[3] / "shared" / "captures"
BLOCK = "x-anthropic-billing-header: cc_version=2.1.197.{}; cc_entrypoint=sdk-cli; cch={};"
SYSTEM = [{"type": "text", "text": BLOCK.format("707", "8fcfa")},
          {"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}},
          {"type": "text", "text": "Work in the user's folder.\nx-anthropic-billing-header: quoted, not first"}]
READ = {"name": "Read", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}


def hello(body: dict[str, Any]) -> Reply:
    return Reply(content="Hello.")


def captured() -> dict[str, Any]:
    path = CAPTURES / "claude-code-1-first-turn.json"
    if not path.exists():
        pytest.skip(f"{path} is absent (the captured Claude Code request)")
    return json.loads(path.read_text())["body"]


def send(s: Stack, body: dict[str, Any]) -> dict[str, Any]:
    """The body through the anthropic SDK, streamed as Claude Code streams; what the upstream got."""
    with anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="k", max_retries=0, timeout=30) as c:
        extra = {k: v for k, v in body.items() if k not in ("model", "max_tokens", "messages", "system", "tools")}
        with c.messages.stream(model=body["model"], max_tokens=body["max_tokens"], messages=body["messages"],
                               system=body["system"], tools=body.get("tools") or [], extra_body=extra) as events:
            events.get_final_message()
    return s.upstream.requests[-1]


def test_the_attribution_block_is_not_sent_and_the_rest_is_byte_for_byte() -> None:
    body = {"model": "claude-opus-4-8", "max_tokens": 100, "system": SYSTEM, "tools": [READ],
            "messages": [{"role": "user", "content": "Hi"}]}
    with Stack(hello) as s:
        sent = send(s, body)
    assert sent["messages"][0] == {"role": "system", "content": "You are a coding agent.\n\n" + SYSTEM[2]["text"]}
    with Stack(hello, stable_prompt=False) as s:
        sent = send(s, body)
    assert sent["messages"][0]["content"] == "\n\n".join(b["text"] for b in SYSTEM)


def test_consecutive_requests_share_their_prompt_up_to_the_new_turn() -> None:
    """A session of four turns whose attribution block changes on each (``cch``) and midway
    (``cc_version``): with the stable prompt each upstream prompt begins with the whole one
    before it; without, they share the 40-odd characters before the first value that changed."""
    bodies = session(captured(), 4)
    for on in (True, False):
        with Stack(hello, stable_prompt=on) as s:
            prompts = [prompt(send(s, b)) for b in bodies]
        figures = rereads(prompts)
        if on:
            assert all(f["shared"] == figures[k - 1]["chars"] for k, f in enumerate(figures) if k), figures
            assert not any("cch=" in p or "cc_version" in p for p in prompts)
        else:
            assert all(f["shared"] < 100 for f in figures), figures


def test_claude_codes_captured_request_keeps_everything_but_the_block() -> None:
    body = captured()
    with Stack(hello) as s:
        sent = send(s, copy.deepcopy(body))
    system = sent["messages"][0]["content"]
    assert "x-anthropic-billing-header" not in system and "cch=" not in system and "cc_version" not in system
    rest = [b["text"] for b in body["system"][1:]]
    assert system.startswith("\n\n".join(rest))  # then the mid-conversation system message, as before


def test_the_chat_front_and_a_system_of_the_block_alone() -> None:
    with Stack(hello) as s:
        c = s.client()
        c.chat.completions.create(model="m", messages=[
            {"role": "system", "content": BLOCK.format("3fa", "00000") + "\n\nBe brief."},
            {"role": "user", "content": "Hi"}])
        assert s.upstream.requests[-1]["messages"][0] == {"role": "system", "content": "Be brief."}
        c.chat.completions.create(model="m", messages=[{"role": "system", "content": BLOCK.format("3fa", "1")},
                                                       {"role": "user", "content": "Hi"}])
        assert s.upstream.requests[-1]["messages"] == [{"role": "user", "content": "Hi"}]
        c.chat.completions.create(model="m", messages=[
            {"role": "system", "content": [{"type": "text", "text": BLOCK.format("3fa", "2")},
                                           {"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "Hi"}])
        assert s.upstream.requests[-1]["messages"][0]["content"] == [{"type": "text", "text": "Be brief."}]


def test_a_block_elsewhere_is_left_alone() -> None:
    messages = [{"role": "user", "content": BLOCK.format("1", "2")}]
    assert stable_prompt(messages) == 0 and messages[0]["content"] == BLOCK.format("1", "2")


def test_the_switch_is_a_flag_and_a_variable() -> None:
    assert GatewayConfig().stable_prompt is True
    assert env_defaults({"TOOLBRIDGE_STABLE_PROMPT": "0"}) == {"stable_prompt": False}
    args = build_parser().parse_args(["serve", "--upstream", "http://127.0.0.1:1/v1", "--no-stable-prompt"])
    assert args.stable_prompt is False
