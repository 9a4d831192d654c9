"""TextBuffer: the pieces join into the text they were cut from, however many and however asked."""

from __future__ import annotations

from hypothesis import given, strategies as st

from toolbridge.pieces import BLOCK, TextBuffer


@given(st.lists(st.text(max_size=6), max_size=3 * BLOCK + 5))
def test_pieces_join_into_their_text(pieces: list[str]) -> None:
    buf = TextBuffer()
    for piece in pieces:
        buf.append(piece)
    assert buf.text() == "".join(pieces)
    assert buf.text() == "".join(pieces)  # asked again
    assert bool(buf) == bool(pieces)


def test_appending_after_text_is_asked() -> None:
    buf = TextBuffer()
    for i in range(BLOCK + 3):
        buf.append(str(i % 10))
    first = buf.text()
    buf.append("x")
    assert buf.text() == first + "x"


def test_empty() -> None:
    assert TextBuffer().text() == ""
    assert not TextBuffer()
