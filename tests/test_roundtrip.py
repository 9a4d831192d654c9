"""Round trip for every registered dialect: render calls in the dialect, parse them back.

The calls are generated (Hypothesis): names, string/integer/number/boolean/null/array/object
arguments, several calls per turn. Parsed with a schema that declares every string argument a
string, the calls come back equal, whole and one character at a time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from toolbridge import StreamParser, dialect_names, get_dialect, parse

DIALECTS = sorted({get_dialect(n).name for n in dialect_names() if get_dialect(n).render is not None})
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True)
KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
# Strings a model might write in an argument; a value never holds the dialect's closing tags.
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.sampled_from("\n\t<>&\"'{}"),
               max_size=40).filter(lambda s: "</" not in s and "<" not in s.strip()[:1])
SCALARS = st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False, width=32))
JSONISH = st.recursive(SCALARS | TEXT, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(KEYS, inner, max_size=3), max_leaves=6)
ARGS = st.dictionaries(KEYS, st.one_of(TEXT, SCALARS, st.lists(SCALARS, max_size=3),
                                       st.dictionaries(KEYS, JSONISH, max_size=2)), max_size=4)
CALLS = st.lists(st.tuples(NAMES, ARGS), min_size=1, max_size=3)


def tools_for(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Schemas that say which arguments are strings (raw-text dialects need it for "5" vs 5)."""
    props: dict[str, dict[str, Any]] = {}
    for name, args in calls:
        entry = props.setdefault(name, {})
        for key, value in args.items():
            entry[key] = {"type": "string"} if isinstance(value, str) else {}
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
            for n, p in props.items()]


def parsed(text: str, dialect: str, tools: Any, chunks: list[str] | None = None) -> list[Any]:
    if chunks is None:
        message = parse(text, dialect, tools).message
        calls = message.get("tool_calls", [])
    else:
        parser = StreamParser(dialect, tools)
        events = [e for c in chunks for e in parser.feed(c)] + parser.close()
        calls = [{"function": {"name": b.name, "arguments": next(e.arguments for e in events
                  if type(e).__name__ == "ToolCallEnd" and e.index == b.index)}}
                 for b in events if type(b).__name__ == "ToolCallBegin"]
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=examples(60), deadline=None)
@given(calls=CALLS)
def test_render_then_parse_gives_the_same_calls(dialect: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    render = get_dialect(dialect).render
    assert render is not None
    unique = list({n: (n, a) for n, a in calls}.values())  # one schema per name
    text = render(unique)
    tools = tools_for(unique)
    assert parsed(text, dialect, tools) == unique, text
    assert parsed(text, dialect, tools, list(text)) == unique, text


SPECIAL = sorted(d for d in DIALECTS if get_dialect(d).special_markers)
FIXED_CALLS = [("get_weather", {"city": "Paris", "days": 3}), ("search", {"query": "a b"})]


@pytest.mark.parametrize("dialect", SPECIAL)
def test_spaces_between_adjacent_special_tokens(dialect: str) -> None:
    """A text-only upstream may put a space between adjacent special tokens: the calls stand."""
    import re

    text = get_dialect(dialect).render(FIXED_CALLS)  # type: ignore[misc]
    spaced = re.sub(r"(\|>|｜>)(<\||<｜)", r"\1 \2", text)
    assert parsed(spaced, dialect, tools_for(FIXED_CALLS)) == FIXED_CALLS, spaced
