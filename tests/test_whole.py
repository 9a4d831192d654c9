"""``parse_whole`` (what ``parse`` reads) gives exactly ``feed(text) + close(cut)``.

Its fast path (``read_plain``: prose and calls written plainly, read at C speed) must make the
same events, ids included, as the general one; everything else falls back to it. Checked:
- a table of texts per dialect (its sample and renderer's calls, with prose, a cut marker,
  several calls, calls that must be typed, repaired, rejected or refused), under every option
  set, pinned and under ``auto``; the plain ones are checked to take the fast path;
- every case of the shared corpus (skipped when it is absent), pinned and under ``auto``;
- Hypothesis: texts drawn from prose, markers and call blocks, in every dialect;
- ``parse_message`` (the gateway's whole answer read at C speed) is ``parse``'s message, with a
  report that says nothing, on the table and the corpus.
"""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples

from tests.corpus_run import ALIASES, DEFAULT_CORPUS, load, offered, options_for, text_for
from tests.harness import tool
from toolbridge import StreamParser, ToolBridgeError, ToolCallEnd, dialect_names, get_dialect
from toolbridge.limits import MAX_DEPTH
from toolbridge.parsing.parser import parse, parse_message, parse_plain
from toolbridge.parsing.stream import CONTENT
from toolbridge.tools import Toolset

DIALECTS = sorted({get_dialect(n).name for n in dialect_names()})
TOOLS = [
    tool("get_weather", city={"type": "string"}, days={"type": "integer"}),
    tool("note", text={"type": "string"}, tags={"type": "array", "items": {"type": "string"}}),
]
PLAIN = [("get_weather", {"city": "Paris", "days": 3}), ("note", {"text": 'say "hi"\n', "tags": ["a"]})]
OPTIONS: list[dict[str, Any]] = [
    {},
    {"tools": TOOLS},
    {"tools": TOOLS, "reject_invalid": True},
    {"tools": TOOLS, "validate": False},  # typed, not checked
    {"tools": TOOLS, "coerce": False, "validate": False},
    {"tools": TOOLS, "reasoning": True},
    {"tools": TOOLS, "repair": True},
]
PROSE = "Here is the plan: read the file, then `patch` it; 3 < 4 and {x} stay text.\n\n"


def events_both_ways(dialect: str, text: str, cut: bool = False, **options: Any) -> tuple[Any, Any]:
    """(parse_whole's events, feed + close's events) of two fresh parsers with the same ids; an
    error (the same one both ways) is returned in place of the events."""
    results = []
    for whole in (True, False):
        parser = StreamParser(dialect, call_id=counted_ids(), **options)
        try:
            results.append(parser.parse_whole(text, cut) if whole else parser.feed(text) + parser.close(cut))
        except ToolBridgeError as exc:
            results.append(repr(exc))
    return results[0], results[1]


def counted_ids() -> Any:
    """Call ids that also count how often they were asked for (so a fast path that asked for
    one it did not use would show)."""
    asked = count()
    return lambda index: f"call_{index}_{next(asked)}"


def texts_of(dialect: str) -> list[str]:
    """Prose and calls in ``dialect``: plain, typed, repaired, refused, cut, and mixed."""
    d = get_dialect(dialect)
    texts = ["", "   \n", PROSE, PROSE + d.call_start[0][:-1], d.sample, PROSE + d.sample]
    if d.render is not None:
        one, two = d.render(PLAIN[:1]), d.render(PLAIN)
        texts += [one, two, PROSE + one, PROSE + two + "\n\nDone.", one + "\n" + one, one[:-3],
                  d.render([("get_weather", {"city": "Paris", "days": "3"})]),  # typed by the schema
                  d.render([("get_weather", {"city": "Paris", "days": "three"})]),  # invalid
                  d.render([("get-weather", {"city": "Paris"})]),  # resolved to get_weather
                  d.render([("unknown_tool", {"city": "Paris"})]),  # not offered
                  d.render([("get_weather", {"city": "x", "extra": {"deep": [1, 2.5, None]}})])]
        texts += [nested_call(d, MAX_DEPTH), nested_call(d, MAX_DEPTH + 1)]
    return texts


