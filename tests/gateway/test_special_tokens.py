"""The special-token path through a real detokeniser.

The test upstream turns model text into token ids with a real byte-level BPE tokenizer (the
``tokenizers`` library) in which GLM's markers are special tokens, and decodes them honouring the
request's ``skip_special_tokens`` (true by default, as common servers do). Straight to that
upstream, a default request loses the markers and with them the call; through toolbridge, which
asks the upstream to keep special tokens for this dialect, the call arrives as ``tool_calls``,
and other special tokens (end of turn) do not leak into content.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from toolbridge.gateway.replay.stack import Stack
from tests.harness import tool
from toolbridge.gateway.replay.upstream import Reply

MARKERS = ["<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
           "<|user|>", "<|endoftext|>"]
OUTPUT = ("Let me check the weather.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
          "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call><|user|>")
TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]


@lru_cache(maxsize=1)
def tokenizer() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=MARKERS, show_progress=False)
    tok.train_from_iterator(["Let me check the weather in Paris for the next days.", "get_weather city days"],
                            trainer)
    return tok


def detokenize(text: str, skip_special_tokens: bool) -> list[str]:
    tok = tokenizer()
    ids = tok.encode(text).ids
    return [tok.decode([i], skip_special_tokens=skip_special_tokens) for i in ids]


def test_markers_are_single_special_tokens() -> None:
    tok = tokenizer()
    ids = tok.encode("<tool_call>get_weather</tool_call>").ids
    assert tok.id_to_token(ids[0]) == "<tool_call>" and tok.id_to_token(ids[-1]) == "</tool_call>"
    assert "".join(detokenize(OUTPUT, False)) == OUTPUT
    assert "<tool_call>" not in "".join(detokenize(OUTPUT, True))


@pytest.mark.parametrize("stream", [False, True])
def test_a_default_request_gets_its_call_through_toolbridge_and_not_without(stream: bool) -> None:
    with Stack(lambda b: Reply(content=OUTPUT), detokenize=detokenize, tool_call_parser="glm47") as s:
        direct = s.direct().chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}],
                                                     tools=TOOLS)
        assert not direct.choices[0].message.tool_calls, "the markers were stripped upstream"
        assert "<tool_call>" not in (direct.choices[0].message.content or "")

        got = s.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}],
                                                  tools=TOOLS, stream=stream)
        if stream:
            chunks = [c for c in got if c.choices]
            content = "".join(c.choices[0].delta.content or "" for c in chunks)
            parts = [p for c in chunks for p in (c.choices[0].delta.tool_calls or [])]
            name = next(p.function.name for p in parts if p.id)
            arguments = "".join(p.function.arguments or "" for p in parts if p.function)
        else:
            message = got.choices[0].message
            content, name = message.content or "", message.tool_calls[0].function.name
            arguments = message.tool_calls[0].function.arguments
        assert (name, json.loads(arguments)) == ("get_weather", {"city": "Paris", "days": 3})
        assert content == "Let me check the weather."  # no marker and no <|user|> leaked
        assert s.upstream.requests[-1]["skip_special_tokens"] is False
