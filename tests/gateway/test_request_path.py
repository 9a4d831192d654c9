"""What the non-streamed request path keeps per process or does once, held to the answers it
gave when it did the work every time: shared Toolsets and strict names, native arguments
decoded once, the counters' keys, header checks, the request log line.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from typing import Any

import orjson
import pytest

from tests.harness import tool
from toolbridge.gateway import logline
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


class _Connection:
    """What a ``Response`` writes to: the bytes it would send."""

    closed = False

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def out(self, data: bytes) -> None:
        self.written.append(data)


@pytest.mark.parametrize("name, value", [(b"x-a", b"1\r\nx-b: 2"), (b"x-a", b"1\n"), (b"x-a", b"\r"),
                                         (b"x-a\n", b"1"), (b"x-a:", b"1"), (b"x\r", b"1")])
@pytest.mark.parametrize("before", [[], [(b"content-type", b"a/b")], [(b"x-a", b"fine"), (b"x-b", b"")]])
def test_a_response_header_with_a_forbidden_byte_is_refused(name: bytes, value: bytes,
                                                            before: list[tuple[bytes, bytes]]) -> None:
    """Refused however the fields around it are, and whether its name was sent before (the
    names of fields sent are learnt: their values are still checked)."""
    req = Request("GET", "/health?x=1", "1.1", [(b"host", b"h")], b"", True)
    Response(_Connection(), req).send(200, [*before, (name.strip(b"\r\n:"), b"ok")], b"{}")  # type: ignore[arg-type]
    connection = _Connection()
    with pytest.raises(ValueError, match=re.escape(f"invalid response header {name!r}")):
        Response(connection, req).send(200, [*before, (name, value), *before], b"{}")  # type: ignore[arg-type]
    assert connection.written == [] and req.path == "/health"


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
    ours = logline.Formatter()
    generic = logging.Formatter(logline.Formatter.FORMAT)
    generic.formatTime = ours.formatTime  # type: ignore[method-assign]  # the date, once a second
    record = logging.LogRecord("toolbridge.gateway", logging.INFO, "(unknown file)", 0, message, args, None)
    assert ours.format(record) == generic.format(record)
    assert record.message == record.getMessage() and record.asctime == ours.formatTime(record)


def _near(value: float) -> list[float]:
    return [math.nextafter(value, -math.inf), value, math.nextafter(value, math.inf)]


STAMPED = [  # times stamped one after the other by one formatter
    [1_700_000_000.987654, 1_700_000_000.0, 1_700_000_000.5, 1_700_000_001.25],
    [*_near(1_700_000_001.0), *_near(1_700_000_000.999), *_near(1_700_000_001.0005), 1_700_000_001.0],
    [1_700_000_005.2, 1_700_000_004.9, 1_700_000_005.1, 1_699_999_999.0, 1_800_000_000.001],  # the clock stepped back
    [*_near(1.0), *_near(0.001), 0.0, 5e-324, 0.9999999999999999, 2.0, *_near(2.0 ** 31), 1e10 + 0.25],
    [t / 1000 for t in range(1_700_000_000_000, 1_700_000_002_500, 7)],  # every few milliseconds
]


@pytest.mark.parametrize("times", STAMPED)
def test_a_stamp_is_the_generic_formatters_date_and_milliseconds(times: list[float]) -> None:
    """``stamp`` against ``logging.Formatter.formatTime`` of a record made at the same time
    (its milliseconds as ``LogRecord`` makes them): the same text, the second cached or not."""
    ours, generic = logline.Formatter(), logging.Formatter(logline.Formatter.FORMAT)
    for created in times:
        record = logging.makeLogRecord({})
        record.created, record.msecs = created, int((created - int(created)) * 1000) + 0.0
        assert ours.stamp(created) == ours.formatTime(record) == generic.formatTime(record)


ANSWERS = [  # (endpoint, status, provenance, front)
    ("/v1/chat/completions", 200, Provenance(content=1), "chat"),
    ("/v1/chat/completions", 200, Provenance(content=1), "chat"),  # the same figures again
    ("/v1/chat/completions", 200, Provenance(content=2, repaired=1), "chat"),
    ("/v1/chat/completions", 502, Provenance(), "chat"),
    ("/v1/messages", 200, Provenance(native=1, invalid=1, dialect="hermes"), "messages"),
    ("/v1/messages", 200, Provenance(native=1, invalid=1, dialect="qwen3_coder"), "messages"),
    ("/v1/responses", 200, Provenance(reasoning=1, rejected=2, aborted=1), "responses"),
    ("other", 404, Provenance(), "chat"),
    ("/v1/chat/completions", 200, Provenance(native=40, content=30, repaired=70), "chat"),  # (not kept)
]


@pytest.mark.parametrize("kept", [0, 1, 512])
@pytest.mark.parametrize("read_each", [True, False])
def test_answered_counts_as_request_and_record_do(kept: int, read_each: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbridge.gateway import metrics as metrics_module

    monkeypatch.setattr(metrics_module, "FIGURES_KEPT", kept)  # added at once, after two, or when read
    one_by_one, at_once = Metrics(), Metrics()
    for rounds in range(2):
        for endpoint, status, provenance, front in ANSWERS:
            one_by_one.request(endpoint, status)
            one_by_one.record(provenance, front)
            at_once.answered(endpoint, status, provenance, front)
            at_once.inc("toolbridge_offloaded_total", kind="whole")  # (other counters meanwhile)
            one_by_one.inc("toolbridge_offloaded_total", kind="whole")
            assert len(at_once._answers) <= max(kept, 1)
            if read_each:
                assert at_once.counters == one_by_one.counters
        assert at_once.render() == one_by_one.render()
    assert at_once.counters == one_by_one.counters and not at_once._answers


def _records() -> list[logging.LogRecord]:
    def record(message: str, args: tuple[Any, ...], exc_info: Any = None) -> logging.LogRecord:
        return logging.LogRecord("toolbridge.gateway", logging.INFO, "(unknown file)", 0, message,
                                 args, exc_info)

    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failed = record("request failed: %s", ("x",), sys.exc_info())
    return [record("%s %s %d calls[%s] %.1fms", ("POST", "/v1/chat/completions", 200, "content=1", 1.25)),
            record("no arguments", ()), record("päth %s", ("ünïcode",)), failed]


def test_the_line_handler_writes_what_the_stream_handler_does() -> None:
    import io

    streams = io.StringIO(), io.StringIO()
    ours, generic = logline.LineHandler(streams[0]), logging.StreamHandler(streams[1])
    for handler in (ours, generic):
        handler.setFormatter(logline.Formatter())
    for record in _records():
        ours.handle(record)
        generic.handle(record)
        assert streams[0].getvalue() == streams[1].getvalue()
    assert "Traceback" in streams[0].getvalue()


def test_the_line_handler_flushes_each_line() -> None:
    class Stream:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def write(self, text: str) -> None:
            self.calls.append("write")

        def flush(self) -> None:
            self.calls.append("flush")

    stream = Stream()
    handler = logline.LineHandler(stream)
    for record in _records()[:2]:
        handler.handle(record)
    assert stream.calls == ["write", "flush", "write", "flush"]


class _CountingStream:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.text = ""

    def write(self, text: str) -> None:
        self.calls.append("write")
        self.text += text

    def flush(self) -> None:
        self.calls.append("flush")


def test_on_the_loop_a_turns_lines_are_written_together_at_the_next_turn() -> None:
    import asyncio
    import io

    stream, reference = _CountingStream(), io.StringIO()
    handler, generic = logline.LineHandler(stream), logging.StreamHandler(reference)
    for h in (handler, generic):
        h.setFormatter(logline.Formatter())

    async def turns() -> None:
        for record in _records():  # one turn of the loop finishes several requests
            handler.handle(record)
            generic.handle(record)
        assert stream.calls == []  # nothing written yet: one write is scheduled
        await asyncio.sleep(0)
        assert stream.calls == ["write", "flush"] and stream.text == reference.getvalue()
        handler.handle(_records()[1])
        handler.flush()  # a flush (at exit too) writes what waits, at once
        assert stream.calls == ["write", "flush"] * 2
        await asyncio.sleep(0)  # the scheduled write then finds nothing left
        assert stream.calls == ["write", "flush"] * 2 + ["flush"]

    asyncio.run(turns())


@pytest.mark.parametrize("keep", [True, False])
def test_the_line_handler_applies_its_filters_as_the_stream_handler_does(keep: bool) -> None:
    import io

    streams = io.StringIO(), io.StringIO()
    ours, generic = logline.LineHandler(streams[0]), logging.StreamHandler(streams[1])
    for handler in (ours, generic):
        handler.setFormatter(logline.Formatter())
        handler.addFilter(lambda record: keep)
    for record in _records():
        assert bool(ours.handle(record)) == bool(generic.handle(record)) == keep
    assert streams[0].getvalue() == streams[1].getvalue() and bool(streams[0].getvalue()) == keep


ACCESS = ("%s %s %d %s calls[%s] %.1fms%s", "POST", "/v1/chat/completions", 200, "req_x", "content=1", 1.25, "")


def _configured(stream: Any, name: str) -> tuple[logging.Logger, logging.Handler]:
    """A logger of its own under a root-like parent holding one LineHandler, as ``run`` configures."""
    parent = logging.Logger(name + "-root")  # (not in the manager: the test's own hierarchy)
    handler = logline.LineHandler(stream)
    handler.setFormatter(logline.Formatter())
    parent.addHandler(handler)
    child = logging.Logger(name)
    child.parent = parent
    child.setLevel(logging.INFO)
    return child, handler


@pytest.mark.parametrize("args", [ACCESS, ("no arguments, a literal %%",), ("%(key)s from a mapping", {"key": "v"}),
                                  ("päth %s", "ünïcode")])
def test_the_access_line_is_what_the_record_writes(args: tuple[Any, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import time

    from toolbridge.gateway.logline import access

    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.987654)  # the record's clock and the line's
    direct, generic = io.StringIO(), io.StringIO()
    logger, _ = _configured(direct, "toolbridge.gateway")
    access(logger, *args)
    logger, handler = _configured(generic, "toolbridge.gateway")
    handler.addFilter(lambda record: True)  # a filter: the record is made and handled
    access(logger, *args)
    assert direct.getvalue() == generic.getvalue() and direct.getvalue().endswith("\n")
    assert ",987 toolbridge.gateway POST" in direct.getvalue() or args != ACCESS


def test_the_access_line_takes_the_generic_path_for_any_other_configuration() -> None:
    import io

    from toolbridge.gateway.logline import access

    seen: list[logging.LogRecord] = []
    logger, handler = _configured(io.StringIO(), "a")
    handler.addFilter(lambda record: bool(seen.append(record)) or True)  # a handler's filter sees it
    access(logger, *ACCESS)
    logger, _ = _configured(io.StringIO(), "b")
    logger.addFilter(lambda record: bool(seen.append(record)))  # the logger's own filter drops it
    access(logger, *ACCESS)
    logger, _ = _configured(io.StringIO(), "c")
    other = logging.Handler()
    other.handle = lambda record: bool(seen.append(record))  # type: ignore[method-assign]
    logger.addHandler(other)  # a second handler
    access(logger, *ACCESS)
    assert [r.name for r in seen] == ["a", "b", "c"]
    assert {r.getMessage() for r in seen} == {ACCESS[0] % ACCESS[1:]}
    stream = io.StringIO()
    logger, _ = _configured(stream, "d")
    logger.setLevel(logging.WARNING)  # a level that leaves INFO out: nothing
    access(logger, *ACCESS)
    assert stream.getvalue() == ""


def test_a_failed_access_line_is_reported_as_a_failed_record_is(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbridge.gateway.logline import access

    class Broken:
        def write(self, text: str) -> None:
            raise OSError("closed")

        def flush(self) -> None:
            pass

    reported: list[logging.LogRecord] = []
    logger, handler = _configured(Broken(), "e")
    monkeypatch.setattr(handler, "handleError", reported.append)
    access(logger, *ACCESS)  # (no loop running: written at once, and the write fails)
    assert [r.getMessage() for r in reported] == [ACCESS[0] % ACCESS[1:]]


ABSENT = object()


@pytest.mark.parametrize("stream", [ABSENT, None, True, False])
@pytest.mark.parametrize("stream_options", [ABSENT, None, {"include_usage": True}, {}])
def test_a_null_stream_field_is_left_out_and_any_other_passed_on(stream: Any, stream_options: Any) -> None:
    body: dict[str, Any] = {"model": "m", "messages": USER, "tools": [weather()], "temperature": 0}
    for key, value in (("stream", stream), ("stream_options", stream_options)):
        if value is not ABSENT:
            body[key] = value
    expected = {k: v for k, v in body.items()
                if k not in ("messages", "tools") and not (k.startswith("stream") and v is None)}
    turn = chat_turn(body)
    assert turn.options == expected and list(turn.options) == list(expected)
    usage = stream_options not in (ABSENT, None) and bool(stream_options)
    assert turn.stream is (stream is True) and turn.include_usage is usage


@pytest.mark.parametrize("tools, custom", [
    (None, False), ([], False), ("x", False), ([weather()], False), ([weather(), "odd"], False),
    ([weather(), {"type": "custom", "custom": {"name": "patch"}}], True),
    ([{"type": "custom", "custom": {"name": "patch"}}], True),
])
def test_custom_tools_are_found_wherever_they_are(tools: Any, custom: bool) -> None:
    from toolbridge.gateway.fronts.chat import _custom_tools

    out, freeforms = _custom_tools(tools)
    assert bool(freeforms) == custom and (out is tools) == (not custom)


def test_equal_responses_tools_are_converted_once_and_a_refused_list_each_time() -> None:
    import copy

    from toolbridge.gateway.fronts.responses import request as responses_request

    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
             {"type": "custom", "name": "apply_patch", "description": "a patch"},
             {"type": "namespace", "name": "fs", "tools": [{"type": "function", "name": "read"}]}]
    first = responses_request._tools_of(copy.deepcopy(tools), [])
    assert responses_request._tools_of(copy.deepcopy(tools), []) is first  # the same list: made once
    made = responses_request._tools(tools, [])
    assert first == (made, responses_request._repeated(tools), orjson.dumps(made[0]),  # with its text
                     responses_request._names(made[2]))
    additional = [("input[0].tools[0]", {"type": "function", "name": "more"})]
    assert responses_request._tools_of(tools, additional) is not responses_request._tools_of(tools, additional)
    for _ in range(2):  # never kept: refused every time
        with pytest.raises(RequestError, match="file_search"):
            responses_request._tools_of([{"type": "file_search"}], [])


def test_equal_messages_tools_are_converted_once_and_a_refused_list_each_time() -> None:
    import copy

    from toolbridge.gateway.fronts.messages import request as messages_request

    tools = [{"name": "get_weather", "description": "the weather", "input_schema": {"type": "object"}},
             {"name": "apply", "input_schema": {"type": "object"}, "strict": True}]
    first = messages_request._tools_of(copy.deepcopy(tools))
    assert messages_request._tools_of(copy.deepcopy(tools)) is first  # the same list: made once
    made = messages_request._tools(tools)
    assert first == (made, orjson.dumps(made), messages_request._schema_paths(made))  # with its text
    for _ in range(2):  # never kept: refused every time
        with pytest.raises(RequestError, match="tools.0.name"):
            messages_request._tools_of([{"name": "", "input_schema": {"type": "object"}}])


@pytest.mark.parametrize("text", ["plain", "ünï \u2028 text", ""])
def test_a_messages_string_content_is_what_its_one_text_block_makes(text: str) -> None:
    from toolbridge.gateway.fronts.messages import request as messages_request

    def conversation(content: Any) -> list[dict[str, Any]]:
        return messages_request._messages([{"role": "user", "content": content or "u"},
                                           {"role": "assistant", "content": content}])[0]

    as_blocks = conversation([{"type": "text", "text": text}] if text else [])
    assert conversation(text) == as_blocks
    assert as_blocks[-1] == {"role": "assistant", "content": text}
    used = [{"role": "user", "content": "u"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}]
    with pytest.raises(RequestError, match="messages.2: tool_use ids were found without tool_result"):
        messages_request._messages([*used, {"role": "user", "content": "no result"}])


@pytest.mark.parametrize("tools", [None, [{"type": "function", "function": {"name": "f", "parameters": {}}}]])
def test_a_plan_has_every_field_set_in_its_order(tools: Any) -> None:
    from dataclasses import fields

    from toolbridge.gateway.turn import Plan, Settings, plan_turn

    body = {"messages": [{"role": "user", "content": "hi"}], **({"tools": tools} if tools else {})}
    plan = plan_turn(chat_turn(body), Settings("hermes"))
    assert list(vars(plan)) == [f.name for f in fields(Plan)]  # (made field by field: none left out)
