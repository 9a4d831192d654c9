"""The Anthropic Messages front, end to end: the official ``anthropic`` SDK -> toolbridge ->
a replaying upstream, over HTTP on loopback. The SDK's own parsing is the judge."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

anthropic = pytest.importorskip("anthropic")

READ = {"name": "read_file", "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
WEATHER = {"name": "get_weather", "input_schema": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}
TOOLS = [READ, WEATHER]
CALLS = {
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
    "qwen3_coder": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                   "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
}
FINAL = "It will be sunny in Paris for 3 days: 20 < t < 25 degrees."
USER = [{"role": "user", "content": "Weather in Paris?"}]
CAPTURES = Path(__file__).resolve().parents[3] / "shared" / "captures"


def agent(call_text: str, chunk: int = 3, reasoning: str | None = None) -> Any:
    """An upstream model: calls the tool, then answers once it sees the tool's result."""
    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content=FINAL, chunk=chunk)
        return Reply(content="Let me check.\n" + call_text, chunk=chunk, reasoning=reasoning)
    return script


def client(s: Stack, **kw: Any) -> Any:
    """An ``anthropic.Anthropic`` client pointed at the gateway (its base URL has no /v1)."""
    kw.setdefault("api_key", "sk-test")
    return anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), max_retries=0, timeout=20, **kw)


def create(s: Stack, messages: list[Any] = USER, **kw: Any) -> Any:
    kw.setdefault("tools", TOOLS)
    with client(s) as c:
        return c.messages.create(model="m", max_tokens=1000, messages=messages, **kw)


def blocks(message: Any) -> list[tuple[str, Any]]:
    """A message's content as (type, payload) pairs: text, thinking, (name, input)."""
    out: list[tuple[str, Any]] = []
    for b in message.content:
        out.append((b.type, b.text if b.type == "text" else b.thinking if b.type == "thinking"
                    else (b.name, b.input)))
    return out


def raw(s: Stack, path: str, body: Any, headers: dict[str, str] | None = None,
        method: str = "POST") -> tuple[int, dict[str, str], Any]:
    """A request without the SDK: status, headers and the decoded body (or text)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(s.url.removesuffix("/v1") + path, data=data, method=method,
                                     headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=20) as r:
            status, head, text = r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        status, head, text = e.code, dict(e.headers), e.read().decode()
    try:
        return status, head, json.loads(text)
    except json.JSONDecodeError:
        return status, head, text


# ---------------------------------------------------------------- the tool loop


@pytest.mark.parametrize("dialect", sorted(CALLS))
def test_two_turn_tool_loop(dialect: str) -> None:
    with Stack(agent(CALLS[dialect]), tool_call_parser=dialect) as s:
        first = create(s)
        assert blocks(first) == [("text", "Let me check."), ("tool_use", ("get_weather", {"city": "Paris", "days": 3}))]
        assert first.stop_reason == "tool_use" and first.stop_sequence is None
        assert first.id.startswith("msg_") and first.type == "message" and first.role == "assistant"
        call = first.content[1]
        assert call.id.startswith("toolu_")
        assert first.usage.input_tokens == 10 and first.usage.output_tokens == 20
        assert first.usage.cache_read_input_tokens == 0 and first.usage.cache_creation_input_tokens == 0
        history = [*USER, {"role": "assistant", "content": first.content},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                 "content": "sunny, 20-25 C"}]}]
        second = create(s, history)
        assert blocks(second) == [("text", FINAL)] and second.stop_reason == "end_turn"
        sent = s.upstream.requests[-1]["messages"]
        upstream_call = sent[-2]["tool_calls"][0]
        assert upstream_call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris","days":3}'}
        assert upstream_call["id"].startswith("call_") and "toolu" not in upstream_call["id"]
        assert sent[-1] == {"role": "tool", "tool_call_id": upstream_call["id"], "content": "sunny, 20-25 C"}


def test_parallel_calls_unknown_tools_and_dotted_names() -> None:
    text = "".join(f'<tool_call>{{"name": "read_file", "arguments": {{"path": "f{i}"}}}}</tool_call>\n'
                   for i in range(3))
    with Stack(lambda b: Reply(content=text), tool_call_parser="hermes") as s:
        got = create(s)
        assert blocks(got) == [("tool_use", ("read_file", {"path": f"f{i}"})) for i in range(3)]
        assert len({b.id for b in got.content}) == 3
        one = create(s, tool_choice={"type": "auto", "disable_parallel_tool_use": True})
        assert blocks(one) == [("tool_use", ("read_file", {"path": "f0"}))]
        assert s.upstream.requests[-1]["parallel_tool_calls"] is False
    unknown = '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>'
    with Stack(lambda b: Reply(content=unknown), tool_call_parser="hermes") as s:
        got = create(s)
        assert blocks(got) == [("text", unknown)] and got.stop_reason == "end_turn"
    dotted = '<tool_call>{"name": "os.fs.read", "arguments": {"path": "/etc/hosts"}}</tool_call>'
    offered = [{"name": "os__fs__read", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    with Stack(lambda b: Reply(content=dotted), tool_call_parser="hermes") as s:
        assert blocks(create(s, tools=offered)) == [("tool_use", ("os__fs__read", {"path": "/etc/hosts"}))]


@pytest.mark.parametrize("dialect", sorted(CALLS))
@pytest.mark.parametrize("path", ["a.py", "é/ü \\ \"q\"\n" * 800, "x" * 9000])
def test_a_whole_answers_input_is_the_value_its_call_was_read_as(dialect: str, path: str) -> None:
    """The tool_use input of a call read from the text (its value from the reading, not
    decoded again) is what its arguments say, short or long, in both families."""
    text = (f'<tool_call>\n{{"name": "read_file", "arguments": {json.dumps({"path": path}, ensure_ascii=False)}}}\n'
            "</tool_call>") if dialect == "hermes" else (
        f"<tool_call>\n<function=read_file>\n<parameter=path>\n{path}\n</parameter>\n</function>\n</tool_call>")
    with Stack(lambda b: Reply(content=text), tool_call_parser=dialect) as s:
        assert blocks(create(s)) == [("tool_use", ("read_file", {"path": path}))]


def test_an_integer_past_64_bits_in_a_call_is_written_as_before() -> None:
    """orjson writes no integer past 64 bits: such an input is decoded again from its text, as
    it was before the reading's value was kept (a number, not a failed answer)."""
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome", "days": 123456789012345678901234567890}}</tool_call>'
    with Stack(lambda b: Reply(content=text), tool_call_parser="hermes") as s:
        status, _, body = raw(s, "/v1/messages", {"model": "m", "max_tokens": 10, "messages": USER,
                                                    "tools": [{**WEATHER, "input_schema": {"type": "object"}}]})
        assert status == 200 and body["content"][0]["input"]["days"] == 1.2345678901234568e+29


