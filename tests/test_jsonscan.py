"""The JSON scanner's fast test of a streamed delta (``in_plain_string``): a text passes only
when it continues the open string and ends nothing, exactly when the string-run pattern says
so, whichever of its two ways (a quick character test, then the pattern) answers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbridge.syntax.jsonscan import FAST_TEXT, JsonScanner

RUN = re.compile(r'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+')  # JSON string content


def in_string() -> JsonScanner:
    scanner = JsonScanner()
    scanner.feed('"open', 0)
    return scanner


@pytest.mark.parametrize("text, plain", [
    ("abcd", True), ("", True), ("é ✓ ", True), ("\u2028x", True), ("\x7f", True),
    ("\\n  ", True), ('\\"', True), ("\\u00e9", True),
    ('a"', False), ("a\\", False), ("\\x", False), ("\\u12", False), ("tab\t", False), ("\x00", False),
    ("\n", False), ("x" * (FAST_TEXT + 1), False),
])
def test_table(text: str, plain: bool) -> None:
    assert in_string().in_plain_string(text) is plain


@given(st.text(alphabet=st.sampled_from('ab "\\\t\n\x00\x1f\x7fé\u2028nu0f'), max_size=12) | st.text(max_size=12))
def test_agrees_with_the_pattern(text: str) -> None:
    assert in_string().in_plain_string(text) is (RUN.fullmatch(text) is not None)


def test_only_inside_a_double_quoted_string() -> None:
    scanner = JsonScanner()
    scanner.feed("{", 0)
    assert not scanner.in_plain_string("abcd")
