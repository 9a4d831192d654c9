"""``StreamParser.feed_plain``, the gateway's way in for a delta of plain content: where it takes a
delta, ``feed`` would have given exactly ``[Text(delta)]``; where it declines, nothing was read.
So a stream read by ``feed_plain`` first, ``feed`` when it declines, gives the events of ``feed``
alone, for every dialect, pinned and under ``auto``, however the output is cut."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.budget import examples

from tests.corpus_run import ALIASES, DEFAULT_CORPUS, load, offered, options_for, text_for
from tests.harness import split
from tests.test_block_opens import PAIRS, blocks
from tests.test_properties import DIALECTS, TOOLS, cuts, soup
from toolbridge import StreamParser, Text, ToolBridgeError, get_dialect

MARKERS = sorted({m for _, m in PAIRS} | {"<｜tool▁calls▁begin｜>", "[TOOL_CALLS]"})


def events_of(parser: Any, chunks: list[str], plain_first: bool) -> tuple[list[Any], int]:
    """The events of ``chunks``, and how many of them ``feed_plain`` took."""
    out, taken = [], 0
    for chunk in chunks:
        if plain_first and parser.feed_plain(chunk):
            out.append(Text(chunk))
            taken += 1
        else:
            out += parser.feed(chunk)
    out += parser.close()
    return out, taken


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=soup, dialect=st.sampled_from([*DIALECTS, "auto"]), tools=st.sampled_from([None, TOOLS]),
       cut=cuts, prose=st.lists(st.sampled_from(["Plain words ", "go here. ", "a < b, ", "  "]), max_size=6))
def test_feed_plain_reads_as_feed(text: str, dialect: str, tools: Any, cut: list[int], prose: list[str]) -> None:
    text = "".join(prose) + text + "".join(prose)
    chunks = split(text, cut) if cut else [text]
    try:
        expected, _ = events_of(StreamParser(dialect, tools, call_id=str), chunks, plain_first=False)
    except ToolBridgeError:
        return
    got, taken = events_of(StreamParser(dialect, tools, call_id=str), chunks, plain_first=True)
    assert got == expected
    event(f"calls: {sum(type(ev).__name__ == 'ToolCallEnd' for ev in got) > 0}, taken: {taken > 0}")


def test_prose_is_taken_and_markers_are_not() -> None:
    for dialect in ("hermes", "auto", "qwen3_coder"):
        parser = StreamParser(dialect, TOOLS)
        assert parser.feed(" Hello") == [Text(" Hello")]  # the answer has started: content
        assert parser.feed_plain(" there, ")
        start = get_dialect("hermes").call_start[0]
        assert not parser.feed_plain(start)  # a call marker: read by feed
        assert parser.feed(start) == []
        assert not parser.feed_plain("more")  # inside a block: never plain
        parser.close()
        assert not parser.feed_plain("after close")


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lead=st.sampled_from(["Sure. ", "Let me look. It is ", ""]), first=blocks, between=st.sampled_from(
    [" then ", " and so on, ", "\n"]), second=blocks, markers=st.lists(st.sampled_from(MARKERS), min_size=2, max_size=2),
    size=st.integers(1, 7))
def test_auto_reads_prose_around_refused_blocks_as_feed(lead: str, first: str, between: str, second: str,
                                                         markers: list[str], size: int) -> None:
    """``auto`` counts what ``feed_plain`` takes as read: where a refused block ends decides which
    dialects may claim a later marker."""
    text = lead + markers[0] + first + between + markers[1] + second + between
    chunks = [text[i:i + size] for i in range(0, len(text), size)]
    try:
        expected, _ = events_of(StreamParser("auto", TOOLS, call_id=str), chunks, plain_first=False)
    except ToolBridgeError:
        return
    got, _ = events_of(StreamParser("auto", TOOLS, call_id=str), chunks, plain_first=True)
    assert got == expected


CASES = load(DEFAULT_CORPUS) if DEFAULT_CORPUS.exists() else []


@pytest.mark.skipif(not CASES, reason="the shared corpus is not here")
def test_the_corpus_after_prose_reads_as_feed() -> None:
    differ = []
    for case in CASES:
        text = "A few words first, then the answer. " + text_for(case)
        chunks = [text[i:i + 5] for i in range(0, len(text), 5)]
        options = options_for(case)
        kwargs = {"reasoning": options["reasoning"], "drop_tokens": options.get("drop_tokens", ()), "call_id": str}
        for dialect in (ALIASES.get(case["dialect"], case["dialect"]), "auto"):
            try:
                expected = events_of(StreamParser(dialect, offered(case), **kwargs), chunks, plain_first=False)[0]
            except ToolBridgeError:
                continue
            if events_of(StreamParser(dialect, offered(case), **kwargs), chunks, plain_first=True)[0] != expected:
                differ.append((dialect, case.get("id") or text[:60]))
    assert not differ, differ[:5]
