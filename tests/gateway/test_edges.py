"""The gateway's request edges over real HTTP on loopback: malformed shapes and nesting (400, never
500), request line and header limits (414, 431), framing (400, 505), authentication and
``/health``. Raw sockets are the client where the framing is the point; the JSON probes go
through the same sockets so that nothing in a client library tidies them first.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness import tool
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.gateway.turn import MAX_NESTING

USER = [{"role": "user", "content": "hi"}]
TOOLS = [tool("get_weather", city={"type": "string"}), tool("get_time", zone={"type": "string"})]
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'


class Answer:
    """One HTTP response read off a socket: status, lower-case headers, body."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def error(self) -> dict[str, Any]:
        assert self.headers.get("content-type") == "application/json", self.headers
        return self.json()["error"]


def read_answer(sock: socket.socket) -> Answer | None:
    """The next response on ``sock``, or None when the connection ends before one begins."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(65536)
        if not piece:
            assert not data, f"the connection ended inside a response head: {data!r}"
            return None
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    line, *fields = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        piece = sock.recv(65536)
        assert piece, "the connection ended inside a response body"
        body += piece
    return Answer(int(line.split(" ")[1]), headers, body[:length])


def closed(sock: socket.socket) -> bool:
    """True when the server has closed the connection (EOF or reset), nothing more sent."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def send(stack: Stack, data: bytes) -> tuple[Answer | None, socket.socket]:
    """Write ``data`` in one write on a new connection; the first response and the socket."""
    assert stack.gateway is not None and stack.gateway.server is not None
    sock = socket.create_connection(("127.0.0.1", stack.gateway.server.port), timeout=10)
    sock.sendall(data)
    return read_answer(sock), sock


def ask(stack: Stack, data: bytes) -> Answer:
    """``send`` for a response that must come; the connection is closed afterwards."""
    answer, sock = send(stack, data)
    sock.close()
    assert answer is not None, "the connection was closed without a response"
    return answer


def post(body: Any, headers: bytes = b"") -> bytes:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return (b"POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\n"
            b"%bcontent-length: %d\r\n\r\n%b" % (headers, len(raw), raw))


def get(path: str, headers: bytes = b"") -> bytes:
    return b"GET %b HTTP/1.1\r\nhost: gateway\r\n%b\r\n" % (path.encode(), headers)


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": USER, **fields}


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with Stack(lambda body: Reply(content="fine")) as s:
        yield s


def bad_request(stack: Stack, body: Any, param: str, words: str) -> None:
    """``body`` gets a 400 in the OpenAI error shape naming ``param``, and goes nowhere."""
    before = len(stack.upstream.requests)
    answer = ask(stack, post(body))
    assert answer.status == 400, answer.body
    error = answer.error
    assert error["type"] == "invalid_request_error" and error["param"] == param, error
    assert words in error["message"], error
    assert len(stack.upstream.requests) == before, "nothing malformed reaches the upstream"


# ---------------------------------------------------------------- nesting and malformed shapes


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_NESTING, 255, 600, 1_000])
def test_a_body_nested_too_deep_is_a_400_naming_the_field(stack: Stack, depth: int) -> None:
    raw = b'{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":%b}' % nested(depth).encode()
    bad_request(stack, raw, "metadata", f"more than {MAX_NESTING} levels deep")


def test_deep_messages_and_tools_are_400_too(stack: Stack) -> None:
    content = json.loads(nested(600))
    bad_request(stack, chat(messages=[{"role": "user", "content": content}]), "messages", "levels deep")
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(300):
        schema = {"type": "object", "properties": {"a": schema}}
    bad_request(stack, chat(tools=[{"type": "function", "function": {"name": "f", "parameters": schema}}]),
                "tools", "levels deep")


def test_nesting_up_to_the_limit_is_served(stack: Stack) -> None:
    # The body is level 1, "metadata" level 2: MAX_NESTING - 1 arrays reach the limit exactly.
    raw = b'{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":%b}' % nested(MAX_NESTING - 1).encode()
    answer = ask(stack, post(raw))
    assert answer.status == 200 and answer.json()["choices"][0]["message"]["content"] == "fine"


ALLOWED = "tool_choice.allowed_tools"


