"""Freeform (``custom``) tools in the core: the declaration a model is shown, reading a call's
raw input back (whole: ``input_of``; streamed: ``InputDeltas``), and the grammar check."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.budget import examples
from toolbridge.errors import ConfigError
from toolbridge.freeform import (
    DECLARED,
    INPUT,
    Format,
    InputDeltas,
    arguments_of,
    check_call,
    declaration,
    bounds,
    input_of,
)

PATCH = ('*** Begin Patch\n*** Update File: src/a "b".py\n@@ def f():\n-    return "x\\n"\n'
         '+    return {"a": [1, 2]}  # </tool_call> \u00e9\u4e2d\U0001F600\n*** End Patch\n')
GRAMMAR = """start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?
hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change?
filename: /(.+)/
add_line: "+" /(.*)/ LF -> line
change: (change_context | change_line)+
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
%import common.LF
"""


def feed_all(arguments: str, cuts: list[int]) -> tuple[list[str], str, InputDeltas]:
    """``arguments`` fed to an InputDeltas split at ``cuts``: the pieces, close()'s rest."""
    deltas = InputDeltas()
    bounds = [0, *sorted(set(cuts)), len(arguments)]
    pieces = [deltas.feed(arguments[a:b]) for a, b in zip(bounds, bounds[1:])]
    return pieces, deltas.close(), deltas


# ---------------------------------------------------------------- InputDeltas


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text(), key=st.text(max_size=8), ascii_only=st.booleans(), spaced=st.booleans(),
       data=st.data())
def test_any_split_of_the_arguments_gives_back_the_text(text: str, key: str, ascii_only: bool,
                                                         spaced: bool, data: st.DataObject) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    arguments = json.dumps({key: text}, ensure_ascii=ascii_only, separators=separators)
    cuts = data.draw(st.lists(st.integers(0, len(arguments)), max_size=12))
    pieces, rest, deltas = feed_all(arguments, cuts)
    assert "".join(pieces) + rest == text
    assert deltas.text == text


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_each_piece_is_given_as_soon_as_it_is_decoded(size: int) -> None:
    """Streamed as the model writes it: nothing but an incomplete escape is held back, and
    close() has nothing left when the arguments were one string member."""
    arguments = json.dumps({INPUT: PATCH})
    head = len('{"input": "')
    deltas, given = InputDeltas(), ""
    for end in range(size, len(arguments) + size, size):
        given += deltas.feed(arguments[end - size:end])
        written = arguments[head:min(end, len(arguments) - 2)]
        while True:  # what the model wrote so far, decoded, less an escape it has not finished
            try:
                decoded = json.loads('"' + written + '"')
                break
            except ValueError:
                written = written[:-1]
        assert PATCH.startswith(given)
        assert len(decoded) - len(given) <= 1, "at most half of a surrogate pair is held"
    assert given == PATCH and deltas.close() == "" and deltas.text == PATCH


@pytest.mark.parametrize("arguments, expected", [
    ('{"input": "a\\u00e9\\ud83d\\ude00b"}', "a\u00e9\U0001F600b"),  # a surrogate pair
    ('{ "input" : "x\\"y\\\\z\\/" }', 'x"y\\z/'),
    ('{"in\\"put": "odd key"}', "odd key"),
    ('{"input": "a", "other": 1}', "a"),  # the first member
    ('{"other": 1, "input": "late"}', "late"),  # not the first member: close() settles it
    ('{"why": "because", "input": "late"}', "late"),  # only the input member streams
    ('{"input": 5}', '{"input": 5}'),  # no one string: the arguments' text, as a whole answer has it
    ("[1, 2]", "[1, 2]"),
    ("", ""),
])
def test_odd_arguments(arguments: str, expected: str) -> None:
    for size in (1, 3, max(1, len(arguments))):
        cuts = list(range(size, len(arguments), size))
        pieces, rest, deltas = feed_all(arguments, cuts)
        assert "".join(pieces) + rest == expected, (arguments, size)
        assert deltas.text == (input_of(arguments) or arguments), "what was given is the input"


