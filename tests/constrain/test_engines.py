"""Every covered dialect's constraint in the real engines, case by case: one table of answers,
each with the options it is compiled under and whether the grammar must take it, checked in
every target (GBNF and structural tag through xgrammar, Lark through llguidance, and Lark with
the markers as special tokens where the dialect's markers are special tokens)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pytest

from toolbridge.constrain import compile_tools, special_tokens
from toolbridge.dialects import get_dialect
from toolbridge.syntax.dialect import Dialect, raw_value
from toolbridge.syntax.shape import Args

from .drawn import covered_dialects
from .engines import TARGETS, acceptor

DIALECTS = covered_dialects()


def _tool(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


TOOLS = [
    _tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"},
                          "unit": {"enum": ["celsius", "fahrenheit"]}}, ["city"]),
    _tool("get_time", {"tz": {"type": "string"}}, ["tz"]),
    _tool("ping", {}, []),
]
WEATHER = ("get_weather", {"city": "Paris", "days": 3, "unit": "celsius"})
TIME = ("get_time", {"tz": "Europe/Paris"})
PING = ("ping", {})
ANSWER = {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": {
    "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}}
PROSE = "Let me look that up.\n"

OPTIONS: dict[str, dict[str, Any]] = {
    "auto": {},
    "required": {"tool_choice": "required"},
    "one call": {"tool_choice": "required", "parallel_tool_calls": False},
    "named get_time": {"tool_choice": {"type": "function", "function": {"name": "get_time"}}},
    "json answer": {"response_format": ANSWER},
}


def spell(dialect: Dialect, calls: list[tuple[str, dict[str, Any]]], template: int = 0) -> str:
    """Calls written by filling one of the dialect's templates (the first: as its renderer)."""
    shape = dialect.shape
    assert shape is not None
    written = []
    for index, (name, args) in enumerate(calls):
        if shape.args is Args.JSON:
            body = json.dumps(args, ensure_ascii=False)
        elif shape.args is Args.PYTHON:
            body = ", ".join(f"{k}={v!r}" for k, v in args.items())
        else:
            body = "".join(shape.args.replace("{KEY}", k).replace("{VALUE}", raw_value(v)) for k, v in args.items())
        call = shape.calls[template].replace("{NAME}", name).replace("{INDEX}", str(index))
        written.append(call.replace("{ARGS}", body))
    return shape.section[0] + shape.separator.join(written) + shape.section[1]


def reasoning(dialect: Dialect) -> str:
    assert dialect.reasoning is not None
    start, end = dialect.reasoning
    return f"{start}The user wants the weather; get_weather takes a city.{end}\n"


# (label, options, the answer, whether the grammar takes it)
Case = tuple[str, str, Callable[[Dialect], str], bool]
CASES: list[Case] = [
    ("one call", "auto", lambda d: d.render([WEATHER]), True),
    ("one call", "required", lambda d: d.render([WEATHER]), True),
    ("one call", "one call", lambda d: d.render([WEATHER]), True),
    ("only the required argument", "required", lambda d: d.render([("get_weather", {"city": "Lyon"})]), True),
    ("a call without arguments", "required", lambda d: d.render([PING]), True),
    ("three calls", "auto", lambda d: d.render([WEATHER, TIME, PING]), True),
    ("three calls", "required", lambda d: d.render([WEATHER, TIME, PING]), True),
    ("two calls, parallel calls off", "one call", lambda d: d.render([WEATHER, TIME]), False),
    ("prose then a call", "auto", lambda d: PROSE + d.render([WEATHER]), True),
    ("prose then a call", "required", lambda d: PROSE + d.render([WEATHER]), False),
    ("prose alone", "auto", lambda d: PROSE, True),
    ("prose alone", "required", lambda d: PROSE, False),
    ("nothing", "required", lambda d: "", False),
    ("wrong type", "required", lambda d: d.render([("get_weather", {"city": "Paris", "days": "three"})]), False),
    ("not an enum value", "required", lambda d: d.render([("get_weather", {"city": "Paris", "unit": "kelvin"})]),
     False),
    ("missing required argument", "required", lambda d: d.render([("get_weather", {"days": 3})]), False),
    ("unknown argument", "required", lambda d: d.render([("get_time", {"tz": "UTC", "dst": True})]), False),
    ("unknown tool", "required", lambda d: d.render([("get_stock", {"city": "Paris"})]), False),
    ("cut short", "required", lambda d: d.render([WEATHER])[:-1], False),
    ("named tool", "named get_time", lambda d: d.render([TIME]), True),
    ("another tool than the named one", "named get_time", lambda d: d.render([WEATHER]), False),
    ("two calls of the named tool", "named get_time", lambda d: d.render([TIME, TIME]), False),
    ("final JSON answer", "json answer", lambda d: '{"answer": "It is sunny."}', True),
    ("call instead of the JSON answer", "json answer", lambda d: d.render([WEATHER]), True),
    ("prose instead of the JSON answer", "json answer", lambda d: PROSE, False),
    ("JSON answer of the wrong shape", "json answer", lambda d: '{"reply": "It is sunny."}', False),
]