@pytest.mark.parametrize("choice, param, words", [
    ({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": "x"}]}},
     f"{ALLOWED}.tools[0].function", "must be an object with a 'name'"),
    ({"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "function": "x"}]},
     f"{ALLOWED}.tools[0].function", "must be an object"),
    ({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": ["get_weather"]}},
     f"{ALLOWED}.tools[0]", "must be a function"),
    ({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}, f"{ALLOWED}.tools", "non-empty"),
    ({"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": {"name": "get_weather"}}},
     f"{ALLOWED}.tools", "array"),
    ({"type": "allowed_tools", "allowed_tools": {"mode": ["auto"], "tools": []}}, f"{ALLOWED}.mode", "'auto' or"),
    ({"type": "allowed_tools", "allowed_tools": "auto"}, ALLOWED, "must be an object"),
    ({"type": "allowed_tools", "allowed_tools": {"tools": [{"type": "function", "function": {"name": "nope"}}]}},
     "tool_choice", "not among the offered tools"),
    ({"type": "function", "function": "get_weather"}, "tool_choice.function", "must be an object"),
    ({"type": "function", "function": {"name": ["get_weather"]}}, "tool_choice", "not among the offered"),
    ({"type": ["function"]}, "tool_choice", "must be 'none', 'auto'"),
    (["auto"], "tool_choice", "must be 'none', 'auto'"),
])
def test_malformed_tool_choice_is_a_400_naming_the_field(stack: Stack, choice: Any, param: str, words: str) -> None:
    bad_request(stack, chat(tools=TOOLS, tool_choice=choice), param, words)


@pytest.mark.parametrize("body, param, words", [
    (chat(stop=5), "stop", "string or an array of strings"),
    (chat(stop=["a", 5]), "stop", "string or an array"),
    (chat(stop={"a": "b"}), "stop", "string or an array"),
    (chat(tools={"type": "function"}), "tools", "must be an array"),
    (chat(tools=["get_weather"]), "tools[0]", "only function tools"),
    (chat(tools=[{"type": "function", "function": "get_weather"}]), "tools", "no function name"),
    (chat(tools=[{"type": "function", "function": {"name": "f", "parameters": "x"}}]), "tools", "JSON Schema"),
    (chat(messages=[{"role": 5}]), "messages[0]", "'role'"),
    (chat(messages="hi"), "messages", "non-empty array"),
    (chat(stream="yes"), "stream", "boolean"),
    (chat(parallel_tool_calls="no"), "parallel_tool_calls", "boolean"),
])
def test_other_malformed_fields_are_400s(stack: Stack, body: Any, param: str, words: str) -> None:
    bad_request(stack, body, param, words)


def test_allowed_tools_in_the_chat_completions_shape_limits_the_calls() -> None:
    choice = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "get_time"}}]}}
    with Stack(lambda body: Reply(content=CALL), tool_call_parser="hermes") as s:
        answer = ask(s, post(chat(tools=TOOLS, tool_choice=choice)))
        # get_weather was offered but not allowed: no call, so the required call is missing.
        assert answer.status == 502 and "tool_choice" in answer.error["message"]
        assert s.upstream.requests[-1]["tool_choice"] == choice, "the client's choice goes upstream as sent"
        choice["allowed_tools"]["tools"] = [{"type": "function", "function": {"name": "get_weather"}}]
        answer = ask(s, post(chat(tools=TOOLS, tool_choice=choice)))
        assert answer.status == 200
        call = answer.json()["choices"][0]["message"]["tool_calls"][0]["function"]
        assert call == {"name": "get_weather", "arguments": '{"city": "Rome"}'}


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"city": {"$ref": "#/$defs/nowhere"}}},
    {"type": "object", "$defs": {"c": {"anyOf": [{"$ref": "#/$defs/c"}, {"type": "integer"}]}},
     "properties": {"city": {"$ref": "#/$defs/c"}}},
    {"$schema": ["not a URI"], "type": "object", "properties": {"city": {"type": "string"}}},
])
def test_a_tool_schema_that_cannot_be_applied_does_not_fail_the_answer(schema: dict[str, Any]) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": schema}}]
    xml = "<tool_call><function=get_weather><parameter=city>5</parameter></function></tool_call>"
    for parser, text in (("hermes", CALL), ("qwen3_coder", xml)):
        with Stack(lambda body: Reply(content=text), tool_call_parser=parser) as s:
            answer = ask(s, post(chat(tools=tools)))
            assert answer.status == 200, answer.body
            call = answer.json()["choices"][0]["message"]["tool_calls"][0]["function"]
            assert call["name"] == "get_weather" and "city" in json.loads(call["arguments"])


def test_stream_null_is_stream_false_and_is_not_passed_on(stack: Stack) -> None:
    answer = ask(stack, post(chat(stream=None, stream_options=None)))
    assert answer.status == 200 and answer.json()["object"] == "chat.completion"
    sent = stack.upstream.requests[-1]
    assert "stream" not in sent and "stream_options" not in sent