def test_native_calls_become_tool_use_blocks_with_ids_the_upstream_gets_back() -> None:
    native = [{"id": "functions.read_file:0", "type": "function",
               "function": {"name": "read_file", "arguments": '{"path": "/a"}'}}]
    with Stack(lambda b: Reply(content="", tool_calls=native, finish_reason="tool_calls"),
               tool_call_parser="hermes") as s:
        first, again = create(s), create(s)
        assert blocks(first) == [("tool_use", ("read_file", {"path": "/a"}))]
        assert first.content[0].id != again.content[0].id, "unique across turns though the upstream repeats"
        history = [*USER, {"role": "assistant", "content": first.content},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[0].id,
                                                 "content": "A"}]}]
        create(s, history)
        sent = s.upstream.requests[-1]["messages"]
        assert sent[-2]["tool_calls"][0]["id"] == sent[-1]["tool_call_id"] == "functions.read_file:0"


def test_a_call_cut_by_the_limit_is_max_tokens_and_no_tool_use() -> None:
    cut = 'Reading.\n<tool_call>{"name": "read_file", "arguments": {"path": "/etc/ho'
    with Stack(lambda b: Reply(content=cut, finish_reason="length"), tool_call_parser="hermes") as s:
        got = create(s)
        assert got.stop_reason == "max_tokens"
        assert [t for t, _ in blocks(got)] == ["text"] and "".join(b.text for b in got.content) == cut


def test_thinking_comes_first_and_the_signature_is_accepted_back() -> None:
    with Stack(agent(CALLS["hermes"], reasoning="The user wants Paris."), tool_call_parser="hermes") as s:
        first = create(s)
        assert blocks(first) == [("thinking", "The user wants Paris."), ("text", "Let me check."),
                                 ("tool_use", ("get_weather", {"city": "Paris", "days": 3}))]
        assert first.content[0].signature
        history = [*USER, {"role": "assistant", "content": first.content},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[2].id,
                                                 "content": "sunny"}]}]
        assert create(s, history).stop_reason == "end_turn"
        assistant = s.upstream.requests[-1]["messages"][-2]
        assert assistant["reasoning_content"] == "The user wants Paris."


