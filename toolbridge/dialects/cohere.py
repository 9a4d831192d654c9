"""Cohere Command R7B / Command A (``command_r7b``) and Command R+ (``command_r_plus``).

Samples (the c4ai-command-r7b-12-2024 tool_use and Cohere2MoE chat templates; Command R+'s
tool_use template)::

    <|START_THINKING|>I will look it up.<|END_THINKING|><|START_ACTION|>[
        {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}
    ]<|END_ACTION|>

    <|START_RESPONSE|>It is sunny.<|END_RESPONSE|>

    Action:
    ```json
    [{"tool_name": "get_weather", "parameters": {"city": "Oslo"}}]
    ```

Calls are one JSON array read by the shared array body. R7B's ``tool_call_id`` is declared as a
name key so that an element may open with it: ``tool_name``, written after it, replaces it before
the call begins. The response wrappers (``<|START_RESPONSE|>``, Command A's ``<|START_TEXT|>``)
and the turn tokens are special tokens that only structure the turn: they are declared as end
tokens, dropped when the caller asks (``drop_tokens``, as the gateway does when it keeps special
tokens), and their text is content. A parse that is not asked to drop them keeps every character.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.array import JsonArrayBody, ListShape
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register
from ..syntax.shape import Shape

ACTION = ("<|START_ACTION|>", "<|END_ACTION|>")
R7B_SHAPE = ListShape(closes=("]", ACTION[1]), name_keys=("tool_call_id", "tool_name"), args_keys=("parameters",))
PLUS_SHAPE = ListShape(closes=("]", "```"), name_keys=("tool_name",), args_keys=("parameters",))
TURN = ("<|START_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>")
WRAPPERS = ("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>")
PLUS_START = ("Action:\n```json", "Action: ```json", "Action:\n```")


def plus_body(sink: CallSink, opened_by: str) -> Body:
    return JsonArrayBody(sink, opened_by, shape=PLUS_SHAPE, lenient=True)


def render_r7b(calls: Calls) -> str:
    """Calls as the R7B template writes them (ids count from 0)."""
    items = ",\n".join(
        f'    {{"tool_call_id": "{i}", "tool_name": {json.dumps(n)}, "parameters": {json.dumps(a, ensure_ascii=False)}}}'
        for i, (n, a) in enumerate(calls)
    )
    return f"{ACTION[0]}[\n{items}\n]{ACTION[1]}"


def render_plus(calls: Calls) -> str:
    """Calls as the Command R+ template writes them: an indented JSON list in a fence."""
    actions = [{"tool_name": n, "parameters": a} for n, a in calls]
    return "Action:\n```json\n" + json.dumps(actions, indent=4, ensure_ascii=False) + "\n```"


COMMAND_R7B = register(
    Dialect(
        name="command_r7b",
        aliases=("command_a", "cohere", "command_r7b_12_2024"),
        call_start=(ACTION[0],),
        body=partial(JsonArrayBody, shape=R7B_SHAPE),
        reasoning=("<|START_THINKING|>", "<|END_THINKING|>"),
        special_markers=True,
        end_tokens=(*WRAPPERS, *TURN),
        render=render_r7b,
        shape=Shape(calls=('{"tool_call_id": "{INDEX}", "tool_name": "{NAME}", "parameters": {ARGS}}',),
                    separator=",\n    ", section=(ACTION[0] + "[\n    ", "\n]" + ACTION[1]), trigger=ACTION[0]),
        sample='<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}\n]<|END_ACTION|>',
    )
)

COMMAND_R_PLUS = register(
    Dialect(
        name="command_r_plus",
        aliases=("command_r", "command_r_plus_tool_use"),
        call_start=PLUS_START,
        body=plus_body,
        reasoning=None,
        special_markers=True,
        end_tokens=TURN,
        render=render_plus,
        sample='Action:\n```json\n[{"tool_name": "get_weather", "parameters": {"city": "Oslo"}}]\n```',
    )
)
