"""The shared test harness: run a case whole, per character and in given chunks; check deltas.

Every dialect's table goes through ``check_case``; every event stream goes through
``check_events`` (the one delta checker): ids and names once, indices in order, argument
fragments joining into JSON equal to the final arguments, each call one delta by default, and the
streamed message equal to the whole one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from toolbridge import (
    ArgumentsDelta,
    CallAborted,
    ChunkEncoder,
    MessageBuilder,
    StreamParser,
    ToolCallBegin,
    ToolCallEnd,
    assemble,
)

from tests.budget import examples


def seq_ids(index: int) -> str:
    return f"call_{index}"


@dataclass
class Case:
    """One table row: model output and what it must parse into."""

    id: str
    text: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    content: str | None = ""  # expected message content (None: null)
    reasoning: str | None = None
    tools: list[dict[str, Any]] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)  # expected report fields (subset)
    cut: bool = False  # the output stopped at a length limit (``close(cut=True)``)


def tool(name: str, **props: Any) -> dict[str, Any]:
    """An OpenAI tool whose parameters have the given property schemas."""
    return {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": props}},
    }


def run(case: Case, dialect: str, chunks: list[str],
        groups: list[list[Any]] | None = None) -> tuple[dict[str, Any], Any, list[Any]]:
    """Feed ``chunks``; return the message, the report and all events (``groups``, when given,
    gets the events of each feed and of the close)."""
    parser = StreamParser(dialect, case.tools, call_id=seq_ids, **case.options)
    events: list[Any] = []
    for chunk in [*chunks, None]:
        got = parser.feed(chunk) if chunk is not None else parser.close(cut=case.cut)
        events += got
        if groups is not None:
            groups.append(got)
    builder = MessageBuilder(dialect if dialect == "auto" else parser.dialect.name)
    builder.add(events)
    if dialect == "auto":
        builder.report.detected = parser.detected
    return builder.message, builder.report, events


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]


def check_case(case: Case, dialect: str, chunks: list[str] | None = None) -> None:
    """Assert that ``case`` parses into its expectation when fed as ``chunks`` (whole by default)."""
    chunks = [case.text] if chunks is None else chunks
    assert "".join(chunks) == case.text
    groups: list[list[Any]] = []
    message, report, events = run(case, dialect, chunks, groups)
    check_events(events, message, groups)
    got = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls", [])]
    assert got == [(n, a) for n, a in case.calls], f"{case.id}: calls {got!r}"
    assert message["content"] == case.content, f"{case.id}: content {message['content']!r}"
    assert message.get("reasoning_content") == case.reasoning, f"{case.id}: reasoning"
    rep = report.to_dict()
    for key, want in case.report.items():
        value = rep[key]
        if isinstance(want, int) and not isinstance(want, bool) and isinstance(value, list):
            value = len(value)
        assert value == want, f"{case.id}: report[{key!r}] = {rep[key]!r}, want {want!r}"


def check_events(events: list[Any], message: dict[str, Any], groups: list[list[Any]] | None = None) -> None:
    """The one delta checker (see the module docstring); ``groups``: the events as each feed
    gave them, encoded one group at a time (default: all at once)."""
    begun: dict[int, ToolCallBegin] = {}
    fragments: dict[int, list[str]] = {}
    ended: dict[int, str] = {}
    aborted: set[int] = set()
    for ev in events:
        if isinstance(ev, ToolCallBegin):
            assert ev.index not in begun, f"index {ev.index} begun twice"
            assert ev.index == len(begun), f"index {ev.index} out of order"
            assert ev.id not in {b.id for b in begun.values()}, "id repeated"
            begun[ev.index] = ev
            fragments[ev.index] = []
        elif isinstance(ev, ArgumentsDelta):
            assert ev.index in begun and ev.index not in ended and ev.index not in aborted
            assert ev.text, "empty fragment"
            fragments[ev.index].append(ev.text)
        elif isinstance(ev, ToolCallEnd):
            assert ev.index in begun and ev.index not in ended and ev.index not in aborted
            joined = "".join(fragments[ev.index])
            assert joined == ev.arguments, "fragments do not join into the final arguments"
            assert isinstance(json.loads(joined), dict)
            ended[ev.index] = ev.arguments
        elif isinstance(ev, CallAborted):
            assert ev.index in begun and ev.index not in ended
            aborted.add(ev.index)
    assert set(begun) == set(ended) | aborted, "a begun call neither ended nor aborted"
    check_deltas(groups or [events], message, ended, aborted)


def check_deltas(groups: list[list[Any]], message: dict[str, Any], ended: dict[int, str], aborted: set[int]) -> None:
    """The chunk deltas of ``events``, both ways. Whole calls (the default): each call that ended
    is one delta with its index, id, type, name and whole arguments, and the deltas assemble into
    exactly the message, whatever was aborted. ``stream_arguments``: an opening, then fragments;
    the message, unless a call was aborted after its opening went out."""
    encoder = ChunkEncoder()
    deltas = [d for events in groups for d in encoder.encode(events)] + encoder.finish()
    parts = [part for d in deltas for part in d.get("tool_calls", ())]
    assert [part["index"] for part in parts] == sorted(ended), "each ended call once, in order"
    for part in parts:
        assert set(part) == {"index", "id", "type", "function"} and part["type"] == "function"
        assert part["function"]["arguments"] == ended[part["index"]]
    assert assemble(deltas) == message, "whole calls assemble into a different message"
    encoder = ChunkEncoder(stream_arguments=True)
    deltas = [d for events in groups for d in encoder.encode(events)] + encoder.finish()
    for d in deltas:
        for part in d.get("tool_calls", ()):
            if "id" in part:
                assert part["function"]["arguments"] == "" and part["type"] == "function"
            else:
                assert set(part) == {"index", "function"} and set(part["function"]) == {"arguments"}
    # A call begun and aborted within one feed is never sent, not even its opening.
    unsent = {ev.index for events in groups for ev in events if isinstance(ev, CallAborted)
              and any(isinstance(b, ToolCallBegin) and b.index == ev.index for b in events)}
    assert not unsent & {part["index"] for d in deltas for part in d.get("tool_calls", ())}
    if not aborted:
        assert assemble(deltas) == message, "streamed deltas assemble into a different message"


def make_table_tests(dialect: str, cases: list[Case]) -> tuple[Any, Any, Any]:
    """The three runs every table gets: whole, one character at a time, random chunkings."""
    import pytest
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids), "case ids must be unique"
    param = pytest.mark.parametrize("case", cases, ids=ids)

    @param
    def test_whole(case: Case) -> None:
        check_case(case, dialect)

    @param
    def test_per_character(case: Case) -> None:
        check_case(case, dialect, list(case.text))

    @param
    @settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def test_random_chunkings(case: Case, data: Any) -> None:
        n = len(case.text)
        cuts = data.draw(st.lists(st.integers(min_value=1, max_value=max(1, n - 1)), max_size=12))
        check_case(case, dialect, split(case.text, cuts))

    return test_whole, test_per_character, test_random_chunkings


def written(dialect: str, name: str, arguments: dict[str, Any], ascii_only: bool = True) -> str:
    """A call as a model writes it in ``dialect`` (hermes, or qwen3_coder). In qwen3_coder one
    newline each side of a value belongs to the markup: a value ending in a newline is followed
    by another."""
    if dialect == "hermes":
        return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=ascii_only) + \
            "\n</tool_call>"
    params = "".join(f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
                     for k, v in arguments.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"
