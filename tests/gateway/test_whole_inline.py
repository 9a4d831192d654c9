"""A large whole answer that reads at C speed (prose, a few calls written plainly) is read on the
event loop, where the thread hop would cost about as much as the reading; any other large answer
(more calls than ``OFFLOOP_PLAIN_CALLS``, a call that is not written plainly) goes to a worker
thread, as before. Over real HTTP on loopback, per dialect: the answer is the same either way
(the one read on the loop first and then given to a worker as well), and the gateway's count
of steps run on a worker (``toolbridge_offloaded_total``) tells where it was read."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.harness import written
from toolbridge.gateway import pipeline
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.parsing.parser import parse

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"},
                                           "n": {"type": "integer"}}, "required": ["path"]}
TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": SCHEMA}}]
BIG = "line of code;\n" * 2000  # 28,000 characters: past OFFLOOP_BYTES
PROSE = "Some words about the code. " * 1000


def answer(dialect: str, kind: str) -> str:
    """The upstream's content: ``prose``, ``call`` (one large call after a sentence), ``many``
    (more plain calls than the loop reads), ``loose`` (a large call written with a slip that
    only the full reading recovers: its close marker left out at the end of the answer)."""
    if kind == "prose":
        return PROSE
    if kind == "many":
        return "".join(written(dialect, "write_file", {"path": f"f{i}", "text": BIG[:1000]})
                       for i in range(pipeline.OFFLOOP_PLAIN_CALLS + 1))
    call = written(dialect, "write_file", {"path": "a.py", "text": BIG, "n": 3})
    return "Writing it.\n" + (call.removesuffix("</tool_call>") if kind == "loose" else call)


@pytest.fixture(scope="module", params=["hermes", "qwen3_coder"])
def gateway(request: pytest.FixtureRequest) -> Iterator[tuple[str, Stack]]:
    dialect = request.param
    with Stack(lambda body: Reply(content=answer(dialect, body["messages"][-1]["content"])),
               tool_call_parser=dialect) as stack:
        yield dialect, stack


def post(url: str, path: str, body: Any = None) -> bytes:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        if body is None:
            conn.request("GET", path)
        else:
            conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        assert response.status == 200, data[:300]
        return data
    finally:
        conn.close()


def offloaded(url: str) -> int:
    text = post(url, "/metrics").decode()
    prefix = 'toolbridge_offloaded_total{kind="whole"}'
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


@pytest.mark.parametrize(("kind", "on_the_loop"), [("prose", True), ("call", True), ("many", False),
                                                   ("loose", False)])
def test_where_a_large_answer_is_read(gateway: tuple[str, Stack], kind: str, on_the_loop: bool) -> None:
    dialect, stack = gateway
    root = stack.url.rsplit("/v1", 1)[0]
    text = answer(dialect, kind)
    assert len(text) > pipeline.OFFLOOP_BYTES
    before = offloaded(root)
    body = {"model": "m", "messages": [{"role": "user", "content": kind}], "tools": TOOLS}
    message = json.loads(post(root, "/v1/chat/completions", body))["choices"][0]["message"]
    assert offloaded(root) - before == (0 if on_the_loop else 1)
    want = parse(text, dialect, TOOLS).message
    assert message["content"] == want["content"]
    got = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or ()]
    assert got == [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in want.get("tool_calls", ())]
    assert len(got) == {"prose": 0, "many": pipeline.OFFLOOP_PLAIN_CALLS + 1}.get(kind, 1)