def nested_call(d: Any, depth: int) -> str:
    """A call whose arguments nest ``depth`` levels (the arguments object is the first)."""
    return d.render([("get_weather", {"city": "x", "extra": nested(depth - 1)})])


def nested(levels: int) -> Any:
    """A value of ``levels`` lists, one inside the other."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize("dialect", DIALECTS)
def test_parse_whole_is_feed_and_close(dialect: str) -> None:
    for text in texts_of(dialect):
        for options in OPTIONS:
            for cut in (False, True):
                for name in (dialect, "auto"):
                    whole, fed = events_both_ways(name, text, cut, **options)
                    assert whole == fed, (name, text, options, cut)


@pytest.mark.parametrize("dialect", ["hermes", "internlm", "ernie45", "granite4", "reka"])
def test_plain_calls_take_the_fast_path(dialect: str) -> None:
    """Calls as the dialect's renderer writes them, with prose around, are read by
    ``read_plain`` (were it to refuse them all, the table above would prove nothing)."""
    d = get_dialect(dialect)
    assert d.render is not None
    for text in (PROSE, d.render(PLAIN), PROSE + d.render(PLAIN) + "\nDone."):
        for name in (dialect, "auto") if dialect == "hermes" else (dialect,):
            events = StreamParser(name, TOOLS).read_plain(text)
            assert events is not None, (name, text)
            assert sum(isinstance(e, ToolCallEnd) for e in events) == (text != PROSE) * len(PLAIN)


@pytest.mark.parametrize("dialect", [n for n in DIALECTS if get_dialect(n).render is not None])
def test_the_depth_limit_holds_whole_and_in_pieces(dialect: str) -> None:
    """Arguments nested to the limit make a call; one level more, read whole (where the fast
    path decodes a JSON block at once) give the calls read in pieces give (where the scanner
    counts the levels): none for a JSON body, whose block stays text, and for a raw-text
    value the call with the value kept as a string."""
    d = get_dialect(dialect)
    for depth in (MAX_DEPTH, MAX_DEPTH + 1):
        text = nested_call(d, depth)
        parser = StreamParser(dialect, TOOLS)
        in_pieces = [e for i in range(0, len(text), 7) for e in parser.feed(text[i : i + 7])] + parser.close()
        whole = StreamParser(dialect, TOOLS).parse_whole(text)
        calls = [sum(isinstance(e, ToolCallEnd) for e in events) for events in (whole, in_pieces)]
        assert calls == [1, 1] if depth == MAX_DEPTH else calls[0] == calls[1], (depth, calls)
        if dialect == "hermes" and depth > MAX_DEPTH:
            assert calls == [0, 0]


@pytest.mark.skipif(not DEFAULT_CORPUS.exists(), reason="shared corpus not present")
def test_parse_whole_is_feed_and_close_on_the_corpus() -> None:
    for case in load(DEFAULT_CORPUS):
        name = ALIASES.get(case["dialect"], case["dialect"])
        options = {k: v for k, v in options_for(case).items() if v is not None}
        for dialect in (name, "auto"):
            whole, fed = events_both_ways(dialect, text_for(case), tools=offered(case), **options)
            assert whole == fed, case["id"]


BLOCKS = [b for n in DIALECTS for d in [get_dialect(n)] if d.render is not None
          for b in (d.render(PLAIN[:1]), d.render(PLAIN[1:]))]
piece = st.one_of(
    st.sampled_from(BLOCKS),
    st.sampled_from([m for n in DIALECTS for m in get_dialect(n).call_start]),
    st.sampled_from(["\n", " ", "Sure.", "{", "}", "<think>", "</think>", "<|im_end|>", "`", "<"]),
    st.text(max_size=5),
)


@settings(max_examples=examples(400), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(piece, max_size=8), dialect=st.sampled_from([*DIALECTS, "auto"]),
       options=st.sampled_from(OPTIONS), cut=st.booleans())
def test_parse_whole_is_feed_and_close_on_drawn_texts(pieces: list[str], dialect: str,
                                                      options: dict[str, Any], cut: bool) -> None:
    whole, fed = events_both_ways(dialect, "".join(pieces), cut, **options)
    assert whole == fed


@pytest.mark.parametrize("dialect", DIALECTS)
def test_feed_block_is_feed(dialect: str) -> None:
    """``feed_block`` (auto's trials: a text that starts with a marker found by the caller)
    gives the events of ``feed``, mid-answer, for the dialect's own blocks and anything else."""
    d = get_dialect(dialect)
    texts = [t for t in texts_of(dialect) if t] + [m + " not a call" for m in d.call_start]
    for text in texts:
        marker = next((m for m in sorted(d.call_start, key=len, reverse=True) if text.startswith(m)), "<tool_call>")
        for options in OPTIONS[:3]:
            got, want = (StreamParser(dialect, call_id=counted_ids(), **options) for _ in range(2))
            got.phase = want.phase = CONTENT
            assert (got.feed_block(text, marker) + got.close()
                    == want.feed(text) + want.close()), (dialect, text, options)


def message_both_ways(dialect: str, text: str, tools: Any, cut: bool = False, **options: Any) -> tuple[Any, Any]:
    """(``parse_message``'s message, or None, and ``parse``'s result) with the same ids."""
    offered = Toolset(tools) if tools else None
    message = parse_message(text, dialect, offered, call_id=counted_ids(), **options)
    return message, parse(text, dialect, offered, cut, call_id=counted_ids(), **options)


def assert_message_is_parse(message: Any, result: Any, *why: Any) -> None:
    """``parse_message``'s promise: parse's message (its keys in order), a report with nothing
    to say, and the finish reason the calls give."""
    if message is None:
        return
    assert list(message.items()) == list(result.message.items()), why
    report = result.report
    assert not (report.rejected or report.aborted or report.repaired or report.invalid or report.truncated), why
    assert result.finish_reason == ("tool_calls" if message.get("tool_calls") else "stop"), why


@pytest.mark.parametrize("dialect", DIALECTS)
def test_parse_message_is_parse(dialect: str) -> None:
    """Whole answers read at C speed (the gateway's common answer) are messages made directly:
    exactly parse's, or None (then the gateway parses); and None exactly when parse_plain is."""
    read = 0
    for text in texts_of(dialect):
        for options in ({}, {"coerce": False}, {"drop_tokens": ("<|im_end|>",)}, {"repair": True}):
            for cut in (False, True):
                message, result = message_both_ways(dialect, text, TOOLS, cut, **options)
                assert_message_is_parse(message, result, text, options, cut)
                plain = parse_plain(text, dialect, TOOLS, cut, **options)
                assert (message is None) == (plain is None), (text, options)
                read += message is not None
    assert read or dialect != "hermes"  # (were it to read none, the table would prove nothing)
    assert parse_message(PROSE, "auto", Toolset(TOOLS)) is None  # (auto: parse reads it)


@pytest.mark.skipif(not DEFAULT_CORPUS.exists(), reason="shared corpus not present")
def test_parse_message_is_parse_on_the_corpus() -> None:
    for case in load(DEFAULT_CORPUS):
        name = ALIASES.get(case["dialect"], case["dialect"])
        options = {k: v for k, v in options_for(case).items() if v is not None and k in ("coerce", "drop_tokens")}
        try:
            message, result = message_both_ways(name, text_for(case), offered(case), **options)
        except ToolBridgeError:
            continue  # (tools the parser refuses: nothing to read)
        assert_message_is_parse(message, result, case["id"])
