"""``json.long_object``: a long arguments object decoded by orjson and proven by ``laid_out``
gives exactly what the strict scanner (``complete_object``) gives, or nothing. The table holds
what orjson and the scanner read differently (integers past 64 bits, lone surrogates, NaN, a
key written twice) and the texts where a cut at the last close marker is not the arguments' end; the property draws
objects, lays them out as ``feed`` writes one or otherwise, and compares the two readings."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings, strategies as st

from tests.budget import examples
from toolbridge.syntax.bodies.json import LONG_OBJECT, complete_object, long_object, read_whole
from toolbridge.syntax.dialect import to_json
from toolbridge.dialects import get_dialect

CLOSE = "</tool_call>"
LONG = "x = 1\n" * (LONG_OBJECT // 6 + 1)  # a long string: newlines escaped in JSON
HEAD = '\n{"name": "edit", "arguments": '


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 and 1.0, 0.0 and -0.0 differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return repr(a) == repr(b)


def block(arguments: str, tail: str = "}\n") -> str:
    return HEAD + arguments + tail + CLOSE


def both(arguments: str, tail: str = "}\n") -> tuple[Any, Any]:
    """long_object's reading of the block (its last close marker the block's) and the scanner's."""
    text = block(arguments, tail)
    return long_object(text, len(HEAD), CLOSE), complete_object(text, len(HEAD))


@pytest.mark.parametrize(("arguments", "read"), [
    (to_json({"path": "a.py", "new": LONG, "count": 1}), True),
    (to_json({"path": "a.py", "new": LONG}), True),  # the long string last
    (to_json({"new": LONG, "nested": {"a": [1, 2.5, None, True]}}), True),
    (to_json({"new": LONG, "big": 123456789012345678901234567890}), True),  # orjson: a float
    (to_json({"new": LONG, "neg": -9223372036854775809}), True),
    (to_json({"new": LONG + "é\u2028😀\x01\"\\"}), True),  # non-ASCII, a control, escapes
    (to_json({"new": LONG, "z": -0.0, "e": 1e300}), True),
    (to_json({"new": LONG}).replace('{"new"', '{"new": "x", "new"'), False),  # a key twice
    (to_json({"new": LONG, "n": {"a": 1}}).replace('{"a": 1}', '{"a": 1, "a": 2}'), False),  # twice, nested
    (to_json({"new": LONG, "n": 1}).replace(": 1}", ": NaN}"), False),
    (to_json({"new": LONG + "\ud800"}), False),  # a lone surrogate: orjson refuses it
    (json.dumps({"new": LONG, "n": 1}, separators=(",", ":")), False),  # laid out otherwise
    (json.dumps({"new": LONG, "n": 1}, indent=1), False),
    (to_json({"new": LONG, "n": 1}).replace(', "n"', ' , "n"'), False),
    (to_json({"new": LONG + CLOSE + "}}", "n": 1}), True),  # the close marker inside a string
    (to_json({"new": LONG + "}\n}" + CLOSE}), True),  # ... after what looks like the end
    ("[" * 300 + "]" * 300, False),  # not an object
    (to_json({"new": LONG, "deep": json.loads("[" * 200 + "]" * 200)}), False),  # nested too deep
])
def test_long_objects(arguments: str, read: bool) -> None:
    fast, scanned = both(arguments)
    assert (fast is not None) is read
    if fast is not None:
        assert fast[0] == scanned[0] and same(fast[1], scanned[1])


@pytest.mark.parametrize("tail", ["}", "}\n", " }\n\n", "}\t", "} x", "}}", ", \"x\": 1}"])
def test_what_follows_the_arguments(tail: str) -> None:
    fast, scanned = both(to_json({"new": LONG}), tail)
    plain = tail.strip(" \t\n\r") == "}"
    assert (fast is not None) is plain
    assert fast is None or (fast[0] == scanned[0] and same(fast[1], scanned[1]))


@pytest.mark.parametrize("after", [CLOSE, " text " + CLOSE, "}" + CLOSE, "\n<tool_call>\n" + block(to_json({"a": 1}))])
def test_a_close_marker_after_the_block(after: str) -> None:
    """A cut at a later close marker is no JSON object: the scanner reads the arguments."""
    text = block(to_json({"new": LONG, "n": 1})) + after
    assert long_object(text, len(HEAD), CLOSE) is None and complete_object(text, len(HEAD)) is not None


def test_read_whole_says_which_texts_it_proved() -> None:
    """hermes' whole reader: a long object laid out as feed writes one is known to be so."""
    reader = get_dialect("hermes").body(None, "<tool_call>").whole_reader()  # type: ignore[arg-type]
    for arguments, written in [(to_json({"new": LONG}), True), (json.dumps({"new": LONG}, indent=1), False),
                               (to_json({"new": "short"}), False)]:
        text = "<tool_call>" + block(arguments)
        name, args, value, end, proven = reader(text, len("<tool_call>"))
        assert (name, args, end, proven) == ("edit", arguments, len(text), written)
        assert same(value, json.loads(arguments))


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(max_size=20))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
_long = st.builds(lambda s, n: (s or "a") * n, st.text(min_size=1, max_size=30), st.integers(1100, 3000))


def _orjson_reads(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


@settings(max_examples=examples(300, 30), deadline=None)
@given(st.lists(st.tuples(st.text(max_size=8), st.one_of(_values, _long)), min_size=1, max_size=6),
       st.sampled_from(["feed", "compact", "dup"]))
@example([("", float("inf"))], "feed")  # (to_json writes Infinity, which orjson does not read: the scanner does)
def test_long_object_reads_as_the_scanner(members: list[tuple[str, Any]], layout: str) -> None:
    value = dict(members)
    value["pad"] = LONG
    if layout == "feed":
        text = to_json(value)
    elif layout == "compact":
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:  # the first member written again, first
        first = next(iter(value))
        text = "{" + json.dumps(first) + ": 0, " + to_json(value)[1:]
    fast, scanned = both(text)
    if fast is not None:
        assert scanned is not None and fast[0] == scanned[0] and same(fast[1], scanned[1])
    if layout == "feed":  # (the layout the fast path is for engages it, where orjson reads the text:
        assert fast is not None or not _orjson_reads(text)  # not Infinity, which to_json writes)
    else:
        assert fast is None
