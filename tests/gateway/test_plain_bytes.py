"""PlainBytes: a plain-content chunk's content read from its bytes is exactly what decoding the
chunk gives, and anything else is left to the decoder (None)."""

from __future__ import annotations

import json

import orjson
from hypothesis import given, strategies as st

from toolbridge.gateway.plain import PlainBytes, plain_content


def chunk(content: object, *, ascii: bool = True, spaced: bool = False, **extra: object) -> bytes:
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": content}, "logprobs": None,
                         "finish_reason": None, **extra}]}
    seps = (", ", ": ") if spaced else (",", ":")
    return json.dumps(body, ensure_ascii=ascii, separators=seps).encode()


def learnt(raw: bytes) -> PlainBytes:
    plain = PlainBytes()
    plain.learn(raw, orjson.loads(raw))
    return plain


@given(st.text(), st.text(), st.booleans(), st.booleans())
def test_content_read_from_bytes_equals_decoded(first: str, text: str, ascii: bool, spaced: bool) -> None:
    plain = learnt(chunk(first, ascii=ascii, spaced=spaced))
    raw = chunk(text, ascii=ascii, spaced=spaced)
    assert plain.text(raw) == plain_content(orjson.loads(raw)) == text


@given(st.text(max_size=5), st.sampled_from([
    '"a", "x": 1', '"a"}, "x": {"content": "b"', '1', 'null', '["a"]', '"a" "b"', '"unclosed', '',
]))
def test_anything_but_one_string_is_left_to_the_decoder(first: str, middle: str) -> None:
    plain = learnt(chunk(first))
    template = chunk("@@")
    raw = template.replace(b'"@@"', middle.encode())
    assert plain.text(raw) is None


def test_other_envelopes_are_left_to_the_decoder() -> None:
    plain = learnt(chunk("a"))
    assert plain.text(chunk("b", finish_reason="stop")) is None
    assert plain.text(chunk("b").replace(b"chatcmpl-1", b"chatcmpl-2")) is None
    assert plain.text(b"[DONE]") is None


def test_not_learnt_from_a_chunk_with_two_content_keys() -> None:
    raw = chunk("a").replace(b'"logprobs":null', b'"logprobs":{"content":[]}')
    plain = learnt(raw)
    assert plain.text(raw) is None


def test_not_learnt_from_other_chunks_and_gives_up() -> None:
    plain = PlainBytes()
    for _ in range(4):
        raw = chunk("a", finish_reason="stop")
        plain.learn(raw, orjson.loads(raw))
    assert not plain.learning
    assert plain.text(chunk("a")) is None
