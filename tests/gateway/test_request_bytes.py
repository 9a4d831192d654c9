"""What a large request costs less for, held to the answers the full work gives: the bracket
count that stops once it has enough, the nesting walk that skips tools already checked, and the
upstream body that reuses the tools' JSON text.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from tests.harness import tool
from toolbridge.gateway import turn as turn_module
from toolbridge.gateway.fronts.chat import chat_turn
from toolbridge.gateway.pipeline import upstream_body
from toolbridge.gateway.turn import (MAX_NESTING, NESTING_SLACK, SHALLOW_SPAN, RequestError, Settings,
                                     _encoded_within, check_nesting, plan_turn, shallow_body)
from toolbridge.limits import deeper_than

LIMIT = MAX_NESTING - NESTING_SLACK
USER = [{"role": "user", "content": "hi"}]
SETTINGS = Settings("hermes")


def nested(depth: int) -> Any:
    value: Any = "x"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def padded(brackets: int, at: int) -> bytes:
    """A JSON body whose brackets (half braces) begin ``at`` bytes in."""
    pad = "p" * at
    return orjson.dumps({"a": pad, "b": [{} for _ in range(brackets // 2)]})


@pytest.mark.parametrize("brackets", [0, LIMIT - 4, LIMIT - 2, LIMIT, LIMIT + 2, 10 * LIMIT])
@pytest.mark.parametrize("at", [0, SHALLOW_SPAN - 3, SHALLOW_SPAN + 5, 3 * SHALLOW_SPAN, 40 * SHALLOW_SPAN])
def test_shallow_body_is_the_whole_count_within_the_limit(brackets: int, at: int) -> None:
    body = padded(brackets, at)
    assert shallow_body(body) == (body.count(b"{") + body.count(b"[") <= LIMIT)


def plan(tools: Any, messages: Any = USER) -> Any:
    return plan_turn(chat_turn({"model": "m", "messages": messages, "tools": tools}), SETTINGS)


def deep_tool(name: str) -> dict[str, Any]:
    return tool(name, deep={"type": "object", "default": nested(MAX_NESTING)})


def test_deep_tools_are_refused_every_time_and_never_shared() -> None:
    for _ in range(2):
        with pytest.raises(RequestError, match=r"^tools\[0\]\.function\.parameters\..*: nests") as refused:
            plan([deep_tool("deep_a")])
        assert refused.value.param.startswith("tools[0].function.parameters.properties.deep.default")


def test_known_tools_are_not_walked_and_the_rest_of_the_turn_is(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [tool("known_a", city={"type": "string"})]
    first = plan(tools)
    read: list[Any] = []
    encoded, deeper = turn_module._encoded_within, turn_module.deeper_than
    monkeypatch.setattr(turn_module, "_encoded_within",
                        lambda value, levels: read.append(value) or encoded(value, levels))
    monkeypatch.setattr(turn_module, "deeper_than",
                        lambda value, levels: read.append(value) or deeper(value, levels))
    again = plan(copy.deepcopy(tools))
    assert again.tools is first.tools
    assert read == [USER]  # the messages: not the tools (nor the model, a string)
    with pytest.raises(RequestError, match=r"^messages\[0\]\.content.*: nests") as refused:  # the rest is still checked
        plan(copy.deepcopy(tools), [{"role": "user", "content": nested(MAX_NESTING)}])
    assert refused.value.param.startswith("messages[0].content.k[0]")
    with pytest.raises(RequestError, match=r"^tools\[1\].*: nests"):  # other tools are walked
        plan([*copy.deepcopy(tools), deep_tool("deep_b")])


BODIES = [  # (request fields, freeform tools?)
    ({"messages": USER, "tools": [tool("a", x={"type": "string"})], "temperature": 0.2}, False),
    ({"tools": [tool("b", n={"type": "integer"}), tool("c")], "messages": USER, "model": "m"}, False),
    ({"model": "m", "messages": USER, "tool_choice": "auto",
      "tools": [tool("d", s={"type": "string", "description": "ünï \u2028"})]}, False),
    ({"model": "m", "messages": USER, "tools": [{"type": "custom", "custom": {"name": "patch"}}]}, True),
]


@pytest.mark.parametrize("fields, freeform", BODIES)
def test_the_upstream_body_is_the_same_bytes_with_the_tools_text_spliced_in(fields: dict[str, Any],
                                                                             freeform: bool) -> None:
    made = plan_turn(chat_turn(copy.deepcopy(fields)), SETTINGS)
    assert "tools" in made.texts and bool(made.freeforms) == freeform
    expected = orjson.dumps(made.body)
    kept = plan_turn(chat_turn(copy.deepcopy(fields)), SETTINGS)
    text = kept.texts["tools"]
    assert upstream_body(kept, discard=False) == expected
    assert kept.body["tools"] is text[0]  # a body kept for sending again is not touched
    assert upstream_body(made, discard=True) == expected
    assert made.texts == kept.texts == {}  # not kept for the life of a stream


def test_tools_replaced_in_the_body_are_encoded_as_they_are() -> None:
    made = plan_turn(chat_turn({"messages": USER, "tools": [tool("e")]}), SETTINGS)
    made.body["tools"] = [tool("f")]
    assert upstream_body(made, discard=True) == orjson.dumps({"messages": USER, "tools": [tool("f")]})


def test_a_different_tool_set_gets_its_own_text_and_toolset() -> None:
    first, second = plan([tool("g")]), plan([tool("h")])
    assert first.tools is not second.tools and first.texts["tools"][1] != second.texts["tools"][1]
    assert b'"h"' in upstream_body(second, discard=True)


class Mapping(dict):  # type: ignore[type-arg]
    """A dict subclass: the walk does not count it, the encoder does."""


INNERS = [[], {}, "x", 7, None, [1, 2], {"a": [1]}, Mapping(a=[[1]]), (1, (2,)), {"s": {1, 2}}]
PLAIN = 7  # the first seven are plain JSON


@pytest.mark.parametrize("inner", INNERS, ids=repr)
@pytest.mark.parametrize("levels", [0, 1, 5, 126, 127, 128, 300])
def test_the_encoders_word_on_nesting_is_the_walks(inner: Any, levels: int) -> None:
    value = nested(levels) if inner == "x" else _around(inner, levels)
    for limit in (1, 5, MAX_NESTING - 1):
        text = _encoded_within(value, limit)
        if text is not None:  # its word: within, and the text is the value's
            assert not deeper_than(value, limit) and text == orjson.dumps(value)
        if INNERS.index(inner) < PLAIN:  # plain JSON: it has a word whenever the walk passes it
            assert (text is not None) == (not deeper_than(value, limit))


def _around(inner: Any, levels: int) -> Any:
    value = inner
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [MAX_NESTING - 2, MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1])
@pytest.mark.parametrize("inner", [[], {}, "x", {"s": {1}}], ids=repr)
def test_check_nesting_refuses_what_the_walk_finds_too_deep(depth: int, inner: Any) -> None:
    turn = chat_turn({"model": "m", "messages": USER, "stop": ["a"]})
    turn.options["x"] = _around(inner, depth - 1)  # the body itself is the first level
    too_deep = deeper_than(turn.options["x"], MAX_NESTING - 1)
    if too_deep:
        with pytest.raises(RequestError, match=r"^x(\[0\])*: nests") as refused:
            check_nesting(turn)
        assert refused.value.param.startswith("x[0]")
    else:
        texts = check_nesting(turn)
        assert set(texts) <= {"messages", "stop", "x"} and {"messages", "stop"} <= set(texts)
        for key, (value, text) in texts.items():
            assert value is turn.body()[key] and text == orjson.dumps(value)
    assert too_deep == (depth - (inner == "x") > MAX_NESTING - 1)  # (the table spans both sides)


def test_a_large_request_is_sent_as_the_same_bytes_with_every_field_text_spliced_in() -> None:
    messages = [{"role": "user", "content": [{"type": "text", "text": f"part {i}"}]} for i in range(80)]
    fields = {"model": "m", "messages": messages, "tools": [tool("big", a={"type": "string"})],
              "stop": ["x"], "temperature": 0.1}
    body = orjson.dumps(fields)
    assert not shallow_body(body)
    made = plan_turn(chat_turn(orjson.loads(body)), SETTINGS)
    assert {"messages", "tools", "stop"} <= set(made.texts)
    expected = orjson.dumps(made.body)
    assert upstream_body(made, discard=True) == expected


def front_turns() -> list[Any]:
    from toolbridge.gateway.fronts.messages.request import messages_turn
    from toolbridge.gateway.fronts.responses.request import responses_turn
    from toolbridge.gateway.fronts.responses.sealed import Sealer

    schema = {"type": "object", "properties": {"city": {"type": "string", "description": "ünï"}}}
    messages = {"model": "m", "max_tokens": 9, "messages": USER,
                "tools": [{"name": "kept_m", "description": "d", "input_schema": schema}]}
    responses = {"model": "m", "input": "hi", "store": False,
                 "tools": [{"type": "function", "name": "kept_r", "parameters": schema}]}
    sealer = Sealer(b"k" * 32)
    return [lambda: messages_turn(copy.deepcopy(messages)),
            lambda: responses_turn(copy.deepcopy(responses), None, sealer)]


@pytest.mark.parametrize("make", front_turns(), ids=["messages", "responses"])
def test_a_fronts_kept_tools_text_is_the_one_planning_would_make(make: Any) -> None:
    import dataclasses

    first, again = make(), make()
    assert again.tools is first.tools and again.tools_json[1] is first.tools_json[1]  # kept once
    made = plan_turn(again, SETTINGS)
    assert made.texts["tools"] == (again.tools, orjson.dumps(again.tools))
    assert made.texts["tools"][1] is again.tools_json[1]  # the kept text, not made again
    assert upstream_body(made, discard=True) == orjson.dumps(plan_turn(make(), SETTINGS).body)
    other = [tool("other")]
    replaced = plan_turn(dataclasses.replace(make(), tools=other), SETTINGS)  # the text of the tools it has
    assert replaced.texts["tools"] == (other, orjson.dumps(other))
    assert "tools" not in plan_turn(dataclasses.replace(make(), tools=None), SETTINGS).texts


@pytest.mark.parametrize("value", [nested(300), {"s": {1, 2}}, [1, {"a": 2}]], ids=["deep", "not JSON", "plain"])
def test_the_kept_wrappers_are_left_empty_after_any_value(value: Any) -> None:
    from toolbridge.gateway import nesting

    for _ in range(2):  # the second takes the wrapper the first left
        _encoded_within(value, MAX_NESTING - 1)
    assert all(not inner for pool in nesting._WRAPPERS.values() for _, inner in pool)
