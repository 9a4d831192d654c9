"""MiniCPM 5 (``minicpm5``): bare ``<function name=...>`` elements with ``<param name=...>`` values.

Sample (the openbmb/MiniCPM5-1B chat template; SGLang's and llama.cpp's MiniCPM5 tests)::

    <function name="write_file"><param name="path">a.txt</param><param name="text"><![CDATA[line 1
    line <2> & more]]></param></function>

There is no wrapper: each function element is a call. The template wraps a string value in
``<![CDATA[...]]>`` when it holds ``<``, ``&`` or a newline; such a value is taken verbatim (it may
hold ``</param>``). Values are raw text typed by the tool schema. The call begins once a
parameter or the close tag confirms it, so prose that mentions the tag stays prose. Reasoning is
``<think>...</think>``.
"""

from __future__ import annotations

from functools import partial

from ..syntax.bodies.attrxml import AttrTags, AttrXmlBody
from ..syntax.dialect import Calls, Dialect, raw_value, register

TAGS = AttrTags(
    invoke=("<function",),
    invoke_close=("</function>",),
    param=("<param",),
    param_close=("</param>",),
    cdata=True,
)


def _value(value: object) -> str:
    text = raw_value(value)
    return f"<![CDATA[{text}]]>" if isinstance(value, str) and any(c in text for c in "<&\n") else text


def render(calls: Calls) -> str:
    """Calls as the MiniCPM5 template writes them: one element each, one per line."""
    return "\n".join(
        f'<function name="{name}">'
        + "".join(f'<param name="{k}">{_value(v)}</param>' for k, v in args.items())
        + "</function>"
        for name, args in calls
    )


MINICPM5 = register(
    Dialect(
        name="minicpm5",
        aliases=("minicpm", "minicpm_5"),
        call_start=("<function name=",),
        body=partial(AttrXmlBody, tags=TAGS),
        end_tokens=("<|im_end|>", "<|endoftext|>", "<|im_start|>"),
        render=render,
        sample='<function name="write_file"><param name="path">a.txt</param></function>',
    )
)
