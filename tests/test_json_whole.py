"""A whole JSON call's arguments decoded by orjson (``object_before``) are what the strict
decoder gives (``complete_object``), or it answers None and that decoder reads them.

Checked on a table of texts made to trip it (a key written twice at any depth, escaped quotes
and backslashes, integers beyond 64 bits, floats, lone surrogates, NaN, control characters,
the close marker inside a string, several calls, nesting past the limit) and on drawn texts;
and end to end, ``parse_message`` (which reads whole calls so) is ``parse``'s message on them.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from tests.harness import tool
from tests.test_whole import assert_message_is_parse, message_both_ways
from toolbridge.limits import MAX_DEPTH
from toolbridge.syntax.bodies.json import complete_object, object_before

CLOSE = "</tool_call>"
ARGS = [
    "{}", '{"a": 1}', '{"a": 1, "a": 2}', '{"a": {"b": 1, "b": 1}}',
    '{"a": [{"b": "x"}, {"b": "y", "b": "y"}]}', '{"a": "x", "b": "x"}', '{"a": "say \\"hi\\""}',
    '{"a": "x\\\\"}', '{"a": "x\\\\", "a": "y"}', '{"a": "\\\\\\"", "b": 2}', '{"a": "\\\\\\\\"}',
    '{"a": "\\"", "a": "\\""}', '{"a\\"": 1, "a\\"": 1}',
    '{"a": 18446744073709551615}', '{"a": 18446744073709551616}', '{"a": -9223372036854775809}',
    '{"a": ' + "9" * 5000 + "}", '{"a": 1.5}', '{"a": 1e400}', '{"a": -0}', '{"a": -0.0}',
    '{"a": 1E5}', '{"a": "\\ud800"}', '{"a": "\\udfff"}', '{"a": "\\ud83d\\ude00"}', '{"a": NaN}',
    '{"a": Infinity}', '{"a": "\x01"}', '{"a": "\x7f"}', '{"a": "</tool_call>"}',
    '{"a": "}}</tool_call>"}', '{"a": 1,}', '{"a": [1, 2, "x", null, true, false, {"c": []}]}',
    '{"é": "ü"}', '{"a": "\\u00e9"}', '{"a" : 1 }', '{"a": "' + "x\\n" * 2000 + '"}',
    '{"a": "' + "x\\n" * 2000 + '", "a": 1}', '{"\\u0061": 1, "a": 2}',
    "{" + '"a": [' * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}",
    "{" + '"a": [' * MAX_DEPTH + "]" * MAX_DEPTH + "}",
    '{"a": 01}', '{"a": .5}', '{"a": tru}', '{"a": 1} x', "{\u00a0}", '{"a": [1 \u2003]}',
]
ANOTHER = '\n<tool_call>\n{"name": "f", "arguments": {}}\n' + CLOSE
AFTER = ["}\n" + CLOSE, "}" + CLOSE, " } \n" + CLOSE, "}\n" + CLOSE + "\n" + CLOSE,
         "}\n" + CLOSE + ANOTHER, "} x " + CLOSE, "}", ""]
DRAWN = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def assert_same_read(buf: str) -> None:
    """``object_before`` answers None or exactly ``complete_object`` (repr: types and order)."""
    fast = object_before(buf, 0, CLOSE)
    if fast is not None:
        assert repr(fast) == repr(complete_object(buf, 0)), buf


@pytest.mark.parametrize("args", ARGS)
def test_object_before_is_complete_object(args: str) -> None:
    for after in AFTER:
        assert_same_read(args + after)


def test_object_before_reads_the_plain_ones() -> None:
    """(were it to read none, the table would prove nothing)"""
    for args in ('{"a": 1}', '{"a": "say \\"hi\\""}', '{"a": "x\\\\"}', '{"a": "' + "x\\n" * 2000 + '"}'):
        buf = args + AFTER[0]
        assert object_before(buf, 0, CLOSE) == complete_object(buf, 0) is not None


json_text = st.recursive(
    st.one_of(st.integers(min_value=-2**70, max_value=2**70).map(str), st.sampled_from(
        ["1.5", "-0", "-0.0", "1e400", "0.1e-320", "true", "null", "NaN", "01"]),
        st.text(st.sampled_from('ab"\\/\n\x01é\ud800<>}'), max_size=6).map(
            lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'),
        st.sampled_from(['"\\"', '"\\\\"', '"\\ud800"', '"</tool_call>"', '"\\u0061"', '"a\x01"'])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(st.sampled_from(['"a"', '"b"', '"\\u0061"', '"a\\""']), inner),
                 max_size=4).map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}")),
    max_leaves=12)
keys = st.sampled_from(['"a"', '"b"', '"\\u0062"', '"c\\\\"'])
members = st.lists(st.tuples(keys, json_text), max_size=5)


@settings(DRAWN, max_examples=examples(1000))
@given(members=members, after=st.sampled_from(AFTER))
def test_object_before_is_complete_object_on_drawn_texts(members: list[tuple[str, str]],
                                                         after: str) -> None:
    assert_same_read("{" + ", ".join(f"{k}: {v}" for k, v in members) + after)


TOOLS = [tool("f", a={"type": "string"}, b={"type": "integer"})]


@settings(DRAWN, max_examples=examples(300))
@given(members=members, after=st.sampled_from(AFTER[:4]), tools=st.sampled_from([None, TOOLS]))
def test_parse_message_is_parse_on_drawn_arguments(members: list[tuple[str, str]], after: str,
                                                   tools: Any) -> None:
    args = "{" + ", ".join(f"{k}: {v}" for k, v in members)
    text = '<tool_call>\n{"name": "f", "arguments": ' + args + after
    message, result = message_both_ways("hermes", text, tools)
    assert_message_is_parse(message, result, text)


@pytest.mark.parametrize("args", ARGS)
def test_parse_message_is_parse_on_the_table(args: str) -> None:
    for after in AFTER[:5]:
        text = 'Then:\n<tool_call>\n{"name": "f", "arguments": ' + args + after
        for tools in (None, TOOLS):
            message, result = message_both_ways("hermes", text, tools)
            assert_message_is_parse(message, result, text)
