"""Model names as agents send them (gateway/upstream/models.py), on all three fronts, over HTTP
with the official SDKs, against real upstreams: a strict one that serves one name and answers
404 to any other as vLLM does, a strict one that serves two, and one without ``/v1/models``
that takes any name (as llama.cpp does)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from toolbridge.errors import ConfigError
from toolbridge.gateway.config import GatewayConfig, env_defaults
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.gateway.upstream.models import parse_aliases
from tests.gateway.test_fallback import model_dir, stack

anthropic = pytest.importorskip("anthropic")

FRONTS = ("chat", "messages", "responses")
USER = [{"role": "user", "content": "Hi?"}]
ONE = ("qwen3-coder",)
TWO = ("qwen3-coder", "qwen3-1.7b")
ALIASES = "claude-*haiku*=qwen3-1.7b,claude-*=qwen3-coder"


def hello(body: dict[str, Any]) -> Reply:
    return Reply(content="Hello.")


@pytest.fixture(scope="module")
def stacks() -> Iterator[Callable[..., Stack]]:
    """``stacks(models, strict, **config)``: a running gateway in front of that upstream (one
    per setting for the module, started once)."""
    opened: dict[Any, Stack] = {}

    def get(models: tuple[str, ...] = ONE, strict: bool = True, **config: Any) -> Stack:
        key = (models, strict, *sorted(config.items()))
        if key not in opened:
            opened[key] = Stack(hello, models=models, strict=strict, **config).__enter__()
        return opened[key]

    yield get
    for s in opened.values():
        s.__exit__(None, None, None)


def ask(s: Stack, front: str, model: str | None, stream: bool = False) -> tuple[str, Any, str]:
    """One request on ``front`` asking for ``model`` (None: no model field): the answer's text,
    its header fields and the model its body names."""
    if model is None:
        return _bare(s, front)
    if front == "chat":
        c = s.client().chat.completions
        if stream:
            with c.with_streaming_response.create(model=model, messages=USER, stream=True) as raw:
                chunks = list(raw.parse())
            text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
            return text, raw.headers, chunks[0].model
        raw = c.with_raw_response.create(model=model, messages=USER)
        answer = raw.parse()
        return answer.choices[0].message.content, raw.headers, answer.model
    if front == "messages":
        with anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="k", max_retries=0) as client:
            return _message(client.messages, model, stream)
    r = s.client().responses
    if stream:
        with r.with_streaming_response.create(model=model, input="Hi?", stream=True) as raw:
            events = list(raw.parse())
        done = events[-1].response
        return done.output_text, raw.headers, done.model
    raw = r.with_raw_response.create(model=model, input="Hi?")
    answer = raw.parse()
    return answer.output_text, raw.headers, answer.model


def _message(m: Any, model: str, stream: bool) -> tuple[str, Any, str]:
    if stream:
        with m.with_streaming_response.create(model=model, max_tokens=64, messages=USER, stream=True) as raw:
            events = list(raw.parse())
        text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
        return text, raw.headers, events[0].message.model
    raw = m.with_raw_response.create(model=model, max_tokens=64, messages=USER)
    answer = raw.parse()
    return answer.content[0].text, raw.headers, answer.model


PATHS = {"chat": "/chat/completions", "messages": "/messages", "responses": "/responses"}
BODIES = {"chat": {"messages": USER}, "messages": {"max_tokens": 64, "messages": USER},
          "responses": {"input": "Hi?"}}


def _bare(s: Stack, front: str) -> tuple[str, Any, str]:
    """A request without a ``model`` field (the SDKs of chat and messages require one)."""
    req = urllib.request.Request(s.url + PATHS[front], json.dumps(BODIES[front]).encode(),
                                 {"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as answer:
        body, headers = json.loads(answer.read()), answer.headers
    text = (body["choices"][0]["message"]["content"] if front == "chat" else
            body["content"][0]["text"] if front == "messages" else body["output"][0]["content"][0]["text"])
    return text, headers, body["model"]


def metrics(s: Stack) -> str:
    return urllib.request.urlopen(s.url.removesuffix("/v1") + "/metrics").read().decode()


def mapped(s: Stack, how: str, model: str) -> int:
    line = f'toolbridge_models_mapped_total{{how="{how}",model="{model}"}} '
    return next((int(row.removeprefix(line)) for row in metrics(s).splitlines() if row.startswith(line)), 0)


# ------------------------------------------------------------------ 1. the listing


def test_the_listing_is_fetched_at_start(stacks: Callable[..., Stack]) -> None:
    s = stacks(TWO)
    assert s.upstream.models_probes >= 1
    assert s.gateway is not None and s.gateway.pipeline.models.served == TWO
    assert [m.id for m in s.client().models.list()] == list(TWO)  # the gateway's own listing


def test_the_listing_is_fetched_again_on_an_interval() -> None:
    with Stack(hello, models=ONE, strict=True, models_refresh=0.05) as s:
        assert s.gateway is not None
        s.upstream.models = {"object": "list", "data": [{"id": "other"}]}
        deadline = time.monotonic() + 30
        while s.gateway.pipeline.models.served != ("other",) and time.monotonic() < deadline:
            time.sleep(0.02)  # polling the state the background task changes, not waiting a set time
        assert s.gateway.pipeline.models.served == ("other",)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("front", FRONTS)
def test_an_upstream_404_fetches_the_listing_and_the_request_goes_again(front: str,
                                                                        stream: bool) -> None:
    """The upstream swapped its model since the last listing: the name the gateway still
    believed served is refused 404; the new listing maps it to the one now served."""
    with Stack(hello, models=ONE, strict=True, models_refresh=0) as s:
        s.upstream.models = {"object": "list", "data": [{"id": "qwen3-next"}]}
        probes = s.upstream.models_probes
        text, headers, answered = ask(s, front, "qwen3-coder", stream)
        assert text == "Hello." and headers["x-toolbridge-model"] == "qwen3-next"
        assert answered == "qwen3-coder"
        assert [r["model"] for r in s.upstream.requests] == ["qwen3-coder", "qwen3-next"]
        assert s.upstream.models_probes == probes + 1


@pytest.mark.parametrize("stream", [False, True])
def test_the_request_that_goes_again_continues_what_the_store_held(tmp_path: Path, stream: bool) -> None:
    """After an upstream 404, the request planned again still continues the stored response and
    Messages thread it named (what the store was read for the first plan: on SQLite the turn
    cannot read the store itself), and its answer is kept."""
    with Stack(hello, models=ONE, strict=True, models_refresh=0, state=f"sqlite:///{tmp_path}/s.db") as s:
        r = s.client().responses
        first = r.create(model="qwen3-coder", input="one")
        post = s.url + "/messages"
        thread = {"model": "qwen3-coder", "max_tokens": 9, "thread": {"type": "create"},
                  "messages": [{"role": "user", "content": "t0"}]}
        kept = json.loads(urllib.request.urlopen(urllib.request.Request(
            post, json.dumps(thread).encode(), {"content-type": "application/json"}), timeout=20).read())
        s.upstream.models = {"object": "list", "data": [{"id": "qwen3-next"}]}
        if stream:
            with r.create(model="qwen3-coder", input="two", previous_response_id=first.id,
                          stream=True) as events:
                second = [e.response for e in events if e.type == "response.completed"][0]
        else:
            second = r.create(model="qwen3-coder", input="two", previous_response_id=first.id)
        assert [m["content"] for m in s.upstream.requests[-1]["messages"]] == ["one", "Hello.", "two"]
        assert s.upstream.requests[-1]["model"] == "qwen3-next"
        assert r.retrieve(second.id).output_text == "Hello."
        s.upstream.models = {"object": "list", "data": [{"id": "qwen3-third"}]}  # a 404 again
        more = {"model": "qwen3-coder", "max_tokens": 9, "stream": stream,
                "messages": [{"role": "user", "content": "t1"}],
                "thread": {"type": "continue", "previous_message_id": kept["id"]}}
        request = urllib.request.Request(post, json.dumps(more).encode(), {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=20) as answer:
            assert answer.status == 200
        assert [m["content"] for m in s.upstream.requests[-1]["messages"]] == ["t0", "Hello.", "t1"]
        assert [q["model"] for q in s.upstream.requests[-2:]] == ["qwen3-next", "qwen3-third"]


@pytest.mark.parametrize("front", FRONTS)
def test_without_a_listing_names_pass_through(stacks: Callable[..., Stack], front: str) -> None:
    s = stacks(None, strict=False)
    assert s.gateway is not None and s.gateway.pipeline.models.served is None
    for name in ("claude-opus-4-8", "gpt-5.1-codex"):
        text, headers, _ = ask(s, front, name)
        assert text == "Hello." and s.upstream.requests[-1]["model"] == name
        assert headers["x-toolbridge-model"] == name


def test_an_upstream_404_without_a_listing_is_passed_on() -> None:
    with Stack(hello, models=ONE, strict=True, models_refresh=0) as s:
        s.upstream.models = None  # gone, and the upstream still refuses other names
        with pytest.raises(openai.NotFoundError, match="does not exist"):
            ask(s, "chat", "claude-opus-4-8")  # the listing is gone: the upstream's own answer
        with pytest.raises(openai.NotFoundError, match="does not exist"):
            ask(s, "chat", "claude-opus-4-8")


# ------------------------------------------------------------------ 2. served names


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("front", FRONTS)
def test_a_served_name_passes_unchanged(stacks: Callable[..., Stack], front: str, stream: bool) -> None:
    s = stacks(TWO, model_alias=ALIASES)
    for name in TWO:
        before = mapped(s, "alias", name)
        text, headers, answered = ask(s, front, name, stream)
        assert (text, answered, headers["x-toolbridge-model"]) == ("Hello.", name, name)
        assert s.upstream.requests[-1]["model"] == name
        assert mapped(s, "alias", name) == before


# ------------------------------------------------------------------ 3. aliases, the one model


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("front", FRONTS)
def test_an_unserved_name_goes_to_the_only_model(stacks: Callable[..., Stack], front: str,
                                                stream: bool) -> None:
    s = stacks(ONE)
    before = mapped(s, "only", "qwen3-coder")
    text, headers, answered = ask(s, front, "claude-opus-4-8", stream)
    assert text == "Hello." and s.upstream.requests[-1]["model"] == "qwen3-coder"
    assert headers["x-toolbridge-model"] == "qwen3-coder"
    assert answered == "claude-opus-4-8"  # the body names the model asked for, the header the one sent to
    assert mapped(s, "only", "qwen3-coder") == before + 1


@pytest.mark.parametrize("front", FRONTS)
def test_a_request_without_a_model_goes_to_the_only_model(stacks: Callable[..., Stack], front: str) -> None:
    s = stacks(ONE)
    text, headers, answered = ask(s, front, None)
    assert (text, answered, headers["x-toolbridge-model"]) == ("Hello.", "qwen3-coder", "qwen3-coder")
    assert s.upstream.requests[-1]["model"] == "qwen3-coder"


@pytest.mark.parametrize("front", FRONTS)
def test_the_first_matching_alias_wins(stacks: Callable[..., Stack], front: str) -> None:
    s = stacks(TWO, model_alias=ALIASES)
    for asked, sent in (("claude-haiku-4-5-20251001", "qwen3-1.7b"), ("claude-opus-4-8", "qwen3-coder"),
                        ("claude-3-5-haiku-latest", "qwen3-1.7b")):
        before = mapped(s, "alias", sent)
        text, headers, _ = ask(s, front, asked)
        assert text == "Hello." and s.upstream.requests[-1]["model"] == sent, asked
        assert headers["x-toolbridge-model"] == sent
        assert mapped(s, "alias", sent) == before + 1


def test_an_alias_comes_before_the_only_model(stacks: Callable[..., Stack]) -> None:
    s = stacks(("qwen3-coder", "gpt-oss-20b"), strict=False, model_alias="gpt-*=gpt-oss-20b,*=qwen3-coder")
    ask(s, "responses", "gpt-5.1-codex")
    assert s.upstream.requests[-1]["model"] == "gpt-oss-20b"
    ask(s, "responses", None)  # "*" matches the empty name
    assert s.upstream.requests[-1]["model"] == "qwen3-coder"


def test_names_of_one_model_are_one_model() -> None:
    """vLLM's ``--served-model-name coder qwen3-coder`` lists both names with the same ``root``:
    one model, which an unserved name goes to under its first name; a LoRA adapter (its own
    ``root``) is another model."""
    one = [{"id": "coder", "root": "/models/Qwen3-Coder", "owned_by": "vllm"},
           {"id": "qwen3-coder", "root": "/models/Qwen3-Coder", "owned_by": "vllm"}]
    s = Stack(hello, strict=True)
    s.upstream.models = {"object": "list", "data": one}
    with s:
        ask(s, "messages", "claude-opus-4-8")
        assert s.upstream.requests[-1]["model"] == "coder"
    s = Stack(hello, strict=True)
    s.upstream.models = {"object": "list", "data": [*one, {"id": "sql", "root": "/loras/sql", "parent": "coder"}]}
    with s, pytest.raises(anthropic.NotFoundError, match="'coder', 'qwen3-coder', 'sql'"):
        ask(s, "messages", "claude-opus-4-8")


def test_each_mapping_is_logged_once(stacks: Callable[..., Stack], caplog: pytest.LogCaptureFixture) -> None:
    s = stacks(ONE)
    with caplog.at_level("INFO", logger="toolbridge.gateway"):
        for _ in range(3):
            ask(s, "chat", "claude-sonnet-4-6")
    told = [r.getMessage() for r in caplog.records if "'claude-sonnet-4-6' is sent as" in r.getMessage()]
    assert told == ["model 'claude-sonnet-4-6' is sent as 'qwen3-coder' (the only model the upstream serves)"]


# ------------------------------------------------------------------ 4. several models, no alias


@pytest.mark.parametrize("front", FRONTS)
def test_several_models_and_no_alias_is_a_404_naming_them(stacks: Callable[..., Stack], front: str) -> None:
    s = stacks(TWO)
    sent = len(s.upstream.requests)
    errors = (openai.NotFoundError, anthropic.NotFoundError)
    with pytest.raises(errors) as caught:
        ask(s, front, "claude-opus-4-8")
    error = caught.value.body
    message = error["error"]["message"] if front == "messages" else error["message"]
    assert "'claude-opus-4-8'" in message and "'qwen3-coder', 'qwen3-1.7b'" in message
    assert "--model-alias" in message and "does not exist" not in message  # not the upstream's words
    if front == "messages":
        assert error["type"] == "error" and error["error"]["type"] == "not_found_error"
    else:
        assert error["code"] == "model_not_found" and error["param"] == "model"
    assert len(s.upstream.requests) == sent  # nothing went upstream


def test_a_swap_to_several_models_answers_the_404_not_the_upstreams() -> None:
    with Stack(hello, models=ONE, strict=True, models_refresh=0) as s:
        s.upstream.models = {"object": "list", "data": [{"id": "a"}, {"id": "b"}]}
        with pytest.raises(anthropic.NotFoundError, match="'a', 'b'.*--model-alias"):
            ask(s, "messages", "qwen3-coder")
        assert len(s.upstream.requests) == 1


# ------------------------------------------------------------------ 5. keyed by the served name


def test_autos_hint_reads_the_served_name(stacks: Callable[..., Stack]) -> None:
    """Under ``auto`` the model name hints the dialect, and so whether special tokens are kept
    (``skip_special_tokens: false`` for DeepSeek's markers, nothing sent for Qwen's): the
    served name decides, not the one the client asked for."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    for served, keep in (("Qwen/Qwen3-8B", None), ("deepseek-ai/DeepSeek-V3.1", False)):
        s = stacks((served,))
        s.client().chat.completions.create(model="claude-opus-4-8", messages=USER, tools=tools)
        assert s.upstream.requests[-1].get("skip_special_tokens") is keep, served