# ---------------------------------------------------------------- input_of, arguments_of


@pytest.mark.parametrize("arguments, expected", [
    ('{"input": "patch"}', "patch"),
    ({"input": "patch"}, "patch"),
    ('{"patch": "named otherwise"}', "named otherwise"),
    ('{"input": "wins", "other": "x"}', "wins"),
    ('{"a": "one", "b": "two"}', None),  # two members, none called input
    ('{"input": 3}', None),
    ('{"only": 3}', None),
    ("{}", None),
    ('"just a string"', None),
    ("[]", None),
    ("not json", None),
    (None, None),
    ('{"input": ""}', ""),
])
def test_input_of(arguments: Any, expected: str | None) -> None:
    assert input_of(arguments) == expected


@pytest.mark.parametrize("text", [PATCH, "", "\n", '{"input": "nested"}', "\\", "\u2028"])
def test_arguments_of_round_trips(text: str) -> None:
    arguments = arguments_of(text)
    assert json.loads(arguments) == {INPUT: text} and input_of(arguments) == text


def test_the_declaration_is_one_string_parameter() -> None:
    plain = declaration("apply_patch", "Edit files.", Format())
    assert plain == {"type": "function", "function": {"name": "apply_patch", "parameters": DECLARED,
                                                      "description": "Edit files."}}
    assert DECLARED["required"] == [INPUT] and DECLARED["properties"][INPUT]["type"] == "string"
    shown = declaration("apply_patch", None, Format("lark", GRAMMAR))["function"]["description"]
    assert "lark grammar" in shown and "begin_patch hunk+ end_patch" in shown
    assert "description" not in declaration("x", None, Format())["function"]


# ---------------------------------------------------------------- Format


@pytest.mark.parametrize("value, expected", [
    (None, Format()),
    ({"type": "text"}, Format()),
    ({"type": "grammar", "syntax": "regex", "definition": "[a-z]+"}, Format("regex", "[a-z]+")),
])
def test_format_of(value: Any, expected: Format) -> None:
    pytest.importorskip("llguidance")
    assert Format.of(value, "tools[0].format") == expected


@pytest.mark.parametrize("value, message", [
    ({"type": "json"}, r"tools\[0\]\.format\.type: must be 'text' or 'grammar'"),
    ("lark", r"tools\[0\]\.format\.type"),
    ({"type": "grammar", "syntax": "ebnf", "definition": "x"},
     r"tools\[0\]\.format\.syntax: must be 'lark' or 'regex'"),
    ({"type": "grammar", "definition": "x"}, r"\.syntax"),
    ({"type": "grammar", "syntax": "lark"}, r"tools\[0\]\.format\.definition: the grammar's text is required"),
    ({"type": "grammar", "syntax": "lark", "definition": ""}, r"\.definition"),
    ({"type": "grammar", "syntax": "lark", "definition": "start: undefined_rule"},
     r"tools\[0\]\.format\.definition: the lark grammar does not compile: .*undefined_rule"),
    ({"type": "grammar", "syntax": "lark", "definition": "start: ("}, r"lark grammar does not compile"),
    ({"type": "grammar", "syntax": "regex", "definition": "([a-z"}, r"regex grammar does not compile"),
])
def test_format_of_errors(value: Any, message: str) -> None:
    if isinstance(value, dict) and "does not compile" in message:
        pytest.importorskip("llguidance")
    with pytest.raises(ConfigError, match=message):
        Format.of(value, "tools[0].format").verify()


