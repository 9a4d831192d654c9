"""What the non-streamed request path keeps per process or does once, held to the answers it
gave when it did the work every time: shared Toolsets and strict names, native arguments
decoded once, the counters' keys, header checks, the request log line.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from tests.harness import tool
from toolbridge.gateway import run
from toolbridge.gateway.fronts.chat import chat_turn
from toolbridge.gateway.http.client import UpstreamPool
from toolbridge.gateway.http.server import Request, Response
from toolbridge.gateway.metrics import Metrics
from toolbridge.gateway.repair import Provenance
from toolbridge.gateway.turn import Plan, RequestError, Settings, plan_turn
from toolbridge.gateway.upstream.native import check_calls

USER = [{"role": "user", "content": "hi"}]
SETTINGS = Settings("hermes")


def plan(**body: Any) -> Plan:
    return plan_turn(chat_turn({"model": "m", "messages": USER, **body}), SETTINGS)


def weather(**extra: Any) -> dict[str, Any]:
    out = tool("get_weather", city={"type": "string"})
    out["function"].update(extra)
    return out


def test_equal_tools_share_their_toolset_and_strict_names() -> None:
    first, second = plan(tools=[weather(strict=True)]), plan(tools=[weather(strict=True)])
    assert first.tools is second.tools and first.strict is second.strict == frozenset({"get_weather"})
    assert plan(tools=[weather(strict=False)]).strict == frozenset()


def test_a_bad_strict_flag_is_refused_every_time_and_read_only_when_calls_are_parsed() -> None:
    for _ in range(2):
        with pytest.raises(RequestError, match="'strict' must be a boolean"):
            plan(tools=[weather(strict="yes")])
    assert plan(tools=[weather(strict="yes")], tool_choice="none").tools is None


def test_tools_that_differ_from_a_shared_toolset_are_checked() -> None:
    plan(tools=[weather()])
    with pytest.raises(RequestError, match=r"tools\[1\]: only function tools"):
        plan(tools=[weather(), "get_time"])
    with pytest.raises(RequestError, match=r"tools\[0\]: only function tools"):
        plan(tools=[{"type": "web_search"}])


def test_tools_that_are_not_json_get_the_shape_error_first() -> None:
    turn = chat_turn({"model": "m", "messages": USER, "tools": [weather()]})
    turn.tools = [weather(), {1, 2}]  # from the Python API: no JSON text to share a Toolset by
    with pytest.raises(RequestError, match=r"tools\[1\]: only function tools"):
        plan_turn(turn, SETTINGS)


@pytest.mark.parametrize("arguments, kept, invalid", [
    ({"city": "Rome"}, '{"city": "Rome"}', 0),
    ({"city": 5}, '{"city": 5}', 1),
    ('{"city": "Rome"}', '{"city": "Rome"}', 0),
    ('{"city": 5}', '{"city": 5}', 1),
    (None, "{}", 0),
    ("", "{}", 0),
    ("[1]", None, 0),
    ("{bad", None, 0),
    (7, None, 0),
])
def test_native_arguments_are_kept_checked_or_rejected(arguments: Any, kept: str | None, invalid: int) -> None:
    tools = plan(tools=[weather()]).tools
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    checked = check_calls([call], tools, set())
    if kept is None:
        assert checked.calls == [] and len(checked.rejected) == 1
    else:
        assert checked.calls[0]["function"]["arguments"] == kept and checked.rejected == []
    assert checked.invalid == invalid


def test_counters_render_as_labelled_by_name() -> None:
    metrics = Metrics()
    for _ in range(2):
        metrics.request("/v1/chat/completions", 200)
        metrics.record(Provenance(content=1, invalid=1, repaired=2), "chat")
    metrics.record(Provenance(), "messages")
    text = metrics.render()
    for line in ('toolbridge_requests_total{endpoint="/v1/chat/completions",status="200"} 2',
                 'toolbridge_tool_calls_total{front="chat",source="content"} 2',
                 'toolbridge_invalid_arguments_total{front="chat"} 2',
                 "toolbridge_repaired_total 4"):
        assert line in text.splitlines()
    assert 'front="messages"' not in text


class _Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)


class _Connection:
    closed = False

    def __init__(self) -> None:
        self.transport = _Transport()


@pytest.mark.parametrize("name, value", [(b"x-a", b"1\r\nx-b: 2"), (b"x-a", b"1\n"), (b"x-a", b"\r"),
                                         (b"x-a\n", b"1"), (b"x-a:", b"1"), (b"x\r", b"1")])
def test_a_response_header_with_a_forbidden_byte_is_refused(name: bytes, value: bytes) -> None:
    req = Request("GET", "/health?x=1", "1.1", [(b"host", b"h")], b"", True)
    connection = _Connection()
    with pytest.raises(ValueError, match="invalid response header"):
        Response(connection, req).send(200, [(name, value)], b"{}")  # type: ignore[arg-type]
    assert connection.transport.written == [] and req.path == "/health"


@pytest.mark.parametrize("name, value", [(b"x-a", b"1\r\nx-b: 2"), (b"x-a", b"1\n"), (b"x-a\r", b"1")])
def test_an_upstream_request_header_with_a_forbidden_byte_is_refused(name: bytes, value: bytes) -> None:
    async def send() -> None:
        pool = UpstreamPool("127.0.0.1", 1)
        with pytest.raises(ValueError, match="invalid request header"):
            pool.request("POST", "/v1/chat/completions", [(name, value)], b"{}")
        pool.request("POST", "/v1/chat/completions", [(b"x-a", b"1: fine")], b"{}")  # (a colon in a value is not)

    asyncio.run(send())


@pytest.mark.parametrize("message, args", [
    ("%s %s %d calls[%s] %.1fms", ("POST", "/v1/chat/completions", 200, "native=0; content=1", 1.25)),
    ("no arguments, a literal %%", ()),
    ("%(key)s from a mapping", ({"key": "value"},)),
])
def test_the_log_line_is_the_generic_formatters(message: str, args: tuple[Any, ...]) -> None:
    ours = run._Formatter()
    generic = logging.Formatter(run._Formatter.FORMAT)
    generic.formatTime = ours.formatTime  # type: ignore[method-assign]  # the date, once a second
    record = logging.LogRecord("toolbridge.gateway", logging.INFO, "(unknown file)", 0, message, args, None)
    assert ours.format(record) == generic.format(record)
    assert record.message == record.getMessage() and record.asctime == ours.formatTime(record)
