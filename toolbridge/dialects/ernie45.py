"""ERNIE 4.5 (``ernie45``): one JSON object per call inside ``<tool_call>`` tags.

Sample (vLLM's ERNIE-4.5 MoE parser tests)::

    <think>Two cities, two calls.</think>

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Beijing"}}
    </tool_call>
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Guangzhou"}}
    </tool_call>

The Hermes envelope (the shared JSON body: ``parameters`` for ``arguments``, arguments as a JSON
string, the object bounded by its structure, a missing close tag at the end of output) under
ERNIE's name, reasoning and end tokens.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.json import JsonEnvelopeBody
from ..syntax.dialect import Calls, Dialect, register
from ..syntax.shape import Shape


def render(calls: Calls) -> str:
    """Calls as ERNIE writes them: one tagged JSON object each, a newline after every block."""
    return "".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n</tool_call>\n"
        for n, a in calls
    )


ERNIE45 = register(
    Dialect(
        name="ernie45",
        aliases=("ernie4_5", "ernie45_moe", "ernie"),
        call_start=("<tool_call>",),
        body=partial(JsonEnvelopeBody, close="</tool_call>"),
        end_tokens=("</s>",),
        render=render,
        shape=Shape(calls=('<tool_call>\n{"name": "{NAME}", "arguments": {ARGS}}\n</tool_call>\n',),
                    trigger="<tool_call>"),
        sample=render([("get_weather", {"city": "Beijing"})]),
    )
)
