"""Llama 3.1 / 3.2 / 3.3 / 4 JSON calls: ``{"name": NAME, "parameters": {...}}`` objects.

Sample (the Llama 3.3 and Llama 4 JSON chat templates; ``<|python_tag|>`` is optional)::

    <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {}}

Calls are JSON objects that make up the answer, either at its start or after the
``<|python_tag|>`` special token; several are separated by ``;`` (Llama 3.x parsers) or simply
follow one another (the Llama 4 template). ``arguments`` is accepted for ``parameters``, and a
``"type": "function"`` member before the name (the shape Meta's Llama 3.1/3.2 prompt-format
documentation shows: ``{"type": "function", "name": NAME, "parameters": {...}}``). A bare
object at the start of the answer is a call only when it has arguments (``{"name": "x"}`` alone
is an answer, not a call); a JSON object inside prose is prose. Built-in tools are Python calls
after the tag, ``<|python_tag|>brave_search.call(query="...")<|eom_id|>``, read by the pythonic
body kind as a call of ``brave_search``.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.array import ChooseBody, ElementSink, JsonArrayBody, ListShape
from ..syntax.bodies.pythonic import PythonicBody
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register
from ..syntax.shape import Shape

SHAPE = ListShape(open=(), seps=";", adjacent=True, closes=(), args_keys=("parameters", "arguments"),
                  kind=("type", "function"))


def builtin_name(written: str) -> str:
    return written.removesuffix(".call")


def builtin(sink: CallSink, opened_by: str) -> Body:
    """``TOOL.call(k=v)``: the call's name is TOOL; the message ends with ``<|eom_id|>``."""
    return PythonicBody(ElementSink(sink, builtin_name), opened_by, close="<|eom_id|>")


body = partial(ChooseBody, choices={"{": partial(JsonArrayBody, shape=SHAPE)}, default=builtin)


def render(calls: Calls) -> str:
    """Calls as the Llama 3.x JSON templates write them, ``; ``-separated when there are several."""
    return "; ".join(json.dumps({"name": n, "parameters": a}, ensure_ascii=False) for n, a in calls)


LLAMA3_JSON = register(
    Dialect(
        name="llama3_json",
        aliases=("llama3", "llama31", "llama32", "llama4_json", "llama", "llama3_2"),
        call_start=("<|python_tag|>",),
        bare_start=("{",),
        body=body,
        reasoning=None,
        special_markers=True,
        end_tokens=("<|eot_id|>", "<|eom_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot|>", "<|eom|>"),
        render=render,
        shape=Shape(calls=('{"name": "{NAME}", "parameters": {ARGS}}',), separator="; ", trigger=""),
        sample='<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}',
    )
)
