"""Failures the gateway did not plan for, over real HTTP: a stream that began ends with the SSE
error event (never a cut connection), a whole answer is a JSON error the SDK does not retry, and
each is logged and counted.

The faults are injected where the issue found them: a parser that raises a plain Python
exception (or a ToolBridgeError) on a given character, while feeding or while closing.
"""

from __future__ import annotations

import http.client
import json
import logging
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest

from tests.harness import tool
from toolbridge.errors import ToolBridgeError
from toolbridge.gateway import pipeline, repair, streaming
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.gateway.turn import RequestError
from toolbridge.parsing.parser import StreamParser

TOOLS = [tool("read_file", path={"type": "string"})]
USER = [{"role": "user", "content": "hello"}]
FAULT = "\u00a7"  # the parser fails on this character


class Exploding:
    """A stream parser that raises ``error`` once it has seen FAULT (at once, or at ``close``)."""

    def __init__(self, inner: Any, error: Exception, when: str) -> None:
        self._inner, self._error, self._when = inner, error, when
        self._seen = False

    def feed(self, text: str) -> Any:
        self._seen = self._seen or FAULT in text
        if self._seen and self._when == "feed":
            raise self._error
        return self._inner.feed(text)

    def feed_plain(self, text: str) -> Any:  # (the gateway's way in for plain content)
        self._seen = self._seen or FAULT in text
        if self._seen and self._when == "feed":
            raise self._error
        return self._inner.feed_plain(text)

    def close(self, cut: bool = False) -> Any:
        if self._seen and self._when == "close":
            raise self._error
        return self._inner.close(cut)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def exploding(error: Exception, when: str = "feed") -> Any:
    """A StreamParser factory whose parsers fail as ``Exploding`` says."""
    return lambda *args, **kw: Exploding(StreamParser(*args, **kw), error, when)


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """POST to the gateway; the status, headers and the whole body (chunked decoding checks
    that a stream was ended, not cut: a cut one raises IncompleteRead)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        conn.request("POST", parts.path + "/chat/completions", json.dumps(body),
                     {"content-type": "application/json"})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def metric(url: str, line_start: str) -> int:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=20)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    values = [int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start)]
    return sum(values)


def request(stream: bool) -> dict[str, Any]:
    return {"model": "m", "messages": USER, "tools": TOOLS, "stream": stream}


def sse_events(body: bytes) -> list[Any]:
    return [e[6:] if e[6:] == b"[DONE]" else json.loads(e[6:]) for e in body.split(b"\n\n") if e]


@pytest.mark.parametrize("when", ["feed", "close"])
def test_a_parser_failure_mid_stream_ends_with_the_error_event(monkeypatch: pytest.MonkeyPatch,
                                                                caplog: pytest.LogCaptureFixture,
                                                                when: str) -> None:
    monkeypatch.setattr(streaming, "StreamParser", exploding(ValueError("injected fault"), when))
    caplog.set_level(logging.WARNING, logger="toolbridge.gateway")
    with Stack(lambda b: Reply(content="Some words first, then " + FAULT + " and more.", chunk=4)) as s:
        status, headers, body = post(s.url, request(True))
        assert status == 200 and headers["content-type"] == "text/event-stream"
        events = sse_events(body)
        assert any(e != b"[DONE]" and e.get("choices") for e in events), "the stream had begun"
        error = events[-1]["error"]
        assert error["code"] == "unreadable_answer" and "ValueError: injected fault" in error["message"]
        assert b"[DONE]" not in body
        assert metric(s.url, 'toolbridge_internal_errors_total{stage="stream"}') == 1
        with pytest.raises(openai.APIError, match="could not read the model's answer"):
            list(s.client().chat.completions.create(model="m", messages=USER, tools=TOOLS, stream=True))
    failures = [r for r in caplog.records if "stream failed" in r.getMessage()]
    assert failures and all(r.exc_info for r in failures), "a bug is logged with its traceback"


def test_a_library_error_mid_stream_is_reported_without_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(streaming, "StreamParser", exploding(ToolBridgeError("number too long")))
    caplog.set_level(logging.WARNING, logger="toolbridge.gateway")
    with Stack(lambda b: Reply(content="abcd" * 5 + FAULT, chunk=4)) as s:
        _, _, body = post(s.url, request(True))
        assert "number too long" in sse_events(body)[-1]["error"]["message"]
    failures = [r for r in caplog.records if "stream failed" in r.getMessage()]
    assert failures and not any(r.exc_info for r in failures)


def test_the_upstream_going_silent_mid_stream_ends_with_the_error_event(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolbridge.gateway")
    with Stack(lambda b: Reply(content="a long answer " * 5, chunk=3, pace=2.0), timeout=0.3) as s:
        status, _, body = post(s.url, request(True))
        assert status == 200
        assert "silent" in sse_events(body)[-1]["error"]["message"]
        assert metric(s.url, 'toolbridge_upstream_errors_total{kind="mid_stream"}') == 1
    assert any("silent" in r.getMessage() for r in caplog.records), "the cut is logged"


@pytest.mark.parametrize("error", [ValueError("injected fault"), ToolBridgeError("injected fault")])
def test_a_parser_failure_on_a_whole_answer_is_a_502_not_retried(monkeypatch: pytest.MonkeyPatch,
                                                                 error: Exception) -> None:
    def parse(*args: Any, **kw: Any) -> Any:
        raise error

    monkeypatch.setattr(repair, "parse", parse)
    with Stack(lambda b: Reply(content="anything")) as s:
        status, headers, body = post(s.url, request(False))
        assert (status, headers["content-type"], headers["x-should-retry"]) == (502, "application/json", "false")
        error_body = json.loads(body)["error"]
        assert error_body["code"] == "unreadable_answer" and "injected fault" in error_body["message"]
        assert metric(s.url, 'toolbridge_internal_errors_total{stage="answer"}') == 1
        client = s.client(api_key="k", max_retries=2)
        before = len(s.upstream.requests)
        with pytest.raises(openai.APIStatusError) as err:
            client.chat.completions.create(model="m", messages=USER, tools=TOOLS)
        assert err.value.status_code == 502
        assert len(s.upstream.requests) == before + 1, "the SDK did not retry"


def test_an_unexpected_failure_before_the_answer_is_a_json_500_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def plan_turn(*args: Any) -> Any:
        calls.append(args)
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(pipeline, "plan_turn", plan_turn)
    with Stack(lambda b: Reply(content="x")) as s:
        for stream in (False, True):
            status, headers, body = post(s.url, request(stream))
            assert (status, headers["content-type"], headers["x-should-retry"]) == (500, "application/json", "false")
            error = json.loads(body)["error"]
            assert (error["type"], error["code"]) == ("server_error", "internal_error")
            assert "RecursionError" in error["message"]
        client = s.client(api_key="k", max_retries=2)
        calls.clear()
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="m", messages=USER, tools=TOOLS)
        assert len(calls) == 1, "the SDK did not retry"
        assert metric(s.url, 'toolbridge_internal_errors_total{stage="request"}') == 3
        assert not s.upstream.requests


@pytest.mark.parametrize("error", [ValueError("injected fault"),
                                   RequestError("injected fault", status=502, code="malformed_tool_call")])
def test_a_failure_translating_a_large_event_off_the_loop_ends_with_the_error_event(
        monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    monkeypatch.setattr(streaming, "StreamParser", exploding(error))
    text = "word " * (pipeline.OFFLOOP_BYTES // 4) + FAULT  # one upstream event, read on a worker
    with Stack(lambda b: Reply(content=text, chunk=len(text))) as s:
        status, _, body = post(s.url, request(True))
        assert status == 200
        error_event = sse_events(body)[-1]["error"]
        assert "injected fault" in error_event["message"]
        assert metric(s.url, 'toolbridge_offloaded_total{kind="chunk"}') == 1
