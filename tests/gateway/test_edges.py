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

import openai
import pytest

from tests.harness import tool
from toolbridge.gateway.http.server import Limits
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


class Connection:
    """A raw client connection to the gateway, reading responses off a buffer."""

    def __init__(self, stack: Stack) -> None:
        assert stack.gateway is not None and stack.gateway.server is not None
        self.sock = socket.create_connection(("127.0.0.1", stack.gateway.server.port), timeout=10)
        self._buffer = b""

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def write(self, data: bytes, pieces: int = 1) -> None:
        """Write ``data`` in ``pieces`` writes (a server that refuses early may reset the rest)."""
        size = -(-len(data) // pieces)
        try:
            for at in range(0, len(data), size):
                self.sock.sendall(data[at:at + size])
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the last piece; the answer is already on its way

    def _read(self) -> bytes:
        try:
            return self.sock.recv(65536)
        except ConnectionResetError:
            return b""

    def answer(self) -> Answer | None:
        """The next response, or None when the connection ends before one begins."""
        while b"\r\n\r\n" not in self._buffer:
            piece = self._read()
            if not piece:
                assert not self._buffer, f"the connection ended inside a response head: {self._buffer!r}"
                return None
            self._buffer += piece
        head, _, rest = self._buffer.partition(b"\r\n\r\n")
        line, *fields = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            piece = self._read()
            assert piece, "the connection ended inside a response body"
            rest += piece
        self._buffer = rest[length:]
        return Answer(int(line.split(" ")[1]), headers, rest[:length])

    def closed(self) -> bool:
        """True when the server has closed the connection (EOF or reset) and sent nothing more."""
        return not self._buffer and self._read() == b""


def ask(stack: Stack, data: bytes) -> Answer:
    """Write ``data`` in one write on a new connection; its response, which must come."""
    with Connection(stack) as conn:
        conn.write(data)
        answer = conn.answer()
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
    """``body`` gets a 400 in the OpenAI error shape naming ``param`` (a path ending in ``...``:
    one that begins so), and goes nowhere."""
    before = len(stack.upstream.requests)
    answer = ask(stack, post(body))
    assert answer.status == 400, answer.body
    error = answer.error
    named = error["param"].startswith(param[:-3]) if param.endswith("...") else error["param"] == param
    assert error["type"] == "invalid_request_error" and named, error
    assert words in error["message"], error
    assert len(stack.upstream.requests) == before, "nothing malformed reaches the upstream"


# ---------------------------------------------------------------- nesting and malformed shapes


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_NESTING, 255, 600, 1_000])
def test_a_body_nested_too_deep_is_a_400_naming_the_field(stack: Stack, depth: int) -> None:
    raw = b'{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":%b}' % nested(depth).encode()
    bad_request(stack, raw, "metadata[0][0][0][0][0][0][0]", f"more than {MAX_NESTING} levels deep")


def test_deep_messages_and_tools_are_400_too(stack: Stack) -> None:
    content = json.loads(nested(600))
    bad_request(stack, chat(messages=[{"role": "user", "content": content}]), "messages[0].content[0]...",
                "levels deep")
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(300):
        schema = {"type": "object", "properties": {"a": schema}}
    bad_request(stack, chat(tools=[{"type": "function", "function": {"name": "f", "parameters": schema}}]),
                "tools[0].function.parameters.properties.a.properties...", "levels deep")


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


# ---------------------------------------------------------------- request line and header limits

LIMITS = Limits()


def refused(stack: Stack, data: bytes, status: int, words: str, pieces: int = 1) -> None:
    """``data``, written in ``pieces`` writes, gets ``status`` in the OpenAI error shape, and the
    connection is closed after it."""
    with Connection(stack) as conn:
        conn.write(data, pieces)
        answer = conn.answer()
        assert answer is not None, "the connection was closed without a response"
        assert answer.status == status, answer.body
        assert words in answer.error["message"] and answer.error["code"] == str(status), answer.error
        assert answer.headers["connection"] == "close" and conn.closed()
        assert answer.headers["x-request-id"].startswith("req_"), answer.headers  # as every answer
        assert answer.headers.get("x-should-retry") == ("false" if status >= 500 else None), answer.headers


