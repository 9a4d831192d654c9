"""IBM Granite: 3.x (``granite``), granite-20b-functioncalling (``granite_20b_fc``), 4.x (``granite4``).

Samples (the Granite 3.3, granite-20b-fc and Granite 4.0 chat templates)::

    <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]
    <function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}
    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

Granite 3.x writes one JSON array after the ``<|tool_call|>`` special token (3.0 models also
spell it ``<tool_call>``); a single object there, without the array, is not a call. Granite 3.3
thinks in ``<think>...</think>`` and then, as its template asks, answers inside
``<response>...</response>``: with reasoning split out, those tags are dropped (reported) and the
text between them is content; when reasoning stays inline they are text like any other. granite-20b-fc
repeats ``<function_call>`` before each object, and Granite 4 wraps each object in ``<tool_call>``
tags as Hermes does.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.array import JsonArrayBody, ListShape, render_list
from ..syntax.bodies.json import JsonEnvelopeBody
from ..syntax.dialect import Calls, Dialect, register
from ..syntax.shape import Shape

END_TOKENS = ("<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>")
ONE_OBJECT = ListShape(open=(), seps="", closes=())
CALL_START = ("<|tool_call|>", "<tool_call>")
RESPONSE = ("<response>", "</response>")
OBJECT = '{"name": "{NAME}", "arguments": {ARGS}}'


def render_20b(calls: Calls) -> str:
    return "\n".join("<function_call> " + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) for n, a in calls)


def render_4(calls: Calls) -> str:
    return "\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n</tool_call>" for n, a in calls
    )


GRANITE = register(
    Dialect(
        name="granite",
        aliases=("granite3", "granite33"),
        call_start=CALL_START,
        body=JsonArrayBody,
        stray_tokens=RESPONSE,
        special_markers=True,
        end_tokens=END_TOKENS,
        render=partial(render_list, before="<|tool_call|>["),
        shape=Shape(calls=(OBJECT,), separator=", ", section=("<|tool_call|>[", "]"), trigger="<|tool_call|>"),
        sample='<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    )
)

GRANITE_20B_FC = register(
    Dialect(
        name="granite_20b_fc",
        aliases=("granite-20b-fc", "granite_20b"),
        call_start=("<function_call>",),
        body=partial(JsonArrayBody, shape=ONE_OBJECT),
        reasoning=None,
        end_tokens=("<|endoftext|>",),
        render=render_20b,
        shape=Shape(calls=("<function_call> " + OBJECT,), separator="\n", trigger="<function_call>"),
        sample='<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}',
    )
)

GRANITE4 = register(
    Dialect(
        name="granite4",
        aliases=("granite_4", "granite41"),
        call_start=("<tool_call>",),
        body=partial(JsonEnvelopeBody, close="</tool_call>"),
        special_markers=True,
        end_tokens=END_TOKENS,
        render=render_4,
        shape=Shape(calls=("<tool_call>\n" + OBJECT + "\n</tool_call>",), separator="\n", trigger="<tool_call>"),
        sample='<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    )
)
