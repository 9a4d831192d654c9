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
                                     plan_turn, shallow_body)

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
        with pytest.raises(RequestError, match="'tools' nests") as refused:
            plan([deep_tool("deep_a")])
        assert refused.value.param == "tools"


def test_known_tools_are_not_walked_and_the_rest_of_the_turn_is(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [tool("known_a", city={"type": "string"})]
    first = plan(tools)
    walked: list[Any] = []
    deeper = turn_module.deeper_than
    monkeypatch.setattr(turn_module, "deeper_than", lambda value, limit: walked.append(value) or deeper(value, limit))
    again = plan(copy.deepcopy(tools))
    assert again.tools is first.tools
    assert walked == ["m", USER]  # the model and the messages: not the tools
    with pytest.raises(RequestError, match="'messages' nests") as refused:  # the rest is still checked
        plan(copy.deepcopy(tools), [{"role": "user", "content": nested(MAX_NESTING)}])
    assert refused.value.param == "messages"
    with pytest.raises(RequestError, match="'tools' nests"):  # other tools are walked
        plan([*copy.deepcopy(tools), deep_tool("deep_b")])


BODIES = [  # (request fields, freeform tools?)
    ({"messages": USER, "tools": [tool("a", x={"type": "string"})], "temperature": 0.2}, False),
    ({"tools": [tool("b", n={"type": "integer"}), tool("c")], "messages": USER, "model": "m"}, False),
    ({"model": "m", "messages": USER, "tool_choice": "auto", "tools": [tool("d", s={"type": "string",
                                                                                    "description": "ünï \u2028"})]}, False),
    ({"model": "m", "messages": USER, "tools": [{"type": "custom", "custom": {"name": "patch"}}]}, True),
]


@pytest.mark.parametrize("fields, freeform", BODIES)
def test_the_upstream_body_is_the_same_bytes_with_the_tools_text_spliced_in(fields: dict[str, Any],
                                                                             freeform: bool) -> None:
    made = plan_turn(chat_turn(copy.deepcopy(fields)), SETTINGS)
    assert made.tools_json is not None and bool(made.freeforms) == freeform
    expected = orjson.dumps(made.body)
    kept = plan_turn(chat_turn(copy.deepcopy(fields)), SETTINGS)
    assert upstream_body(kept, discard=False) == expected
    assert kept.body["tools"] is kept.tools_json[0]  # a body kept for sending again is not touched
    assert upstream_body(made, discard=True) == expected


def test_tools_replaced_in_the_body_are_encoded_as_they_are() -> None:
    made = plan_turn(chat_turn({"messages": USER, "tools": [tool("e")]}), SETTINGS)
    made.body["tools"] = [tool("f")]
    assert upstream_body(made, discard=True) == orjson.dumps({"messages": USER, "tools": [tool("f")]})


def test_a_different_tool_set_gets_its_own_text_and_toolset() -> None:
    first, second = plan([tool("g")]), plan([tool("h")])
    assert first.tools is not second.tools and first.tools_json[1] != second.tools_json[1]
    assert b'"h"' in upstream_body(second, discard=True)
