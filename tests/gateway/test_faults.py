"""Bad input and faults, end to end over HTTP: every failure gets a clear error, nothing silent."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from toolbridge.gateway.replay.stack import Stack
from tests.harness import tool
from toolbridge.gateway.replay.upstream import Reply

TOOLS = [tool("read_file", path={"type": "string"})]
USER = [{"role": "user", "content": "hello"}]
CALL = '<tool_call>{"name": "read_file", "arguments": {"path": "/a"}}</tool_call>'


def create(client: openai.OpenAI, stream: bool = False, **kw: Any) -> Any:
    kw.setdefault("messages", USER)
    result = client.chat.completions.create(model="m", tools=TOOLS, stream=stream, **kw)
    return list(result) if stream else result


def post(url: str, data: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url + "/chat/completions", data=data,
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_upstream_down_is_502() -> None:
    with Stack(lambda b: Reply(content="x"), upstream="http://127.0.0.1:9/v1") as s:
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as err:
                create(s.client(), stream)
            assert err.value.status_code == 502 and "upstream" in str(err.value)


def test_slow_upstream_is_504() -> None:
    with Stack(lambda b: Reply(content="x", delay=3), timeout=0.3) as s:
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as err:
                create(s.client(), stream)
            assert err.value.status_code == 504


def test_upstream_breaking_mid_stream_ends_with_an_error_event() -> None:
    with Stack(lambda b: Reply(content="a long answer " * 20, chunk=3, cut_after=5)) as s:
        with pytest.raises(openai.APIError, match="upstream"):
            create(s.client(), True)


def test_upstream_errors_pass_through_with_status_and_message() -> None:
    with Stack(lambda b: Reply(status=404, error="model 'm' not found")) as s:
        with pytest.raises(openai.NotFoundError, match="model 'm' not found"):
            create(s.client())


def test_tool_choice_required_without_a_call_is_an_error() -> None:
    with Stack(lambda b: Reply(content="I'd rather chat.")) as s:
        with pytest.raises(openai.APIStatusError) as err:
            create(s.client(), tool_choice="required")
        assert err.value.status_code == 502 and "tool_choice" in str(err.value)
        with pytest.raises(openai.APIError, match="tool_choice"):
            create(s.client(), True, tool_choice="required")


def test_oversized_body_is_413() -> None:
    with Stack(lambda b: Reply(content="x"), max_body=2000) as s:
        with pytest.raises(openai.APIStatusError) as err:
            create(s.client(), messages=[{"role": "user", "content": "x" * 5000}])
        assert err.value.status_code == 413 and "too large" in err.value.message


def test_malformed_requests_are_400_with_a_message() -> None:
    with Stack(lambda b: Reply(content="x")) as s:
        status, body = post(s.url, b"{not json")
        assert status == 400 and "not valid JSON" in body["error"]["message"]
        status, body = post(s.url, json.dumps({"model": "m", "messages": USER, "tools": [{"type": "function"}]}).encode())
        assert status == 400 and body["error"]["param"] == "tools"
        assert not s.upstream.requests, "nothing malformed reaches the upstream"


def test_api_key_is_enforced() -> None:
    with Stack(lambda b: Reply(content="x"), api_key="secret") as s:
        with pytest.raises(openai.AuthenticationError):
            create(s.client(api_key="wrong"))
        assert create(s.client(api_key="secret")).choices[0].message.content == "x"


def test_client_disconnect_closes_the_upstream_request() -> None:
    with Stack(lambda b: Reply(content="word " * 400, chunk=5, pace=0.02)) as s:
        stream = s.client().chat.completions.create(model="m", messages=USER, tools=TOOLS, stream=True)
        for n, _ in enumerate(stream):
            if n == 3:
                break
        stream.close()
        deadline = time.monotonic() + 10
        while not s.upstream.disconnects and time.monotonic() < deadline:
            time.sleep(0.02)  # polling for the upstream to notice, not synchronising on time
        assert s.upstream.disconnects == 1


def test_a_finished_stream_after_a_call_keeps_the_call() -> None:
    with Stack(lambda b: Reply(content=CALL, chunk=2)) as s:
        chunks = create(s.client(), True)
        assert chunks[-1].choices[0].finish_reason == "tool_calls"