def headers(count: int, size: int = 10) -> bytes:
    return b"".join(b"x-h%d: %b\r\n" % (i, b"v" * size) for i in range(count))


@pytest.mark.parametrize("pieces", [1, 40])
def test_a_long_request_target_is_414_however_it_arrives(stack: Stack, pieces: int) -> None:
    refused(stack, get("/health?" + "a" * 100_000), 414, "too long", pieces)
    refused(stack, get("/health?" + "a" * LIMITS.max_target), 414, "too long", pieces)


@pytest.mark.parametrize("pieces", [1, 40])
def test_a_large_head_is_431_however_it_arrives(stack: Stack, pieces: int) -> None:
    refused(stack, get("/health", b"x-big: " + b"a" * 70_000 + b"\r\n"), 431, "too large", pieces)
    refused(stack, get("/health", headers(10_000)), 431, "too many header fields", pieces)
    few_but_large = headers(LIMITS.max_headers // 2, LIMITS.max_head // (LIMITS.max_headers // 2))
    refused(stack, get("/health", few_but_large), 431, "too large", pieces)


def test_requests_within_the_limits_are_served(stack: Stack) -> None:
    path = "/health?" + "a" * (LIMITS.max_target - len("/health?"))
    assert ask(stack, get(path)).status == 200
    many = headers(LIMITS.max_headers - 1)  # and host: the limit exactly
    assert ask(stack, get("/health", many)).status == 200
    refused(stack, get("/health", headers(LIMITS.max_headers)), 431, "too many header fields")
    large = headers(4, (LIMITS.max_head - 1_000) // 4)
    assert ask(stack, get("/health", large)).status == 200


def test_limits_state_their_defaults() -> None:
    assert (LIMITS.max_target, LIMITS.max_head, LIMITS.max_headers) == (8 << 10, 64 << 10, 100)
    assert LIMITS.max_body == 8 << 20 and Limits.__doc__ is not None and "414" in Limits.__doc__


# ---------------------------------------------------------------- framing


@pytest.mark.parametrize("data, status, words", [
    (b"GET /health\r\n\r\n", 400, "no HTTP version"),
    (b"GET /health HTTP/1.1\r\n\r\n", 400, "exactly one Host"),
    (b"GET /health HTTP/1.1\r\nhost: a\r\nhost: b\r\n\r\n", 400, "exactly one Host"),
    (b"GET /health HTTP/2.0\r\nhost: a\r\n\r\n", 505, "HTTP/1.1"),
    # An upgrade anywhere but GET /v1/responses: 426, which clients (Codex) take as "use HTTP".
    (get("/health", b"connection: upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\n"
                    b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"), 426, "not served over an upgraded"),
    (get("/health", b"connection: upgrade, http2-settings\r\nupgrade: h2c\r\nhttp2-settings: AAMAAABkAAQAAP__\r\n"),
     426, "not served over an upgraded"),
    (b"CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n", 400, "CONNECT is not served"),
])
def test_malformed_framing_gets_a_response_then_close(stack: Stack, data: bytes, status: int, words: str) -> None:
    refused(stack, data, status, words)


def test_http_1_0_needs_no_host(stack: Stack) -> None:
    answer = ask(stack, b"GET /health HTTP/1.0\r\n\r\n")
    assert answer.status == 200 and answer.json() == {"status": "ok", "store": STORE}


def test_a_refused_request_is_answered_after_the_ones_before_it(stack: Stack) -> None:
    """Pipelined in one write: the good request is answered in full, then the refusal, then the
    connection closes; the request pipelined after the refused one is never run."""
    upgrade = get("/health", b"connection: upgrade\r\nupgrade: websocket\r\n")
    before = len(stack.upstream.requests)
    with Connection(stack) as conn:
        conn.write(post(chat()) + upgrade + post(chat()))
        first = conn.answer()
        assert first is not None and first.status == 200 and first.json()["object"] == "chat.completion"
        second = conn.answer()
        assert second is not None and second.status == 426 and "upgraded" in second.error["message"]
        assert conn.closed()
    assert len(stack.upstream.requests) == before + 1


# ---------------------------------------------------------------- authentication and /health


@pytest.fixture(scope="module")
def keyed() -> Iterator[Stack]:
    with Stack(lambda body: Reply(content="fine"), api_key="secret-key") as s:
        yield s


@pytest.mark.parametrize("credential", [b"Bearer secret-key", b"bearer secret-key", b"BEARER  secret-key"])
def test_the_bearer_scheme_is_case_insensitive(keyed: Stack, credential: bytes) -> None:
    answer = ask(keyed, post(chat(), b"authorization: %b\r\n" % credential))
    assert answer.status == 200 and answer.json()["choices"][0]["message"]["content"] == "fine"


def test_the_openai_sdk_and_x_api_key_are_accepted(keyed: Stack) -> None:
    reply = keyed.client(api_key="secret-key").chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "fine"
    assert ask(keyed, get("/v1/models", b"x-api-key: secret-key\r\n")).status == 200


@pytest.mark.parametrize("credential", [b"", b"authorization: Bearer wrong\r\n", b"authorization: Basic secret-key\r\n",
                                        b"authorization: secret-key\r\n", b"x-api-key: secret\r\n"])
@pytest.mark.parametrize("request_of", [lambda h: post(chat(), h), lambda h: get("/v1/models", h),
                                        lambda h: get("/metrics", h), lambda h: get("/no/such/path", h),
                                        lambda h: b"DELETE /v1/chat/completions HTTP/1.1\r\nhost: g\r\n%b\r\n" % h])
def test_without_the_key_every_path_but_health_is_401(keyed: Stack, credential: bytes, request_of: Any) -> None:
    before = len(keyed.upstream.requests)
    answer = ask(keyed, request_of(credential))
    assert answer.status == 401 and answer.error["code"] == "invalid_api_key", answer.body
    assert len(keyed.upstream.requests) == before


def test_with_the_key_unknown_paths_are_404_and_405(keyed: Stack) -> None:
    key = b"authorization: Bearer secret-key\r\n"
    assert ask(keyed, get("/no/such/path", key)).status == 404
    assert ask(keyed, get("/v1/chat/completions", key)).status == 405


STORE = {"backend": "memory", "up": True}  # what anyone is told of the store (``gateway/state``)


def test_health_tells_details_only_to_the_key(keyed: Stack, stack: Stack) -> None:
    assert ask(keyed, get("/health")).json() == {"status": "ok", "store": STORE}
    assert ask(keyed, get("/health", b"authorization: Bearer wrong\r\n")).json() == {"status": "ok", "store": STORE}
    full = ask(keyed, get("/health", b"authorization: Bearer secret-key\r\n")).json()
    assert full == {"status": "ok", "upstream": keyed.upstream.url, "tool_call_parser": "auto",
                    "store": {**STORE, "name": "memory"}}
    assert ask(stack, get("/health")).json() == {"status": "ok", "store": STORE}, "no key configured: nothing to tell"


def test_the_limit_flags_reach_the_server_and_the_upstream_reads() -> None:
    """--max-url, --max-headers, --max-header-bytes, --max-answer and --max-event, set small."""
    big = CALL + " " * 300_000  # one event, larger than a socket read
    with Stack(lambda body: Reply(content=big, chunk=len(big)), max_url=200,
               max_header_bytes=2_000, max_answer=4_000, max_event=100_000, max_headers=30) as s:
        refused(s, get("/health?" + "a" * 300), 414, "too long")
        refused(s, get("/health", headers(31)), 431, "too many header fields")
        refused(s, get("/health", headers(3, 900)), 431, "too large")
        whole = ask(s, post(chat(tools=TOOLS)))
        assert whole.status == 502 and "larger than 4000 bytes" in whole.error["message"], whole.body
        client = s.client(api_key="k")
        with pytest.raises(openai.APIError, match="larger than 100000 bytes"):
            for _ in client.chat.completions.create(model="m", messages=USER, tools=TOOLS, stream=True):
                pass
