"""Kimi K3 (XTML): ``<|open|>KIND attrs<|sep|>`` ... ``<|close|>KIND<|sep|>`` blocks of special tokens.

Sample (Kimi K3's chat template, as seen rendered in third-party tokenizer tests; the prompt
ends with ``<|open|>response<|sep|>``, so the model's output starts inside the response)::

    Checking.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>

The ``tools`` block holds calls whose arguments are elements named by attributes: the shared
attribute-XML body kind reads it, with ``<|sep|>`` ending each opening tag. A ``type="string"``
argument is raw text; any other type is JSON (the tool's schema, when given, decides). Attribute
values are XML-escaped. ``response`` is visible content; its open and close tokens are, with the
message's close, the family's other special tokens (``end_tokens``: dropped from content when
the upstream keeps special tokens, kept verbatim otherwise). ``think`` is reasoning; opening
``response`` ends it (a model may leave the think channel the prompt opened unclosed).
Tolerated: a space between adjacent special tokens and the words they frame, a call without its
``tools`` block, missing closes at the end of output. A ``tools`` opener in prose that no call follows stays prose.
An argument's close inside its value (text about the format) is value text unless the next
argument, the call's or block's close, the next call or the end of output follows it
(``CloseByLayout``).
"""

from __future__ import annotations

import html
import itertools
from functools import partial

from ..syntax.bodies.attrxml import AttrTags, AttrXmlBody
from ..syntax.dialect import Calls, Dialect, raw_value, register

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"


def spellings(token: str, word: str, sep: str = SEP) -> tuple[str, ...]:
    """``token`` + ``word`` (+ ``sep``), canonical first, then with a space where one may slip in."""
    gaps = ("", " ")
    return tuple(f"{token}{a}{word}{b}{sep}" for a, b in itertools.product(gaps, gaps if sep else ("",)))


TOOLS_OPEN = spellings(OPEN, "tools")
RESPONSE = spellings(OPEN, "response") + spellings(CLOSE, "response")
TAGS = AttrTags(
    invoke=spellings(OPEN, "call", ""),
    invoke_close=spellings(CLOSE, "call"),
    param=spellings(OPEN, "argument", ""),
    param_close=spellings(CLOSE, "argument"),
    block_close=spellings(CLOSE, "tools"),
    tag_end=SEP,
    name_attr="tool",
    close_by_layout=True,
    key_attr="key",
    string_attr="type",
    string_value="string",
)


def _argument(key: str, value: object) -> str:
    kind = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}
    text = raw_value(value)
    attrs = f'key="{html.escape(key)}" type="{kind.get(type(value), "null")}"'
    return f"{OPEN}argument {attrs}{SEP}{text}{CLOSE}argument{SEP}"


def render(calls: Calls) -> str:
    """Calls as the K3 template writes them: one ``tools`` block, calls indexed from 1."""
    body = "".join(
        f'{OPEN}call tool="{html.escape(name)}" index="{i}"{SEP}'
        + "".join(_argument(k, v) for k, v in args.items())
        + f"{CLOSE}call{SEP}"
        for i, (name, args) in enumerate(calls, 1)
    )
    return f"{OPEN}tools{SEP}{body}{CLOSE}tools{SEP}"


KIMI_K3 = register(
    Dialect(
        name="kimi_k3",
        aliases=("kimi3", "kimi_xtml", "kimi_k3_thinking"),
        call_start=(*TOOLS_OPEN, *TAGS.invoke),
        body=partial(AttrXmlBody, tags=TAGS),
        reasoning=(f"{OPEN}think{SEP}", f"{CLOSE}think{SEP}"),
        special_markers=True,
        end_tokens=(*RESPONSE, f"{CLOSE}message{SEP}", "<|end_of_msg|>"),
        answer_opens=spellings(OPEN, "response"),
        render=render,
        sample=(
            f'{OPEN}tools{SEP}{OPEN}call tool="get_weather" index="1"{SEP}{OPEN}argument key="city" type="string"'
            f"{SEP}Paris{CLOSE}argument{SEP}{CLOSE}call{SEP}{CLOSE}tools{SEP}"
        ),
    )
)
