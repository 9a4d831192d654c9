"""MarkerSet: its search finds what one alternation of all its markers finds, however long the
text and however dense the false starts; what it holds back whole is what the scan would hold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from toolbridge.dialects import dialect_names, get_dialect
from toolbridge.syntax.markers import WHOLE_NEAR, marker_set, match_at

SETS = sorted({tuple(sorted({*d.call_start, *(d.reasoning or ()), *d.end_tokens} - {""}))
               for d in map(get_dialect, dialect_names())})
SETS.append(tuple(sorted({m for markers in SETS for m in markers})))  # every dialect's, as auto's
NOISE = ["x", " ", "\n", "<", "`", "[", "3 < 4", "<b>", "``", "f", "A", "é", "|", ">", ">>", "Action",
         "functools", "<|", "]~"]


@st.composite
def texts(draw: st.DrawFn) -> tuple[tuple[str, ...], str, int]:
    markers = draw(st.sampled_from(SETS))
    pieces = draw(st.lists(st.one_of(st.sampled_from(NOISE), st.sampled_from(markers),
                                     st.sampled_from([m[: len(m) // 2] for m in markers])),
                           max_size=40))
    filler = draw(st.sampled_from([0, 300, 3000, 9000]))
    text = "".join(pieces)
    at = draw(st.integers(min_value=0, max_value=len(pieces)))
    text = "".join(pieces[:at]) + "y" * filler + "".join(pieces[at:])
    return markers, text, draw(st.integers(min_value=0, max_value=len(text)))


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(case=texts(), near=st.sampled_from([256, WHOLE_NEAR, 0]))
def test_search_is_the_alternation(case: tuple[tuple[str, ...], str, int], near: int) -> None:
    """However far the alternation itself scans first (``near``: 256 streaming, less in a whole
    answer, 0: one pattern per first character from the start)."""
    markers, text, pos = case
    found = marker_set(markers)
    for start in (pos, 0):  # (a text searched from its start is first tested for the markers' leads)
        got = found.search(text, start, near)
        want = found._pattern.search(text, start)
        assert (got and (got.start(), got.group())) == (want and (want.start(), want.group()))


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(markers=st.sampled_from(SETS), data=st.data())
def test_what_waits_is_held_whole(markers: tuple[str, ...], data: st.DataObject) -> None:
    found = marker_set(markers)
    marker = data.draw(st.sampled_from(markers))
    text = marker[: data.draw(st.integers(min_value=1, max_value=max(1, len(marker) - 1)))]
    if found.waits(text):  # no whole marker after its start, and all of it may still grow
        assert found._pattern.search(text, 1) is None
        assert found.holdback(text, 0) == len(text) or found.could_grow(text, 0)


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(case=texts())
def test_what_is_clear_holds_no_marker(case: tuple[tuple[str, ...], str, int]) -> None:
    """A text is clear (passed on at once) only when no marker is in it and no beginning of one
    ends it (a clear text that the scan would stop at would lose a call)."""
    markers, text, _ = case
    found = marker_set(markers)
    if found.clear(text):
        assert found.search(text, 0) is None and found.holdback(text, 0) == 0


def test_clear_passes_false_starts() -> None:
    """False starts such as ``3 < 4`` or the ``f`` of "for" are clear; what may begin a
    marker is not."""
    found = marker_set(("<tool_call>", "functools[", "```"))
    for text, clear in [("for ", True), ("3 < 4", True), ("`x` y", True), ("`x`", False), ("a\nb", True), ("of", False),
                        ("fun", False), ("x <", False), ("<t", False), ("``", False), ("<tool_call>", False)]:
        assert found.clear(text) is clear, text


def _match_at_by_definition(buf: str, pos: int, options: tuple[str, ...], final: bool) -> str | None:
    """match_at as its docstring defines it, option by option."""
    rest = buf[pos : pos + max(map(len, options))]
    found = max((o for o in options if rest.startswith(o)), key=len, default=None)
    if not final and any(len(o) > len(rest) and o.startswith(rest) for o in options):
        return ""
    return found


@settings(max_examples=examples(500), deadline=None, derandomize=True)
@given(options=st.lists(st.text(alphabet="<>/ab", max_size=5), min_size=1, max_size=4),
       buf=st.text(alphabet="<>/ab", max_size=8), pos=st.integers(0, 8), final=st.booleans())
def test_match_at_is_its_definition(options: list[str], buf: str, pos: int, final: bool) -> None:
    assert match_at(buf, pos, tuple(options), final) == _match_at_by_definition(buf, pos, tuple(options), final)


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(marker=st.sampled_from(SETS[-1]), shift=st.integers(min_value=-12, max_value=3),
       near=st.sampled_from([256, WHOLE_NEAR, 0]))
def test_a_marker_across_a_window_edge_is_found(marker: str, shift: int, near: int) -> None:
    """A marker that starts just before the end of a search window (the first after ``near``
    spans 2048 characters) and runs past it."""
    found = marker_set(SETS[-1])
    text = "y" * (near + 2048 + shift) + marker + " tail"
    got = found.search(text, 0, near)
    want = found._pattern.search(text, 0)
    assert (got and (got.start(), got.group())) == (want and (want.start(), want.group()))
