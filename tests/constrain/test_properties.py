"""Random tools, random calls: what a dialect's own renderer writes from arguments that satisfy
the schemas is taken by every engine, and the same calls spoiled (a value of the wrong type, a
required argument left out, a tool that was not offered, a marker broken or the answer cut short)
are refused, under ``tool_choice: required``.

One example compiles one random tool set once per target and checks a batch of calls against
it, so that hundreds of calls per dialect cost a few dozen compilations.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.budget import examples
from toolbridge.constrain import compile_tools, special_tokens
from toolbridge.dialects import get_dialect
from toolbridge.syntax.dialect import Dialect

from . import drawn
from .engines import TARGETS, acceptor

DIALECTS = drawn.covered_dialects()
EXAMPLES = examples(3, floor=1)
BATCH = 60  # answers per example, each of one to three calls
SPOILED = 9  # calls per example, each spoiled every way it can be
# No shrinking: each step compiles grammars again, and the labelled draws already say what failed.
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def targets(dialect: Dialect) -> tuple[str, ...]:
    return TARGETS + (("lark-special",) if special_tokens(dialect) else ())


def judge(dialect: Dialect, tools: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    constraint = compile_tools(dialect, tools, tool_choice="required", **options)
    return {t: acceptor(constraint, t) for t in targets(dialect)}


def _judged(judges: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], dialect: Dialect) -> dict[str, Any]:
    """The judges of an answer: with the markers as special tokens, a value that holds a
    marker's text would be read as the token, which no JSON string takes, so that target is
    left out for such an answer."""
    args = json.dumps([a for _, a in calls], ensure_ascii=False)
    if any(token in args for token in special_tokens(dialect)):
        return {t: j for t, j in judges.items() if t != "lark-special"}
    return judges


def refused_by(judges: dict[str, Any], text: str) -> list[str]:
    return [t for t, accepts in judges.items() if not accepts(text)]


def taken_by(judges: dict[str, Any], text: str) -> list[str]:
    return [t for t, accepts in judges.items() if accepts(text)]


def _drawn_case(name: str, data: st.DataObject) -> tuple[Dialect, list[dict[str, Any]], dict[str, Any]]:
    """The dialect, a drawn tool set, and the engines' judges of answers under it."""
    dialect = get_dialect(name)
    tools = data.draw(drawn.tools(), label="tools")
    return dialect, tools, judge(dialect, tools)


@pytest.mark.parametrize("name", DIALECTS)
@SETTINGS
@given(data=st.data())
def test_rendered_calls_are_taken(name: str, data: st.DataObject) -> None:
    dialect, tools, judges = _drawn_case(name, data)
    answers = data.draw(st.lists(st.lists(drawn.calls(tools, dialect), min_size=1, max_size=3),
                                 min_size=BATCH, max_size=BATCH), label="answers")
    for calls in answers:
        text = dialect.render(calls)
        assert not refused_by(_judged(judges, calls, dialect), text), text


def _spoiled(dialect: Dialect, tools: list[dict[str, Any]], call: tuple[str, dict[str, Any]],
             data: st.DataObject) -> list[tuple[str, str]]:
    """(what was spoiled, the answer) for the ways ``call`` can be spoiled."""
    name, args = call
    schema = next(t["function"]["parameters"] for t in tools if t["function"]["name"] == name)
    out = []
    typed = [k for k in args if drawn.wrong(dialect, schema["properties"][k]) is not None]
    if typed:
        key = data.draw(st.sampled_from(typed), label="mistyped")
        out.append(("wrong type", dialect.render([(name, {**args, key: drawn.wrong(dialect, schema["properties"][key])})])))
    required = schema.get("required", [])
    if required:
        key = data.draw(st.sampled_from(required), label="left out")
        out.append(("missing required", dialect.render([(name, {k: v for k, v in args.items() if k != key})])))
    offered = {t["function"]["name"] for t in tools}
    out.append(("unknown tool", dialect.render([(name + "_x" if name + "_x" not in offered else "zz_" + name, args)])))
    text = dialect.render([call])
    out.append(("cut short", text[: data.draw(st.integers(0, len(text) - 1), label="cut")]))
    marker = _longest_literal(dialect)
    at = text.find(marker)
    if at >= 0:
        middle = at + len(marker) // 2
        out.append(("broken marker", text[:middle] + text[middle + 1:]))
    return out


def _longest_literal(dialect: Dialect) -> str:
    """The longest fixed text of the dialect's first call template."""
    assert dialect.shape is not None
    template = dialect.shape.calls[0]
    for hole in ("{NAME}", "{ARGS}", "{INDEX}"):
        template = template.replace(hole, "\0")
    return max(template.split("\0"), key=len)


@pytest.mark.parametrize("name", DIALECTS)
@SETTINGS
@given(data=st.data())
def test_spoiled_calls_are_refused(name: str, data: st.DataObject) -> None:
    dialect, tools, judges = _drawn_case(name, data)
    one_only = judge(dialect, tools, parallel_tool_calls=False)
    for _ in range(SPOILED):
        call = data.draw(drawn.calls(tools, dialect), label="call")
        for spoilt, text in _spoiled(dialect, tools, call, data):
            assert not taken_by(judges, text), (spoilt, text)
        two = dialect.render([call, call])
        assert not taken_by(one_only, two), ("second call with parallel calls off", two)
        assert not refused_by(_judged(one_only, [call], dialect), dialect.render([call]))
