"""``--on-invalid pass|reject|retry`` and ``strict: true``, over real HTTP with the openai SDK.

The upstream is scripted: it writes a call to ``get_weather`` without its required ``city`` (no
schema repair can add a missing argument), and, once it sees its call answered with the schema
errors, a valid one. Every case runs whole and streamed.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.gateway.test_fallback import EOS, model_dir
from tests.gateway.test_fallback import stack as text_stack
from toolbridge.cli.main import build_parser
from toolbridge.errors import ConfigError
from toolbridge.gateway.config import GatewayConfig, env_defaults
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

USER = [{"role": "user", "content": "Weather in Paris?"}]
BAD = '<tool_call>\n{"name": "get_weather", "arguments": {"days": 3}}\n</tool_call>'
GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'
BAD_NATIVE = [{"id": "call_n1", "type": "function", "function": {"name": "get_weather", "arguments": '{"days": 3}'}}]
MISSING = "'city' is a required property"


def weather(strict: bool | None = None) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}
    if strict is not None:
        fn["strict"] = strict
    return {"type": "function", "function": fn}


def corrected(body: dict[str, Any]) -> bool:
    """Whether the request carries the gateway's errors for the model's last call."""
    last = body["messages"][-1]
    return last["role"] == "tool" and MISSING in last["content"]


def model(good_after_errors: bool = True, lead: str = "Let me check.\n", native: bool = False) -> Any:
    """Writes the bad call; the good one once told what was wrong (when ``good_after_errors``)."""
    def script(body: dict[str, Any]) -> Reply:
        if good_after_errors and corrected(body):
            return Reply(content=GOOD, chunk=5)
        if native:
            return Reply(content=None, tool_calls=BAD_NATIVE, finish_reason="tool_calls")
        return Reply(content=lead + BAD, chunk=5)
    return script


def ask(s: Stack, stream: bool, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One answer as content, calls (name, arguments) and finish; streamed: also what came
    before an error (``error``: the exception), and the raw tool-call deltas seen."""
    client = s.client()
    kw = {"model": "m", "messages": USER, "tools": tools or [weather()]}
    if not stream:
        c = client.chat.completions.create(**kw)
        m = c.choices[0].message
        return {"content": m.content, "finish": c.choices[0].finish_reason,
                "calls": [(t.function.name, json.loads(t.function.arguments)) for t in m.tool_calls or ()]}
    out: dict[str, Any] = {"content": "", "finish": None, "deltas": [], "error": None}
    calls: dict[int, dict[str, str]] = {}
    try:
        for chunk in client.chat.completions.create(stream=True, **kw):
            for ch in chunk.choices:
                out["content"] += ch.delta.content or ""
                out["finish"] = ch.finish_reason or out["finish"]
                for part in ch.delta.tool_calls or ():
                    out["deltas"].append(part)
                    entry = calls.setdefault(part.index, {"name": "", "arguments": ""})
                    entry["name"] += part.function.name or ""
                    entry["arguments"] += part.function.arguments or ""
    except openai.APIError as exc:
        out["error"] = exc
    out["calls"] = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
    return out


def metric(s: Stack, name: str) -> int:
    text = urllib.request.urlopen(s.url.removesuffix("/v1") + "/metrics").read().decode()
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def rejected(error: Any, retries: int = 0) -> None:
    """The error names the tool and its schema errors (and the retries spent)."""
    assert error is not None
    message = error.message if isinstance(error, openai.APIError) else str(error)
    assert "get_weather" in message and MISSING in message
    if retries:
        assert f"after {retries} retr" in message


# ---------------------------------------------------------------- pass


@pytest.mark.parametrize("stream", [False, True])
def test_pass_returns_the_invalid_call_as_before(stream: bool) -> None:
    with Stack(model(), tool_call_parser="hermes") as s:
        got = ask(s, stream)
        assert got["calls"] == [("get_weather", {"days": 3})]
        assert got["finish"] == "tool_calls" and got.get("error") is None
        assert len(s.upstream.requests) == 1
        assert metric(s, "toolbridge_invalid_arguments_total") == 1


# ---------------------------------------------------------------- reject


