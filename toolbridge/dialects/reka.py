"""Reka Edge / Flash (``reka``): one JSON object per call inside ``<tool_call>`` tags.

Sample (the Reka-Edge chat template; llama.cpp's Reka Edge tests)::

    <think>
    The user wants the time.
    </think>

    <tool_call>
    {"name": "get_time", "arguments": {"city": "Paris"}}
    </tool_call>

The Hermes envelope (the shared JSON body) under Reka's name; turns are separated by ``<sep>``,
which never reaches content. The template opens ``<think>`` in the prompt and always closes it
before the answer, so a call the model quotes while thinking stays reasoning (llama.cpp's Reka
Edge tests expect exactly that).
"""

from __future__ import annotations

import json
from functools import partial

from ..syntax.bodies.json import JsonEnvelopeBody
from ..syntax.dialect import Calls, Dialect, register
from ..syntax.shape import Shape


def render(calls: Calls) -> str:
    """Calls as the Reka-Edge template writes them."""
    return "\n".join(
        "<tool_call>\n" + json.dumps({"name": n, "arguments": a}, ensure_ascii=False) + "\n</tool_call>"
        for n, a in calls
    )


REKA = register(
    Dialect(
        name="reka",
        aliases=("reka_edge", "reka_flash"),
        call_start=("<tool_call>",),
        body=partial(JsonEnvelopeBody, close="</tool_call>"),
        calls_in_reasoning=False,
        end_tokens=("<sep>",),
        render=render,
        shape=Shape(calls=('<tool_call>\n{"name": "{NAME}", "arguments": {ARGS}}\n</tool_call>',), separator="\n",
                    trigger="<tool_call>"),
        sample=render([("get_time", {"city": "Paris"})]),
    )
)
