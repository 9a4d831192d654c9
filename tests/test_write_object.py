"""``write_object`` (the arguments text of raw values read whole) is ``to_json``'s text, byte
for byte, whichever way it is written: orjson's laid out again, or member by member (values
orjson writes otherwise or refuses: floats, big integers, lone surrogates, nested values)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from toolbridge.syntax.dialect import to_json
from toolbridge.syntax.rawvalue import typed_object, write_object
from toolbridge.tools import coerce

SCALARS: list[Any] = ["", 'say "hi"', "back\\slash", "line\nbreak", "\x00\x1f\x7f", "\u2028\u2029", "é😀", "\ud800",
                      ",\n  ", "x" * 2000, 0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, True, False, None]
OTHERS: list[Any] = [1.0, 1e16, 1e-7, float("nan"), float("inf"), [1, 2.5], {"a": [None]}, [], {}]


@pytest.mark.parametrize("value", SCALARS + OTHERS)
def test_one_member_is_written_as_to_json_writes_it(value: Any) -> None:
    for obj in ({"k": value}, {"k": value, "é\"": "x"}, {"\ud800": value}):
        scalars = all(type(v) in (str, int, bool, type(None)) for v in obj.values())
        assert write_object(obj, scalars) == to_json(obj)
        assert write_object(obj) == to_json(obj)


keys = st.text(max_size=6)
scalar = st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.sampled_from(SCALARS))


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(obj=st.dictionaries(keys, scalar, max_size=6))
def test_objects_of_scalars_are_written_as_to_json_writes_them(obj: dict[str, Any]) -> None:
    assert write_object(obj, True) == to_json(obj) == write_object(obj)


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(pairs=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(
    ["1", "-2", "2.5", "1e16", "true", "null", "[1, 2]", '{"x": 1.0}', "text", " 7 ", "99999999999999999999999"])),
    max_size=4, unique_by=lambda p: p[0]))
def test_typed_object_text_is_its_value_as_to_json_writes_it(pairs: list[tuple[str, str]]) -> None:
    schemas = {"a": {"type": "integer"}, "b": {"type": "number"}, "c": None, "d": {"type": "string"}}
    text, value, _ = typed_object(pairs, schemas.get, lambda key, raw, schema: coerce(raw, schema))
    assert text == to_json(value)
