"""The fronts' decoding of a body whose tools they have seen (``fronts.known``, each front's own
``decode``): the tools' text read as the list kept for it, the rest decoded with a number in its
place. Held to what ``orjson.loads`` and ``turn.shallow_body`` give for the same bytes: every value,
every error, every verdict, on bodies made to trip it (the tools key twice, nested, in a string; the
stand-in number already there; invalid JSON around the known text). And over HTTP (the chat,
Messages and Responses SDKs): the same request twice sends the upstream the same body, and a broken
body after a learnt one is refused as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from tests.harness import tool
from toolbridge.gateway.fronts import chat, known
from toolbridge.gateway.fronts.messages import request as messages
from toolbridge.gateway.fronts.responses import request as responses
from toolbridge.gateway.fronts.responses.sealed import Sealer
from toolbridge.gateway.replay.stack import Stack
from toolbridge.gateway.replay.upstream import Reply
from toolbridge.gateway.turn import shallow_body

TOOLS = [tool("read_file", path={"type": "string"}), tool("run", cmd={"type": "string"})]
TEXT = orjson.dumps(TOOLS).decode()
STAND_IN = str(known.STAND_IN)
USER = '{"role":"user","content":"hi"}'
# Each front's tools (the same two, in its own shape), a request with them, and how it is read.
SHAPED = {
    "chat": TOOLS,
    "messages": [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS],
    "responses": [{"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"]}
                  for t in TOOLS],
}
FIRST = {
    "chat": lambda text: f'{{"model":"m","messages":[{USER}],"tools":{text}}}',
    "messages": lambda text: f'{{"model":"m","max_tokens":8,"messages":[{USER}],"tools":{text}}}',
    "responses": lambda text: f'{{"model":"m","input":"hi","tools":{text}}}',
}
TURN: dict[str, Callable[[Any, bytes], Any]] = {
    "chat": lambda body, raw: chat.chat_turn(body, raw),
    "messages": lambda body, raw: messages.messages_turn(body, raw=raw),
    "responses": lambda body, raw: responses.responses_turn(body, None, Sealer(b"k"), None, raw),
}
DECODE = {"chat": chat.decode, "messages": messages.decode, "responses": responses.decode}


def learnt(front: str = "chat") -> str:
    """The front's tools text, known to its ``decode``, as a first request with them makes it."""
    text = orjson.dumps(SHAPED[front]).decode()
    raw = FIRST[front](text).encode()
    TURN[front](orjson.loads(raw), raw)
    return text


def bodies(text: str) -> dict[str, str]:
    return {
        "tools last": f'{{"model":"m","messages":[{USER}],"tools":{text}}}',
        "tools first": f'{{"tools":{text},"model":"m","messages":[{USER}],"tool_choice":"auto"}}',
        "tools twice, the known text first": f'{{"tools":{text},"messages":[{USER}],"tools":[]}}',
        "tools twice, the known text last": f'{{"tools":[],"messages":[{USER}],"tools":{text}}}',
        "the known text nested": f'{{"messages":[{{"role":"user","content":"x","tools":{text}}}],"tools":[]}}',
        "the known text nested, none at the top": f'{{"messages":[{{"role":"user","tools":{text}}}]}}',
        "the key in a string": f'{{"messages":[{{"role":"user","content":"\\"tools\\":{text.replace(chr(34), chr(92) + chr(34))}"}}]}}',
        "the stand-in in the body": f'{{"model":"m","messages":[{USER}],"tools":{text},"seed":{STAND_IN}}}',
        "the stand-in as a string": f'{{"model":"{STAND_IN}","messages":[{USER}],"tools":{text}}}',
        "invalid after the tools": f'{{"model":"m","messages":[{USER}],"tools":{text},}}',
        "invalid before the tools": f'{{"model":"m","messages":[{USER}]"tools":{text}}}',
        "cut inside the tools": f'{{"model":"m","messages":[{USER}],"tools":{text[:-5]}',
        "a longer list that starts alike": f'{{"messages":[{USER}],"tools":{text[:-1]},{{"type":"function"}}]}}',
        "not an object": f'[{text}]',
        "deep messages": '{"messages":' + "[" * 200 + "]" * 200 + f',"tools":{text}}}',
    }


BODIES = bodies(TEXT)


def outcome(decode: Any, raw: bytes) -> Any:
    try:
        return "value", decode(raw)
    except orjson.JSONDecodeError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("front", list(DECODE))
