"""ServiceNow Apriel 1.5 / 1.6 Thinker (``apriel``): ``<tool_calls>[...]</tool_calls>`` after plain-text reasoning.

Sample (the Apriel-1.6-15b-Thinker chat template; its generation prompt ends with
``<|begin_assistant|>\\nHere are my reasoning steps:\\n``, so the output starts in reasoning)::

    The user wants the weather.
    [BEGIN FINAL RESPONSE]
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]</tool_calls>

Reasoning runs from ``Here are my reasoning steps:`` (usually prefilled: parse with
``in_reasoning``) to ``[BEGIN FINAL RESPONSE]``. The calls are one JSON array of
``{"name", "arguments"}`` objects (an ``"id"`` key is ignored) read by the shared array body.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.array import JsonArrayBody, ListShape
from ..syntax.dialect import Calls, Dialect, register

SHAPE = ListShape(closes=("]", "</tool_calls>"))
SAMPLE = (
    "The user wants the weather.\n[BEGIN FINAL RESPONSE]\n"
    '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]</tool_calls>'
)


def render(calls: Calls) -> str:
    """Calls as the Apriel templates write them."""
    objects = ", ".join('{"name": ' + json.dumps(n) + ', "arguments": ' + json.dumps(a) + "}" for n, a in calls)
    return "\n<tool_calls>[" + objects + "]</tool_calls>"


APRIEL = register(
    Dialect(
        name="apriel",
        aliases=("apriel15", "apriel16"),
        call_start=("<tool_calls>",),
        body=partial(JsonArrayBody, shape=SHAPE),
        reasoning=("Here are my reasoning steps:", "[BEGIN FINAL RESPONSE]"),
        starts_in_reasoning=True,
        end_tokens=("<|end|>", "[END FINAL RESPONSE]"),
        render=render,
        sample=SAMPLE,
    )
)
