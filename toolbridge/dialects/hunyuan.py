"""Hunyuan (``hunyuan``): ``<tool_calls>`` holding a JSON array (A13B) or ``NAME<tool_sep>`` pairs.

Samples (the Hunyuan-A13B chat template; SGLang's HunyuanDetector)::

    <think>The user wants the weather.</think>
    <answer><tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls></answer>

    <tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call></tool_calls>

The character after ``<tool_calls>`` tells the two apart: ``[`` starts the A13B array, read by
the JSON-array body kind; ``<`` starts the key/value form, read as ``hunyuan_v3`` reads it
(values typed by the schema), including a ``<tool_call>`` whose wrapper is missing or whose
wrapper an unknown call before it was returned to content. Reasoning is ``<think>...</think>``.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.array import ChooseBody, JsonArrayBody, ListShape, render_list
from ..syntax.dialect import Body, CallSink, Dialect, register
from ..syntax.shape import Shape
from .hunyuan_v3 import CALL, CallsBody

A13B = ListShape(closes=("]", "</tool_calls>"))
_WRAPPED = partial(ChooseBody, choices={"[": partial(JsonArrayBody, shape=A13B)}, default=CallsBody)


def body(sink: CallSink, opened_by: str) -> Body:
    """The wrapper's array or key/value calls; a bare ``<tool_call>`` is always the latter."""
    return CallsBody(sink, opened_by) if opened_by == CALL else _WRAPPED(sink, opened_by)


HUNYUAN = register(
    Dialect(
        name="hunyuan",
        aliases=("hunyuan_a13b", "hunyuan-a13b"),
        call_start=("<tool_calls>", CALL),
        body=body,
        end_tokens=("<|eos|>", "<|extra_0|>"),
        render=partial(render_list, before="<tool_calls>[", after="]</tool_calls>"),
        shape=Shape(calls=('{"name": "{NAME}", "arguments": {ARGS}}',), separator=", ",
                    section=("<tool_calls>[", "]</tool_calls>"), trigger="<tool_calls>"),
        sample='<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>',
    )
)