@pytest.mark.parametrize("name", list(BODIES))
def test_a_known_text_decodes_as_the_bytes_do(front: str, name: str) -> None:
    raw = bodies(learnt(front))[name].encode()
    assert outcome(DECODE[front], raw) == outcome(lambda b: (orjson.loads(b), shallow_body(b)), raw)


@pytest.mark.parametrize("front", ["messages", "responses"])
def test_a_kept_list_is_read_for_the_text_it_was_learnt_by(front: str) -> None:
    text = learnt(front)
    value, _ = DECODE[front](FIRST[front](text).encode())
    again, _ = DECODE[front](FIRST[front](text).encode())
    assert value["tools"] == SHAPED[front] and again["tools"] is value["tools"]


def test_the_kept_list_is_what_is_read_and_is_not_encoded_again() -> None:
    learnt()
    value, _ = chat.decode(BODIES["tools first"].encode())
    kept = chat._OFFERED.made(TEXT.encode(), chat._kept, TOOLS, TEXT.encode())
    assert value["tools"] is kept[0]
    assert chat._tools_of(value["tools"]) is kept  # (found by the list itself)


def ask(s: Stack, front: str) -> Any:
    """The front's request with its tools, through its SDK."""
    user = {"role": "user", "content": "hi"}
    if front == "chat":
        return s.client().chat.completions.create(model="m", messages=[user], tools=TOOLS).choices[0].message
    if front == "responses":
        return s.client().responses.create(model="m", input="hi", tools=SHAPED["responses"], store=False).output
    import anthropic

    with anthropic.Anthropic(base_url=s.url.removesuffix("/v1"), api_key="sk-test", max_retries=0, timeout=20) as c:
        return c.messages.create(model="m", max_tokens=8, messages=[user], tools=SHAPED["messages"]).content


@pytest.mark.parametrize("front", list(DECODE))
def test_the_same_request_twice_sends_the_upstream_the_same_body(front: str) -> None:
    with Stack(lambda body: Reply(content="ok")) as s:
        for _ in range(3):
            ask(s, front)
        first, *others = s.upstream.requests
        names = [t["function"]["name"] for t in first["tools"]]
        assert names == ["read_file", "run"] and all(other == first for other in others)


PATHS = {"chat": "/v1/chat/completions", "messages": "/v1/messages", "responses": "/v1/responses"}


@pytest.mark.parametrize("front", list(DECODE))
def test_a_broken_body_after_a_learnt_one_is_refused_as_before(front: str) -> None:
    import http.client

    with Stack(lambda body: Reply(content="ok")) as s:
        ask(s, front)
        assert s.gateway is not None and s.gateway.server is not None
        text = orjson.dumps(SHAPED[front]).decode()
        conn = http.client.HTTPConnection("127.0.0.1", s.gateway.server.port, timeout=30)
        try:
            conn.request("POST", PATHS[front], bodies(text)["invalid after the tools"].encode(),
                         {"content-type": "application/json", "x-api-key": "sk-test"})
            answer = conn.getresponse()
            error = orjson.loads(answer.read())["error"]
        finally:
            conn.close()
        assert answer.status == 400 and error["message"].startswith("the request body is not valid JSON")
        assert len(s.upstream.requests) == 1


# Chat's fields besides the messages, read once per distinct text of them and planned once
# (``chat._HEADS``, ``turn._PLANS``): each request still sends its own messages and fields,
# values equal in Python but not in JSON (1, 1.0, true) read apart.
KEPT_FIELDS = [{"temperature": 1}, {"temperature": 1.0}, {"temperature": True}, {"temperature": 1, "seed": 3},
               {"temperature": 1, "tool_choice": "none"}, {"temperature": 1, "stream_options": None}]


def test_requests_of_kept_fields_send_their_own_messages_and_fields() -> None:
    with Stack(lambda body: Reply(content="ok")) as s:
        sent = []
        for round in range(2):
            for i, fields in enumerate(KEPT_FIELDS):
                messages = [{"role": "user", "content": f"request {round}.{i}"}]
                s.client().chat.completions.create(model="m", messages=messages, tools=TOOLS,  # type: ignore[call-overload]
                                                   extra_body=fields)
                sent.append((messages, fields))
        assert len(s.upstream.requests) == len(sent)
        for body, (messages, fields) in zip(s.upstream.requests, sent):
            assert body["messages"] == messages
            assert "stream_options" not in body
            for key, value in fields.items():
                if value is not None:
                    assert body[key] == value and type(body[key]) is type(value), (key, body)
