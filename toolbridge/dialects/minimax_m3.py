"""MiniMax M3: invokes whose arguments are nested elements, every tag led by ``]<]minimax[>[``.

Sample (the layout of docs/dialects.md, "MiniMax M3"; parsers in the wild read the same)::

    <think>
    The user wants the weather.
    </think>
    ]<]minimax[>[<tool_call>
    ]<]minimax[>[<invoke name="get_weather">
    ]<]minimax[>[<city>Paris]<]minimax[>[</city>
    ]<]minimax[>[<days>3]<]minimax[>[</days>
    ]<]minimax[>[</invoke>
    ]<]minimax[>[</tool_call>

The marker is a non-special added token: it survives ``skip_special_tokens``, so the family needs
no special-token handling. An argument is an element named by its key; children make it an
object (or an array when the schema says so, or ``<item>`` children), a repeated name makes a
list, text beside children is ``$text``; leaves are raw text typed by the schema. The arguments
leave once per invoke (``syntax/bodies/elements``). Reasoning is ``<think>...</think>``.
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import Any

from ..syntax.bodies.elements import ElementBody, ElementTags
from ..syntax.dialect import Calls, Dialect, register
from ..tools import coerce

M = "]<]minimax[>["
TAGS = ElementTags(marker=M)
_KEY = re.compile(r"[^\s<>/=\"'$]{1,256}")


def _elements(value: Any) -> str | None:
    """``value`` as element content that reads back as itself without a schema, or None."""
    if isinstance(value, str):
        return value if M not in value and coerce(value, None) == value else None
    if isinstance(value, list):
        inner = [_elements(v) for v in value]
        if not value or any(i is None for i in inner):
            return None
        return "".join(f"{M}<item>{i}{M}</item>" for i in inner)
    if isinstance(value, dict):
        if not value or set(value) == {"item"} or any(_KEY.fullmatch(k) is None for k in value):
            return None
        inner = [_elements(v) for v in value.values()]
        if any(i is None for i in inner):
            return None
        return "".join(f"{M}<{k}>{i}{M}</{k}>" for k, i in zip(value, inner))
    text = json.dumps(value)
    return text if coerce(text, None) == value else None


def _argument(key: str, value: Any) -> str:
    """One argument: a string as it is, a structure as elements when they read back exactly,
    else as JSON text (a leaf that parses as JSON is typed so)."""
    inner = _elements(value) if isinstance(value, (dict, list)) else None
    if isinstance(value, str):
        inner = value
    elif inner is None:
        inner = json.dumps(value, ensure_ascii=False)
    return f"{M}<{key}>{inner}{M}</{key}>\n"


def render(calls: Calls) -> str:
    """Calls as MiniMax M3 writes them: one block, one invoke per call, one element per argument."""
    invokes = "".join(
        f'{M}<invoke name="{name}">\n' + "".join(_argument(k, v) for k, v in args.items()) + f"{M}</invoke>\n"
        for name, args in calls
    )
    return f"{M}<tool_call>\n{invokes}{M}</tool_call>"


SAMPLE = render([("get_weather", {"city": "Paris", "days": 3})])

MINIMAX_M3 = register(
    Dialect(
        name="minimax_m3",
        aliases=("minimax-m3",),
        call_start=(f"{M}<tool_call>", f"{M}<invoke"),
        body=partial(ElementBody, tags=TAGS),
        # MiniMax's role markers, as in M2: "]~b]" opens a turn, "[e~[" ends one.
        end_tokens=("[e~[", "]~b]", "]~!b["),
        render=render,
        sample=SAMPLE,
    )
)
