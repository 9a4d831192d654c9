"""DeepSeek V3 / R1 (``function`` + fenced JSON) and V3.1 (``NAME`` + JSON): a special-token section.

Samples (the vLLM/SGLang DeepSeek V3 template, and the DeepSeek V3.1 chat template)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
    ```json
    {"city": "Paris"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>

The bars are full-width (U+FF5C) and ``▁`` is U+2581. Text-only upstreams spell ``▁`` as ``_``,
a space or ``\\_``; each spelling is a marker, and a call's separator and end are read in the
spelling of the marker that began it. Tolerated: the short opener ``<｜tool▁calls｜>`` directly
followed by the first call, a call without its section, the V3 form without ``function`` or the
fence (and a fence without newlines), a missing call or section end. R1 and V3.1 reason in
``<think>...</think>`` (the templates open it in the prompt); V3 does not reason, but models in its
format that do are read alike (``reasoning=True``, with ``in_reasoning`` when the prompt opened
the block). V3.1 calls tools
only in non-thinking mode (its model card), so a call section inside its reasoning is part of the
reasoning, not a call; R1's ends the reasoning.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

from ..syntax.bodies.section import CallBody, CallSpec, SectionBody, SectionTags
from ..syntax.dialect import Body, Calls, CallSink, Dialect, register
from ..syntax.shape import Shape

SPELLINGS = ("▁", "_", " ", "\\_")


def spelled(marker: str, space: str) -> str:
    """A canonical DeepSeek marker with ``▁`` spelled ``space``."""
    return marker.replace("▁", space)


def _all(marker: str) -> tuple[str, ...]:
    return tuple(spelled(marker, s) for s in SPELLINGS)


SECTION_BEGIN = _all("<｜tool▁calls▁begin｜>")
SHORT_BEGIN = ("<｜tool▁calls｜>",)
SECTION_END = _all("<｜tool▁calls▁end｜>")
CALL_BEGIN = _all("<｜tool▁call▁begin｜>")
CALL_END = _all("<｜tool▁call▁end｜>")
END_TOKENS = ("<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>")


def _space(opened_by: str) -> str:
    """The spelling of ``▁`` in the marker that began a call."""
    return next((s for s in reversed(SPELLINGS) if spelled("tool▁call", s) in opened_by), "▁")


def _v3_call(sink: CallSink, opened_by: str) -> Body:
    sep, end = spelled("<｜tool▁sep｜>", _space(opened_by)), spelled("<｜tool▁call▁end｜>", _space(opened_by))
    spec = CallSpec(lead=("function" + sep,), name_end=("\n", sep), fence=("```json", "```"), close=(end,))
    return CallBody(sink, spec)


def _v31_call(sink: CallSink, opened_by: str) -> Body:
    sep, end = spelled("<｜tool▁sep｜>", _space(opened_by)), spelled("<｜tool▁call▁end｜>", _space(opened_by))
    return CallBody(sink, CallSpec(name_end=(sep,), close=(end,)))


def _body(call: Callable[[CallSink, str], Body]) -> Callable[[CallSink, str], Body]:
    tags = SectionTags(call_begin=CALL_BEGIN, section_end=SECTION_END, call=call, call_end=CALL_END,
                       opens_call=SHORT_BEGIN)
    return partial(SectionBody, tags=tags)


def render_v3(calls: Calls) -> str:
    """Calls as the DeepSeek V3/R1 templates write them."""
    body = "\n".join(
        f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{json.dumps(args, ensure_ascii=False)}\n```"
        "<｜tool▁call▁end｜>"
        for name, args in calls
    )
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def render_v31(calls: Calls) -> str:
    """Calls as the DeepSeek V3.1 template writes them."""
    body = "".join(
        f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{json.dumps(args, ensure_ascii=False)}<｜tool▁call▁end｜>"
        for name, args in calls
    )
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


_V3_SAMPLE = (
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```'
    "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
)
# The calls as the renderers write them, in the canonical spelling.
_SECTION = (SECTION_BEGIN[0], SECTION_END[0])
_V3_SHAPE = Shape(calls=("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{NAME}\n```json\n{ARGS}\n```<｜tool▁call▁end｜>",),
                  separator="\n", section=_SECTION, trigger=_SECTION[0])
_V31_SHAPE = Shape(calls=("<｜tool▁call▁begin｜>{NAME}<｜tool▁sep｜>{ARGS}<｜tool▁call▁end｜>",),
                   section=_SECTION, trigger=_SECTION[0])
_V31_SAMPLE = (
    "<think>The user wants the weather.</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather"
    '<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)


def _dialect(name: str, aliases: tuple[str, ...], call: Callable[[CallSink, str], Body],
             render: Callable[[Calls], str], sample: str, shape: Shape, thinks: bool = True,
             calls_in_reasoning: bool = True) -> Dialect:
    return register(Dialect(
        name=name, aliases=aliases, call_start=(*SECTION_BEGIN, *SHORT_BEGIN, *CALL_BEGIN), body=_body(call),
        reasoning=("<think>", "</think>") if thinks else None, calls_in_reasoning=calls_in_reasoning,
        special_markers=True, end_tokens=END_TOKENS, render=render, sample=sample, shape=shape,
    ))


# V3 itself does not reason, but models in its format that do (Cogito, R1-style distills) write
# <think>...</think> as R1 does: with reasoning=True (and in_reasoning=True where the prompt opened
# the block, so a lone </think> ends it) V3 splits it the same way.
DEEPSEEK_V3 = _dialect("deepseek_v3", ("deepseekv3", "deepseek_v3_0324"), _v3_call, render_v3, _V3_SAMPLE,
                       _V3_SHAPE)
DEEPSEEK_R1 = _dialect("deepseek_r1", ("deepseekr1", "deepseek_r1_0528"), _v3_call, render_v3,
                       "<think>\nThe user wants the weather.\n</think>\n\n" + _V3_SAMPLE, _V3_SHAPE)
DEEPSEEK_V31 = _dialect("deepseek_v31", ("deepseekv31", "deepseek_v3_1"), _v31_call, render_v31, _V31_SAMPLE,
                        _V31_SHAPE, calls_in_reasoning=False)
