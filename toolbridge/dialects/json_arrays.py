"""Bare JSON call arrays: xLAM (``xlam``) and SGLang's generic JSON-array format (``json_array``).

Samples (the xLAM Qwen chat template; SGLang's JsonArrayParser, used for ``tool_choice``
``required`` or a named function, where the answer is constrained to the array)::

    [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {}}]

The array is the whole answer: it starts the answer (after reasoning, if any), or follows a
marker xLAM models are seen to write before it: ``[TOOL_CALLS]``, ``<tool_call>`` (closed by
``</tool_call>``), a ```` ```json ```` fence, or ``</think>`` when reasoning is not split out. An
array later inside prose is prose; so is a fence or ``</think>`` not followed by an array.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.array import ARRAY, JsonArrayBody, ListShape
from ..syntax.bodies.array import render_list as render
from ..syntax.dialect import Body, CallSink, Dialect, register
from ..syntax.shape import Shape

FENCED = ListShape(closes=("]", "```"))
XLAM_SHAPES = {
    "[": ListShape(open=("[TOOL_CALLS][", "[TOOL_CALLS] [", "[")),  # the marker may start the answer
    "[TOOL_CALLS]": ARRAY,
    "<tool_call>": ListShape(closes=("]", "</tool_call>")),
    "```json": FENCED,
    "```": FENCED,
    "</think>": ARRAY,
}
SHAPE = Shape(calls=('{"name": "{NAME}", "arguments": {ARGS}}',), separator=", ", section=("[", "]"), trigger="")
DEDICATED = ("[", "[TOOL_CALLS]", "<tool_call>")  # openers that only ever start calls


def body(sink: CallSink, opened_by: str) -> Body:
    lenient, echo = opened_by not in DEDICATED, opened_by == "</think>"
    return JsonArrayBody(sink, opened_by, shape=XLAM_SHAPES[opened_by], lenient=lenient, echo=echo)


XLAM = register(
    Dialect(
        name="xlam",
        aliases=("xlam2", "xlam_llama", "xlam_qwen"),
        call_start=("[TOOL_CALLS]", "<tool_call>", "```json", "```", "</think>"),
        bare_start=("[",),
        body=body,
        end_tokens=("<|im_end|>", "<|eot_id|>"),
        render=render,
        sample='[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    )
)

JSON_ARRAY = register(
    Dialect(
        name="json_array",
        aliases=("jsonarray", "json_list"),
        call_start=("```json",),
        bare_start=("[",),
        body=partial(JsonArrayBody, shape=FENCED, lenient=True),
        reasoning=None,
        render=render,
        shape=SHAPE,
        sample='[{"name": "get_weather", "parameters": {"city": "Paris"}}]',
    )
)