def test_stop_sequence_is_reported_when_the_upstream_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge.gateway.replay.upstream as replay

    plain = replay.completion

    def naming(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        out = plain(reply, body)
        out["choices"][0]["stop_reason"] = "END"  # as vLLM names the stop string that matched
        return out

    monkeypatch.setattr(replay, "completion", naming)
    with Stack(lambda b: Reply(content="one two"), tool_call_parser="hermes") as s:
        got = create(s, stop_sequences=["END"])
        assert (got.stop_reason, got.stop_sequence) == ("stop_sequence", "END")
        assert s.upstream.requests[-1]["stop"] == ["END"]


# ---------------------------------------------------------------- the request, translated


def test_the_request_reaches_the_upstream_translated() -> None:
    with Stack(lambda b: Reply(content=CALLS["hermes"]), tool_call_parser="hermes") as s:
        create(s, [{"role": "user", "content": [
                       {"type": "text", "text": "look:", "cache_control": {"type": "ephemeral"}},
                       {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]}],
               system=[{"type": "text", "text": "You are terse."},
                       {"type": "text", "text": "Be kind.", "cache_control": {"type": "ephemeral"}}],
               tool_choice={"type": "any"}, stop_sequences=["\n\nHuman:"], metadata={"user_id": "u-1"},
               thinking={"type": "enabled", "budget_tokens": 500},
               extra_body={"temperature": 0.2, "top_p": 0.9, "top_k": 20})  # no longer SDK arguments
        sent = s.upstream.requests[-1]
        assert sent["messages"] == [
            {"role": "system", "content": "You are terse.\n\nBe kind."},
            {"role": "user", "content": [{"type": "text", "text": "look:"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}]}]
        assert sent["tools"][0] == {"type": "function", "function": {
            "name": "read_file", "description": "Read a file.", "parameters": READ["input_schema"]}}
        assert sent["tool_choice"] == "required" and "parallel_tool_calls" not in sent
        assert (sent["max_tokens"], sent["stop"], sent["temperature"], sent["top_p"], sent["top_k"]) == \
            (1000, ["\n\nHuman:"], 0.2, 0.9, 20)
        assert sent["chat_template_kwargs"] == {"enable_thinking": True, "thinking": True}
        assert sent["reasoning_effort"] == "low" and "metadata" not in sent and "stream" not in sent


def test_tool_choice_tool_and_none_reach_the_upstream() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    with Stack(lambda b: Reply(content=text), tool_call_parser="hermes") as s:
        got = create(s, tool_choice={"type": "tool", "name": "get_weather"})
        assert blocks(got) == [("tool_use", ("get_weather", {"city": "Oslo"}))]
        assert s.upstream.requests[-1]["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
        got = create(s, tool_choice={"type": "none"})
        assert s.upstream.requests[-1]["tool_choice"] == "none" and blocks(got) == [("text", text)]


def test_tool_results_with_errors_blocks_and_images() -> None:
    first = [{"type": "tool_use", "id": "toolu_abc", "name": "read_file", "input": {"path": "a"}},
             {"type": "tool_use", "id": "toolu_def", "name": "read_file", "input": {"path": "b"}}]
    results = [{"type": "tool_result", "tool_use_id": "toolu_abc", "is_error": True, "content": "no such file"},
               {"type": "tool_result", "tool_use_id": "toolu_def", "content": [
                   {"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"},
                   {"type": "image", "source": {"type": "url", "url": "http://x/y.png"}}]},
               {"type": "text", "text": "Go on."}]
    with Stack(lambda b: Reply(content="ok"), tool_call_parser="hermes") as s:
        create(s, [*USER, {"role": "assistant", "content": first}, {"role": "user", "content": results}])
        sent = s.upstream.requests[-1]["messages"]
        assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user"]
        assert sent[1]["content"] is None and [c["id"] for c in sent[1]["tool_calls"]] == ["toolu_abc", "toolu_def"]
        assert sent[2] == {"role": "tool", "tool_call_id": "toolu_abc", "content": "Error: no such file"}
        assert sent[3] == {"role": "tool", "tool_call_id": "toolu_def", "content": "line 1\nline 2"}
        assert sent[4]["content"] == [{"type": "image_url", "image_url": {"url": "http://x/y.png"}},
                                      {"type": "text", "text": "Go on."}]


def test_claude_codes_own_request_is_accepted() -> None:
    path = CAPTURES / "claude-code-2-tool-result.json"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    capture = json.loads(path.read_text())
    body = {**capture["body"], "stream": False}
    headers = {k: v for k, v in capture["headers"].items()
               if k.lower().startswith(("anthropic-", "x-app", "user-agent"))}
    with Stack(lambda b: Reply(content="The first line is banana-42."), tool_call_parser="qwen3_coder") as s:
        status, _, answer = raw(s, capture["path"], body, {**headers, "x-api-key": "k"})
        assert status == 200, answer
        assert answer["content"] == [{"type": "text", "text": "The first line is banana-42."}]
        sent = s.upstream.requests[-1]
        assert sent["messages"][0]["role"] == "system" and "Available agent types" in sent["messages"][0]["content"]
        assert [m["role"] for m in sent["messages"][1:]] == ["user", "assistant", "tool"]
        assert sent["messages"][2]["reasoning_content"] == "Thinking briefly."
        assert len(sent["tools"]) == len(body["tools"]) and "context_management" not in sent
        assert sent["max_tokens"] == 64000 and "chat_template_kwargs" not in sent  # adaptive: the default


# ---------------------------------------------------------------- refusals and errors


@pytest.mark.parametrize("extra, field", [
    ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "tools.0.type"),
    ({"tools": [{"type": "code_execution_20250825", "name": "code_execution"}]}, "tools.0.type"),
    ({"mcp_servers": [{"type": "url", "url": "http://x", "name": "x"}]}, "mcp_servers"),
    ({"container": "c-1"}, "container"),
    ({"messages": [{"role": "user", "content": [{"type": "document", "citations": {"enabled": True},
                                                  "source": {"type": "text", "media_type": "text/plain", "data": "x"}}]}]},
     "messages.0.content.0.citations"),
    ({"max_tokens": None}, "max_tokens"),
    ({"tools": TOOLS, "tool_choice": {"type": "tool", "name": "nope"}}, "tool_choice.name"),
    ({"tools": [{"name": "a.b", "input_schema": {"type": "object"}}]}, "tools.0.name"),
    ({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "?"}]}]},
     "messages.0.content.0.tool_use_id"),
    ({"messages": [*USER, {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file",
                                                             "input": {}}]}, {"role": "user", "content": "?"}]},
     "messages.2"),
    ({"thinking": {"type": "enabled", "budget_tokens": 5000}}, "thinking.budget_tokens"),
])
def test_what_cannot_be_honoured_is_a_400_naming_the_field(extra: dict[str, Any], field: str) -> None:
    with Stack(lambda b: Reply(content="ok"), tool_call_parser="hermes") as s:
        body = {"model": "m", "max_tokens": 1000, "messages": USER, **extra}
        if body["max_tokens"] is None:
            del body["max_tokens"]
        status, _, answer = raw(s, "/v1/messages", body)
        assert status == 400, answer
        assert answer["type"] == "error" and answer["error"]["type"] == "invalid_request_error"
        assert answer["error"]["message"].startswith(field), answer
        assert s.upstream.requests == []
        if "max_tokens" in body:  # the SDK itself asks for it
            rest = {k: v for k, v in body.items() if k not in ("model", "messages", "max_tokens")}
            with client(s) as c, pytest.raises(anthropic.BadRequestError, match=field.replace(".", r"\.")):
                c.messages.create(model="m", max_tokens=1000, messages=body["messages"], extra_body=rest)


