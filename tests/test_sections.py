"""An empty tool-call section is no call and leaves no markup in content.

A model that opens its dialect's section of calls and closes it with nothing but white space
between (``<|tool_calls_section_begin|><|tool_calls_section_end|>``) called nothing: the answer
is the text around it, the section is reported under ``repaired`` (not ``rejected``: no text is
refused), and it reads the same pinned and through ``auto``, whole and streamed. Every dialect
whose calls sit in a section wrapper is listed; those whose reader does not yet do this are
marked, with the reason, and must fail (strict xfail) until it does.
"""

from __future__ import annotations

import pytest

from tests.harness import Case, check_case, run
from toolbridge.dialects import dialect_names, get_dialect
from toolbridge.syntax.dialect import EMPTY_SECTION

EXTRA = {  # section wrappers the dialects' shapes do not name
    "kimi_k3": ("<|open|>tools<|sep|>", "<|close|>tools<|sep|>"),
    "deepseek_v32": ("<｜DSML｜function_calls>", "</｜DSML｜function_calls>"),
    "deepseek_v4": ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"),
    "muse": ("<atem:function_calls>", "</atem:function_calls>"),
    "minimax_m3": ("]<]minimax[>[<tool_call>", "]<]minimax[>[</tool_call>"),
}
NOT_YET = {  # each its own reader of lists; an empty one still stays content
    "apertus": "its own list reader refuses an empty list",
    "lfm2": "the pythonic list reader refuses an empty list inside a wrapper",
    "minimax_m1": "the line-sequence reader refuses a wrapper with no line",
}


def _sections() -> list[tuple[str, str, str]]:
    found = dict(EXTRA)
    for name in sorted({get_dialect(n).name for n in dialect_names()}):
        shape = get_dialect(name).shape
        # (a bare list, "[" ... "]", is no wrapper: a "[]" answer stays as written)
        if shape is not None and shape.section and shape.section[0].strip() not in ("", "["):
            found[name] = (shape.section[0].lstrip(), shape.section[1])  # (firefunction's lead space is text)
    return sorted((name, *pair) for name, pair in found.items())


def _params() -> list[object]:
    return [pytest.param(name, start, end, id=name,
                         marks=[pytest.mark.xfail(strict=True, reason=NOT_YET[name])] if name in NOT_YET else [])
            for name, start, end in _sections()]


@pytest.mark.parametrize("name, start, end", _params())
def test_an_empty_section_is_no_call_and_no_content(name: str, start: str, end: str) -> None:
    for text, content in ((start + end, ""), (f"Hi. {start}\n{end} Bye.", "Hi.  Bye.")):
        for reader in (name, "auto"):
            case = Case("empty-section", text, [], content, report={"rejected": 0, "calls": 0})
            for chunks in ([text], list(text)):
                check_case(case, reader, chunks)
            report = run(case, reader, [text])[1].to_dict()
            assert {"index": None, "what": EMPTY_SECTION} in report["repaired"], (reader, report)


def test_a_section_cut_before_it_closes_stays_content() -> None:
    text = "Hi. <|tool_calls_section_begin|>\n"
    check_case(Case("cut", text, [], text, report={"calls": 0}), "kimi_k2")
