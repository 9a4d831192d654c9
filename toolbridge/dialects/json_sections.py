"""JSON call lists inside a section tag: Nemotron Nano v2, Jamba, MiniMax M1.

Samples (the Nemotron Nano v2 and MiniMax M1 chat templates; Jamba from vLLM's Jamba parser)::

    <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>
    <tool_calls>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    {"name": "get_time", "arguments": {}}
    </tool_calls>

Nemotron and Jamba write one JSON array in the section; MiniMax M1 writes one object per line.
Each call streams as it is read; a section whose close tag is missing at the end of output is
complete once its last call is. Nemotron and MiniMax M1 think in ``<think>...</think>``; M1
always closes its reasoning, and a ``<tool_calls>`` section inside it is thought, not a call (as
vLLM's MiniMax parser reads it).
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.array import JsonArrayBody, ListShape, render_list
from ..syntax.dialect import Dialect, register
from ..syntax.shape import Shape

NEMOTRON = ListShape(closes=("]", "</TOOLCALL>"))
JAMBA = ListShape(closes=("]", "</tool_calls>"))
OBJECT = '{"name": "{NAME}", "arguments": {ARGS}}'
MINIMAX_M1 = ListShape(open=(), seps="", adjacent=True, closes=("</tool_calls>",), skip_bad=True)

NEMOTRON_V2 = register(
    Dialect(
        name="nemotron_v2",
        aliases=("nemotron_nano_v2", "nemotron_json"),
        call_start=("<TOOLCALL>",),
        body=partial(JsonArrayBody, shape=NEMOTRON),
        special_markers=True,
        end_tokens=("<SPECIAL_11>", "<SPECIAL_12>"),
        render=partial(render_list, before="<TOOLCALL>[", after="]</TOOLCALL>"),
        shape=Shape(calls=(OBJECT,), separator=", ", section=("<TOOLCALL>[", "]</TOOLCALL>"),
                    trigger="<TOOLCALL>"),
        sample='<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>',
    )
)

JAMBA_DIALECT = register(
    Dialect(
        name="jamba",
        aliases=("jamba15", "jamba_1_5"),
        call_start=("<tool_calls>",),
        body=partial(JsonArrayBody, shape=JAMBA),
        reasoning=None,
        render=partial(render_list, before="<tool_calls>[", after="]</tool_calls>"),
        shape=Shape(calls=(OBJECT,), separator=", ", section=("<tool_calls>[", "]</tool_calls>"),
                    trigger="<tool_calls>"),
        sample='<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>',
    )
)

MINIMAX_M1_DIALECT = register(
    Dialect(
        name="minimax_m1",
        aliases=("minimax",),
        call_start=("<tool_calls>",),
        body=partial(JsonArrayBody, shape=MINIMAX_M1),
        calls_in_reasoning=False,
        end_tokens=("<end_of_sentence>", "<beginning_of_sentence>"),
        render=partial(render_list, before="<tool_calls>\n", after="\n</tool_calls>", sep="\n"),
        shape=Shape(calls=(OBJECT,), separator="\n", section=("<tool_calls>\n", "\n</tool_calls>"),
                    trigger="<tool_calls>"),
        sample='<tool_calls>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_calls>',
    )
)
