"""One JSON call object per tagged block: InternLM2 (``internlm``) and LongCat-Flash (``longcat``).

Samples (the InternLM2 tool chat template; vLLM's LongCat-Flash parser)::

    <|action_start|><|plugin|>
    {"name": "get_weather", "parameters": {"city": "Paris"}}<|action_end|>
    <longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</longcat_tool_call>

InternLM2's markers are special tokens; a text-only upstream may put a space or newline between
the two adjacent ones. LongCat models also write the GLM-style body inside the same tags
(``NAME<longcat_arg_key>K</longcat_arg_key><longcat_arg_value>V</longcat_arg_value>``, values
typed by the schema), which is read as well.
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.argkey import ArgKeyBody, ArgKeyTags
from ..syntax.bodies.json import JsonEnvelopeBody
from ..syntax.dialect import Calls, Dialect, register
from ..syntax.shape import Shape

LONGCAT_TAGS = ArgKeyTags(
    key=("<longcat_arg_key>", "</longcat_arg_key>"),
    value=("<longcat_arg_value>", "</longcat_arg_value>"),
    block_close="</longcat_tool_call>",
)


def tagged(before: str, after: str, calls: Calls) -> str:
    return "".join(before + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + after for n, a in calls)


INTERNLM = register(
    Dialect(
        name="internlm",
        aliases=("internlm2", "internlm2_5"),
        call_start=("<|action_start|><|plugin|>", "<|action_start|> <|plugin|>", "<|action_start|>\n<|plugin|>"),
        body=partial(JsonEnvelopeBody, close="<|action_end|>"),
        reasoning=None,
        special_markers=True,
        end_tokens=("<|im_end|>", "<|im_start|>"),
        render=partial(tagged, "<|action_start|><|plugin|>\n", "<|action_end|>"),
        shape=Shape(calls=('<|action_start|><|plugin|>\n{"name": "{NAME}", "arguments": {ARGS}}<|action_end|>',),
                    trigger="<|action_start|>"),
        sample='<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Paris"}}<|action_end|>',
    )
)

LONGCAT = register(
    Dialect(
        name="longcat",
        aliases=("longcat_flash",),
        call_start=("<longcat_tool_call>",),
        body=partial(ArgKeyBody, tags=LONGCAT_TAGS),
        render=partial(tagged, "<longcat_tool_call>", "</longcat_tool_call>"),
        shape=Shape(calls=('<longcat_tool_call>{"name": "{NAME}", "arguments": {ARGS}}</longcat_tool_call>',),
                    trigger="<longcat_tool_call>"),
        sample='<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</longcat_tool_call>',
    )
)
