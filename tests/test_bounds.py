"""Bounded work per byte: no input makes a parser superlinear, measured without clocks.

For every dialect, and for ``auto`` on the same inputs, marker-dense texts (each marker repeated,
every marker interleaved in a seeded random order, cut-off calls repeated, a value full of the
format's own tags where its layout does not place them) are parsed at n and 4n repetitions, whole
and in 7-character chunks (a value full of tags also one character at a time). Work is the number
of Python and C function calls the parse makes (``sys.setprofile``): deterministic, and
proportional to what a parser does. Four times the input may cost at most five times the work
(plus a small constant). A call count misses work done inside one C call (a slice or search of
all the rest of a long buffer, at every marker), so for ``auto`` the characters its trials are
given are counted too. ``make bench`` shows the same in seconds, and ``tests/test_linear.py``
times drawn texts.
"""

from __future__ import annotations

import json
import sys

import pytest

from toolbridge import StreamParser, parse
from toolbridge.parsing import auto
from toolbridge.dialects import dialect_names, get_dialect

from toolbridge.bench.dense import IN_VALUE, dense_inputs

NAMES = sorted({get_dialect(n).name for n in dialect_names()})
N = 60
RATIO = 5.0
SLACK = 2000  # calls: what making a parser and a few trials costs whatever the input


def work(dialect: str, text: str, chunk: int) -> int:
    """Function calls made parsing ``text`` (fed in ``chunk``-character pieces; 0: whole)."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += 1

    parser = StreamParser(dialect, reasoning=True)
    pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)] if chunk else [text]
    sys.setprofile(count)
    try:
        for piece in pieces:
            parser.feed(piece)
        parser.close()
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("name", NAMES)
def test_linear_in_marker_density(name: str) -> None:
    slow = []
    for label, (head, unit, tail) in dense_inputs(get_dialect(name)).items():
        for parser in (name, "auto"):
            for chunk in (0, 7, 1) if head else (0, 7):
                small = work(parser, head + unit * N + tail, chunk)
                large = work(parser, head + unit * 4 * N + tail, chunk)
                if large > RATIO * small + SLACK:
                    slow.append(f"{parser} on {label} (chunk {chunk}): {small} -> {large} calls")
    assert not slow, "\n".join(slow)


def trial_reads(text: str, chunk: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """Characters auto's trials are given parsing ``text`` (whole, or in ``chunk``-character
    pieces): the work a call count misses, as copying or searching all the rest of a long buffer
    at every marker is done in C."""
    read = 0
    feed = auto._Trial.feed

    def counted(self: auto._Trial, text: str, *args: object) -> None:
        nonlocal read
        read += len(text)
        feed(self, text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(auto._Trial, "feed", counted)
    parser = StreamParser("auto", reasoning=True)
    for piece in [text[i : i + chunk] for i in range(0, len(text), chunk)] if chunk else [text]:
        parser.feed(piece)
    parser.close()
    monkeypatch.undo()
    return read


# Shapes once quadratic: a marker's trials were handed all the rest of the text
# (and a refused one was closed, which read it again). At 8,000 characters, many times the
# window the trials are given at first, the count is linear if each marker costs its block.
SHAPES = {"tool_call storm": ("", "<tool_call>"), "function storm": ("", "<function=f>"),
          "tool_calls list": ('<tool_calls>[{"', "<tool_calls>"),
          "open key, tool_call and eot": ('[{"name": "get_weather", "argume', "<tool_call><|eot_id|><|eot_id|>")}
DENSE = 8000  # characters at n


@pytest.mark.parametrize("label", SHAPES)
def test_auto_trials_read_each_stretch_a_bounded_number_of_times(label: str, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, unit = SHAPES[label]
    n = DENSE // len(unit)
    for chunk in (0, 7):
        small = trial_reads(prefix + unit * n, chunk, monkeypatch)
        large = trial_reads(prefix + unit * 4 * n, chunk, monkeypatch)
        assert large <= RATIO * small, f"{label} (chunk {chunk}): trials read {small} -> {large} characters"


@pytest.mark.parametrize("name", sorted(IN_VALUE))
def test_a_value_full_of_tags_stays_in_the_value(name: str) -> None:
    """The input the bound above measures is one call whose value holds every tag unit."""
    head, unit, tail = dense_inputs(get_dialect(name))["tags inside a value"]
    result = parse(head + unit * N + tail, name)
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in result.message["tool_calls"]] \
        == [("f", {"a": unit * N})]
