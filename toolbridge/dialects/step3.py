"""Step-3 (``step3``): steptml invoke elements inside DeepSeek-style special-token sections.

Sample (vLLM's and SGLang's Step-3 parsers; the canonical per-call ``function<｜tool_sep｜>``
prefix is as SGLang documents it, vLLM's tests omit it)::

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">
    <steptml:parameter name="city">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜>
    <｜tool_calls_end｜>

(one line in the model's output; wrapped here). Values are raw text typed by the tool schema.
The per-call markers are optional; ASCII bars (``<|tool_calls_begin|>``) are read too. Reasoning
is ``<think>...</think>``.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.attrxml import AttrTags, AttrXmlBody
from ..syntax.dialect import Calls, Dialect, raw_value, register
from ..syntax.shape import Shape

BARS = (("｜", "｜"), ("|", "|"))


def _specials(word: str) -> tuple[str, ...]:
    return tuple(f"<{a}{word}{b}>" for a, b in BARS)


TAGS = AttrTags(
    invoke=("<steptml:invoke",),
    invoke_close=("</steptml:invoke>",),
    param=("<steptml:parameter",),
    param_close=("</steptml:parameter>",),
    block_close=_specials("tool_calls_end"),
    skip=_specials("tool_call_begin") + _specials("tool_call_end") + tuple(f"function<{a}tool_sep{b}>" for a, b in BARS),
)


def render(calls: Calls) -> str:
    """Calls as Step-3 writes them: one section, each call in its own special-token pair."""
    body = "".join(
        f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">'
        + "".join(f'<steptml:parameter name="{k}">{raw_value(v)}</steptml:parameter>' for k, v in args.items())
        + "</steptml:invoke><｜tool_call_end｜>"
        for name, args in calls
    )
    return f"<｜tool_calls_begin｜>{body}<｜tool_calls_end｜>"


STEP3 = register(
    Dialect(
        name="step3",
        aliases=("step3_steptml",),
        call_start=_specials("tool_calls_begin"),
        body=partial(AttrXmlBody, tags=TAGS),
        special_markers=True,
        end_tokens=("<|EOT|>",),
        render=render,
        shape=Shape(calls=('<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{NAME}">{ARGS}'
                           '</steptml:invoke><｜tool_call_end｜>',),
                    args='<steptml:parameter name="{KEY}">{VALUE}</steptml:parameter>',
                    value_ends=('<steptml:parameter name=', '</steptml:invoke>'),
                    section=('<｜tool_calls_begin｜>', '<｜tool_calls_end｜>'), trigger='<｜tool_calls_begin｜>'),
        sample=render([("get_weather", {"city": "Paris"})]),
    )
)