def test_errors_come_in_the_apis_shape_with_their_status() -> None:
    def script(body: dict[str, Any]) -> Reply:
        return Reply(status=429, error="slow down")

    with Stack(script, tool_call_parser="hermes", api_key="secret") as s:
        with client(s, api_key="wrong") as c, pytest.raises(anthropic.AuthenticationError) as denied:
            c.messages.create(model="m", max_tokens=10, messages=USER)
        assert denied.value.body == {"type": "error", "error": {"type": "authentication_error",
                                                                "message": "missing or wrong API key"},
                                     "request_id": denied.value.request_id}
        with client(s, api_key="secret") as c, pytest.raises(anthropic.RateLimitError) as limited:
            c.messages.create(model="m", max_tokens=10, messages=USER)
        assert limited.value.body["error"]["message"] == "slow down"
        with anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), auth_token="secret", max_retries=0) as bearer, \
                pytest.raises(anthropic.RateLimitError):
            bearer.messages.create(model="m", max_tokens=10, messages=USER)
        status, _, answer = raw(s, "/v1/messages", None, {"x-api-key": "secret"}, method="GET")
        assert status == 405 and answer["type"] == "error"
        status, _, _ = raw(s, "/", None, method="HEAD")
        assert status == 200, "the probe needs no key"


def test_an_upstream_that_cannot_be_reached_is_an_api_error() -> None:
    with Stack(lambda b: Reply(content="ok"), tool_call_parser="hermes", upstream="http://127.0.0.1:9/v1") as s:
        with pytest.raises(anthropic.APIStatusError) as failed:
            create(s)
        assert failed.value.status_code == 502 and failed.value.body["error"]["type"] == "api_error"