def test_reject_whole_is_a_502_naming_the_tool_and_errors_not_retried_by_the_sdk() -> None:
    with Stack(model(), tool_call_parser="hermes", on_invalid="reject") as s:
        with pytest.raises(openai.APIStatusError) as info, \
                openai.OpenAI(base_url=s.url, api_key="sk-test", max_retries=2, timeout=20) as client:
            client.chat.completions.create(model="m", messages=USER, tools=[weather()])
        assert info.value.status_code == 502
        assert info.value.response.headers["x-should-retry"] == "false"
        body = info.value.body
        assert body["code"] == "invalid_tool_arguments" and body["type"] == "upstream_error"
        rejected(info.value)
        assert len(s.upstream.requests) == 1  # neither the gateway nor the SDK asked again
        assert metric(s, "toolbridge_invalid_rejected_total") == 1


def test_reject_streamed_sends_the_text_before_and_nothing_of_the_call() -> None:
    with Stack(model(), tool_call_parser="hermes", on_invalid="reject") as s:
        got = ask(s, stream=True)
        rejected(got["error"])
        assert got["content"] == "Let me check."
        assert got["deltas"] == [] and got["finish"] is None
        assert metric(s, "toolbridge_invalid_rejected_total") == 1


@pytest.mark.parametrize("stream", [False, True])
def test_reject_native_calls(stream: bool) -> None:
    with Stack(model(native=True), tool_call_parser="hermes", on_invalid="reject") as s:
        if stream:
            got = ask(s, stream)
            rejected(got["error"])
            assert got["deltas"] == []
        else:
            with pytest.raises(openai.APIStatusError) as info:
                ask(s, stream)
            rejected(info.value)


@pytest.mark.parametrize("stream", [False, True])
def test_reject_lets_valid_calls_through_whole(stream: bool) -> None:
    lead = "Sure.\n"
    with Stack(lambda body: Reply(content=lead + GOOD + "\nDone.", chunk=3), tool_call_parser="hermes",
               on_invalid="reject") as s:
        got = ask(s, stream)
        assert got["calls"] == [("get_weather", {"city": "Paris", "days": 3})]
        assert got["finish"] == "tool_calls"
        if stream:  # held, then released whole: one delta with its id, name and arguments
            assert got["error"] is None
            assert [(d.id is not None, d.function.name, d.function.arguments) for d in got["deltas"]] == [
                (True, "get_weather", '{"city": "Paris", "days": 3}')]


def test_a_held_call_that_breaks_stays_text_streamed_as_whole() -> None:
    broken = 'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris",, }}\n</tool_call>'
    with Stack(lambda body: Reply(content=broken, chunk=4), tool_call_parser="hermes",
               on_invalid="reject") as s:
        whole, streamed = ask(s, stream=False), ask(s, stream=True)
        assert streamed["error"] is None and streamed["deltas"] == []
        assert whole["content"] == streamed["content"] == broken
        assert whole["finish"] == streamed["finish"] == "length"  # a call that broke after it began


# ---------------------------------------------------------------- retry


@pytest.mark.parametrize("stream", [False, True])
def test_retry_asks_again_with_the_errors_and_returns_the_valid_answer(stream: bool) -> None:
    with Stack(model(), tool_call_parser="hermes", on_invalid="retry") as s:
        got = ask(s, stream)
        assert got["calls"] == [("get_weather", {"city": "Paris", "days": 3})]
        assert got["finish"] == "tool_calls" and got.get("error") is None
        first, second = s.upstream.requests
        assert len(second["messages"]) == len(first["messages"]) + 2
        assistant, result = second["messages"][-2:]
        call = assistant["tool_calls"][0]
        assert call["function"]["name"] == "get_weather"
        assert json.loads(call["function"]["arguments"]) == {"days": 3}
        assert result["tool_call_id"] == call["id"] and MISSING in result["content"]
        assert metric(s, "toolbridge_invalid_retries_total") == 1
        assert metric(s, "toolbridge_invalid_rejected_total") == 0
        if stream:  # nothing of the invalid call reached the client; the text before it did
            assert len(got["deltas"]) == 1 and got["content"] == "Let me check."


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("retries", [0, 1, 2])
def test_retry_is_bounded_and_ends_as_reject(stream: bool, retries: int) -> None:
    with Stack(model(good_after_errors=False), tool_call_parser="hermes", on_invalid="retry",
               retries=retries) as s:
        if stream:
            got = ask(s, stream)
            error = got["error"]
            assert got["deltas"] == []
        else:
            with pytest.raises(openai.APIStatusError) as info:
                ask(s, stream)
            error = info.value
        rejected(error, retries)
        assert len(s.upstream.requests) == 1 + retries
        assert metric(s, "toolbridge_invalid_retries_total") == retries
        assert metric(s, "toolbridge_invalid_rejected_total") == 1