def targets(dialect: Dialect) -> tuple[str, ...]:
    return TARGETS + (("lark-special",) if special_tokens(dialect) else ())


@functools.cache
def _acceptor(name: str, options: str, target: str, reasoning: str = "auto") -> Callable[[str], bool]:
    constraint = compile_tools(name, TOOLS, reasoning=reasoning, **OPTIONS[options])
    return acceptor(constraint, target)


def verdicts(name: str, options: str, text: str, reasoning: str = "auto") -> dict[str, bool]:
    return {t: _acceptor(name, options, t, reasoning)(text) for t in targets(get_dialect(name))}


@pytest.mark.parametrize("name", DIALECTS)
@pytest.mark.parametrize("label, options, answer, taken", CASES, ids=[f"{c[0]} ({c[1]})" for c in CASES])
def test_case(name: str, label: str, options: str, answer: Callable[[Dialect], str], taken: bool) -> None:
    text = answer(get_dialect(name))
    assert verdicts(name, options, text) == dict.fromkeys(targets(get_dialect(name)), taken), text


@pytest.mark.parametrize("name", DIALECTS)
def test_first_template_is_what_the_renderer_writes(name: str) -> None:
    dialect = get_dialect(name)
    for calls in ([WEATHER], [WEATHER, TIME, PING], [PING]):
        assert spell(dialect, calls) == dialect.render(calls)


@pytest.mark.parametrize("name", DIALECTS)
def test_every_template_is_taken(name: str) -> None:
    dialect = get_dialect(name)
    assert dialect.shape is not None
    for template in range(len(dialect.shape.calls)):
        for calls in ([WEATHER], [WEATHER, TIME]):
            text = spell(dialect, calls, template)
            assert verdicts(name, "required", text) == dict.fromkeys(targets(dialect), True), text


@pytest.mark.parametrize("name", [n for n in DIALECTS if get_dialect(n).reasoning])
def test_reasoning_first(name: str) -> None:
    dialect = get_dialect(name)
    assert dialect.reasoning is not None
    call = dialect.render([WEATHER])
    every = dict.fromkeys(targets(dialect), True)
    assert verdicts(name, "required", reasoning(dialect) + call) == every
    assert verdicts(name, "auto", reasoning(dialect) + PROSE + call) == every
    assert verdicts(name, "json answer", reasoning(dialect) + '{"answer": "sunny"}') == every
    # The prompt opened the block: the answer starts inside it.
    opened = reasoning(dialect).removeprefix(dialect.reasoning[0])
    assert verdicts(name, "required", opened + call, reasoning="open") == every
    # Without reasoning, the block is refused where a call must follow.
    none = dict.fromkeys(targets(dialect), False)
    assert verdicts(name, "required", reasoning(dialect) + call, reasoning="off") == none


@pytest.mark.parametrize("name", [n for n in DIALECTS if get_dialect(n).reasoning and get_dialect(n).calls_in_reasoning])
def test_no_call_marker_inside_reasoning(name: str) -> None:
    """Where a call marker ends the reasoning (the parser reads a call there), the grammar's
    reasoning does not hold one."""
    dialect = get_dialect(name)
    assert dialect.reasoning is not None
    start, end = dialect.reasoning
    constraint = compile_tools(name, TOOLS, tool_choice="required")
    quoted = f"{start}maybe {constraint.triggers[0]} here{end}\n" + dialect.render([WEATHER])
    assert verdicts(name, "required", quoted) == dict.fromkeys(targets(dialect), False)
