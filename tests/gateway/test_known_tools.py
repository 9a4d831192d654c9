"""The chat front's decoding of a body whose tools it has seen (``fronts.chat.decode``): the tools'
text read as the list kept for it, the rest decoded with a number in its place. Held to what
``orjson.loads`` and ``turn.shallow_body`` give for the same bytes: every value, every error, every
verdict, on bodies made to trip it (the tools key twice, nested, in a string; the stand-in number
already there; invalid JSON around the known text). And over HTTP: the same request twice sends
the upstream the same body, and a broken body after a learnt one is refused as before.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.harness import tool
from toolbridge.gateway.fronts import chat
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.gateway.turn import shallow_body

TOOLS = [tool("read_file", path={"type": "string"}), tool("run", cmd={"type": "string"})]
TEXT = orjson.dumps(TOOLS).decode()
STAND_IN = str(chat._STAND_IN)
USER = '{"role":"user","content":"hi"}'


def learnt() -> None:
    """The tools' text known to ``decode``, as a first request with them makes it."""
    raw = f'{{"model":"m","messages":[{USER}],"tools":{TEXT}}}'.encode()
    chat.chat_turn(orjson.loads(raw), raw)


BODIES = {
    "tools last": f'{{"model":"m","messages":[{USER}],"tools":{TEXT}}}',
    "tools first": f'{{"tools":{TEXT},"model":"m","messages":[{USER}],"tool_choice":"auto"}}',
    "tools twice, the known text first": f'{{"tools":{TEXT},"messages":[{USER}],"tools":[]}}',
    "tools twice, the known text last": f'{{"tools":[],"messages":[{USER}],"tools":{TEXT}}}',
    "the known text nested": f'{{"messages":[{{"role":"user","content":"x","tools":{TEXT}}}],"tools":[]}}',
    "the known text nested, none at the top": f'{{"messages":[{{"role":"user","tools":{TEXT}}}]}}',
    "the key in a string": f'{{"messages":[{{"role":"user","content":"\\"tools\\":{TEXT.replace(chr(34), chr(92) + chr(34))}"}}]}}',
    "the stand-in in the body": f'{{"model":"m","messages":[{USER}],"tools":{TEXT},"seed":{STAND_IN}}}',
    "the stand-in as a string": f'{{"model":"{STAND_IN}","messages":[{USER}],"tools":{TEXT}}}',
    "invalid after the tools": f'{{"model":"m","messages":[{USER}],"tools":{TEXT},}}',
    "invalid before the tools": f'{{"model":"m","messages":[{USER}]"tools":{TEXT}}}',
    "cut inside the tools": f'{{"model":"m","messages":[{USER}],"tools":{TEXT[:-5]}',
    "a longer list that starts alike": f'{{"messages":[{USER}],"tools":{TEXT[:-1]},{{"type":"function"}}]}}',
    "not an object": f'[{TEXT}]',
    "deep messages": '{"messages":' + "[" * 200 + "]" * 200 + f',"tools":{TEXT}}}',
}


def outcome(decode: Any, raw: bytes) -> Any:
    try:
        return "value", decode(raw)
    except orjson.JSONDecodeError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("name", list(BODIES))
def test_a_known_text_decodes_as_the_bytes_do(name: str) -> None:
    learnt()
    raw = BODIES[name].encode()
    assert outcome(chat.decode, raw) == outcome(lambda b: (orjson.loads(b), shallow_body(b)), raw)


def test_the_kept_list_is_what_is_read_and_is_not_encoded_again() -> None:
    learnt()
    value, _ = chat.decode(BODIES["tools first"].encode())
    kept = chat._OFFERED.made(TEXT.encode(), chat._kept, TOOLS, TEXT.encode())
    assert value["tools"] is kept[0]
    assert chat._tools_of(value["tools"]) is kept  # (found by the list itself)


def test_the_same_request_twice_sends_the_upstream_the_same_body() -> None:
    with Stack(lambda body: Reply(content="ok")) as s:
        client = s.client()
        for _ in range(3):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
        first, *others = s.upstream.requests
        assert first["tools"] == TOOLS and all(other == first for other in others)


def test_a_broken_body_after_a_learnt_one_is_refused_as_before() -> None:
    import http.client

    with Stack(lambda body: Reply(content="ok")) as s:
        s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
        assert s.gateway is not None and s.gateway.server is not None
        conn = http.client.HTTPConnection("127.0.0.1", s.gateway.server.port, timeout=30)
        try:
            conn.request("POST", "/v1/chat/completions", BODIES["invalid after the tools"].encode(),
                         {"content-type": "application/json"})
            answer = conn.getresponse()
            error = orjson.loads(answer.read())["error"]
        finally:
            conn.close()
        assert answer.status == 400 and error["message"].startswith("the request body is not valid JSON")
        assert len(s.upstream.requests) == 1
