"""``argtyper.as_written``'s one-match path (``_FLAT``): a flat object laid out as ``feed`` writes
one, its strings matched as runs between escapes. The table holds the edge cases of a string's
escapes and of the spacing; the property compares the pattern with the plain alternation of
string characters and escapes it replaced, which matches the same strings."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings, strategies as st

from toolbridge.parsing.argtyper import _FLAT, as_written

_MEMBER = r'"(?:[^"\\]++|\\.)*+": (?:"(?:[^"\\]++|\\.)*+"|[-+.0-9eE]++|true|false|null)'
_REFERENCE = re.compile(rf"\{{{_MEMBER}(?:, {_MEMBER})*+\}}", re.DOTALL)


@pytest.mark.parametrize(("text", "members", "written"), [
    ('{"a": "b"}', 1, True),
    ('{"a": "b", "c": 1}', 2, True),
    ('{"a": "x\\"y"}', 1, True),  # an escaped quote inside
    ('{"a": "x\\\\"}', 1, True),  # a string that ends in an escaped backslash
    ('{"a": "\\\\\\""}', 1, True),  # an escaped backslash, then an escaped quote
    ('{"a": "\\u00e9\\n\\t"}', 1, True),
    ('{"a\\"b": "c"}', 1, True),  # an escape in the key
    ('{"a": ""}', 1, True),
    ('{"a": "line\nnext"}', 1, True),  # (valid JSON never holds this: the pattern spans it)
    ('{"a": -1.5e3, "b": true, "c": null}', 3, True),
    ('{"a":"b"}', 1, False),  # no space after the colon
    ('{"a": "b" , "c": 1}', 2, False),
    ('{ "a": "b"}', 1, False),
    ('{"a": "b",  "c": 1}', 2, False),
    ('{"a": "b"}\n', 1, False),
])
def test_flat_layouts(text: str, members: int, written: bool) -> None:
    assert bool(_FLAT.fullmatch(text)) is written is bool(_REFERENCE.fullmatch(text))
    if written and "\n" not in text:
        assert as_written(text, members)


_PIECE = st.sampled_from(['"', "\\", "\\\\", '\\"', "a", " ", ", ", ": ", "é", "\n", "1", "{", "}"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.lists(_PIECE, max_size=6).map("".join),
                          st.lists(_PIECE, max_size=6).map("".join)), min_size=1, max_size=3))
def test_flat_matches_the_reference(members: list[tuple[str, str]]) -> None:
    """Any text built of members whose strings hold quotes, backslashes and escapes (valid or
    not): the pattern and the plain alternation agree."""
    text = "{" + ", ".join(f'"{k}": "{v}"' for k, v in members) + "}"
    assert bool(_FLAT.fullmatch(text)) == bool(_REFERENCE.fullmatch(text))


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=12), st.integers(), st.booleans(),
                                                      st.none()), min_size=1, max_size=4))
def test_encoded_objects_are_written(value: dict[str, object]) -> None:
    """An object encoded with ``feed``'s spacing is laid out as written, escapes and all."""
    for ascii_only in (True, False):
        text = json.dumps(value, ensure_ascii=ascii_only)
        assert _FLAT.fullmatch(text) and as_written(text, len(value))


_RAW = st.one_of(st.text(max_size=10), st.sampled_from(["1", "-2", "1.5", "true", "null", "[1, 2]", '{"a": 1}',
                                                        " 3 ", "x\ny", '"q"', "NaN", "1e400"]))
_DECLARED = st.sampled_from([None, "string", "integer", "number", "boolean", "object", "array"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6), st.tuples(_RAW, _DECLARED), min_size=0, max_size=4))
def test_typed_objects_are_written(members: dict[str, tuple[str, str | None]]) -> None:
    """What ``typed_object`` writes (the XML family's calls read whole) is laid out as ``feed``
    writes an object: ``read_plain`` does not check the layout of the values it found settled."""
    from toolbridge.syntax.rawvalue import typed_object
    from toolbridge.tools import coerce

    props = {k: ({"type": t} if t else {}) for k, (_, t) in members.items()}
    pairs = [(k, raw) for k, (raw, _) in members.items()]
    text, value, _ = typed_object(pairs, lambda key: props.get(key), lambda key, raw, schema: coerce(raw, schema),
                                  props)
    assert as_written(text, len(value))


@pytest.mark.parametrize("escape", ["\\n", "\\u000a", "\\/", '\\"'])
@pytest.mark.parametrize("at", ["first", "middle", "last"])
def test_long_strings_as_written(escape: str, at: str) -> None:
    """A long string value is passed over by comparing it with its encoding when it is written
    so, and by the scanner when it is written otherwise (an escape the encoder does not
    write): the layout reads the same either way."""
    long = "x" * 1500 + escape + "y" * 10
    members = {"first": ['"a"', long_json(long), "1"], "middle": ["1", long_json(long), '"b"'],
               "last": ["1", '"b"', long_json(long)]}[at]
    for sep, written in ((", ", True), (",  ", False)):
        text = "{" + sep.join(f'"k{i}": {v}' for i, v in enumerate(members)) + "}"
        value = json.loads(text)
        assert as_written(text, len(value), value) is written
        assert as_written(text, len(value)) is written


def long_json(text: str) -> str:
    return '"' + text + '"'  # (``text`` holds its escapes as written)
