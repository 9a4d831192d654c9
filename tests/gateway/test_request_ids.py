"""Every response carries a request id where each SDK reads it (``request-id`` for Messages,
``x-request-id`` for the others), errors and streams included; Messages' error bodies repeat it
as ``request_id``; the access line logs it. The official SDKs' own accessors over real HTTP are
the judges (``_request_id``, ``request_id``)."""

from __future__ import annotations

import logging
import re
import threading
import urllib.request
from typing import Any

import pytest

from tests.gateway.test_messages import TOOLS as MESSAGES_TOOLS
from tests.gateway.test_messages import USER as MESSAGES_USER
from tests.gateway.test_messages import client as messages_client
from tests.gateway.test_responses import TOOLS, USER
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

ID = re.compile(r"req_[0-9A-Za-z]{24}")
CHAT_USER = [{"role": "user", "content": USER}]


@pytest.fixture(scope="module")
def s() -> Any:
    def script(body: dict[str, Any]) -> Reply:
        if body.get("max_tokens") == 1:
            return Reply(status=400, error="max_tokens is too small")
        return Reply(content="Sunny.")

    with Stack(script, tool_call_parser="hermes") as stack:
        yield stack


def test_openai_sdk_reads_an_id_on_every_openai_front(s: Stack) -> None:
    with s.client() as c:
        chat = c.chat.completions.create(model="m", messages=CHAT_USER)
        response = c.responses.create(model="m", input=USER, tools=TOOLS)
        stream = c.chat.completions.create(model="m", messages=CHAT_USER, stream=True)
        list(stream)
        with c.responses.stream(model="m", input=USER) as events:
            list(events)
            streamed = events._response.headers["x-request-id"]  # (the stream's HTTP response)
        models = c.models.with_raw_response.list()
    ids = [chat._request_id, response._request_id, stream.response.headers["x-request-id"], streamed,
           models.request_id]
    assert all(ID.fullmatch(i or "") for i in ids), ids
    assert len(set(ids)) == len(ids), "one id per request"


def test_openai_errors_carry_the_id(s: Stack) -> None:
    with s.client() as c:
        with pytest.raises(openai.BadRequestError) as refused:  # the gateway's own 400
            c.responses.create(model="m", input=USER, tools=[{"type": "code_interpreter"}])
        with pytest.raises(openai.BadRequestError) as passed:  # the upstream's, passed on
            c.chat.completions.create(model="m", messages=CHAT_USER, max_tokens=1)
    assert ID.fullmatch(refused.value.request_id or "") and ID.fullmatch(passed.value.request_id or "")


def test_anthropic_sdk_reads_the_id_and_error_bodies_repeat_it(s: Stack) -> None:
    with messages_client(s) as c:
        message = c.messages.create(model="m", max_tokens=100, messages=MESSAGES_USER, tools=MESSAGES_TOOLS)
        with c.messages.stream(model="m", max_tokens=100, messages=MESSAGES_USER) as events:
            events.get_final_message()
            streamed = events.request_id
        with pytest.raises(anthropic.BadRequestError) as refused:
            c.messages.create(model="m", max_tokens=100, messages=[])
        with pytest.raises(anthropic.BadRequestError) as passed:
            c.messages.create(model="m", max_tokens=1, messages=MESSAGES_USER)
    assert ID.fullmatch(message._request_id or "") and ID.fullmatch(streamed or "")
    for error in (refused.value, passed.value):
        assert ID.fullmatch(error.request_id or "")
        assert error.body["request_id"] == error.request_id
    assert "x-request-id" not in refused.value.response.headers  # (this API's name only)


def test_a_refusal_before_the_route_carries_one_too(s: Stack) -> None:
    with Stack(lambda b: Reply(content="x"), api_key="right") as locked:
        with locked.client(api_key="wrong") as c, pytest.raises(openai.AuthenticationError) as denied:
            c.chat.completions.create(model="m", messages=CHAT_USER)
    assert ID.fullmatch(denied.value.request_id or "")


class AccessLines(logging.Handler):
    """The gateway's access lines starting with ``prefix``, as its thread logs them; ``wait``
    returns once one has come (the line is written just after the response is sent). Attached
    to the gateway's own logger, so another test's logging set-up does not hide it."""

    def __init__(self, prefix: str) -> None:
        super().__init__(logging.INFO)
        self.prefix, self.lines, self.seen = prefix, [], threading.Event()
        self.logger = logging.getLogger("toolbridge.gateway")

    def __enter__(self) -> AccessLines:
        self.level_before = self.logger.level
        self.logger.setLevel(logging.INFO)
        self.logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self)
        self.logger.setLevel(self.level_before)

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.prefix):
            self.lines.append(record.getMessage())
            self.seen.set()

    def wait(self) -> list[str]:
        assert self.seen.wait(20), f"no access line for {self.prefix}"
        return self.lines


def test_the_access_line_logs_it_and_the_clients_own_beside_it(s: Stack) -> None:
    with AccessLines("POST /v1/chat/completions") as log, s.client() as c:
        raw = c.chat.completions.with_raw_response.create(
            model="m", messages=CHAT_USER, extra_headers={"X-Client-Request-Id": "trace-42"})
        lines = log.wait()
    ours = raw.request_id
    assert ID.fullmatch(ours or "") and ours != "trace-42", "the client's id is not taken as ours"
    assert any(ours in line and "client_request_id=trace-42" in line for line in lines), lines


def test_an_unfit_client_id_is_not_logged(s: Stack) -> None:
    request = urllib.request.Request(s.url.removesuffix("/v1") + "/health",
                                     headers={"x-request-id": "a b" + "x" * 200})
    with AccessLines("GET /health") as log:
        with urllib.request.urlopen(request, timeout=20) as r:
            ours = r.headers["x-request-id"]
        lines = log.wait()
    assert ID.fullmatch(ours) and any(ours in line for line in lines)
    assert not any("client_request_id" in line for line in lines)