@pytest.mark.parametrize("syntax, definition, text, matches", [
    ("regex", "[a-z]+ [0-9]+", "abc 12", True),
    ("regex", "[a-z]+ [0-9]+", "abc", False),  # ends too soon
    ("regex", "[a-z]+ [0-9]+", "abc 12 and more", False),
    ("regex", r"\*\*\* Begin Patch\n[\s\S]*", PATCH, True),
    ("lark", GRAMMAR, PATCH, True),
    ("lark", GRAMMAR, PATCH.removesuffix("\n"), True),  # LF? at the end
    ("lark", GRAMMAR, "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n", True),
    ("lark", GRAMMAR, "*** Begin Patch\n*** End Patch\n", False),  # hunk+
    ("lark", GRAMMAR, "not a patch", False),
    ("lark", GRAMMAR, "*** Begin Patch\n*** Add File: a.txt\n+x\n", False),  # no end
    ("lark", GRAMMAR, "", False),
    ("lark", 'start: "\u00e9" /[0-9]+/', "\u00e942", True),  # matched over UTF-8 bytes
])
def test_format_check(syntax: str, definition: str, text: str, matches: bool) -> None:
    pytest.importorskip("llguidance")
    fmt = Format.of({"type": "grammar", "syntax": syntax, "definition": definition}, "f")
    errors = fmt.check(text)
    assert (errors == ()) is matches, errors
    if not matches:
        assert errors[0].startswith("(root): the input ") and syntax in errors[0]
    expected = () if matches else errors
    assert check_call(fmt, arguments_of(text)) == expected
    assert check_call(fmt, json.dumps({"named_otherwise": text})) == expected


def test_text_format_checks_nothing_and_a_call_needs_its_input() -> None:
    assert Format().check("anything at all") == ()
    assert check_call(Format(), '{"input": "x"}') == ()
    assert check_call(Format(), '{"a": "1", "b": "2"}')[0].startswith("(root): a freeform tool takes")
    assert check_call(Format(), "{}") != ()
    assert Format().shown() == "" and "regex grammar" in Format("regex", "x").shown()


# ---------------------------------------------------------------- bounds


def _chain(rules: int, groups: int = 0) -> str:
    body = [f"r{i}: " + "(" * groups + f'r{i + 1} "x"' + ")" * groups for i in range(rules - 2)]
    return "\n".join(["start: r0", *body, f'r{rules - 2}: "x"']) + "\n"


@pytest.mark.parametrize("syntax, definition, message", [
    ("lark", _chain(2700), "the grammar has 2700 rules; at most 1000"),
    ("lark", 'start: "' + "x" * 70_000 + '"', "the grammar is 70009 bytes long; at most 65536"),
    ("lark", "start: " + "(" * 40 + '"x"' + ")" * 40, "the grammar's groups nest 40 deep; at most 32"),
    ("lark", _chain(136, 28), "the grammar's rules reach 3888 levels deep"),
    ("regex", "(" * 40 + "x" + ")" * 40, "the grammar's groups nest 40 deep; at most 32"),
])
def test_a_grammar_past_a_bound_is_refused_before_compiling(syntax: str, definition: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"^tools\[0\]\.format\.definition: " + re.escape(message)):
        Format.of({"type": "grammar", "syntax": syntax, "definition": definition}, "tools[0].format")


@pytest.mark.parametrize("definition", [
    GRAMMAR, _chain(1000), _chain(68, 28), 'start: "((((" /[(((]+/ // (((\n', 'start: %json {"type": "object"}'])
def test_grammars_within_the_bounds_pass_them_and_compile(definition: str) -> None:
    pytest.importorskip("llguidance")
    Format.of({"type": "grammar", "syntax": "lark", "definition": definition}, "f").verify()


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 4)), max_size=4), min_size=1, max_size=12))
def test_depth_bounds_every_path_of_references(rules: list[list[tuple[int, int]]]) -> None:
    """The depth ``bounds`` computes is no less than the cost of any path of references (each
    rule on it one, plus the groups around the reference taken), cycles included."""
    n = len(rules)
    lines = [f"r{i}: " + " ".join("(" * g + f"r{t % n}" + ")" * g for t, g in refs) + ' "x"'
             for i, refs in enumerate(rules)]
    _, _, depth = bounds.lark_shape("\n".join(lines))

    def longest(rule: int, seen: frozenset[int]) -> int:
        return 1 + max((g + longest(t % n, seen | {t % n}) for t, g in rules[rule] if t % n not in seen), default=0)

    assert depth >= max(longest(i, frozenset({i})) for i in range(n))
