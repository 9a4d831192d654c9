"""``Dialect.block_opens``: a claimant whose body refuses a block at its first character is
passed over by ``auto`` without reading the block.

Sound only if the declaration says what the body does: whenever ``refuses_block`` says so, a
trial of that dialect refuses the block (its first event is CallRejected of the marker and the
white space before the refused character, which is how far its trial would have reached).
Checked with Hypothesis over drawn blocks, and by running ``auto`` with and without the
declarations over the shared corpus and over drawn answers: the same events either way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.budget import examples

from tests.corpus_run import DEFAULT_CORPUS, load, offered, options_for, text_for
from tests.harness import tool
from toolbridge import CallRejected, StreamParser, ToolBridgeError, dialect_names, get_dialect
from toolbridge.openai import MessageBuilder
from toolbridge.parsing import auto
from toolbridge.parsing.stream import CONTENT
from toolbridge.syntax.markers import skip_ws

DECLARING = sorted({get_dialect(n).name for n in dialect_names() if get_dialect(n).block_opens})
PAIRS = [(d, m) for d in DECLARING for m in sorted(get_dialect(d).block_opens)]
TOOLS = [tool("get_weather", city={"type": "string"}, days={"type": "integer"})]
PIECES = [" ", "\n", "\t", "{", "}", "[", "<", ">", '"', "name", ":", "get_weather", '"name": ',
          '{"name": "get_weather", "arguments": {"city": "Oslo"}}', "<function=get_weather>",
          "<parameter=city>", "Oslo", "</parameter>", "</function>", "</tool_call>", "<tool_call>",
          "<arg_key>", "```", "x", "\u00a0", "\x0c"]
blocks = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


def test_hermes_declares_its_tag_wrappers_only() -> None:
    """A fence may hold a tagged call (its body reads an inner wrapper), so it declares none."""
    opens = get_dialect("hermes").block_opens
    assert opens["<tool_call>"] == ("{",) and not any(m.startswith("```") for m in opens)
    assert get_dialect("qwen3_coder").block_opens == {"<tool_call>": ("<function=",)}


@pytest.mark.parametrize(("dialect", "text", "refused"), [
    ("hermes", "<tool_call>\n<function=f>", True),  # Qwen3-Coder's XML: refused at "<"
    ("hermes", "<tool_call>get_weather\n<arg_key>", True),  # GLM's: at "g"
    ("hermes", "<tool_call>\n{", False),
    ("hermes", "<tool_call>\n  ", False),  # nothing to tell by yet
    ("hermes", "<tool_call>", False),
    ("qwen3_coder", "<tool_call>\n{", True),
    ("qwen3_coder", "<tool_call>get_weather\n<arg_key>", True),
    ("qwen3_coder", "<tool_call>\n<function=f>", False),
    ("qwen3_coder", "<tool_call>\n<func", False),  # the tag may still come
    ("qwen3_coder", "<tool_call>\n<funk", True),
])
def test_refuses_block_at_the_first_character(dialect: str, text: str, refused: bool) -> None:
    assert get_dialect(dialect).refuses_block("<tool_call>", text, len("<tool_call>")) is refused


@pytest.mark.parametrize(("dialect", "marker"), PAIRS)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rest=blocks)
def test_a_refused_block_is_refused_by_the_trial(dialect: str, marker: str, rest: str) -> None:
    """Refused as soon as the trial reads the block (a trial may hold a short block unread until
    it closes, so before the end of output it may also still wait), and refused at the end."""
    text = marker + rest
    if not get_dialect(dialect).refuses_block(marker, text, len(marker)):
        return
    parser = StreamParser(dialect, TOOLS)
    parser.phase = CONTENT  # as auto makes a trial's parser mid-answer
    parser.halt_on_reject = True
    events = parser.feed_block(text, marker)
    assert not events or isinstance(events[0], CallRejected), events
    events += parser.close()
    assert events and isinstance(events[0], CallRejected), events
    assert events[0].text == text[: skip_ws(text, len(marker))]  # what auto notes as its reach


@contextlib.contextmanager
def undeclared() -> Iterator[None]:
    """Every dialect without its ``block_opens`` (so ``auto`` tries each claimant in turn)."""
    saved = {name: get_dialect(name).block_opens for name in DECLARING}
    try:
        for name in DECLARING:
            object.__setattr__(get_dialect(name), "block_opens", {})
        auto._table.cache_clear()
        auto._TABLES.clear()
        yield
    finally:
        for name, opens in saved.items():
            object.__setattr__(get_dialect(name), "block_opens", opens)
        auto._table.cache_clear()
        auto._TABLES.clear()


def auto_events(text: str, whole: bool, **options: Any) -> Any:
    """What ``auto`` makes of ``text``, read whole (its events) or in 3-character pieces (the
    message and report they build: a claimant passed over lets text through sooner than its
    trial, which may hold a short block until it closes, so the pieces may be cut otherwise)."""
    # Ids by the call's index: with the declarations, a claimant passed over makes no trial, so
    # none of its calls asks for an id; numbered as asked, the winner's ids would differ by that.
    parser = StreamParser("auto", call_id=lambda index: f"call_{index}", **options)
    try:
        if whole:
            return parser.parse_whole(text), parser.detected
        events = [ev for i in range(0, len(text), 3) for ev in parser.feed(text[i:i + 3])]
        events += parser.close()
    except ToolBridgeError as exc:
        return repr(exc)
    builder = MessageBuilder("auto")
    builder.add(events)
    return builder.message, builder.report.to_dict(), parser.detected


def both(text: str, **options: Any) -> tuple[list[Any], list[Any]]:
    declared = [auto_events(text, whole, **options) for whole in (True, False)]
    with undeclared():
        tried = [auto_events(text, whole, **options) for whole in (True, False)]
    return declared, tried


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lead=st.sampled_from(["", "Sure.\n", "<think>x</think>"]), rest=blocks,
       marker=st.sampled_from(sorted({m for _, m in PAIRS})))
@example(lead="", rest="<tool_call><tool_call></tool_call><function=get_weather>", marker="<JSON>")
def test_auto_reads_drawn_answers_as_when_every_claimant_is_tried(lead: str, rest: str, marker: str) -> None:
    declared, tried = both(lead + marker + rest, tools=TOOLS)
    assert declared == tried


def test_a_dialect_made_from_another_with_other_markers_declares_nothing() -> None:
    derived = replace(get_dialect("hermes"), name="derived", call_start=("<derived_call>",))
    assert derived.opening_of("<tool_call>") is None and derived.opening_of("<derived_call>") is None
    assert not derived.refuses_block("<tool_call>", "<tool_call>x", len("<tool_call>"))


def test_the_declaration_is_what_the_check_turns_off() -> None:
    """The comparison above compares two different paths: with the declarations off, Qwen3-Coder's
    block is read by hermes' trial first, and on, hermes is passed over."""
    table = auto._table_of(None, None, False, False, ())
    assert set(table.guarded["<tool_call>"]) >= {"hermes", "qwen3_coder"}
    with undeclared():
        assert "<tool_call>" not in auto._table_of(None, None, False, False, ()).guarded


CASES = load(DEFAULT_CORPUS) if DEFAULT_CORPUS.exists() else []


@pytest.mark.skipif(not CASES, reason="the shared corpus is not here")
def test_auto_reads_the_corpus_as_when_every_claimant_is_tried() -> None:
    differ = []
    for case in CASES:
        text = text_for(case)
        if not any(m in text for _, m in PAIRS):
            continue
        options = options_for(case)
        declared, tried = both(text, tools=offered(case), reasoning=options["reasoning"],
                               drop_tokens=options.get("drop_tokens", ()))
        if declared != tried:
            differ.append(case.get("id") or text[:60])
    assert not differ, differ[:5]
