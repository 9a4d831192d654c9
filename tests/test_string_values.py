"""String values of raw-value dialects (XML parameters, Gemma's delimited strings) reach the
arguments exactly, however the output is cut: the body hands their JSON-encoded pieces to the
argument typer as string continuations (``CallSink.args(..., string=True)``), which the typer
passes on unread while the string streams, and reads as usual otherwise (a held, enum or
non-string value)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples

from tests.harness import tool
from toolbridge import StreamParser, get_dialect
from toolbridge.parsing.argtyper import ArgumentTyper

RAW = ["qwen3_coder", "glm45", "minimax_m2", "gemma4"]
TOOLS = [tool("note", text={"type": "string"}, mood={"type": "string", "enum": ["calm", 'say "x"']},
              n={"type": "integer"})]
HARD = ['say "hi"', "C:\\dir\\", '\\"', "a\\", '"', "\\\\n", "tab\there", "é ✓ \u2028", "line\nnext"]


def read(dialect: str, text: str, size: int) -> list[dict[str, Any]]:
    parser = StreamParser(dialect, TOOLS)
    events = [e for k in range(0, len(text), size) for e in parser.feed(text[k : k + size])]
    events += parser.close()
    return [json.loads(e.arguments) for e in events if type(e).__name__ == "ToolCallEnd"]


def rendered(dialect: str, arguments: dict[str, Any]) -> str:
    render = get_dialect(dialect).render
    assert render is not None
    return render([("note", arguments)])


@pytest.mark.parametrize("dialect", RAW)
@pytest.mark.parametrize("value", HARD)
def test_hard_strings_arrive_exactly(dialect: str, value: str) -> None:
    arguments = {"text": value, "mood": 'say "x"', "n": 2}
    text = rendered(dialect, arguments)
    for size in (1, 3, 7, len(text)):
        assert read(dialect, text, size) == [arguments], (dialect, value, size)


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(value=st.text(alphabet=st.sampled_from(list('ab "\\\n\t{}<>/=é')), max_size=40),
       dialect=st.sampled_from(RAW), size=st.integers(1, 9))
def test_drawn_strings_arrive_exactly(value: str, dialect: str, size: int) -> None:
    arguments = {"text": value}
    text = rendered(dialect, arguments)
    if value.strip() != value or "<" in value:
        return  # (trimmed or read as markup by design: not this test's subject)
    assert read(dialect, text, size) == [arguments]
    assert read(dialect, text, len(text)) == [arguments]


def typer() -> ArgumentTyper:
    schema = TOOLS[0]["function"]["parameters"]
    return ArgumentTyper(schema, schema, lambda path, what: None)


@pytest.mark.parametrize(("pieces", "strings", "expected"), [
    # a streaming string's continuations pass unread; its closing quote is read as usual
    (['{"text": "', 'say \\"hi\\"', '"', "}"], [1], '{"text": "say \\"hi\\""}'),
    (['{"text": "', "a\\\\", '"', "}"], [1], '{"text": "a\\\\"}'),
    # a held value (an enum) is read as usual, even when given as a continuation
    (['{"mood": "', "calm", '"', "}"], [1], '{"mood": "calm"}'),
    # a continuation after a cut escape is read as usual (the escape is completed first)
    (['{"text": "a\\', 'n b', '"}'], [1], '{"text": "a\\n b"}'),
])
def test_typer_reads_continuations(pieces: list[str], strings: list[int], expected: str) -> None:
    t = typer()
    out = "".join(t.feed_string(p) if i in strings else t.feed(p) for i, p in enumerate(pieces))
    assert out == expected


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet=st.characters(), min_size=0, max_size=600))
def test_encode_string_writes_what_the_standard_encoder_writes(text: str) -> None:
    # (long strings go through orjson where it is installed; lone surrogates, which it refuses, too)
    from toolbridge.syntax.rawvalue import encode_string

    for value in (text, text * (300 // max(1, len(text)) + 1), "x" * 300 + text + "\ud800"):
        assert encode_string(value) == json.dumps(value, ensure_ascii=False)
