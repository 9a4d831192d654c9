"""The translator's SSE bytes: spliced envelopes give exactly what encoding each chunk object
gives, whatever the chunking, and the chunks follow the wire's shape."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples

from tests.harness import tool
from toolbridge.gateway.fronts.chat import plan_request
from toolbridge.gateway.turn import Settings
from toolbridge.gateway.fronts.chat import StreamTranslator
from toolbridge.openai import assemble

TOOLS = [tool("read_file", path={"type": "string"}, limit={"type": "integer"})]
CALL = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a \\"b\\" \u00e9\\n", "limit": 3}}\n</tool_call>'
TEXT = "Reading it. \n\n" + CALL + "\n" + CALL.replace("3", "4") + "  \n"


def translator(usage: bool, parallel: bool = True) -> StreamTranslator:
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": TOOLS,
            "stream": True, "stream_options": {"include_usage": usage}, "parallel_tool_calls": parallel}
    return StreamTranslator(plan_request(body, Settings(dialect="hermes")))


def upstream(pieces: list[str], fingerprint: bool) -> list[dict[str, Any]]:
    meta: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7, "model": "m"}
    if fingerprint:
        meta["system_fingerprint"] = "fp"
    chunks = [{**meta, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None}]}]
    chunks += [{**meta, "choices": [{"index": 0, "delta": {"content": p}, "logprobs": None,
                                     "finish_reason": None}]} for p in pieces]
    chunks.append({**meta, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if fingerprint:
        chunks.append({**meta, "choices": [], "usage": {"total_tokens": 9}})
    return chunks


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.integers(1, len(TEXT) - 1), max_size=12), st.booleans(), st.booleans(), st.booleans())
def test_spliced_chunks_are_the_encoded_objects(cuts: list[int], usage: bool, fingerprint: bool,
                                                parallel: bool) -> None:
    bounds = [0, *sorted(set(cuts)), len(TEXT)]
    pieces = [TEXT[a:b] for a, b in itertools.pairwise(bounds)]
    tr = translator(usage, parallel)
    events = b"".join([tr.feed_sse(c) for c in upstream(pieces, fingerprint)] + [tr.finish_sse()])
    assert events.endswith(b"\n\n")
    chunks = []
    for event in events[:-2].split(b"\n\n"):
        assert event.startswith(b"data: ")
        chunk = orjson.loads(event[6:])
        assert orjson.dumps(chunk) == event[6:]  # byte for byte what encoding the object gives
        chunks.append(chunk)
    keys = ["id", "object", "created", "model", *(["system_fingerprint"] if fingerprint else []), "choices"]
    for chunk in chunks:
        assert list(chunk)[:len(keys)] == keys and ("usage" in chunk) is usage
    body = [c for c in chunks if c["choices"]]
    assert body[0]["choices"][0]["delta"]["role"] == "assistant"
    assert [c["choices"][0]["finish_reason"] for c in body].count("tool_calls") == 1
    message = assemble([c["choices"][0]["delta"] for c in body])
    calls = [json.loads(c["function"]["arguments"]) for c in message["tool_calls"]]
    assert calls == [{"path": 'a "b" \u00e9\n', "limit": 3}, {"path": 'a "b" \u00e9\n', "limit": 4}][:2 if parallel else 1]
    assert message["content"] == "Reading it."
    assert len({c["id"] for c in message["tool_calls"]}) == len(calls)


def test_feed_gives_the_same_chunks_decoded() -> None:
    tr, twin = translator(True), translator(True)
    chunks = upstream([TEXT[:20], TEXT[20:]], True)
    ids = re.compile(rb'"id":"call_[0-9a-f]{24}"')
    got = [c for chunk in chunks for c in tr.feed(chunk)] + tr.finish()
    raw = b"".join([twin.feed_sse(c) for c in chunks] + [twin.finish_sse()])
    assert [ids.sub(b"", orjson.dumps(c)) for c in got] == [ids.sub(b"", e[6:]) for e in raw[:-2].split(b"\n\n")]
