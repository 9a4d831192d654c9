"""Kimi K2 / K2-Thinking / K2.5: a special-token section of calls, each with a native id.

Sample (the Kimi-K2-Thinking chat template renders an assistant turn's calls this way)::

    <think>The user wants the weather.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>

The id ``functions.NAME:IDX`` names the function (the part between ``functions.`` and the last
``:``; IDX is a running counter over the conversation). Tolerated: the singular
``<|tool_call_section_begin|>``, a call without its section (the section marker missing), spaces
around the markers, a missing call or section end. Reasoning is ``<think>...</think>`` and may be
left unclosed before the section (the section ends it). An id that is not ``NAME:IDX`` is not a
call.
"""

from __future__ import annotations

import json
import re
from functools import partial

from ..syntax.bodies.section import CallBody, CallSpec, SectionBody, SectionTags
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register
from ..syntax.shape import Shape

SECTION_BEGIN = ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>")
SECTION_END = ("<|tool_calls_section_end|>", "<|tool_call_section_end|>")
CALL_BEGIN = "<|tool_call_begin|>"
ARGS_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"

_ID = re.compile(r"(?:functions\.)?(.+):\d+")


def name_of(call_id: str) -> str | None:
    """The function name in a Kimi call id ``functions.NAME:IDX``; None when it is not one."""
    found = _ID.fullmatch(call_id)
    return found.group(1) if found else None


SPEC = CallSpec(name_end=(ARGS_BEGIN,), close=(CALL_END,), name=name_of, keeps_id=True)


def _call(sink: CallSink, opened_by: str) -> Body:
    return CallBody(sink, SPEC)


TAGS = SectionTags(call_begin=(CALL_BEGIN,), section_end=SECTION_END, call=_call, call_end=(CALL_END,))


def render(calls: Calls) -> str:
    """Calls as the Kimi K2 templates write them, ids counted from 0."""
    body = "".join(
        f"{CALL_BEGIN}functions.{name}:{i}{ARGS_BEGIN}{json.dumps(args, ensure_ascii=False)}{CALL_END}"
        for i, (name, args) in enumerate(calls)
    )
    return SECTION_BEGIN[0] + body + SECTION_END[0]


KIMI_K2 = register(
    Dialect(
        name="kimi_k2",
        aliases=("kimi", "kimi_k2_thinking", "kimi_k25"),
        call_start=(*SECTION_BEGIN, CALL_BEGIN),
        body=partial(SectionBody, tags=TAGS),
        special_markers=True,
        end_tokens=("<|im_end|>", "[EOS]", "<|im_user|>", "<|im_assistant|>", "<|im_system|>", "<|im_middle|>"),
        render=render,
        shape=Shape(calls=(f"{CALL_BEGIN}functions.{{NAME}}:{{INDEX}}{ARGS_BEGIN}{{ARGS}}{CALL_END}",),
                    section=(SECTION_BEGIN[0], SECTION_END[0]), trigger=SECTION_BEGIN[0]),
        sample=(
            "<think>The user wants the weather.</think><|tool_calls_section_begin|><|tool_call_begin|>"
            'functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
            "<|tool_calls_section_end|>"
        ),
    )
)