@pytest.mark.parametrize("stream", [False, True])
def test_retry_native_calls(stream: bool) -> None:
    with Stack(model(native=True), tool_call_parser="hermes", on_invalid="retry") as s:
        got = ask(s, stream)
        assert got["calls"] == [("get_weather", {"city": "Paris", "days": 3})]
        assert s.upstream.requests[1]["messages"][-2]["tool_calls"][0]["id"] == "call_n1"


def test_retry_streamed_holds_every_call_so_a_good_one_is_not_sent_twice() -> None:
    first = GOOD + "\n" + BAD

    def script(body: dict[str, Any]) -> Reply:
        return Reply(content=GOOD, chunk=5) if corrected(body) else Reply(content=first, chunk=5)

    with Stack(script, tool_call_parser="hermes", on_invalid="retry") as s:
        got = ask(s, stream=True)
        assert got["calls"] == [("get_weather", {"city": "Paris", "days": 3})]
        assistant, valid, invalid = s.upstream.requests[1]["messages"][-3:]
        assert len(assistant["tool_calls"]) == 2
        assert valid["content"].startswith("Not run") and MISSING in invalid["content"]


@pytest.mark.parametrize("stream", [False, True])
def test_retry_in_the_completions_mode_renders_the_errors_into_the_prompt(tmp_path: Path,
                                                                         stream: bool) -> None:
    def script(body: dict[str, Any]) -> Reply:
        return Reply(content=(GOOD if MISSING in body["prompt"] else BAD) + EOS, chunk=5)

    with text_stack(script, upstream_api="completions", model_dir=model_dir(tmp_path),
                    tool_fallback=True, on_invalid="retry") as s:
        assert ask(s, stream)["calls"] == [("get_weather", {"city": "Paris", "days": 3})]
        assert len(s.upstream.requests) == 2


# ---------------------------------------------------------------- strict


@pytest.mark.parametrize("stream", [False, True])
def test_strict_tool_under_pass_is_rejected(stream: bool) -> None:
    with Stack(model(), tool_call_parser="hermes") as s:
        if stream:
            got = ask(s, stream, tools=[weather(strict=True)])
            rejected(got["error"])
            assert got["deltas"] == [] and got["content"] == "Let me check."
        else:
            with pytest.raises(openai.APIStatusError) as info:
                ask(s, stream, tools=[weather(strict=True)])
            rejected(info.value)
        assert len(s.upstream.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_strict_tool_under_retry_is_retried_and_strict_false_passes(stream: bool) -> None:
    with Stack(model(), tool_call_parser="hermes", on_invalid="retry") as s:
        assert ask(s, stream, tools=[weather(strict=True)])["calls"][0][1] == {"city": "Paris", "days": 3}
    with Stack(model(), tool_call_parser="hermes") as s:
        assert ask(s, stream, tools=[weather(strict=False)])["calls"] == [("get_weather", {"days": 3})]


def test_strict_must_be_a_boolean() -> None:
    tool = weather()
    tool["function"]["strict"] = "yes"
    with Stack(model(), tool_call_parser="hermes") as s:
        with pytest.raises(openai.BadRequestError) as info:
            s.client().chat.completions.create(model="m", messages=USER, tools=[tool])
        assert "strict" in info.value.message


# ---------------------------------------------------------------- configuration


def test_flags_and_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    assert GatewayConfig().on_invalid == "pass" and GatewayConfig().retries == 1
    args = build_parser().parse_args(["serve", "--on-invalid", "retry", "--retries", "2"])
    assert (args.on_invalid, args.retries) == ("retry", 2)
    monkeypatch.setenv("TOOLBRIDGE_ON_INVALID", "reject")
    assert build_parser().parse_args(["serve"]).on_invalid == "reject"
    assert env_defaults({"TOOLBRIDGE_ON_INVALID": "retry", "TOOLBRIDGE_RETRIES": "3"}) == {
        "on_invalid": "retry", "retries": 3}
    for bad in ({"on_invalid": "drop"}, {"retries": -1}, {"retries": 6}):
        with pytest.raises(ConfigError):
            GatewayConfig(upstream="http://127.0.0.1:1/v1", **bad).check()  # type: ignore[arg-type]
