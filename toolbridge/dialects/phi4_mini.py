"""Phi-4-mini (``phi4_mini``) and FireFunction v2 (``firefunction_v2``): ``functools[...]`` call lists.

Samples (the vLLM Phi-4-mini tool template's instructions; the firefunction-v2 chat template)::

    functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]

    I will check both. functools[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]

Both write one JSON array of ``{"name", "arguments"}`` objects after the word ``functools`` and
no closing marker; FireFunction puts a space before it. The list is the shared array body: each
call streams as it is read, a list that holds no call object (``functools[ text ]``) is content.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.array import JsonArrayBody, ListShape
from ..syntax.dialect import Calls, Dialect, register
from ..syntax.shape import Shape

SHAPE = ListShape(open="")  # the opener "functools[" already holds the bracket
OBJECT = '{"name": "{NAME}", "arguments": {ARGS}}'


def _objects(calls: Calls) -> str:
    return ", ".join(json.dumps({"name": n, "arguments": a}, ensure_ascii=False) for n, a in calls)


def render_phi4(calls: Calls) -> str:
    """Calls as Phi-4-mini is told to write them."""
    return "functools[" + _objects(calls) + "]"


def render_firefunction(calls: Calls) -> str:
    """Calls as the firefunction-v2 template writes them after the content."""
    return " functools[" + _objects(calls) + "]"


PHI4_MINI = register(
    Dialect(
        name="phi4_mini",
        aliases=("phi4_mini_json", "phi4"),
        call_start=("functools[",),
        body=partial(JsonArrayBody, shape=SHAPE),
        reasoning=None,
        end_tokens=("<|end|>", "<|endoftext|>"),
        render=render_phi4,
        shape=Shape(calls=(OBJECT,), separator=", ", section=("functools[", "]"), trigger="functools["),
        sample='functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
    )
)

FIREFUNCTION_V2 = register(
    Dialect(
        name="firefunction_v2",
        aliases=("firefunction",),
        call_start=("functools[",),
        body=partial(JsonArrayBody, shape=SHAPE),
        reasoning=None,
        end_tokens=("<|eot_id|>", "<|eom_id|>"),
        render=render_firefunction,
        shape=Shape(calls=(OBJECT,), separator=", ", section=(" functools[", "]"), trigger=" functools["),
        sample=' functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]',
    )
)