def test_the_completions_mode_sends_the_served_name(tmp_path: Path) -> None:
    """The completions mode renders the prompt here (``--model-dir``) and sends the served name."""
    s = stack(hello, upstream_api="completions", model_dir=model_dir(tmp_path))
    s.upstream.models = {"object": "list", "data": [{"id": "qwen3-coder"}]}
    with s:
        text, headers, _ = ask(s, "messages", "claude-opus-4-8")
        assert text == "Hello." and headers["x-toolbridge-model"] == "qwen3-coder"
        assert s.upstream.requests[-1]["model"] == "qwen3-coder" and "prompt" in s.upstream.requests[-1]


def test_a_model_that_refused_tools_is_remembered_by_its_served_name() -> None:
    """``--tool-fallback``: the upstream refused tools once, for the one model it serves; a
    request under another client name for the same model is sent the protocol directly."""
    def script(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return Reply(status=400, error="qwen3-coder does not support tools")
        return Reply(content="Hello.")

    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with Stack(script, models=ONE, strict=True, tool_fallback=True) as s:
        for name in ("claude-opus-4-8", "claude-haiku-4-5"):
            s.client().chat.completions.create(model=name, messages=USER, tools=tools)
        sent = [("tools" in r, r["model"]) for r in s.upstream.requests]
    assert sent == [(True, "qwen3-coder"), (False, "qwen3-coder"), (False, "qwen3-coder")]


# ------------------------------------------------------------------ configuration


def test_aliases_are_read_from_the_flag_and_the_environment() -> None:
    assert [(a.pattern, a.name) for a in parse_aliases(" claude-*haiku*=small , claude-*=big,")] == [
        ("claude-*haiku*", "small"), ("claude-*", "big")]
    environ = {"TOOLBRIDGE_MODEL_ALIAS": "a*=b,c=d"}
    config = GatewayConfig(upstream="http://127.0.0.1:1/v1", **env_defaults(environ))
    assert [(a.pattern, a.name) for a in config.aliases()] == [("a*", "b"), ("c", "d")]
    for bad in ("claude", "=x", "x="):
        with pytest.raises(ConfigError, match="PATTERN=NAME"):
            GatewayConfig(upstream="http://127.0.0.1:1/v1", model_alias=bad).check()
    with pytest.raises(ConfigError, match="models-refresh"):
        GatewayConfig(upstream="http://127.0.0.1:1/v1", models_refresh=-1).check()


def test_the_cli_flag_repeats_and_replaces_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from toolbridge.cli import serve

    monkeypatch.setenv("TOOLBRIDGE_MODEL_ALIAS", "env*=e")
    monkeypatch.setattr(serve, "missing_extra", lambda extra: "stopped before serving")
    parser = argparse.ArgumentParser()
    serve.add_parser(parser.add_subparsers())
    for argv, expected in ((["--model-alias", "claude-*haiku*=s", "--model-alias", "claude-*=b"],
                            "claude-*haiku*=s,claude-*=b"), ([], "env*=e")):
        args = parser.parse_args(["serve", "--upstream", "http://127.0.0.1:1", *argv])
        serve.run(args)
        assert args.model_alias == expected


def test_the_model_header_is_safe_for_any_name(stacks: Callable[..., Stack]) -> None:
    s = stacks(None, strict=False)
    _, headers, _ = ask(s, "chat", "a\r\nx-evil: 1 é%")
    assert headers["x-toolbridge-model"] == "a%0D%0Ax-evil:%201%20%C3%A9%25" and "x-evil" not in headers


def test_errors_still_name_a_bad_model_field(stacks: Callable[..., Stack]) -> None:
    s = stacks(ONE)
    for front in ("messages", "responses"):
        body = {**BODIES[front], "model": 7}
        req = urllib.request.Request(s.url + PATHS[front], json.dumps(body).encode(),
                                     {"content-type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(req, timeout=20)
        assert caught.value.code == 400 and b"model" in caught.value.read()
