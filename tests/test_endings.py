"""Honest endings: a call cut off before its arguments are complete is never returned as a call.

Generated over every dialect with a renderer: one call with two arguments is rendered by the
dialect's own renderer and cut at every character from its name on. Whatever the cut, a call
that comes back has exactly the arguments written (all of them when both are required; only
whole values otherwise), and the streamed message (per character, in threes) equals the whole
one. A call the end of output closes is kept only when every required argument was written, and
never when the upstream said it stopped at its length limit (``close(cut=True)``).
"""

from __future__ import annotations

import json

import pytest

from toolbridge import StreamParser, parse
from toolbridge.dialects import dialect_names, get_dialect
from toolbridge.parsing.auto import model_for, needs_hint, special_tokens

from .harness import Case, run

PROPS = {"city": {"type": "string"}, "days": {"type": "integer"}}
REQUIRED = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": PROPS, "required": ["city", "days"]}}}]
OPTIONAL = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": PROPS}}}]
RUN_SQL = [{"type": "function", "function": {"name": "run_sql", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]
ARGS = {"city": "Paris", "days": 3}
RENDERED = sorted(n for n in {get_dialect(x).name for x in dialect_names()} if get_dialect(n).render is not None)


def calls(message: dict) -> list[dict]:
    return [json.loads(c["function"]["arguments"]) for c in message.get("tool_calls") or []]


@pytest.mark.parametrize("name", RENDERED)
def test_a_call_cut_anywhere_is_whole_or_no_call(name: str) -> None:
    full = get_dialect(name).render([("get_weather", ARGS)])
    for cut in range(max(0, full.find("get_weather")), len(full) + 1):
        text = full[:cut]
        for tools in (REQUIRED, OPTIONAL):
            case = Case("cut", text, tools=tools)
            whole = run(case, name, [text])[0]
            for args in calls(whole):
                if tools is REQUIRED:
                    assert args == ARGS, f"cut at {cut}: {text[-30:]!r} gave {args}"
                else:
                    assert all(ARGS.get(k) == v for k, v in args.items()), f"cut at {cut}: {text[-30:]!r} gave {args}"
            for n in (1, 3):
                streamed = run(case, name, [text[i : i + n] for i in range(0, len(text), n)])[0]
                assert streamed == whole, f"cut at {cut}, chunks of {n}"


@pytest.mark.parametrize("name", RENDERED)
def test_a_cut_block_that_is_no_call_keeps_all_its_text(name: str) -> None:
    """Cut anywhere, with or without a length stop, pinned and through ``auto``: when no call
    comes back, the content is the text as written (nothing of the block is lost)."""
    dialect = get_dialect(name)
    full = dialect.render([("get_weather", ARGS)])  # type: ignore[misc]
    model = model_for(name) if needs_hint(dialect) else None
    readers = [(name, {})] if not any(t in full for t in dialect.own_end_tokens) else []
    if not any(t in full for t in special_tokens(None)[1]):  # (auto drops every family's end tokens)
        readers.append(("auto", {"model": model}))
    for cut in range(1, len(full)):
        text = full[:cut]
        for reader, options in readers:
            for stopped in (False, True):
                message = parse(text, reader, OPTIONAL, cut=stopped, **options).message
                if "tool_calls" not in message:
                    assert message["content"] == text, f"{reader}, cut at {cut} (length stop: {stopped})"


@pytest.mark.parametrize("dialect, text, tools", [
    ("qwen3_coder", "<tool_call>\n<function=run_sql>\n<param", RUN_SQL),
    ("qwen3_coder", "<tool_call>\n<function=run_sql>", RUN_SQL),
    ("qwen3_coder", "<tool_call>\n<function=run_sql>\n<parameter=query>\nSELECT 1\n</parameter>\n<param", RUN_SQL),
    ("glm45", "<tool_call>run_sql\n<arg_ke", RUN_SQL),
    ("glm45", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_ke", OPTIONAL),
    ("minimax_m2", '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n<para',
     OPTIONAL),
])
def test_the_reported_cuts_are_truncated(dialect: str, text: str, tools: list) -> None:
    result = parse(text, dialect, tools=tools)
    assert "tool_calls" not in result.message and result.finish_reason == "length"
    assert result.report.truncated and not result.report.recovered  # aborted, or rejected before it began
    assert result.message["content"] == text  # nothing is lost


def test_a_missing_closer_after_every_required_argument_is_repaired() -> None:
    text = "<tool_call>\n<function=run_sql>\n<parameter=query>\nSELECT 1\n</parameter>\n</funct"
    result = parse(text, "qwen3_coder", tools=RUN_SQL)
    assert calls(result.message) == [{"query": "SELECT 1"}] and result.finish_reason == "tool_calls"
    assert result.report.recovered == [0]


@pytest.mark.parametrize("dialect, text", [
    ("qwen3_coder", "<tool_call>\n<function=run_sql>\n<parameter=query>\nSELECT 1\n</parameter>\n"),
    ("hermes", '<tool_call>{"name": "run_sql", "arguments": {"query": "SELECT 1"'),
    ("glm45", "<tool_call>run_sql\n<arg_key>query</arg_key>\n<arg_value>SELECT 1</arg_value>\n"),
])
def test_an_upstream_length_stop_always_wins(dialect: str, text: str) -> None:
    parser = StreamParser(dialect, RUN_SQL)
    events = parser.feed(text) + parser.close(cut=True)
    assert not any(type(e).__name__ == "ToolCallEnd" for e in events)
    assert any(type(e).__name__ == "CallAborted" for e in events)


def test_a_call_closed_by_its_own_marker_is_kept_even_when_the_upstream_was_cut() -> None:
    text = "<tool_call>\n<function=run_sql>\n<parameter=query>\nSELECT 1\n</parameter>\n</function>\n</tool_call>"
    parser = StreamParser("qwen3_coder", RUN_SQL)
    events = parser.feed(text) + parser.close(cut=True)
    assert [type(e).__name__ for e in events].count("ToolCallEnd") == 1


def test_auto_passes_the_length_stop_on() -> None:
    text = "<tool_call>\n<function=run_sql>\n<parameter=query>\nSELECT 1\n</parameter>\n"
    for chunks in ([text], list(text)):
        parser = StreamParser("auto", RUN_SQL)
        events = [e for c in chunks for e in parser.feed(c)] + parser.close(cut=True)
        names = [type(e).__name__ for e in events]
        assert "ToolCallEnd" not in names and ("CallAborted" in names or "CallRejected" in names)
